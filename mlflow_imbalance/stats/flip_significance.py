"""Is a ranking flip real? Bootstrap bands for the difference of two runs' metric curves.

* :func:`flip_significance` -- a paired bootstrap of ``D(eta) = M_A(eta) - M_B(eta)`` when both
  runs' scores on the same examples are given (stratified resampling of examples, the same draw
  for both runs), or an unpaired count bootstrap otherwise (conservative for positively
  correlated scores); a simultaneous sup-t band over log eta, ``P(D > 0)`` per eta,
  significance of each flip and a percentile interval for eta*.
* :func:`flip_significance_from_replicates` -- the same from replicates that already exist.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import (
    check_prevalence,
)
from mlflow_imbalance.stats._batch import (
    _metric_batch,
    _positive_columns,
    _threshold_column,
    metric_values,
)
from mlflow_imbalance.stats._checks import _check_confidence
from mlflow_imbalance.stats.bands import _band_from_replicates
from mlflow_imbalance.stats.bootstrap import (
    DEPOSIT_MIN_WORK,
    DEPOSIT_STEP,
    _rng,
    bootstrap_counts,
)
from mlflow_imbalance.stats.compare import _paired_count_replicates
from mlflow_imbalance.stats.ranking import FLIP_METRICS, FlipPoints, flip_points

logger = logging.getLogger(__name__)

__all__ = [
    "FlipSignificance",
    "flip_significance",
    "flip_significance_from_replicates",
]


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
        significant: per flip, True when an intersection-union test finds D > 0 somewhere
            on one side of it and D < 0 somewhere on the other (between the neighbouring
            flips), each side by a one-sided bootstrap max test at level ``confidence`` over
            that side's part of the grid (see :func:`flip_significance`).
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

    Each replicate resamples the examples within each class (with replacement, class sizes
    fixed), then forms both runs' per-threshold counts from the same resample
    (:func:`~mlflow_imbalance.stats.compare._shared_count_replicates`). Cost O(B * n) plus
    the metric kernels.
    """
    ca, cb, chunks = _paired_count_replicates(y_true, score_a, score_b, n_boot, rng)
    n_pos, n_neg = ca.n_pos, ca.n_neg
    cols = (_positive_columns(ca), _positive_columns(cb))
    cut = [
        _threshold_column(c, thresholds[j]) if metric == "f1" and thresholds else None
        for j, c in enumerate((ca, cb))
    ]
    # PR-AUC on many columns: the deposit kernel (error <= 2e-6, far below the replicates'
    # spread; 8x faster than the exact sums on the quick start's runs at 30 eta)
    step = [
        DEPOSIT_STEP if metric == "pr_auc" and c.size * eta.size > DEPOSIT_MIN_WORK // 10 else None
        for c in cols
    ]
    out = []
    for tp_a, fp_a, tp_b, fp_b in chunks:
        va = _metric_batch(metric, tp_a, fp_a, n_pos, n_neg, eta, cols[0], cut[0], step[0])
        vb = _metric_batch(metric, tp_b, fp_b, n_pos, n_neg, eta, cols[1], cut[1], step[1])
        out.append(va - vb)
    return np.concatenate(out), ca, cb


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
    side_test: str = "points",
) -> FlipSignificance:
    """Is a flip between runs A and B real? Bootstrap band for ``D(eta) = M_A - M_B``.

    Paired when ``y_true, score_a, score_b`` (both runs scored on the same examples -- e.g. the
    same dataset digest) are given: each replicate resamples examples within each class and
    evaluates both runs on that same resample, so the correlation between the runs is kept.
    Otherwise (only counts) the two runs are bootstrapped independently; for positively
    correlated scores (the usual case on the same data) that overstates the variance of D, so
    the unpaired band is conservative (too wide).

    The band is a bootstrap sup-t band over the log-eta grid (simultaneous), for display. A
    flip at eta* is called significant by an intersection-union test (Berger 1982): "D > 0
    somewhere on one side of eta*" and "D < 0 somewhere on the other" (each side bounded by
    the neighbouring flips) are each shown by a one-sided bootstrap test at level
    ``confidence`` over that side only. A flip needs both, so the false-alarm rate is at most
    ``1 - confidence`` without splitting it between the sides. Each side's statistic is a max
    of standardised non-negative combinations of its points, against the bootstrap quantile
    of the same max over the replicates' deviations: ``side_test="points"`` (default), the
    single points (a one-sided sup-t bound simultaneous over the side); ``"windows"``, on a
    side that reaches an end of the grid, the windows growing from that end (its first 1, 2,
    ..., n points), so that consistent moderate evidence away from the flip adds up (sides
    between two flips still use the points).

    Validity: the null is "no sign change" (``D >= 0`` on the whole grid, or ``D <= 0``).
    Under ``D >= 0`` a false flip needs "D < 0 somewhere" shown on a side where ``D >= 0``;
    every point's (window's) mean is then at most its value at ``D = 0``, so this has
    probability at most ``alpha = 1 - confidence`` (asymptotically, by the bootstrap);
    requiring the other side as well can only lower it. The rate approaches ``alpha`` in the
    least favourable case, D ~ 0 on one side and clearly non-zero on the other (with identical
    models both halves must fail, so the rate is far below ``alpha``). The sides are delimited
    by the estimated flips (data-chosen) and the bootstrap understates the spread of D at the
    lowest prevalences, which the asymptotic argument does not cover, so the level is
    measured at the least favourable null (``benchmarks/bench_band_coverage.py --flips``;
    P = 200, 200 test sets each; paired / unpaired): false alarms 0.040 / 0.035 (points),
    0.055 / 0.045 (windows); power for a crossing with B better at the top 0.735 / 0.635
    (points), 0.740 / 0.700 (windows), against 0.455 / 0.405 for the earlier rule (the
    two-sided whole-grid band excluding 0 on both sides); for a crossing where the runs agree
    at the top and differ mid-range 0.655 / 0.425 (points), 0.515 / 0.330 (windows). Hence
    points by default. Table and the alternatives tried: docs/statistics.md, "Is a flip
    real?".

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
        side_test: ``"points"`` (default: sup-t over the single points of each side) or
            ``"windows"`` (windows from the grid's ends on the outermost sides: more power when
            D keeps its sign out to the grid's end, less when D is ~0 there and non-zero only
            near the flip; its false-alarm rate is closer to the level).

    Returns:
        :class:`FlipSignificance`.
    """
    conf = _check_confidence(confidence)
    if side_test not in ("windows", "points"):
        raise ValueError(f"side_test must be 'windows' or 'points', got {side_test!r}")
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
        side_test=side_test,
    )


