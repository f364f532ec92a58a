"""Point and curve metrics of ROC counts at any class prevalence η (numpy only).

Every function here is an exact function of a :class:`~mlflow_imbalance.core.counts.RocCounts` and,
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

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import (
    MAX_POINTS_PER_SEGMENT,
    check_max_fpr,
    check_prevalence,
    check_size,
)

logger = logging.getLogger(__name__)

__all__ = [
    "OperatingPoint",
    "average_precision",
    "f1",
    "fnr",
    "fpr",
    "max_f1",
    "max_f1_point",
    "npv",
    "partial_auc",
    "pr_auc",
    "pr_curve",
    "precision",
    "roc_auc",
    "roc_curve",
    "tpr",
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
    n = check_size(points_per_segment, "points_per_segment", maximum=MAX_POINTS_PER_SEGMENT)
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
