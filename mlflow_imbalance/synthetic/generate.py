"""Positives synthesised from negatives (Cataltepe et al. §III).

Fault patterns, the exact exclusion join against the reference examples, and the result object.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlflow_imbalance.synthetic._checks import (
    _DEFAULT_CHUNK,
    _EPS,
    _MAX_CANDIDATES,
    _as_matrix,
    _check_directions,
    _check_feature_weights,
    _check_positive_int,
    _check_thresholds,
    _feature_names,
)

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- fault patterns
@dataclass(frozen=True)
class _Patterns:
    """Every fault pattern, and the probability that a candidate of it is drawn.

    ``features`` (shape (P, m)) says which features move, ``signs`` (+1/-1, same shape) how.
    """

    features: np.ndarray
    signs: np.ndarray
    prob: np.ndarray


def _fault_patterns(
    k: int,
    m: int,
    allowed: list[tuple[int, ...]],
    weights: np.ndarray | None,
    n_fault_sets: int | None,
    gen: np.random.Generator | None,
) -> _Patterns:
    n_sets = math.comb(k, m)
    if n_fault_sets is None or n_fault_sets >= n_sets:
        sets = np.array(list(itertools.combinations(range(k), m)), dtype=np.intp).reshape(-1, m)
    else:
        assert gen is not None
        if n_sets <= 4 * n_fault_sets or n_sets <= 100_000:
            all_sets = np.array(list(itertools.combinations(range(k), m)), dtype=np.intp)
            pick = np.sort(gen.choice(n_sets, size=n_fault_sets, replace=False))
            sets = all_sets.reshape(-1, m)[pick]
        else:  # sparse: rejection sampling of distinct sorted subsets
            chosen: set[tuple[int, ...]] = set()
            while len(chosen) < n_fault_sets:
                chosen.add(tuple(sorted(gen.choice(k, size=m, replace=False).tolist())))
            sets = np.array(sorted(chosen), dtype=np.intp)
    feats, signs = [], []
    for fs in sets:
        for sg in itertools.product(*(allowed[i] for i in fs)):
            feats.append(fs)
            signs.append(sg)
    features = np.asarray(feats, dtype=np.intp).reshape(-1, m)
    sign_arr = np.asarray(signs, dtype=np.int8).reshape(-1, m)
    if weights is None:
        prob = np.ones(features.shape[0])
    else:
        like = np.prod(weights[features], axis=1)
        prob = like / like.max()
    return _Patterns(features, sign_arr, prob)


def _thinned_rows(prob: float, n: int, seed: int | None, p: int) -> np.ndarray:
    """Rows kept for pattern ``p``.

    All rows when ``prob == 1``, else an independent Bernoulli draw from a stream seeded by
    ``(seed, p)``, so the result does not depend on chunking.
    """
    if prob >= 1.0:
        return np.arange(n)
    if prob <= 0.0:
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(np.random.default_rng([seed, p]).random(n) < prob)


# --------------------------------------------------------------------------- the join
def _windows(
    sorted_col: np.ndarray, centre: np.ndarray, half_width: float
) -> tuple[np.ndarray, np.ndarray]:
    """Index ranges ``[lo, hi)`` of ``sorted_col`` within ``centre ± half_width`` (plus slack).

    The slack (a few ulps of the magnitudes involved) makes the window a superset of every
    reference value that can pass the exact float64 test later; it never decides anything.
    """
    big = float(np.max(np.abs(sorted_col))) if sorted_col.size else 0.0
    slack = 8 * _EPS * (np.abs(centre) + 2 * half_width + big) + 1e-300
    lo = np.searchsorted(sorted_col, centre - half_width - slack, side="left")
    hi = np.searchsorted(sorted_col, centre + half_width + slack, side="right")
    return lo, hi


def _pair_blocks(
    lo: np.ndarray, hi: np.ndarray, chunk_size: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """All (query, sorted reference position) pairs with ``lo[q] <= pos < hi[q]``.

    Yielded in blocks of at most ``chunk_size`` pairs, so memory does not depend on how many
    pairs there are.
    """
    counts = (hi - lo).astype(np.int64)
    ends = np.cumsum(counts)
    total = int(ends[-1]) if ends.size else 0
    begins = ends - counts
    for b0 in range(0, total, chunk_size):
        b1 = min(b0 + chunk_size, total)
        # Queries whose pair ranges overlap [b0, b1), and how many of their pairs fall inside.
        q0 = int(np.searchsorted(ends, b0, side="right"))
        q1 = int(np.searchsorted(ends, b1 - 1, side="right")) + 1
        qs = np.arange(q0, q1)
        first = np.maximum(begins[q0:q1], b0)
        take = np.minimum(ends[q0:q1], b1) - first
        q = np.repeat(qs, take)
        offset = np.arange(b1 - b0, dtype=np.int64) - np.repeat(first - b0, take)
        yield q, lo[q] + np.repeat(first - begins[q0:q1], take) + offset


def _window_sizes(X: np.ndarray, R_sorted_cols: np.ndarray, half_width: np.ndarray) -> np.ndarray:
    """Total window size per coordinate: how selective sorting on each coordinate would be."""
    sizes = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        lo, hi = _windows(R_sorted_cols[:, j], X[:, j], float(half_width[j]))
        sizes[j] = float(np.sum(hi - lo))
    return sizes


class _Reference:
    """The reference set sorted on its most selective coordinate, with the filter order."""

    def __init__(self, R: np.ndarray, X: np.ndarray, half_width: np.ndarray) -> None:
        sizes = _window_sizes(X, np.sort(R, axis=0), half_width)
        order = np.argsort(sizes, kind="stable")  # most selective coordinate first
        self.axis = int(order[0])
        # The window already bounds the sort coordinate, so it is filtered last.
        self.order = np.concatenate((order[1:], order[:1]))
        perm = np.argsort(R[:, self.axis], kind="stable")
        self.rows = R[perm]
        self.cols = np.ascontiguousarray(self.rows.T)
        self.sorted_axis = self.cols[self.axis]


def _exclusion_single(X: np.ndarray, R: np.ndarray, d: np.ndarray, chunk_size: int) -> np.ndarray:
    """Exact exclusion of every single-feature candidate: bool array (n, k, 2).

    ``out[j, i, 0]`` is True when ``X[j] + D_i`` is dropped, ``out[j, i, 1]`` for ``X[j] - D_i``.
    """
    n, k = X.shape
    out = np.zeros((n, k, 2), dtype=bool)
    if R.shape[0] == 0:
        return out
    ref = _Reference(R, X, 2 * d)
    XT = np.ascontiguousarray(X.T)
    a = ref.axis
    lo, hi = _windows(ref.sorted_axis, X[:, a], 2 * float(d[a]))
    # Cheap superset pre-filter |x_j - r_j| <= 2 d_j (+ ulps) on the most selective coordinates.
    mag = np.max(np.abs(X), axis=0) + np.max(np.abs(R), axis=0)
    limit = 2 * d * (1 + 8 * _EPS) + 8 * _EPS * mag
    for src, pos in _pair_blocks(lo, hi, chunk_size):
        n_block = src.size
        for j in ref.order[:-1]:
            keep = np.abs(XT[j, src] - ref.cols[j, pos]) <= limit[j]
            src, pos = src[keep], pos[keep]
            if src.size * 8 < n_block:
                break
        bad = np.full(src.size, -1, dtype=np.intp)  # the one coordinate outside the box
        for j in ref.order:
            xj = XT[j, src]
            rj = ref.cols[j, pos]
            outside = np.flatnonzero(~(np.abs(xj - rj) < d[j]))
            if outside.size == 0:
                continue
            xo, ro = xj[outside], rj[outside]
            movable = (np.abs((xo + d[j]) - ro) < d[j]) | (np.abs((xo - d[j]) - ro) < d[j])
            drop = (bad[outside] >= 0) | ~movable
            bad[outside[~drop]] = j
            keep = np.ones(src.size, dtype=bool)
            keep[outside[drop]] = False
            src, pos, bad = src[keep], pos[keep], bad[keep]
            if src.size == 0:
                break
        if src.size == 0:
            continue
        # Pairs inside the box on every coordinate: may exclude a candidate along any feature.
        inside = bad < 0
        if inside.any():
            xs, rs = X[src[inside]], ref.rows[pos[inside]]
            for s_idx, delta in ((0, d), (1, -d)):
                rr, cc = np.nonzero(np.abs((xs + delta) - rs) < d)
                out[src[inside][rr], cc, s_idx] = True
        # Pairs outside on exactly one coordinate j: only the candidates along j.
        one = ~inside
        if one.any():
            j = bad[one]
            s1 = src[one]
            xj = X[s1, j]
            rj = ref.rows[pos[one], j]
            up = np.abs((xj + d[j]) - rj) < d[j]
            down = np.abs((xj - d[j]) - rj) < d[j]
            out[s1[up], j[up], 0] = True
            out[s1[down], j[down], 1] = True
    return out


def _exclusion_general(
    U: np.ndarray, ref: _Reference, d: np.ndarray, chunk_size: int
) -> np.ndarray:
    """Exact exclusion of arbitrary candidates ``U``: any reference within ``d`` everywhere."""
    excluded = np.zeros(U.shape[0], dtype=bool)
    if ref.rows.shape[0] == 0:
        return excluded
    UT = np.ascontiguousarray(U.T)
    a = ref.axis
    lo, hi = _windows(ref.sorted_axis, U[:, a], float(d[a]))
    for q, pos in _pair_blocks(lo, hi, chunk_size):
        for j in ref.order:
            keep = np.abs(UT[j, q] - ref.cols[j, pos]) < d[j]
            q, pos = q[keep], pos[keep]
            if q.size == 0:
                break
        excluded[q] = True
    return excluded


def _apply(X: np.ndarray, rows: np.ndarray, feats: np.ndarray, signs: np.ndarray, d: np.ndarray):
    """Candidates ``X[rows]`` moved by ``sign * d`` along each feature of the pattern."""
    U = X[rows].copy()
    for f, s in zip(feats.tolist(), signs.tolist(), strict=True):
        U[:, f] = U[:, f] + s * d[f]
    return U


# --------------------------------------------------------------------------- results
@dataclass(eq=False)
class SyntheticPositives:
    """Positives synthesised from negative examples (Cataltepe et al., §III).

    Attributes:
        source: row position (0-based) in ``X_negative`` of the example each positive was made
            from, shape ``(n_pos,)``.
        feature: index of the perturbed feature, shape ``(n_pos,)``; shape
            ``(n_pos, n_faulty_features)`` when several features fail at once.
        direction: +1 when the feature was moved up by its threshold, -1 when down; same
            shape as ``feature``.
        thresholds: the fault thresholds ``d`` (float64, one per feature).
        feature_names: every feature's name (the DataFrame's columns, else ``x0, x1, ...``).
        n_candidates: candidates tested (after any sampling by ``feature_weights``).
        n_faulty_features: how many features each positive perturbs.
    """

    source: np.ndarray
    feature: np.ndarray
    direction: np.ndarray
    thresholds: np.ndarray
    feature_names: tuple[str, ...]
    n_candidates: int
    n_faulty_features: int = 1
    _X: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))
    _columns: Any = field(repr=False, default=None)
    _index: Any = field(repr=False, default=None)
    _cache: dict[str, Any] = field(repr=False, default_factory=dict)

    def __len__(self) -> int:
        return int(self.source.size)

    @property
    def n_excluded(self) -> int:
        """Candidates dropped by the exclusion rule."""
        return self.n_candidates - len(self)

    def _features_2d(self) -> np.ndarray:
        return self.feature.reshape(self.source.size, self.n_faulty_features)

    def _directions_2d(self) -> np.ndarray:
        return self.direction.reshape(self.source.size, self.n_faulty_features)

    def values(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """The positives (or a slice of them) as a float64 array, built from the sources."""
        sel = slice(None) if rows is None else rows
        src = self.source[sel]
        feats = self._features_2d()[sel]
        dirs = self._directions_2d()[sel]
        out = self._X[src].copy()
        idx = np.arange(src.size)
        for t in range(feats.shape[1]):
            f = feats[:, t]
            out[idx, f] = out[idx, f] + dirs[:, t] * self.thresholds[f]
        return out

    def _wrap(self, arr: np.ndarray) -> Any:
        if self._columns is None:
            return arr
        import pandas as pd

        return pd.DataFrame(arr, columns=self._columns)

    @property
    def positives(self) -> Any:
        """The synthesised positives, built once then cached.

        An ``(n_pos, k)`` float64 array, or a DataFrame with the input's column names when
        ``X_negative`` was a DataFrame.
        """
        if "positives" not in self._cache:
            self._cache["positives"] = self._wrap(self.values())
        return self._cache["positives"]

    def batches(self, batch_size: int = _DEFAULT_CHUNK) -> Iterator[tuple[slice, Any]]:
        """Yield ``(slice, positives[slice])`` without building all positives at once."""
        batch_size = _check_positive_int(batch_size, "batch_size")
        for b0 in range(0, len(self), batch_size):
            sl = slice(b0, min(b0 + batch_size, len(self)))
            yield sl, self._wrap(self.values(sl))

    @property
    def feature_name(self) -> np.ndarray:
        """Name of the perturbed feature of every positive (same shape as ``feature``)."""
        return np.asarray(self.feature_names, dtype=object)[self.feature]

    @property
    def source_index(self) -> np.ndarray:
        """The source rows' index labels when ``X_negative`` was a DataFrame, else ``source``."""
        if self._index is None:
            return self.source
        return np.asarray(self._index)[self.source]

    def involves(self, feature: int | str) -> np.ndarray:
        """Boolean mask of the positives that perturb ``feature`` (index or name)."""
        i = self._feature_index(feature)
        return np.any(self._features_2d() == i, axis=1)

    def counts_per_feature(self) -> dict[str, int]:
        """How many positives perturb each feature (a multi-feature fault counts for each)."""
        counts = np.bincount(self.feature.reshape(-1), minlength=len(self.feature_names))
        return {n: int(c) for n, c in zip(self.feature_names, counts, strict=True)}

    def _feature_index(self, feature: int | str) -> int:
        if isinstance(feature, str):
            if feature not in self.feature_names:
                raise ValueError(f"feature {feature!r} is not one of {self.feature_names}")
            return self.feature_names.index(feature)
        i = int(feature)
        if not 0 <= i < len(self.feature_names):
            raise ValueError(
                f"feature index {feature!r} out of range [0, {len(self.feature_names)})"
            )
        return i


