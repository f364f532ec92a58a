"""Point and curve metrics of ROC counts at any class prevalence η (numpy only).

Every function here is an exact function of a :class:`~mlflow_imbalance.counts.RocCounts` and,
where the metric depends on it, a positive-class prevalence ``η``. ``prevalence=None`` means the
test set's own, ``n_pos / (n_pos + n_neg)``. A scalar ``η`` gives per-threshold arrays of shape
``(K,)`` (``K`` stored thresholds) and scalar summaries; a 1-d array of ``M`` prevalences gives
``(M, K)`` arrays and ``(M,)`` summaries (the leading axis is the prevalence).

The core identity is Brabec et al. (2020), eq. (8): with TPR and FPR measured on any test set,

    Prec(η) = TPR·η / (TPR·η + FPR·(1 − η)),

which is also Cárdenas & Baras' PPV (their eq. 1, ``p = η``, ``P_D = TPR``, ``P_FA = FPR``).

Conventions used throughout:

* The ROC origin (threshold ``+inf``, nothing predicted positive) is implicit and not stored;
  curve functions prepend it where a curve needs it (:func:`roc_curve`, :func:`convex_hull`).
* Precision where nothing is predicted positive (``TP = FP = 0``) is 0/0; it is defined as
  ``0.0``, the value scikit-learn's ``zero_division`` convention (default ``"warn"``) returns.
  Counts built from data store such a point only when examples of zero weight score above all
  others; at those points recall is 0, so they add nothing to AP or PR-AUC.
* Bad input raises :class:`ValueError` naming the argument and the offending value.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import numpy as np

from mlflow_imbalance._validation import check_cost, check_max_fpr, check_prevalence, plain
from mlflow_imbalance.counts import RocCounts

logger = logging.getLogger(__name__)

__all__ = [
    "CostCurve",
    "Dominance",
    "Hull",
    "OperatingPoint",
    "average_precision",
    "broc_curve",
    "broc_origin_limit",
    "convex_hull",
    "cost_curve",
    "default_prevalence_grid",
    "dominance",
    "expected_cost",
    "f1",
    "fnr",
    "fpr",
    "iso_performance_slope",
    "max_f1",
    "max_f1_point",
    "normalized_expected_cost",
    "npv",
    "optimal_operating_point",
    "p3_curve",
    "partial_auc",
    "pr_auc",
    "pr_curve",
    "precision",
    "prevalence_from_probability_cost",
    "prevalence_sweep",
    "probability_cost",
    "roc_auc",
    "roc_curve",
    "slope_range",
    "tpr",
    "tpr_at_fpr",
]

# Elements per (prevalence × threshold) block in reductions over many prevalences.
_CHUNK_ELEMENTS = 1 << 20


class OperatingPoint(NamedTuple):
    """One operating point of a classifier.

    Attributes:
        threshold: score threshold (predict positive when ``score >= threshold``); ``+inf`` for
            the origin (never positive), ``-inf`` for "always positive".
        tpr: true positive rate at the point.
        fpr: false positive rate at the point.
        cost: expected cost at the point (:func:`optimal_operating_point`), else NaN.
        threshold_alt: for a point *between* two hull vertices, the threshold of the second
            vertex (NaN when the point is a vertex).
        p_alt: probability of using ``threshold_alt`` instead of ``threshold`` for each example
            (randomising between the two vertices realises the interpolated point; Maxion &
            Roberts §5.2, Cárdenas & Baras on Neyman–Pearson randomisation); 0 at a vertex.
    """

    threshold: Any
    tpr: Any
    fpr: Any
    cost: Any = float("nan")
    threshold_alt: Any = float("nan")
    p_alt: Any = 0.0


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


# ---------------------------------------------------------------------------- validation helpers
def _check_counts(c: Any, name: str = "c") -> RocCounts:
    if not isinstance(c, RocCounts):
        raise TypeError(f"{name} must be a RocCounts, got {type(c).__name__}")
    return c


def _prevalences(c: RocCounts | None, prevalence: Any, name: str = "prevalence") -> np.ndarray:
    """Validated prevalences as a 0-d or 1-d float64 array (None -> the test prevalence)."""
    if prevalence is None:
        if c is None:
            raise ValueError(f"{name} is required, got None")
        return np.asarray(c.prevalence, dtype=np.float64)
    eta = check_prevalence(prevalence, name)
    if eta.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-d array, got shape {eta.shape}")
    return eta


def _rows(eta: np.ndarray) -> np.ndarray:
    """Prevalences as a column (M, 1) for broadcasting against (K,) threshold arrays."""
    return eta.reshape(-1, 1)


def _finish(out: np.ndarray, eta: np.ndarray) -> Any:
    """Drop the prevalence axis again for scalar η (and turn 0-d results into floats)."""
    if eta.ndim == 0:
        out = out[0]
        return float(out) if np.ndim(out) == 0 else out
    return out


def _chunks(m: int, k: int) -> list[slice]:
    step = max(1, _CHUNK_ELEMENTS // max(k, 1))
    return [slice(i, min(i + step, m)) for i in range(0, m, step)]


def _ppv(t: np.ndarray, f: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Brabec eq. (8) with broadcasting; 0/0 (nothing predicted positive) -> 0."""
    num = t * eta
    den = num + f * (1.0 - eta)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


