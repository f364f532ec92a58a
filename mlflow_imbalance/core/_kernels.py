"""Exact kernels that turn scores and labels into ROC count tables (numpy only).

Private to :mod:`mlflow_imbalance.core.counts`; see its module docstring for the algorithms.
"""

from __future__ import annotations

import numpy as np


def _first_of_runs(sorted_values: np.ndarray) -> np.ndarray:
    """Indices where a new value starts in a sorted array (the first of each tie run)."""
    if sorted_values.size == 0:
        return np.zeros(0, dtype=np.intp)
    flag = np.empty(sorted_values.size, dtype=bool)
    flag[0] = True
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=flag[1:])
    return np.flatnonzero(flag)


def _keep_mask(tp: np.ndarray) -> np.ndarray:
    """Points kept by lossless compression, for cumulative ``tp`` in descending-threshold order.

    A point is kept when positives score at it, when it is the last point, or when it is the
    last of a run of negatives-only thresholds (the next point has positives).
    """
    k = tp.size
    has_pos = np.empty(k, dtype=bool)
    if k:
        has_pos[0] = tp[0] > 0
        np.greater(tp[1:], tp[:-1], out=has_pos[1:])
    keep = has_pos.copy()
    if k:
        keep[:-1] |= has_pos[1:]
        keep[-1] = True
    return keep


# ---------------------------------------------------------------------------------------------
# Construction kernels.
#
# Compressed counts only need, for the m distinct positive scores up[0] < ... < up[m-1], the
# negatives in 2m+1 "slots": slot 2g holds the negatives strictly between up[g-1] and up[g]
# (a gap; up[-1] = -inf, up[m] = +inf) and slot 2g+1 the negatives tied with up[g]. From the
# negative count (or weight) of each slot and the smallest negative of each gap (its corner
# threshold) the compressed curve follows by cumulative sums. Two exact kernels compute the
# slots: a uniform-grid lookup for few positives (no sort of the negatives at all), and binary
# searches of the distinct positive scores in the sorted negatives otherwise.

#: Grid cells per distinct positive score in the lookup kernel, and the largest grid.
_GRID_CELLS_PER_POSITIVE = 16
_GRID_MAX_CELLS = 1 << 22
#: Use the lookup kernel when distinct positive scores are at most this fraction of negatives.
_GRID_MAX_POSITIVE_FRACTION = 1 / 16
#: Below this many negatives the lookup's set-up cost is not worth it.
_GRID_MIN_NEGATIVES = 1 << 12
#: Linear probing steps in a crowded grid cell before switching to binary search.
_GRID_PROBE_ROUNDS = 4
_F32_SAFE = 1e37


