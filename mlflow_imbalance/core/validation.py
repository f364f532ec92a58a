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
import math
import numbers
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "MAX_GRID_POINTS",
    "MAX_POINTS_PER_SEGMENT",
    "MAX_PREVALENCES",
    "as_1d_array",
    "binarize_labels",
    "binarize_labels_with_classes",
    "check_alerts_per",
    "check_cost",
    "check_costs",
    "check_fraction",
    "check_label_union",
    "check_max_fpr",
    "check_nesting",
    "check_prevalence",
    "check_scores",
    "check_size",
    "check_weights",
    "plain",
    "validated",
]

#: Most prevalences one call accepts (metric functions, sweeps, bands, intervals): results are
#: ``(M, K)`` arrays, so ``M`` is bounded; the report's grids hold a few hundred.
MAX_PREVALENCES = 10_000
#: Largest grid a ``num`` argument may ask for (``cost_curve``, ``default_prevalence_grid``).
MAX_GRID_POINTS = 1_000_000
#: Largest ``points_per_segment`` (``pr_curve``, ``broc_curve``: ``(K, n)`` samples).
MAX_POINTS_PER_SEGMENT = 1_000

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
    with np.errstate(over="ignore"):
        total = float(np.sum(w))
    if not math.isfinite(total):
        raise ValueError(
            f"{name} sums to more than the largest float (largest weight {float(w.max())!r}): "
            "the cumulative counts would overflow; rescale the weights (only their ratios "
            "matter)"
        )
    return w


def _numeric_array(value: Any, name: str, want: str, max_size: int | None = None) -> np.ndarray:
    """``value`` as a float64 array, refusing what only looks numeric (names ``name``).

    Strings, booleans, ``None``, complex numbers and objects that are not numbers raise a
    :class:`ValueError` saying what ``name`` must be (``want``) and what it got; so does an
    array of more than ``max_size`` values (checked before converting a numpy array).
    """
    if value is None or isinstance(value, str | bytes | bool | np.bool_ | Mapping):
        raise ValueError(f"{name} must be {want}, got {plain(value)!r}")
    size = value.size if isinstance(value, np.ndarray) else None
    if size is None and isinstance(value, Sequence):
        size = len(value)
    if max_size is not None and size is not None and size > max_size:
        raise ValueError(f"{name} holds {size} values, above the limit of {max_size}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {want}, got {plain(value)!r}") from None
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be {want}, got {_shown(value)}") from None
    if arr.dtype.kind not in "iuf":
        what = "booleans" if arr.dtype.kind == "b" else f"dtype {arr.dtype}"
        raise ValueError(f"{name} must be {want}, got {what}: {_shown(value)}")
    if max_size is not None and arr.size > max_size:
        raise ValueError(f"{name} holds {arr.size} values, above the limit of {max_size}")
    return arr.astype(np.float64, copy=False)


def _shown(value: Any) -> str:
    """A short repr of a user value for an error message (at most ~80 characters)."""
    text = repr(plain(value))
    return text if len(text) <= 80 else text[:77] + "..."


def _real(value: Any, name: str, want: str) -> float:
    """One real number as a float; strings, booleans, sequences and None refused."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {want}, got {_shown(value)}")
    return float(value)


def check_prevalence(
    prevalence: Any,
    name: str = "prevalence",
    *,
    scalar: bool = False,
    max_size: int = MAX_PREVALENCES,
) -> np.ndarray:
    """Validate one prevalence or an array of them: every value strictly inside (0, 1).

    Args:
        prevalence: a number, or a sequence / array of numbers.
        name: argument name used in error messages.
        scalar: require a single number (a list or array is refused, naming ``name``).
        max_size: most prevalences accepted (:data:`MAX_PREVALENCES`).

    Returns:
        The prevalences as a float64 array (0-d for a number).

    Raises:
        ValueError: naming ``name`` and the value, for strings, booleans, non-numbers, more
            than ``max_size`` values, a sequence where one number is needed, or a value
            outside (0, 1) (NaN included).
    """
    if _VALIDATED.get():
        return np.asarray(prevalence, dtype=np.float64)
    want = "a number strictly between 0 and 1" + ("" if scalar else " (or an array of them)")
    if scalar:
        return np.asarray(_check_open_unit(_real(prevalence, name, want), name))
    eta = _numeric_array(prevalence, name, want, max_size)
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
    switch one kind of error off with a zero. Strings, booleans (a flag passed where a cost
    belongs) and sequences are refused.
    """
    if _VALIDATED.get():
        return float(value)
    want = "a non-negative finite number" if allow_zero else "positive and finite"
    v = _real(value, name, f"{want} (a number)")
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
    m = _real(max_fpr, name, "a number in (0, 1]")
    if not (0.0 < m <= 1.0):
        raise ValueError(f"{name} must be in (0, 1], got {plain(max_fpr)!r}")
    return m


