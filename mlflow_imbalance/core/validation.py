"""Input validation shared by every public entry point (numpy only).

Every check raises :class:`ValueError` (or :class:`TypeError` for the wrong kind of object)
naming the argument and the offending value or count. Nothing is silently dropped or clipped.

**Validated once, at the boundary.** An entry point that checks all of its options up front
(``build_report`` through ``ReportOptions``, the logging hook) runs the rest of its work inside
:func:`validated`. There the value checks of options (:func:`check_prevalence`,
:func:`check_cost`, :func:`check_max_fpr`) only convert their argument and skip re-checking it,
so the public metric and interval functions the pipeline calls internally do not validate the
same prevalences again at every layer (the same idea as scikit-learn's
``skip_parameter_validation``). Data checks (labels, scores, weights) always run.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "as_1d_array",
    "binarize_labels",
    "binarize_labels_with_classes",
    "check_cost",
    "check_costs",
    "check_label_union",
    "check_max_fpr",
    "check_prevalence",
    "check_scores",
    "check_weights",
    "plain",
    "validated",
]

_VALIDATED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mlflow_imbalance_validated", default=False
)


@contextlib.contextmanager
def validated() -> Iterator[None]:
    """Run a block whose option values were already validated at the public boundary.

    Inside it, :func:`check_prevalence`, :func:`check_cost` and :func:`check_max_fpr` convert
    without re-checking. Context-local (threads and asyncio tasks each have their own flag).
    """
    token = _VALIDATED.set(True)
    try:
        yield
    finally:
        _VALIDATED.reset(token)


def in_validated_block() -> bool:
    """True inside :func:`validated` (option values were checked at the boundary)."""
    return _VALIDATED.get()


def as_1d_array(values: Any, name: str) -> np.ndarray:
    """Return ``values`` (list, tuple, numpy array, pandas Series, ...) as a 1-d numpy array."""
    if values is None:
        raise ValueError(f"{name} is required, got None")
    if hasattr(values, "to_numpy"):  # pandas Series / Index, polars Series
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        hint = ""
        if arr.ndim == 2 and arr.shape[1] == 2:  # e.g. predict_proba's output
            hint = f" (predict_proba output? pass the positive class's column: {name}[:, 1])"
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {arr.shape}{hint}")
    return arr


def check_scores(y_score: Any, name: str = "y_score") -> np.ndarray:
    """Validate scores: numeric, finite; returned as float64 (exact for float32/float64 input)."""
    s = as_1d_array(y_score, name)
    if s.dtype == bool:
        s = s.astype(np.float64)
    if not np.issubdtype(s.dtype, np.number) or np.issubdtype(s.dtype, np.complexfloating):
        raise ValueError(f"{name} must be numeric, got dtype {s.dtype}")
    s = s.astype(np.float64, copy=False)
    finite = np.isfinite(s)
    if not finite.all():
        bad = s[~finite]
        n_nan = int(np.isnan(bad).sum())
        n_inf = int(bad.size - n_nan)
        raise ValueError(
            f"{name} must be finite: found {n_nan} NaN and {n_inf} infinite value(s) "
            f"among {s.size} (first at index {int(np.flatnonzero(~finite)[0])})"
        )
    return s


def _distinct_labels(y: np.ndarray) -> np.ndarray:
    """Sorted distinct labels; O(n) without a sort for numeric labels with at most two values."""
    if y.dtype.kind in "biuf" and y.size:
        lo, hi = y.min(), y.max()
        if lo == hi or np.all((y == lo) | (y == hi)):
            return np.unique(np.array([lo, hi], dtype=y.dtype))
    return np.unique(y)


def _default_pos_label(classes: np.ndarray) -> Any:
    """The positive label when the user gave none, following scikit-learn's convention."""
    as_list = classes.tolist()
    for candidates in ({0, 1}, {-1, 1}, {False, True}):
        if all(c in candidates for c in as_list) and not any(isinstance(c, str) for c in as_list):
            return True if classes.dtype == bool else 1
    raise ValueError(
        f"y_true has labels {as_list!r}: pass pos_label to say which one is the positive class "
        "(it can be omitted only for labels in {0, 1}, {-1, 1} or {False, True})"
    )


def _is_bool_like(value: Any) -> bool:
    """True for True/False and the numbers 1/0 (which equal them), e.g. ``pos_label=1``."""
    if isinstance(value, (bool, np.bool_)):
        return True
    return isinstance(value, (int, np.integer)) and value in (0, 1)


def binarize_labels(
    y_true: Any,
    pos_label: Any = None,
    *,
    name: str = "y_true",
    require_both: bool = True,
) -> np.ndarray:
    """Map labels to a boolean array (True = positive).

    Args:
        y_true: bool, integer, float or string labels with at most two distinct values.
        pos_label: the label of the positive class; required when ambiguous.
        name: argument name used in error messages.
        require_both: raise when only one class is present.

    Returns:
        Boolean array, True where the label is the positive class.
    """
    return binarize_labels_with_classes(y_true, pos_label, name=name, require_both=require_both)[0]


