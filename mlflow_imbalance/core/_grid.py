"""The grid lookup kernel: compressed counts without sorting the negatives (numpy only).

Private to :mod:`mlflow_imbalance.core._kernels` (which chooses among the kernels); see
:mod:`mlflow_imbalance.core.counts` for the algorithms. Every score is bucketed into its slot
among the sorted distinct positive scores by an exact uniform-grid lookup; per-slot counts and
minima then give the compressed curve (:func:`_assemble`, shared with the weighted kernel).
"""

from __future__ import annotations

import numpy as np

#: Values handled per vectorised step of every blockwise loop.
_BLOCK = 1 << 16
#: Grid cells per distinct positive score in the lookup kernel, and the largest grid (its table
#: stays in cache).
_GRID_CELLS_PER_POSITIVE = 16
_GRID_MAX_CELLS = 1 << 19
#: Use the lookup kernel for at most this many distinct positive scores.
_GRID_MAX_POSITIVES = _GRID_MAX_CELLS // _GRID_CELLS_PER_POSITIVE
#: Below this many negatives the lookup's set-up cost is not worth it.
_GRID_MIN_NEGATIVES = 1 << 12
#: Linear probing steps in a crowded grid cell before switching to binary search.
_GRID_PROBE_ROUNDS = 4
#: Scores per bincount / minimum call in the lookup kernel.
_GRID_CHUNK = 1 << 20
_F32_SAFE = 1e37


class _GridMap:
    """Exact slot lookup on a uniform grid over the distinct positive scores ``up``.

    A monotone non-decreasing cell map ``f`` (an affine map of the value onto a uniform grid of
    about 16 cells per element of ``up``, rounded and clipped) sends a value ``x`` to a cell.
    Monotonicity alone makes the lookup exact whatever the floating-point rounding: every
    ``up[j]`` with ``f(up[j]) < f(x)`` is below ``x`` and every one with ``f(up[j]) > f(x)`` is
    above it. So for a cell holding no element of ``up`` a table gives the slot directly; values
    in the few cells that do hold some are resolved by probing ``up`` upwards from the cell's
    first element (and, after a few probes, by binary search). With clustered ``up`` more values
    reach the exact fallback, never a wrong answer.
    """

    def __init__(self, up: np.ndarray) -> None:
        m = up.size
        cells = 1 << max(6, int(np.ceil(np.log2(_GRID_CELLS_PER_POSITIVE * m))))
        cells = min(cells, _GRID_MAX_CELLS)
        use_f32 = abs(float(up[0])) < _F32_SAFE and abs(float(up[-1])) < _F32_SAFE
        self.ftype = np.float32 if use_f32 else np.float64
        self.lo = float(up[0])
        span = float(up[-1]) - float(up[0])
        scale = self.ftype(cells / span) if span > 0 else self.ftype(1.0)
        if not (0.0 < float(scale) < np.inf):
            scale = self.ftype(1.0)
        self.scale = scale
        self.top = self.ftype(cells)
        self.up = up
        self.up_pad = np.append(up, np.inf)  # sentinel: every x is finite
        self._t = np.empty(_BLOCK, dtype=self.ftype)
        self._crowded = np.empty(_BLOCK, dtype=bool)
        cell_up = np.empty(m, dtype=np.intp)
        for i in range(0, m, _BLOCK):
            self._cells(up[i : i + _BLOCK], cell_up[i : i + _BLOCK])
        # first[c] = number of up with cell < c; cells holding no element of up are "pure".
        per_cell = np.bincount(cell_up, minlength=cells + 2)
        first = np.zeros(cells + 2, dtype=np.intp)
        np.cumsum(per_cell[:-1], out=first[1:])
        self.lut = np.where(per_cell == 0, 2 * first, -1 - 2 * first)
        # Tied scores (rounded, discrete) crowd the cells of up: there a cell holding one
        # element v of up gives the slot as 2 first + (x >= v) + (x > v) with no search.
        single = per_cell == 1
        self._base = np.where(per_cell <= 1, 2 * first, self.lut)
        self._value = np.full(cells + 2, np.inf, dtype=up.dtype)  # x < inf: slot 2 first
        self._value[single] = up[first[single]]
        self._v = np.empty(_BLOCK, dtype=up.dtype)
        self.tied = False  # set after a crowded block

    def _cells(self, v: np.ndarray, out: np.ndarray) -> None:
        t = self._t[: v.size]
        with np.errstate(over="ignore", invalid="ignore"):
            # Each step rounds monotonically (overflow to +-inf included): f stays monotone.
            np.subtract(v, self.lo, out=t, casting="unsafe")
            np.multiply(t, self.scale, out=t)
        np.clip(t, self.ftype(-1.0), self.top, out=t)
        t += self.ftype(1.0)
        np.copyto(out, t, casting="unsafe")  # in [0, cells + 1]; truncation = floor here

    def slots(self, x: np.ndarray, out: np.ndarray) -> None:
        """``out[i] = 2 * #(up < x[i]) + (x[i] in up)`` for a block of at most ``_BLOCK``."""
        self._cells(x, out)
        if self.tied:
            v = self._v[: x.size]
            self._value.take(out, out=v, mode="clip")
            self._base.take(out, out=out, mode="clip")
            out += x >= v
            out += x > v
        else:
            self.lut.take(out, out=out, mode="clip")  # in place; indices are always in range
        crowded = self._crowded[: x.size]
        np.less(out, 0, out=crowded)
        if not crowded.any():
            return
        idx = np.flatnonzero(crowded)
        if idx.size * 8 > x.size:
            self.tied = True
        xi = x[idx]
        below = (-1 - out[idx]) // 2  # #up in lower cells: a lower bound of #(up < xi)
        active = np.arange(idx.size)
        for _ in range(_GRID_PROBE_ROUNDS):
            active = active[self.up_pad[below[active]] < xi[active]]
            if not active.size:
                break
            below[active] += 1
        else:
            if active.size:
                below[active] = np.searchsorted(self.up, xi[active], side="left")
        out[idx] = 2 * below + (self.up_pad[below] == xi)


