"""How an audit's budget is spread over its strata (the allocation of :func:`design_audit`).

:func:`~mlflow_imbalance.stats.audit.design_audit` forms the strata; this module turns their
Neyman weights into integer labels per stratum (a floor in every stratum, then Neyman's rule,
Cochran 1977 §5.5, water-filled within the stratum sizes), cuts a fine partition into strata of
equal cumulative Neyman mass (Dalenius & Hodges 1959) and, for ``focus="precision"``, gives the
flagged strata the labels precision's target half-width needs first.
"""

from __future__ import annotations

import math
import statistics

import numpy as np

#: Share of the budget spread evenly over the strata before the Neyman allocation.
FLOOR_SHARE = 0.2
#: Fewest labels planned in a stratum (fewer when the stratum is smaller).
MIN_LABELS = 2
#: The expected 95 % half-width of precision a ``focus="precision"`` design plans for.
PRECISION_FOCUS_HALF_WIDTH = 0.05
#: Least share of the budget a ``focus="precision"`` design keeps below the threshold (for η's
#: and recall's intervals: their positives below the threshold are only seen there) ...
MIN_BELOW_SHARE = 0.25
#: ... and least number of labels (with 25 of 100 labels below, η's and recall's intervals
#: covered 0.89-0.92 with a weak model at η = 0.1; docs/statistics.md, "Audits").
MIN_BELOW_LABELS = 40


def _split(f: np.ndarray, sizes: np.ndarray, k: int) -> np.ndarray:
    """Bin indices (exclusive ends) cutting bins into ``k`` groups of equal cumulative ``f``."""
    if k <= 1 or f.size <= 1:
        return np.asarray([f.size], dtype=np.int64)
    w = f if f.sum() > 0 else sizes.astype(np.float64)
    cum = np.cumsum(w) / w.sum()
    ends = np.searchsorted(cum, np.arange(1, k) / k, side="left") + 1
    ends = np.unique(np.clip(ends, 1, f.size - 1))
    return np.concatenate([ends, [f.size]]).astype(np.int64)


def _allocate(budget: int, sizes: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Integer labels per stratum: a floor, then Neyman weights; each ``<= N_h``, sum = budget."""
    h = sizes.size
    floor = max(MIN_LABELS, int(FLOOR_SHARE * budget / h))
    lo = np.minimum(sizes, floor).astype(np.float64)
    if lo.sum() > budget:
        lo = np.minimum(sizes, 1).astype(np.float64)
    w = np.where(weight > 0, weight, 0.0)
    if w.sum() <= 0:
        w = sizes.astype(np.float64)
    x = lo.copy()
    free = np.ones(h, dtype=bool)
    for _ in range(h + 1):  # water-filling: cap at N_h, hand the excess to the others
        left = budget - x.sum()
        if left <= 1e-9 or not free.any():
            break
        share = np.where(free, w, 0.0)
        if share.sum() <= 0:
            share = np.where(free, sizes - x, 0.0)
        add = left * share / share.sum()
        x = np.minimum(sizes, x + add)
        free &= x < sizes
    n = np.floor(x).astype(np.int64)
    rem = budget - int(n.sum())
    order = np.argsort(-(x - n) - 2.0 * (n < sizes), kind="stable")
    for i in order:  # largest remainders first, within the stratum sizes
        if rem <= 0:
            break
        if n[i] < sizes[i]:
            n[i] += 1
            rem -= 1
    return n


def _precision_labels(n_a: np.ndarray, p_a: np.ndarray) -> float:
    """Labels for precision's target half-width over the flagged strata.

    The expected 95 % half-width :data:`PRECISION_FOCUS_HALF_WIDTH` of the stratified mean over
    strata of sizes ``n_a`` and guessed shares ``p_a`` under Neyman allocation, with the finite
    population correction (Cochran 1977 eq. 5.26).
    """
    w = n_a / n_a.sum()
    s = np.sqrt(p_a * (1 - p_a))
    z = statistics.NormalDist().inv_cdf(0.975)
    return float((w @ s) ** 2 / ((PRECISION_FOCUS_HALF_WIDTH / z) ** 2 + (w @ s**2) / n_a.sum()))


def _keep_below(budget: int, strata_below: int) -> int:
    """Labels a precision-first design keeps below the threshold (at most the budget)."""
    want = max(math.ceil(MIN_BELOW_SHARE * budget), MIN_BELOW_LABELS, MIN_LABELS * strata_below)
    return min(want, budget)


def _precision_first(
    budget: int,
    n_h: np.ndarray,
    weight: np.ndarray,
    above: np.ndarray,
    p_h: np.ndarray,
    balanced: np.ndarray,
) -> np.ndarray:
    """The precision focus's allocation.

    The balanced one, with at least the labels for precision's target half-width above the
    threshold (keeping :data:`MIN_BELOW_SHARE` of the budget below), each side Neyman-allocated
    within itself.
    """
    below = ~above
    n_above_bal = int(balanced[above].sum())
    keep_below = _keep_below(budget, int(below.sum()))
    need = math.ceil(_precision_labels(n_h[above].astype(np.float64), p_h[above]))
    n_above = min(need, budget - keep_below, int(n_h[above].sum()))
    n_above = max(n_above, budget - int(n_h[below].sum()))
    if n_above <= n_above_bal:
        return balanced
    out = np.zeros_like(balanced)
    out[above] = _allocate(n_above, n_h[above], weight[above])
    out[below] = _allocate(budget - n_above, n_h[below], weight[below])
    return out