def binarize_labels_with_classes(
    y_true: Any,
    pos_label: Any = None,
    *,
    name: str = "y_true",
    require_both: bool = True,
) -> tuple[np.ndarray, list[Any]]:
    """:func:`binarize_labels` plus the sorted distinct labels (at most two, Python values).

    The distinct labels come from the same O(n) pass that checks the labels are binary, so a
    caller combining batches (:class:`~mlflow_imbalance.core.counts.CountsAccumulator`) can check
    them across batches with :func:`check_label_union` at no extra cost.
    """
    y = as_1d_array(y_true, name)
    if y.size == 0:
        raise ValueError(f"{name} is empty: at least one positive and one negative are needed")
    if y.dtype == bool and (pos_label is None or _is_bool_like(pos_label)):
        # Bools are binary by construction: no need to look at the classes.
        is_pos = y if (pos_label is None or bool(pos_label)) else ~y
        has_true = bool(y.any())
        labels = [False, True] if has_true and not y.all() else [has_true]
    else:
        if y.dtype.kind == "f" and np.isnan(y).any():
            raise ValueError(f"{name} contains {int(np.isnan(y).sum())} NaN label(s)")
        if y.dtype == object and any(v is None for v in y):
            raise ValueError(f"{name} contains None labels")
        classes = _distinct_labels(y)
        if classes.size > 2:
            shown = classes[:5].tolist()
            raise ValueError(
                f"{name} must be binary: found {classes.size} distinct labels, e.g. {shown!r}"
            )
        if pos_label is None:
            pos_label = _default_pos_label(classes)
        elif not np.any(classes == pos_label) and classes.size == 2:
            raise ValueError(
                f"pos_label={plain(pos_label)!r} is not one of the labels in {name}: "
                f"{classes.tolist()!r}"
            )
        is_pos = y == pos_label
        if not isinstance(is_pos, np.ndarray):  # comparison of incompatible dtypes
            is_pos = np.zeros(y.shape, dtype=bool)
        labels = classes.tolist()
    if require_both:
        n_pos = int(np.count_nonzero(is_pos))
        if n_pos == 0 or n_pos == y.size:
            which = "negative" if n_pos == y.size else "positive"
            raise ValueError(
                f"{name} holds only one class ({y.size} labels, no {which} example): "
                "ROC counts need both positives and negatives"
            )
    return np.asarray(is_pos, dtype=bool), labels