def _one_sided(
    est: np.ndarray,
    reps: np.ndarray,
    s_lo: np.ndarray,
    s_hi: np.ndarray,
    region: np.ndarray,
    alpha: float,
    *,
    positive: bool,
    anchor: str | None = None,
) -> bool:
    """Is ``D > 0`` (``positive``) or ``D < 0`` shown somewhere in ``region`` at level ``alpha``?

    Standardised statistics ``t_j = est_j / s_j`` (sign flipped for ``D < 0``) with bootstrap
    null deviations ``(est_j - D*_j) / s_j`` (mirrored for ``D < 0``; ``s_lo`` / ``s_hi`` the
    one-sided scales). ``anchor=None``: the sup-t test, ``max_j t_j`` against the ``1 - alpha``
    bootstrap quantile of the largest deviation over the region. ``anchor="start"`` / ``"end"``:
    the same max over the windows that grow from that end of the region (the first k points,
    k = 1..n; each window's sum of t standardised by the bootstrap s.d. of its sum of
    deviations). A window is a non-negative combination of the points, so where ``D <= 0``
    (``D >= 0``) throughout the region every window's mean is at most its null value and the
    test keeps level ``alpha`` (asymptotically), as the sup-t test does.
    """
    if not region.any():
        return False
    e, r = est[region], reps[:, region]
    s = np.maximum(s_lo[region] if positive else s_hi[region], 1e-300)
    t = e / s if positive else -e / s
    dev = (e - r) / s if positive else (r - e) / s
    if anchor is not None:
        if anchor == "end":
            t, dev = t[::-1], dev[:, ::-1]
        t, dev = np.cumsum(t), np.cumsum(dev, axis=1)
        sd = dev.std(axis=0)
        sd = np.where(sd > 0, sd, np.inf)  # a window the bootstrap cannot vary is not tested
        t, dev = t / sd, dev / sd
    c = max(float(np.quantile(np.max(dev, axis=1), 1 - alpha, method="higher")), 0.0)
    return bool(np.max(t) > c)


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
    side_test: str = "points",
) -> FlipSignificance:
    """Significance of flips from bootstrap replicates of ``D(eta)`` that already exist.

    The batched counterpart of :func:`flip_significance`: when every run already has one set
    of count-bootstrap replicates of its metric curve (e.g. from
    :func:`mlflow_imbalance.stats.bootstrap.bootstrap_statistics`, shared with its intervals
    and bands), the unpaired replicates of ``D = M_A - M_B`` are just ``reps_A - reps_B``
    (independent draws), and no new resampling is needed. Same band, same test as
    :func:`flip_significance`.

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
        side_test: ``"points"`` or ``"windows"`` (see :func:`flip_significance`).

    Returns:
        :class:`FlipSignificance`.
    """
    conf = _check_confidence(confidence)
    if side_test not in ("windows", "points"):
        raise ValueError(f"side_test must be 'windows' or 'points', got {side_test!r}")
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
    low, high, ext = _band_from_replicates(est, reps, conf, True, "identity")
    s_lo, s_hi = ext["s_lo"], ext["s_hi"]
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
        # "windows": the outermost sides grow their windows from the grid's ends (away from
        # the flip, where D = 0); sides between two flips use the points
        windows = side_test == "windows"
        la = "start" if windows and i == 0 else None
        ra = "end" if windows and i == len(flips) - 1 else None
        pos_l = _one_sided(est, reps, s_lo, s_hi, left, a, positive=True, anchor=la)
        neg_l = _one_sided(est, reps, s_lo, s_hi, left, a, positive=False, anchor=la)
        pos_r = _one_sided(est, reps, s_lo, s_hi, right, a, positive=True, anchor=ra)
        neg_r = _one_sided(est, reps, s_lo, s_hi, right, a, positive=False, anchor=ra)
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
        + " bootstrap asymmetric sup-t band over log-prevalence grid; flips: "
        + f"intersection-union test ({side_test})",
        confidence=conf,
        n_boot=int(reps.shape[0]),
        seed=seed if not isinstance(seed, np.random.Generator) else None,
        note=note,
    )
