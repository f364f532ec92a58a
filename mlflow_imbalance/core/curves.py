"""Curves and decisions built on the ROC counts (numpy only).

The ROC convex hull (Provost & Fawcett; Maxion & Roberts §4), dominance of one curve over
another, expected cost and Drummond–Holte cost curves, iso-performance slopes, B-ROC
(Cárdenas & Baras 2006) and the P³ curve, and sweeps of point metrics over a prevalence grid
(Brabec et al. 2020, eq. 8). Conventions are those of :mod:`mlflow_imbalance.core.metrics`.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.metrics import (
    OperatingPoint,
    _check_counts,
    _finish,
    _ppv,
    _prevalences,
    _rows,
    average_precision,
    max_f1_point,
    pr_auc,
    roc_curve,
)
from mlflow_imbalance.core.validation import (
    MAX_GRID_POINTS,
    MAX_POINTS_PER_SEGMENT,
    check_cost,
    check_max_fpr,
    check_prevalence,
    check_size,
    plain,
)

logger = logging.getLogger(__name__)

__all__ = [
    "CostCurve",
    "Dominance",
    "Hull",
    "broc_curve",
    "broc_origin_limit",
    "convex_hull",
    "cost_curve",
    "default_prevalence_grid",
    "dominance",
    "expected_cost",
    "iso_performance_slope",
    "normalized_expected_cost",
    "optimal_operating_point",
    "p3_curve",
    "prevalence_from_probability_cost",
    "prevalence_sweep",
    "probability_cost",
    "slope_range",
    "tpr_at_fpr",
]


class Hull(NamedTuple):
    """Vertices of the ROC convex hull, from ``(0, 0)`` to ``(1, 1)``, FPR ascending.

    Attributes:
        fpr: FPR of each vertex (starts at 0).
        tpr: TPR of each vertex (ends at 1).
        thresholds: the threshold of each vertex (``+inf`` at the origin; ``-inf`` for an
            appended ``(1, 1)`` when the stored counts do not end there).
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray


class Dominance(NamedTuple):
    """Result of :func:`dominance` of ROC curve ``a`` against ``b``.

    Attributes:
        kind: ``"full"`` (one curve is nowhere below the other and above it on an FPR interval
            of positive length), ``"partial"`` (each is above the other somewhere: the curves
            cross) or ``"none"`` (the curves coincide).
        which: ``"a"`` or ``"b"`` for full dominance, else None.
        ranges: ``{"a": [(lo, hi), ...], "b": [...]}``, the FPR intervals on which each curve's
            TPR is strictly higher.
        crossings: FPR values where the leader changes.
    """

    kind: str
    which: str | None
    ranges: dict[str, list[tuple[float, float]]]
    crossings: list[float]


class CostCurve(NamedTuple):
    """Drummond–Holte cost curve (see :func:`cost_curve`).

    Attributes:
        pc: probability cost ``PC(+)`` grid, shape ``(num,)``.
        costs: normalized expected cost of each hull vertex's line, shape ``(V, num)``.
        envelope: their lower envelope (the cost curve of the classifier), shape ``(num,)``.
    """

    pc: np.ndarray
    costs: np.ndarray
    envelope: np.ndarray


