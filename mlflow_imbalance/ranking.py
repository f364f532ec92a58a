"""Ranking runs across prevalences: orders, exact flip points and whether a flip is real.

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
* :func:`flip_significance` -- a paired bootstrap of ``D(eta)`` when both runs' scores on the
  same examples are given (stratified resampling of examples, the same draw for both runs), or
  an unpaired count bootstrap otherwise (conservative for positively correlated scores); a
  simultaneous sup-t band over log eta, ``P(D > 0)`` per eta, significance of each flip and a
  percentile interval for eta*.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import (
    as_1d_array,
    binarize_labels,
    check_prevalence,
    check_same_length,
    check_scores,
)
from mlflow_imbalance.uncertainty import (
    _band_from_replicates,
    _check_confidence,
    _metric_batch,
    _positive_columns,
    _rng,
    _threshold_column,
    bootstrap_counts,
    metric_statistic,
    metric_values,
)

logger = logging.getLogger(__name__)

__all__ = [
    "FLIP_METRICS",
    "NEVER_FLIP",
    "TABLE_METRICS",
    "FlipPoints",
    "FlipSignificance",
    "FlipTable",
    "Ranking",
    "f1_flip_point",
    "flip_points",
    "flip_significance",
    "flip_significance_from_replicates",
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
            the deposit kernels of :func:`uncertainty.metric_statistic` for large counts).
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
    :func:`uncertainty.metric_statistic`: exact sums for small counts, the linear-deposit
    kernels with a stated error bound for large ones) -- or taken from ``curves``. For every
    pair the sign changes of the difference of the two curves bracket the flips; each bracket
    is checked and refined with Brent's method on the EXACT metrics
    (:func:`uncertainty.metric_values`), so the eta* are exact to ~1e-13 in log eta. Cost:
    R curves plus, per flip, a dozen exact evaluations at one eta -- instead of two curves per
    pair and metric. Two flips closer than one grid step can be missed (as in
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
    for m in mets:
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                ca, cb = counts_by_name[a], counts_by_name[b]

                def diff(e: Any, ca: RocCounts = ca, cb: RocCounts = cb, m: str = m) -> np.ndarray:
                    return metric_values(ca, m, e) - metric_values(cb, m, e)

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


# ---------------------------------------------------------------------------- significance
@dataclass(frozen=True)
class FlipSignificance:
    """Bootstrap assessment of ``D(eta) = M_A(eta) - M_B(eta)``.

    Attributes:
        metric: the metric.
        prevalences: the log-eta grid.
        difference: the estimate of D on the grid.
        low, high: simultaneous sup-t band for D over the grid.
        prob_a_better: bootstrap ``P(D* > 0)`` per eta.
        flips: the estimated flip points (:class:`FlipPoints`).
        significant: per flip, True when the band excludes 0 with opposite signs on the two
            sides of it (between the neighbouring flips).
        flip_intervals: per flip, a percentile interval for eta* from the replicates' nearest
            sign change; an end equal to the range end means "at or beyond the range".
        paired: True for the paired (same examples) bootstrap.
        method, confidence, n_boot, seed: how it was made.
        note: caveats (e.g. the unpaired bootstrap is conservative).
    """

    metric: str
    prevalences: np.ndarray
    difference: np.ndarray
    low: np.ndarray
    high: np.ndarray
    prob_a_better: np.ndarray
    flips: FlipPoints
    significant: list[bool]
    flip_intervals: list[tuple[float, float]]
    paired: bool
    method: str
    confidence: float
    n_boot: int
    seed: Any
    note: str


def _paired_replicates(
    y_true: Any,
    score_a: Any,
    score_b: Any,
    metric: str,
    eta: np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
    thresholds: Sequence[float] | None,
) -> tuple[np.ndarray, RocCounts, RocCounts]:
    """Stratified paired bootstrap: the same resampled examples for both runs.

    Each replicate draws multinomial example weights within each class (exactly resampling
    examples with replacement, class sizes fixed), then forms both runs' per-threshold counts
    from the same weights. Cost O(B * n) plus the metric kernels.
    """
    y = as_1d_array(y_true, "y_true")
    sa = check_scores(score_a, "score_a")
    sb = check_scores(score_b, "score_b")
    check_same_length([y, sa, sb], ["y_true", "score_a", "score_b"])
    is_pos = binarize_labels(y, name="y_true")
    runs = []
    for s in (sa, sb):
        c = RocCounts.from_scores(is_pos, s, compress=False)
        idx = np.searchsorted(-c.thresholds, -s, side="left")
        runs.append((c, idx[is_pos], idx[~is_pos], _positive_columns(c)))
    n_pos, n_neg = int(is_pos.sum()), int((~is_pos).sum())
    chunk = max(1, int(2_000_000 // (n_pos + n_neg)))
    out = []
    done = 0
    up, un = np.full(n_pos, 1.0 / n_pos), np.full(n_neg, 1.0 / n_neg)
    while done < n_boot:
        b = min(chunk, n_boot - done)
        wp = rng.multinomial(n_pos, up, size=b)
        wn = rng.multinomial(n_neg, un, size=b)
        vals = []
        for j, (c, ip, ineg, cols) in enumerate(runs):
            k = c.n_thresholds
            rows = np.arange(b)[:, None] * k
            tp = np.bincount((rows + ip).ravel(), wp.ravel(), b * k).reshape(b, k).cumsum(1)
            fp = np.bincount((rows + ineg).ravel(), wn.ravel(), b * k).reshape(b, k).cumsum(1)
            col = _threshold_column(c, thresholds[j]) if metric == "f1" and thresholds else None
            vals.append(_metric_batch(metric, tp, fp, n_pos, n_neg, eta, cols, col))
        out.append(vals[0] - vals[1])
        done += b
    return np.concatenate(out), runs[0][0], runs[1][0]


def _unpaired_replicates(
    counts_a: RocCounts,
    counts_b: RocCounts,
    metric: str,
    eta: np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
    thresholds: Sequence[float] | None,
) -> np.ndarray:
    ra, rb = rng.spawn(2)
    out = []
    for j, (c, r) in enumerate(((counts_a, ra), (counts_b, rb))):
        cols = _positive_columns(c)
        col = _threshold_column(c, thresholds[j]) if metric == "f1" and thresholds else None
        step = 0.01 if metric == "ap" and cols.size * eta.size > 200_000 else None
        out.append(
            np.concatenate(
                [
                    _metric_batch(metric, tp, fp, c.n_pos, c.n_neg, eta, cols, col, step)
                    for tp, fp in bootstrap_counts(c, n_boot, r)
                ]
            )
        )
    return out[0] - out[1]


def _crossing_near(
    reps: np.ndarray, log_grid: np.ndarray, target: float, left_sign: float
) -> np.ndarray:
    """Per replicate, the log-eta of the sign change nearest ``target`` (linear interpolation).

    A replicate without a sign change had the flip pushed out of the range: -inf when it sits
    entirely on the right-hand side's sign (the flip moved below the range), +inf otherwise.
    """
    s = np.sign(reps)
    change = (s[:, 1:] * s[:, :-1]) < 0
    d0, d1 = reps[:, :-1], reps[:, 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        x = log_grid[:-1] + (log_grid[1:] - log_grid[:-1]) * d0 / (d0 - d1)
    dist = np.where(change, np.abs(x - target), np.inf)
    best = np.argmin(dist, axis=1)
    has = np.isfinite(dist[np.arange(reps.shape[0]), best])
    loc = x[np.arange(reps.shape[0]), best]
    right_side = np.all(np.sign(reps) == -left_sign, axis=1)
    return np.where(has, loc, np.where(right_side, -np.inf, np.inf))


def flip_significance(
    counts_a: RocCounts | None = None,
    counts_b: RocCounts | None = None,
    metric: str = "ap",
    prevalences: Any = None,
    *,
    y_true: Any = None,
    score_a: Any = None,
    score_b: Any = None,
    thresholds: Sequence[float] | None = None,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
) -> FlipSignificance:
    """Is a flip between runs A and B real? Bootstrap band for ``D(eta) = M_A - M_B``.

    Paired when ``y_true, score_a, score_b`` (both runs scored on the same examples -- e.g. the
    same dataset digest) are given: each replicate resamples examples within each class and
    evaluates both runs on that same resample, so the correlation between the runs is kept.
    Otherwise (only counts) the two runs are bootstrapped independently; for positively
    correlated scores (the usual case on the same data) that overstates the variance of D, so
    the unpaired band is conservative (too wide).

    The band is a bootstrap sup-t band over the log-eta grid (simultaneous). A flip at eta* is
    called significant only when the band lies entirely above 0 somewhere on one side of eta*
    and entirely below 0 somewhere on the other (each side bounded by the neighbouring flips).

    Args:
        counts_a: counts of run A (needed unless the raw arrays are given).
        counts_b: counts of run B.
        metric: ``"ap"``, ``"pr_auc"``, ``"max_f1"`` or ``"f1"`` (with ``thresholds``).
        prevalences: log-eta grid (default 200 log-spaced in [1e-6, 0.5]).
        y_true: labels of the shared examples (paired mode).
        score_a: run A's scores on them.
        score_b: run B's scores on them.
        thresholds: ``(threshold_a, threshold_b)`` for ``"f1"``.
        n_boot: replicates.
        confidence: level of the band and of the eta* intervals.
        seed: seed.

    Returns:
        :class:`FlipSignificance`.
    """
    conf = _check_confidence(confidence)
    if metric not in FLIP_METRICS:
        raise ValueError(f"metric must be one of {FLIP_METRICS}, got {metric!r}")
    if metric == "f1" and thresholds is None:
        raise ValueError("metric 'f1' needs thresholds=(t_a, t_b)")
    eta = (
        np.logspace(-6, math.log10(0.5), 200)
        if prevalences is None
        else np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    )
    if eta.size < 3 or np.any(np.diff(eta) <= 0):
        raise ValueError("prevalences must be an increasing grid of at least 3 values")
    rng = _rng(seed)
    paired = y_true is not None or score_a is not None or score_b is not None
    if paired:
        if y_true is None or score_a is None or score_b is None:
            raise ValueError("paired mode needs all of y_true, score_a and score_b")
        reps, counts_a, counts_b = _paired_replicates(
            y_true, score_a, score_b, metric, eta, int(n_boot), rng, thresholds
        )
        note = "paired stratified bootstrap of examples (same resample for both runs)"
    else:
        if counts_a is None or counts_b is None:
            raise ValueError("give counts_a and counts_b, or y_true, score_a and score_b")
        logger.info("no shared raw scores: unpaired bootstrap (conservative for D)")
        reps = _unpaired_replicates(counts_a, counts_b, metric, eta, int(n_boot), rng, thresholds)
        note = (
            "unpaired: pairing impossible without both runs' scores on the same examples; the "
            "runs were bootstrapped independently, which is conservative (too wide) for "
            "positively correlated scores"
        )
    ta = thresholds[0] if thresholds else None
    tb = thresholds[1] if thresholds else None
    est = metric_values(counts_a, metric, eta, threshold=ta) - metric_values(
        counts_b, metric, eta, threshold=tb
    )
    kw: dict[str, Any] = {"thresholds": thresholds} if metric == "f1" else {}
    flips = flip_points(counts_a, counts_b, metric, (eta[0], eta[-1]), **kw)
    return flip_significance_from_replicates(
        est,
        reps,
        eta,
        flips,
        metric=metric,
        confidence=conf,
        paired=paired,
        note=note,
        seed=seed,
    )


def flip_significance_from_replicates(
    difference: Any,
    replicates: Any,
    prevalences: Any,
    flips: Sequence[float],
    *,
    metric: str = "ap",
    confidence: float = 0.95,
    paired: bool = False,
    note: str = "",
    seed: Any = None,
) -> FlipSignificance:
    """Significance of flips from bootstrap replicates of ``D(eta)`` that already exist.

    The batched counterpart of :func:`flip_significance`: when every run already has one set
    of count-bootstrap replicates of its metric curve (e.g. from
    :func:`uncertainty.bootstrap_statistics`, shared with its intervals and bands), the
    unpaired replicates of ``D = M_A - M_B`` are just ``reps_A - reps_B`` (independent draws),
    and no new resampling is needed. Same band, same rule as :func:`flip_significance`.

    Args:
        difference: the estimate of ``D`` on the grid, ``(G,)``.
        replicates: replicates of ``D``, ``(B, G)``.
        prevalences: the increasing log-eta grid (at least 3 points).
        flips: the flip points eta* (inside the grid's span), e.g. from :func:`flip_table`.
        metric: the metric's name (for the record).
        confidence: level of the band and of the eta* intervals.
        paired: whether the replicates come from a paired bootstrap.
        note: caveats to carry (e.g. the unpaired bootstrap is conservative).
        seed: the seed of the replicates (for the record).

    Returns:
        :class:`FlipSignificance`.
    """
    conf = _check_confidence(confidence)
    eta = np.asarray(prevalences, dtype=float)
    if eta.ndim != 1 or eta.size < 3 or np.any(np.diff(eta) <= 0):
        raise ValueError("prevalences must be an increasing grid of at least 3 values")
    est = np.asarray(difference, dtype=float)
    reps = np.asarray(replicates, dtype=float)
    if est.shape != eta.shape or reps.ndim != 2 or reps.shape[1] != eta.size:
        raise ValueError(
            f"difference must have shape {eta.shape} and replicates (B, {eta.size}); got "
            f"{est.shape} and {reps.shape}"
        )
    if not isinstance(flips, FlipPoints):
        flips = FlipPoints(list(flips), metric, (eta[0], eta[-1]), "given")
    low, high, _ = _band_from_replicates(est, reps, conf, True, "identity")
    prob = (reps > 0).mean(axis=0)
    log_grid = np.log(eta)
    significant: list[bool] = []
    intervals: list[tuple[float, float]] = []
    edges = [eta[0], *flips, eta[-1]]
    a = 1 - conf
    for i, root in enumerate(flips):
        left = (eta >= edges[i]) & (eta < root)
        right = (eta > root) & (eta <= edges[i + 2])
        left_sign = float(np.sign(np.median(est[left]))) if left.any() else 0.0
        pos_l = bool(np.any(low[left] > 0)) if left.any() else False
        neg_l = bool(np.any(high[left] < 0)) if left.any() else False
        pos_r = bool(np.any(low[right] > 0)) if right.any() else False
        neg_r = bool(np.any(high[right] < 0)) if right.any() else False
        significant.append((pos_l and neg_r) or (neg_l and pos_r))
        loc = _crossing_near(reps, log_grid, math.log(root), left_sign or 1.0)
        q_lo, q_hi = np.quantile(loc, [a / 2, 1 - a / 2], method="inverted_cdf")
        intervals.append(
            (
                float(np.exp(np.clip(q_lo, log_grid[0], log_grid[-1]))),
                float(np.exp(np.clip(q_hi, log_grid[0], log_grid[-1]))),
            )
        )
    return FlipSignificance(
        metric=metric,
        prevalences=eta,
        difference=est,
        low=low,
        high=high,
        prob_a_better=prob,
        flips=flips,
        significant=significant,
        flip_intervals=intervals,
        paired=paired,
        method=("paired" if paired else "unpaired")
        + " bootstrap asymmetric sup-t band over log-prevalence grid",
        confidence=conf,
        n_boot=int(reps.shape[0]),
        seed=seed if not isinstance(seed, np.random.Generator) else None,
        note=note,
    )
