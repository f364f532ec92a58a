"""Is the test set big enough? Sample size for precision claims (Brabec et al. 2020, §5).

* :func:`required_sample_size` -- how many positives and negatives are needed for precision to
  be known within a chosen width at every ``eta``.
* :func:`check_sample_size` -- whether given counts support claims in an FPR region, with a
  :class:`SmallTestSetWarning` when the test set is too small for the FPR region claimed.
* :func:`expected_rate_cv` -- the Clopper-Pearson CV at the expected count (planning).
"""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.stats._checks import (
    _check_confidence,
    _check_counts,
    _first_bad,
    _plain,
)
from mlflow_imbalance.stats.intervals import _rate_limits, box_band_max_width

logger = logging.getLogger(__name__)

__all__ = [
    "SampleSize",
    "SampleSizeCheck",
    "SmallTestSetWarning",
    "check_sample_size",
    "expected_rate_cv",
    "required_sample_size",
]


# ---------------------------------------------------------------------------- sample size
class SmallTestSetWarning(UserWarning):
    """The test set has too few negatives (or positives) for the FPR region being claimed."""


@dataclass(frozen=True)
class SampleSize:
    """Test-set size needed for a precision band no wider than ``max_width`` at every eta.

    Attributes:
        n_pos: positives needed (or the given number when ``n_pos`` was fixed).
        n_neg: negatives needed (``inf`` when the positives alone already exceed the budget).
        cv_tpr: CV of TPR reached with ``n_pos``.
        cv_fpr: CV of FPR required of the negatives.
        expected_fp: expected false positives ``n_neg * fpr`` at that size.
        max_width: the requested largest precision-band width (the Brabec Delta).
        method, confidence: how the CVs are measured.
    """

    n_pos: float
    n_neg: float
    cv_tpr: float
    cv_fpr: float
    expected_fp: float
    max_width: float
    method: str
    confidence: float


def expected_rate_cv(rate: Any, n: Any, confidence: float = 0.95) -> Any:
    """Relative half-width (CV) of the Clopper-Pearson interval at the EXPECTED count.

    A planning quantity, not an interval for observed data: ``k = rate * n`` may be
    fractional, and the Beta form of the Clopper-Pearson limits interpolates between the
    integer counts. The CV is the larger half-width over ``rate`` (the smallest symmetric
    interval containing the exact one; Brabec et al. 2020 §5). Used by
    :func:`required_sample_size` and the report's sample-size figure.

    Args:
        rate: true rate(s) in (0, 1].
        n: trials (broadcast against ``rate``).
        confidence: two-sided level.

    Returns:
        The CV (float for scalar input, else an array).
    """
    conf = _check_confidence(confidence)
    p = np.asarray(rate, dtype=float)
    if np.any(~((p > 0) & (p <= 1))):
        raise ValueError(
            f"rate must lie in (0, 1], got rate={_first_bad(p, ~((p > 0) & (p <= 1)))!r}"
        )
    n_arr = np.asarray(n, dtype=float)
    k, n_arr = _check_counts(p * n_arr, n_arr, "rate * n", "n")
    cv = _cv_checked(p, k, n_arr, conf)
    return float(cv) if cv.ndim == 0 else cv


def _cv_checked(p: np.ndarray, k: np.ndarray, n: np.ndarray, level: float) -> np.ndarray:
    """The CV of :func:`expected_rate_cv` from validated ``p``, ``k = p n`` and ``n``."""
    lo, hi = _rate_limits(k, n, level, "clopper-pearson")
    return np.maximum(hi - k / n, k / n - lo) / p


def _cp_cv(n: np.ndarray | float, p: float, level: float) -> np.ndarray:
    """CV of a Clopper-Pearson interval at the expected count ``n * p`` (real-valued k)."""
    return np.asarray(expected_rate_cv(p, n, level))


def _cv_at(n: float, p: float, level: float) -> float:
    """:func:`_cp_cv` at one ``n`` without the boundary checks (the internal search)."""
    return float(_cv_checked(np.asarray(p), np.asarray(p * n), np.asarray(float(n)), level))