def tpr_at_fpr(c: RocCounts, max_fpr: float, hull: bool = False) -> OperatingPoint:
    """The Neyman–Pearson operating point: the highest TPR with FPR at most ``max_fpr``.

    Args:
        c: ROC counts.
        max_fpr: the false-alarm budget, in (0, 1].
        hull: False: on the empirical curve, the stored point (or the origin) of highest TPR
            among those with ``FPR <= max_fpr``; among points of equal TPR the one of lowest FPR,
            and its threshold. True: on the ROC convex hull, the hull's value at
            ``FPR = max_fpr`` exactly; when that falls between two hull vertices it is reached by
            using the stricter vertex's ``threshold`` and, for each example independently with
            probability ``p_alt``, the looser vertex's ``threshold_alt`` (Maxion & Roberts §5.2;
            the Neyman–Pearson randomised test).

    Returns:
        :class:`OperatingPoint` ``(threshold, tpr, fpr, ...)``.
    """
    m = check_max_fpr(max_fpr)
    if hull:
        h = convex_hull(c)
        j = int(np.searchsorted(h.fpr, m, side="right")) - 1
        if h.fpr[j] == m or j == h.fpr.size - 1:
            return OperatingPoint(float(h.thresholds[j]), float(h.tpr[j]), float(h.fpr[j]))
        q = (m - h.fpr[j]) / (h.fpr[j + 1] - h.fpr[j])
        t = h.tpr[j] + q * (h.tpr[j + 1] - h.tpr[j])
        return OperatingPoint(
            float(h.thresholds[j]),
            float(t),
            m,
            threshold_alt=float(h.thresholds[j + 1]),
            p_alt=float(q),
        )
    f, t, thr = roc_curve(c)
    last = int(np.searchsorted(f, m, side="right")) - 1
    first = int(np.searchsorted(t, t[last], side="left"))
    return OperatingPoint(float(thr[first]), float(t[first]), float(f[first]))


