"""Batched metric kernels: AP, PR-AUC, max-F1 and F1 at many η for many rows of counts.

Each kernel takes cumulative counts ``tp``, ``fp`` of shape ``(b, K)`` (the counts themselves,
or ``b`` count-bootstrap replicates) and returns ``(b, M)`` values at ``M`` prevalences. AP and
PR-AUC have exact sums and linear-deposit kernels (one matrix product for every η) with a stated
error bound. :func:`metric_values` evaluates the same kernels on one set of counts, so a band
is centred on exactly the estimate its replicates were computed with.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_prevalence
from mlflow_imbalance.stats._checks import _plain, _prevalence_grid

logger = logging.getLogger(__name__)

__all__ = [
    "BAND_METRICS",
    "PR_AUC_PANEL_MAX_U",
    "metric_values",
]

BAND_METRICS = ("ap", "pr_auc", "max_f1", "f1")
#: ``b * K`` up to which max-F1 is taken over the ``(b, M, K)`` cube, above it by the envelope.
_MAX_F1_CUBE_WORK = 50_000

# Largest |g''| of the logistic g(x) = 1 / (1 + e^x): 1 / (6 sqrt 3).
_LOGISTIC_MAX_CURVATURE = 1.0 / (6.0 * math.sqrt(3.0))


def _check_metric_args(metric: Any, prevalences: Any, threshold: Any) -> np.ndarray:
    """The checks shared by :func:`prevalence_band` and :func:`metric_statistic`.

    A known metric, a valid prevalence grid (returned), and a threshold for ``"f1"``.
    """
    if metric not in BAND_METRICS:
        raise ValueError(f"metric must be one of {BAND_METRICS}, got {metric!r}")
    eta = _prevalence_grid(prevalences)
    if metric == "f1" and threshold is None:
        raise ValueError("metric 'f1' needs threshold=")
    return eta


def _odds(eta: np.ndarray) -> np.ndarray:
    return eta / (1.0 - eta)


def _positive_columns(counts: RocCounts) -> np.ndarray:
    dpos, _ = counts.per_threshold()
    return np.flatnonzero(dpos > 0)


def _ap_batch(
    tp: np.ndarray,
    fp: np.ndarray,
    n_pos: float,
    n_neg: float,
    eta: np.ndarray,
    cols: np.ndarray,
    grid_step: float | None = None,
) -> np.ndarray:
    """Average precision at each eta for each row: ``sum_k dR_k * Prec_k(eta)``, shape (b, M).

    The scikit-learn step definition (no interpolation), with precision re-weighted to eta.
    Only thresholds where positives score matter (``dR_k = 0`` elsewhere), so ``cols`` are the
    original positive columns. ``Prec_k = 1 / (1 + r_k / o)`` with ``r_k = FPR_k / TPR_k``.

    ``grid_step=None`` sums exactly (O(b*M*K)). A positive ``grid_step`` h deposits each weight
    ``dR_k`` linearly onto a grid in ``log r`` of spacing h (cloud-in-cell) and sums the kernel
    on the grid with one matrix product (O(b*K + b*G*M)); that equals summing the piecewise-linear
    interpolant of ``x -> 1/(1 + e^x / o)`` at ``log r_k``, whose error is at most
    ``h^2 / 8 * max|g''| = h^2 / (48 sqrt 3)`` per unit weight: total AP error
    <= 0.0121 h^2 (1.2e-6 at h = 0.01).
    """
    w, r = _ap_terms(tp[:, cols] / n_pos, fp[:, cols] / n_neg)
    if grid_step is None:
        return _ap_exact(w, r, eta)
    b = w.shape[0]
    inv_o = 1.0 / _odds(eta)
    zero = (r <= 0) & (w > 0)
    ones = np.where(zero, w, 0.0).sum(axis=1)
    use = (r > 0) & (w > 0)
    x = np.log(r[use])
    ww = w[use]
    rows = np.nonzero(use)[0]
    if x.size == 0:
        return np.repeat(ones[:, None], eta.size, axis=1)
    return _deposit(x, ww, rows, b, inv_o, grid_step) + ones[:, None]


def _ap_terms(t: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AP's weights ``dR_k`` and ratios ``r_k = FPR_k / TPR_k`` (0 where ``dR_k = 0``)."""
    w = np.diff(t, axis=1, prepend=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(w > 0, f / t, 0.0)
    return w, r


def _ap_exact(w: np.ndarray, r: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """The exact AP sum ``sum_k w_k / (1 + r_k / o)`` per row and eta, shape (b, M)."""
    inv_o = 1.0 / _odds(eta)
    out = np.empty((w.shape[0], eta.size))
    for i in range(w.shape[0]):
        x = np.multiply.outer(inv_o, r[i])
        x += 1.0
        np.reciprocal(x, out=x)
        out[i] = x @ w[i]
    return out


def _log1p_ratio(u: np.ndarray) -> np.ndarray:
    """``log(1 + u) / u`` with its limits: 1 at u -> 0 and 0 at u = inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log1p(u)
        val /= u
        small = np.abs(u) < 1e-8
        if small.any():
            val[small] = 1.0 - u[small] / 2
        val[np.isinf(u)] = 0.0
        return val


def _pr_auc_batch(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, eta: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Area under the interpolated PR curve at each eta, shape (b, M).

    Between two ROC points the achievable curve is the straight ROC segment (Davis & Goadrich
    2006); along it precision is ``o T(s) / (o T(s) + F(s))`` and its integral over recall has the
    closed form ``dT * (q + (p0 - q) * log(1 + u) / u)`` with ``p0`` the precision at the segment
    start, ``q = o dT / (o dT + dF)`` and ``u = (o dT + dF) / (o T0 + F0)``. From the origin
    precision is constant (``q``).
    """
    return _pr_auc_exact_segments(*_pr_auc_segments(tp, fp, n_pos, n_neg, cols), eta)


def _pr_auc_segments(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, cols: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(T0, F0, dT, dF)`` of the ROC segment ending at each positive column, shape (b, k)."""
    prev = np.maximum(cols - 1, 0)
    t1, f1 = tp[:, cols] / n_pos, fp[:, cols] / n_neg
    t0, f0 = tp[:, prev] / n_pos, fp[:, prev] / n_neg
    if cols.size and cols[0] == 0:  # the first threshold's segment starts at the origin
        t0[:, 0] = f0[:, 0] = 0.0
    return t0, f0, t1 - t0, f1 - f0


#: Largest o-free bound ``v = max(dT/T0, dF/F0)`` on ``u`` per quadrature panel in
#: :func:`_pr_auc_deposit` (2-point Gauss-Legendre: error <= v^4/180 per unit dT); longer
#: segments are split into ``n`` equal panels (``v / n`` per panel).
PR_AUC_PANEL_MAX_U = 0.1
#: Most panels per segment; segments that would need more (or with unbounded ``v``) are summed
#: exactly.
PR_AUC_MAX_PANELS = 8
#: The 2-point Gauss-Legendre nodes on [0, 1] (weights 1/2 each).
_GL2_NODES = (0.5 - 0.5 / math.sqrt(3.0), 0.5 + 0.5 / math.sqrt(3.0))


def _pr_auc_exact_segments(
    t0: np.ndarray, f0: np.ndarray, dt: np.ndarray, df: np.ndarray, eta: np.ndarray
) -> np.ndarray:
    """Exact PR-AUC contribution of ROC segments ``(b, k)`` at each eta, shape ``(b, M)``."""
    o = _odds(eta)[None, :, None]
    # each product o*T0, o*dT formed once, in place where a temporary is free: the same
    # operations, value for value, as the plain expressions
    ot0 = o * t0[:, None, :]
    odt = o * dt[:, None, :]
    a0 = ot0 + f0[:, None, :]
    da = odt + df[:, None, :]
    pos0 = a0 > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.divide(odt, da, out=odt)
        q[~(da > 0)] = 0.0
        p0 = np.divide(ot0, a0, out=ot0)
        p0[~pos0] = 0.0
        u = np.divide(da, a0, out=da)
        u[~pos0] = np.inf
    p0 -= q
    p0 *= _log1p_ratio(u)
    p0 += q
    return np.einsum("bmk,bk->bm", p0, dt)


#: Rows whose deposit grid :func:`_deposit` fills at a time: about 2 MB of grid per block
#: instead of two ``b x G`` grids (18 MB each at b = 1000, G = 2250), so the blocks' memory is
#: reused rather than freshly mapped at every call (page faults were most of the kernel's CPU).
_DEPOSIT_BLOCK = 1 << 18


def _deposit(
    x: np.ndarray | list[np.ndarray],
    w: np.ndarray | list[np.ndarray],
    rows: np.ndarray | list[np.ndarray],
    b: int,
    inv_o: np.ndarray,
    step: float,
) -> np.ndarray:
    """``sum_j w_j / (1 + e^{x_j} / o)`` per row, by linear deposit on a grid of step ``step``.

    Equals summing the piecewise-linear interpolant (nodes ``step`` apart) of the logistic
    kernel at each ``x_j``: error <= ``step^2 / (48 sqrt 3)`` per unit weight (positive ``w``).
    The masses may come in parts (lists of arrays, each part's ``rows`` non-decreasing): they
    are deposited in the order of their concatenation. The grid is filled a block of rows at a
    time, each block's entries in that order, so every node sums the same weights in the same
    order as one pass over the whole: the same grid, value for value, then one matrix product.
    """
    xs, ws, rs = ([a] if isinstance(a, np.ndarray) else list(a) for a in (x, w, rows))
    parts = [i for i, a in enumerate(xs) if a.size]
    if not parts:
        return np.zeros((b, inv_o.size))
    x0 = min(float(xs[i].min()) for i in parts)
    g = math.floor((max(float(xs[i].max()) for i in parts) - x0) / step) + 2
    hist = np.empty(b * g)
    block = max(1, _DEPOSIT_BLOCK // g)
    for r0 in range(0, b, block):
        r1 = min(b, r0 + block)
        cut = [(i, *np.searchsorted(rs[i], [r0, r1])) for i in parts]
        xb = np.concatenate([xs[i][lo:hi] for i, lo, hi in cut])
        wb = np.concatenate([ws[i][lo:hi] for i, lo, hi in cut])
        rb = np.concatenate([rs[i][lo:hi] for i, lo, hi in cut])
        # position on the grid with the row's offset folded in (integers < 2^53 stay exact);
        # the largest x lands at most at node g - 2 + frac, so the right neighbour stays in its
        # row (or carries zero weight at the very end, cut off below). The same operations as
        # pos = (x - x0) / step + rows g, i0 = floor(pos), lam = (pos - i0) w, in two buffers.
        pos = xb - x0
        pos *= 1.0 / step
        i0 = np.multiply(rb, float(g))
        pos += i0
        np.floor(pos, out=i0)
        lam = np.subtract(pos, i0, out=pos)
        lam *= wb
        idx = i0.astype(np.int64)
        idx -= r0 * g  # the block's own nodes (an integer shift: the same bins)
        n = (r1 - r0) * g
        part = np.bincount(idx, weights=np.subtract(wb, lam, out=i0), minlength=n + 1)
        idx += 1
        part += np.bincount(idx, weights=lam, minlength=n + 1)
        hist[r0 * g : r1 * g] = part[:n]
    nodes = np.exp(x0 + step * np.arange(g))
    kern = 1.0 / (1.0 + np.multiply.outer(nodes, inv_o))  # (G, M)
    return hist.reshape(b, g) @ kern


def _pr_auc_deposit(
    tp: np.ndarray,
    fp: np.ndarray,
    n_pos: float,
    n_neg: float,
    eta: np.ndarray,
    cols: np.ndarray,
    grid_step: float,
    max_u: float = PR_AUC_PANEL_MAX_U,
) -> np.ndarray:
    """PR-AUC (Davis-Goadrich) at each eta for many rows at O(b*K + b*G*M), error <= 2e-6.

    Along the straight ROC segment from ``(T0, F0)`` to ``(T0 + dT, F0 + dF)`` precision at odds
    ``o`` is ``p(s) = g(x(s) - log o)`` with ``g(y) = 1/(1 + e^y)`` and ``x(s) = log(F/T)``, so
    PR-AUC is the logistic kernel integrated against the measure ``dT`` pushed to ``x``. Each
    segment's integral is replaced by the 2-point Gauss-Legendre rule in ``s`` (masses ``dT/2``
    at ``x(1/2 -+ 1/(2 sqrt 3))``) and all masses are deposited on one grid in ``x``
    (:func:`_deposit`), so one matrix product gives every eta. Error: ``p(s) = alpha +
    beta/(1 + u s)`` with ``|beta| <= 1`` and ``0 <= u = (o dT + dF)/(o T0 + F0) <= v =
    max(dT/T0, dF/F0)`` for every ``o``, so ``|p^(4)| <= 24 v^4`` and the rule's error
    ``max|p^(4)|/4320`` is at most ``v^4/180`` per unit ``dT``. A segment with ``v > max_u`` is
    split into ``n`` equal panels (the column's power of two with ``v / n <= max_u`` in every
    row, ``n <= PR_AUC_MAX_PANELS``): on a panel the same form holds with ``u' <= v / n``, so
    the bound is unchanged. Segments with unbounded ``v`` (``T0 = 0`` after negatives, or
    leaving FPR = 0) or needing more panels are summed exactly; segments with constant
    precision (from the origin, or with ``F0 = dF = 0``) are exact point masses. Total error
    <= ``max_u^4/180 + grid_step^2/(48 sqrt 3)`` (5.6e-7 + 1.2e-6 at the defaults; see
    :func:`_pr_auc_error_bound`).
    """
    b = tp.shape[0]
    t0, f0, dt, df = _pr_auc_segments(tp, fp, n_pos, n_neg, cols)
    live = dt > 0
    f0_zero = f0 == 0
    origin = live & (t0 == 0) & f0_zero  # constant precision o dT / (o dT + dF)
    flat1 = live & f0_zero & (df == 0) & ~origin  # precision 1 all along
    general = live & ~origin & ~flat1
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.maximum(dt / t0, np.where(f0_zero, np.where(df > 0, np.inf, 0.0), df / f0))
        # panels per column: the fewest powers of two with v / n <= max_u in every row
        col_v = np.where(general, v, 0.0).max(axis=0, initial=0.0)
        panels = np.exp2(np.ceil(np.log2(np.maximum(col_v / max_u, 1.0))))
    quad = panels <= PR_AUC_MAX_PANELS
    ones = np.where(flat1 | (origin & (df == 0)), dt, 0.0).sum(axis=1)
    inv_o = 1.0 / _odds(eta)
    out = np.repeat(ones[:, None], eta.size, axis=1)
    r, c = np.nonzero(general & ~quad[None, :])  # few (row, segment) entries: exact, ragged
    if r.size:
        seg = _pr_auc_exact_segments(
            t0[r, c][:, None], f0[r, c][:, None], dt[r, c][:, None], df[r, c][:, None], eta
        )
        rows, starts = np.unique(r, return_index=True)
        out[rows] += np.add.reduceat(seg, starts, axis=0)
    xs, ws, rs = [], [], []
    r, c = np.nonzero(origin & (df > 0))
    xs.append(np.log(df[r, c] / dt[r, c]))
    ws.append(dt[r, c])
    rs.append(r)
    for n in np.unique(panels[quad]).astype(np.int64):
        in_n = quad & (panels == n)
        sel = general & in_n[None, :]
        if n == 1 and sel.all():  # the usual bulk: every entry, no gathering
            r = np.repeat(np.arange(b), cols.size)
            t0s, f0s, dts, dfs = (a.ravel() for a in (t0, f0, dt, df))
        elif sel[:, in_n].all():  # whole columns: the entries of np.nonzero(sel), in its order
            r = np.repeat(np.arange(b), int(np.count_nonzero(in_n)))
            t0s, f0s, dts, dfs = (a[:, in_n].ravel() for a in (t0, f0, dt, df))
        else:
            r, c = np.nonzero(sel)
            t0s, f0s, dts, dfs = t0[r, c], f0[r, c], dt[r, c], df[r, c]
        half = dts * (0.5 / n)
        den = np.empty_like(dts)
        for j in range(n):
            for node in _GL2_NODES:
                frac = (j + node) / n
                x = np.multiply(dfs, frac)  # log((F0 + frac dF) / (T0 + frac dT)), in place
                x += f0s
                np.multiply(dts, frac, out=den)
                den += t0s
                x /= den
                xs.append(np.log(x, out=x))
                ws.append(half)
                rs.append(r)
    return out + _deposit(xs, ws, rs, b, inv_o, grid_step)


def _pr_auc_error_bound(grid_step: float, max_u: float = PR_AUC_PANEL_MAX_U) -> float:
    """Largest absolute error of :func:`_pr_auc_deposit` (Gauss-Legendre + linear deposit)."""
    return max_u**4 / 180 + grid_step**2 * _LOGISTIC_MAX_CURVATURE / 8


def _max_f1_fast(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, eta: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Exact max-F1 as a lower envelope: ``F1max = 2o / (o + min_k (o / T_k + F_k / T_k))``.

    ``1/F1 = 1/2 + (o/T + F/T) / (2o)``, so maximising F1 is minimising a line in ``o`` per
    threshold: two passes per eta over ``(b, K)`` instead of a ``(b, M, K)`` cube.
    """
    t = tp[:, cols] / n_pos
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(t > 0, 1.0 / t, np.inf)
        r = np.where(t > 0, (fp[:, cols] / n_neg) * a, np.inf)
    o = _odds(eta)
    out = np.empty((tp.shape[0], eta.size))
    tmp = np.empty_like(a)
    for i, oi in enumerate(o):
        np.multiply(a, oi, out=tmp)
        tmp += r
        out[:, i] = tmp.min(axis=1)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(out), 2 * o / (o + out), 0.0)


def _max_f1_batch(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, eta: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Largest F1 over thresholds at each eta: ``F1 = 2 o T / (o + o T + F)``, shape (b, M).

    At each recall level the positive threshold that first reaches it has the smallest FPR, so
    the maximum is attained at a positive column.
    """
    return _max_f1_cube(tp[:, cols] / n_pos, fp[:, cols] / n_neg, eta)


def _max_f1_cube(t: np.ndarray, f: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """``max_k 2 o T_k / (o + o T_k + F_k)`` from TPR and FPR at the positive columns."""
    t3, f3 = t[:, None, :], f[:, None, :]
    o = _odds(eta)[None, :, None]
    # 2 o T / (o + o T + F) with o T formed once (2 (o T) is (2 o) T exactly: a power of 2)
    ot = o * t3
    den = ot + o
    den += f3
    ot *= 2.0
    ot /= den
    return np.max(ot, axis=2)


def _f1_batch(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, eta: np.ndarray, col: int
) -> np.ndarray:
    """F1 at one threshold column at each eta, shape (b, M)."""
    t = (tp[:, col] / n_pos)[:, None]
    f = (fp[:, col] / n_neg)[:, None]
    o = _odds(eta)[None, :]
    return 2 * o * t / (o + o * t + f)


def _metric_batch(
    metric: str,
    tp: np.ndarray,
    fp: np.ndarray,
    n_pos: float,
    n_neg: float,
    eta: np.ndarray,
    cols: np.ndarray,
    col: int | None = None,
    grid_step: float | None = None,
) -> np.ndarray:
    if metric == "ap":
        return _ap_batch(tp, fp, n_pos, n_neg, eta, cols, grid_step)
    if metric == "pr_auc" and grid_step is not None:
        return _pr_auc_deposit(tp, fp, n_pos, n_neg, eta, cols, grid_step)
    if metric == "pr_auc":
        # bound the (b, M, K) intermediate
        step = max(1, int(4_000_000 // max(1, eta.size * cols.size)))
        return np.concatenate(
            [
                _pr_auc_batch(tp[i : i + step], fp[i : i + step], n_pos, n_neg, eta, cols)
                for i in range(0, tp.shape[0], step)
            ]
        )
    if metric == "max_f1" and tp.shape[0] * cols.size > _MAX_F1_CUBE_WORK:
        return _max_f1_fast(tp, fp, n_pos, n_neg, eta, cols)
    if metric == "max_f1":
        step = max(1, int(4_000_000 // max(1, eta.size * cols.size)))
        return np.concatenate(
            [
                _max_f1_batch(tp[i : i + step], fp[i : i + step], n_pos, n_neg, eta, cols)
                for i in range(0, tp.shape[0], step)
            ]
        )
    if metric == "f1":
        if col is None:
            raise ValueError("metric 'f1' needs a threshold")
        return _f1_batch(tp, fp, n_pos, n_neg, eta, col)
    raise ValueError(f"metric must be one of {BAND_METRICS}, got {metric!r}")


def _threshold_column(c: RocCounts, threshold: float) -> int:
    """Index of the operating point 'score >= threshold' (last stored threshold >= it)."""
    j = int(np.searchsorted(-c.thresholds, -float(threshold), side="right")) - 1
    if j < 0:
        raise ValueError(
            f"threshold={_plain(threshold)!r} is above every score "
            f"(largest {_plain(c.thresholds[0])!r}): "
            "nothing is predicted positive there"
        )
    if c.compressed and c.thresholds[j] != threshold and j + 1 < c.n_thresholds:
        logger.warning(
            "counts are compressed: threshold %r is not stored; using the next stored "
            "threshold above it (%r), whose false-positive count may be lower",
            threshold,
            c.thresholds[j],
        )
    return j


def metric_function(counts: RocCounts, metric: str) -> Any:
    """:func:`metric_values` of one set of counts as a function of the prevalences, prepared once.

    What does not depend on eta (the positive columns, TPR and FPR there, AP's weights and
    ratios, PR-AUC's segments) is computed here, not at every call; each call then does the
    same arithmetic as :func:`metric_values` (the same kernels, bit for bit). For callers that
    evaluate the same counts at many single prevalences (root finding). The prevalences are not
    validated (the caller's are).
    """
    if metric not in ("ap", "pr_auc", "max_f1"):
        raise ValueError(f"metric must be 'ap', 'pr_auc' or 'max_f1', got {metric!r}")
    cols = _positive_columns(counts)
    n_pos, n_neg = counts.n_pos, counts.n_neg
    tp = np.asarray(counts.tp, dtype=float)[None, :]
    fp = np.asarray(counts.fp, dtype=float)[None, :]

    def grid(prevalences: Any) -> np.ndarray:
        return np.atleast_1d(np.asarray(prevalences, dtype=float))

    if metric == "ap":
        w, r = _ap_terms(tp[:, cols] / n_pos, fp[:, cols] / n_neg)
        return lambda prevalences: _ap_exact(w, r, grid(prevalences))[0]
    if metric == "pr_auc":
        segments = _pr_auc_segments(tp, fp, n_pos, n_neg, cols)
        return lambda prevalences: _pr_auc_exact_segments(*segments, grid(prevalences))[0]
    if cols.size <= _MAX_F1_CUBE_WORK:  # max-F1, as _metric_batch chooses for one row
        t, f = tp[:, cols] / n_pos, fp[:, cols] / n_neg
        return lambda prevalences: _max_f1_cube(t, f, grid(prevalences))[0]
    return lambda prevalences: _metric_batch(metric, tp, fp, n_pos, n_neg, grid(prevalences), cols)[
        0
    ]


def metric_values(
    counts: RocCounts,
    metric: str,
    prevalences: Any,
    *,
    threshold: float | None = None,
    grid_step: float | None = None,
) -> np.ndarray:
    """A prevalence-adjusted metric of one set of counts over ``prevalences`` (exact sums).

    The same kernels the bootstrap uses (so a band is centred on exactly this estimate):
    ``"ap"`` (step sum, scikit-learn definition), ``"pr_auc"`` (Davis-Goadrich interpolated
    area), ``"max_f1"``, ``"f1"`` (at ``threshold``).
    """
    eta = np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    cols = _positive_columns(counts)
    col = _threshold_column(counts, threshold) if threshold is not None else None
    tp = np.asarray(counts.tp, dtype=float)[None, :]
    fp = np.asarray(counts.fp, dtype=float)[None, :]
    return _metric_batch(metric, tp, fp, counts.n_pos, counts.n_neg, eta, cols, col, grid_step)[0]
