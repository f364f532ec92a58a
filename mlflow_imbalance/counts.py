"""Exact ROC counts of one evaluation: build, compress, reduce, merge, accumulate (numpy only).

A :class:`RocCounts` holds, for every distinct score threshold in *descending* order, the
cumulative number (or weight) of positives ``tp`` and negatives ``fp`` whose score is at or above
it, plus the class totals ``n_pos`` and ``n_neg``. Tied scores form one threshold: the "tie
batch" of Maxion & Roberts (2004, §2.2) -- the threshold is lowered once for the group and both
class counts grow by the group's members. The implicit first point of every curve is the origin
(threshold +inf, nothing predicted positive); it is not stored.

These counts do not depend on the class prevalence of the test set, and every prevalence-aware
metric in :mod:`mlflow_imbalance.metrics` is an exact function of them (Brabec et al. 2020, §2,
eq. 8).

Lossless compression (the default) keeps every threshold at which at least one positive scores
and, of each run of consecutive thresholds that hold only negatives, the last one (the corner of
the ROC staircase). Points dropped that way lie on a horizontal ROC segment between two kept
points, so no metric of this package changes; runs of positive thresholds are *not* merged,
because average precision sums precision over each of them. The result has at most
``2 * (number of positive thresholds) + 1`` points.

Building the compressed counts never needs the negatives in order: only, for each gap between
consecutive distinct positive scores, how many negatives fall in it and the lowest of them (the
corner threshold). With few distinct positive scores (low prevalence, the case this package is
for) the negatives are bucketed into those gaps with an exact uniform-grid lookup (see
:func:`_grid_slots`) in a few vectorised O(n) passes; otherwise both classes are sorted --
for large inputs by a bucket sort (:func:`_bucket_sort`: value buckets of about 256 scores,
grouped by one radix argsort and sorted by numpy's small-array sorting networks), which beats one
``np.sort`` of all scores, and in float32 when every score is a float32 value. All paths are
exact, ties included, and are checked against scikit-learn in the tests.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from mlflow_imbalance._validation import (
    as_1d_array,
    binarize_labels,
    binarize_labels_with_classes,
    check_label_union,
    check_same_length,
    check_scores,
    check_weights,
    plain,
)

logger = logging.getLogger(__name__)

__all__ = ["CountsAccumulator", "RocCounts", "merge_counts"]


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


class RocCounts:
    """Exact ROC counts: cumulative positives and negatives at or above each threshold.

    Attributes:
        thresholds: distinct score thresholds, strictly descending (float64).
        tp: positives (count, or weight with ``sample_weight``) scoring at or above each
            threshold; cumulative, non-decreasing.
        fp: negatives scoring at or above each threshold; cumulative, non-decreasing.
        n_pos: total positives (count or weight).
        n_neg: total negatives (count or weight).
        compressed: True when thresholds were dropped (losslessly or not); such counts cannot be
            merged exactly with others.
        max_tpr_error: largest TPR error introduced by :meth:`reduce` (0 when exact).
        max_fpr_error: largest FPR error introduced by :meth:`reduce` (0 when exact).
        weighted: True when built with sample weights (``tp``/``fp`` are float64).
    """

    __slots__ = (
        "compressed",
        "fp",
        "max_fpr_error",
        "max_tpr_error",
        "n_neg",
        "n_pos",
        "thresholds",
        "tp",
        "weighted",
    )

    def __init__(
        self,
        thresholds: Any,
        tp: Any,
        fp: Any,
        n_pos: float,
        n_neg: float,
        *,
        compressed: bool = False,
        max_tpr_error: float = 0.0,
        max_fpr_error: float = 0.0,
        weighted: bool | None = None,
    ) -> None:
        thr = np.asarray(thresholds, dtype=np.float64)
        tp_arr = np.asarray(tp)
        fp_arr = np.asarray(fp)
        if weighted is None:
            weighted = tp_arr.dtype.kind == "f" or fp_arr.dtype.kind == "f"
        dtype = np.float64 if weighted else np.int64
        for name, arr in (("thresholds", thr), ("tp", tp_arr), ("fp", fp_arr)):
            if arr.ndim != 1:
                raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
        if not (thr.size == tp_arr.size == fp_arr.size):
            raise ValueError(
                "thresholds, tp and fp must have the same length, got "
                f"{thr.size}, {tp_arr.size} and {fp_arr.size}"
            )
        if thr.size == 0:
            raise ValueError("RocCounts needs at least one threshold, got none")
        if not weighted:
            for name, arr in (("tp", tp_arr), ("fp", fp_arr)):
                if arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
                    raise ValueError(f"{name} holds non-integer counts but weighted=False")
        tp_arr = tp_arr.astype(dtype, copy=False)
        fp_arr = fp_arr.astype(dtype, copy=False)
        if not np.all(np.isfinite(thr)):
            raise ValueError("thresholds must be finite")
        if thr.size > 1 and not np.all(thr[1:] < thr[:-1]):
            i = int(np.flatnonzero(~(thr[1:] < thr[:-1]))[0])
            raise ValueError(
                "thresholds must be strictly descending: "
                f"thresholds[{i + 1}]={thr[i + 1].item()!r} "
                f"follows thresholds[{i}]={thr[i].item()!r}"
            )
        for name, arr in (("tp", tp_arr), ("fp", fp_arr)):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be finite")
            if arr.size and arr.min() < 0:
                raise ValueError(f"{name} must be non-negative, found {arr.min().item()!r}")
            if arr.size > 1 and np.any(arr[1:] < arr[:-1]):
                i = int(np.flatnonzero(arr[1:] < arr[:-1])[0])
                raise ValueError(
                    f"{name} must be cumulative (non-decreasing): "
                    f"{name}[{i + 1}]={arr[i + 1].item()!r} < {name}[{i}]={arr[i].item()!r}"
                )
        n_pos_v = float(n_pos) if weighted else int(n_pos)
        n_neg_v = float(n_neg) if weighted else int(n_neg)
        if not weighted and (n_pos_v != n_pos or n_neg_v != n_neg):
            raise ValueError(
                f"n_pos and n_neg must be integers, got {plain(n_pos)!r} and {plain(n_neg)!r}"
            )
        for name, total, arr in (("n_pos", n_pos_v, tp_arr), ("n_neg", n_neg_v, fp_arr)):
            if not np.isfinite(total) or total <= 0:
                raise ValueError(f"{name} must be positive, got {plain(total)!r}")
            tol = 1e-9 * total if weighted else 0
            if arr[-1] > total + tol:
                key = "tp" if name == "n_pos" else "fp"
                raise ValueError(f"{key}[-1]={arr[-1].item()!r} exceeds {name}={plain(total)!r}")
        for name, err in (("max_tpr_error", max_tpr_error), ("max_fpr_error", max_fpr_error)):
            if not (0.0 <= float(err) <= 1.0):
                raise ValueError(f"{name} must lie in [0, 1], got {plain(err)!r}")
        thr.flags.writeable = False
        tp_arr.flags.writeable = False
        fp_arr.flags.writeable = False
        self.thresholds = thr
        self.tp = tp_arr
        self.fp = fp_arr
        self.n_pos = n_pos_v
        self.n_neg = n_neg_v
        self.compressed = bool(compressed)
        self.max_tpr_error = float(max_tpr_error)
        self.max_fpr_error = float(max_fpr_error)
        self.weighted = bool(weighted)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_scores(
        cls,
        y_true: Any,
        y_score: Any,
        *,
        pos_label: Any = None,
        sample_weight: Any = None,
        compress: bool = True,
    ) -> RocCounts:
        """Exact ROC counts of scores against binary labels.

        Args:
            y_true: binary labels (bool, int, float or str; list, numpy array or pandas Series).
            y_score: scores, higher meaning more likely positive; finite numbers.
            pos_label: the positive label; needed unless labels are {0,1}, {-1,1} or bools.
            sample_weight: optional non-negative finite weights, one per example.
            compress: apply the lossless compression (see module docstring). Pass False to keep
                every distinct threshold, e.g. to :func:`merge_counts` the result later.

        Returns:
            The counts, thresholds strictly descending, ``tp``/``fp`` int64 (float64 when
            weighted).

        Raises:
            ValueError: on NaN/inf scores, non-binary labels, one class only, empty input,
                length mismatch or negative/NaN weights; the message names the argument.
        """
        y = as_1d_array(y_true, "y_true")
        s = check_scores(y_score, "y_score")
        check_same_length([y, s], ["y_true", "y_score"])
        is_pos = binarize_labels(y, pos_label, name="y_true")
        w = check_weights(sample_weight, y.size)
        return cls._from_validated(is_pos, s, w, compress=compress)

    @classmethod
    def _from_validated(
        cls, is_pos: np.ndarray, s: np.ndarray, w: np.ndarray | None, *, compress: bool
    ) -> RocCounts:
        weighted = w is not None
        if compress:
            if weighted:
                thr, tp, fp = _compressed_weighted(s, is_pos, w)
            else:
                thr, tp, fp = _compressed_unweighted(s, is_pos)
            n_pos, n_neg = tp[-1], fp[-1]  # the lowest threshold is always kept
        else:
            thr, dtp, dfp = _full_tables(is_pos, s, w)
            tp, fp = np.cumsum(dtp), np.cumsum(dfp)
            n_pos, n_neg = tp[-1], fp[-1]
        if weighted and (n_pos <= 0 or n_neg <= 0):
            which = "positives" if n_pos <= 0 else "negatives"
            raise ValueError(f"sample_weight gives the {which} a total weight of zero")
        out = cls(thr, tp, fp, n_pos, n_neg, compressed=compress, weighted=weighted)
        # With weights, a positive of zero weight leaves tp flat: compress() drops its threshold
        # exactly as it would in the uncompressed curve.
        return out.compress() if (compress and weighted) else out

    @classmethod
    def _from_tables(
        cls,
        thresholds_desc: np.ndarray,
        pos_counts: np.ndarray,
        neg_counts: np.ndarray,
        *,
        weighted: bool,
        compress: bool,
    ) -> RocCounts:
        """Counts from per-threshold (non-cumulative) class counts, thresholds descending."""
        tp = np.cumsum(pos_counts)
        fp = np.cumsum(neg_counts)
        n_pos, n_neg = tp[-1], fp[-1]
        if n_pos <= 0 or n_neg <= 0:
            which = "positive" if n_pos <= 0 else "negative"
            raise ValueError(
                f"the data hold no {which} example: ROC counts need both positives and negatives"
            )
        out = cls(thresholds_desc, tp, fp, n_pos, n_neg, weighted=weighted)
        return out.compress() if compress else out

    # ------------------------------------------------------------------ derived values
    @property
    def n_thresholds(self) -> int:
        """Number of stored thresholds (points of the curve, the origin excluded)."""
        return int(self.thresholds.size)

    def __len__(self) -> int:
        return self.n_thresholds

    @property
    def tpr(self) -> np.ndarray:
        """True positive rate (recall) at each threshold."""
        return self.tp / self.n_pos

    @property
    def fpr(self) -> np.ndarray:
        """False positive rate at each threshold."""
        return self.fp / self.n_neg

    @property
    def prevalence(self) -> float:
        """Positive prevalence of the test set, ``n_pos / (n_pos + n_neg)``."""
        return self.n_pos / (self.n_pos + self.n_neg)

    @property
    def is_exact(self) -> bool:
        """True unless :meth:`reduce` introduced an error."""
        return self.max_tpr_error == 0.0 and self.max_fpr_error == 0.0

    def per_threshold(self) -> tuple[np.ndarray, np.ndarray]:
        """Non-cumulative positive and negative counts at each threshold."""
        return np.diff(self.tp, prepend=0), np.diff(self.fp, prepend=0)

    # ------------------------------------------------------------------ transforms
    def compress(self) -> RocCounts:
        """Lossless compression (module docstring); a no-op on already compressed counts."""
        keep = _keep_mask(self.tp)
        if keep.all():
            return self._replace(compressed=True)
        return self._replace(
            thresholds=self.thresholds[keep],
            tp=self.tp[keep],
            fp=self.fp[keep],
            compressed=True,
        )

    def reduce(self, max_points: int) -> RocCounts:
        """Bounded-error reduction to at most ``max_points`` thresholds.

        Points are grouped into ``max_points`` equal bins of ``TPR + FPR`` (which only grows
        along the curve); each bin keeps its last point, which then stands for the dropped
        thresholds before it. A dropped threshold is thus replaced by a lower one, moving its
        point up and right on the ROC curve by less than ``2 / (max_points - 1)`` in each
        coordinate. The realised largest errors are measured exactly and added to
        ``max_tpr_error`` / ``max_fpr_error`` (errors of successive reductions add up). They bound
        the move of every point of the curve it is applied to; a threshold already dropped by
        lossless compression is represented by its corner exactly, as before.

        Args:
            max_points: hard cap on the number of thresholds, at least 2.

        Returns:
            New counts (the same object's data when it already fits).
        """
        if int(max_points) != max_points or max_points < 2:
            raise ValueError(f"max_points must be an integer >= 2, got {plain(max_points)!r}")
        max_points = int(max_points)
        if self.n_thresholds <= max_points:
            return self
        tpr, fpr = self.tpr, self.fpr
        s = tpr + fpr
        h = 2.0 / (max_points - 1)
        bins = np.minimum(np.floor(s / h).astype(np.int64), max_points - 1)
        keep = np.empty(bins.size, dtype=bool)
        keep[:-1] = bins[1:] != bins[:-1]
        keep[-1] = True
        kept_idx = np.flatnonzero(keep)
        # Each point is represented by the first kept point at or after it.
        rep = kept_idx[np.searchsorted(kept_idx, np.arange(bins.size), side="left")]
        tpr_err = float(np.max(tpr[rep] - tpr))
        fpr_err = float(np.max(fpr[rep] - fpr))
        return self._replace(
            thresholds=self.thresholds[keep],
            tp=self.tp[keep],
            fp=self.fp[keep],
            compressed=True,
            max_tpr_error=min(1.0, self.max_tpr_error + tpr_err),
            max_fpr_error=min(1.0, self.max_fpr_error + fpr_err),
        )

    def merge(self, *others: RocCounts, compress: bool = True) -> RocCounts:
        """Counts of the concatenated data of ``self`` and ``others`` (see :func:`merge_counts`)."""
        return merge_counts([self, *others], compress=compress)

    def _replace(self, **changes: Any) -> RocCounts:
        fields = {
            "thresholds": self.thresholds,
            "tp": self.tp,
            "fp": self.fp,
            "n_pos": self.n_pos,
            "n_neg": self.n_neg,
            "compressed": self.compressed,
            "max_tpr_error": self.max_tpr_error,
            "max_fpr_error": self.max_fpr_error,
            "weighted": self.weighted,
        }
        fields.update(changes)
        return RocCounts(
            fields.pop("thresholds"),
            fields.pop("tp"),
            fields.pop("fp"),
            fields.pop("n_pos"),
            fields.pop("n_neg"),
            **fields,
        )

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the counts to ``path`` in the versioned ``.npz`` format (docs/format.md).

        The file is written to a temporary name and renamed, so a failure leaves nothing
        half-written.
        """
        from mlflow_imbalance import artifacts

        artifacts.write_counts(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> RocCounts:
        """Read counts written by :meth:`save`, validating version and every invariant."""
        from mlflow_imbalance import artifacts

        return artifacts.read_counts(path)

    # ------------------------------------------------------------------ comparison / display
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RocCounts):
            return NotImplemented
        return (
            self.n_pos == other.n_pos
            and self.n_neg == other.n_neg
            and self.weighted == other.weighted
            and self.max_tpr_error == other.max_tpr_error
            and self.max_fpr_error == other.max_fpr_error
            and np.array_equal(self.thresholds, other.thresholds)
            and np.array_equal(self.tp, other.tp)
            and np.array_equal(self.fp, other.fp)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        err = (
            ""
            if self.is_exact
            else (
                f", max_tpr_error={self.max_tpr_error:.3g}, max_fpr_error={self.max_fpr_error:.3g}"
            )
        )
        return (
            f"RocCounts(n_thresholds={self.n_thresholds}, n_pos={self.n_pos}, "
            f"n_neg={self.n_neg}, prevalence={self.prevalence:.4g}, "
            f"compressed={self.compressed}{err})"
        )


def merge_counts(counts: Iterable[RocCounts], *, compress: bool = True) -> RocCounts:
    """Counts of the concatenation of disjoint parts of one evaluation.

    The result equals :meth:`RocCounts.from_scores` on the concatenated data exactly. Inputs
    must be uncompressed (``from_scores(..., compress=False)``): a compressed part has dropped
    negatives-only thresholds that another part's positives may fall between.

    Args:
        counts: the parts, all weighted or all unweighted.
        compress: compress the merged result losslessly.

    Returns:
        The merged counts.
    """
    parts = list(counts)
    if not parts:
        raise ValueError("counts is empty: nothing to merge")
    for i, c in enumerate(parts):
        if not isinstance(c, RocCounts):
            raise TypeError(f"counts[{i}] is a {type(c).__name__}, not RocCounts")
        if c.compressed:
            raise ValueError(
                f"counts[{i}] is compressed and cannot be merged exactly: build the parts with "
                "RocCounts.from_scores(..., compress=False) or use CountsAccumulator"
            )
    weighted = {c.weighted for c in parts}
    if len(weighted) > 1:
        raise ValueError("cannot merge weighted with unweighted counts")
    is_weighted = weighted.pop()
    thr = np.concatenate([c.thresholds for c in parts])
    dtp = np.concatenate([c.per_threshold()[0] for c in parts])
    dfp = np.concatenate([c.per_threshold()[1] for c in parts])
    return RocCounts._from_tables(
        *_combine_tables(thr, dtp, dfp, weighted=is_weighted),
        weighted=is_weighted,
        compress=compress,
    )


def _combine_tables(
    thr: np.ndarray, dtp: np.ndarray, dfp: np.ndarray, *, weighted: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum per-threshold counts over equal thresholds; returns descending distinct thresholds."""
    uniq, inverse = np.unique(thr, return_inverse=True)
    if weighted:
        pos = np.bincount(inverse, weights=dtp, minlength=uniq.size)
        neg = np.bincount(inverse, weights=dfp, minlength=uniq.size)
    else:
        # Integer sums stay exact: np.add.at on int64 instead of bincount's float64.
        pos = np.zeros(uniq.size, dtype=np.int64)
        neg = np.zeros(uniq.size, dtype=np.int64)
        np.add.at(pos, inverse, dtp)
        np.add.at(neg, inverse, dfp)
    return uniq[::-1], pos[::-1], neg[::-1]


class CountsAccumulator:
    """Build exact ROC counts batch by batch, never holding all scores at once.

    Each :meth:`update` reduces its batch to per-distinct-score class counts; batches are
    consolidated into one table (amortised, so the total cost stays O(n log n)). Memory is
    O(number of distinct scores seen), which for tied or rounded scores is far below the number
    of examples; :meth:`result` gives exactly ``RocCounts.from_scores`` of all batches
    concatenated.

    Labels are checked across batches exactly as ``from_scores`` checks the concatenation: the
    distinct labels seen so far (at most two) are kept, and a batch bringing a third label, or
    one that leaves the positive class ambiguous under the default rule (``{-1}`` then
    ``{0, 1}``), is rejected with a ValueError before it changes anything.

    Args:
        pos_label: the positive label, fixed for every batch (required for string labels).
    """

    def __init__(self, pos_label: Any = None) -> None:
        self.pos_label = pos_label
        self._labels: list[Any] = []  # distinct labels of every batch so far (at most two)
        self._weighted: bool | None = None
        self._table: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_size = 0
        self.n_seen = 0

    def update(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> None:
        """Add one batch of labels and scores (validated like ``RocCounts.from_scores``)."""
        y = as_1d_array(y_true, "y_true")
        s = check_scores(y_score, "y_score")
        check_same_length([y, s], ["y_true", "y_score"])
        if y.size == 0:
            return
        is_pos, batch_labels = binarize_labels_with_classes(
            y, self.pos_label, name="y_true", require_both=False
        )
        labels = check_label_union(self._labels, batch_labels, self.pos_label, name="y_true")
        w = check_weights(sample_weight, y.size)
        weighted = w is not None
        if self._weighted is not None and self._weighted != weighted:
            raise ValueError(
                "sample_weight must be given for every batch or for none "
                f"(this batch: {'given' if weighted else 'missing'})"
            )
        self._weighted = weighted
        self._labels = labels
        self._pending.append(_full_tables(is_pos, s, w))
        self._pending_size += self._pending[-1][0].size
        self.n_seen += int(y.size)
        table_size = 0 if self._table is None else self._table[0].size
        if self._pending_size > max(table_size, 1 << 16):
            self._consolidate()

    def _consolidate(self) -> None:
        parts = self._pending
        if self._table is not None:
            parts = [self._table, *parts]
        if not parts:
            return
        thr = np.concatenate([p[0] for p in parts])
        dtp = np.concatenate([p[1] for p in parts])
        dfp = np.concatenate([p[2] for p in parts])
        self._table = _combine_tables(thr, dtp, dfp, weighted=bool(self._weighted))
        self._pending = []
        self._pending_size = 0

    def result(self, *, compress: bool = True) -> RocCounts:
        """The exact counts of every batch so far (raises if a class never appeared)."""
        self._consolidate()
        if self._table is None:
            raise ValueError("CountsAccumulator.result(): no data; call update() first")
        thr, pos, neg = self._table
        return RocCounts._from_tables(
            thr, pos, neg, weighted=bool(self._weighted), compress=compress
        )
