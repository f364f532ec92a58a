"""Exact kernels that turn scores and labels into ROC count tables (numpy only).

Private to :mod:`mlflow_imbalance.core.counts`; see its module docstring for the algorithms.

Scores reach the kernels as float32 or float64 arrays (float32 stays float32: it sorts faster).
The kernels work block by block in buffers allocated once per call: a large temporary is fresh
memory, and fresh memory costs page faults that on this kind of machine exceed the arithmetic.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from mlflow_imbalance.core._grid import (
    _assemble,
    _compressed_buckets,
    _compressed_grid,
    _use_buckets,
    _use_grid,
)

#: Values handled per vectorised step of every blockwise loop.
_BLOCK = 1 << 16
#: ... of the merged kernel's scan (its temporaries stay below glibc's mmap threshold).
_SCAN_BLOCK = 1 << 14
_LITTLE = sys.byteorder == "little"


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
# threshold) the compressed curve follows by cumulative sums. Four exact kernels compute them:
#
# * buckets: few distinct positive scores (at most ``_BUCKET_MAX_POSITIVES``), tied or not,
#   with few positives or heavily tied ones; unweighted. One bucketing pass with a cell table
#   that splits each cell at its positive score or its known tied value; nothing but the
#   positives and a few per cent of the scores is sorted (:mod:`mlflow_imbalance.core._grid`).
# * grid: few distinct positive scores, weighted (unweighted: with ``_BUCKETS = False``). Every
#   score is bucketed into its slot by a uniform-grid lookup; nothing but the positives is
#   sorted (:mod:`mlflow_imbalance.core._grid`).
# * split: few positives. All scores are sorted once (many positives: the negatives alone) and
#   the distinct positive scores are binary-searched among them (m searches, not n).
# * merged: many distinct positive scores. Every score becomes an integer key ``2 k + label``
#   (k an order-preserving injective map of the score, :func:`_float_keys`); one sort of the
#   keys merges both classes, and a linear scan reads the counts off (:func:`_merged_rows`): a
#   run of equal keys' values is a threshold, its place minus the positives below it the
#   negatives below it.

#: Unweighted scores with few distinct positive scores go to the bucket kernel (False: the
#: kernels before it, the grid for untied float64 and the split kernel otherwise; tests compare).
_BUCKETS = True
#: The unweighted grid kernel takes only untied float64 scores (tests lift this).
_GRID_ONLY_UNTIED_FLOAT64 = True
#: Keys per chunk of a windowed binary search (:func:`_search_sorted_keys`).
_SEARCH_CHUNK = 1 << 10
#: Sort the positives first (to count their distinct scores) when there are at most this many.
_FEW_POSITIVES = 1 << 16
#: Otherwise a strided sample of this many positives decides whether they are heavily tied.
_TIE_SAMPLE = 1 << 14
#: ... which they are when the sample holds at most this fraction of distinct scores.
_TIED_FRACTION = 0.75
#: Split kernel (sorted scores, binary searches) while positives are at most this fraction of
#: the negatives; the merged kernel above it.
_SPLIT_MAX_POSITIVE_FRACTION = 1 / 16
#: The split kernel sorts all the scores (not a copy of the negatives) while the positives are
#: at most this fraction of the negatives.
_SORT_ALL_MAX_POSITIVE_FRACTION = 1 / 8


def _left_right(
    up: np.ndarray,
    ref: np.ndarray,
    left: np.ndarray | None = None,
    at_least: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``#(ref < up[g])`` and ``#(ref <= up[g])`` for ascending ``up`` and sorted ``ref``.

    One binary search per distinct positive score (ascending keys, so the searches walk the
    array in order) unless ``left`` is given. The second count equals a known lower bound of
    it -- ``at_least``, by default the first count -- except where the value at that place
    still ties with ``up[g]``; it is searched for just those thresholds. Ties are looked for
    block by block to keep temporaries small. ``right`` is the lower bound itself (``left``
    when none is given) when nothing ties.
    """
    n = ref.size
    if left is None:
        left = _search_sorted_keys(ref, up, "left")
    base = left if at_least is None else at_least
    right = base
    if n == 0:
        return left, right
    for g0 in range(0, up.size, _BLOCK):
        lb = base[g0 : g0 + _BLOCK]
        tied = np.flatnonzero(ref[np.minimum(lb, n - 1)] == up[g0 : g0 + _BLOCK])
        if tied.size:
            if right is left:
                right = left.copy()
            tied += g0
            right[tied] = _search_sorted_keys(ref, up[tied], "right")
    return left, right