# ---------------------------------------------------------------------------- convex hull
def _closed_curve(c: RocCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC points with the origin and, if missing, the corner (1, 1) (threshold -inf)."""
    f, t, thr = roc_curve(c)
    if f[-1] < 1.0 - 1e-12 or t[-1] < 1.0 - 1e-12:
        f = np.append(f, 1.0)
        t = np.append(t, 1.0)
        thr = np.append(thr, -np.inf)
    return f, t, thr


def _upper_hull_indices(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the upper convex hull vertices of points sorted by x (then y).

    Vectorised passes drop every vertex on or below the chord of its neighbours (such a vertex
    cannot be a hull vertex, so dropping many at once is safe); once passes stop paying off,
    a monotone-chain scan (Andrew 1979) finishes the few remaining points.
    """
    idx = np.arange(x.size)
    while idx.size > 2:
        xa, ya = x[idx[:-2]], y[idx[:-2]]
        xb, yb = x[idx[1:-1]], y[idx[1:-1]]
        xc, yc = x[idx[2:]], y[idx[2:]]
        cross = (xb - xa) * (yc - ya) - (yb - ya) * (xc - xa)
        drop = cross >= 0  # b on or below the chord a–c
        n_drop = int(np.count_nonzero(drop))
        if n_drop == 0:
            return idx
        keep = np.ones(idx.size, dtype=bool)
        keep[1:-1] = ~drop
        idx = idx[keep]
        if n_drop < max(8, idx.size // 20):
            break
    stack: list[int] = []
    for i in idx.tolist():
        while len(stack) >= 2:
            a, b = stack[-2], stack[-1]
            if (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a]) >= 0:
                stack.pop()
            else:
                break
        stack.append(i)
    return np.asarray(stack, dtype=np.intp)


def convex_hull(c: RocCounts) -> Hull:
    """ROC convex hull (ROCCH): the upper hull of the ROC points, ``(0,0)`` and ``(1,1)``.

    Every point on it is achievable by randomising between its two neighbouring vertices
    (Maxion & Roberts §2.2, §5.2; Provost & Fawcett). Collinear interior points are not
    vertices.

    Returns:
        :class:`Hull` with FPR ascending from 0 to 1.
    """
    c = _check_counts(c)
    # Orientation tests on the counts, not the rates: integer counts below ~9e7 make every
    # cross product exact in float64, so collinear points are recognised as such.
    fp = np.concatenate(([0.0], c.fp.astype(np.float64)))
    tp = np.concatenate(([0.0], c.tp.astype(np.float64)))
    thr = np.concatenate(([np.inf], c.thresholds))
    if fp[-1] < c.n_neg * (1 - 1e-12) or tp[-1] < c.n_pos * (1 - 1e-12):
        fp = np.append(fp, float(c.n_neg))
        tp = np.append(tp, float(c.n_pos))
        thr = np.append(thr, -np.inf)
    # each axis scaled by a power of two (exact: collinear stays collinear) to at most 1, so
    # the cross products of weighted counts near 1e300 cannot overflow (nor tiny ones underflow)
    keep = _upper_hull_indices(_unit_scale(fp, c.n_neg), _unit_scale(tp, c.n_pos))
    return Hull(fp[keep] / c.n_neg, tp[keep] / c.n_pos, thr[keep])


def _unit_scale(v: np.ndarray, total: float) -> np.ndarray:
    """``v`` times the power of two that brings ``total`` into [0.5, 1) (exact in float64)."""
    return np.ldexp(v, -int(np.frexp(float(total))[1])) if total > 0 else v


# ---------------------------------------------------------------------------- dominance
def _left_right_values(f: np.ndarray, t: np.ndarray, xs: np.ndarray) -> tuple[np.ndarray, ...]:
    """Left and right limits of the piecewise-linear ROC curve at ``xs`` (0 <= xs <= 1)."""
    last = f.size - 2

    def on_segment(j: np.ndarray) -> np.ndarray:
        j = np.clip(j, 0, last)
        w = f[j + 1] - f[j]
        with np.errstate(invalid="ignore", divide="ignore"):
            q = np.where(w > 0, (xs - f[j]) / np.where(w > 0, w, 1.0), 1.0)
        return t[j] + np.clip(q, 0.0, 1.0) * (t[j + 1] - t[j])

    left = on_segment(np.searchsorted(f, xs, side="left") - 1)
    right = on_segment(np.searchsorted(f, xs, side="right") - 1)
    return left, right


def dominance(a: RocCounts, b: RocCounts, atol: float = 1e-12) -> Dominance:
    """Compare two empirical ROC curves (TPR as a piecewise-linear function of FPR).

    The union of both curves' FPR breakpoints splits [0, 1] into intervals on which the TPR
    difference is linear; its sign on each, and the exact crossing inside an interval where
    it changes sign, give the FPR ranges where each curve is higher (Maxion & Roberts §5.1).
    Differences on vertical segments (zero FPR width) are ignored; differences below ``atol``
    count as equal.

    Args:
        a: counts of the first classifier.
        b: counts of the second.
        atol: absolute TPR tolerance.

    Returns:
        :class:`Dominance` (kind ``"full"``, ``"partial"`` or ``"none"``).
    """
    fa, ta, _ = _closed_curve(_check_counts(a, "a"))
    fb, tb, _ = _closed_curve(_check_counts(b, "b"))
    xs = np.union1d(fa, fb)
    _, ra = _left_right_values(fa, ta, xs[:-1])
    _, rb = _left_right_values(fb, tb, xs[:-1])
    la, _ = _left_right_values(fa, ta, xs[1:])
    lb, _ = _left_right_values(fb, tb, xs[1:])
    d_lo = ra - rb  # difference just right of each interval's start
    d_hi = la - lb  # just left of its end
    s_lo = np.where(np.abs(d_lo) <= atol, 0, np.sign(d_lo)).astype(int)
    s_hi = np.where(np.abs(d_hi) <= atol, 0, np.sign(d_hi)).astype(int)
    lo, hi = xs[:-1], xs[1:]
    cross = s_lo * s_hi < 0
    with np.errstate(invalid="ignore", divide="ignore"):
        root = np.where(cross, lo + (hi - lo) * d_lo / np.where(cross, d_lo - d_hi, 1.0), hi)
    # Pieces: [lo, root] with the sign at the start (or the end when the start is a touch),
    # then [root, hi] with the sign at the end (empty unless crossing).
    first_sign = np.where(s_lo != 0, s_lo, s_hi)
    p_lo = np.concatenate((lo, root))
    p_hi = np.concatenate((np.where(cross, root, hi), hi))
    p_sign = np.concatenate((first_sign, np.where(cross, s_hi, 0)))
    order = np.argsort(p_lo, kind="stable")
    p_lo, p_hi, p_sign = p_lo[order], p_hi[order], p_sign[order]
    nonempty = p_hi > p_lo
    p_lo, p_hi, p_sign = p_lo[nonempty], p_hi[nonempty], p_sign[nonempty]
    ranges: dict[str, list[tuple[float, float]]] = {"a": [], "b": []}
    signed = p_sign != 0
    crossings: list[float] = []
    if signed.any():
        lo_s, hi_s, sg = p_lo[signed], p_hi[signed], p_sign[signed]
        # merge adjacent pieces of the same sign (touching at an endpoint)
        new = np.ones(sg.size, dtype=bool)
        new[1:] = (sg[1:] != sg[:-1]) | (lo_s[1:] > hi_s[:-1])
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:], sg.size) - 1
        for s0, e0 in zip(starts.tolist(), ends.tolist(), strict=True):
            key = "a" if sg[s0] > 0 else "b"
            ranges[key].append((float(lo_s[s0]), float(hi_s[e0])))
        change = np.flatnonzero(sg[starts][1:] != sg[starts][:-1])
        crossings = [float(hi_s[ends[i]]) for i in change.tolist()]
    if ranges["a"] and ranges["b"]:
        return Dominance("partial", None, ranges, crossings)
    if ranges["a"] or ranges["b"]:
        return Dominance("full", "a" if ranges["a"] else "b", ranges, crossings)
    return Dominance("none", None, ranges, crossings)


