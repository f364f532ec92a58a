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
