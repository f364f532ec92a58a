"""Headline intervals: what the logging hook stores and the report's table prints.

* :func:`headline_intervals` -- AP, PR-AUC and max-F1 at several prevalences from ONE
  Bayesian count-bootstrap draw set (:mod:`mlflow_imbalance.stats.posterior`), on counts
  thinned by :func:`thin_for_bootstrap` and
  re-centred on the exact values (:func:`recentre`).
* :func:`thin_for_bootstrap` -- counts with at most about ``3 * points`` thresholds and the
  error that introduced (shared by the logging hook and the report).

ROC-AUC's headline interval is DeLong's (:func:`mlflow_imbalance.stats.auc.roc_auc_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.curves import optimal_operating_point
from mlflow_imbalance.core.metrics import average_precision, max_f1, pr_auc
from mlflow_imbalance.core.validation import check_costs, check_prevalence
from mlflow_imbalance.stats._checks import _check_confidence, _plain
from mlflow_imbalance.stats.bands import MIN_FP_SUPPORT, Band, band_from_replicates
from mlflow_imbalance.stats.bootstrap import (
    Statistic,
    _check_bootstrappable,
    bayesian_statistics,
    bootstrap_statistics,
    chosen_cost_statistic,
    metric_statistic,
    min_cost_statistic,
)
from mlflow_imbalance.stats.posterior import (
    MAX_LOWER_ALPHA,
    MAX_UPPER_ALPHA,
    band_from_draws,
    min_cost_interval,
)

__all__ = [
    "BOOTSTRAP_POINTS",
    "HEADLINE_METRICS",
    "HeadlineIntervals",
    "Thinned",
    "headline_intervals",
    "recentre",
    "thin_for_bootstrap",
]

#: Metrics of :func:`headline_intervals` (one replicate set for all of them).
HEADLINE_METRICS = ("ap", "pr_auc", "max_f1")


class Thinned(NamedTuple):
    """Counts thinned by :func:`thin_for_bootstrap` and how far the dropped points moved.

    Attributes:
        counts: the thinned counts (the input itself when nothing was dropped).
        max_tpr_error: largest TPR move of a dropped point to its kept representative.
        max_fpr_error: largest FPR move likewise.
    """

    counts: RocCounts
    max_tpr_error: float
    max_fpr_error: float


#: Bins per axis of :func:`thin_for_bootstrap` for the bootstrap of the logging hook and of the
#: report's drawn runs (one rule for both). Measured (``benchmarks/bench_thinning.py``: 3 runs of
#: 10^6 scores x 3 seeds, B = 1000): the AP, PR-AUC and max-F1 bands on counts thinned to 40, 80
#: or 200 points per axis are, on average, 0.93-1.04x as wide as on the full counts, with no
#: difference between the three beyond the Monte Carlo spread (s.d. 0.03-0.09 per comparison);
#: 80 costs ~2.6x less than 200.
BOOTSTRAP_POINTS = 80


def thin_for_bootstrap(counts: RocCounts, points: int = BOOTSTRAP_POINTS) -> Thinned:
    """Counts with at most about ``3 * points`` thresholds, and the error that introduced.

    Keeps the last threshold of each of ``points`` equal bins of ``TPR``, of ``TPR + FPR`` and
    of ``log10 FPR`` (floored at ``0.5 / n_neg``, so the low-FPR region that decides precision
    at small eta keeps resolution); counts with ``<= 3 * points`` thresholds are returned as
    they are. The thinned counts are exactly the counts of the scores quantised to the kept
    thresholds (any subset of cumulative counts is valid counts), so their count bootstrap is
    the bootstrap of that quantised classifier. The move of every dropped point to its kept
    representative (the next lower kept threshold) is measured: ``max_tpr_error < 1 / points``
    and ``max_fpr_error < 2 / points`` by construction. The report uses the same thinning
    for drawing (``points=1500``) and for its bootstrap; the logging hook for its bootstrap.

    Args:
        counts: ROC counts (weighted counts keep their flag).
        points: bins per axis (>= 1).

    Returns:
        :class:`Thinned` ``(counts, max_tpr_error, max_fpr_error)``.
    """
    if isinstance(points, bool) or int(points) != points or points < 1:
        raise ValueError(f"points must be an integer >= 1, got {_plain(points)!r}")
    points = int(points)
    k = counts.n_thresholds
    if k <= 3 * points:
        return Thinned(counts, 0.0, 0.0)
    tpr, fpr = counts.tpr, counts.fpr
    fmin = 0.5 / max(float(counts.n_neg), 1.0)
    lf = np.log10(np.maximum(fpr, fmin))
    keep = np.zeros(k, dtype=bool)
    for values, lo, hi in ((tpr, 0.0, 1.0), (tpr + fpr, 0.0, 2.0), (lf, math.log10(fmin), 0.0)):
        b = np.floor((values - lo) * (points / (hi - lo))).astype(np.int64)
        keep[:-1] |= b[1:] != b[:-1]
    keep[-1] = True
    kept = np.flatnonzero(keep)
    rep = kept[np.searchsorted(kept, np.arange(k))]
    thin = RocCounts(
        counts.thresholds[keep],
        counts.tp[keep],
        counts.fp[keep],
        counts.n_pos,
        counts.n_neg,
        compressed=True,
        weighted=counts.weighted,
    )
    return Thinned(thin, float(np.max(tpr[rep] - tpr)), float(np.max(fpr[rep] - fpr)))


def _logit(x: Any) -> np.ndarray:
    x = np.clip(np.asarray(x, dtype=float), 1e-12, 1 - 1e-12)
    return np.log(x) - np.log1p(-x)


def _expit(y: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-y))


def recentre(band: Band, exact: Any) -> tuple[np.ndarray, np.ndarray]:
    """Shift a band computed on thinned counts onto the exact estimate, on the logit scale.

    ``low' = expit(logit(low) + logit(exact) - logit(band.estimate))`` (likewise ``high``),
    then widened if needed to contain ``exact``: the bootstrap of the thinned counts estimates
    the spread, the full counts the centre. Values stay inside [0, 1]; a limit at 0 or 1
    stays there (a finite shift of logit 0 = -inf is still -inf; without this, the clip in
    :func:`_logit` turned a lower limit of 0 into ``1e-12``, printed as such in the report).

    Returns:
        ``(low, high)`` arrays on the band's grid.
    """
    ex = np.asarray(exact, dtype=float)
    shift = _logit(ex) - _logit(band.estimate)
    b_low = np.asarray(band.low, dtype=float)
    b_high = np.asarray(band.high, dtype=float)
    low = np.where(b_low <= 0.0, 0.0, _expit(_logit(b_low) + shift))
    high = np.where(b_high >= 1.0, 1.0, _expit(_logit(b_high) + shift))
    return np.minimum(low, ex), np.maximum(high, ex)


def _max_split(confidence: float, mirrored: bool = False) -> str:
    """How the max-F1 intervals split ``1 - confidence``, in percent of the draws.

    ``mirrored``: the split of a minimum (the lowest expected cost), below and above swapped.
    """
    alpha = 1.0 - confidence
    lo, hi = MAX_LOWER_ALPHA * alpha, MAX_UPPER_ALPHA * alpha
    if mirrored:
        lo, hi = hi, lo
    return f"{lo:.1%} of the draws below, {hi:.1%} above"


@dataclass(frozen=True)
class HeadlineIntervals:
    """Percentile intervals of AP, PR-AUC and max-F1 at several prevalences.

    Attributes:
        prevalences: the prevalences ``(M,)``.
        intervals: ``{metric: (M, 2) array of [low, high]}`` for :data:`HEADLINE_METRICS`,
            and ``"cost"`` (the lowest expected cost per case) when costs were given.
        info: the record (``n_boot``, ``seed``, ``confidence``, ``interval``,
            ``n_thresholds``, ``thinned_to``, ``max_tpr_error``, ``max_fpr_error``,
            ``max_estimate_shift``, ``kernel_max_error``, ``min_support``), JSON-ready.
        draws: every statistic on the draws behind the intervals, ``{name: (B, G)}``: the
            intervals' own (``"ap"``, ``"pr_auc"``, ``"max_f1"``, ``"max_f1:base"``, and with
            costs ``"cost"``, ``"cost:base"``, ``"cost:chosen"``; their columns are
            ``prevalences``) and those of ``extra`` (see :func:`headline_intervals`).
    """

    prevalences: np.ndarray
    intervals: dict[str, np.ndarray]
    info: dict[str, Any]
    draws: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @property
    def method(self) -> str:
        """One line saying how the intervals were made (B, seed, thinning and its error)."""
        info = self.info
        kind = (
            "Bayesian count bootstrap (Dirichlet, Jeffreys pseudo-negative), "
            f"{info['confidence']:.0%} pointwise (equal-tailed; "
            f"max-F1: {_max_split(info['confidence'])})"
            if info.get("construction", "bayesian") == "bayesian"
            else f"count bootstrap, {info['confidence']:.0%} percentile (pointwise)"
        )
        text = f"{kind}, B = {info['n_boot']}, seed {info['seed']}"
        if info["thinned_to"] < info["n_thresholds"]:
            text += (
                f"; resampled on {info['thinned_to']} of {info['n_thresholds']} thresholds "
                f"(TPR moved ≤ {info['max_tpr_error']:.2g}, FPR ≤ {info['max_fpr_error']:.2g}; "
                f"estimates moved ≤ {info['max_estimate_shift']:.2g}, re-centred on the exact "
                "value)"
            )
        return text

    @property
    def cost_method(self) -> str | None:
        """How the lowest-expected-cost intervals were made (``None`` without costs)."""
        info = self.info
        if "costs" not in info:
            return None
        return (
            f"{info['confidence']:.0%} pointwise, from the draws of the AP, PR-AUC and max-F1 "
            f"intervals (B = {info['n_boot']}, seed {info['seed']}): the lowest cost is a "
            "minimum over thresholds, biased down, so the draws are moved by that bias "
            f"({_max_split(info['confidence'], mirrored=True)}) and united with their "
            "equal-tailed interval; the upper limit is at least that of the cost at the chosen "
            "threshold held fixed (no selection) and at most the cost of flagging nothing or "
            "everything (exact); shifted onto the exact cost"
        )


def headline_intervals(
    counts: RocCounts,
    prevalences: Any,
    *,
    exact: Mapping[str, Any] | None = None,
    n_boot: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    points: int = BOOTSTRAP_POINTS,
    construction: str = "bayesian",
    costs: tuple[float, float] | Mapping[str, float] | None = None,
    extra: Mapping[str, Statistic] | None = None,
    extra_base_for: Collection[str] = (),
) -> HeadlineIntervals:
    """Percentile intervals of AP, PR-AUC and max-F1 at each prevalence, one shared bootstrap.

    One :func:`~mlflow_imbalance.stats.bootstrap.bayesian_statistics` call (the Bayesian count
    bootstrap with a Jeffreys pseudo-negative above the top threshold, the same construction
    as :func:`~mlflow_imbalance.stats.prevalence_bands.prevalence_band`) feeds all three
    statistics at every prevalence, on counts thinned by :func:`thin_for_bootstrap`; the exact
    kernels are used (no deposit grid). The intervals are pointwise equal-tailed intervals of
    the draws (for max-F1: re-centred draws, 0.2 alpha of them left below and 0.6 alpha above,
    :data:`~mlflow_imbalance.stats.posterior.MAX_LOWER_ALPHA`), widened to contain the
    estimate, shifted on the logit scale by the thinning error onto the exact values
    (:func:`recentre`; the largest shift is recorded as
    ``max_estimate_shift``). They are given at every prevalence (no support rule:
    ``info["min_support"]`` is 0 and ``info["valid_everywhere"]`` True). Measured pointwise
    coverage (docs/statistics.md, "Coverage at a glance"; R = 300): 0.90-0.97 with 200 or more
    positives; with 100 positives among 10^6 negatives and continuous scores AP 0.90-0.91 and
    PR-AUC 0.87-0.89 at and below the test prevalence, max-F1 0.78 far below it. Rows in such a
    regime carry ``"undercovers"`` (:func:`mlflow_imbalance.stats.coverage.undercovers`).

    With ``costs = (C_FP, C_FN)`` the same draws also give an interval for the lowest expected
    cost per case, ``min over thresholds of FPR (1 - eta) C_FP + (1 - TPR) eta C_FN``
    (:func:`~mlflow_imbalance.stats.posterior.min_cost_interval`: a minimum over thresholds is
    biased down, so the draws are moved by that bias and alpha is split as max-F1's, mirrored;
    united with the equal-tailed interval, which alone covers where flagging nothing is
    optimal; the upper limit at least the draws' 1 - 0.2 alpha quantile of the cost at the
    threshold the estimate chose, which involves no selection; at most
    ``min(eta C_FN, (1 - eta) C_FP)``, the exact cost of flagging nothing or everything, which
    the lowest cost never exceeds). It is shifted additively onto the exact cost (a cost is not
    a proportion, so no logit). Coverage is measured by ``bench_band_coverage.py --cost``
    (docs/statistics.md). The report calls this function for its table and verdict intervals
    (``report/analysis/intervals.py``, ``_Uncertainty.table_intervals``) with its own B, seed,
    confidence and costs: the same numbers as the hook's whenever those are the logged ones.

    ``extra`` statistics (built on ``thin_for_bootstrap(counts, points).counts``) are evaluated
    on the same draws and returned in :attr:`HeadlineIntervals.draws`, so a caller that needs
    more of these draws (the report: its bands against η, the ROC band's low-FPR floor, the
    live verdict's cost limits) does not draw a second set. The draws do not depend on which
    statistics are evaluated on them, so the intervals are the same with or without ``extra``.

    Args:
        counts: unweighted counts.
        prevalences: the prevalences (1-d).
        exact: ``{"ap": (M,), "pr_auc": (M,), "max_f1": (M,)}`` from the full counts
            (computed with :mod:`mlflow_imbalance.metrics` when None).
        n_boot: replicates.
        seed: the generator seed (recorded).
        confidence: nominal level.
        points: thinning resolution (:func:`thin_for_bootstrap`).
        construction: ``"bayesian"`` (default) or ``"bootstrap"``: the earlier stratified count
            bootstrap's percentile intervals (under-cover where the estimate rests on fewer than
            ``MIN_FP_SUPPORT`` false positives; kept for comparison).
        costs: ``(C_FP, C_FN)`` or ``{"fp": C_FP, "fn": C_FN}`` (as ``log_scores`` takes
            them), positive: adds ``intervals["cost"]`` (``exact["cost"]`` may
            give the exact lowest costs; computed here when absent). Only with
            ``construction="bayesian"``.
        extra: more statistics of the thinned counts, ``{name: Statistic}``, on the same
            draws (names must differ from the intervals' own).
        extra_base_for: names of ``extra`` also evaluated without the pseudo-negative
            (``"<name>:base"``, as ``max_f1:base``; Bayesian construction only).

    Returns:
        :class:`HeadlineIntervals`.
    """
    conf = _check_confidence(confidence)
    _check_bootstrappable(counts)
    etas = np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    if exact is None:
        exact = {
            "ap": average_precision(counts, etas),
            "pr_auc": pr_auc(counts, etas),
            "max_f1": max_f1(counts, etas),
        }
    if construction not in ("bayesian", "bootstrap"):
        raise ValueError(f"construction must be 'bayesian' or 'bootstrap', got {construction!r}")
    bayes = construction == "bayesian"
    cost = check_costs(costs)
    if cost is not None and not bayes:
        raise ValueError("costs: the cost interval needs construction='bayesian'")
    thin, tpr_err, fpr_err = thin_for_bootstrap(counts, points)
    stat = {key: metric_statistic(thin, key, etas, grid_step=None) for key in HEADLINE_METRICS}
    if cost is not None:  # a statistic more on the same draws: the others do not change
        stat["cost"] = min_cost_statistic(thin, etas, *cost)
        stat["cost:chosen"] = chosen_cost_statistic(thin, etas, *cost)
    base_for = ("max_f1",) if cost is None else ("max_f1", "cost")
    more, more_base = dict(extra or {}), tuple(extra_base_for)
    taken = {*stat, *(f"{k}:base" for k in base_for)} & {*more, *(f"{k}:base" for k in more_base)}
    if taken:
        raise ValueError(f"extra: names the intervals' own draws use: {sorted(taken)}")
    if not set(more_base) <= set(more):
        raise ValueError(f"extra_base_for: not in extra: {sorted(set(more_base) - set(more))}")
    if more_base and not bayes:
        raise ValueError("extra_base_for: only with construction='bayesian'")
    rng = np.random.default_rng(seed)
    if bayes:
        reps = bayesian_statistics(
            thin, {**stat, **more}, n_boot, rng, base_for=(*base_for, *more_base)
        )
    else:
        reps = bootstrap_statistics(thin, {**stat, **more}, n_boot, rng)
    out: dict[str, np.ndarray] = {}
    shift = kernel = 0.0
    for key in HEADLINE_METRICS:
        est_thin = stat[key].estimate(thin)
        kernel = max(kernel, stat[key].max_error)
        if bayes:
            band = band_from_draws(
                est_thin, reps[key], etas, metric=key, base=reps.get(f"{key}:base"),
                confidence=conf, simultaneous=False, seed=seed,
            )  # fmt: skip
        else:
            band = band_from_replicates(
                est_thin, reps[key], etas, metric=key, confidence=conf, simultaneous=False
            )
        ex = np.atleast_1d(np.asarray(exact[key], dtype=float))
        low, high = recentre(band, ex)
        shift = max(shift, float(np.max(np.abs(ex - est_thin))))
        out[key] = np.column_stack([low, high])
    if cost is not None:
        ex = exact.get("cost")
        if ex is None:
            ex = optimal_operating_point(counts, etas, *cost).cost
        ex = np.atleast_1d(np.asarray(ex, dtype=float))
        est_thin = stat["cost"].estimate(thin)
        cap = np.minimum(etas * cost[1], (1.0 - etas) * cost[0])  # flag nothing / everything
        low, high = min_cost_interval(
            reps["cost"], reps["cost:base"], est_thin, ex, conf, chosen=reps["cost:chosen"],
            cap=cap,
        )  # fmt: skip
        out["cost"] = np.column_stack([low, high])
    info = {
        "n_boot": int(n_boot),
        "seed": int(seed),
        "confidence": conf,
        "interval": (
            "Bayesian count bootstrap (Jeffreys pseudo-negative), pointwise, equal-tailed "
            f"(max-F1: {_max_split(conf)})"
            if bayes
            else "percentile, pointwise"
        ),
        "construction": construction,
        "n_thresholds": int(counts.n_thresholds),
        "thinned_to": int(thin.n_thresholds),
        "max_tpr_error": tpr_err,
        "max_fpr_error": fpr_err,
        "max_estimate_shift": shift,
        "kernel_max_error": kernel,
        "min_support": 0 if bayes else MIN_FP_SUPPORT,
        "valid_everywhere": bayes,
    }
    if cost is not None:
        info["costs"] = {"fp": cost[0], "fn": cost[1]}
    return HeadlineIntervals(etas, out, info, reps)