# ---------------------------------------------------------------------------- costs
def expected_cost(
    c: RocCounts, prevalence: Any = None, cost_fp: float = 1.0, cost_fn: float = 1.0
) -> Any:
    """Expected cost per example at each stored threshold.

    ``E[cost] = FPR·(1 − η)·C_FP + FNR·η·C_FN`` (ranking-metrics slides, "EXPECTED COSTS";
    correct decisions cost nothing).

    Args:
        c: ROC counts.
        prevalence: η (scalar or 1-d array); None = the test set's.
        cost_fp: cost of a false positive, C(+1, −1) > 0.
        cost_fn: cost of a false negative, C(−1, +1) > 0.

    Returns:
        Array ``(K,)`` for scalar η, ``(M, K)`` for ``M`` prevalences.
    """
    c = _check_counts(c)
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    eta = _prevalences(c, prevalence)
    r = _rows(eta)
    return _finish(c.fpr * (1.0 - r) * cfp + (1.0 - c.tpr) * r * cfn, eta)


def normalized_expected_cost(
    c: RocCounts, prevalence: Any = None, cost_fp: float = 1.0, cost_fn: float = 1.0
) -> Any:
    """Expected cost divided by its maximum ``(1 − η)·C_FP + η·C_FN`` (FPR = FNR = 1).

    Equal to ``FNR·PC + FPR·(1 − PC)`` with the probability cost ``PC`` of
    :func:`probability_cost`: the Drummond–Holte cost-curve value (slides, "COST CURVES").

    Returns:
        Array ``(K,)`` for scalar η, ``(M, K)`` for ``M`` prevalences, values in [0, 1].
    """
    c = _check_counts(c)
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    eta = _prevalences(c, prevalence)
    r = _rows(eta)
    pc = r * cfn / (r * cfn + (1.0 - r) * cfp)
    return _finish((1.0 - c.tpr) * pc + c.fpr * (1.0 - pc), eta)


def probability_cost(prevalence: Any, cost_fp: float = 1.0, cost_fn: float = 1.0) -> Any:
    """Drummond–Holte probability cost ``PC(+) = η·C_FN / (η·C_FN + (1 − η)·C_FP)``."""
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    eta = _prevalences(None, prevalence)
    out = eta * cfn / (eta * cfn + (1.0 - eta) * cfp)
    return float(out) if out.ndim == 0 else out


def prevalence_from_probability_cost(pc: Any, cost_fp: float = 1.0, cost_fn: float = 1.0) -> Any:
    """Inverse of :func:`probability_cost`: ``η = PC·C_FP / (PC·C_FP + (1 − PC)·C_FN)``."""
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    p = _prevalences(None, pc, "pc")
    out = p * cfp / (p * cfp + (1.0 - p) * cfn)
    return float(out) if out.ndim == 0 else out