# ---------------------------------------------------------------------------- point metrics
def tpr(c: RocCounts) -> np.ndarray:
    """True positive rate (recall, P_D) at each stored threshold; prevalence-free."""
    return _check_counts(c).tpr


def fpr(c: RocCounts) -> np.ndarray:
    """False positive rate (P_FA) at each stored threshold; prevalence-free."""
    return _check_counts(c).fpr


def fnr(c: RocCounts) -> np.ndarray:
    """False negative rate ``1 − TPR`` at each stored threshold."""
    return 1.0 - _check_counts(c).tpr


def precision(c: RocCounts, prevalence: Any = None) -> Any:
    """Precision (PPV) at each stored threshold at prevalence η.

    ``Prec(η) = TPR·η / (TPR·η + FPR·(1 − η))`` (Brabec et al. eq. 8; Cárdenas & Baras eq. 1).
    Where nothing is predicted positive (``TP = FP = 0``) the value is 0.0, scikit-learn's
    ``zero_division`` convention.

    Args:
        c: ROC counts.
        prevalence: η in (0, 1), scalar or 1-d array; None = the test set's prevalence.

    Returns:
        Array ``(K,)`` for scalar η, ``(M, K)`` for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    return _finish(_ppv(c.tpr, c.fpr, _rows(eta)), eta)


def npv(c: RocCounts, prevalence: Any = None) -> Any:
    """Negative predictive value at each stored threshold at prevalence η.

    ``NPV = (1 − η)(1 − FPR) / (η(1 − TPR) + (1 − η)(1 − FPR))`` (Cárdenas & Baras eq. 2).
    Where nothing is predicted negative (``TPR = FPR = 1``) the value is 0.0 (same convention as
    :func:`precision`).

    Returns:
        Array ``(K,)`` for scalar η, ``(M, K)`` for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    r = _rows(eta)
    num = (1.0 - r) * (1.0 - c.fpr)
    den = num + r * (1.0 - c.tpr)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return _finish(out, eta)


def _f1(t: np.ndarray, f: np.ndarray, eta: np.ndarray) -> np.ndarray:
    # F1 = 2·TP'/(2·TP' + FP' + FN') with TP' = η·TPR, FP' = (1−η)·FPR, FN' = η·(1−TPR);
    # the denominator simplifies to η·TPR + (1−η)·FPR + η > 0, so F1 is always defined.
    return 2.0 * eta * t / (eta * t + (1.0 - eta) * f + eta)


def f1(c: RocCounts, prevalence: Any = None) -> Any:
    """F1 score at each stored threshold at prevalence η.

    The harmonic mean of :func:`precision` at η and recall (TPR), computed as
    ``2·η·TPR / (η·TPR + (1 − η)·FPR + η)``, which is defined everywhere (0 where TPR = 0).

    Returns:
        Array ``(K,)`` for scalar η, ``(M, K)`` for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    return _finish(_f1(c.tpr, c.fpr, _rows(eta)), eta)


def max_f1_point(c: RocCounts, prevalence: Any = None) -> tuple[Any, Any]:
    """Largest F1 over the stored thresholds at η, and the threshold that attains it.

    The origin (F1 = 0) never wins. On ties the highest threshold is returned.

    Returns:
        ``(value, threshold)``: floats for scalar η, arrays ``(M,)`` for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    rows = _rows(eta)
    t, f = c.tpr, c.fpr
    vals = np.empty(rows.shape[0])
    idx = np.empty(rows.shape[0], dtype=np.intp)
    for sl in _chunks(rows.shape[0], t.size):
        block = _f1(t, f, rows[sl])
        idx[sl] = np.argmax(block, axis=1)
        vals[sl] = np.take_along_axis(block, idx[sl, None], axis=1)[:, 0]
    thr = c.thresholds[idx]
    if eta.ndim == 0:
        return float(vals[0]), float(thr[0])
    return vals, thr


