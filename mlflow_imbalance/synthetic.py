"""Positives synthesised from negatives, and ROC analysis without positive examples.

Cataltepe, Chang, Stiefmeier, Chen & Neubauer, "Using ROC Curve In the Absence of Positive
Examples" (Siemens Corporate Research), §III: when the validation data holds only normal
(negative) examples, an analyst gives a positive fault threshold ``d_i`` per feature (sensor).
Every validation example ``x`` is moved by ``+d_i`` and by ``-d_i`` along feature ``i``
(``u = x ± D_i``, ``D_i`` being ``d_i`` on coordinate ``i`` and zero elsewhere), and the moved
point ``u`` becomes a positive unless some reference example ``r`` (the validation set itself in
the paper) is still within the thresholds of it on *every* coordinate::

    u is dropped  <=>  there is an r with |u_j - r_j| < d_j for all j = 1..k

The inequality is strict, exactly as the paper writes it. This matters: the source ``x`` itself
is at distance exactly ``d_i`` on coordinate ``i`` and therefore never excludes its own
candidate, and a reference example exactly ``d_j`` away on some coordinate does not exclude
either. All comparisons are made in the data's own units, in float64, on the candidate as it is
returned (``fl(x_i ± d_i)``), so the result is the same as the paper's triple loop run in
float64 -- there is no tolerance anywhere in the decision.

The positives form an envelope around the normal data (the paper's Fig. 3); the extended
validation set (negatives + positives) then gives an ROC curve for any detector, one per feature
(the paper's per-sensor curves), and the cost ``Cost(FP, TP) = C_n (1 - TP) + C_p FP`` averaged
over features compares detectors (§II).

Algorithm (no Python loop over examples). For a single-feature fault ``u = x + s d_i e_i`` only
coordinate ``i`` differs from ``x``, so ``r`` excludes it iff ``|x_j - r_j| < d_j`` on every
``j != i`` and ``|fl(x_i + s d_i) - r_i| < d_i``. Hence a reference example can exclude a
candidate of ``x`` only when it is within ``d_j`` of ``x`` on all coordinates but at most one,
and within about ``2 d`` on that one. The reference set is sorted on its most selective
coordinate; for every source the window ``|x_a - r_a| <= 2 d_a`` (plus a few ulps, a superset)
is found by binary search, the (source, reference) pairs of the windows are enumerated in
blocks of ``chunk_size`` pairs, and each block is filtered coordinate by coordinate (most
selective first), dropping a pair as soon as it has two coordinates outside the box. The pairs
that survive give, exactly, the excluded candidates of all ``2k`` directions of their source at
once. Memory is ``O(chunk_size * 8 bytes * a few)`` on top of the inputs and the output. Faults
in several features at once use the same sort-and-filter join directly between candidates and
reference examples.

The cost grows with the number of pairs in the windows: small when the thresholds are small
compared with the spread of the data (the intended use: a fault moves a sensor off the set of
observed states), quadratic in the worst case where the thresholds exceed the data's range (then
almost every candidate is dropped anyway).
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_cost, check_max_fpr, plain

logger = logging.getLogger(__name__)

__all__ = [
    "SyntheticEvaluation",
    "SyntheticPositives",
    "evaluate_without_positives",
    "synthesize_positives",
]

_EPS = np.finfo(np.float64).eps
_DEFAULT_CHUNK = 1 << 16
_MAX_CANDIDATES = 100_000_000
_DIRECTION_SIGNS = {"both": (1, -1), "up": (1,), "down": (-1,)}


# --------------------------------------------------------------------------- validation
def _as_matrix(X: Any, name: str, *, allow_empty: bool = False) -> tuple[np.ndarray, Any, Any]:
    """Return ``X`` as a C-contiguous float64 matrix, plus its column names and index if any."""
    if X is None:
        raise ValueError(f"{name} is required, got None")
    columns = index = None
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):  # pandas DataFrame
        columns, index = X.columns, X.index
        try:
            arr = X.to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must hold numeric columns only, got dtypes {list(map(str, X.dtypes))}"
            ) from exc
    else:
        arr = np.asarray(X)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
        if np.issubdtype(arr.dtype, np.complexfloating):
            raise ValueError(f"{name} must be real-valued, got dtype {arr.dtype}")
        arr = arr.astype(np.float64)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be two-dimensional (examples x features), got shape {arr.shape}"
        )
    if arr.shape[1] == 0 or (arr.shape[0] == 0 and not allow_empty):
        raise ValueError(f"{name} is empty: shape {arr.shape}")
    finite = np.isfinite(arr)
    if not finite.all():
        row, col = (int(v) for v in np.argwhere(~finite)[0])
        n_nan = int(np.isnan(arr).sum())
        raise ValueError(
            f"{name} must be finite: {n_nan} NaN and {int((~finite).sum()) - n_nan} infinite "
            f"value(s), the first at row {row}, column {col} ({plain(arr[row, col])!r})"
        )
    return np.ascontiguousarray(arr), columns, index


def _per_feature(values: Any, name: str, k: int, names: Sequence[str]) -> np.ndarray:
    """A scalar, a sequence of length k, or a mapping/Series keyed by feature name -> array."""
    if isinstance(values, Mapping) or (hasattr(values, "index") and hasattr(values, "to_numpy")):
        mapping = dict(values.items())
        unknown = [key for key in mapping if str(key) not in names]
        if unknown:
            raise ValueError(f"{name} names unknown feature(s) {unknown!r}; features: {names}")
        by_name = {str(key): val for key, val in mapping.items()}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise ValueError(f"{name} has no value for feature(s) {missing!r}")
        return np.array([by_name[n] for n in names], dtype=object)
    arr = np.asarray(values, dtype=object)
    if arr.ndim == 0:
        return np.full(k, arr.item(), dtype=object)
    if arr.ndim != 1 or arr.size != k:
        raise ValueError(
            f"{name} must have one value per feature ({k}), got {arr.size} value(s) "
            f"of shape {arr.shape}"
        )
    return arr


def _check_thresholds(thresholds: Any, k: int, names: Sequence[str]) -> np.ndarray:
    raw = _per_feature(thresholds, "thresholds", k, names)
    try:
        d = raw.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"thresholds must be numbers, got {raw.tolist()!r}") from exc
    bad = ~(np.isfinite(d) & (d > 0))  # NaN fails both comparisons
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"thresholds must be positive and finite: feature {names[i]!r} (index {i}) "
            f"has {float(d[i])!r}"
        )
    return d


def _check_directions(directions: Any, k: int, names: Sequence[str]) -> list[tuple[int, ...]]:
    raw = (
        np.full(k, directions, dtype=object)
        if isinstance(directions, str)
        else _per_feature(directions, "directions", k, names)
    )
    out = []
    for i, value in enumerate(raw):
        signs = _DIRECTION_SIGNS.get(value) if isinstance(value, str) else None
        if signs is None:
            raise ValueError(
                f"directions must be 'both', 'up' or 'down' (or one per feature): feature "
                f"{names[i]!r} has {plain(value)!r}"
            )
        out.append(signs)
    return out


def _check_feature_weights(weights: Any, k: int, names: Sequence[str]) -> np.ndarray | None:
    if weights is None:
        return None
    raw = _per_feature(weights, "feature_weights", k, names)
    try:
        w = raw.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"feature_weights must be numbers, got {raw.tolist()!r}") from exc
    bad = ~(np.isfinite(w) & (w >= 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"feature_weights must be non-negative and finite: feature {names[i]!r} "
            f"has {float(w[i])!r}"
        )
    if not (w > 0).any():
        raise ValueError("feature_weights are all zero: no feature could ever be faulty")
    return w


def _check_positive_int(value: Any, name: str, *, upper: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be a positive integer, got {plain(value)!r}")
    if value < 1 or (upper is not None and value > upper):
        limit = f" and at most {upper}" if upper is not None else ""
        raise ValueError(f"{name} must be at least 1{limit}, got {plain(value)!r}")
    return int(value)


def _feature_names(columns: Any, k: int) -> tuple[str, ...]:
    if columns is None:
        return tuple(f"x{i}" for i in range(k))
    names = tuple(str(c) for c in columns)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"X_negative has duplicate column names {dup!r}")
    return names


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


def _safe_names(feature_names: Sequence[str], prefix: str) -> dict[str, str]:
    """Feature name -> logging name ``<prefix>_<feature>`` restricted to ``[A-Za-z0-9_.-]``."""
    out: dict[str, str] = {}
    used = {f"{prefix}_all"}
    for i, fname in enumerate(feature_names):
        base = _NAME_BAD.sub("_", fname).strip(".-") or f"x{i}"
        while ".." in base:
            base = base.replace("..", ".")
        cand = f"{prefix}_{base}"[:100]
        if cand in used:
            cand = f"{prefix}_{i}_{base}"[:100]
        used.add(cand)
        out[fname] = cand
    return out


@dataclass(eq=False)
class SyntheticEvaluation:
    """ROC analysis of one detector on negatives plus synthesised positives (Cataltepe et al.).

    Attributes:
        overall: counts of all synthesised positives against all negatives.
        per_feature: feature name -> counts of the positives that perturb that feature against
            all negatives (the paper's per-sensor ROC curves, §II). Features without any
            positive are left out (listed in ``features_without_positives``).
        synthesis: the :class:`SyntheticPositives` used.
        negative_scores, positive_scores: the detector's scores (higher = more anomalous).
        cost_fn, cost_fp: the paper's ``C_n`` (missed fault) and ``C_p`` (false alarm).
        max_fpr: the operating region searched: thresholds with FPR at most this.
        cost: the paper's cost averaged over features at the best common alarm threshold:
            ``min_t mean_i [C_n (1 - TPR_i(t)) + C_p FPR(t)]`` over thresholds ``t`` with
            ``FPR(t) <= max_fpr`` (``t = +inf``, never alarming, included, costing ``C_n``).
        cost_threshold: that threshold ``t*``; an alarm is raised when ``score >= t*``.
        cost_fpr, cost_tpr: FPR and feature-averaged TPR at ``t*``.
        feature_cost: feature name -> ``C_n (1 - TPR_i(t*)) + C_p FPR(t*)``.
        feature_min_cost: feature name -> ``min_t`` of the same within the region, each feature
            at its own best threshold (what a detector with one alarm threshold per sensor,
            the paper's auto-associative models, could reach).
    """

    overall: RocCounts
    per_feature: dict[str, RocCounts]
    synthesis: SyntheticPositives
    negative_scores: np.ndarray
    positive_scores: np.ndarray
    cost_fn: float
    cost_fp: float
    max_fpr: float
    cost: float
    cost_threshold: float
    cost_fpr: float
    cost_tpr: float
    feature_cost: dict[str, float]
    feature_min_cost: dict[str, float]
    features_without_positives: tuple[str, ...] = ()

    @property
    def mean_feature_min_cost(self) -> float:
        """Average over features of ``feature_min_cost``."""
        return float(np.mean(list(self.feature_min_cost.values())))

    def summary(self) -> dict[str, Any]:
        """JSON-ready description: how the positives were made and the costs."""
        syn = self.synthesis
        return {
            "positives": "synthesized",
            "method": "Cataltepe et al., ROC without positive examples (sec. III)",
            "thresholds": dict(zip(syn.feature_names, syn.thresholds.tolist(), strict=True)),
            "n_faulty_features": syn.n_faulty_features,
            "n_candidates": syn.n_candidates,
            "n_positives": len(syn),
            "n_negatives": int(self.negative_scores.size),
            "positives_per_feature": syn.counts_per_feature(),
            "cost_fn": self.cost_fn,
            "cost_fp": self.cost_fp,
            "max_fpr": self.max_fpr,
            "cost": self.cost,
            "cost_threshold": None if math.isinf(self.cost_threshold) else self.cost_threshold,
            "cost_fpr": self.cost_fpr,
            "cost_tpr": self.cost_tpr,
            "feature_cost": self.feature_cost,
            "feature_min_cost": self.feature_min_cost,
        }

    def log(
        self,
        *,
        prefix: str = "synthetic",
        run_id: str | None = None,
        prevalences: Any = None,
        log_figures: bool = True,
        tracking_uri: str | None = None,
    ) -> dict[str, Any]:
        """Log the counts with the hook, one set per feature plus all positives together.

        Names are ``<prefix>_<feature>`` (characters outside ``[A-Za-z0-9_.-]`` become ``_``)
        and ``<prefix>_all``. Every set's ``summary.json`` carries ``"positives":
        "synthesized"`` plus the synthesis description (:meth:`summary`), so the report can
        mark them. The costs are logged as metrics ``imbalance/<name>/synthetic_cost`` (at the
        common threshold ``t*``) and ``imbalance/<prefix>_all/synthetic_cost``.

        Args:
            prefix: name prefix of the logged sets.
            run_id: the run (None = the active run; one is started if none is).
            prevalences: passed to :func:`mlflow_imbalance.tracking.log_counts`.
            log_figures: passed on as well.
            tracking_uri: passed on as well.

        Returns:
            Logged name -> :class:`mlflow_imbalance.tracking.LoggedCounts`.
        """
        from mlflow_imbalance import tracking

        names = _safe_names(list(self.per_feature), prefix)
        base = self.summary()
        logged: dict[str, Any] = {}
        all_name = f"{prefix}_all"
        sets = [(all_name, self.overall, None)] + [
            (names[f], c, f) for f, c in self.per_feature.items()
        ]
        for name, counts, feature in sets:
            extra = dict(base)
            extra["synthetic_feature"] = feature
            if feature is not None:
                extra["feature_cost_at_common_threshold"] = self.feature_cost[feature]
            logged[name] = tracking.log_counts(
                counts,
                name=name,
                run_id=run_id,
                prevalences=prevalences,
                extra_summary=extra,
                log_figures=log_figures,
                tracking_uri=tracking_uri,
            )
            run_id = logged[name].run_id
        client = tracking._client(tracking_uri)
        client.log_metric(run_id, tracking.metric_key(all_name, "synthetic_cost"), self.cost)
        for f, value in self.feature_cost.items():
            client.log_metric(run_id, tracking.metric_key(names[f], "synthetic_cost"), value)
        return logged


def _score(score_fn: Callable[[Any], Any], data: Any, n: int, what: str) -> np.ndarray:
    out = np.asarray(score_fn(data))
    if out.ndim == 2 and 1 in out.shape:
        out = out.reshape(-1)
    if out.ndim != 1 or out.size != n:
        raise ValueError(
            f"score_fn must return one score per row: got shape {out.shape} for {n} {what}"
        )
    if not np.issubdtype(out.dtype, np.number) or np.issubdtype(out.dtype, np.complexfloating):
        raise ValueError(f"score_fn returned dtype {out.dtype} for the {what}; scores must be real")
    out = out.astype(np.float64)
    if not np.isfinite(out).all():
        raise ValueError(
            f"score_fn returned {int((~np.isfinite(out)).sum())} NaN/infinite score(s) "
            f"for the {what}"
        )
    return out


def _region_costs(
    tpr: np.ndarray, fpr: np.ndarray, cost_fn: float, cost_fp: float, max_fpr: float
) -> np.ndarray:
    """Cost at the origin then at every point; +inf outside the region FPR <= max_fpr."""
    t = np.concatenate(([0.0], tpr))
    f = np.concatenate(([0.0], fpr))
    cost = cost_fn * (1.0 - t) + cost_fp * f
    cost[f > max_fpr * (1 + 1e-12)] = np.inf
    return cost


def evaluate_without_positives(
    score_fn: Callable[[Any], Any],
    X_validation: Any,
    thresholds: Any,
    *,
    cost_fn: float = 1.0,
    cost_fp: float = 1.0,
    max_fpr: float = 1.0,
    directions: str | Sequence[str] | Mapping[str, str] = "both",
    reference: Any = None,
    feature_weights: Any = None,
    n_faulty_features: int = 1,
    n_fault_sets: int | None = None,
    rng: int | np.random.Generator | None = None,
    chunk_size: int = _DEFAULT_CHUNK,
    batch_size: int = _DEFAULT_CHUNK,
) -> SyntheticEvaluation:
    """Evaluate a detector on clean data extended with synthesised positives (Cataltepe §III).

    The extended validation set is ``X_validation`` (negatives) plus the positives of
    :func:`synthesize_positives`. ``score_fn`` scores every row independently (higher = more
    anomalous; e.g. ``lambda X: -model.score_samples(X)`` for scikit-learn novelty
    detectors); positives are scored in batches of ``batch_size`` rows, in the same type as
    ``X_validation`` (DataFrame with its columns, or array).

    Cost (the paper's §II: ``Cost(FP, TP) = C_n (1 - TP) + C_p FP``, rates, no prevalence).
    The positives sit exactly at the analyst's fault thresholds, so every ROC point is "at the
    thresholds"; the paper compares detectors by this cost averaged over features (sensors)
    near the analyst's operating region. A single-score detector has one alarm threshold, so
    ``cost`` is the minimum over a *common* threshold ``t`` of the feature average
    ``mean_i [C_n (1 - TPR_i(t)) + C_p FPR(t)]`` restricted to ``FPR(t) <= max_fpr`` (the
    false-alarm budget; ``t = +inf`` is always allowed). Averaging the TPRs of features
    equals the TPR of positives weighted ``1/P_i`` (``P_i`` = positives of feature ``i``),
    so one sweep over the sorted scores finds it exactly. Features without positives are
    left out of the average. ``feature_min_cost`` gives each feature its own best threshold.

    Args:
        score_fn: callable mapping a batch of rows to one finite score per row.
        X_validation: clean (all-negative) validation data, array or DataFrame.
        thresholds: the analyst's fault thresholds ``d_i`` (see :func:`synthesize_positives`).
        cost_fn: ``C_n``, the cost of a missed fault (false negative rate).
        cost_fp: ``C_p``, the cost of a false alarm (false positive rate).
        max_fpr: operating region: only thresholds with FPR at most this, in (0, 1].
        directions: see :func:`synthesize_positives`.
        reference: see :func:`synthesize_positives`.
        feature_weights: see :func:`synthesize_positives`.
        n_faulty_features: see :func:`synthesize_positives`.
        n_fault_sets: see :func:`synthesize_positives`.
        rng: see :func:`synthesize_positives`.
        chunk_size: see :func:`synthesize_positives`.
        batch_size: rows per ``score_fn`` call for the positives.

    Returns:
        :class:`SyntheticEvaluation` with the overall and per-feature counts and the costs.

    Raises:
        ValueError: on invalid input (see :func:`synthesize_positives`), bad costs or
            ``max_fpr``, when every candidate is excluded, or when ``score_fn`` returns the
            wrong number of scores or non-finite ones.
    """
    if not callable(score_fn):
        raise ValueError(f"score_fn must be callable, got {type(score_fn).__name__}")
    c_n = check_cost(cost_fn, "cost_fn", allow_zero=True)
    c_p = check_cost(cost_fp, "cost_fp", allow_zero=True)
    region = check_max_fpr(max_fpr)
    batch_size = _check_positive_int(batch_size, "batch_size")
    syn = synthesize_positives(
        X_validation,
        thresholds,
        directions=directions,
        reference=reference,
        feature_weights=feature_weights,
        n_faulty_features=n_faulty_features,
        n_fault_sets=n_fault_sets,
        rng=rng,
        chunk_size=chunk_size,
    )
    if len(syn) == 0:
        raise ValueError(
            f"every one of the {syn.n_candidates} candidate positives was excluded: the "
            "thresholds are too small compared with the spacing of the validation data"
        )
    neg = _score(score_fn, X_validation, syn._X.shape[0], "rows of X_validation")
    pos = np.empty(len(syn))
    for sl, batch in syn.batches(batch_size):
        pos[sl] = _score(score_fn, batch, sl.stop - sl.start, "synthesised positives")

    n_neg, n_pos = neg.size, pos.size
    scores = np.concatenate((neg, pos))
    labels = np.concatenate((np.zeros(n_neg, dtype=bool), np.ones(n_pos, dtype=bool)))
    overall = RocCounts._from_validated(labels, scores, None, compress=True)

    feats = syn._features_2d()
    k = len(syn.feature_names)
    p_i = np.bincount(feats.reshape(-1), minlength=k)
    present = p_i > 0
    empty = tuple(n for n, ok in zip(syn.feature_names, present, strict=True) if not ok)
    if empty:
        logger.warning("no synthesised positive for feature(s) %s; left out of the cost", empty)
    per_feature: dict[str, RocCounts] = {}
    feature_min_cost: dict[str, float] = {}
    for i in np.flatnonzero(present):
        mask = np.any(feats == i, axis=1)
        sub = np.concatenate((neg, pos[mask]))
        lab = np.concatenate((np.zeros(n_neg, dtype=bool), np.ones(int(mask.sum()), dtype=bool)))
        c = RocCounts._from_validated(lab, sub, None, compress=True)
        per_feature[syn.feature_names[i]] = c
        feature_min_cost[syn.feature_names[i]] = float(
            np.min(_region_costs(c.tpr, c.fpr, c_n, c_p, region))
        )

    # Feature-averaged TPR at a common threshold = TPR of positives weighted 1/P_i (summed over
    # the features a positive perturbs), normalised by the number of features present.
    inv = np.where(present, 1.0 / np.maximum(p_i, 1), 0.0)
    w_pos = inv[feats].sum(axis=1)
    weights = np.concatenate((np.ones(n_neg), w_pos))
    balanced = RocCounts._from_validated(labels, scores, weights, compress=True)
    n_present = int(present.sum())
    mean_tpr = balanced.tp / n_present
    fpr = balanced.fp / n_neg
    costs = _region_costs(mean_tpr, fpr, c_n, c_p, region)
    best = int(np.argmin(costs))  # first minimum = highest threshold (fewest alarms)
    thr = math.inf if best == 0 else float(balanced.thresholds[best - 1])
    best_fpr = 0.0 if best == 0 else float(fpr[best - 1])
    best_tpr = 0.0 if best == 0 else float(mean_tpr[best - 1])
    fp_at = float(np.count_nonzero(neg >= thr)) / n_neg
    feature_cost = {}
    for i in np.flatnonzero(present):
        mask = np.any(feats == i, axis=1)
        tpr_i = float(np.count_nonzero(pos[mask] >= thr)) / int(mask.sum())
        feature_cost[syn.feature_names[i]] = c_n * (1.0 - tpr_i) + c_p * fp_at
    return SyntheticEvaluation(
        overall=overall,
        per_feature=per_feature,
        synthesis=syn,
        negative_scores=neg,
        positive_scores=pos,
        cost_fn=c_n,
        cost_fp=c_p,
        max_fpr=region,
        cost=float(costs[best]),
        cost_threshold=thr,
        cost_fpr=best_fpr,
        cost_tpr=best_tpr,
        feature_cost=feature_cost,
        feature_min_cost=feature_min_cost,
        features_without_positives=empty,
    )