def iso_performance_slope(prevalence: Any, cost_fp: float = 1.0, cost_fn: float = 1.0) -> Any:
    """Ideal ROC slope ``(1 − η)/η · C_FP/C_FN`` (Maxion & Roberts §4, "Ideal ROC slope***").

    Iso-performance lines (equal expected cost) in ROC space have this slope; the optimal
    operating point is where the highest such line touches the convex hull.

    Returns:
        Float for scalar η, array for an array of prevalences.
    """
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    eta = _prevalences(None, prevalence)
    out = (1.0 - eta) / eta * (cfp / cfn)
    return float(out) if out.ndim == 0 else out


def _as_range(value: Any, name: str, check: Any) -> tuple[float, float]:
    arr = np.atleast_1d(np.asarray(value, dtype=np.float64))
    if arr.ndim != 1 or arr.size not in (1, 2):
        raise ValueError(f"{name} must be a number or a (low, high) pair, got {plain(value)!r}")
    lo, hi = float(arr.min()), float(arr.max())
    check(lo)
    check(hi)
    return lo, hi


def slope_range(prevalence: Any, cost_fp: Any = 1.0, cost_fn: Any = 1.0) -> tuple[float, float]:
    """Range of ideal ROC slopes for ranges of prevalence and costs (Maxion & Roberts §4 end).

    Each argument is a number or a ``(low, high)`` pair. The slope falls with η and ``C_FN``
    and rises with ``C_FP``, so its extremes come from the extremes of the inputs.

    Returns:
        ``(min_slope, max_slope)``.
    """
    e_lo, e_hi = _as_range(prevalence, "prevalence", lambda v: check_prevalence(v, "prevalence"))
    p_lo, p_hi = _as_range(cost_fp, "cost_fp", lambda v: check_cost(v, "cost_fp"))
    n_lo, n_hi = _as_range(cost_fn, "cost_fn", lambda v: check_cost(v, "cost_fn"))
    return (
        float(iso_performance_slope(e_hi, p_lo, n_hi)),
        float(iso_performance_slope(e_lo, p_hi, n_lo)),
    )


def optimal_operating_point(
    c: RocCounts,
    prevalence: Any = None,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    *,
    hull: Hull | None = None,
) -> OperatingPoint:
    """Minimum-expected-cost operating point on the ROC convex hull.

    Expected cost is linear in (FPR, TPR), so its minimum over the hull is at a vertex: the
    one where an iso-performance line of slope :func:`iso_performance_slope` touches the hull
    (Maxion & Roberts §4, §5.2). The trivial classifiers (origin: "always negative"; (1, 1):
    "always positive") are vertices too, and win when the slope is steeper or flatter than the
    whole hull. On ties the vertex of lower FPR is returned.

    Args:
        c: ROC counts.
        prevalence: η, a scalar or ``(M,)`` prevalences; None = the test set's own.
        cost_fp: cost of one false positive.
        cost_fn: cost of one false negative.
        hull: ``convex_hull(c)``, when the caller already has it (a caller asking at many
            prevalences one at a time computes it once); not checked against ``c``.

    Returns:
        :class:`OperatingPoint` with ``cost`` = the expected cost per example; fields are
        floats for scalar η and ``(M,)`` arrays for ``M`` prevalences.
    """
    c = _check_counts(c)
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    eta = _prevalences(c, prevalence)
    h = convex_hull(c) if hull is None else hull
    r = _rows(eta)
    cost = h.fpr * (1.0 - r) * cfp + (1.0 - h.tpr) * r * cfn
    j = np.argmin(cost, axis=1)
    best = cost[np.arange(j.size), j]
    if eta.ndim == 0:
        return OperatingPoint(
            float(h.thresholds[j[0]]), float(h.tpr[j[0]]), float(h.fpr[j[0]]), float(best[0])
        )
    return OperatingPoint(h.thresholds[j], h.tpr[j], h.fpr[j], best)