def max_f1(c: RocCounts, prevalence: Any = None) -> Any:
    """Largest F1 over the stored thresholds at η (float, or ``(M,)`` array)."""
    return max_f1_point(c, prevalence)[0]


# ---------------------------------------------------------------------------- PR summaries
def average_precision(c: RocCounts, prevalence: Any = None) -> Any:
    """Average precision at prevalence η: ``Σ_k (R_k − R_{k−1}) · P_k(η)``.

    The sum runs over the stored thresholds in descending order with ``R_0 = 0``; ``P_k(η)`` is
    :func:`precision` at the k-th threshold (a step function: no interpolation). It equals
    ``sklearn.metrics.average_precision_score`` on the raw data when every positive weighs
    ``η/(1−η) · N/P`` (negatives weigh 1), because that weighting turns the empirical precision
    into Brabec eq. (8). Lossless compression keeps every threshold where recall grows, so the
    value is the same before and after compression.

    Returns:
        Float for scalar η, ``(M,)`` array for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    rows = _rows(eta)
    d_recall = np.diff(c.tpr, prepend=0.0)
    grows = d_recall > 0  # only thresholds where positives score contribute (and TP > 0)
    t, f, d_recall = c.tpr[grows], c.fpr[grows], d_recall[grows]
    out = np.empty(rows.shape[0])
    for sl in _chunks(rows.shape[0], t.size):
        num = t * rows[sl]
        out[sl] = (num / (num + f * (1.0 - rows[sl]))) @ d_recall
    return _finish(out, eta)


def _u_minus_log1p(u: np.ndarray, log1p_u: np.ndarray) -> np.ndarray:
    """``u − log(1 + u)`` for ``u ≥ 0``, accurate also for small ``u`` (series below 0.01)."""
    small = u < 0.01
    out = u - log1p_u  # relative error <= ~2e-14 for u >= 0.01
    if small.any():
        us = u[small]
        # Σ_{k=2}^{9} (−1)^k u^k / k, Horner form; truncation error < u^10/10, relative to
        # the leading u²/2 below 2e-17 for u < 0.01.
        series = np.zeros_like(us)
        for k in range(9, 1, -1):
            series += (-1.0) ** k / k
            series *= us
        series *= us
        out[small] = series
    return out


def _pr_auc_rows(
    x0: np.ndarray, y0: np.ndarray, dx: np.ndarray, dy: np.ndarray, eta: np.ndarray
) -> np.ndarray:
    """Davis–Goadrich area of rising segments not starting at the origin, for ``eta`` (m, 1)."""
    # Along a segment, FPR = x0 + s·(r − y0) with s = dx/dy, so precision is
    # η·r / (a·r + b) with a = η + (1−η)·s. With d0 = η·y0 + (1−η)·x0 (η × the precision
    # denominator at the segment start, > 0 off the origin) and u = a·dy/d0, the integral of
    # precision over recall in [y0, y1] is η·[(d0/a²)·(u − log1p u) + (y0/a)·log1p u]: two
    # non-negative terms, so no cancellation even when precision is tiny.
    s = dx / dy
    one_minus = 1.0 - eta
    a = eta + one_minus * s
    d0 = eta * y0 + one_minus * x0
    u = a * dy / d0
    log1p_u = np.log1p(u)
    area = d0 / (a * a)
    area *= _u_minus_log1p(u, log1p_u)
    area += (y0 / a) * log1p_u
    return eta[:, 0] * area.sum(axis=1)


def pr_auc(c: RocCounts, prevalence: Any = None) -> Any:
    """Area under the PR curve at prevalence η, interpolated as Davis & Goadrich (2006).

    Between consecutive ROC points (including the origin) the curve is interpolated linearly
    in ROC space (TP and FP grow in proportion), never linearly in PR space: along such a
    segment precision is ``r / (A·r + B)`` in recall ``r``, and its exact integral
    ``r/A − (B/A²)·ln(A·r + B)`` is used (in a cancellation-free rearrangement). Horizontal
    ROC segments (only negatives) add no area; vertical ones are handled by the same formula.

    The first segment, from the origin to the first stored point, has TP and FP proportional
    all along, so its precision is constant and equal to the first point's: it contributes
    ``R_1 · P_1(η)``. This is what Davis & Goadrich's interpolation gives and what
    scikit-learn's AP does on that stretch, rather than the arbitrary precision 1 at recall 0.

    Returns:
        Float for scalar η, ``(M,)`` array for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    rows = _rows(eta)
    x = np.concatenate(([0.0], c.fpr))
    y = np.concatenate(([0.0], c.tpr))
    dx, dy = np.diff(x), np.diff(y)
    x0, y0 = x[:-1], y[:-1]
    rising = dy > 0  # segments of negatives only add no area
    # From a point with TP = FP = 0 (the origin), TP and FP grow in proportion along the
    # segment, so the precision is constant there and equals the precision at its end.
    start0 = rising & (x0 == 0) & (y0 == 0)
    general = rising & ~start0
    x0g, y0g, dxg, dyg = x0[general], y0[general], dx[general], dy[general]
    out = _ppv(y[1:][start0], x[1:][start0], rows) @ dy[start0]
    for sl in _chunks(rows.shape[0], x0g.size):
        out[sl] += _pr_auc_rows(x0g, y0g, dxg, dyg, rows[sl])
    return _finish(out, eta)