def _smallest_n(p: float, cv_target: float, level: float) -> float:
    """Smallest integer ``n >= 1`` with CV(n) <= cv_target (CV decreases with n).

    The CV is a smooth function of ``n`` (real ``k = p n`` in the Beta form), close to a power
    of ``n``: a secant search on ``log CV`` against ``log n`` (started from the normal
    approximation) finds the real root in a few Beta-quantile evaluations, and the integers next
    to it are then checked, so the answer is the same smallest integer a bisection finds in
    ~50 evaluations. Returns ``inf`` when no ``n`` up to 1e18 is enough.
    """
    z = stats.norm.isf((1 - level) / 2)
    target = math.log(cv_target)
    x0 = math.log(max(1.0, z * z * (1 - p) / (p * cv_target * cv_target)))
    f0 = math.log(_cv_at(math.exp(x0), p, level)) - target
    x1 = x0 - 2.0 * f0  # CV ~ n^(-1/2) for large counts
    for _ in range(40):
        x1 = min(max(x1, 0.0), math.log(2e18))
        f1 = math.log(_cv_at(math.exp(x1), p, level)) - target
        if abs(x1 - x0) < 1e-9 or f1 == f0:
            break
        x0, x1, f0 = x1, x1 - f1 * (x1 - x0) / (f1 - f0), f1
    # bracket (lo, m]: lo = 0 or not enough, m enough; then bisect to the smallest integer
    m = max(1.0, float(math.ceil(math.exp(x1) - 1e-6)))
    step = 1.0
    if _cv_at(m, p, level) <= cv_target:
        lo = m - 1
        while lo >= 1 and _cv_at(lo, p, level) <= cv_target:  # walk down
            m, lo, step = lo, max(lo - 2 * step, 0.0), 2 * step
    else:
        lo = m
        while True:  # walk up, doubling the step
            m = lo + step
            if m > 1e18:
                return math.inf
            if _cv_at(m, p, level) <= cv_target:
                break
            lo, step = m, 2 * step
    while m - lo > 1:
        mid = math.floor((lo + m) / 2)
        if mid >= 1 and _cv_at(mid, p, level) <= cv_target:
            m = mid
        else:
            lo = mid
    return float(m)


def required_sample_size(
    tpr: float,
    fpr: float,
    max_width: float = 0.1,
    confidence: float = 0.95,
    n_pos: float | None = None,
) -> SampleSize:
    """Positives and negatives needed so the precision box band is at most ``max_width`` wide.

    Brabec et al. (2020) §5: the largest width of the precision band over all eta is governed by
    the coefficients of variation of TPR and FPR. Using the exact width
    ``tanh((artanh c_t + artanh c_f) / 2)`` (see :func:`box_band_max_width`) the budget is
    ``artanh c_t + artanh c_f <= 2 artanh(max_width)``. Without ``n_pos`` it is split equally
    (``c_t = c_f = max_width``, Brabec's recommendation); with ``n_pos`` fixed the positives use
    what they need and the negatives get the rest. CVs come from Clopper-Pearson intervals at
    level ``sqrt(confidence)`` at the expected counts.

    Args:
        tpr: TPR of the operating point of interest (0, 1].
        fpr: FPR of the operating point (the FPR region claimed), in (0, 1).
        max_width: largest acceptable width of the precision band (absolute, at any eta).
        confidence: joint level of the box.
        n_pos: positives available (optional).

    Returns:
        :class:`SampleSize`.
    """
    conf = _check_confidence(confidence)
    if not (0 < tpr <= 1):
        raise ValueError(f"tpr must lie in (0, 1], got {_plain(tpr)!r}")
    if not (0 < fpr < 1):
        raise ValueError(f"fpr must lie strictly between 0 and 1, got {_plain(fpr)!r}")
    if not (0 < max_width < 1):
        raise ValueError(f"max_width must lie strictly between 0 and 1, got {_plain(max_width)!r}")
    level = math.sqrt(conf)
    budget = 2 * math.atanh(max_width)
    if n_pos is None:
        ct = cf = max_width
        npos = _smallest_n(tpr, ct, level)
        ct = float(_cp_cv(npos, tpr, level))
    else:
        if n_pos <= 0:
            raise ValueError(f"n_pos must be positive, got {_plain(n_pos)!r}")
        npos = float(n_pos)
        ct = float(_cp_cv(npos, tpr, level))
        rest = budget - math.atanh(min(ct, 1 - 1e-16))
        cf = math.tanh(rest) if rest > 0 else 0.0
    nneg = _smallest_n(fpr, cf, level) if cf > 0 else math.inf
    return SampleSize(
        n_pos=npos,
        n_neg=nneg,
        cv_tpr=ct,
        cv_fpr=float(cf),
        expected_fp=nneg * fpr,
        max_width=float(max_width),
        method="clopper-pearson box (each at sqrt(confidence))",
        confidence=conf,
    )