def _grid_slots(up: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Slot of every value of ``x``: ``2 * #(up < x) + (x in up)``, exact, without sorting ``x``.

    ``up`` is strictly ascending and finite. A monotone non-decreasing cell map ``f`` (an affine
    map of the value onto a uniform grid of about 16 cells per element of ``up``, rounded and
    clipped) sends ``x`` to a cell. Monotonicity alone makes the lookup exact whatever the
    floating-point rounding: every ``up[j]`` with ``f(up[j]) < f(x)`` is below ``x`` and every
    one with ``f(up[j]) > f(x)`` is above it. So for a cell holding no element of ``up`` a table
    gives the slot directly; values in the few cells that do hold some are resolved by probing
    ``up`` upwards from the cell's first element (and, after a few probes, by binary search).
    The cost is a handful of vectorised passes over ``x``, O(n + m), whatever the data: with
    clustered ``up`` more values reach the exact fallback, never a wrong answer.
    """
    m = up.size
    cells = 1 << max(6, int(np.ceil(np.log2(_GRID_CELLS_PER_POSITIVE * m))))
    cells = min(cells, _GRID_MAX_CELLS)
    use_f32 = abs(float(up[0])) < _F32_SAFE and abs(float(up[-1])) < _F32_SAFE
    ftype = np.float32 if use_f32 else np.float64
    lo = ftype(up[0])
    span = float(up[-1]) - float(up[0])
    scale = ftype(cells / span) if span > 0 else ftype(1.0)
    if not (0.0 < float(scale) < np.inf):
        scale = ftype(1.0)
    top = ftype(cells)

    def cell_of(v: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            t = v.astype(ftype)  # monotone rounding (may overflow to +-inf: still monotone)
            t -= lo
            t *= scale
        np.clip(t, ftype(-1.0), top, out=t)
        t += ftype(1.0)
        return t.astype(np.intp)  # in [0, cells + 1]; truncation = floor here

    # first[c] = number of up with cell < c; cells holding no element of up are "pure".
    per_cell = np.bincount(cell_of(up), minlength=cells + 2)
    first = np.zeros(cells + 2, dtype=np.intp)
    np.cumsum(per_cell[:-1], out=first[1:])
    lut = np.where(per_cell == 0, 2 * first, -1 - 2 * first)
    slot = cell_of(x)
    lut.take(slot, out=slot, mode="clip")  # in place; indices are always in range
    idx = np.flatnonzero(slot < 0)
    if idx.size:
        xi = x[idx]
        below = (-1 - slot[idx]) // 2  # #up in lower cells: a lower bound of #(up < xi)
        up_pad = np.append(up, np.inf)  # sentinel: every x is finite
        active = np.arange(idx.size)
        for _ in range(_GRID_PROBE_ROUNDS):
            active = active[up_pad[below[active]] < xi[active]]
            if not active.size:
                break
            below[active] += 1
        else:
            if active.size:
                below[active] = np.searchsorted(up, xi[active], side="left")
        slot[idx] = 2 * below + (up_pad[below] == xi)
    return slot


def _left_right(
    up: np.ndarray, neg: np.ndarray, left: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``#(neg < up[g])`` and ``#(neg <= up[g])`` for ascending ``up`` and sorted ``neg``.

    One binary search per distinct positive score (ascending keys, so the searches walk the
    array in order) unless ``left`` is given; the second count differs from the first only
    where a negative ties with ``up[g]``, and is searched for just those thresholds. Ties are
    looked for block by block to keep temporaries small. ``right`` is ``left`` itself when
    nothing ties.
    """
    n = neg.size
    if left is None:
        left = np.searchsorted(neg, up, side="left")
    right = left
    if n == 0:
        return left, right
    for g0 in range(0, up.size, _BLOCK):
        lb = left[g0 : g0 + _BLOCK]
        tied = np.flatnonzero(neg[np.minimum(lb, n - 1)] == up[g0 : g0 + _BLOCK])
        if tied.size:
            if right is left:
                right = left.copy()
            tied += g0
            right[tied] = np.searchsorted(neg, up[tied], side="right")
    return left, right


def _assemble(
    up: np.ndarray,
    tp_up: np.ndarray,
    fp_up: np.ndarray,
    gap_nonempty: np.ndarray,
    gap_min: np.ndarray,
    fp_gap: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Interleave positive thresholds and gap corners into compressed descending arrays.

    Args:
        up: distinct positive scores, ascending (m).
        tp_up: positives (count or weight) scoring >= each of ``up``.
        fp_up: negatives scoring >= each of ``up``.
        gap_nonempty: for each gap g = 0..m (below ``up[g]``, above ``up[g-1]``) whether
            negatives fall in it.
        gap_min: smallest negative of each gap (read only where non-empty).
        fp_gap: negatives scoring >= that smallest negative.
    """
    m = up.size
    ng = np.flatnonzero(gap_nonempty)
    size = m + ng.size
    # Ascending position of up[g] is g + (non-empty gaps at or below g); of gap g, g + (non-empty
    # gaps below g). Written straight into descending order.
    gaps_upto = np.cumsum(gap_nonempty[:m], dtype=np.intp)
    at_up = (size - 1) - (np.arange(m, dtype=np.intp) + gaps_upto)
    at_gap = (size - 1) - (ng + np.arange(ng.size, dtype=np.intp))
    thr = np.empty(size, dtype=np.float64)
    tp = np.empty(size, dtype=tp_up.dtype)
    fp = np.empty(size, dtype=fp_up.dtype)
    thr[at_up] = up
    tp[at_up] = tp_up
    fp[at_up] = fp_up
    thr[at_gap] = gap_min[ng]
    # A gap's tp is that of the positive threshold just above it (0 above all positives).
    tp_above = np.append(tp_up, tp_up.dtype.type(0))
    tp[at_gap] = tp_above[ng]
    fp[at_gap] = fp_gap[ng]
    return thr, tp, fp


def _compressed_grid(
    up: np.ndarray, tp_up: np.ndarray, neg: np.ndarray, w_neg: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compressed counts with the negatives bucketed by :func:`_grid_slots` (never sorted)."""
    size = 2 * up.size + 1
    slot = _grid_slots(up, neg)
    neg_in_slot = np.bincount(slot, minlength=size)
    if w_neg is not None:
        fp_in_slot = np.bincount(slot, weights=w_neg, minlength=size)
    else:
        fp_in_slot = neg_in_slot.astype(np.int64, copy=False)
    slot_min = np.full(size, np.inf)
    np.minimum.at(slot_min, slot, neg)
    del slot
    fp_slot = np.cumsum(fp_in_slot[::-1])[::-1]  # negatives in this slot and above
    return _assemble(up, tp_up, fp_slot[1::2], neg_in_slot[0::2] > 0, slot_min[0::2], fp_slot[0::2])


def _use_grid(m: int, n: int) -> bool:
    return n >= _GRID_MIN_NEGATIVES and m <= _GRID_MAX_POSITIVE_FRACTION * n


#: Sorted path: below this many scores both classes are simply sorted with ``np.sort``.
_BUCKET_MIN_SIZE = 1 << 16
#: Scores per value bucket (both classes) aimed at; numpy sorts up to 256 values with a sorting
#: network, several times faster per value than a large sort.
_BUCKET_TARGET = 256
#: Buckets per class at most (bucket id and class share one uint16 key).
_BUCKET_MAX = (1 << 15) - 1
#: Fine cells of the affine value grid that buckets are made of, and the sample size used to
#: size the buckets.
_BUCKET_CELLS = 1 << 18
_BUCKET_SAMPLE = 1 << 16
#: Negatives per binary-search call when counting negatives below each positive.
_SEARCH_CHUNK = 1 << 12


def _use_buckets(s: np.ndarray, is_pos: np.ndarray, p: int) -> bool:
    """Whether to bucket-sort (:func:`_bucket_sort`) rather than sort positives first.

    Not for small inputs, nor when the grid kernel may apply: few positives, or positives so
    tied that a strided sample of them has under 1/16 distinct values.
    """
    if s.size < _BUCKET_MIN_SIZE or p <= _GRID_MAX_POSITIVE_FRACTION * (s.size - p):
        return False
    stride = max(1, s.size // _BUCKET_SAMPLE)
    sample = s[::stride][is_pos[::stride]]
    return np.unique(sample).size * 16 > sample.size


def _bucket_map(s: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Monotone map of scores to ``buckets`` value buckets of similar size: (cells, table).

    A score goes to a fine cell of an affine grid over the bulk of a strided sample (clipped at
    both ends), then through ``table`` to its bucket. Cell and table are non-decreasing in the
    score whatever the rounding, so every score of a lower bucket is strictly below every score
    of a higher one: sorting each bucket sorts everything. The sample only sets the bucket sizes
    (the speed), never the result. None when the sample's span overflows float64.
    """
    sample = np.sort(s[:: max(1, s.size // _BUCKET_SAMPLE)])
    cut = sample.size // 1024
    lo, hi = float(sample[cut]), float(sample[sample.size - 1 - cut])
    if not hi > lo:
        lo, hi = float(sample[0]), float(sample[-1])
    span = hi - lo
    if not np.isfinite(span):
        return None
    scale = (_BUCKET_CELLS - 1) / span if span > 0 else 0.0
    divide = not np.isfinite(scale)  # subnormal span: divide by it first

    def cells_of(v: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            t = v - lo  # may overflow to +-inf: still monotone, clipped below
            if divide:
                t /= span
                t *= _BUCKET_CELLS - 1
            else:
                t *= scale
        np.clip(t, 0.0, _BUCKET_CELLS - 1, out=t)
        return t.astype(np.int32)  # truncation of non-negative values = floor: monotone

    hist = np.bincount(cells_of(sample), minlength=_BUCKET_CELLS)
    before = np.cumsum(hist) - hist  # sample values in lower cells: non-decreasing
    table = (before * buckets // sample.size).astype(np.uint16)
    return cells_of(s), table


def _float32_if_exact(s: np.ndarray) -> np.ndarray:
    """``s`` as float32 when that is lossless (model outputs often are float32), else ``s``.

    Float32 halves the memory traffic of the gather and the sorts; every float32 value is a
    float64 value, so thresholds and comparisons stay exact. A strided probe rejects float64
    data at once; only data passing it pay for the full round-trip comparison.
    """
    probe = s[:: max(1, s.size // 4096)]
    with np.errstate(over="ignore"):
        if not np.array_equal(probe.astype(np.float32), probe):
            return s
        s32 = s.astype(np.float32)
    return s32 if np.array_equal(s32, s) else s


def _bucket_sort(
    s: np.ndarray, is_pos: np.ndarray, p: int, buckets: int | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Both classes sorted by a bucket sort: ``(buf, left)``, or None to use ``np.sort``.

    ``buf[:n]`` holds the negatives and ``buf[n:]`` the positives, each ascending (float32
    when every score is a float32 value, see :func:`_float32_if_exact`; float64 otherwise);
    ``left[i]`` is the number of negatives strictly below ``buf[n + i]``. Scores are spread
    over value buckets of about 256 (:func:`_bucket_map`), grouped by (class, bucket) with one
    stable radix argsort of a uint16 key and one gather, and each group is sorted in place:
    numpy sorts such small runs with a sorting network, several times faster per value than
    one large sort. Since buckets are ordered by value, the negatives below a positive are those
    of lower buckets plus a binary search within a run of nearby buckets that stays in cache.
    Exact for any data: a bad sample only makes buckets uneven, i.e. slower.
    """
    size = s.size
    n = size - p
    if buckets is None:
        buckets = min(_BUCKET_MAX, max(1, size // _BUCKET_TARGET))
    mapped = _bucket_map(s, buckets)
    if mapped is None:
        return None
    cells, table = mapped
    # Positives use the second half of the table (bucket + buckets): one key per (class, bucket).
    cells += is_pos.view(np.uint8) * np.int32(_BUCKET_CELLS)  # faster than a masked add
    key = np.concatenate((table, table + np.uint16(buckets))).take(cells)
    del cells
    bounds = np.zeros(2 * buckets + 1, dtype=np.intp)
    np.cumsum(np.bincount(key, minlength=2 * buckets), out=bounds[1:])
    order = np.argsort(key, kind="stable")  # radix sort for uint16
    del key
    buf = _float32_if_exact(s).take(order)
    del order
    b = bounds.tolist()
    for i in range(2 * buckets):
        if b[i + 1] - b[i] > 1:
            buf[b[i] : b[i + 1]].sort()
    # int32 halves the memory of these counts (and of their copies later) where exact.
    left = np.empty(p, dtype=np.int32 if size < 2**31 else np.intp)
    # Chunks of whole buckets: the positives of buckets g0..g1-1 lie above every negative of
    # lower buckets and below every negative of higher ones.
    step = max(1, buckets * _SEARCH_CHUNK // max(n, 1))
    for g0 in range(0, buckets, step):
        g1 = min(g0 + step, buckets)
        a0, a1 = b[g0], b[g1]
        c0, c1 = b[buckets + g0], b[buckets + g1]
        if c1 > c0:
            out = left[c0 - n : c1 - n]
            out[:] = np.searchsorted(buf[a0:a1], buf[c0:c1], side="left")
            out += a0
    return buf, left


#: Thresholds handled per block when the sorted path writes its output.
_BLOCK = 1 << 16


def _compressed_unweighted(s: np.ndarray, is_pos: np.ndarray) -> tuple[np.ndarray, ...]:
    """Compressed counts of unweighted data (thresholds descending, int64 tp and fp).

    Few distinct positive scores: the grid kernel, no sort of the negatives. Otherwise both
    classes are sorted (in place, in private copies) and the distinct positive scores are
    located among the negatives by binary search; the output is then written block by block,
    straight into its final descending place, so that the extra memory stays near the sorted
    copies plus the output itself (the issue's budget is 4x the input).
    """
    p = int(np.count_nonzero(is_pos))
    n = s.size - p
    bucketed = None
    if _use_buckets(s, is_pos, p):
        bucketed = _bucket_sort(s, is_pos, p)
    if bucketed is None:
        pos = s[is_pos]
        pos.sort()
        left_all = None
    else:
        buf, left_all = bucketed
        pos = buf[n:]
    all_distinct = p < 2 or not np.any(pos[1:] == pos[:-1])
    first = None if all_distinct else _first_of_runs(pos)  # None: it would be arange(p)
    m = p if first is None else first.size
    up = pos if first is None else pos[first]
    del pos
    if bucketed is None and _use_grid(m, n):
        tp_up = p - (np.arange(m, dtype=np.int64) if first is None else first.astype(np.int64))
        return _compressed_grid(up, tp_up, s[~is_pos], None)
    if bucketed is None:
        neg = s[~is_pos]
        neg.sort()
    else:
        neg = buf[:n]
        if first is not None:
            left_all = left_all[first]
        del buf
    left, right = _left_right(up, neg, left_all)
    del left_all
    # Gap g (0..m) holds the sorted negatives right[g-1]:left[g] (right[-1] = 0, left[m] = n).
    nonempty = np.empty(m + 1, dtype=bool)
    nonempty[0] = left[0] > 0
    np.greater(left[1:], right[:-1], out=nonempty[1:m])
    nonempty[m] = n > right[-1]
    size = m + int(np.count_nonzero(nonempty))
    thr = np.empty(size, dtype=np.float64)
    tp = np.empty(size, dtype=np.int64)
    fp = np.empty(size, dtype=np.int64)
    done = 0  # ascending output positions written so far
    for g0 in range(0, m + 1, _BLOCK):
        g1 = min(g0 + _BLOCK, m + 1)  # gaps g0..g1-1 and the positive thresholds before m
        k = g1 - g0
        u1 = min(g1, m)
        # Interleave ascending: gap g, then up[g]; the slot after gap m does not exist.
        rows = 2 * k - (1 if g1 == m + 1 else 0)
        b_thr = np.empty(2 * k)
        b_tp = np.empty(2 * k, dtype=np.int64)
        b_fp = np.empty(2 * k, dtype=np.int64)
        keep = np.ones(2 * k, dtype=bool)
        gap_lo = np.empty(k, dtype=np.intp)
        if g0 == 0:
            gap_lo[0] = 0
            gap_lo[1:] = right[: g1 - 1]
        else:
            gap_lo[:] = right[g0 - 1 : g1 - 1]
        ne = nonempty[g0:g1]
        b_thr[0::2] = neg[np.minimum(gap_lo, n - 1)]
        b_fp[0::2] = n - gap_lo
        keep[0::2] = ne
        if first is None:
            tp_blk = p - np.arange(g0, u1, dtype=np.int64)
        else:
            tp_blk = p - first[g0:u1]
        b_thr[1 : 2 * (u1 - g0) : 2] = up[g0:u1]
        b_tp[1 : 2 * (u1 - g0) : 2] = tp_blk
        b_fp[1 : 2 * (u1 - g0) : 2] = n - left[g0:u1]
        # A gap's tp is that of the positive threshold just above it (0 above them all).
        b_tp[0 : 2 * (u1 - g0) : 2] = tp_blk
        if u1 < g1:
            b_tp[2 * (u1 - g0)] = 0
        sel = np.flatnonzero(keep[:rows])[::-1]  # kept rows, descending
        count = sel.size
        lo, hi = size - done - count, size - done
        # mode="clip" (indices are in range) lets take write straight into the output.
        b_thr.take(sel, out=thr[lo:hi], mode="clip")
        b_tp.take(sel, out=tp[lo:hi], mode="clip")
        b_fp.take(sel, out=fp[lo:hi], mode="clip")
        done += count
    return thr, tp, fp


def _compressed_weighted(
    s: np.ndarray, is_pos: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compressed counts with weights (before dropping zero-weight positive thresholds).

    Returns:
        Descending thresholds, cumulative float64 tp and fp.
    """
    pos, w_pos = s[is_pos], w[is_pos]
    order = np.argsort(pos, kind="stable")
    pos, w_pos = pos[order], w_pos[order]
    first = _first_of_runs(pos)
    up = pos[first]
    m = up.size
    tp_up = np.cumsum(np.add.reduceat(w_pos, first)[::-1])[::-1]
    is_neg = ~is_pos
    neg, w_neg = s[is_neg], w[is_neg]
    n = neg.size
    if _use_grid(m, n):
        return _compressed_grid(up, tp_up, neg, w_neg)
    order = np.argsort(neg)
    neg, w_neg = neg[order], w_neg[order]
    del order
    left, right = _left_right(up, neg)
    # Gap g holds the sorted negatives right[g-1]:left[g] (right[-1] = 0, left[m] = n).
    gap_lo = np.concatenate(([0], right))
    gap_nonempty = np.append(left, n) > gap_lo
    gap_min = neg[np.minimum(gap_lo, n - 1)]
    # above[k]: weight of the sorted negatives k.., summed from the top like the uncompressed
    # curve (a difference from the total would lose the small counts at high thresholds).
    above = np.zeros(n + 1)
    np.cumsum(w_neg[::-1], out=above[:n][::-1])
    return _assemble(up, tp_up, above[left], gap_nonempty, gap_min, above[gap_lo])


def _full_tables(
    is_pos: np.ndarray, s: np.ndarray, w: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every distinct score (descending) with the positive and negative count (weight) at it."""
    if s.size == 0:
        dtype = np.int64 if w is None else np.float64
        return np.zeros(0), np.zeros(0, dtype=dtype), np.zeros(0, dtype=dtype)
    if w is None:
        # Sort each class, then merge the two sorted runs (linear for a stable argsort).
        pos = np.sort(s[is_pos])
        neg = np.sort(s[~is_pos])
        both = np.concatenate((pos, neg))
        order = np.argsort(both, kind="stable")
        v = both[order]
        lab = order < pos.size
        del order
        pos_w: np.ndarray = lab
        neg_w: np.ndarray | None = None
    else:
        order = np.argsort(s, kind="stable")
        v = s[order]
        lab = is_pos[order]
        ws = w[order]
        pos_w = np.where(lab, ws, 0.0)
        neg_w = np.where(lab, 0.0, ws)
    starts = _first_of_runs(v)
    thr = v[starts]
    if w is None:
        cum = np.zeros(v.size + 1, dtype=np.int64)
        np.cumsum(pos_w, out=cum[1:])
        ends = np.append(starts[1:], v.size)
        dtp = cum[ends] - cum[starts]
        dfp = (ends - starts) - dtp
    else:
        dtp = np.add.reduceat(pos_w, starts)
        dfp = np.add.reduceat(neg_w, starts)
    return thr[::-1].copy(), dtp[::-1].copy(), dfp[::-1].copy()