def pr_curve(
    c: RocCounts,
    prevalence: Any = None,
    interpolate: bool = True,
    points_per_segment: int = 20,
) -> tuple[np.ndarray, Any]:
    """Precision–recall curve at prevalence η, for plotting.

    Args:
        c: ROC counts.
        prevalence: η, scalar or 1-d array; None = the test set's.
        interpolate: when True, the curve starts at recall 0 with the first point's precision
            (constant along the first ROC segment, see :func:`pr_auc`) and each ROC segment is
            sampled at ``points_per_segment`` points spaced evenly in ROC space (the
            Davis–Goadrich interpolation; segments of negatives only give vertical drops).
            When False, only the stored points ``(TPR_k, P_k(η))``.
        points_per_segment: samples per ROC segment when interpolating (>= 1; 1 = the stored
            points plus the start point).

    Returns:
        ``(recall, precision)``: recall ``(L,)``; precision ``(L,)`` for scalar η, ``(M, L)``
        for ``M`` prevalences.
    """
    c = _check_counts(c)
    eta = _prevalences(c, prevalence)
    rows = _rows(eta)
    if not interpolate:
        return c.tpr.copy(), _finish(_ppv(c.tpr, c.fpr, rows), eta)
    n = int(points_per_segment)
    if n != points_per_segment or n < 1:
        raise ValueError(
            f"points_per_segment must be an integer >= 1, got {plain(points_per_segment)!r}"
        )
    x = np.concatenate(([0.0], c.fpr))
    y = np.concatenate(([0.0], c.tpr))
    frac = np.arange(1, n + 1) / n  # the segment end included, its start excluded
    xs = (x[:-1, None] + (x[1:] - x[:-1])[:, None] * frac).reshape(-1)
    ys = (y[:-1, None] + (y[1:] - y[:-1])[:, None] * frac).reshape(-1)
    prec = _ppv(ys, xs, rows)
    recall = np.concatenate(([0.0], ys))
    prec = np.concatenate((_ppv(y[1:2], x[1:2], rows), prec), axis=1)
    return recall, _finish(prec, eta)


