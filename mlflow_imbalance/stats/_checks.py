"""Boundary checks shared by the stats modules; every error message names the argument.

Values are shown as plain Python numbers in messages (``_plain``, ``_count``); the checks cover
the confidence level, binomial counts, prevalence grids, and how a seed is recorded on a band.

:class:`InsufficientDataError` is the one exception a statistic raises when the counts
themselves (not an argument) cannot support it: too few examples of a class, or weighted counts
where integer counts are needed. A caller that evaluates many runs (the report) catches it per
run; every other misuse stays a plain :class:`ValueError` / :class:`TypeError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlflow_imbalance.core.curves import default_prevalence_grid
from mlflow_imbalance.core.validation import check_prevalence


class InsufficientDataError(ValueError):
    """The counts of a run cannot support this statistic (too few examples, or weighted).

    Raised, with a one-line message naming the run's counts (e.g. ``"1 negative: a DeLong
    variance needs at least 2"``), by the statistics that have no honest answer for such counts;
    the statistics that do have one (a band spanning what is not known, a NaN interval marked
    unavailable) return it instead and say so in their docstrings. A subclass of
    :class:`ValueError`, so code catching ``ValueError`` keeps working.
    """


def _class_counts(counts: Any) -> str:
    """``"3 positives and 1 negative"`` (weighted totals as plain numbers)."""

    def one(n: Any, word: str) -> str:
        v = _count(n)
        return f"{v} {word}" + ("" if v == 1 else "s")

    return f"{one(counts.n_pos, 'positive')} and {one(counts.n_neg, 'negative')}"


def _require_unweighted(counts: Any, what: str) -> None:
    """Raise :class:`InsufficientDataError` for weighted counts (``what`` needs integers)."""
    if counts.weighted:
        raise InsufficientDataError(
            f"counts are weighted (sample_weight was given; {_class_counts(counts)} by weight): "
            f"{what} needs integer counts"
        )


def _require_class_sizes(counts: Any, minimum: int, what: str) -> None:
    """Raise :class:`InsufficientDataError` unless each class has ``minimum`` examples.

    The message names the class that is short and the run's counts, e.g. ``"1 negative (of
    3 positives and 1 negative): DeLong's variance needs at least 2 positives and 2
    negatives"``.
    """
    for n, word in ((counts.n_neg, "negative"), (counts.n_pos, "positive")):
        if float(n) < minimum:
            v = _count(n)
            raise InsufficientDataError(
                f"{v} {word}{'' if v == 1 else 's'} (of {_class_counts(counts)}): {what} needs "
                f"at least {minimum} positives and {minimum} negatives"
            )


def _plain(x: Any) -> Any:
    """A value as a plain Python number (or list) for error messages.

    ``0.5`` rather than ``np.float64(0.5)``; arrays become (at most 6-item) lists, other
    objects are returned unchanged.
    """
    if isinstance(x, np.ndarray) and x.ndim > 0:
        flat = x.reshape(-1)
        items = [_plain(v) for v in flat[:6]]
        return items if flat.size <= 6 else [*items, "..."]
    if isinstance(x, np.generic | np.ndarray):
        return x.item()
    return x


def _count(x: Any) -> Any:
    """A count for an error message: ``11`` for 11.0, ``1.5`` for 1.5 (plain Python)."""
    v = _plain(x)
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    return v


def _check_confidence(confidence: float) -> float:
    try:
        c = float(confidence)
    except (TypeError, ValueError):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}") from None
    if not (0.0 < c < 1.0):
        raise ValueError(
            f"confidence must lie strictly between 0 and 1, got {_plain(confidence)!r}"
        )
    return c


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> Any:
    return _count(np.broadcast_to(arr, bad.shape)[bad].reshape(-1)[0])


def _check_counts(
    k: Any, n: Any, k_name: str = "k", n_name: str = "n", *, integer: bool = False
) -> tuple[Any, Any]:
    """Validate successes ``k`` of ``n`` trials (broadcastable); errors name the argument.

    ``integer=True`` also requires whole numbers (the binomial intervals are defined for
    integer counts only); fractional (weighted) counts raise :class:`InsufficientDataError`.
    """
    k_arr = np.asarray(k, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    for arr, name in ((k_arr, k_name), (n_arr, n_name)):
        bad = ~np.isfinite(arr)
        if np.any(bad):
            raise ValueError(f"{name} must be finite, got {name}={_first_bad(arr, bad)!r}")
    if np.any(n_arr <= 0):
        raise ValueError(f"{n_name} must be positive, got {n_name}={_count(n_arr.min())!r}")
    if np.any(k_arr < 0):
        raise ValueError(f"{k_name} must be non-negative, got {k_name}={_count(k_arr.min())!r}")
    if integer:
        for arr, name in ((k_arr, k_name), (n_arr, n_name)):
            frac = arr != np.floor(arr)
            if np.any(frac):
                raise InsufficientDataError(
                    f"{name} must be a whole number (binomial counts), got "
                    f"{name}={_first_bad(arr, frac)!r}; weighted counts have no binomial "
                    "interval (the logging hook reports point estimates for them)"
                )
    k_b, n_b = np.broadcast_arrays(k_arr, n_arr)
    if np.any(k_b > n_b):
        i = np.flatnonzero((k_b > n_b).reshape(-1))[0]
        raise ValueError(
            f"{k_name} exceeds {n_name}: {k_name}={_count(k_b.reshape(-1)[i])!r} > "
            f"{n_name}={_count(n_b.reshape(-1)[i])!r}"
        )
    return k_arr, n_arr


def _prevalence_grid(prevalences: Any) -> np.ndarray:
    """``prevalences`` validated as a 1-d float grid; None = the default log grid."""
    if prevalences is None:
        return default_prevalence_grid()
    return np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)


def _seed_record(seed: Any) -> Any:
    """The seed as recorded on a :class:`Band` (None for a Generator: not reproducible)."""
    return None if isinstance(seed, np.random.Generator) else seed


def _scalar_or_array(x: np.ndarray, scalar: bool) -> Any:
    return float(x) if scalar else x
