"""Exact ROC counts of one evaluation: build, compress, reduce, merge, accumulate (numpy only).

A :class:`RocCounts` holds, for every distinct score threshold in *descending* order, the
cumulative number (or weight) of positives ``tp`` and negatives ``fp`` whose score is at or above
it, plus the class totals ``n_pos`` and ``n_neg``. Tied scores form one threshold: the "tie
batch" of Maxion & Roberts (2004, §2.2) -- the threshold is lowered once for the group and both
class counts grow by the group's members. The implicit first point of every curve is the origin
(threshold +inf, nothing predicted positive); it is not stored.

These counts do not depend on the class prevalence of the test set, and every prevalence-aware
metric in :mod:`mlflow_imbalance.metrics` is an exact function of them (Brabec et al. 2020, §2,
eq. 8).

Lossless compression (the default) keeps every threshold at which at least one positive scores
and, of each run of consecutive thresholds that hold only negatives, the last one (the corner of
the ROC staircase). Points dropped that way lie on a horizontal ROC segment between two kept
points, so no metric of this package changes; runs of positive thresholds are *not* merged,
because average precision sums precision over each of them. The result has at most
``2 * (number of positive thresholds) + 1`` points.

Building the compressed counts never needs the negatives in order: only, for each gap between
consecutive distinct positive scores, how many negatives fall in it and the lowest of them (the
corner threshold). Four exact kernels (:mod:`mlflow_imbalance.core._kernels`) cover every
prevalence, dtype and tie structure; each costs at most one sort plus a few linear passes
(measured 0.86-3.7x an AVX-512 ``np.sort`` of the same 10^7 scores, lowest at low prevalence;
docs/architecture.md, ``benchmarks/bench_counts.py``):

* buckets -- at most 2^15 distinct positive scores (low prevalence, or rounded / tree-model
  scores at any prevalence), tied or not, float64 or float32: one sort-free pass maps every
  score to a cell and one representative value (the positive score, a decimal-lattice value, a
  sampled tie); only the few scores that share a cell with no representative are sorted;
* grid -- few positives (low prevalence) with few, untied float64 scores: every score is
  bucketed into its gap with an exact uniform-grid lookup in a few vectorised O(n) passes; only
  the positives are sorted;
* split -- few positives otherwise, or heavily tied ones (rounded / discrete scores, whose sort
  is cheap): all scores are sorted once (with positives above 1/8 of the negatives, the
  negatives alone) and the distinct positive scores are binary-searched among them -- one
  search per distinct positive score, not per negative; a score strictly between two
  neighbouring distinct positive scores is a negative, so no copy of the negatives is needed;
* merged -- many distinct positive scores: each score becomes an integer key ``2 k + label``
  (``k`` an order-preserving injective map of its bits), one in-place sort of the keys merges
  both classes, and a linear scan of the sorted keys reads every threshold's counts off.

float32 scores stay float32 (they sort faster; every float32 value is a float64 value), as do
float64 scores that are all float32 values. Integer scores are exact: beyond 2**53 in magnitude
they are accepted as long as no two distinct values round to the same float64 threshold, and
rejected with a ValueError naming ``y_score`` otherwise. All paths are exact, ties included,
and are checked against scikit-learn in the tests.

Stored size is bounded: :meth:`RocCounts.bounded` keeps counts with at most
:data:`MAX_STORED_THRESHOLDS` thresholds as they are (lossless) and applies the bounded-error
:meth:`RocCounts.reduce` beyond, recording the error, so a logged archive always loads.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from mlflow_imbalance.core import format as _format
from mlflow_imbalance.core._kernels import (
    _compressed_unweighted,
    _compressed_weighted,
    _full_tables,
    _keep_mask,
)
from mlflow_imbalance.core.validation import (
    as_1d_array,
    binarize_labels,
    binarize_labels_with_classes,
    check_label_union,
    check_same_length,
    check_scores,
    check_weights,
    plain,
)

logger = logging.getLogger(__name__)

#: The open interval (0, 1) of prevalences, in doubles.
_TINY = float(np.nextafter(0.0, 1.0))
_BELOW_ONE = float(np.nextafter(1.0, 0.0))

__all__ = ["MAX_STORED_THRESHOLDS", "CountsAccumulator", "RocCounts", "merge_counts"]

#: Most thresholds :meth:`RocCounts.bounded` keeps losslessly (about 400 MB uncompressed, well
#: under the loader's 1 GiB archive limit, :data:`mlflow_imbalance.core.format.MAX_ARCHIVE_BYTES`).
#: Balanced data store about half a threshold per score, so up to ~3.5e7 scores stay lossless;
#: above, the bounded-error reduction moves no point by more than ``2 / (2**24 - 1)``.
MAX_STORED_THRESHOLDS = 1 << 24

#: Integer scores up to this magnitude are exact in float64.
_EXACT_INT = 2**53


def _count_scores(y_score: Any, name: str = "y_score") -> tuple[np.ndarray, float, float]:
    """Validated scores for the kernels, with their smallest and largest value.

    float32 scores stay float32 (so do float16 and small integers, exactly); integers are
    exact in float64 up to 2**53 and beyond as long as no two distinct values share a float64;
    everything else goes through :func:`~mlflow_imbalance.core.validation.check_scores` (float64).
    The min/max reductions double as the finiteness check (NaN propagates through both).

    Raises:
        ValueError: like ``check_scores``, and for integer scores that float64 would merge.
    """
    s = as_1d_array(y_score, name)
    kind = s.dtype.kind
    if kind == "b" or (kind in "iu" and s.dtype.itemsize <= 2) or s.dtype == np.float16:
        s = s.astype(np.float32)
    elif kind in "iu":
        if s.size == 0:
            return s.astype(np.float64), 0.0, 0.0
        lo_i, hi_i = int(s.min()), int(s.max())
        if max(-lo_i, hi_i) <= 1 << 24:
            s = s.astype(np.float32)
        elif max(-lo_i, hi_i) <= _EXACT_INT:
            s = s.astype(np.float64)
        else:
            s = _wide_integers(s, name)
    if s.dtype != np.float32 and s.dtype != np.float64:
        s = check_scores(s, name)  # float64; raises for non-numeric scores
    s = np.ascontiguousarray(s)
    if s.size == 0:
        return s, 0.0, 0.0
    lo, hi = float(s.min()), float(s.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        check_scores(s, name)  # raises, naming the argument and the bad values
    return s, lo, hi


def _wide_integers(s: np.ndarray, name: str) -> np.ndarray:
    """Integer scores beyond 2**53 as float64, if distinct values stay distinct (else raise)."""
    distinct = np.unique(s)
    as_float = distinct.astype(np.float64)
    same = np.flatnonzero(as_float[1:] == as_float[:-1])
    if same.size:
        a, b = distinct[same[0]].item(), distinct[same[0] + 1].item()
        raise ValueError(
            f"{name} holds integer scores beyond 2**53 that float64 thresholds cannot keep "
            f"apart ({a} and {b} are both stored as {float(as_float[same[0]])!r}; "
            f"{same.size} such pair(s)): rescale or rank the scores first"
        )
    return s.astype(np.float64)


def _check_thresholds(thr: np.ndarray) -> None:
    """Stored thresholds are finite and strictly descending (RocCounts and ScoreCounts)."""
    if not np.all(np.isfinite(thr)):
        i = int(np.flatnonzero(~np.isfinite(thr))[0])
        raise ValueError(f"thresholds must be finite: thresholds[{i}]={thr[i].item()!r}")
    if thr.size > 1 and not np.all(thr[1:] < thr[:-1]):
        i = int(np.flatnonzero(~(thr[1:] < thr[:-1]))[0])
        raise ValueError(
            "thresholds must be strictly descending: "
            f"thresholds[{i + 1}]={thr[i + 1].item()!r} follows thresholds[{i}]={thr[i].item()!r}"
        )


class RocCounts:
    """Exact ROC counts: cumulative positives and negatives at or above each threshold.

    Attributes:
        thresholds: distinct score thresholds, strictly descending (float64).
        tp: positives (count, or weight with ``sample_weight``) scoring at or above each
            threshold; cumulative, non-decreasing.
        fp: negatives scoring at or above each threshold; cumulative, non-decreasing.
        n_pos: total positives (count or weight).
        n_neg: total negatives (count or weight).
        compressed: True when thresholds were dropped (losslessly or not); such counts cannot be
            merged exactly with others.
        max_tpr_error: largest TPR error introduced by :meth:`reduce` (0 when exact).
        max_fpr_error: largest FPR error introduced by :meth:`reduce` (0 when exact).
        weighted: True when built with sample weights (``tp``/``fp`` are float64).
    """

    __slots__ = (
        "compressed",
        "fp",
        "max_fpr_error",
        "max_tpr_error",
        "n_neg",
        "n_pos",
        "thresholds",
        "tp",
        "weighted",
    )

    def __init__(
        self,
        thresholds: Any,
        tp: Any,
        fp: Any,
        n_pos: float,
        n_neg: float,
        *,
        compressed: bool = False,
        max_tpr_error: float = 0.0,
        max_fpr_error: float = 0.0,
        weighted: bool | None = None,
    ) -> None:
        thr = np.asarray(thresholds, dtype=np.float64)
        tp_arr = np.asarray(tp)
        fp_arr = np.asarray(fp)
        if weighted is None:
            weighted = tp_arr.dtype.kind == "f" or fp_arr.dtype.kind == "f"
        dtype = np.float64 if weighted else np.int64
        for name, arr in (("thresholds", thr), ("tp", tp_arr), ("fp", fp_arr)):
            if arr.ndim != 1:
                raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
        if not (thr.size == tp_arr.size == fp_arr.size):
            raise ValueError(
                "thresholds, tp and fp must have the same length, got "
                f"{thr.size}, {tp_arr.size} and {fp_arr.size}"
            )
        if thr.size == 0:
            raise ValueError("RocCounts needs at least one threshold, got none")
        if not weighted:
            for name, arr in (("tp", tp_arr), ("fp", fp_arr)):
                if arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
                    raise ValueError(f"{name} holds non-integer counts but weighted=False")
        tp_arr = tp_arr.astype(dtype, copy=False)
        fp_arr = fp_arr.astype(dtype, copy=False)
        _check_thresholds(thr)
        for name, arr in (("tp", tp_arr), ("fp", fp_arr)):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be finite")
            if arr.size and arr.min() < 0:
                raise ValueError(f"{name} must be non-negative, found {arr.min().item()!r}")
            if arr.size > 1 and np.any(arr[1:] < arr[:-1]):
                i = int(np.flatnonzero(arr[1:] < arr[:-1])[0])
                raise ValueError(
                    f"{name} must be cumulative (non-decreasing): "
                    f"{name}[{i + 1}]={arr[i + 1].item()!r} < {name}[{i}]={arr[i].item()!r}"
                )
        n_pos_v = float(n_pos) if weighted else int(n_pos)
        n_neg_v = float(n_neg) if weighted else int(n_neg)
        if not weighted and (n_pos_v != n_pos or n_neg_v != n_neg):
            raise ValueError(
                f"n_pos and n_neg must be integers, got {plain(n_pos)!r} and {plain(n_neg)!r}"
            )
        for name, total, arr in (("n_pos", n_pos_v, tp_arr), ("n_neg", n_neg_v, fp_arr)):
            if not np.isfinite(total) or total <= 0:
                raise ValueError(f"{name} must be positive, got {plain(total)!r}")
            tol = 1e-9 * total if weighted else 0
            if arr[-1] > total + tol:
                key = "tp" if name == "n_pos" else "fp"
                raise ValueError(f"{key}[-1]={arr[-1].item()!r} exceeds {name}={plain(total)!r}")
        for name, err in (("max_tpr_error", max_tpr_error), ("max_fpr_error", max_fpr_error)):
            if not (0.0 <= float(err) <= 1.0):
                raise ValueError(f"{name} must lie in [0, 1], got {plain(err)!r}")
        thr.flags.writeable = False
        tp_arr.flags.writeable = False
        fp_arr.flags.writeable = False
        self.thresholds = thr
        self.tp = tp_arr
        self.fp = fp_arr
        self.n_pos = n_pos_v
        self.n_neg = n_neg_v
        self.compressed = bool(compressed)
        self.max_tpr_error = float(max_tpr_error)
        self.max_fpr_error = float(max_fpr_error)
        self.weighted = bool(weighted)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_scores(
        cls,
        y_true: Any,
        y_score: Any,
        *,
        pos_label: Any = None,
        sample_weight: Any = None,
        compress: bool = True,
    ) -> RocCounts:
        """Exact ROC counts of scores against binary labels.

        Args:
            y_true: binary labels (bool, int, float or str; list, numpy array or pandas Series).
            y_score: scores, higher meaning more likely positive; finite numbers (float32 is
                kept float32; integers are exact, see the module docstring).
            pos_label: the positive label; needed unless labels are {0,1}, {-1,1} or bools.
            sample_weight: optional non-negative finite weights, one per example.
            compress: apply the lossless compression (see module docstring). Pass False to keep
                every distinct threshold, e.g. to :func:`merge_counts` the result later.

        Returns:
            The counts, thresholds strictly descending, ``tp``/``fp`` int64 (float64 when
            weighted).

        Raises:
            ValueError: on NaN/inf scores, non-binary labels, one class only, empty input,
                length mismatch, negative/NaN weights, or integer scores beyond 2**53 that
                float64 thresholds would merge; the message names the argument.
        """
        y = as_1d_array(y_true, "y_true")
        s, lo, hi = _count_scores(y_score, "y_score")
        check_same_length([y, s], ["y_true", "y_score"])
        is_pos = binarize_labels(y, pos_label, name="y_true")
        w = check_weights(sample_weight, y.size)
        return cls._from_validated(is_pos, s, w, compress=compress, bounds=(lo, hi))

    @classmethod
    def _from_validated(
        cls,
        is_pos: np.ndarray,
        s: np.ndarray,
        w: np.ndarray | None,
        *,
        compress: bool,
        bounds: tuple[float, float] | None = None,
    ) -> RocCounts:
        """Counts of validated data (``s`` float32/float64, finite; ``bounds`` its min, max)."""
        weighted = w is not None
        is_pos = np.ascontiguousarray(is_pos, dtype=bool)
        if s.dtype != np.float32:
            s = np.ascontiguousarray(s, dtype=np.float64)
        if compress:
            if weighted:
                thr, tp, fp = _compressed_weighted(s, is_pos, w)
            else:
                lo, hi = bounds if bounds is not None else (None, None)
                thr, tp, fp = _compressed_unweighted(s, is_pos, lo, hi)
            n_pos, n_neg = tp[-1], fp[-1]  # the lowest threshold is always kept
        else:
            thr, dtp, dfp = _full_tables(is_pos, s, w)
            tp, fp = np.cumsum(dtp), np.cumsum(dfp)
            n_pos, n_neg = tp[-1], fp[-1]
        if weighted and (n_pos <= 0 or n_neg <= 0):
            which = "positives" if n_pos <= 0 else "negatives"
            raise ValueError(f"sample_weight gives the {which} a total weight of zero")
        out = cls(thr, tp, fp, n_pos, n_neg, compressed=compress, weighted=weighted)
        # With weights, a positive of zero weight leaves tp flat: compress() drops its threshold
        # exactly as it would in the uncompressed curve.
        return out.compress() if (compress and weighted) else out

    @classmethod
    def _from_tables(
        cls,
        thresholds_desc: np.ndarray,
        pos_counts: np.ndarray,
        neg_counts: np.ndarray,
        *,
        weighted: bool,
        compress: bool,
    ) -> RocCounts:
        """Counts from per-threshold (non-cumulative) class counts, thresholds descending."""
        tp = np.cumsum(pos_counts)
        fp = np.cumsum(neg_counts)
        n_pos, n_neg = tp[-1], fp[-1]
        if n_pos <= 0 or n_neg <= 0:
            which = "positive" if n_pos <= 0 else "negative"
            raise ValueError(
                f"the data hold no {which} example: ROC counts need both positives and negatives"
            )
        out = cls(thresholds_desc, tp, fp, n_pos, n_neg, weighted=weighted)
        return out.compress() if compress else out

    # ------------------------------------------------------------------ derived values
    @property
    def n_thresholds(self) -> int:
        """Number of stored thresholds (points of the curve, the origin excluded)."""
        return int(self.thresholds.size)

    def __len__(self) -> int:
        return self.n_thresholds

    @property
    def tpr(self) -> np.ndarray:
        """True positive rate (recall) at each threshold."""
        return self.tp / self.n_pos

    @property
    def fpr(self) -> np.ndarray:
        """False positive rate at each threshold."""
        return self.fp / self.n_neg

    @property
    def prevalence(self) -> float:
        """Positive prevalence of the test set, ``n_pos / (n_pos + n_neg)``.

        Strictly between 0 and 1, as every prevalence the metrics take: with extreme weights
        (one class weighing 1e-146 of the other) the ratio rounds onto 0 or 1, and the nearest
        double inside the interval is returned instead.
        """
        p = float(self.n_pos / (self.n_pos + self.n_neg))
        return min(max(p, _TINY), _BELOW_ONE)

    @property
    def is_exact(self) -> bool:
        """True unless :meth:`reduce` introduced an error."""
        return self.max_tpr_error == 0.0 and self.max_fpr_error == 0.0

    def per_threshold(self) -> tuple[np.ndarray, np.ndarray]:
        """Non-cumulative positive and negative counts at each threshold."""
        return np.diff(self.tp, prepend=0), np.diff(self.fp, prepend=0)

    # ------------------------------------------------------------------ transforms
    def compress(self) -> RocCounts:
        """Lossless compression (module docstring); a no-op on already compressed counts."""
        keep = _keep_mask(self.tp)
        if keep.all():
            return self._replace(compressed=True)
        return self._replace(
            thresholds=self.thresholds[keep],
            tp=self.tp[keep],
            fp=self.fp[keep],
            compressed=True,
        )

    def reduce(self, max_points: int) -> RocCounts:
        """Bounded-error reduction to at most ``max_points`` thresholds.

        Points are grouped into ``max_points`` equal bins of ``TPR + FPR`` (which only grows
        along the curve); each bin keeps its last point, which then stands for the dropped
        thresholds before it. A dropped threshold is thus replaced by a lower one, moving its
        point up and right on the ROC curve by less than ``2 / (max_points - 1)`` in each
        coordinate. The realised largest errors are measured exactly and added to
        ``max_tpr_error`` / ``max_fpr_error`` (errors of successive reductions add up). They bound
        the move of every point of the curve it is applied to; a threshold already dropped by
        lossless compression is represented by its corner exactly, as before.

        Args:
            max_points: hard cap on the number of thresholds, at least 2.

        Returns:
            New counts (the same object's data when it already fits).
        """
        if (
            isinstance(max_points, bool)
            or not isinstance(max_points, int | float | np.integer | np.floating)
            or not math.isfinite(max_points)
            or int(max_points) != max_points
            or max_points < 2
        ):
            raise ValueError(f"max_points must be an integer >= 2, got {plain(max_points)!r}")
        max_points = int(max_points)
        if self.n_thresholds <= max_points:
            return self
        tpr, fpr = self.tpr, self.fpr
        s = tpr + fpr
        h = 2.0 / (max_points - 1)
        bins = np.minimum(np.floor(s / h).astype(np.int64), max_points - 1)
        keep = np.empty(bins.size, dtype=bool)
        keep[:-1] = bins[1:] != bins[:-1]
        keep[-1] = True
        kept_idx = np.flatnonzero(keep)
        # Each point is represented by the first kept point at or after it.
        rep = kept_idx[np.searchsorted(kept_idx, np.arange(bins.size), side="left")]
        tpr_err = float(np.max(tpr[rep] - tpr))
        fpr_err = float(np.max(fpr[rep] - fpr))
        return self._replace(
            thresholds=self.thresholds[keep],
            tp=self.tp[keep],
            fp=self.fp[keep],
            compressed=True,
            max_tpr_error=min(1.0, self.max_tpr_error + tpr_err),
            max_fpr_error=min(1.0, self.max_fpr_error + fpr_err),
        )

    def bounded(self, max_thresholds: int = MAX_STORED_THRESHOLDS) -> RocCounts:
        """These counts with at most ``max_thresholds`` thresholds, for storing.

        Lossless (``self`` itself) up to the bound; beyond it the bounded-error :meth:`reduce`
        to exactly that many points at most, its realised error added to ``max_tpr_error`` /
        ``max_fpr_error``. With the default bound a logged archive always fits the loader's
        size limit.

        Args:
            max_thresholds: the bound, an integer >= 2 (default :data:`MAX_STORED_THRESHOLDS`).
        """
        if int(max_thresholds) != max_thresholds or max_thresholds < 2:
            raise ValueError(
                f"max_thresholds must be an integer >= 2, got {plain(max_thresholds)!r}"
            )
        if self.n_thresholds <= max_thresholds:
            return self
        return self.reduce(int(max_thresholds))

    def merge(self, *others: RocCounts, compress: bool = True) -> RocCounts:
        """Counts of the concatenated data of ``self`` and ``others`` (see :func:`merge_counts`)."""
        return merge_counts([self, *others], compress=compress)

    def _replace(self, **changes: Any) -> RocCounts:
        fields = {
            "thresholds": self.thresholds,
            "tp": self.tp,
            "fp": self.fp,
            "n_pos": self.n_pos,
            "n_neg": self.n_neg,
            "compressed": self.compressed,
            "max_tpr_error": self.max_tpr_error,
            "max_fpr_error": self.max_fpr_error,
            "weighted": self.weighted,
        }
        fields.update(changes)
        return RocCounts(
            fields.pop("thresholds"),
            fields.pop("tp"),
            fields.pop("fp"),
            fields.pop("n_pos"),
            fields.pop("n_neg"),
            **fields,
        )

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the counts to ``path`` in the versioned ``.npz`` format (docs/format.md).

        The file is written to a temporary name and renamed, so a failure leaves nothing
        half-written.
        """
        _format.write_atomic(self.to_bytes(), path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> RocCounts:
        """Read counts written by :meth:`save`, validating version and every invariant."""
        return cls.from_bytes(_format.read_archive(path), source=str(path))

    def to_bytes(self) -> bytes:
        """The counts as the bytes of a version-1 ``roc_counts.npz`` archive (docs/format.md)."""
        return _format.encode(self)

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "counts archive") -> RocCounts:
        """Parse and validate archive bytes; errors are ``ValueError`` naming ``source``."""
        fields = _format.decode(data, source)
        try:
            return cls(
                fields.pop("thresholds"),
                fields.pop("tp"),
                fields.pop("fp"),
                fields.pop("n_pos"),
                fields.pop("n_neg"),
                **fields,
            )
        except ValueError as exc:
            raise ValueError(f"{source} holds invalid counts: {exc}") from None

    # ------------------------------------------------------------------ comparison / display
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RocCounts):
            return NotImplemented
        return (
            self.n_pos == other.n_pos
            and self.n_neg == other.n_neg
            and self.weighted == other.weighted
            and self.max_tpr_error == other.max_tpr_error
            and self.max_fpr_error == other.max_fpr_error
            and np.array_equal(self.thresholds, other.thresholds)
            and np.array_equal(self.tp, other.tp)
            and np.array_equal(self.fp, other.fp)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        err = (
            ""
            if self.is_exact
            else (
                f", max_tpr_error={self.max_tpr_error:.3g}, max_fpr_error={self.max_fpr_error:.3g}"
            )
        )
        return (
            f"RocCounts(n_thresholds={self.n_thresholds}, n_pos={self.n_pos}, "
            f"n_neg={self.n_neg}, prevalence={self.prevalence:.4g}, "
            f"compressed={self.compressed}{err})"
        )


def merge_counts(counts: Iterable[RocCounts], *, compress: bool = True) -> RocCounts:
    """Counts of the concatenation of disjoint parts of one evaluation.

    The result equals :meth:`RocCounts.from_scores` on the concatenated data exactly. Inputs
    must be uncompressed (``from_scores(..., compress=False)``): a compressed part has dropped
    negatives-only thresholds that another part's positives may fall between.

    Args:
        counts: the parts, all weighted or all unweighted.
        compress: compress the merged result losslessly.

    Returns:
        The merged counts.
    """
    parts = list(counts)
    if not parts:
        raise ValueError("counts is empty: nothing to merge")
    for i, c in enumerate(parts):
        if not isinstance(c, RocCounts):
            raise TypeError(f"counts[{i}] is a {type(c).__name__}, not RocCounts")
        if c.compressed:
            raise ValueError(
                f"counts[{i}] is compressed and cannot be merged exactly: build the parts with "
                "RocCounts.from_scores(..., compress=False) or use CountsAccumulator"
            )
    weighted = {c.weighted for c in parts}
    if len(weighted) > 1:
        raise ValueError("cannot merge weighted with unweighted counts")
    is_weighted = weighted.pop()
    thr = np.concatenate([c.thresholds for c in parts])
    dtp = np.concatenate([c.per_threshold()[0] for c in parts])
    dfp = np.concatenate([c.per_threshold()[1] for c in parts])
    return RocCounts._from_tables(
        *_combine_tables(thr, dtp, dfp, weighted=is_weighted),
        weighted=is_weighted,
        compress=compress,
    )


def _combine_tables(
    thr: np.ndarray, dtp: np.ndarray, dfp: np.ndarray, *, weighted: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum per-threshold counts over equal thresholds; returns descending distinct thresholds."""
    uniq, inverse = np.unique(thr, return_inverse=True)
    if weighted:
        pos = np.bincount(inverse, weights=dtp, minlength=uniq.size)
        neg = np.bincount(inverse, weights=dfp, minlength=uniq.size)
    else:
        # Integer sums stay exact: np.add.at on int64 instead of bincount's float64.
        pos = np.zeros(uniq.size, dtype=np.int64)
        neg = np.zeros(uniq.size, dtype=np.int64)
        np.add.at(pos, inverse, dtp)
        np.add.at(neg, inverse, dfp)
    return uniq[::-1], pos[::-1], neg[::-1]


class CountsAccumulator:
    """Build exact ROC counts batch by batch, never holding all scores at once.

    Each :meth:`update` reduces its batch to per-distinct-score class counts; batches are
    consolidated into one table (amortised, so the total cost stays O(n log n)). Memory is
    O(number of distinct scores seen), which for tied or rounded scores is far below the number
    of examples; :meth:`result` gives exactly ``RocCounts.from_scores`` of all batches
    concatenated.

    Labels are checked across batches exactly as ``from_scores`` checks the concatenation: the
    distinct labels seen so far (at most two) are kept, and a batch bringing a third label, or
    one that leaves the positive class ambiguous under the default rule (``{-1}`` then
    ``{0, 1}``), is rejected with a ValueError before it changes anything.

    Args:
        pos_label: the positive label, fixed for every batch (required for string labels).
    """

    def __init__(self, pos_label: Any = None) -> None:
        self.pos_label = pos_label
        self._labels: list[Any] = []  # distinct labels of every batch so far (at most two)
        self._weighted: bool | None = None
        self._table: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_size = 0
        self.n_seen = 0

    def update(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> None:
        """Add one batch of labels and scores (validated like ``RocCounts.from_scores``)."""
        y = as_1d_array(y_true, "y_true")
        raw = as_1d_array(y_score, "y_score")
        if (
            raw.dtype.kind in "iu"
            and raw.size
            and max(-int(raw.min()), int(raw.max())) > _EXACT_INT
        ):
            # Batches are combined on float64 thresholds: values of different batches that
            # share a float64 would merge unseen.
            raise ValueError(
                "y_score holds integer scores beyond 2**53 in magnitude, which batches cannot "
                "keep apart exactly: use RocCounts.from_scores on all scores, or rescale them"
            )
        s, _, _ = _count_scores(raw, "y_score")
        check_same_length([y, s], ["y_true", "y_score"])
        if y.size == 0:
            return
        is_pos, batch_labels = binarize_labels_with_classes(
            y, self.pos_label, name="y_true", require_both=False
        )
        labels = check_label_union(self._labels, batch_labels, self.pos_label, name="y_true")
        w = check_weights(sample_weight, y.size)
        weighted = w is not None
        if self._weighted is not None and self._weighted != weighted:
            raise ValueError(
                "sample_weight must be given for every batch or for none "
                f"(this batch: {'given' if weighted else 'missing'})"
            )
        self._weighted = weighted
        self._labels = labels
        self._pending.append(_full_tables(is_pos, s, w))
        self._pending_size += self._pending[-1][0].size
        self.n_seen += int(y.size)
        table_size = 0 if self._table is None else self._table[0].size
        if self._pending_size > max(table_size, 1 << 16):
            self._consolidate()

    def _consolidate(self) -> None:
        parts = self._pending
        if self._table is not None:
            parts = [self._table, *parts]
        if not parts:
            return
        thr = np.concatenate([p[0] for p in parts])
        dtp = np.concatenate([p[1] for p in parts])
        dfp = np.concatenate([p[2] for p in parts])
        self._table = _combine_tables(thr, dtp, dfp, weighted=bool(self._weighted))
        self._pending = []
        self._pending_size = 0

    def result(self, *, compress: bool = True) -> RocCounts:
        """The exact counts of every batch so far (raises if a class never appeared)."""
        self._consolidate()
        if self._table is None:
            raise ValueError("CountsAccumulator.result(): no data; call update() first")
        thr, pos, neg = self._table
        return RocCounts._from_tables(
            thr, pos, neg, weighted=bool(self._weighted), compress=compress
        )