def cost_curve(
    c: RocCounts,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    num: int = 201,
    prevalences: Any = None,
) -> CostCurve:
    """Drummond–Holte cost curve: normalized expected cost against probability cost PC(+).

    Each ROC convex-hull vertex (FPR, TPR) is the line ``NEC = FNR·PC + FPR·(1 − PC)``; the
    classifier's cost curve is their lower envelope (the envelope over all ROC points equals
    the one over hull vertices). The trivial classifiers are included (lines ``PC`` and
    ``1 − PC``), as in the slides' "COST CURVES".

    Args:
        c: ROC counts.
        cost_fp: C(+1, −1); used with ``cost_fn`` only to map ``prevalences`` to PC.
        cost_fn: C(−1, +1).
        num: grid size when ``prevalences`` is None (PC evenly spaced on [0, 1]); at most
            :data:`~mlflow_imbalance.core.validation.MAX_GRID_POINTS`.
        prevalences: optional η grid; the x axis is then ``probability_cost(prevalences, ...)``.

    Returns:
        :class:`CostCurve` ``(pc, costs, envelope)``.
    """
    c = _check_counts(c)
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    if prevalences is None:
        pc = np.linspace(0.0, 1.0, check_size(num, "num", minimum=2, maximum=MAX_GRID_POINTS))
    else:
        pc = np.atleast_1d(probability_cost(prevalences, cfp, cfn))
    h = convex_hull(c)
    costs = (1.0 - h.tpr)[:, None] * pc + h.fpr[:, None] * (1.0 - pc)
    return CostCurve(pc, costs, costs.min(axis=0))


# ---------------------------------------------------------------------------- B-ROC and P³
def _first_hull_slope(h: Hull) -> float:
    dx, dy = h.fpr[1] - h.fpr[0], h.tpr[1] - h.tpr[0]
    return float(np.inf) if dx == 0 else float(dy / dx)


def broc_origin_limit(c: RocCounts, prevalence: Any = None) -> Any:
    """Limit of the Bayesian false-alarm rate at the ROC origin (Cárdenas & Baras).

    ``lim_{α→0+} B_FA = (1 − p)/(p·(f'(0+) − 1) + 1)`` with ``f'(0+)`` the slope of the first
    convex-hull segment (0 when that segment is vertical, i.e. ``f'(0+) = ∞``). Along that
    segment B_FA is constant, so this is also its value there.

    Returns:
        Float for scalar η, ``(M,)`` array for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    s = _first_hull_slope(convex_hull(c))
    if np.isinf(s):
        out = np.zeros(eta.shape)
    else:
        out = (1.0 - eta) / (eta * (s - 1.0) + 1.0)
    return float(out) if out.ndim == 0 else out


def broc_curve(
    c: RocCounts, prevalence: Any = None, points_per_segment: int = 50
) -> tuple[Any, np.ndarray]:
    """B-ROC curve (Cárdenas & Baras): detection rate P_D against ``B_FA = 1 − PPV(p)``.

    Built from the ROC convex hull, since only a concave ROC maps to a well-defined,
    continuous, non-decreasing B-ROC (their Figs. 6–7). A straight hull segment maps to a curve
    in B-ROC space, so each is sampled at ``points_per_segment`` points evenly spaced in ROC
    space (randomising between its end vertices realises each of them). The curve starts at
    ``(broc_origin_limit, 0)``: the image of the origin, approached along the first segment.

    Args:
        c: ROC counts.
        prevalence: p, scalar or 1-d array; None = the test set's.
        points_per_segment: samples per hull segment (>= 1).

    Returns:
        ``(bayes_false_alarm, detection_rate)``: detection rate ``(L,)``; Bayesian false-alarm
        rate ``(L,)`` for scalar p, ``(M, L)`` for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    n = check_size(points_per_segment, "points_per_segment", maximum=MAX_POINTS_PER_SEGMENT)
    h = convex_hull(c)
    frac = np.arange(1, n + 1) / n
    xs = (h.fpr[:-1, None] + np.diff(h.fpr)[:, None] * frac).reshape(-1)
    ys = (h.tpr[:-1, None] + np.diff(h.tpr)[:, None] * frac).reshape(-1)
    r = _rows(eta)
    start = np.atleast_1d(broc_origin_limit(c, eta)).reshape(-1, 1)
    # A point with P_D = 0 and P_FA > 0 raises only false alarms: B_FA = 1.
    ppv = np.where((ys == 0) & (xs > 0), 0.0, _ppv(ys, xs, r))
    bfa = np.concatenate((start, 1.0 - ppv), axis=1)
    detection = np.concatenate(([0.0], ys))
    return _finish(bfa, eta), detection