def _grid_slots(up: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Slot of every value of ``x``: ``2 * #(up < x) + (x in up)``, exact, without sorting ``x``.

    ``up`` is strictly ascending and finite; see :class:`_GridMap`. The cost is a handful of
    vectorised passes over ``x``, O(n + m), whatever the data.
    """
    x = x.astype(up.dtype, copy=False)  # one cell map for both: monotone, hence exact
    gm = _GridMap(up)
    out = np.empty(x.size, dtype=np.intp)
    for i in range(0, x.size, _BLOCK):
        gm.slots(x[i : i + _BLOCK], out[i : i + _BLOCK])
    return out


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
    up: np.ndarray,
    tp_up: np.ndarray,
    x: np.ndarray,
    w_x: np.ndarray | None,
    pos_per_up: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compressed counts with scores bucketed by :class:`_GridMap` (never sorted).

    ``x`` holds the negatives (``w_x`` their weights, or None), or, unweighted, every score
    when ``pos_per_up`` gives the number of positives at each of ``up``: positives fall exactly
    in the odd slots, where they are subtracted, and never in a gap.
    """
    size = 2 * up.size + 1
    gm = _GridMap(up)
    count = np.zeros(size, dtype=np.int64)
    weight = np.zeros(size) if w_x is not None else None
    slot_min = np.full(size, np.inf, dtype=x.dtype)
    slot = np.empty(min(_GRID_CHUNK, x.size), dtype=np.intp)
    for c0 in range(0, x.size, _GRID_CHUNK):
        xc = x[c0 : c0 + _GRID_CHUNK]
        sc = slot[: xc.size]
        for i in range(0, xc.size, _BLOCK):
            gm.slots(xc[i : i + _BLOCK], sc[i : i + _BLOCK])
        count += np.bincount(sc, minlength=size)
        if weight is not None:
            weight += np.bincount(sc, weights=w_x[c0 : c0 + _GRID_CHUNK], minlength=size)
        np.minimum.at(slot_min, sc, xc)
    if pos_per_up is not None:
        count[1::2] -= pos_per_up
    fp_in_slot = count if weight is None else weight
    fp_slot = np.cumsum(fp_in_slot[::-1])[::-1]  # negatives in this slot and above
    return _assemble(up, tp_up, fp_slot[1::2], count[0::2] > 0, slot_min[0::2], fp_slot[0::2])


def _use_grid(m: int, n: int) -> bool:
    return n >= _GRID_MIN_NEGATIVES and m <= _GRID_MAX_POSITIVES


# ---------------------------------------------------------------------------------------------
# Bucket kernel: few distinct positive scores, tied or not, float32 or float64, one pass.
#
# Nothing is sorted but the positives and a few per cent of the scores, so the cost does not
# depend on ties (nor on numpy's sort, which is SIMD on some CPUs and scalar on others). Every
# score is bucketed by a monotone cell map (as :class:`_GridMap`) and one table lookup
# ``r = rep[cell]``; ``np.add.at`` counts the keys ``cell + cells * (x >= r)``, and the scores
# with ``x > r`` are copied out. A cell's keys (below r, then at or above it) and the cells are
# ordered like the scores. The representative of a cell is
#
# * the distinct positive score in it, when it holds exactly one: below it, tied with it
#   (counted; the copied-out scores above it are taken off) and above it, exactly;
# * -inf ("copy out") when it holds several, where the data are sparse, and (unrounded scores)
#   the cell after one whose highest positive score leaves few scores above it in its cell;
# * for scores rounded to d decimals (the positives tell; integers are d = 0), the one value of
#   the decimal lattice in the cell (cells are finer than the lattice); otherwise the value of
#   a tie spike a strided sample found in it (sampled scores all equal): the scores tied with
#   it are then known without being looked at;
# * +inf otherwise: the cell lies inside one gap and only its count matters.
#
# The copied-out scores are sorted and counted exactly by binary search against the positive
# scores. Each gap's smallest negative is that of its lowest key holding scores: a copied-out
# score, a representative (scores at it), or -- only when the sample misjudged the data -- the
# minimum of a below key, found by a second pass over the scores of just those cells.
# ---------------------------------------------------------------------------------------------

#: Cells per distinct positive score in the bucket kernel, and the least number of cells per
#: score (fine cells separate the values of rounded scores).
_BUCKET_CELLS_PER_POSITIVE = 8
_BUCKET_SCORES_PER_CELL = 128
_BUCKET_MIN_CELLS = 1 << 6
_BUCKET_MAX_CELLS = 1 << 18
#: Scores per vectorised step of the bucket kernel (its temporaries stay in cache).
_BUCKET_BLOCK = 1 << 14
#: Size of the strided sample that estimates where scores are sparse and finds tie spikes.
_BUCKET_SAMPLE = 1 << 16
#: Cells expected to hold fewer scores than this are copied out whole.
_BUCKET_SPARSE = 24.0


class _CellMap:
    """Monotone map of scores onto cells ``0..cells + 2`` around ``[up[0], up[-1]]``."""

    def __init__(self, up: np.ndarray, cells: int, block: int) -> None:
        use_f32 = abs(float(up[0])) < _F32_SAFE and abs(float(up[-1])) < _F32_SAFE
        self.ftype = np.float32 if use_f32 else np.float64
        span = float(up[-1]) - float(up[0])
        scale = cells / span if span > 0 else 1.0
        if not (0.0 < scale < np.inf):
            scale = 1.0
        origin = float(up[0]) - 1.0 / scale
        self.origin = origin if np.isfinite(origin) else float(up[0])
        self.scale = self.ftype(scale)
        self.top = self.ftype(cells + 2)
        self.zero = self.ftype(0.0)
        self._t = np.empty(block, dtype=self.ftype)

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        t = self._t[: x.size]
        with np.errstate(over="ignore", invalid="ignore"):
            # Each step rounds monotonically (overflow to +-inf included): the map stays monotone.
            np.subtract(x, self.origin, out=t, casting="unsafe")
            np.multiply(t, self.scale, out=t)
        np.clip(t, self.zero, self.top, out=t)
        np.copyto(out, t, casting="unsafe")  # in [0, cells + 2]; truncation = floor here

    def cells_of(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(x.size, dtype=np.intp)
        for i in range(0, x.size, self._t.size):
            self(x[i : i + self._t.size], out[i : i + self._t.size])
        return out


def _decimal_lattice(up: np.ndarray) -> int | None:
    """The fewest decimals ``d`` (0..6) to which every score of ``up`` is rounded, or None.

    Rounded to ``d`` decimals means equal to ``rint(v * 10**d) / 10**d`` in the scores' own
    precision: what ``np.round`` and correctly rounded decimal output produce.
    """
    for d in range(7):
        scale = up.dtype.type(10**d)
        with np.errstate(over="ignore", invalid="ignore"):
            if np.array_equal(np.rint(up * scale) / scale, up):
                return d
    return None


def _bucket_cells(m: int, n: int, up: np.ndarray) -> tuple[int, int | None]:
    """Cells of the bucket kernel's map, and the decimals of the scores' lattice (or None).

    For rounded scores the cells are finer than the lattice, one lattice value at most each.
    """
    want = max(_BUCKET_CELLS_PER_POSITIVE * m, n // _BUCKET_SCORES_PER_CELL, _BUCKET_MIN_CELLS)
    d = _decimal_lattice(up)
    if d is not None:
        span = (float(up[-1]) - float(up[0])) * 10.0**d
        if span * 1.25 + 2 <= _BUCKET_MAX_CELLS:
            want = max(want, int(span * 1.25) + 2)
        else:
            d = None
    return min(1 << int(np.ceil(np.log2(want))), _BUCKET_MAX_CELLS), d


def _lattice_reps(s: np.ndarray, cmap: _CellMap, cells: int, d: int, rep: np.ndarray) -> None:
    """Set ``rep`` of each cell that holds exactly one value of the decimal lattice to it."""
    scale = 10.0**d
    a = float(cmap.origin)
    b = a + (cells + 2) / float(cmap.scale)
    k_lo, k_hi = np.floor(a * scale) - 1, np.ceil(b * scale) + 2
    if not (-(2.0**24) < k_lo <= k_hi < 2.0**24 and k_hi - k_lo <= 4 * cells):
        return  # k exact in float32 too
    k = np.arange(k_lo, k_hi + 1)
    values = k.astype(s.dtype) / s.dtype.type(scale)
    lc = cmap.cells_of(values)
    alone = np.ones(lc.size, dtype=bool)  # the only lattice value of its cell
    same = lc[1:] == lc[:-1]
    alone[1:] &= ~same
    alone[:-1] &= ~same
    rep[lc[alone]] = values[alone]


def _bucket_reps(
    s: np.ndarray, up: np.ndarray, cmap: _CellMap, cells: int, d: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each cell's representative, and the distinct positive scores below and in each cell.

    See the section comment.
    """
    size = cells + 3
    cell_up = cmap.cells_of(up)
    per_cell = np.bincount(cell_up, minlength=size)
    first = np.zeros(size, dtype=np.intp)
    np.cumsum(per_cell[:-1], out=first[1:])
    rep = np.full(size, np.inf, dtype=s.dtype)
    # The sample: tie spikes (cells whose sampled scores are all equal, twice or more) and the
    # expected number of scores per cell (sampled counts over groups of cells, for sparseness).
    sample = s[:: max(1, s.size // _BUCKET_SAMPLE)]
    sc = cmap.cells_of(sample)
    shift = max(0, int(np.log2(cells)) - 10)  # about 1024 groups
    group = np.bincount(sc >> shift, minlength=(size >> shift) + 1)
    expected = group[np.arange(size) >> shift] * (s.size / sample.size / (1 << shift))
    if d is not None:
        _lattice_reps(s, cmap, cells, d, rep)
        known = rep < np.inf
    else:
        hits = np.bincount(sc, minlength=size)
        lo_v = np.full(size, np.inf, dtype=s.dtype)
        hi_v = np.full(size, -np.inf, dtype=s.dtype)
        np.minimum.at(lo_v, sc, sample)
        np.maximum.at(hi_v, sc, sample)
        known = (hits >= 2) & (lo_v == hi_v)
        rep[known] = lo_v[known]
    single = per_cell == 1
    rep[single] = up[first[single]]
    extract = (per_cell >= 2) | ((expected < _BUCKET_SPARSE) & ~known)
    if d is None:
        # A cell's highest positive score near its top leaves few scores above it there: the
        # next cell is copied out too (its lowest score may be the gap's smallest negative).
        one = np.flatnonzero(per_cell)
        top = up[first[one] + per_cell[one] - 1]  # the highest positive score of the cell
        t = (top.astype(np.float64) - cmap.origin) * float(cmap.scale)
        above = np.clip(one + 1 - t, 0.0, 1.0) * expected[one]
        nxt = one[above < _BUCKET_SPARSE] + 1
        extract[nxt[nxt < size]] = True
    rep[extract] = -np.inf
    return rep, first, per_cell


def _compressed_buckets(
    up: np.ndarray, tp_up: np.ndarray, s: np.ndarray, pos_per_up: np.ndarray, lo: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compressed counts of unweighted scores ``s`` (positives included) by one bucketing pass.

    See the section comment: at most a few per cent of the scores are copied out and sorted.

    ``up``: distinct positive scores, ascending, same dtype as ``s``; ``tp_up`` positives at or
    above each; ``pos_per_up`` positives at each; ``lo`` the smallest score.
    """
    m, big_n = up.size, s.size
    cells, d = _bucket_cells(m, big_n, up)
    size = cells + 3
    blk = min(_BUCKET_BLOCK, big_n)
    cmap = _CellMap(up, cells, blk)
    rep, first, per_cell = _bucket_reps(s, up, cmap, cells, d)
    count = np.zeros(2 * size, dtype=np.intp)  # below rep, then at or above it
    cb = np.empty(blk, dtype=np.intp)
    kb = np.empty(blk, dtype=np.intp)
    rb = np.empty(blk, dtype=s.dtype)
    at_or_above = np.empty(blk, dtype=bool)
    above = np.empty(blk, dtype=bool)
    out_x: list[np.ndarray] = []
    out_c: list[np.ndarray] = []
    for i in range(0, big_n, blk):
        xb = s[i : i + blk]
        k = xb.size
        c, key, r, ge, gt = cb[:k], kb[:k], rb[:k], at_or_above[:k], above[:k]
        cmap(xb, c)
        rep.take(c, out=r, mode="clip")
        np.greater_equal(xb, r, out=ge)
        np.greater(xb, r, out=gt)
        np.multiply(ge, size, out=key, dtype=np.intp)
        key += c
        np.add.at(count, key, 1)
        idx = np.flatnonzero(gt)
        if idx.size:
            out_x.append(xb[idx])
            out_c.append(c[idx])
    x_out = np.concatenate(out_x) if out_x else np.zeros(0, dtype=s.dtype)
    if out_c:  # copied out: counted below, exactly
        count[size:] -= np.bincount(np.concatenate(out_c), minlength=size)
    del out_x, out_c
    x_out.sort()
    below_c, at_c = count[:size], count[size:]  # at_c: now just the scores tied with rep
    # Per-slot counts (slot 2g: gap below up[g]; 2g + 1: tied with up[g]) of the scores left in
    # the table, then of those copied out.
    slots = 2 * m + 1
    neg = np.bincount(2 * first, weights=below_c + at_c, minlength=slots)
    one = np.flatnonzero(per_cell == 1)
    neg[2 * first[one]] -= at_c[one]  # at a positive score: its own slot
    neg[2 * first[one] + 1] += at_c[one]
    neg = neg.astype(np.int64)  # counts below 2**53 are exact in float64
    left = np.searchsorted(x_out, up, side="left")
    right = np.searchsorted(x_out, up, side="right")
    neg[1::2] += right - left
    start = np.zeros(m + 1, dtype=np.intp)  # copied-out scores of gap g: start[g]:end[g]
    start[1:] = right
    end = np.append(left, x_out.size)
    neg[0::2] += end - start
    neg[1::2] -= pos_per_up
    gap_nonempty = neg[0::2] > 0
    # Each gap's smallest negative: the lowest key of the gap holding scores decides.
    gap_min = np.zeros(m + 1, dtype=np.float64)
    none = size  # no such key
    low_left = np.full(m + 1, none, dtype=np.intp)  # lowest cell with uncopied scores below rep
    low_at = np.full(m + 1, none, dtype=np.intp)  # ... with scores at a tie spike's rep
    nz = np.flatnonzero(below_c)
    _first_per_gap(first[nz], nz, low_left)
    spike_at = np.flatnonzero((at_c > 0) & (per_cell == 0))
    _first_per_gap(first[spike_at], spike_at, low_at)
    has_out = end > start
    cand_cell = np.full(m + 1, none, dtype=np.intp)
    gi = np.flatnonzero(has_out)
    cand = x_out[start[gi]]
    cand_cell[gi] = cmap.cells_of(cand)
    gap_min[gi] = cand
    # A cell's keys are ordered below < at < above, and cells by value: compare (cell, key).
    use_at = (low_at < low_left) & (low_at <= cand_cell)
    gap_min[use_at] = rep[low_at[use_at]]
    need = gap_nonempty & ~use_at & ~(has_out & (cand_cell < low_left))
    if gap_nonempty[0]:
        gap_min[0] = lo
        need[0] = False
    if need.any():
        gap_min[need] = _cell_minima(s, cmap, rep, low_left[need], blk)
    fp_slot = np.cumsum(neg[::-1])[::-1]  # negatives in this slot and above
    return _assemble(up, tp_up, fp_slot[1::2], gap_nonempty, gap_min, fp_slot[0::2])


def _first_per_gap(gaps: np.ndarray, cells: np.ndarray, out: np.ndarray) -> None:
    """``out[g]`` = the first of ``cells`` (ascending) whose gap (``gaps``, non-decreasing) is g."""
    if gaps.size:
        new = np.empty(gaps.size, dtype=bool)
        new[0] = True
        np.not_equal(gaps[1:], gaps[:-1], out=new[1:])
        out[gaps[new]] = cells[new]


def _cell_minima(
    s: np.ndarray, cmap: _CellMap, rep: np.ndarray, wanted: np.ndarray, blk: int
) -> np.ndarray:
    """Smallest score below ``rep`` in each of the ``wanted`` cells (a second pass over ``s``)."""
    flag = np.zeros(rep.size, dtype=bool)
    flag[wanted] = True
    low = np.full(rep.size, np.inf, dtype=s.dtype)
    cb = np.empty(blk, dtype=np.intp)
    fb = np.empty(blk, dtype=bool)
    for i in range(0, s.size, blk):
        xb = s[i : i + blk]
        c, f = cb[: xb.size], fb[: xb.size]
        cmap(xb, c)
        flag.take(c, out=f, mode="clip")
        idx = np.flatnonzero(f)
        if idx.size:
            xi, ci = xb[idx], c[idx]
            keep = xi < rep[ci]
            np.minimum.at(low, ci[keep], xi[keep])
    return low[wanted].astype(np.float64)


#: The bucket kernel takes at most this many distinct positive scores and at least this many
#: negatives (below, sorting is cheaper than its set-up).
_BUCKET_MAX_POSITIVES = 1 << 15
_BUCKET_MIN_NEGATIVES = 1 << 14


def _use_buckets(m: int, n: int) -> bool:
    return n >= _BUCKET_MIN_NEGATIVES and m <= _BUCKET_MAX_POSITIVES