@dataclass(frozen=True)
class SampleSizeCheck:
    """Whether a test set supports claims about precision in an FPR region.

    Attributes:
        adequate: True when both classes are large enough.
        max_fpr: the FPR region claimed (operating points with FPR <= max_fpr).
        tpr: TPR of the counts at FPR = max_fpr (linear ROC interpolation).
        n_pos, n_neg: what the test set has.
        required: the :class:`SampleSize` needed.
        achieved_width: exact largest precision-band width with the present test set.
        message: None when adequate, else a human-readable warning.
    """

    adequate: bool
    max_fpr: float
    tpr: float
    n_pos: float
    n_neg: float
    required: SampleSize
    achieved_width: float
    message: str | None


def _tpr_at_fpr(c: RocCounts, f: float) -> float:
    fpr = np.concatenate(([0.0], c.fpr))
    tpr = np.concatenate(([0.0], c.tpr))
    j = int(np.searchsorted(fpr, f, side="right")) - 1
    if j >= fpr.size - 1:
        return float(tpr[-1])
    f0, f1, t0, t1 = fpr[j], fpr[j + 1], tpr[j], tpr[j + 1]
    return float(t0 + (t1 - t0) * (f - f0) / (f1 - f0)) if f1 > f0 else float(t1)


def check_sample_size(
    counts: RocCounts,
    max_fpr: float,
    *,
    max_width: float = 0.1,
    confidence: float = 0.95,
    warn: bool = True,
) -> SampleSizeCheck:
    """Is the test set big enough for precision claims at FPR around ``max_fpr``? (Brabec §5).

    The expected number of false positives in the region is ``n_neg * max_fpr``; with few of
    them the FPR (and so precision at any eta) is barely known. Issues a
    :class:`SmallTestSetWarning` (when ``warn``) and returns the verdict either way.

    Args:
        counts: the run's ROC counts.
        max_fpr: the FPR region being claimed (e.g. ``1e-4``).
        max_width: largest acceptable precision-band width at any eta.
        confidence: joint level.
        warn: emit the warning when inadequate.

    Returns:
        :class:`SampleSizeCheck`.
    """
    if not (0 < max_fpr < 1):
        raise ValueError(f"max_fpr must lie strictly between 0 and 1, got {_plain(max_fpr)!r}")
    t = _tpr_at_fpr(counts, max_fpr)
    if t <= 0:
        t = min(1.0, 1.0 / counts.n_pos)  # one positive's share (weighted: at most all)
    need = required_sample_size(t, max_fpr, max_width, confidence)
    level = math.sqrt(_check_confidence(confidence))
    ct = float(_cp_cv(counts.n_pos, t, level))
    cf = float(_cp_cv(counts.n_neg, max_fpr, level))
    width, _ = box_band_max_width(ct, cf)
    adequate = counts.n_pos >= need.n_pos and counts.n_neg >= need.n_neg
    message = None
    if not adequate:
        exp_fp = counts.n_neg * max_fpr
        message = (
            f"test set too small for claims at FPR <= {max_fpr:g}: {counts.n_neg:g} negatives "
            f"give about {exp_fp:.3g} expected false positives there (CV_FPR {cf:.2f}) and "
            f"{counts.n_pos:g} positives give CV_TPR {ct:.2f}, so precision at any prevalence "
            f"is known only within a band up to {width:.2f} wide ({confidence:.0%}); a width of "
            f"{max_width:g} needs >= {need.n_neg:.3g} negatives and >= {need.n_pos:.3g} "
            "positives (Brabec et al. 2020, §5)"
        )
        if warn:
            warnings.warn(message, SmallTestSetWarning, stacklevel=2)
        logger.info(message)
    return SampleSizeCheck(
        adequate=bool(adequate),
        max_fpr=float(max_fpr),
        tpr=float(t),
        n_pos=float(counts.n_pos),
        n_neg=float(counts.n_neg),
        required=need,
        achieved_width=float(width),
        message=message,
    )
