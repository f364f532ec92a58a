"""Input checks of the synthesis (feature matrices, per-feature thresholds and directions)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlflow_imbalance.core.validation import plain

logger = logging.getLogger(__name__)


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