def p3_curve(tpr: Any, fpr: Any, prevalences: Any) -> Any:
    """Positive-prevalence precision (P³) curve (Brabec et al. §3.1): precision against η.

    Eq. (8) for one operating point (scalar ``tpr``, ``fpr``) over ``prevalences``, or for
    ``K`` operating points (1-d arrays) giving shape ``(M, K)``. 0/0 -> 0 as in
    :func:`precision`. Plot it with a log-scaled η axis.

    Returns:
        Precision, shape ``(M,)`` (or ``(M, K)``; a float for scalar inputs).
    """
    arrays = []
    for name, value in (("tpr", tpr), ("fpr", fpr)):
        try:
            arrays.append(np.asarray(value, dtype=np.float64))
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be a number or a 1-d array of numbers in [0, 1], got {value!r}"
            ) from None
    t, f = arrays
    for name, arr in (("tpr", t), ("fpr", f)):
        bad = ~((arr >= 0) & (arr <= 1))
        if np.any(bad):
            raise ValueError(f"{name} must lie in [0, 1], got {float(arr[bad].flat[0])!r}")
        if arr.ndim > 1:
            raise ValueError(f"{name} must be a scalar or 1-d array, got shape {arr.shape}")
    eta = _prevalences(None, prevalences, "prevalences")
    t, f = np.broadcast_arrays(t, f)
    if t.ndim == 0:
        out = _ppv(t, f, eta)
        return float(out) if out.ndim == 0 else out
    out = _ppv(t, f, _rows(eta))
    return out[0] if eta.ndim == 0 else out


def default_prevalence_grid(num: int = 200, low: float = 1e-6, high: float = 0.5) -> np.ndarray:
    """Log-spaced prevalence grid from ``low`` to ``high`` (inclusive), ``num`` points.

    ``num`` is at most :data:`~mlflow_imbalance.core.validation.MAX_GRID_POINTS`.
    """
    n = check_size(num, "num", minimum=1, maximum=MAX_GRID_POINTS)
    lo = float(check_prevalence(low, "low", scalar=True))
    hi = float(check_prevalence(high, "high", scalar=True))
    if lo > hi:
        raise ValueError(f"low must not exceed high, got low={lo!r} and high={hi!r}")
    return np.geomspace(lo, hi, n)


def prevalence_sweep(c: RocCounts, prevalences: Any = None) -> dict[str, np.ndarray]:
    """AP, PR-AUC and max-F1 (with its threshold) over a grid of prevalences, vectorised.

    Args:
        c: ROC counts.
        prevalences: 1-d η grid; None = :func:`default_prevalence_grid`.

    Returns:
        ``{"prevalence", "ap", "pr_auc", "max_f1", "max_f1_threshold"}``, each ``(M,)``.
    """
    c = _check_counts(c)
    eta = default_prevalence_grid() if prevalences is None else prevalences
    eta = np.atleast_1d(_prevalences(c, eta, "prevalences"))
    best, thr = max_f1_point(c, eta)
    return {
        "prevalence": eta,
        "ap": average_precision(c, eta),
        "pr_auc": pr_auc(c, eta),
        "max_f1": best,
        "max_f1_threshold": thr,
    }