# ---------------------------------------------------------------------------- ROC
def roc_curve(c: RocCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC points with the origin prepended.

    Returns:
        ``(fpr, tpr, thresholds)``, thresholds descending with ``+inf`` first (as
        ``sklearn.metrics.roc_curve(..., drop_intermediate=False)`` on uncompressed counts).
    """
    c = _check_counts(c)
    return (
        np.concatenate(([0.0], c.fpr)),
        np.concatenate(([0.0], c.tpr)),
        np.concatenate(([np.inf], c.thresholds)),
    )


def _trapezoid(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1])) * 0.5)


def roc_auc(c: RocCounts) -> float:
    """Area under the empirical ROC curve (trapezoid rule, origin included).

    Tied scores form one threshold whose ROC segment is diagonal, so the trapezoid counts each
    tied positive–negative pair as 1/2: the value equals ``sklearn.metrics.roc_auc_score``.
    """
    f, t, _ = roc_curve(c)
    return _trapezoid(f, t)


def partial_auc(c: RocCounts, max_fpr: float, standardized: bool = False) -> float:
    """Area under the ROC curve for FPR in ``[0, max_fpr]`` (piecewise linear, exact).

    Args:
        c: ROC counts.
        max_fpr: upper FPR limit in (0, 1].
        standardized: apply the McClish (1989) correction
            ``½·(1 + (A − A_min)/(A_max − A_min))`` with ``A_min = max_fpr²/2`` and
            ``A_max = max_fpr``, exactly as ``sklearn.metrics.roc_auc_score(max_fpr=...)``
            (0.5 for a random classifier, 1 for a perfect one). With ``max_fpr = 1`` both forms
            equal :func:`roc_auc`.

    Returns:
        The (raw or standardized) partial area.
    """
    m = check_max_fpr(max_fpr)
    f, t, _ = roc_curve(c)
    f0, f1_, t0, t1 = f[:-1], f[1:], t[:-1], t[1:]
    active = f0 < m
    right = np.minimum(f1_, m)
    width = f1_ - f0
    with np.errstate(invalid="ignore", divide="ignore"):
        t_right = np.where(
            width > 0, t0 + (t1 - t0) * (right - f0) / np.where(width > 0, width, 1), t1
        )
    area = float(np.sum(np.where(active, (right - f0) * (t0 + t_right) * 0.5, 0.0)))
    if not standardized or m == 1.0:
        return area
    min_area = 0.5 * m * m
    return 0.5 * (1.0 + (area - min_area) / (m - min_area))


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
    keep = _upper_hull_indices(fp, tp)
    return Hull(fp[keep] / c.n_neg, tp[keep] / c.n_pos, thr[keep])


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
    c: RocCounts, prevalence: Any = None, cost_fp: float = 1.0, cost_fn: float = 1.0
) -> OperatingPoint:
    """Minimum-expected-cost operating point on the ROC convex hull.

    Expected cost is linear in (FPR, TPR), so its minimum over the hull is at a vertex: the
    one where an iso-performance line of slope :func:`iso_performance_slope` touches the hull
    (Maxion & Roberts §4, §5.2). The trivial classifiers (origin: "always negative"; (1, 1):
    "always positive") are vertices too, and win when the slope is steeper or flatter than the
    whole hull. On ties the vertex of lower FPR is returned.

    Returns:
        :class:`OperatingPoint` with ``cost`` = the expected cost per example; fields are
        floats for scalar η and ``(M,)`` arrays for ``M`` prevalences.
    """
    c = _check_counts(c)
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    eta = _prevalences(c, prevalence)
    h = convex_hull(c)
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
        num: grid size when ``prevalences`` is None (PC evenly spaced on [0, 1]).
        prevalences: optional η grid; the x axis is then ``probability_cost(prevalences, ...)``.

    Returns:
        :class:`CostCurve` ``(pc, costs, envelope)``.
    """
    c = _check_counts(c)
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    if prevalences is None:
        if int(num) != num or num < 2:
            raise ValueError(f"num must be an integer >= 2, got {plain(num)!r}")
        pc = np.linspace(0.0, 1.0, int(num))
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
    n = int(points_per_segment)
    if n != points_per_segment or n < 1:
        raise ValueError(
            f"points_per_segment must be an integer >= 1, got {plain(points_per_segment)!r}"
        )
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
    t = np.asarray(tpr, dtype=np.float64)
    f = np.asarray(fpr, dtype=np.float64)
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
    """Log-spaced prevalence grid from ``low`` to ``high`` (inclusive), ``num`` points."""
    if int(num) != num or num < 1:
        raise ValueError(f"num must be an integer >= 1, got {plain(num)!r}")
    lo = float(check_prevalence(low, "low"))
    hi = float(check_prevalence(high, "high"))
    if lo > hi:
        raise ValueError(f"low must not exceed high, got low={lo!r} and high={hi!r}")
    return np.geomspace(lo, hi, int(num))


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
