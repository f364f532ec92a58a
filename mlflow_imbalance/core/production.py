"""Exact counts of unlabeled (production) scores: build, merge, query, store (numpy only).

A :class:`ScoreCounts` is the unlabeled counterpart of :class:`~mlflow_imbalance.core.counts.
RocCounts`: for every distinct production score, in *descending* order, the number of cases
scoring at or above it. Tied scores form one threshold. From these counts the share of
production cases at or above any threshold ``t``,

    q(t) = #{score >= t} / n,

is exact (a right-continuous step function of ``-t``). Under prior shift (the class-conditional
score distributions of the test set, only the class balance changed) it equals
``eta * TPR(t) + (1 - eta) * FPR(t)`` (Forman 2005; Saerens, Latinne & Decaestecker 2002),
which :func:`mlflow_imbalance.stats.prevalence.estimate_prevalence` inverts for the deployment
prevalence ``eta``.

The counts are exact and mergeable: :func:`merge_score_counts` of the counts of disjoint
batches equals :meth:`ScoreCounts.from_scores` of their concatenation, so production batches can
be logged one at a time and combined later. :meth:`ScoreCounts.to_arrays` /
:meth:`ScoreCounts.from_arrays` are the on-disk representation (``np.savez(f,
**sc.to_arrays())`` and ``ScoreCounts.from_arrays(**np.load(f))``).
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import _check_thresholds, _count_scores

logger = logging.getLogger(__name__)

__all__ = ["ScoreCounts", "merge_score_counts"]


def _check_total(n: Any) -> int:
    """``n`` as a positive Python int (0-d arrays accepted), else a ValueError naming ``n``."""
    arr = np.asarray(n)
    if arr.ndim != 0:
        raise ValueError(f"n must be a single integer, got an array of shape {arr.shape}")
    value = arr.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"n must be a positive integer, got {value!r}")
    if not np.isfinite(value) or value != int(value) or int(value) <= 0:
        raise ValueError(f"n must be a positive integer, got {value!r}")
    return int(value)


@dataclass(frozen=True, eq=False)
class ScoreCounts:
    """Exact counts of unlabeled scores: cases scoring at or above each distinct score.

    Attributes:
        thresholds: distinct scores, strictly descending (float64, finite, read-only).
        n_above: cases scoring at or above ``thresholds[i]``; cumulative, non-decreasing
            (int64, read-only). Built from scores, ``n_above[-1] == n``.
        n: total number of cases.

    The constructor validates like :meth:`from_arrays`; build from raw scores with
    :meth:`from_scores`.
    """

    thresholds: np.ndarray
    n_above: np.ndarray
    n: int

    def __post_init__(self) -> None:
        thr = np.asarray(self.thresholds)
        cnt = np.asarray(self.n_above)
        for name, arr in (("thresholds", thr), ("n_above", cnt)):
            if arr.ndim != 1:
                raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
            if arr.dtype.kind not in "iuf" and arr.size:
                raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
        if thr.size != cnt.size:
            raise ValueError(
                f"thresholds and n_above must have the same length, got {thr.size} and {cnt.size}"
            )
        if thr.size == 0:
            raise ValueError("ScoreCounts needs at least one threshold, got none")
        thr = thr.astype(np.float64)
        _check_thresholds(thr)
        if cnt.dtype.kind == "f":
            bad = ~np.isfinite(cnt) | (cnt != np.round(cnt))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"n_above must hold integer counts: n_above[{i}]={cnt[i].item()!r}"
                )
        cnt = cnt.astype(np.int64)
        if cnt[0] < 0:
            raise ValueError(f"n_above must be non-negative, got n_above[0]={cnt[0].item()}")
        if cnt.size > 1 and np.any(cnt[1:] < cnt[:-1]):
            i = int(np.flatnonzero(cnt[1:] < cnt[:-1])[0])
            raise ValueError(
                "n_above must be cumulative (non-decreasing): "
                f"n_above[{i + 1}]={cnt[i + 1].item()} < n_above[{i}]={cnt[i].item()}"
            )
        total = _check_total(self.n)
        if cnt[-1] > total:
            raise ValueError(f"n_above[-1]={cnt[-1].item()} exceeds n={total}")
        thr.flags.writeable = False
        cnt.flags.writeable = False
        object.__setattr__(self, "thresholds", thr)
        object.__setattr__(self, "n_above", cnt)
        object.__setattr__(self, "n", total)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_scores(cls, scores: Any) -> ScoreCounts:
        """Exact counts of unlabeled scores (one sort; tied scores form one threshold).

        Args:
            scores: 1-d finite numeric scores (list, numpy array, pandas Series); a 2-column
                ``predict_proba`` output is refused with the hint to pass ``scores[:, 1]``.

        Returns:
            The counts, ``n_above[-1] == n == len(scores)``.

        Raises:
            ValueError: on empty, non-1-d, non-numeric or non-finite scores (the message names
                ``scores`` and the offending count/value).
        """
        s, _, _ = _count_scores(scores, "scores")
        if s.size == 0:
            raise ValueError("scores is empty: need at least one production score")
        a = np.sort(s)
        new = np.empty(a.size, dtype=bool)
        new[0] = True
        np.not_equal(a[1:], a[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        thresholds = a[starts][::-1].astype(np.float64)
        n_above = (a.size - starts)[::-1].astype(np.int64)
        return cls(thresholds, n_above, int(a.size))

    @classmethod
    def from_arrays(cls, thresholds: Any, n_above: Any, n: Any) -> ScoreCounts:
        """Counts from stored arrays (the inverse of :meth:`to_arrays`), validated.

        Args:
            thresholds: strictly descending finite scores.
            n_above: cumulative non-decreasing non-negative integer counts, same length.
            n: total number of cases, a positive integer ``>= n_above[-1]``.

        Raises:
            ValueError: naming the array and the first offending entry.
        """
        return cls(thresholds, n_above, n)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays to store: ``{"thresholds", "n_above", "n"}`` (``n`` a 0-d int64 array).

        ``ScoreCounts.from_arrays(**sc.to_arrays())`` round-trips exactly, also through
        ``np.savez`` / ``np.load``.
        """
        return {
            "thresholds": np.array(self.thresholds, dtype=np.float64),
            "n_above": np.array(self.n_above, dtype=np.int64),
            "n": np.asarray(self.n, dtype=np.int64),
        }

    # ------------------------------------------------------------------ queries
    @property
    def n_thresholds(self) -> int:
        """Number of distinct thresholds."""
        return int(self.thresholds.size)

    def __len__(self) -> int:
        return self.n_thresholds

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScoreCounts):
            return NotImplemented
        return (
            self.n == other.n
            and np.array_equal(self.thresholds, other.thresholds)
            and np.array_equal(self.n_above, other.n_above)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        lo, hi = self.thresholds[-1].item(), self.thresholds[0].item()
        return f"ScoreCounts(n={self.n}, n_thresholds={self.n_thresholds}, range=[{lo!r}, {hi!r}])"

    @property
    def min_score(self) -> float:
        """Lowest stored score."""
        return float(self.thresholds[-1])

    @property
    def max_score(self) -> float:
        """Highest stored score."""
        return float(self.thresholds[0])

    def per_threshold(self) -> np.ndarray:
        """Non-cumulative counts: cases scoring exactly ``thresholds[i]`` (int64)."""
        return np.diff(self.n_above, prepend=0)

    def count_at_or_above(self, t: Any) -> np.ndarray | int:
        """Exact number of cases scoring ``>= t`` for scalar or array ``t`` (int / int64 array)."""
        t_arr = np.asarray(t, dtype=np.float64)
        if np.isnan(t_arr).any():
            raise ValueError("t must not be NaN")
        asc = self.thresholds[::-1]
        k = self.thresholds.size - np.searchsorted(asc, t_arr, side="left")  # thresholds >= t
        padded = np.concatenate([[0], self.n_above])
        out = padded[k]
        return int(out) if np.ndim(out) == 0 else out

    def share_at_or_above(self, t: Any) -> np.ndarray | float:
        """q(t): share of cases scoring ``>= t``, exact, for scalar or array ``t``."""
        c = self.count_at_or_above(t)
        return c / self.n if isinstance(c, int) else c.astype(np.float64) / self.n


def merge_score_counts(parts: Iterable[ScoreCounts]) -> ScoreCounts:
    """Counts of the concatenation of disjoint batches (exact).

    ``merge_score_counts([ScoreCounts.from_scores(a), ScoreCounts.from_scores(b)])`` equals
    ``ScoreCounts.from_scores(np.concatenate([a, b]))``.

    Args:
        parts: one or more :class:`ScoreCounts`.

    Raises:
        ValueError: when ``parts`` is empty; TypeError for a part that is not ScoreCounts.
    """
    items = list(parts)
    if not items:
        raise ValueError("parts is empty: nothing to merge")
    for i, p in enumerate(items):
        if not isinstance(p, ScoreCounts):
            raise TypeError(f"parts[{i}] is a {type(p).__name__}, not ScoreCounts")
    if len(items) == 1:
        return items[0]
    thr = np.concatenate([p.thresholds for p in items])
    per = np.concatenate([p.per_threshold() for p in items])
    uniq, inverse = np.unique(thr, return_inverse=True)
    sums = np.zeros(uniq.size, dtype=np.int64)
    np.add.at(sums, inverse, per)
    n = sum(p.n for p in items)
    return ScoreCounts(uniq[::-1], np.cumsum(sums[::-1]), n)