def check_label_union(
    seen: Sequence[Any], batch: Sequence[Any], pos_label: Any = None, name: str = "y_true"
) -> list[Any]:
    """Distinct labels of earlier batches and of a new one, checked like their concatenation.

    Raises when the union could not come from one binary label array, i.e. exactly when
    :func:`binarize_labels` would reject the concatenated batches: a third label, labels whose
    positive class the default rule cannot tell (e.g. ``{0, 1}`` then ``{-1, 1}`` make
    ``{-1, 0, 1}``; ``{-1}`` then ``{0}`` make ``{-1, 0}``), or a ``pos_label`` that is not one
    of two labels seen. Labels compare as Python values (``1 == 1.0 == True``).

    Args:
        seen: distinct labels of the earlier batches (at most two).
        batch: distinct labels of the new batch (at most two).
        pos_label: the fixed positive label, or None for the default rule.
        name: argument name used in error messages.

    Returns:
        The union, in first-seen order (at most two values).
    """
    union = list(seen)
    union += [v for v in batch if v not in union]
    if len(union) == len(seen):
        return union
    shown_seen, shown_batch = [plain(v) for v in seen], [plain(v) for v in batch]
    if len(union) > 2:
        raise ValueError(
            f"{name} must be binary across batches: this batch has labels {shown_batch!r} but "
            f"earlier batches had {shown_seen!r}, {len(union)} distinct labels in all"
        )
    if pos_label is None and len(seen):
        try:
            _default_pos_label(np.asarray(union))
        except ValueError:
            raise ValueError(
                f"{name}: this batch has labels {shown_batch!r} but earlier batches had "
                f"{shown_seen!r}; together {[plain(v) for v in union]!r} leave the positive "
                "class ambiguous: pass pos_label (it can be omitted only for labels in {0, 1}, "
                "{-1, 1} or {False, True})"
            ) from None
    elif pos_label is not None and len(union) == 2 and pos_label not in union:
        raise ValueError(
            f"pos_label={plain(pos_label)!r} is not one of the labels in {name} across "
            f"batches: {[plain(v) for v in union]!r}"
        )
    return union


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds; anything else unchanged.

    So that ``repr`` in error messages reads ``2.5``, not ``np.float64(2.5)``.
    """
    return value.item() if isinstance(value, np.generic) else value


def check_weights(sample_weight: Any, n: int, name: str = "sample_weight") -> np.ndarray | None:
    """Validate sample weights: same length as the data, finite and non-negative."""
    if sample_weight is None:
        return None
    w = as_1d_array(sample_weight, name)
    if not np.issubdtype(w.dtype, np.number) or w.dtype == bool:
        raise ValueError(f"{name} must be numeric, got dtype {w.dtype}")
    w = w.astype(np.float64, copy=False)
    if w.size != n:
        raise ValueError(f"{name} has {w.size} entries but y_true has {n}")
    bad = ~np.isfinite(w)
    if bad.any():
        raise ValueError(f"{name} must be finite: {int(bad.sum())} NaN or infinite weight(s)")
    neg = w < 0
    if neg.any():
        raise ValueError(
            f"{name} must be non-negative: {int(neg.sum())} negative weight(s), "
            f"smallest {float(w.min())!r}"
        )
    return w


def check_prevalence(prevalence: Any, name: str = "prevalence") -> np.ndarray:
    """Validate one prevalence or an array of them: every value strictly inside (0, 1)."""
    eta = np.asarray(prevalence, dtype=np.float64)
    if _VALIDATED.get():
        return eta
    bad = ~((eta > 0) & (eta < 1))  # also catches NaN
    if bad.any():
        first = eta.reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]]
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {float(first)!r}")
    return eta


def check_same_length(arrays: Sequence[np.ndarray], names: Sequence[str]) -> None:
    """Raise when arrays that describe the same samples differ in length."""
    sizes = [a.shape[0] for a in arrays]
    if len(set(sizes)) > 1:
        desc = ", ".join(f"{n} has {s}" for n, s in zip(names, sizes, strict=True))
        raise ValueError(f"length mismatch: {desc}")


def check_cost(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """Validate a misclassification cost: a finite number, > 0 (>= 0 with ``allow_zero``).

    Prevalence-aware costs (:mod:`mlflow_imbalance.metrics`) divide by a cost-weighted mix of
    the two costs, so they need both positive; rate-only costs (the synthetic evaluation) may
    switch one kind of error off with a zero.
    """
    if _VALIDATED.get():
        return float(value)
    want = "a non-negative finite number" if allow_zero else "positive and finite"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {want}, got {plain(value)!r}") from None
    if not (np.isfinite(v) and (v >= 0 if allow_zero else v > 0)):
        raise ValueError(f"{name} must be {want}, got {plain(value)!r}")
    return v


def check_costs(costs: Any, name: str = "costs") -> tuple[float, float] | None:
    """Validate a cost pair as the public API takes it.

    ``None``, ``(cost_fp, cost_fn)`` or a mapping with exactly the keys ``fp``/``fn`` (or
    ``cost_fp``/``cost_fn``). Each cost must be positive and finite (:func:`check_cost`);
    ``True``/``False`` are refused (a flag passed where a cost belongs). Errors name the
    element the way it was given: ``costs[1] (cost_fn)`` for a pair, ``costs['fn']`` for a
    mapping.

    Returns:
        ``(cost_fp, cost_fn)`` as floats, or None.
    """
    if costs is None:
        return None
    if isinstance(costs, Mapping):
        keys = set(costs)
        fp_key = "fp" if "fp" in keys else "cost_fp"
        fn_key = "fn" if "fn" in keys else "cost_fn"
        if {fp_key, fn_key} != keys:
            raise ValueError(
                f"{name} must have exactly the keys 'fp' and 'fn' (or 'cost_fp' and "
                f"'cost_fn'), got {sorted(map(str, keys))!r}"
            )
        items = [(costs[fp_key], f"{name}[{fp_key!r}]"), (costs[fn_key], f"{name}[{fn_key!r}]")]
    elif isinstance(costs, tuple | list) and len(costs) == 2:
        items = [(costs[0], f"{name}[0] (cost_fp)"), (costs[1], f"{name}[1] (cost_fn)")]
    else:
        raise ValueError(
            f"{name} must be None, (cost_fp, cost_fn) or {{'fp': cost_fp, 'fn': cost_fn}}, "
            f"got {plain(costs)!r}"
        )
    out = []
    for value, label in items:
        if isinstance(value, bool | np.bool_):
            raise ValueError(f"{label} must be positive and finite, got {value!r}")
        out.append(check_cost(value, label))
    return out[0], out[1]


def check_max_fpr(max_fpr: Any, name: str = "max_fpr") -> float:
    """Validate a false-positive-rate limit: a number in (0, 1]."""
    if _VALIDATED.get():
        return float(max_fpr)
    try:
        m = float(max_fpr)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1], got {plain(max_fpr)!r}") from None
    if not (0.0 < m <= 1.0):
        raise ValueError(f"{name} must be in (0, 1], got {plain(max_fpr)!r}")
    return m