def synthesize_positives(
    X_negative: Any,
    thresholds: Any,
    *,
    directions: str | Sequence[str] | Mapping[str, str] = "both",
    reference: Any = None,
    feature_weights: Any = None,
    n_faulty_features: int = 1,
    n_fault_sets: int | None = None,
    rng: int | np.random.Generator | None = None,
    chunk_size: int = _DEFAULT_CHUNK,
) -> SyntheticPositives:
    """Synthesise faulty (positive) examples from normal ones (Cataltepe et al., §III).

    For every feature ``i`` and example ``x`` the candidates ``x + D_i`` and ``x - D_i`` are
    made (``D_i``: ``d_i`` on coordinate ``i``, zero elsewhere); a candidate ``u`` is kept
    unless some reference example ``r`` has ``|u_j - r_j| < d_j`` on *every* coordinate ``j``
    (strict, as in the paper: a reference exactly ``d_j`` away on one coordinate does not
    exclude, so an example never excludes its own candidates). Decisions are exact in float64
    (see the module docstring for the algorithm).

    Positives are ordered by fault pattern -- feature (or feature set) ascending, then ``+``
    before ``-`` -- and within a pattern by source row.

    Args:
        X_negative: normal examples, shape ``(n, k)``: a numpy array or a pandas DataFrame
            (converted to float64; the column names are kept). Must be finite and non-empty.
        thresholds: the analyst's fault thresholds ``d_i > 0``: one number for every feature,
            a sequence of ``k`` numbers, or a mapping / Series from column name to threshold.
        directions: which faults each feature can have: ``"both"`` (the paper), ``"up"``
            (only ``x + D_i``) or ``"down"``; one string for all features or one per feature
            (sequence or mapping by name). One-sided faults are the paper's "direction of
            faults" extension.
        reference: examples that exclude candidates near them (default: ``X_negative``
            itself, as in the paper); e.g. pass training + validation data to keep positives
            away from all known normal states. Same number of features; may have zero rows
            (then nothing is excluded).
        feature_weights: relative fault likelihood of each feature (the paper's "likelihood of
            faults" extension). A candidate of a fault pattern is drawn with probability
            ``prod(w_i for i in pattern) / max over patterns``, independently (seeded by
            ``rng``), before the exclusion test; the most likely feature keeps all its
            candidates. ``0`` means the feature never fails.
        n_faulty_features: faults in this many features at once (the paper's "faults come in
            multiple sensors" extension): each candidate moves ``m`` distinct features by
            ``±d`` simultaneously (every allowed sign combination) and is tested with the same
            rule. All ``C(k, m)`` feature sets are used unless ``n_fault_sets`` is given.
        n_fault_sets: use only this many feature sets, drawn uniformly without replacement
            (seeded by ``rng``), the same sets for every example.
        rng: seed or ``numpy.random.Generator`` for the sampling above (unused otherwise).
        chunk_size: pairs (or candidates) processed per block; bounds the working memory.

    Returns:
        A :class:`SyntheticPositives`: ``positives`` (array or DataFrame), ``feature``,
        ``direction`` and ``source`` per positive.

    Raises:
        ValueError: when ``X_negative`` is not 2-d, empty or has NaN/inf; when a threshold is
            non-positive, NaN or the count is wrong; on an unknown direction, a negative
            weight, or a request that would create more than 10^8 candidates.
    """
    X, columns, index = _as_matrix(X_negative, "X_negative")
    n, k = X.shape
    names = _feature_names(columns, k)
    d = _check_thresholds(thresholds, k, names)
    allowed = _check_directions(directions, k, names)
    weights = _check_feature_weights(feature_weights, k, names)
    m = _check_positive_int(n_faulty_features, "n_faulty_features", upper=k)
    if n_fault_sets is not None:
        n_fault_sets = _check_positive_int(n_fault_sets, "n_fault_sets")
    chunk_size = _check_positive_int(chunk_size, "chunk_size")
    if reference is None:
        R = X
    else:
        R = _as_matrix(reference, "reference", allow_empty=True)[0]
        if R.shape[1] != k:
            raise ValueError(f"reference has {R.shape[1]} features but X_negative has {k}")

    gen = np.random.default_rng(rng) if (n_fault_sets is not None or weights is not None) else None
    patterns = _fault_patterns(k, m, allowed, weights, n_fault_sets, gen)
    expected = float(np.sum(patterns.prob)) * n
    if expected > _MAX_CANDIDATES:
        raise ValueError(
            f"n_faulty_features={m} with {patterns.features.shape[0]} fault patterns would test "
            f"about {expected:.3g} candidates (limit {_MAX_CANDIDATES:.0e}); pass n_fault_sets "
            "or feature_weights to sample fewer"
        )
    seed = int(gen.integers(2**63)) if gen is not None else None

    sources, pattern_of, n_candidates = [], [], 0
    if m == 1:
        excl = _exclusion_single(X, R, d, chunk_size)
        for p, (f, s) in enumerate(zip(patterns.features[:, 0], patterns.signs[:, 0], strict=True)):
            rows = _thinned_rows(float(patterns.prob[p]), n, seed, p)
            n_candidates += rows.size
            kept = rows[~excl[rows, f, 0 if s > 0 else 1]]
            sources.append(kept)
            pattern_of.append(np.full(kept.size, p, dtype=np.intp))
    else:
        ref = _Reference(R, X, d) if R.shape[0] else None
        for p in range(patterns.features.shape[0]):
            rows = _thinned_rows(float(patterns.prob[p]), n, seed, p)
            n_candidates += rows.size
            for c0 in range(0, rows.size, chunk_size):
                chunk = rows[c0 : c0 + chunk_size]
                if ref is None:
                    kept = chunk
                else:
                    U = _apply(X, chunk, patterns.features[p], patterns.signs[p], d)
                    kept = chunk[~_exclusion_general(U, ref, d, chunk_size)]
                sources.append(kept)
                pattern_of.append(np.full(kept.size, p, dtype=np.intp))
    source = np.concatenate(sources) if sources else np.zeros(0, dtype=np.intp)
    pat = np.concatenate(pattern_of) if pattern_of else np.zeros(0, dtype=np.intp)
    feature = patterns.features[pat].astype(np.int64)
    direction = patterns.signs[pat]
    if m == 1:
        feature, direction = feature[:, 0], direction[:, 0]
    logger.debug(
        "synthesised %d positives from %d candidates (%d examples, %d features)",
        source.size,
        n_candidates,
        n,
        k,
    )
    return SyntheticPositives(
        source=source.astype(np.int64),
        feature=feature,
        direction=direction,
        thresholds=d,
        feature_names=names,
        n_candidates=int(n_candidates),
        n_faulty_features=m,
        _X=X,
        _columns=columns,
        _index=index,
    )


# --------------------------------------------------------------------------- evaluation
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")
