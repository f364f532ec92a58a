"""Ranking runs across prevalences: orders and exact flip points.

Brabec et al. (2020) §4 show that F1 and PR-AUC can rank two classifiers differently at
different prevalences eta. This module finds where that happens:

* :func:`flip_points` -- the eta* in a range where two runs swap on a metric. F1 at fixed
  operating points has a closed form (derivation in :func:`f1_flip_point`); AP, PR-AUC and
  max-F1 are found by sign changes of ``D(eta) = M_A(eta) - M_B(eta)`` on a log-eta grid,
  refined with Brent's method.
* Precision at a fixed threshold, recall (TPR) and FPR never flip: precision at eta is
  ``LR*o/(1 + LR*o)``, increasing in ``LR = TPR/FPR`` for every eta, so its order is the LR
  order; recall and FPR do not depend on eta. :func:`flip_points` returns no flips with that
  reason instead of searching.
* :func:`rank_runs` -- the order of several runs at each eta and every pairwise flip, plus
  where a metric's order disagrees with the ROC-AUC order.
* :func:`flip_table` -- every pair's flips on several metrics from curves computed once per run.

Whether a flip is real: :mod:`mlflow_imbalance.stats.flip_significance`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import (
    check_prevalence,
)
from mlflow_imbalance.stats._batch import _threshold_column, metric_function, metric_values
from mlflow_imbalance.stats.bootstrap import metric_statistic

__all__ = [
    "FLIP_METRICS",
    "NEVER_FLIP",
    "TABLE_METRICS",
    "FlipPoints",
    "FlipTable",
    "Ranking",
    "f1_flip_point",
    "flip_points",
    "flip_table",
    "rank_runs",
    "roc_auc_disagreements",
]

FLIP_METRICS = ("ap", "pr_auc", "max_f1", "f1")
NEVER_FLIP = {
    "precision": (
        "precision at a fixed threshold cannot flip: at every prevalence it is LR*o/(1+LR*o), "
        "increasing in LR = TPR/FPR, so the runs are always in LR order"
    ),
    "recall": "recall (TPR) does not depend on the prevalence, so its order cannot flip",
    "tpr": "TPR does not depend on the prevalence, so its order cannot flip",
    "fpr": "FPR does not depend on the prevalence, so its order cannot flip",
}


class FlipPoints(tuple):
    """Sorted prevalences eta* where two runs swap order (a tuple of floats) plus context.

    Attributes:
        metric: the metric compared.
        prevalence_range: the ``(low, high)`` range searched.
        method: ``"closed form"``, ``"log-eta grid + brentq"`` or ``"none"``.
        reason: why there cannot be flips (metrics that never flip), else None.
        winners: ``[(eta_low, eta_high, "a" | "b" | "tie"), ...]`` covering the range.
    """

    metric: str
    prevalence_range: tuple[float, float]
    method: str
    reason: str | None
    winners: list[tuple[float, float, str]]

    def __new__(
        cls,
        values: Sequence[float],
        metric: str,
        prevalence_range: tuple[float, float],
        method: str,
        reason: str | None = None,
        winners: list[tuple[float, float, str]] | None = None,
    ) -> FlipPoints:
        """Build from the sorted flip points and their context."""
        obj = super().__new__(cls, tuple(sorted(float(v) for v in values)))
        obj.metric = metric
        obj.prevalence_range = (float(prevalence_range[0]), float(prevalence_range[1]))
        obj.method = method
        obj.reason = reason
        obj.winners = list(winners or [])
        return obj

    def __getnewargs__(self) -> tuple[Any, ...]:  # type: ignore[override]
        return (
            tuple(self),
            self.metric,
            self.prevalence_range,
            self.method,
            self.reason,
            self.winners,
        )

    def __repr__(self) -> str:
        return (
            f"FlipPoints({list(self)!r}, metric={self.metric!r}, method={self.method!r}, "
            f"reason={self.reason!r})"
        )


def _check_range(prevalence_range: Sequence[float]) -> tuple[float, float]:
    if len(prevalence_range) != 2:
        raise ValueError(f"prevalence_range must be (low, high), got {prevalence_range!r}")
    lo, hi = (float(v) for v in prevalence_range)
    check_prevalence([lo, hi], "prevalence_range")
    if not lo < hi:
        raise ValueError(f"prevalence_range must have low < high, got {prevalence_range!r}")
    return lo, hi


def f1_flip_point(tpr_a: float, fpr_a: float, tpr_b: float, fpr_b: float) -> float | None:
    """The prevalence where F1 of two fixed operating points is equal (or None).

    ``F1 = 2 eta T / (eta + eta T + (1 - eta) F)``. With ``k = (1 - eta)/eta`` equality
    ``T_A (1 + T_B + k F_B) = T_B (1 + T_A + k F_A)`` is linear in k::

        k* = (T_B - T_A) / (T_A F_B - T_B F_A),    eta* = 1 / (1 + k*)

    (derived here; checked in the tests against the F1 curves). Returns None when ``k*`` is
    not positive and finite (no crossing in (0, 1)) or the points are identical.
    """
    den = tpr_a * fpr_b - tpr_b * fpr_a
    num = tpr_b - tpr_a
    if den == 0 or num == 0:
        return None
    k = num / den
    if not (k > 0 and math.isfinite(k)):
        return None
    return 1.0 / (1.0 + k)


def _winners(
    diff_at: Any, lo: float, hi: float, roots: Sequence[float]
) -> list[tuple[float, float, str]]:
    edges = [lo, *roots, hi]
    out = []
    for a, b in itertools.pairwise(edges):
        d = float(diff_at(math.sqrt(a * b)))
        out.append((a, b, "a" if d > 0 else "b" if d < 0 else "tie"))
    return out


def _grid_roots(
    f: Any,
    log_grid: np.ndarray,
    values: np.ndarray,
    exact_ends: Any = None,
) -> list[float]:
    """Sign changes of values on the grid, refined with brentq in log eta.

    ``exact_ends(eta_array)`` (when the grid values are approximate) re-evaluates the exact
    difference at each bracket's two ends; brackets whose exact ends do not change sign are
    dropped (the approximate sign change was within the curves' error).
    """
    s = np.sign(values)
    roots = []
    nz = np.flatnonzero(s != 0)
    for i, j in itertools.pairwise(nz):
        if s[i] == s[j]:
            continue
        if j > i + 1:  # exact zero(s) on the grid between opposite signs
            roots.append(float(np.exp(0.5 * (log_grid[i + 1] + log_grid[j - 1]))))
            continue
        if exact_ends is not None:
            ends = exact_ends(np.exp(log_grid[[i, j]]))
            if not ends[0] * ends[1] < 0:
                continue
        r = optimize.brentq(f, log_grid[i], log_grid[j], xtol=1e-13, rtol=1e-13)
        roots.append(float(np.exp(r)))
    return roots


def flip_points(
    counts_a: RocCounts,
    counts_b: RocCounts,
    metric: str = "ap",
    prevalence_range: Sequence[float] = (1e-6, 0.5),
    *,
    thresholds: Sequence[float] | None = None,
    operating_points: Sequence[Sequence[float]] | None = None,
    grid_size: int = 512,
) -> FlipPoints:
    """Prevalences eta* in ``prevalence_range`` where runs A and B swap order on ``metric``.

    Args:
        counts_a: ROC counts of run A.
        counts_b: ROC counts of run B (same test data, or at least same population).
        metric: ``"ap"``, ``"pr_auc"``, ``"max_f1"``, ``"f1"`` (needs ``thresholds`` or
            ``operating_points``); ``"precision"``, ``"recall"``, ``"tpr"``, ``"fpr"`` return no
            flips and say why (they cannot flip).
        prevalence_range: ``(low, high)`` inside (0, 1).
        thresholds: ``(threshold_a, threshold_b)`` for ``"f1"``: each run's operating point is
            "score >= threshold".
        operating_points: ``((tpr_a, fpr_a), (tpr_b, fpr_b))`` for ``"f1"`` instead.
        grid_size: log-eta grid points scanned for sign changes (AP, PR-AUC, max-F1). Two
            flips closer than one grid step can be missed.

    Returns:
        :class:`FlipPoints` (sorted floats; ``winners`` gives the eta ranges each run wins).
    """
    lo, hi = _check_range(prevalence_range)
    if metric in NEVER_FLIP:
        return FlipPoints([], metric, (lo, hi), "none", reason=NEVER_FLIP[metric])
    if metric not in FLIP_METRICS:
        raise ValueError(
            f"metric must be one of {FLIP_METRICS} (or {tuple(NEVER_FLIP)}), got {metric!r}"
        )
    if metric == "f1":
        if operating_points is not None:
            (ta, fa), (tb, fb) = operating_points
        elif thresholds is not None:
            ja = _threshold_column(counts_a, thresholds[0])
            jb = _threshold_column(counts_b, thresholds[1])
            ta, fa = counts_a.tpr[ja], counts_a.fpr[ja]
            tb, fb = counts_b.tpr[jb], counts_b.fpr[jb]
        else:
            raise ValueError("metric 'f1' needs thresholds=(t_a, t_b) or operating_points=")
        ta, fa, tb, fb = (float(v) for v in (ta, fa, tb, fb))
        root = f1_flip_point(ta, fa, tb, fb)
        roots = [root] if root is not None and lo < root < hi else []

        def diff_f1(eta: float) -> float:
            return 2 * eta * ta / (eta + eta * ta + (1 - eta) * fa) - 2 * eta * tb / (
                eta + eta * tb + (1 - eta) * fb
            )

        return FlipPoints(
            roots, metric, (lo, hi), "closed form", winners=_winners(diff_f1, lo, hi, roots)
        )

    table = flip_table({"a": counts_a, "b": counts_b}, (metric,), (lo, hi), grid=int(grid_size))
    return table.flips[("a", "b", metric)]


def _roc_auc(c: RocCounts) -> float:
    fpr = np.concatenate(([0.0], c.fpr, [1.0]))
    tpr = np.concatenate(([0.0], c.tpr, [1.0]))
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


def roc_auc_disagreements(
    counts_a: RocCounts,
    counts_b: RocCounts,
    metric: str = "pr_auc",
    prevalence_range: Sequence[float] = (1e-6, 0.5),
    **kwargs: Any,
) -> list[tuple[float, float, str]]:
    """Eta ranges where ``metric`` ranks the runs against their ROC-AUC order.

    Returns ``[(eta_low, eta_high, winner_on_metric), ...]`` -- e.g. ROC-AUC ranks A first
    while PR-AUC ranks B first for eta in that range. Empty when the orders agree everywhere
    (or the ROC-AUCs are equal).
    """
    auc_a, auc_b = _roc_auc(counts_a), _roc_auc(counts_b)
    if auc_a == auc_b:
        return []
    roc_winner = "a" if auc_a > auc_b else "b"
    flips = flip_points(counts_a, counts_b, metric, prevalence_range, **kwargs)
    return [(a, b, w) for a, b, w in flips.winners if w not in (roc_winner, "tie")]


@dataclass(frozen=True)
class Ranking:
    """Order of several runs at each prevalence on one metric.

    Attributes:
        names: run names in input order.
        metric: the metric.
        prevalences: the eta grid.
        values: ``(R, M)`` metric values.
        order: ``(M, R)`` run names best first at each eta.
        flips: ``{(name_a, name_b): FlipPoints}`` for every pair.
        roc_auc: ``{name: ROC-AUC}``.
        roc_auc_disagreements: ``{(name_a, name_b): [(eta_lo, eta_hi, winner), ...]}``.
    """

    names: list[str]
    metric: str
    prevalences: np.ndarray
    values: np.ndarray
    order: np.ndarray
    flips: dict[tuple[str, str], FlipPoints]
    roc_auc: dict[str, float]
    roc_auc_disagreements: dict[tuple[str, str], list[tuple[float, float, str]]] = field(
        default_factory=dict
    )


def rank_runs(
    runs: Mapping[str, RocCounts],
    metric: str = "ap",
    prevalences: Any = None,
    *,
    thresholds: Mapping[str, float] | None = None,
    prevalence_range: Sequence[float] | None = None,
) -> Ranking:
    """Order of runs at each eta on AP, PR-AUC, max-F1 or F1 at a threshold per run.

    Args:
        runs: ``{name: counts}``, evaluated on the same data.
        metric: ``"ap"``, ``"pr_auc"``, ``"max_f1"`` or ``"f1"`` (then ``thresholds`` maps each
            run to its threshold).
        prevalences: grid (default 200 log-spaced in [1e-6, 0.5]).
        thresholds: per-run thresholds for ``"f1"``.
        prevalence_range: range searched for flips (default: the grid's ends).

    Returns:
        :class:`Ranking`.
    """
    if metric not in FLIP_METRICS:
        raise ValueError(f"metric must be one of {FLIP_METRICS}, got {metric!r}")
    names = list(runs)
    if len(names) < 1:
        raise ValueError("runs is empty")
    eta = (
        np.logspace(-6, math.log10(0.5), 200)
        if prevalences is None
        else np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    )
    if metric == "f1" and (thresholds is None or set(thresholds) < set(names)):
        raise ValueError("metric 'f1' needs thresholds={run name: threshold} for every run")
    values = np.array(
        [
            metric_values(
                runs[n],
                metric,
                eta,
                threshold=thresholds[n] if metric == "f1" and thresholds else None,
            )
            for n in names
        ]
    )
    order_idx = np.argsort(-values, axis=0, kind="stable").T
    order = np.asarray(names, dtype=object)[order_idx]
    rng = tuple(prevalence_range) if prevalence_range is not None else (eta.min(), eta.max())
    if rng[0] == rng[1]:
        rng = (rng[0] * 0.5, min(rng[1] * 1.5, 0.999))
    flips: dict[tuple[str, str], FlipPoints] = {}
    dis: dict[tuple[str, str], list[tuple[float, float, str]]] = {}
    aucs = {n: _roc_auc(runs[n]) for n in names}
    table = flip_table(runs, (metric,), rng) if metric != "f1" else None
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            kw: dict[str, Any] = {}
            if metric == "f1" and thresholds is not None:
                kw["thresholds"] = (thresholds[a], thresholds[b])
            if table is not None:
                fp = table.flips[(a, b, metric)]
            else:
                fp = flip_points(runs[a], runs[b], metric, rng, **kw)
            flips[(a, b)] = fp
            if aucs[a] != aucs[b]:
                w = "a" if aucs[a] > aucs[b] else "b"
                dis[(a, b)] = [(x, y, z) for x, y, z in fp.winners if z not in (w, "tie")]
    return Ranking(names, metric, eta, values, order, flips, aucs, dis)


# ---------------------------------------------------------------------------- batched flips
#: Metrics :func:`flip_table` searches by default.
TABLE_METRICS = ("ap", "pr_auc", "max_f1")


@dataclass(frozen=True)
class FlipTable:
    """Flip points of every pair of runs on several metrics, from curves computed once per run.

    Attributes:
        names: run names in input order.
        metrics: the metrics searched.
        prevalence_range: ``(low, high)`` searched.
        prevalences: the log-eta grid the curves are on.
        curves: ``{name: {metric: values on the grid}}`` -- each run's curve, computed once.
        curve_errors: ``{metric: largest absolute error of the curves}`` (0 when exact sums;
            the deposit kernels of :func:`mlflow_imbalance.stats.bootstrap.metric_statistic`
            for large counts).
        flips: ``{(name_a, name_b, metric): FlipPoints}`` for every pair ``a`` before ``b``.
    """

    names: list[str]
    metrics: tuple[str, ...]
    prevalence_range: tuple[float, float]
    prevalences: np.ndarray
    curves: dict[str, dict[str, np.ndarray]]
    curve_errors: dict[str, float]
    flips: dict[tuple[str, str, str], FlipPoints]

    def __getitem__(self, key: tuple[str, str, str]) -> FlipPoints:
        """``table[a, b, metric]`` (either order of ``a`` and ``b``; winners follow the key)."""
        a, b, m = key
        if (a, b, m) in self.flips:
            return self.flips[(a, b, m)]
        fp = self.flips[(b, a, m)]
        swap = {"a": "b", "b": "a", "tie": "tie"}
        return FlipPoints(
            list(fp),
            fp.metric,
            fp.prevalence_range,
            fp.method,
            fp.reason,
            [(x, y, swap[w]) for x, y, w in fp.winners],
        )

    def all_flips(self) -> list[tuple[str, str, str, float]]:
        """Every flip as ``(name_a, name_b, metric, eta*)``, sorted by eta*."""
        out = [(a, b, m, float(e)) for (a, b, m), fp in self.flips.items() for e in fp]
        return sorted(out, key=lambda x: (x[3], x[0], x[1], x[2]))


def _log_grid(lo: float, hi: float, grid: Any) -> np.ndarray:
    if grid is None or np.ndim(grid) == 0:
        n = 512 if grid is None else int(grid)
        if n < 3:
            raise ValueError(f"grid must have at least 3 points, got {grid!r}")
        return np.exp(np.linspace(math.log(lo), math.log(hi), n))
    eta = np.asarray(check_prevalence(grid, "grid"), dtype=float)
    if eta.ndim != 1 or eta.size < 3 or np.any(np.diff(eta) <= 0):
        raise ValueError("grid must be an increasing 1-d array of at least 3 prevalences")
    if eta[0] < lo * (1 - 1e-12) or eta[-1] > hi * (1 + 1e-12):
        raise ValueError(f"grid must lie inside prevalence_range ({lo:g}, {hi:g})")
    return eta


def flip_table(
    counts_by_name: Mapping[str, RocCounts],
    metrics: Sequence[str] = TABLE_METRICS,
    prevalence_range: Sequence[float] = (1e-6, 0.5),
    *,
    grid: Any = None,
    curves: Mapping[str, Mapping[str, Any]] | None = None,
) -> FlipTable:
    """Flip points of every pair of runs on AP, PR-AUC and/or max-F1 in one batched pass.

    Each run's curve over the log-eta grid is computed ONCE per metric (the batched kernels of
    :func:`mlflow_imbalance.stats.bootstrap.metric_statistic`: exact sums for small counts,
    the linear-deposit kernels with a stated error bound for large ones) -- or taken from
    ``curves``. For every pair the sign changes of the difference of the two curves bracket
    the flips; each bracket is checked and refined with Brent's method on the EXACT metrics
    (:func:`mlflow_imbalance.stats._batch.metric_values`), so the eta* are exact to ~1e-13 in
    log eta. Cost: R curves plus, per flip, a dozen exact evaluations at one eta -- instead of two
    curves per pair and metric. Two flips closer than one grid step can be missed (as in
    :func:`flip_points`); with approximate curves, a crossing whose difference stays within the
    curves' error on the grid can be missed too.

    Args:
        counts_by_name: ``{name: counts}``.
        metrics: any of ``"ap"``, ``"pr_auc"``, ``"max_f1"``.
        prevalence_range: ``(low, high)`` searched.
        grid: number of log-spaced points (default 512) or an increasing array inside the
            range (e.g. a report's own eta grid, so its curves can be reused).
        curves: optional precomputed ``{name: {metric: values on grid}}`` (exact or within
            a known error); missing entries are computed.

    Returns:
        :class:`FlipTable`.
    """
    lo, hi = _check_range(prevalence_range)
    mets = tuple(metrics)
    for m in mets:
        if m not in TABLE_METRICS:
            raise ValueError(f"metrics must be among {TABLE_METRICS}, got {m!r}")
    names = list(counts_by_name)
    eta = _log_grid(lo, hi, grid)
    log_grid = np.log(eta)
    table: dict[str, dict[str, np.ndarray]] = {}
    errors = dict.fromkeys(mets, 0.0)
    for n in names:
        c = counts_by_name[n]
        table[n] = {}
        for m in mets:
            given = (curves or {}).get(n, {}).get(m)
            if given is not None:
                v = np.asarray(given, dtype=float)
                if v.shape != eta.shape:
                    raise ValueError(f"curves[{n!r}][{m!r}] must have shape {eta.shape}")
            else:
                stat = metric_statistic(c, m, eta)
                v = stat.estimate(c)
                errors[m] = max(errors[m], stat.max_error)
            table[n][m] = v
    flips: dict[tuple[str, str, str], FlipPoints] = {}
    functions: dict[tuple[str, str], Any] = {}

    def prepared(name: str, c: RocCounts, m: str) -> Any:
        # each run's exact metric as a function of eta, prepared once: the root finding
        # evaluates it at many single prevalences
        if (name, m) not in functions:
            functions[(name, m)] = metric_function(c, m)
        return functions[(name, m)]

    for m in mets:
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                ca, cb = counts_by_name[a], counts_by_name[b]

                fa, fb = prepared(a, ca, m), prepared(b, cb, m)

                def diff(e: Any, fa: Any = fa, fb: Any = fb) -> np.ndarray:
                    return fa(e) - fb(e)

                values = table[a][m] - table[b][m]
                roots = _grid_roots(
                    lambda x, diff=diff: float(diff(math.exp(x))[0]),
                    log_grid,
                    values,
                    exact_ends=(lambda e, diff=diff: diff(e)) if errors[m] > 0 else None,
                )
                flips[(a, b, m)] = FlipPoints(
                    roots,
                    m,
                    (lo, hi),
                    "log-eta grid + brentq",
                    winners=_winners(lambda e, diff=diff: diff(e)[0], lo, hi, roots),
                )
    return FlipTable(names, mets, (lo, hi), eta, table, errors, flips)