def _check_open_unit(v: float, name: str) -> float:
    if not (0.0 < v < 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {v!r}")
    return v


def check_fraction(value: Any, name: str) -> float:
    """Validate a required rate (``min_precision``, ``min_recall``): a number in [0, 1].

    Strings, booleans (``min_recall=True`` is a flag, not a rate), sequences and NaN are
    refused with a :class:`ValueError` naming ``name``.
    """
    v = _real(value, name, "a number in [0, 1]")
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {plain(value)!r}")
    return v


def check_alerts_per(value: Any, name: str = "max_alerts_per") -> tuple[float, float]:
    """Validate an alert budget ``(max_alerts, per_cases)``, e.g. ``(50, 10_000)``.

    ``max_alerts`` a finite number ``>= 0``, ``per_cases`` a finite number ``> 0`` (an
    infinite or zero denominator makes the budget meaningless); booleans and strings refused.

    Returns:
        ``(max_alerts, per_cases)`` as floats.
    """
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"{name} must be a pair (max_alerts, per_cases), got {_shown(value)}")
    alerts = _real(value[0], f"{name}[0] (max_alerts)", "a finite number >= 0")
    per = _real(value[1], f"{name}[1] (per_cases)", "a finite number > 0")
    if not (math.isfinite(alerts) and alerts >= 0):
        raise ValueError(f"{name}[0] (max_alerts) must be a finite number >= 0, got {alerts!r}")
    if not (math.isfinite(per) and per > 0):
        raise ValueError(f"{name}[1] (per_cases) must be a finite number > 0, got {per!r}")
    return alerts, per


def check_size(value: Any, name: str, *, minimum: int = 1, maximum: int) -> int:
    """Validate a count argument (a grid size, samples per segment): an integer in range.

    Raises:
        ValueError: naming ``name``, for booleans, non-integers, and values outside
            ``[minimum, maximum]`` (the limit is stated, so ``num=10**9`` fails before any
            allocation).
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {_shown(value)}")
    if not (math.isfinite(value) and int(value) == value and value >= minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {plain(value)!r}")
    if value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {plain(value)!r}")
    return int(value)


def check_nesting(value: Any, name: str, *, max_depth: int) -> int:
    """Refuse containers nested more than ``max_depth`` levels deep; return the depth.

    Mappings, lists, tuples and arrays (one level per dimension) each count one level; the
    walk is iterative, so a value nested 100,000 deep is refused without a ``RecursionError``,
    and a container holding itself is refused too.

    Raises:
        ValueError: naming ``name`` and the limit.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        elif isinstance(item, np.ndarray) and item.ndim:
            depth += item.ndim - 1
            children = item.ravel() if item.dtype == object else ()
        else:
            continue
        if depth > max_depth:
            raise ValueError(
                f"{name} is nested more than {max_depth} levels deep (mappings and lists "
                "inside each other); flatten it"
            )
        deepest = max(deepest, depth)
        stack.extend(
            (child, depth + 1)
            for child in children
            if isinstance(child, Mapping | list | tuple | np.ndarray)
        )
    return deepest