def _search_sorted_keys(a: np.ndarray, v: np.ndarray, side: str) -> np.ndarray:
    """``np.searchsorted(a, v, side)`` for ascending ``v``, chunk by chunk in narrow windows.

    Each chunk of keys is searched only in the stretch of ``a`` its first and last key bound,
    which stays in cache: many times faster than one call over all of ``a`` for many keys.
    """
    if v.size <= _SEARCH_CHUNK:
        return np.searchsorted(a, v, side=side)
    out = np.empty(v.size, dtype=np.intp)
    for c0 in range(0, v.size, _SEARCH_CHUNK):
        chunk = v[c0 : c0 + _SEARCH_CHUNK]
        lo = int(np.searchsorted(a, chunk[0], side=side))
        hi = int(np.searchsorted(a, chunk[-1], side=side))
        part = out[c0 : c0 + chunk.size]
        part[:] = np.searchsorted(a[lo:hi], chunk, side=side)
        part += lo
    return out


def _float32_if_exact(s: np.ndarray) -> np.ndarray:
    """``s`` as float32 when that is lossless (model outputs often are float32), else ``s``.

    Float32 halves the memory traffic and sorts faster; every float32 value is a float64
    value, so thresholds and comparisons stay exact. A strided probe rejects float64 data at
    once; only data passing it pay for the full round-trip comparison.
    """
    if s.dtype != np.float64:
        return s
    probe = s[:: max(1, s.size // 4096)]
    with np.errstate(over="ignore"):
        if not np.array_equal(probe.astype(np.float32), probe):
            return s
        s32 = s.astype(np.float32)
    return s32 if np.array_equal(s32, s) else s


# ---------------------------------------------------------------------------------------------
# Split kernel: the sorted scores (or negatives) and the sorted positives.


def _select(s: np.ndarray, mask: np.ndarray, count: int) -> np.ndarray:
    """``s[mask]`` (``count`` values) in a fresh array, fast for any mask.

    Boolean indexing branches on every value: fast when the mask is predictable (mostly one
    way), slow near half and half. ``np.compress`` does not branch but builds an index array
    (8 bytes a value): it runs block by block here, so that array stays small.
    """
    if min(count, s.size - count) <= s.size // 8:
        return s[mask]
    out = np.empty(count, dtype=s.dtype)
    at = 0
    for i in range(0, s.size, _SCAN_BLOCK):
        mb = mask[i : i + _SCAN_BLOCK]
        c = int(np.count_nonzero(mb))
        np.compress(mb, s[i : i + _SCAN_BLOCK], out=out[at : at + c])
        at += c
    return out


def _split_counts(
    s: np.ndarray, is_pos: np.ndarray, p: int, pos: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compressed counts of unweighted data from one sort of all scores and the sorted positives.

    The distinct positive scores ``up`` are located among all the sorted scores by binary search
    (one per distinct positive score); the negatives below ``up[g]`` are then the scores below
    it less the positives below it, which the sorted positives give by their place. Every score
    strictly between two neighbouring distinct positive scores is a negative, so a gap's
    smallest negative is read off the sorted scores too: the negatives are never copied out
    (that copy cost 0.13-0.29 of a sort of the scores). With many positives (above
    ``_SORT_ALL_MAX_POSITIVE_FRACTION`` of the negatives) sorting them a second time inside
    all the scores costs more than the copy, and the negatives alone are sorted instead. The
    output is written block by block, straight into its final descending place. ``pos`` may
    pass the positives already sorted.
    """
    if pos is None:
        pos = _select(s, is_pos, p)
        pos.sort()
    n = s.size - p
    first = None if p < 2 or not np.any(pos[1:] == pos[:-1]) else _first_of_runs(pos)
    m = p if first is None else first.size  # first None: it would be arange(p)
    up = pos if first is None else pos[first]
    # positives below up[g], and at or below it
    pos_below = np.arange(m, dtype=np.intp) if first is None else first
    pos_upto = np.empty(m, dtype=np.intp)
    pos_upto[:-1] = pos_below[1:]
    pos_upto[-1] = p
    del pos
    if p <= _SORT_ALL_MAX_POSITIVE_FRACTION * n:
        alls = np.sort(s)
    else:  # sorting the positives twice would cost more than copying the negatives out
        alls = _select(s, ~is_pos, n)
        alls.sort()
        pos_below = pos_upto = np.zeros(1, dtype=np.intp)  # none of them in ``alls``
    left_all = _search_sorted_keys(alls, up, "left")  # scores below up[g]
    # Scores at or below up[g]: at least those below it and its positives; more only where
    # negatives tie with it (the score after the positives' run still equals up[g]).
    _, right_all = _left_right(up, alls, left_all, at_least=left_all + (pos_upto - pos_below))
    left = left_all
    left -= pos_below  # negatives below up[g]
    right = right_all - pos_upto  # negatives at or below up[g]
    del left_all, pos_upto, pos_below
    # Gap g (0..m) holds the negatives right[g-1]:left[g] (right[-1] = 0, left[m] = n), at
    # places right_all[g-1]:... of the sorted scores.
    nonempty = np.empty(m + 1, dtype=bool)
    nonempty[0] = left[0] > 0
    np.greater(left[1:], right[:-1], out=nonempty[1:m])
    nonempty[m] = n > right[-1]
    size = m + int(np.count_nonzero(nonempty))
    thr = np.empty(size, dtype=np.float64)
    tp = np.empty(size, dtype=np.int64)
    fp = np.empty(size, dtype=np.int64)
    blk = min(_BLOCK, m + 1)
    b_thr = np.empty(2 * blk)
    b_tp = np.empty(2 * blk, dtype=np.int64)
    b_fp = np.empty(2 * blk, dtype=np.int64)
    keep = np.ones(2 * blk, dtype=bool)
    gap_lo = np.empty(blk, dtype=np.intp)
    gap_at = np.empty(blk, dtype=np.intp)
    done = 0  # ascending output positions written so far
    for g0 in range(0, m + 1, blk):
        g1 = min(g0 + blk, m + 1)  # gaps g0..g1-1 and the positive thresholds before m
        k = g1 - g0
        u1 = min(g1, m)
        # Interleave ascending: gap g, then up[g]; the slot after gap m does not exist.
        rows = 2 * k - (1 if g1 == m + 1 else 0)
        lo_g, at_g = gap_lo[:k], gap_at[:k]
        if g0 == 0:
            lo_g[0] = at_g[0] = 0
            lo_g[1:] = right[: g1 - 1]
            at_g[1:] = right_all[: g1 - 1]
        else:
            lo_g[:] = right[g0 - 1 : g1 - 1]
            at_g[:] = right_all[g0 - 1 : g1 - 1]
        b_thr[0 : 2 * k : 2] = alls.take(at_g, mode="clip")  # index alls.size (empty gap) unread
        np.subtract(n, lo_g, out=b_fp[0 : 2 * k : 2])
        keep[0 : 2 * k : 2] = nonempty[g0:g1]
        tp_blk = b_tp[1 : 2 * (u1 - g0) : 2]
        if first is None:
            np.subtract(p, np.arange(g0, u1, dtype=np.int64), out=tp_blk)
        else:
            np.subtract(p, first[g0:u1], out=tp_blk)
        b_thr[1 : 2 * (u1 - g0) : 2] = up[g0:u1]
        np.subtract(n, left[g0:u1], out=b_fp[1 : 2 * (u1 - g0) : 2])
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


# ---------------------------------------------------------------------------------------------
# Merged kernel: one sort of integer keys that carry the label.


def _float_keys(
    s: np.ndarray, is_pos: np.ndarray, lo: float, hi: float
) -> tuple[np.ndarray, int] | None:
    """Keys ``2 k + label`` (int32 for float32 scores, int64 for float64) and the shift ``c``.

    ``k`` is the sign-magnitude integer of the score's bits, its magnitude lowered by ``c`` (and
    zero kept at zero): an order-preserving injective map as long as no non-zero score has a
    magnitude within ``c`` of zero. ``c`` is the least shift that leaves room for the label bit;
    it is 0 for scores below 2 in magnitude. None when some non-zero score is that close to zero
    (the keys would collide): the split kernel then takes over.
    """
    width = s.dtype.itemsize * 8
    itype = np.int32 if width == 32 else np.int64
    mag = itype(2 ** (width - 1) - 1)
    bound = np.array(max(abs(lo), abs(hi)), dtype=s.dtype)
    c = max(0, int(bound.view(itype)) - 2 ** (width - 2) + 1)
    c_t, shift = itype(c), itype(width - 1)
    bits = s.view(itype)
    lab = is_pos.view(np.uint8)
    z = np.empty(s.size, dtype=itype)
    sign = np.empty(min(_BLOCK, s.size), dtype=itype)
    for i in range(0, s.size, _BLOCK):
        b = bits[i : i + _BLOCK]
        k = z[i : i + _BLOCK]
        g = sign[: b.size]
        np.right_shift(b, shift, out=g)  # 0, or -1 for a negative score
        np.bitwise_and(b, mag, out=k)
        if c:
            k -= c_t
            if k.min() <= 0:
                low = k <= 0
                if np.any(low & (k != -c_t)):
                    return None
                k[low] = 0  # the zeros
        k ^= g
        k -= g  # two's complement of the signed magnitude
        k += k
        np.add(k, lab[i : i + _BLOCK], out=k, casting="unsafe")
    return z, c


def _decode_keys(
    keys: np.ndarray, c: int, ftype: type, out: np.ndarray, *, packed: bool = False
) -> None:
    """Scores (as float64, into ``out``) of keys made by :func:`_float_keys`; blockwise.

    With ``packed`` the 32-bit keys are the low halves of the int64 ``keys``.
    """
    itype = np.int32 if packed else keys.dtype.type
    width = np.dtype(itype).itemsize * 8
    c_t = itype(c)
    blk = min(_BLOCK, keys.size)
    v, g = np.empty(blk, dtype=itype), np.empty(blk, dtype=itype)
    low = np.empty(blk, dtype=np.uint32) if packed else None
    for i in range(0, keys.size, _BLOCK):
        kb = keys[i : i + _BLOCK]
        vb, gb = v[: kb.size], g[: kb.size]
        if low is not None:
            np.copyto(low[: kb.size], kb, casting="unsafe")  # the low 32 bits
            kb = low[: kb.size].view(np.int32)
        np.right_shift(kb, itype(1), out=vb)  # k
        np.right_shift(vb, itype(width - 1), out=gb)
        vb ^= gb
        vb -= gb  # |k|
        if c:
            vb += c_t
            vb[vb == c_t] = 0  # zero stays zero
        np.left_shift(gb, itype(width - 1), out=gb)  # the sign bit
        vb |= gb
        out[i : i + _BLOCK] = vb.view(ftype)


def _merged_rows(z: np.ndarray, p: int, count_only: bool = False) -> Iterator[Any]:
    """The compressed rows of sorted keys, block by block in ascending order.

    Yields ``(keys, tp, fp)`` of each block's kept rows, ascending (views of buffers reused for
    the next block), or with ``count_only`` just their number.

    Equal scores form a run of keys (negatives first: label 0 < 1). A run is a threshold; it
    holds positives exactly when its last key is odd, and it is kept when it or the run below
    it holds positives (the lowest run always). Its counts follow from its place ``a`` and the
    positives before it, ``b``: ``tp = p - b`` and ``fp = n - (a - b)``. Blocks end at run
    starts, so every run is whole in one block; a run longer than a block is counted alone by
    binary search.
    """
    big_n = z.size
    n = big_n - p
    blk = min(_SCAN_BLOCK, big_n)
    ktype = z.dtype
    utype = np.dtype(f"u{z.itemsize}")
    kmax = np.iinfo(ktype).max
    low = z.view(np.uint8)[(0 if _LITTLE else z.itemsize - 1) :: z.itemsize]
    lab = np.empty(blk, dtype=np.uint8)
    is_p = lab.view(bool)
    xb = np.empty(blk, dtype=ktype)
    st, keep, hb = (np.empty(blk, dtype=bool) for _ in range(3))
    cum, eb = np.empty(blk, dtype=np.intp), np.empty(blk, dtype=np.intp)
    rk, tb, fb = np.empty(blk, dtype=ktype), np.empty(blk, np.int64), np.empty(blk, np.int64)
    before, prev_has = 0, True
    i0 = 0
    while i0 < big_n:
        i1 = min(i0 + blk, big_n)
        if i1 < big_n:
            at = int(np.searchsorted(z[i0:i1], 2 * (int(z[i1]) >> 1))) + i0  # its run start
            if at == i0:  # one run longer than a block
                value = int(z[i0]) >> 1
                i1 = big_n if 2 * value + 2 > kmax else int(np.searchsorted(z, 2 * value + 2))
                pos_run = i1 - int(np.searchsorted(z[i0:i1], 2 * value + 1)) - i0
                has = pos_run > 0
                if has or prev_has:
                    if count_only:
                        yield 1
                    else:
                        tb[0], fb[0] = p - before, n - (i0 - before)
                        yield z[i0 : i0 + 1], tb[:1], fb[:1]
                before += pos_run
                prev_has = has
                i0 = i1
                continue
            i1 = at
        k = i1 - i0
        zb = z[i0:i1]
        lb, ib = lab[:k], is_p[:k]
        np.bitwise_and(low[i0:i1], 1, out=lb)
        np.bitwise_xor(zb[1:], zb[:-1], out=xb[: k - 1])
        stb = st[:k]
        stb[0] = True
        np.greater(xb[: k - 1].view(utype), 1, out=stb[1:])  # another value starts
        kb = keep[:k]
        if np.count_nonzero(stb) == k:  # all scores distinct: every place is a run
            kb[0] = ib[0] or prev_has
            np.logical_or(ib[1:], ib[:-1], out=kb[1:])
            starts, kr = None, kb
            last_has = bool(ib[-1])
        else:
            starts = np.flatnonzero(stb)
            nr = starts.size
            ends = eb[:nr]
            np.subtract(starts[1:], 1, out=ends[:-1])
            ends[-1] = k - 1
            has = hb[:nr]
            np.take(ib, ends, out=has, mode="clip")
            kr = kb[:nr]
            kr[0] = has[0] or prev_has
            np.logical_or(has[1:], has[:-1], out=kr[1:])
            last_has = bool(has[-1])
        prev_has = last_has
        i0 = i1
        if count_only:
            yield int(np.count_nonzero(kr))
            continue
        rows = np.flatnonzero(kr)
        if starts is not None:
            np.take(starts, rows, out=rows, mode="clip")
        r = rows.size
        np.cumsum(lb, out=cum[:k])  # positives in the block up to each place
        # positives before each kept run: the cumulative count minus its own first label
        b = tb[:r]
        np.take(cum, rows, out=b, mode="clip")
        b -= lb.take(rows, mode="clip")
        b += before
        f = fb[:r]
        np.subtract(rows, b, out=f)  # negatives before, less the block's start
        np.subtract(n - (i1 - k), f, out=f)
        np.subtract(p, b, out=b)
        np.take(zb, rows, out=rk[:r], mode="clip")
        before += int(cum[k - 1])
        yield rk[:r], b, f


def _merged_counts(
    s: np.ndarray, is_pos: np.ndarray, p: int, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Compressed counts of unweighted data by one sort of keys (None if keys do not fit).

    The sorted keys are scanned twice, once to count the rows and once to write them straight
    into their final (descending) place. Memory: the keys (one per score) and the three
    outputs; 32-bit keys (float32 scores, the tightest budget) ride in the low half of ``fp``
    until the sorted keys are freed, so the thresholds are allocated only then.
    """
    made = _float_keys(s, is_pos, lo, hi)
    if made is None:
        return None
    z, c = made
    del made  # z alone holds the keys: freed below, before the thresholds are allocated
    z.sort()
    size = sum(_merged_rows(z, p, count_only=True))
    packed = z.itemsize == 4 and s.size < 2**31
    rowkey = None if packed else np.empty(size, dtype=z.dtype)
    tp = np.empty(size, dtype=np.int64)
    fp = np.empty(size, dtype=np.int64)
    end = size
    for keys, t, f in _merged_rows(z, p):  # rows ascending: written from the end
        lo_ = end - keys.size
        tp[lo_:end][::-1] = t
        if rowkey is None:  # the key below the negatives count
            f <<= 32
            f += keys.view(np.uint32)
        else:
            rowkey[lo_:end][::-1] = keys
        fp[lo_:end][::-1] = f
        end = lo_
    del z
    if rowkey is None:
        thr = np.empty(size, dtype=np.float64)
        _decode_keys(fp, c, np.float32, thr, packed=True)
        fp >>= 32
    else:
        thr = rowkey.view(np.float64) if rowkey.itemsize == 8 else np.empty(size)
        _decode_keys(rowkey, c, s.dtype.type, thr)  # in place for 64-bit keys
    return thr, tp, fp


# ---------------------------------------------------------------------------------------------
# Dispatch.


def _compressed_unweighted(
    s: np.ndarray, is_pos: np.ndarray, lo: float | None = None, hi: float | None = None
) -> tuple[np.ndarray, ...]:
    """Compressed counts of unweighted data (thresholds descending, int64 tp and fp).

    ``s`` is float32 or float64 and finite; ``lo``/``hi`` its smallest and largest value when
    known. Few positives with few distinct float64 scores: the grid kernel. Few positives, or
    heavily tied ones (a sort of tied scores is cheap): the split kernel. Otherwise the merged
    kernel (the split kernel when its keys would collide).
    """
    p = int(np.count_nonzero(is_pos))
    n = s.size - p
    if p == 0 or n == 0:
        thr, dtp, dfp = _full_tables(is_pos, s, None)
        tp, fp = np.cumsum(dtp), np.cumsum(dfp)
        keep = _keep_mask(tp)
        return thr[keep], tp[keep], fp[keep]
    s = _float32_if_exact(s)
    pos, tied = None, False
    few = p <= _SPLIT_MAX_POSITIVE_FRACTION * n
    if p <= _FEW_POSITIVES or _heavily_tied(s, is_pos, p):
        pos = _select(s, is_pos, p)
        pos.sort()
        first = _first_of_runs(pos)
        tied = 2 * first.size <= p
        if _BUCKETS and (few or tied) and _use_buckets(first.size, n):
            up = pos[first]
            runs = np.diff(np.append(first, p))
            tp_up = np.cumsum(runs[::-1])[::-1].astype(np.int64)
            low = float(s.min()) if lo is None else lo
            return _compressed_buckets(up, tp_up, s, runs, low)
        # The grid's cost per score is fixed, a sort's drops with ties and with float32: the
        # grid takes only untied float64 scores.
        untied64 = not tied and s.dtype == np.float64
        if few and (untied64 or not _GRID_ONLY_UNTIED_FLOAT64) and _use_grid(first.size, n):
            up = pos[first]
            runs = np.diff(np.append(first, p))
            tp_up = np.cumsum(runs[::-1])[::-1].astype(np.int64)
            return _compressed_grid(up, tp_up, s, None, runs)
    if few or tied:
        return _split_counts(s, is_pos, p, pos)
    if lo is None or hi is None:
        lo, hi = float(s.min()), float(s.max())
    merged = _merged_counts(s, is_pos, p, lo, hi)
    return merged if merged is not None else _split_counts(s, is_pos, p, pos)


def _heavily_tied(s: np.ndarray, is_pos: np.ndarray, p: int) -> bool:
    """Whether a strided sample of the positives repeats scores often (few distinct scores)."""
    stride = max(1, p // _TIE_SAMPLE)
    sample = s[::stride][is_pos[::stride]]
    return np.unique(sample).size <= _TIED_FRACTION * sample.size


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
    return thr[::-1].astype(np.float64), dtp[::-1].copy(), dfp[::-1].copy()
