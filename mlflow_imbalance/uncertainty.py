"""Honest uncertainty for prevalence-adjusted metrics: intervals, count bootstrap, bands.

Everything here is a function of ROC counts (numpy + scipy only). Every result carries the name
of its method and its confidence level, so a report can print exactly what a band means.

Intervals at one operating point
    * :func:`rate_interval` -- TPR / FPR. Clopper-Pearson (exact, guaranteed coverage; the only
      safe choice for a handful of false positives among 10^6 negatives), Jeffreys and Wilson.
      ``k = 0`` gives the finite Clopper-Pearson upper limit ``1 - (alpha/2)^(1/n)``.
    * :func:`likelihood_ratio_interval` / :func:`precision_interval` -- precision at prevalence
      ``eta`` depends on the operating point only through ``LR = TPR / FPR``:
      ``Prec = LR*o / (1 + LR*o)``, ``o = eta / (1 - eta)`` (Brabec et al. 2020, §2 eq. 8).
      One interval for LR therefore gives a band valid for every ``eta`` at once. Default:
      Koopman's (1984) score interval for a ratio of two binomial proportions; ``"box"``: the
      Brabec §5 box, Clopper-Pearson intervals for TPR and FPR each at level ``sqrt(1 - alpha)``
      (joint coverage >= ``1 - alpha`` because the two classes are sampled independently).
    * :func:`precision_uncertainty` -- Brabec's bound ``Delta <= max(CV_TPR, CV_FPR)``
      (Theorem 1) beside the exact largest width of the box band,
      ``tanh((artanh CV_TPR + artanh CV_FPR) / 2)``, and the ``eta`` where it occurs.
    * :func:`required_sample_size`, :func:`check_sample_size` -- Brabec §5: how many positives
      and negatives are needed for precision to be known within a chosen width at every ``eta``,
      with a :class:`SmallTestSetWarning` when the test set is too small for the FPR region
      claimed.

Bands over whole curves
    * :func:`bootstrap_counts` -- the count bootstrap: each class's per-threshold counts are
      resampled multinomially, which is exactly equal in distribution to resampling
      (score, label) pairs within each class, at O(B*K) instead of O(B*n log n).
    * :func:`roc_band`, :func:`prevalence_band` -- bootstrap sup-t bands (simultaneous over
      the grid; Montiel Olea & Plagborg-Moller 2019), or percentile bands labelled pointwise.
      :func:`pr_band` is the ROC band mapped through eq. 8 (:func:`pr_band_from_roc`):
      simultaneous over every recall and every ``eta`` at once. :func:`p3_band` and
      :func:`f1_band` are exact-method bands that are simultaneous over every ``eta`` (see their
      docstrings). ``docs/statistics.md`` documents the choices and the coverage they have.

Headline intervals (what the logging hook stores and the report's table prints)
    * :func:`roc_auc_interval` -- DeLong's variance computed exactly from the counts, Wald on
      the logit scale (Clopper-Pearson fallback when the variance is 0).
    * :func:`headline_intervals` -- AP, PR-AUC and max-F1 at several prevalences from ONE
      count-bootstrap replicate set, on counts thinned by :func:`thin_for_bootstrap` and
      re-centred on the exact values (:func:`recentre`).
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from mlflow_imbalance import metrics as _metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_prevalence
from mlflow_imbalance.metrics import default_prevalence_grid

logger = logging.getLogger(__name__)

__all__ = [
    "RATE_METHODS",
    "RATIO_METHODS",
    "ROC_MAPPED_METRICS",
    "Band",
    "HeadlineIntervals",
    "Interval",
    "PrecisionUncertainty",
    "RocAucInterval",
    "SampleSize",
    "SampleSizeCheck",
    "SmallTestSetWarning",
    "Statistic",
    "Thinned",
    "band_from_replicates",
    "bootstrap_counts",
    "bootstrap_statistic",
    "bootstrap_statistics",
    "box_band_max_width",
    "brabec_delta",
    "check_sample_size",
    "default_prevalence_grid",
    "expected_rate_cv",
    "f1_band",
    "headline_intervals",
    "likelihood_ratio_interval",
    "metric_statistic",
    "min_cost_statistic",
    "p3_band",
    "pr_band",
    "pr_band_from_roc",
    "pr_statistic",
    "precision_interval",
    "precision_uncertainty",
    "prevalence_band",
    "prevalence_band_from_roc",
    "rate_interval",
    "recentre",
    "required_sample_size",
    "roc_auc_interval",
    "roc_auc_statistic",
    "roc_band",
    "roc_statistic",
    "thin_for_bootstrap",
]

RATE_METHODS = ("clopper-pearson", "jeffreys", "wilson")
RATIO_METHODS = ("koopman", "box")
BAND_METRICS = ("ap", "pr_auc", "max_f1", "f1")
#: Metrics of :func:`headline_intervals` (one replicate set for all of them).
HEADLINE_METRICS = ("ap", "pr_auc", "max_f1")
#: Constructions of :func:`pr_band`.
PR_BAND_CONSTRUCTIONS = ("roc", "sup-t")

# Largest |g''| of the logistic g(x) = 1 / (1 + e^x): 1 / (6 sqrt 3).
_LOGISTIC_MAX_CURVATURE = 1.0 / (6.0 * math.sqrt(3.0))


# ---------------------------------------------------------------------------- result objects
class Interval(tuple):
    """A ``(low, high)`` pair (unpacks like a tuple) that also says how it was made.

    Attributes:
        low: lower limit(s), float or array.
        high: upper limit(s), float or array (may be ``inf`` for an unbounded ratio).
        method: name of the interval method, e.g. ``"clopper-pearson"``.
        confidence: nominal confidence level, e.g. ``0.95``.
    """

    method: str
    confidence: float

    def __new__(cls, low: Any, high: Any, method: str, confidence: float) -> Interval:
        """Build from the limits, the method name and the confidence level."""
        obj = super().__new__(cls, (low, high))
        obj.method = str(method)
        obj.confidence = float(confidence)
        return obj

    def __getnewargs__(self) -> tuple[Any, ...]:  # type: ignore[override]
        return (self[0], self[1], self.method, self.confidence)

    @property
    def low(self) -> Any:
        """Lower limit(s)."""
        return self[0]

    @property
    def high(self) -> Any:
        """Upper limit(s)."""
        return self[1]

    def __repr__(self) -> str:
        return (
            f"Interval(low={self.low!r}, high={self.high!r}, method={self.method!r}, "
            f"confidence={self.confidence!r})"
        )


@dataclass(frozen=True)
class Band:
    """A band around a curve or a metric-vs-prevalence series.

    Attributes:
        grid: the x values (prevalences, FPRs or recalls).
        grid_name: what ``grid`` holds (``"prevalence"``, ``"fpr"``, ``"recall"``).
        estimate: point estimate on the grid.
        low: lower edge on the grid.
        high: upper edge on the grid.
        method: how the band was built, e.g. ``"bootstrap sup-t (arcsine-sqrt scale)"``.
        confidence: nominal level.
        simultaneous: True when the band covers the whole curve on the grid jointly with the
            nominal probability; False for a pointwise band (each grid point separately).
        metric: the metric or curve the band is for.
        n_boot: bootstrap replicates (0 for analytic bands).
        seed: the seed used (None when not reproducible or analytic).
        extra: anything else (e.g. replicate standard errors, the sup-t critical value).
    """

    grid: np.ndarray
    grid_name: str
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    method: str
    confidence: float
    simultaneous: bool
    metric: str
    n_boot: int = 0
    seed: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Human-readable description, e.g. for a legend or report footnote."""
        kind = "simultaneous" if self.simultaneous else "pointwise"
        boot = f", B={self.n_boot}" if self.n_boot else ""
        return f"{self.confidence:.0%} {kind} band ({self.method}{boot})"


# ---------------------------------------------------------------------------- validation
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
    integer counts only).
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
                raise ValueError(
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


def _check_metric_args(metric: Any, prevalences: Any, threshold: Any) -> np.ndarray:
    """The checks shared by :func:`prevalence_band` and :func:`metric_statistic`.

    A known metric, a valid prevalence grid (returned), and a threshold for ``"f1"``.
    """
    if metric not in BAND_METRICS:
        raise ValueError(f"metric must be one of {BAND_METRICS}, got {metric!r}")
    eta = _prevalence_grid(prevalences)
    if metric == "f1" and threshold is None:
        raise ValueError("metric 'f1' needs threshold=")
    return eta


def _seed_record(seed: Any) -> Any:
    """The seed as recorded on a :class:`Band` (None for a Generator: not reproducible)."""
    return None if isinstance(seed, np.random.Generator) else seed


def _scalar_or_array(x: np.ndarray, scalar: bool) -> Any:
    return float(x) if scalar else x


# ---------------------------------------------------------------------------- rate intervals
def rate_interval(
    k: Any, n: Any, confidence: float = 0.95, method: str = "clopper-pearson"
) -> Interval:
    """Two-sided confidence interval for a binomial rate ``k / n`` (TPR, FPR, recall...).

    Methods:
        * ``"clopper-pearson"`` (default): inverts two one-sided exact binomial tests,
          ``[Beta(a/2; k, n-k+1), Beta(1-a/2; k+1, n-k)]``. Coverage >= the nominal level for
          every true rate, which matters when a rate is near 0 with few counts (FP = 3 of 10^6).
          ``k = 0`` gives ``[0, 1 - (a/2)^(1/n)]`` -- finite and never of zero width.
        * ``"jeffreys"``: equal-tailed Beta(k+1/2, n-k+1/2) posterior interval, with the lower
          limit 0 at ``k = 0`` and the upper 1 at ``k = n`` (Brown, Cai & DasGupta 2001).
          Closer to nominal on average, no guarantee.
        * ``"wilson"``: score interval; coverage can dip below nominal for small ``k``.

    Args:
        k: successes (scalar or array of whole numbers; a binomial interval needs integer
            counts, so there is no weighted mode: weighted counts get point estimates only).
        n: trials (scalar or array of whole numbers, broadcast against ``k``).
        confidence: two-sided level in (0, 1).
        method: one of :data:`RATE_METHODS`.

    Returns:
        :class:`Interval` ``(low, high)`` of floats (or arrays for array input).

    Raises:
        ValueError: on an unknown method, a level outside (0, 1), negative, non-finite or
            non-integer counts, ``n <= 0`` or ``k > n`` (the message names the argument).
    """
    conf = _check_confidence(confidence)
    if method not in RATE_METHODS:
        raise ValueError(f"method must be one of {RATE_METHODS}, got {method!r}")
    k_arr, n_arr = _check_counts(k, n, integer=True)
    scalar = k_arr.ndim == 0 and n_arr.ndim == 0
    low, high = _rate_limits(k_arr, n_arr, conf, method)
    return Interval(_scalar_or_array(low, scalar), _scalar_or_array(high, scalar), method, conf)


def _rate_limits(
    k_arr: np.ndarray, n_arr: np.ndarray, conf: float, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """The limits of :func:`rate_interval` for validated counts.

    Real ``k`` is allowed here: the Beta form interpolates between integers, which
    sample-size planning (:func:`expected_rate_cv`) uses.
    """
    k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    alpha = 1.0 - conf
    if method == "wilson":
        z = stats.norm.isf(alpha / 2)
        z2 = z * z
        p = k_arr / n_arr
        center = (k_arr + z2 / 2) / (n_arr + z2)
        half = z * np.sqrt(n_arr * p * (1 - p) + z2 / 4) / (n_arr + z2)
        low = np.clip(center - half, 0.0, 1.0)
        high = np.clip(center + half, 0.0, 1.0)
        low = np.where(k_arr == 0, 0.0, low)
        high = np.where(k_arr == n_arr, 1.0, high)
    else:
        shift = 0.0 if method == "clopper-pearson" else 0.5
        a_lo = np.where(k_arr > 0, k_arr + shift, 1.0)
        b_hi = np.where(k_arr < n_arr, n_arr - k_arr + shift, 1.0)
        lo_b = n_arr - k_arr + (1.0 if shift == 0.0 else shift)
        hi_a = k_arr + (1.0 if shift == 0.0 else shift)
        low = np.where(k_arr > 0, stats.beta.ppf(alpha / 2, a_lo, lo_b), 0.0)
        high = np.where(k_arr < n_arr, stats.beta.ppf(1 - alpha / 2, hi_a, b_hi), 1.0)
    return low, high


# ---------------------------------------------------------------------------- LR / precision
def _koopman_statistic(
    log_theta: np.ndarray, x1: np.ndarray, n1: np.ndarray, x2: np.ndarray, n2: np.ndarray
) -> np.ndarray:
    """Koopman's (1984) Pearson chi-square for H0: p1 / p2 = theta (vectorised).

    The constrained MLE solves ``theta*N*p2^2 - (theta*(n1+x2) + x1 + n2)*p2 + (x1+x2) = 0``
    (N = n1 + n2; smaller root, written in the cancellation-free form
    ``p2 = 2(x1+x2) / (B + sqrt(B^2 - 4 theta N (x1+x2)))``), ``p1 = theta * p2``.
    """
    theta = np.exp(log_theta)
    tot = x1 + x2
    big_n = n1 + n2
    b = theta * (n1 + x2) + x1 + n2
    disc = np.maximum(b * b - 4.0 * theta * big_n * tot, 0.0)
    p2 = 2.0 * tot / (b + np.sqrt(disc))
    p1 = np.minimum(theta * p2, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        num1 = (x1 - n1 * p1) ** 2
        den1 = n1 * p1 * (1.0 - p1)
        num2 = (x2 - n2 * p2) ** 2
        den2 = n2 * p2 * (1.0 - p2)
        t1 = np.where(num1 == 0, 0.0, num1 / den1)
        t2 = np.where(num2 == 0, 0.0, num2 / den2)
    u = t1 + t2
    return np.where(np.isnan(u), np.inf, u)


def _bisect_log(
    f: Callable[[np.ndarray], np.ndarray], inside: np.ndarray, outside: np.ndarray, iters: int = 80
) -> np.ndarray:
    """Vectorised bisection for the boundary where ``f`` (True = inside the set) changes."""
    a, b = inside.copy(), outside.copy()
    for _ in range(iters):
        m = 0.5 * (a + b)
        ok = f(m)
        a = np.where(ok, m, a)
        b = np.where(ok, b, m)
    return a


def _koopman_interval(
    x1: np.ndarray, n1: np.ndarray, x2: np.ndarray, n2: np.ndarray, conf: float
) -> tuple[np.ndarray, np.ndarray]:
    crit = stats.chi2.ppf(conf, 1)
    x1, n1, x2, n2 = np.broadcast_arrays(x1, n1, x2, n2)
    # theta = p1/p2 spans [1/(n1 n2) .. n1 n2] in practice; bracket generously in log space.
    lo_end = np.log(1e-3 / (n1 * n2)) - np.log(np.maximum(n2, 1.0))
    hi_end = np.log(1e3 * n1 * n2) + np.log(np.maximum(n2, 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        hat = np.where((x1 > 0) & (x2 > 0), np.log(x1 / n1) - np.log(x2 / n2), np.nan)

    def inside(m: np.ndarray) -> np.ndarray:
        return _koopman_statistic(m, x1, n1, x2, n2) <= crit

    # lower limit: inside point = hat (or hi_end when x2 = 0, where U -> 0 as theta -> inf)
    start_lo = np.where(np.isnan(hat), hi_end, hat)
    start_hi = np.where(np.isnan(hat), lo_end, hat)
    low = np.exp(_bisect_log(inside, start_lo, lo_end))
    high = np.exp(_bisect_log(inside, start_hi, hi_end))
    low = np.where(x1 == 0, 0.0, low)
    high = np.where(x2 == 0, np.inf, high)
    return low, high


def likelihood_ratio_interval(
    tp: Any,
    fp: Any,
    n_pos: Any,
    n_neg: Any,
    confidence: float = 0.95,
    method: str = "koopman",
) -> Interval:
    """Confidence interval for the positive likelihood ratio ``LR = TPR / FPR``.

    Args:
        tp: true positives at the operating point (scalar or array).
        fp: false positives at the operating point.
        n_pos: positives in the test set.
        n_neg: negatives in the test set.
        confidence: two-sided level.
        method: ``"koopman"`` (default): Koopman's (1984) score interval for a ratio of two
            independent binomial proportions -- the set of ``theta`` whose Pearson chi-square
            under the constrained MLE ``p1 = theta * p2`` stays below ``chi2_1(conf)``; the
            lower limit stays finite and positive when ``fp = 0`` (the upper is then ``inf``).
            Approximate but close to nominal even for a few false positives (tested by
            simulation). ``"box"``: ``TPR_lo / FPR_hi .. TPR_hi / FPR_lo`` from Clopper-Pearson
            intervals at level ``sqrt(conf)`` each (Brabec et al. 2020 §5): guaranteed
            coverage, wider.

    Returns:
        :class:`Interval` of LR limits (``high`` is ``inf`` when ``fp = 0``).
    """
    conf = _check_confidence(confidence)
    if method not in RATIO_METHODS:
        raise ValueError(f"method must be one of {RATIO_METHODS}, got {method!r}")
    tp_a, np_a = _check_counts(tp, n_pos, "tp", "n_pos")
    fp_a, nn_a = _check_counts(fp, n_neg, "fp", "n_neg")
    scalar = all(a.ndim == 0 for a in (tp_a, np_a, fp_a, nn_a))
    if method == "koopman":
        low, high = _koopman_interval(tp_a, np_a, fp_a, nn_a, conf)
        name = "koopman score"
    else:
        level = math.sqrt(conf)
        t_lo, t_hi = _rate_limits(tp_a, np_a, level, "clopper-pearson")
        f_lo, f_hi = _rate_limits(fp_a, nn_a, level, "clopper-pearson")
        with np.errstate(divide="ignore"):
            low = np.asarray(t_lo) / np.asarray(f_hi)
            high = np.where(np.asarray(f_lo) > 0, np.asarray(t_hi) / np.asarray(f_lo), np.inf)
        name = "box (clopper-pearson at sqrt(conf) each)"
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    return Interval(_scalar_or_array(low, scalar), _scalar_or_array(high, scalar), name, conf)


def _precision_from_lr(lr: np.ndarray, odds: np.ndarray) -> np.ndarray:
    """``Prec = LR*o / (1 + LR*o)``, with ``LR = inf`` giving 1 and ``LR = 0`` giving 0."""
    with np.errstate(invalid="ignore", over="ignore"):
        x = lr * odds
        return np.where(np.isinf(x), 1.0, x / (1.0 + x))


def precision_interval(
    tp: Any,
    fp: Any,
    n_pos: Any,
    n_neg: Any,
    prevalence: Any,
    confidence: float = 0.95,
    method: str = "koopman",
) -> Interval:
    """Confidence interval for precision at prevalence ``prevalence`` (eta).

    Precision at ``eta`` is ``LR*o / (1 + LR*o)`` with ``o = eta/(1-eta)`` (Brabec et al. 2020,
    eq. 8), increasing in ``LR = TPR/FPR``; so the LR interval of
    :func:`likelihood_ratio_interval` maps to a precision interval that holds *simultaneously
    for every eta* with the same confidence. An array of prevalences gives arrays (the P^3 band).

    Args:
        tp: true positives at the operating point.
        fp: false positives at the operating point.
        n_pos: positives in the test set.
        n_neg: negatives in the test set.
        prevalence: the target prevalence(s) eta in (0, 1), scalar or array.
        confidence: two-sided level.
        method: ``"koopman"`` (default) or ``"box"`` (see :func:`likelihood_ratio_interval`).

    Returns:
        :class:`Interval` of precision limits; ``high`` is 1 when ``fp = 0``, ``low`` is 0
        when ``tp = 0``.
    """
    eta = check_prevalence(prevalence, "prevalence")
    lr = likelihood_ratio_interval(tp, fp, n_pos, n_neg, confidence, method)
    odds = eta / (1.0 - eta)
    low = _precision_from_lr(np.asarray(lr.low), odds)
    high = _precision_from_lr(np.asarray(lr.high), odds)
    scalar = low.ndim == 0
    return Interval(
        _scalar_or_array(low, scalar), _scalar_or_array(high, scalar), lr.method, lr.confidence
    )


# ---------------------------------------------------------------------------- Brabec Delta
def brabec_delta(cv_tpr: Any, cv_fpr: Any) -> Any:
    """Brabec et al. (2020) Theorem 1 bound on the largest width of the precision band.

    ``Delta <= max(CV_TPR, CV_FPR)``; equality iff the two CVs are equal. Only meaningful when
    both CVs are below 1 (the theorem assumes ``sigma < estimate``).
    """
    return np.maximum(cv_tpr, cv_fpr)


def box_band_max_width(cv_tpr: Any, cv_fpr: Any, lr: Any = 1.0) -> tuple[Any, Any]:
    """Exact largest width over eta of the symmetric Brabec box band, and where it occurs.

    With ``TPR in [T(1-c_t), T(1+c_t)]`` and ``FPR in [F(1-c_f), F(1+c_f)]`` the band is
    ``LB = s(u - b)``, ``UB = s(u + a)`` in terms of the log posterior odds
    ``u = log(LR * o)`` (``s`` the logistic function, ``a = log((1+c_t)/(1-c_f))``,
    ``b = log((1+c_f)/(1-c_t))``). The difference of a logistic at two points a fixed distance
    ``a + b`` apart is largest when they sit symmetrically about 0, so::

        max width = tanh((a + b) / 4) = tanh((artanh c_t + artanh c_f) / 2)
        at LR * o* = exp((b - a) / 2) = sqrt((1 - c_f^2) / (1 - c_t^2))

    i.e. ``eta* = o* / (1 + o*)``. (Derived here; verified against a dense eta grid in the
    tests.) It never exceeds Brabec's ``max(c_t, c_f)`` and equals it iff ``c_t = c_f``.

    Args:
        cv_tpr: coefficient of variation of TPR, ``sigma_TPR / TPR`` (in [0, 1)).
        cv_fpr: coefficient of variation of FPR.
        lr: the estimated likelihood ratio ``TPR / FPR`` (only the location depends on it).

    Returns:
        ``(max_width, eta_at_max)``; width 1 and eta NaN when a CV is >= 1 (unbounded box).
    """
    ct = np.asarray(cv_tpr, dtype=float)
    cf = np.asarray(cv_fpr, dtype=float)
    ok = (ct < 1) & (cf < 1) & (ct >= 0) & (cf >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        width = np.where(
            ok,
            np.tanh((np.arctanh(np.where(ok, ct, 0)) + np.arctanh(np.where(ok, cf, 0))) / 2),
            1.0,
        )
        o_star = np.sqrt((1 - cf**2) / (1 - ct**2)) / np.asarray(lr, dtype=float)
        eta = np.where(ok, o_star / (1 + o_star), np.nan)
    if width.ndim == 0:
        return float(width), float(eta)
    return width, eta


@dataclass(frozen=True)
class PrecisionUncertainty:
    """How well precision at any eta is known at one operating point (Brabec §5).

    Attributes:
        tpr, fpr: point estimates.
        tpr_interval, fpr_interval: Clopper-Pearson intervals at level ``sqrt(confidence)``.
        cv_tpr, cv_fpr: coefficients of variation, ``max(hi - est, est - lo) / est`` -- the
            half-width of the smallest symmetric interval containing the exact one.
        delta_bound: Brabec's Theorem 1 bound ``max(cv_tpr, cv_fpr)`` on the band width.
        max_width: exact largest width of the symmetric box band,
            ``tanh((artanh cv_tpr + artanh cv_fpr) / 2)``.
        eta_at_max_width: the eta where ``max_width`` occurs.
        box_max_width: exact largest width of the (asymmetric) Clopper-Pearson box itself,
            ``tanh(log(LR_hi / LR_lo) / 4)``, at ``eta`` with odds ``1 / sqrt(LR_hi * LR_lo)``.
        eta_at_box_max_width: where ``box_max_width`` occurs.
        method, confidence: interval method and joint level of the box.
    """

    tpr: float
    fpr: float
    tpr_interval: Interval
    fpr_interval: Interval
    cv_tpr: float
    cv_fpr: float
    delta_bound: float
    max_width: float
    eta_at_max_width: float
    box_max_width: float
    eta_at_box_max_width: float
    method: str
    confidence: float


def precision_uncertainty(
    tp: float, fp: float, n_pos: float, n_neg: float, confidence: float = 0.95
) -> PrecisionUncertainty:
    """Brabec's Delta, the exact box-band width and where it peaks, for one operating point.

    TPR and FPR get Clopper-Pearson intervals at level ``sqrt(confidence)`` each, so the box
    (and hence the precision band at every eta) has joint coverage >= ``confidence``.
    Brabec's Corollary 1 instead uses level ``alpha`` each and states ``alpha^2`` jointly.

    Returns:
        :class:`PrecisionUncertainty`. CVs are ``inf`` when the rate estimate is 0.
    """
    conf = _check_confidence(confidence)
    level = math.sqrt(conf)
    ti = rate_interval(tp, n_pos, level)
    fi = rate_interval(fp, n_neg, level)
    t, f = float(tp) / float(n_pos), float(fp) / float(n_neg)

    def cv(est: float, iv: Interval) -> float:
        if est <= 0:
            return math.inf
        return max(iv.high - est, est - iv.low) / est

    ct, cf = cv(t, ti), cv(f, fi)
    lr = t / f if f > 0 else math.inf
    width, eta_max = box_band_max_width(ct, cf, lr) if math.isfinite(lr) else (1.0, math.nan)
    lr_lo = ti.low / fi.high
    lr_hi = ti.high / fi.low if fi.low > 0 else math.inf
    if lr_lo > 0 and math.isfinite(lr_hi):
        box_w = math.tanh(math.log(lr_hi / lr_lo) / 4)
        o = 1.0 / math.sqrt(lr_hi * lr_lo)
        box_eta = o / (1 + o)
    else:
        box_w, box_eta = 1.0, math.nan
    return PrecisionUncertainty(
        tpr=t,
        fpr=f,
        tpr_interval=ti,
        fpr_interval=fi,
        cv_tpr=ct,
        cv_fpr=cf,
        delta_bound=float(max(ct, cf)),
        max_width=float(width),
        eta_at_max_width=float(eta_max),
        box_max_width=float(box_w),
        eta_at_box_max_width=float(box_eta),
        method="clopper-pearson box (each at sqrt(confidence))",
        confidence=conf,
    )


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
    lo, hi = _rate_limits(k, n_arr, conf, "clopper-pearson")
    cv = np.maximum(hi - k / n_arr, k / n_arr - lo) / p
    return float(cv) if cv.ndim == 0 else cv


def _cp_cv(n: np.ndarray | float, p: float, level: float) -> np.ndarray:
    """CV of a Clopper-Pearson interval at the expected count ``n * p`` (real-valued k)."""
    return np.asarray(expected_rate_cv(p, n, level))


def _smallest_n(p: float, cv_target: float, level: float) -> float:
    """Smallest integer n with CV(n) <= cv_target (CV decreases with n), by bisection."""
    z = stats.norm.isf((1 - level) / 2)
    guess = max(1.0, z * z * (1 - p) / (p * cv_target * cv_target))
    lo, hi = 1.0, guess
    while _cp_cv(hi, p, level) > cv_target:
        lo, hi = hi, hi * 2
        if hi > 1e18:
            return math.inf
    while hi - lo > 1:
        mid = math.floor((lo + hi) / 2)
        if _cp_cv(mid, p, level) <= cv_target:
            hi = mid
        else:
            lo = mid
    return float(hi)


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
        t = 1.0 / counts.n_pos
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


# ---------------------------------------------------------------------------- count bootstrap
def _rng(seed: Any) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _check_bootstrappable(c: RocCounts) -> None:
    if not isinstance(c, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(c).__name__}")
    if c.weighted:
        raise ValueError(
            "counts are weighted (sample_weight was given): the count bootstrap needs integer "
            "counts; bootstrap the raw weighted data instead"
        )


def bootstrap_counts(
    counts: RocCounts,
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Count bootstrap: yield chunks of resampled cumulative ``(tp, fp)``, shape ``(b, K)``.

    Each class is resampled separately (the class totals are fixed, as in a stratified
    bootstrap): the per-threshold positive counts are drawn from
    ``Multinomial(n_pos, pos_k / n_pos)`` and the negatives likewise. Drawing ``n`` examples
    with replacement from a class and counting them per threshold gives exactly this
    distribution, so this equals resampling (score, label) pairs within each class, at O(B*K).
    Lossless compression does not change the result: merging bins of a multinomial is the
    multinomial of the merged bins, and compression only merges negatives between two
    positive thresholds.

    Args:
        counts: unweighted ROC counts.
        n_boot: number of replicates.
        seed: int, ``numpy.random.Generator`` or None; the same seed gives the same replicates.
        chunk_size: replicates per chunk (default: bounded to about 4e6 numbers per array).

    Yields:
        ``(tp, fp)`` int64 arrays of shape ``(b, K)``, cumulative along thresholds.
    """
    _check_bootstrappable(counts)
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {_plain(n_boot)!r}")
    rng = _rng(seed)
    dpos, dneg = counts.per_threshold()
    k = dpos.size
    if chunk_size is None:
        chunk_size = max(1, min(int(n_boot), int(4_000_000 // max(k, 1))))
    # Only bins that hold something need drawing (the others stay 0).
    ip, ineg = np.flatnonzero(dpos), np.flatnonzero(dneg)
    done = 0
    while done < n_boot:
        b = min(chunk_size, int(n_boot) - done)
        tp = _resample_bins(rng, dpos, ip, int(counts.n_pos), b, k)
        fp = _resample_bins(rng, dneg, ineg, int(counts.n_neg), b, k)
        np.cumsum(tp, axis=1, out=tp)
        np.cumsum(fp, axis=1, out=fp)
        done += b
        yield tp, fp


def _resample_bins(
    rng: np.random.Generator, d: np.ndarray, nz: np.ndarray, n: int, b: int, k: int
) -> np.ndarray:
    """``b`` draws of ``Multinomial(n, d / n)`` over ``k`` bins, shape ``(b, k)`` int64.

    Two exact samplers: with few examples per occupied bin (``n <= 2 * len(nz)``) draw the ``n``
    example indices with replacement and count them per bin (O(b*n)); otherwise numpy's
    multinomial over the occupied bins (O(b*len(nz))).
    """
    out = np.zeros((b, k), dtype=np.int64)
    if n <= 2 * nz.size:
        bin_of = np.repeat(nz, d[nz].astype(np.int64))
        draws = bin_of[rng.integers(0, n, size=(b, n))]
        draws += (np.arange(b, dtype=np.int64) * k)[:, None]
        out.reshape(-1)[:] = np.bincount(draws.reshape(-1), minlength=b * k)
    else:
        pz = d[nz] / float(d[nz].sum())
        out[:, nz] = rng.multinomial(n, pz, size=b)
    return out


# ---------------------------------------------------------------------------- batched metrics
def _odds(eta: np.ndarray) -> np.ndarray:
    return eta / (1.0 - eta)


def _positive_columns(counts: RocCounts) -> np.ndarray:
    dpos, _ = counts.per_threshold()
    return np.flatnonzero(dpos > 0)


def _ap_batch(
    tp: np.ndarray,
    fp: np.ndarray,
    n_pos: float,
    n_neg: float,
    eta: np.ndarray,
    cols: np.ndarray,
    grid_step: float | None = None,
) -> np.ndarray:
    """Average precision at each eta for each row: ``sum_k dR_k * Prec_k(eta)``, shape (b, M).

    The scikit-learn step definition (no interpolation), with precision re-weighted to eta.
    Only thresholds where positives score matter (``dR_k = 0`` elsewhere), so ``cols`` are the
    original positive columns. ``Prec_k = 1 / (1 + r_k / o)`` with ``r_k = FPR_k / TPR_k``.

    ``grid_step=None`` sums exactly (O(b*M*K)). A positive ``grid_step`` h deposits each weight
    ``dR_k`` linearly onto a grid in ``log r`` of spacing h (cloud-in-cell) and sums the kernel
    on the grid with one matrix product (O(b*K + b*G*M)); that equals summing the piecewise-linear
    interpolant of ``x -> 1/(1 + e^x / o)`` at ``log r_k``, whose error is at most
    ``h^2 / 8 * max|g''| = h^2 / (48 sqrt 3)`` per unit weight: total AP error
    <= 0.0121 h^2 (1.2e-6 at h = 0.01).
    """
    t = tp[:, cols] / n_pos
    f = fp[:, cols] / n_neg
    w = np.diff(t, axis=1, prepend=0.0)
    inv_o = 1.0 / _odds(eta)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(w > 0, f / t, 0.0)
    b = t.shape[0]
    if grid_step is None:
        out = np.empty((b, eta.size))
        for i in range(b):
            x = np.multiply.outer(inv_o, r[i])
            x += 1.0
            np.reciprocal(x, out=x)
            out[i] = x @ w[i]
        return out
    zero = (r <= 0) & (w > 0)
    ones = np.where(zero, w, 0.0).sum(axis=1)
    use = (r > 0) & (w > 0)
    x = np.log(r[use])
    ww = w[use]
    rows = np.nonzero(use)[0]
    if x.size == 0:
        return np.repeat(ones[:, None], eta.size, axis=1)
    x0 = float(x.min())
    g = math.floor((float(x.max()) - x0) / grid_step) + 2
    pos = (x - x0) / grid_step
    i0 = np.minimum(np.floor(pos).astype(np.int64), g - 2)
    lam = pos - i0
    hist = np.bincount(rows * g + i0, weights=ww * (1 - lam), minlength=b * g)
    hist += np.bincount(rows * g + i0 + 1, weights=ww * lam, minlength=b * g)
    nodes = np.exp(x0 + grid_step * np.arange(g))
    kern = 1.0 / (1.0 + np.multiply.outer(nodes, inv_o))  # (G, M)
    return hist.reshape(b, g) @ kern + ones[:, None]


def _log1p_ratio(u: np.ndarray) -> np.ndarray:
    """``log(1 + u) / u`` with its limits: 1 at u -> 0 and 0 at u = inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.abs(u) < 1e-8
        val = np.log1p(u) / u
        val = np.where(small, 1.0 - u / 2, val)
        return np.where(np.isinf(u), 0.0, val)


def _pr_auc_batch(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, eta: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Area under the interpolated PR curve at each eta, shape (b, M).

    Between two ROC points the achievable curve is the straight ROC segment (Davis & Goadrich
    2006); along it precision is ``o T(s) / (o T(s) + F(s))`` and its integral over recall has the
    closed form ``dT * (q + (p0 - q) * log(1 + u) / u)`` with ``p0`` the precision at the segment
    start, ``q = o dT / (o dT + dF)`` and ``u = (o dT + dF) / (o T0 + F0)``. From the origin
    precision is constant (``q``).
    """
    t = tp / n_pos
    f = fp / n_neg
    prev = cols - 1
    t1, f1 = t[:, cols], f[:, cols]
    zero = np.zeros((t.shape[0], 1))
    t_full = np.concatenate([zero, t], axis=1)
    f_full = np.concatenate([zero, f], axis=1)
    t0, f0 = t_full[:, prev + 1], f_full[:, prev + 1]
    return _pr_auc_exact_segments(t0, f0, t1 - t0, f1 - f0, eta)


#: Segments whose o-free bound ``v = max(dT/T0, dF/F0)`` on ``u`` exceeds this are summed
#: exactly by :func:`_pr_auc_deposit`; the rest by Simpson's rule (error <= v^4/120 per unit dT).
PR_AUC_SIMPSON_MAX_U = 0.1


def _pr_auc_exact_segments(
    t0: np.ndarray, f0: np.ndarray, dt: np.ndarray, df: np.ndarray, eta: np.ndarray
) -> np.ndarray:
    """Exact PR-AUC contribution of ROC segments ``(b, k)`` at each eta, shape ``(b, M)``."""
    o = _odds(eta)[None, :, None]
    a0 = o * t0[:, None, :] + f0[:, None, :]
    da = o * dt[:, None, :] + df[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(da > 0, o * dt[:, None, :] / da, 0.0)
        p0 = np.where(a0 > 0, o * t0[:, None, :] / a0, 0.0)
        u = np.where(a0 > 0, da / a0, np.inf)
    seg = q + (p0 - q) * _log1p_ratio(u)
    return np.einsum("bmk,bk->bm", seg, dt)


def _deposit(
    x: np.ndarray, w: np.ndarray, rows: np.ndarray, b: int, inv_o: np.ndarray, step: float
) -> np.ndarray:
    """``sum_j w_j / (1 + e^{x_j} / o)`` per row, by linear deposit on a grid of step ``step``.

    Equals summing the piecewise-linear interpolant (nodes ``step`` apart) of the logistic
    kernel at each ``x_j``: error <= ``step^2 / (48 sqrt 3)`` per unit weight (positive ``w``).
    """
    if x.size == 0:
        return np.zeros((b, inv_o.size))
    x0 = float(x.min())
    g = math.floor((float(x.max()) - x0) / step) + 2
    pos = (x - x0) / step
    i0 = np.minimum(np.floor(pos).astype(np.int64), g - 2)
    lam = pos - i0
    idx = rows * g + i0
    hist = np.bincount(idx, weights=w * (1 - lam), minlength=b * g)
    hist += np.bincount(idx + 1, weights=w * lam, minlength=b * g)
    nodes = np.exp(x0 + step * np.arange(g))
    kern = 1.0 / (1.0 + np.multiply.outer(nodes, inv_o))  # (G, M)
    return hist.reshape(b, g) @ kern


def _pr_auc_deposit(
    tp: np.ndarray,
    fp: np.ndarray,
    n_pos: float,
    n_neg: float,
    eta: np.ndarray,
    cols: np.ndarray,
    grid_step: float,
    max_u: float = PR_AUC_SIMPSON_MAX_U,
) -> np.ndarray:
    """PR-AUC (Davis-Goadrich) at each eta for many rows at O(b*K + b*G*M), error <= 2e-6.

    Along the straight ROC segment from ``(T0, F0)`` to ``(T0 + dT, F0 + dF)`` precision at odds
    ``o`` is ``p(s) = g(x(s) - log o)`` with ``g(y) = 1/(1 + e^y)`` and ``x(s) = log(F/T)``, so
    PR-AUC is the logistic kernel integrated against the measure ``dT`` pushed to ``x``. Each
    segment's integral is replaced by Simpson's rule in ``s`` (masses ``dT/6, 4dT/6, dT/6`` at
    ``x(0), x(1/2), x(1)``) and all masses are deposited on one grid in ``x`` (:func:`_deposit`),
    so one matrix product gives every eta. Error: ``p(s) = alpha + beta/(1 + u s)`` with
    ``|beta| <= 1`` and ``u = (o dT + dF)/(o T0 + F0) <= v = max(dT/T0, dF/F0)`` for every
    ``o``, so Simpson's error is at most ``max|p^(4)|/2880 <= v^4/120`` per unit ``dT``.
    Segments with ``v > max_u`` (near the origin, or leaving FPR = 0) are summed exactly;
    segments with constant precision (from the origin, or with ``F0 = dF = 0``) are exact point
    masses. Total error <= ``max_u^4/120 + grid_step^2/(48 sqrt 3)`` (8.3e-7 + 1.2e-6 at the
    defaults; see :func:`_pr_auc_error_bound`).
    """
    b = tp.shape[0]
    t = tp / n_pos
    f = fp / n_neg
    zero = np.zeros((b, 1))
    t_full = np.concatenate([zero, t], axis=1)
    f_full = np.concatenate([zero, f], axis=1)
    t0, f0 = t_full[:, cols], f_full[:, cols]
    dt, df = t[:, cols] - t0, f[:, cols] - f0
    live = dt > 0
    origin = live & (t0 == 0) & (f0 == 0)  # constant precision o dT / (o dT + dF)
    flat1 = live & (f0 == 0) & (df == 0) & ~origin  # precision 1 all along
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.maximum(
            np.where(t0 > 0, dt / t0, np.inf),
            np.where(f0 > 0, df / f0, np.where(df > 0, np.inf, 0.0)),
        )
    simpson = live & ~origin & ~flat1 & (v <= max_u)
    exact = live & ~origin & ~flat1 & ~simpson
    ones = np.where(flat1 | (origin & (df == 0)), dt, 0.0).sum(axis=1)
    inv_o = 1.0 / _odds(eta)
    out = np.repeat(ones[:, None], eta.size, axis=1)
    r, c = np.nonzero(exact)  # few (row, segment) entries: exact, ragged
    if r.size:
        seg = _pr_auc_exact_segments(
            t0[r, c][:, None], f0[r, c][:, None], dt[r, c][:, None], df[r, c][:, None], eta
        )
        rows, starts = np.unique(r, return_index=True)
        out[rows] += np.add.reduceat(seg, starts, axis=0)
    xs, ws, rs = [], [], []
    r, c = np.nonzero(origin & (df > 0))
    xs.append(np.log(df[r, c] / dt[r, c]))
    ws.append(dt[r, c])
    rs.append(r)
    r, c = np.nonzero(simpson)
    t0s, f0s, dts, dfs = t0[r, c], f0[r, c], dt[r, c], df[r, c]
    for frac, wt in ((0.0, 1 / 6), (0.5, 4 / 6), (1.0, 1 / 6)):
        xs.append(np.log((f0s + frac * dfs) / (t0s + frac * dts)))
        ws.append(dts * wt)
        rs.append(r)
    x, w, rows = np.concatenate(xs), np.concatenate(ws), np.concatenate(rs)
    return out + _deposit(x, w, rows, b, inv_o, grid_step)


def _pr_auc_error_bound(grid_step: float, max_u: float = PR_AUC_SIMPSON_MAX_U) -> float:
    """Largest absolute error of :func:`_pr_auc_deposit` (Simpson + linear deposit)."""
    return max_u**4 / 120 + grid_step**2 * _LOGISTIC_MAX_CURVATURE / 8


def _max_f1_fast(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, eta: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Exact max-F1 as a lower envelope: ``F1max = 2o / (o + min_k (o / T_k + F_k / T_k))``.

    ``1/F1 = 1/2 + (o/T + F/T) / (2o)``, so maximising F1 is minimising a line in ``o`` per
    threshold: two passes per eta over ``(b, K)`` instead of a ``(b, M, K)`` cube.
    """
    t = tp[:, cols] / n_pos
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(t > 0, 1.0 / t, np.inf)
        r = np.where(t > 0, (fp[:, cols] / n_neg) * a, np.inf)
    o = _odds(eta)
    out = np.empty((tp.shape[0], eta.size))
    tmp = np.empty_like(a)
    for i, oi in enumerate(o):
        np.multiply(a, oi, out=tmp)
        tmp += r
        out[:, i] = tmp.min(axis=1)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(out), 2 * o / (o + out), 0.0)


def _max_f1_batch(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, eta: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Largest F1 over thresholds at each eta: ``F1 = 2 o T / (o + o T + F)``, shape (b, M).

    At each recall level the positive threshold that first reaches it has the smallest FPR, so
    the maximum is attained at a positive column.
    """
    t = (tp[:, cols] / n_pos)[:, None, :]
    f = (fp[:, cols] / n_neg)[:, None, :]
    o = _odds(eta)[None, :, None]
    return np.max(2 * o * t / (o + o * t + f), axis=2)


def _f1_batch(
    tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, eta: np.ndarray, col: int
) -> np.ndarray:
    """F1 at one threshold column at each eta, shape (b, M)."""
    t = (tp[:, col] / n_pos)[:, None]
    f = (fp[:, col] / n_neg)[:, None]
    o = _odds(eta)[None, :]
    return 2 * o * t / (o + o * t + f)


def _metric_batch(
    metric: str,
    tp: np.ndarray,
    fp: np.ndarray,
    n_pos: float,
    n_neg: float,
    eta: np.ndarray,
    cols: np.ndarray,
    col: int | None = None,
    grid_step: float | None = None,
) -> np.ndarray:
    if metric == "ap":
        return _ap_batch(tp, fp, n_pos, n_neg, eta, cols, grid_step)
    if metric == "pr_auc" and grid_step is not None:
        return _pr_auc_deposit(tp, fp, n_pos, n_neg, eta, cols, grid_step)
    if metric == "pr_auc":
        # bound the (b, M, K) intermediate
        step = max(1, int(4_000_000 // max(1, eta.size * cols.size)))
        return np.concatenate(
            [
                _pr_auc_batch(tp[i : i + step], fp[i : i + step], n_pos, n_neg, eta, cols)
                for i in range(0, tp.shape[0], step)
            ]
        )
    if metric == "max_f1" and tp.shape[0] * cols.size > 50_000:
        return _max_f1_fast(tp, fp, n_pos, n_neg, eta, cols)
    if metric == "max_f1":
        step = max(1, int(4_000_000 // max(1, eta.size * cols.size)))
        return np.concatenate(
            [
                _max_f1_batch(tp[i : i + step], fp[i : i + step], n_pos, n_neg, eta, cols)
                for i in range(0, tp.shape[0], step)
            ]
        )
    if metric == "f1":
        if col is None:
            raise ValueError("metric 'f1' needs a threshold")
        return _f1_batch(tp, fp, n_pos, n_neg, eta, col)
    raise ValueError(f"metric must be one of {BAND_METRICS}, got {metric!r}")


def _threshold_column(c: RocCounts, threshold: float) -> int:
    """Index of the operating point 'score >= threshold' (last stored threshold >= it)."""
    j = int(np.searchsorted(-c.thresholds, -float(threshold), side="right")) - 1
    if j < 0:
        raise ValueError(
            f"threshold={_plain(threshold)!r} is above every score "
            f"(largest {_plain(c.thresholds[0])!r}): "
            "nothing is predicted positive there"
        )
    if c.compressed and c.thresholds[j] != threshold and j + 1 < c.n_thresholds:
        logger.warning(
            "counts are compressed: threshold %r is not stored; using the next stored "
            "threshold above it (%r), whose false-positive count may be lower",
            threshold,
            c.thresholds[j],
        )
    return j


def metric_values(
    counts: RocCounts,
    metric: str,
    prevalences: Any,
    *,
    threshold: float | None = None,
    grid_step: float | None = None,
) -> np.ndarray:
    """A prevalence-adjusted metric of one set of counts over ``prevalences`` (exact sums).

    The same kernels the bootstrap uses (so a band is centred on exactly this estimate):
    ``"ap"`` (step sum, scikit-learn definition), ``"pr_auc"`` (Davis-Goadrich interpolated
    area), ``"max_f1"``, ``"f1"`` (at ``threshold``).
    """
    eta = np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    cols = _positive_columns(counts)
    col = _threshold_column(counts, threshold) if threshold is not None else None
    tp = np.asarray(counts.tp, dtype=float)[None, :]
    fp = np.asarray(counts.fp, dtype=float)[None, :]
    return _metric_batch(metric, tp, fp, counts.n_pos, counts.n_neg, eta, cols, col, grid_step)[0]


# ---------------------------------------------------------------------------- bands
def _band_from_replicates(
    estimate: np.ndarray,
    reps: np.ndarray,
    confidence: float,
    simultaneous: bool,
    scale: str,
    min_scale: Any = 0.0,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Sup-t (simultaneous) or percentile (pointwise) band from replicates ``(B, G)``.

    ``min_scale`` (on the transformed scale: scalar, ``(G,)`` or a pair ``(lower, upper)`` of
    those) is a floor for the one-sided scales: where the bootstrap is degenerate (an estimate
    of 0 or 1 -- e.g. TPR = 1 because no positive fell below the threshold -- makes every
    replicate equal) the band would otherwise collapse to the estimate although the truth is
    not exactly 0 or 1.
    """
    if not simultaneous:
        a = 1 - confidence
        low = np.quantile(reps, a / 2, axis=0)
        high = np.quantile(reps, 1 - a / 2, axis=0)
        return np.minimum(low, estimate), np.maximum(high, estimate), {}
    if scale == "arcsine":
        # variance-stabilising for proportions, finite at 0 and 1 (no clipping artefacts)
        def fwd(x: np.ndarray) -> np.ndarray:
            return np.arcsin(np.sqrt(np.clip(x, 0.0, 1.0)))

        def back(y: np.ndarray) -> np.ndarray:
            return np.sin(np.clip(y, 0.0, np.pi / 2)) ** 2
    else:

        def fwd(x: np.ndarray) -> np.ndarray:
            return x

        back = fwd
    est_t = fwd(estimate)
    reps_t = fwd(reps)
    # Asymmetric scales from the replicate quantiles at +-1 sigma (robust to a few outlying
    # replicates and to the skew of ratio-type metrics); any positive scales give a band with
    # the calibrated simultaneous coverage, because the critical value is the bootstrap
    # quantile of the largest standardised deviation.
    q16, q84 = np.quantile(reps_t, [0.158655, 0.841345], axis=0)
    sd = reps_t.std(axis=0, ddof=1)
    floor = np.maximum(0.25 * (q84 - q16) / 2, 1e-3 * sd)
    # One-sided root-mean-square deviations: where more than 84% of the replicates equal the
    # estimate (a lumpy, near-degenerate bootstrap: precision 1 at a recall reached before the
    # first negative, TPR at an FPR below one negative) the quantile scales are ~0 while a few
    # replicates deviate; studentising those by ~0 gave deviations of 1e8 and one critical
    # value of ~3000 applied to the WHOLE grid (quick-start PR band covering the plot). With
    # this floor a point where a share p of the replicates deviates contributes at most
    # 1/sqrt(p) to the max; for a normal-like point it is sd/sqrt(2) < the quantile scale
    # (sd), so it does not bind there.
    d_all = reps_t - est_t
    rms_hi = np.sqrt(np.mean(np.maximum(d_all, 0.0) ** 2, axis=0))
    rms_lo = np.sqrt(np.mean(np.maximum(-d_all, 0.0) ** 2, axis=0))
    min_lo, min_hi = min_scale if isinstance(min_scale, tuple) else (min_scale, min_scale)
    s_lo = np.maximum(np.maximum(np.maximum(est_t - q16, floor), rms_lo), min_lo)
    s_hi = np.maximum(np.maximum(np.maximum(q84 - est_t, floor), rms_hi), min_hi)
    live = (s_lo > 0) & (s_hi > 0)
    dev = np.zeros(reps.shape[0])
    if live.any():
        d = reps_t[:, live] - est_t[live]
        z = np.where(d > 0, d / s_hi[live], -d / s_lo[live])
        dev = np.max(z, axis=1)
    # never below the one-point normal quantile: a sup over the grid is at least one point's
    # deviation (matters only when discrete or degenerate replicates make the max too small)
    crit = max(
        float(np.quantile(dev, confidence, method="higher")),
        float(stats.norm.ppf((1 + confidence) / 2)),
    )
    low = back(est_t - crit * s_lo)
    high = back(est_t + crit * s_hi)
    se = (s_lo + s_hi) / 2
    return low, high, {"critical_value": crit, "se": se}


#: Fewest false positives a prevalence-adjusted estimate must rest on for the bootstrap band to
#: be claimed there (binormal coverage study, ``benchmarks/bench_band_coverage.py``).
MIN_FP_SUPPORT = 20


def _fp_support_eta(counts: RocCounts, eta: np.ndarray) -> np.ndarray:
    """False positives above the first threshold where precision at ``eta`` falls to 1/2.

    Precision at ``eta`` is ``>= 1/2`` while ``FPR / TPR <= o``; AP, PR-AUC and max-F1 at
    ``eta`` are decided around that point, so this many false positives carry the estimate.
    When precision never falls to 1/2 the whole negative class does (``n_neg``).
    """
    t = np.asarray(counts.tp, float) / counts.n_pos
    f = np.asarray(counts.fp, float) / counts.n_neg
    o = _odds(np.asarray(eta, float))
    below = f[None, :] >= o[:, None] * t[None, :]  # precision <= 1/2 (F/T >= o, T > 0 or F > 0)
    below &= (t > 0) | (f > 0)
    has = below.any(axis=1)
    first = np.argmax(below, axis=1)
    return np.where(has, np.asarray(counts.fp, float)[first], float(counts.n_neg))


def _support_note(supported: np.ndarray, grid: np.ndarray, what: str) -> str:
    if supported.all():
        return ""
    return (
        f"; NOT covered where < {MIN_FP_SUPPORT} false (or remaining true) positives support "
        "the estimate "
        f"({int((~supported).sum())} of {supported.size} {what}, see extra['supported'])"
    )


def bootstrap_statistic(
    counts: RocCounts,
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
) -> np.ndarray:
    """Evaluate ``statistic(tp, fp) -> (b, G)`` on count-bootstrap replicates; returns (B, G)."""
    parts = [statistic(tp, fp) for tp, fp in bootstrap_counts(counts, n_boot, seed, chunk_size)]
    return np.concatenate(parts, axis=0)


def prevalence_band(
    counts: RocCounts,
    metric: str = "ap",
    prevalences: Any = None,
    *,
    threshold: float | None = None,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    simultaneous: bool = True,
    grid_step: float | None = None,
) -> Band:
    """Band for AP, PR-AUC, max-F1 or F1 (at ``threshold``) against prevalence.

    Count bootstrap (:func:`bootstrap_counts`); the simultaneous band is a bootstrap sup-t band
    over the log-eta grid on the variance-stabilising arcsine-sqrt scale ``g(x) = asin(sqrt x)``:
    ``[g(M) - c * s_lo, g(M) + c * s_hi]`` with one-sided scales ``s_lo``/``s_hi`` from the
    replicates' 15.9% / 84.1% quantiles (skew- and outlier-robust) and ``c`` the ``confidence``
    quantile of the largest standardised deviation ``max_eta (g(M*) - g(M)) / s`` over the grid,
    which makes the band simultaneous by construction.
    Its coverage is asymptotic (large counts); at prevalences where the metric rests on a
    handful of false positives the bootstrap underestimates variability and the estimate is
    biased upwards, so the band does NOT cover there (binormal study: ~0.3 at eta = 1e-4 with
    10^4 negatives); ``extra["fp_support"]`` / ``extra["supported"]`` (>= ``MIN_FP_SUPPORT``
    false positives) mark where it is claimed, and the method text says so (docs/statistics.md,
    "Coverage"). Use :func:`prevalence_band_from_roc` (PR-AUC, max-F1: valid at every eta),
    :func:`p3_band` or :func:`check_sample_size` there.
    ``simultaneous=False`` gives percentile intervals, labelled pointwise.

    Args:
        counts: unweighted ROC counts.
        metric: ``"ap"``, ``"pr_auc"``, ``"max_f1"`` or ``"f1"``.
        prevalences: grid (default: 200 log-spaced values in [1e-6, 0.5]).
        threshold: the operating threshold for ``"f1"``.
        n_boot: replicates.
        confidence: nominal level.
        seed: seed for reproducibility.
        simultaneous: sup-t (True) or pointwise percentile (False).
        grid_step: AP and PR-AUC; ``None`` chooses exact sums for small K and a linear-deposit
            grid of step 0.01 in log(FPR/TPR) when ``K * M > 2e5`` (AP error <= 1.2e-6; PR-AUC,
            Simpson per ROC segment + deposit, error <= 2.1e-6; see :func:`metric_statistic`).
            The estimate (the band's centre) is always the exact sum.

    Returns:
        :class:`Band` with ``grid_name="prevalence"``.
    """
    conf = _check_confidence(confidence)
    eta = _check_metric_args(metric, prevalences, threshold)
    n_cols = _positive_columns(counts).size
    if grid_step is None and metric in ("ap", "pr_auc") and n_cols * eta.size > DEPOSIT_MIN_WORK:
        grid_step = DEPOSIT_STEP
    stat = metric_statistic(counts, metric, eta, threshold=threshold, grid_step=grid_step)
    est = metric_values(counts, metric, eta, threshold=threshold, grid_step=None)
    reps = bootstrap_statistic(counts, stat, n_boot, seed)
    low, high, extra = _band_from_replicates(est, reps, conf, simultaneous, "arcsine")
    step = stat.grid_step  # type: ignore[attr-defined]
    if step is not None:
        extra[f"{metric}_grid_step"] = step
        extra[f"{metric}_max_abs_error"] = stat.max_error
    fp_support = _fp_support_eta(counts, eta)
    supported = fp_support >= MIN_FP_SUPPORT
    extra["fp_support"], extra["supported"] = fp_support, supported
    method = (
        "count bootstrap asymmetric sup-t over log-prevalence grid (arcsine-sqrt scale)"
        if simultaneous
        else "count bootstrap percentile"
    ) + _support_note(supported, eta, "prevalences")
    return Band(
        eta,
        "prevalence",
        est,
        low,
        high,
        method,
        conf,
        simultaneous,
        metric,
        int(n_boot),
        _seed_record(seed),
        extra,
    )


def _interp_rows(xq: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise linear interpolation of non-decreasing rows ``x`` in [0, 1] at ``xq``.

    At a vertical step (ties in x) the value after the step is used: the query is placed after
    the last point with ``x <= xq``.
    """
    b, k = x.shape
    off = 2.0 * np.arange(b)[:, None]
    flat = (x + off).ravel()
    q = (xq[None, :] + off).ravel()
    j = np.searchsorted(flat, q, side="right") - 1  # last point with x <= q (global index)
    row_start = (np.arange(b) * k).repeat(xq.size)
    j = np.clip(j, row_start, row_start + k - 1)
    j1 = np.minimum(j + 1, row_start + k - 1)
    x0, x1 = flat[j], flat[j1]
    y0, y1 = y.ravel()[j], y.ravel()[j1]
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(x1 > x0, (q - x0) / (x1 - x0), 0.0)
    return (y0 + np.clip(lam, 0, 1) * (y1 - y0)).reshape(b, xq.size)


def _with_origin(tp: np.ndarray, n: float) -> np.ndarray:
    return np.concatenate([np.zeros((tp.shape[0], 1)), tp / n], axis=1)


def _rate_min_scales(rate: np.ndarray, n: float) -> tuple[np.ndarray, np.ndarray]:
    """Binomial floors for the one-sided arcsine-sqrt scales of a rate estimated from ``n``.

    ``g(p) - g(q_lo)`` and ``g(q_hi) - g(p)`` with ``q_lo``, ``q_hi`` the 15.9% / 84.1%
    quantiles of the Jeffreys posterior Beta(k + 1/2, n - k + 1/2), ``k = p n``: about
    ``1 / (2 sqrt n)`` each inside (0, 1) (the variance-stabilising property), and still
    positive and suitably one-sided at ``p = 0`` or ``1``. A rate at a fixed threshold has at
    least this sampling spread; where the bootstrap is degenerate (TPR_hat = 1 at high FPR
    because no positive fell below the threshold, every replicate equal) the floor keeps the
    band from collapsing onto the estimate.
    """
    p = np.clip(np.asarray(rate, dtype=float), 0.0, 1.0)
    k = p * n
    q_lo, q_hi = stats.beta.ppf([[0.158655], [0.841345]], k + 0.5, n - k + 0.5)
    g = np.arcsin(np.sqrt(p))
    return g - np.arcsin(np.sqrt(q_lo)), np.arcsin(np.sqrt(q_hi)) - g


def roc_band(
    counts: RocCounts,
    fpr_grid: Any = None,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    simultaneous: bool = True,
) -> Band:
    """Vertical band for the ROC curve: TPR at each FPR of a (log-spaced) grid.

    TPR at FPR ``f`` is the linear ROC interpolation (the achievable curve). Count bootstrap;
    sup-t on the arcsine-sqrt scale over the FPR grid (default 100 log-spaced FPRs from
    ``max(1e-6, 1/n_neg)`` to 1), or percentile intervals when ``simultaneous=False``.
    """
    conf = _check_confidence(confidence)
    if fpr_grid is None:
        lo = max(1e-6, 1.0 / counts.n_neg)
        fpr_grid = np.logspace(math.log10(lo), 0.0, 100)
    stat = roc_statistic(counts, fpr_grid)
    grid = stat.grid
    est = stat.estimate(counts)
    reps = bootstrap_statistic(counts, stat, n_boot, seed)
    low, high, extra = _band_from_replicates(
        est, reps, conf, simultaneous, "arcsine", _rate_min_scales(est, counts.n_pos)
    )
    method = (
        "count bootstrap asymmetric sup-t over FPR grid (arcsine-sqrt scale, binomial scale floor)"
        if simultaneous
        else ("count bootstrap percentile")
    )
    return Band(
        grid,
        "fpr",
        est,
        low,
        high,
        method,
        conf,
        simultaneous,
        "roc",
        int(n_boot),
        _seed_record(seed),
        extra,
    )


def pr_band(
    counts: RocCounts,
    prevalence: float,
    recall_grid: Any = None,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    simultaneous: bool = True,
    construction: str = "roc",
    fpr_grid: Any = None,
) -> Band:
    """Band for the prevalence-adjusted PR curve at ``prevalence``: precision at each recall.

    The estimate is precision at recall ``r`` on the linearly interpolated ROC curve (FPR at
    TPR = r), the correct (Davis & Goadrich 2006) PR interpolation, re-weighted to eta (Brabec
    et al. 2020 eq. 8).

    Constructions:
        * ``"roc"`` (default): :func:`roc_band` (count bootstrap sup-t with the binomial scale
          floor, on ``fpr_grid``) mapped through eq. 8 by :func:`pr_band_from_roc`. Precision at
          a recall is monotone in the FPR where the curve reaches it, so the band holds at
          EVERY recall and EVERY prevalence at once whenever the ROC band holds, and needs no
          false-positive support (binormal study: joint coverage 0.96-0.99 over eta = 1e-4 ...
          0.5; docs/statistics.md, "Coverage"). Conservative by about one FPR grid step, and
          wide (up to 1) where the data cannot exclude a jump at tiny FPR -- the honest answer.
          ``extra["supported"]`` is all True.
        * ``"sup-t"``: a bootstrap sup-t band over the recall grid at this one prevalence
          (arcsine-sqrt scale). Valid ONLY where ``extra["supported"]``: at least
          ``MIN_FP_SUPPORT`` false positives at the FPR where the recall is reached and as many
          positives left beyond it (coverage 0.27-0.35 over the whole grid, 0.98-1.00 over the
          supported part); the method text says so.

    Args:
        counts: unweighted ROC counts.
        prevalence: target prevalence ``eta``.
        recall_grid: recalls in (0, 1] (default 100 points in [0.01, 1]).
        n_boot: bootstrap replicates.
        confidence: nominal level.
        seed: seed (or Generator) of the bootstrap.
        simultaneous: ``"sup-t"`` only: False gives pointwise percentile intervals (the
            ``"roc"`` construction needs a simultaneous ROC band, so it refuses False).
        construction: ``"roc"`` or ``"sup-t"``.
        fpr_grid: ``"roc"`` only: the ROC band's FPR grid (default: :func:`roc_band`'s).

    Returns:
        :class:`Band` with ``grid_name="recall"``, ``metric="pr"`` and
        ``extra["prevalence"]``, ``extra["fp_support"]``, ``extra["supported"]``.
    """
    conf = _check_confidence(confidence)
    if construction not in PR_BAND_CONSTRUCTIONS:
        raise ValueError(
            f"construction must be one of {PR_BAND_CONSTRUCTIONS}, got {construction!r}"
        )
    stat = pr_statistic(counts, prevalence, recall_grid)
    eta, grid = stat.prevalence, stat.grid  # type: ignore[attr-defined]
    est = stat.estimate(counts)
    # false positives at the FPR where each recall is first reached (from the estimate)
    o = eta / (1 - eta)
    with np.errstate(divide="ignore"):
        fp_support = np.where(est > 0, o * grid * (1 - est) / est, np.inf) * counts.n_neg
    if construction == "roc":
        if not simultaneous:
            raise ValueError(
                "simultaneous=False needs construction='sup-t': the ROC-band mapping holds "
                "only for a simultaneous ROC band"
            )
        rb = roc_band(counts, fpr_grid, n_boot=n_boot, confidence=conf, seed=seed)
        band = pr_band_from_roc(rb, eta, grid, estimate=est)
        band.extra["fp_support"] = fp_support
        band.extra["supported"] = np.ones(grid.size, dtype=bool)
        return band
    reps = bootstrap_statistic(counts, stat, n_boot, seed)
    low, high, extra = _band_from_replicates(est, reps, conf, simultaneous, "arcsine")
    extra["prevalence"] = eta
    # ... and the positives still to be found beyond each recall (near recall 1 the curve
    # rests on the few lowest-scored positives, whose FPR the bootstrap cannot widen)
    supported = (fp_support >= MIN_FP_SUPPORT) & (counts.n_pos * (1 - grid) >= MIN_FP_SUPPORT)
    extra["fp_support"], extra["supported"] = fp_support, supported
    method = (
        "count bootstrap asymmetric sup-t over recall grid at this prevalence only "
        "(arcsine-sqrt scale)"
        if simultaneous
        else "count bootstrap percentile at this prevalence only"
    )
    method += (
        f"; valid only where >= {MIN_FP_SUPPORT} false and remaining true positives support "
        "it (extra['supported'])" + _support_note(supported, grid, "recalls")
    )
    return Band(
        grid,
        "recall",
        est,
        low,
        high,
        method,
        conf,
        simultaneous,
        "pr",
        int(n_boot),
        _seed_record(seed),
        extra,
    )


def p3_band(
    tp: float,
    fp: float,
    n_pos: float,
    n_neg: float,
    prevalences: Any = None,
    *,
    confidence: float = 0.95,
    method: str = "koopman",
) -> Band:
    """P^3 curve (precision against prevalence at one operating point) with its band.

    Exact-method and simultaneous over *every* eta: precision is increasing in LR at every
    eta, so ``LR in [lo, hi]`` (one :func:`likelihood_ratio_interval`) holds iff the whole curve
    lies in the band. Coverage: Koopman approximately nominal; ``"box"`` guaranteed.
    """
    eta = _prevalence_grid(prevalences)
    iv = precision_interval(tp, fp, n_pos, n_neg, eta, confidence, method)
    est = _precision_from_lr(
        np.asarray((tp / n_pos) / (fp / n_neg) if fp > 0 else np.inf), _odds(eta)
    )
    return Band(
        eta,
        "prevalence",
        est,
        np.asarray(iv.low),
        np.asarray(iv.high),
        f"LR interval ({iv.method})",
        iv.confidence,
        True,
        "p3",
    )


def f1_band(
    counts: RocCounts,
    threshold: float,
    prevalences: Any = None,
    *,
    confidence: float = 0.95,
) -> Band:
    """F1 at a fixed threshold against prevalence, with a box band simultaneous over eta.

    ``F1(eta) = 2 o T / (o + o T + F)`` increases with TPR ``T`` and decreases with FPR ``F``
    at every eta, so with ``T in [T_lo, T_hi]`` and ``F in [F_lo, F_hi]`` (Clopper-Pearson at
    ``sqrt(confidence)`` each; joint coverage >= ``confidence``) the band
    ``[F1(T_lo, F_hi), F1(T_hi, F_lo)]`` holds for every eta at once, with guaranteed coverage.
    """
    conf = _check_confidence(confidence)
    eta = _prevalence_grid(prevalences)
    j = _threshold_column(counts, threshold)
    level = math.sqrt(conf)
    t_lo, t_hi = rate_interval(counts.tp[j], counts.n_pos, level)
    f_lo, f_hi = rate_interval(counts.fp[j], counts.n_neg, level)
    o = _odds(eta)

    def f1(t: float, f: float) -> np.ndarray:
        return 2 * o * t / (o + o * t + f)

    est = f1(counts.tp[j] / counts.n_pos, counts.fp[j] / counts.n_neg)
    return Band(
        eta,
        "prevalence",
        est,
        f1(t_lo, f_hi),
        f1(t_hi, f_lo),
        "box (clopper-pearson at sqrt(conf) for TPR and FPR)",
        conf,
        True,
        "f1",
        extra={"threshold": float(counts.thresholds[j])},
    )


# ---------------------------------------------------------------------------- shared replicates
#: ``K * M`` above which the bootstrap kernels of AP and PR-AUC switch from exact sums to the
#: linear-deposit grid (AP error <= 1.2e-6, PR-AUC error <= 2.1e-6 at step 0.01).
DEPOSIT_MIN_WORK = 200_000
#: Grid step (in log(FPR/TPR)) of the deposit kernels.
DEPOSIT_STEP = 0.01


class Statistic:
    """A batched statistic of count-bootstrap replicates: ``stat(tp, fp) -> (b, G)``.

    Built by :func:`metric_statistic`, :func:`roc_statistic`, :func:`pr_statistic`,
    :func:`roc_auc_statistic` or :func:`min_cost_statistic` and evaluated, together with any
    others, on one shared set of replicates by :func:`bootstrap_statistics`.

    Attributes:
        name: what it computes (e.g. ``"ap"``, ``"roc"``).
        grid: the x values of its ``G`` outputs (prevalences, FPRs, recalls or ``[0]``).
        grid_name: what ``grid`` holds.
        max_error: largest absolute error of the kernel against the exact statistic (0 when
            exact; the deposit kernels state their bound).
    """

    def __init__(
        self,
        name: str,
        grid: np.ndarray,
        grid_name: str,
        fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
        max_error: float = 0.0,
    ) -> None:
        """Wrap ``fn(tp, fp) -> (b, G)`` with its grid and error bound."""
        self.name, self.grid, self.grid_name = name, np.asarray(grid, float), grid_name
        self.fn, self.max_error = fn, float(max_error)

    def __call__(self, tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        """Evaluate on cumulative counts of shape ``(b, K)``; returns ``(b, G)``."""
        return self.fn(np.asarray(tp, dtype=float), np.asarray(fp, dtype=float))

    def estimate(self, counts: RocCounts) -> np.ndarray:
        """The statistic of ``counts`` itself, shape ``(G,)``."""
        return self(np.asarray(counts.tp, float)[None], np.asarray(counts.fp, float)[None])[0]

    def __repr__(self) -> str:
        return f"Statistic({self.name!r}, G={self.grid.size}, max_error={self.max_error:.2g})"


def metric_statistic(
    counts: RocCounts,
    metric: str,
    prevalences: Any = None,
    *,
    threshold: float | None = None,
    grid_step: float | str | None = "auto",
) -> Statistic:
    """AP, PR-AUC, max-F1 or F1 (at ``threshold``) over ``prevalences`` as a :class:`Statistic`.

    ``grid_step="auto"`` sums exactly when a call's work ``b * K * M <= DEPOSIT_MIN_WORK``
    (``b`` replicates) and otherwise uses the linear-deposit kernels (step
    :data:`DEPOSIT_STEP` in ``log(FPR/TPR)``) for AP and PR-AUC; ``max_error`` states their
    bound (an upper bound: small calls are exact). max-F1 and F1 are always exact.
    """
    eta = _check_metric_args(metric, prevalences, threshold)
    cols = _positive_columns(counts)
    col = _threshold_column(counts, threshold) if metric == "f1" else None
    auto = grid_step == "auto"
    step: float | None
    if auto:
        step = DEPOSIT_STEP
    else:
        step = None if grid_step is None else float(grid_step)  # type: ignore[arg-type]
    if metric not in ("ap", "pr_auc"):
        step = None
    err = 0.0
    if step is not None:
        err = step**2 * _LOGISTIC_MAX_CURVATURE / 8 if metric == "ap" else _pr_auc_error_bound(step)
    n_pos, n_neg = counts.n_pos, counts.n_neg

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        use = step
        if auto and tp.shape[0] * cols.size * eta.size <= DEPOSIT_MIN_WORK:
            use = None  # small: exact sums are cheap
        return _metric_batch(metric, tp, fp, n_pos, n_neg, eta, cols, col, use)

    s = Statistic(metric, eta, "prevalence", fn, err)
    s.grid_step = step  # type: ignore[attr-defined]
    return s


def roc_statistic(counts: RocCounts, fpr_grid: Any = None) -> Statistic:
    """TPR at each FPR of a grid on the linearly interpolated ROC curve (see :func:`roc_band`)."""
    if fpr_grid is None:
        lo = max(1e-6, 1.0 / counts.n_neg)
        fpr_grid = np.logspace(math.log10(lo), 0.0, 100)
    grid = np.asarray(fpr_grid, dtype=float)
    if grid.ndim != 1 or np.any((grid < 0) | (grid > 1)):
        raise ValueError("fpr_grid must be a 1-d array of values in [0, 1]")
    n_pos, n_neg = counts.n_pos, counts.n_neg

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        return _interp_rows(grid, _with_origin(fp, n_neg), _with_origin(tp, n_pos))

    return Statistic("roc", grid, "fpr", fn)


def pr_statistic(counts: RocCounts, prevalence: float, recall_grid: Any = None) -> Statistic:
    """Precision at each recall of the PR curve at ``prevalence`` (see :func:`pr_band`)."""
    eta = float(check_prevalence(prevalence, "prevalence"))
    grid = np.linspace(0.01, 1.0, 100) if recall_grid is None else np.asarray(recall_grid, float)
    if grid.ndim != 1 or np.any((grid <= 0) | (grid > 1)):
        raise ValueError("recall_grid must be a 1-d array of values in (0, 1]")
    o = eta / (1 - eta)
    n_pos, n_neg = counts.n_pos, counts.n_neg

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        t = _with_origin(tp, n_pos)
        f = _with_origin(fp, n_neg)
        # FPR at TPR = r: first point reaching r and its predecessor (side='left').
        b, k = t.shape
        off = 2.0 * np.arange(b)[:, None]
        flat = (t + off).ravel()
        q = (grid[None, :] + off).ravel()
        j = np.searchsorted(flat, q, side="left")
        row_start = (np.arange(b) * k).repeat(grid.size)
        j = np.clip(j, row_start + 1, row_start + k - 1)
        t0, t1 = flat[j - 1], flat[j]
        f0, f1 = f.ravel()[j - 1], f.ravel()[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(t1 > t0, (q - t0) / (t1 - t0), 1.0)
        fq = (f0 + np.clip(lam, 0, 1) * (f1 - f0)).reshape(b, grid.size)
        return o * grid / (o * grid + fq)

    s = Statistic("pr", grid, "recall", fn)
    s.prevalence = eta  # type: ignore[attr-defined]
    return s


def roc_auc_statistic(counts: RocCounts) -> Statistic:
    """ROC-AUC (trapezoid through the origin and the stored points, closed at (1, 1))."""
    n_pos, n_neg = counts.n_pos, counts.n_neg

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        b = tp.shape[0]
        t = np.concatenate([np.zeros((b, 1)), tp / n_pos, np.ones((b, 1))], axis=1)
        f = np.concatenate([np.zeros((b, 1)), fp / n_neg, np.ones((b, 1))], axis=1)
        return np.sum(np.diff(f, axis=1) * (t[:, 1:] + t[:, :-1]) / 2, axis=1)[:, None]

    return Statistic("roc_auc", np.zeros(1), "none", fn)


def min_cost_statistic(
    counts: RocCounts, prevalences: Any, cost_fp: float = 1.0, cost_fn: float = 1.0
) -> Statistic:
    """Lowest expected cost per example over thresholds (and the two trivial classifiers).

    ``cost = FPR (1 - eta) C_FP + (1 - TPR) eta C_FN`` minimised over the stored points plus
    (0, 0) and (1, 1), at each ``eta``.
    """
    eta = np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    n_pos, n_neg = counts.n_pos, counts.n_neg
    cfp, cfn = float(cost_fp), float(cost_fn)

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        b = tp.shape[0]
        t = np.concatenate([np.zeros((b, 1)), tp / n_pos, np.ones((b, 1))], axis=1)
        f = np.concatenate([np.zeros((b, 1)), fp / n_neg, np.ones((b, 1))], axis=1)
        return np.column_stack([np.min(f * (1 - e) * cfp + (1 - t) * e * cfn, axis=1) for e in eta])

    return Statistic("min_cost", eta, "prevalence", fn)


def bootstrap_statistics(
    counts: RocCounts,
    statistics: Mapping[str, Callable[[np.ndarray, np.ndarray], np.ndarray]],
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
) -> dict[str, np.ndarray]:
    """Every statistic on ONE shared set of count-bootstrap replicates: ``{name: (B, G)}``.

    The replicates are drawn once (:func:`bootstrap_counts`, chunked) and each chunk is handed
    to every statistic before the next is drawn, so intervals, bands and flip tests of one run
    share the same resamples (consistent with each other) and the draw is paid once.
    """
    if not statistics:
        raise ValueError("statistics is empty")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in statistics}
    for tp, fp in bootstrap_counts(counts, n_boot, seed, chunk_size):
        tpf, fpf = tp.astype(float), fp.astype(float)
        for k, stat in statistics.items():
            parts[k].append(np.asarray(stat(tpf, fpf), dtype=float))
    return {k: np.concatenate(v, axis=0) for k, v in parts.items()}


def band_from_replicates(
    estimate: Any,
    replicates: Any,
    grid: Any,
    *,
    grid_name: str = "prevalence",
    metric: str = "",
    confidence: float = 0.95,
    simultaneous: bool = True,
    scale: str = "arcsine",
    seed: Any = None,
    method: str | None = None,
    extra: dict[str, Any] | None = None,
    min_scale: Any = None,
    rate_n: float | None = None,
) -> Band:
    """A :class:`Band` from an estimate ``(G,)`` and bootstrap replicates ``(B, G)``.

    ``simultaneous=True``: asymmetric bootstrap sup-t band on the ``scale`` (``"arcsine"`` for
    quantities in [0, 1], ``"identity"`` for differences), see :func:`prevalence_band`;
    otherwise percentile intervals, labelled pointwise.

    Args:
        estimate: the point estimate on the grid, shape ``(G,)``.
        replicates: bootstrap replicates, shape ``(B, G)``.
        grid: the x values (``G``).
        grid_name: what ``grid`` holds (``"prevalence"``, ``"fpr"``, ``"recall"``).
        metric: the metric or curve the band is for.
        confidence: nominal level.
        simultaneous: sup-t (True) or pointwise percentile (False).
        scale: ``"arcsine"`` or ``"identity"``.
        seed: the seed the replicates came from (recorded only).
        method: method text (default: from ``grid_name`` and ``scale``).
        extra: merged into ``Band.extra``.
        min_scale: floor for the one-sided sup-t scales on the transformed scale (scalar,
            ``(G,)``, or a pair ``(lower, upper)`` of those); see ``rate_n``.
        rate_n: when the estimate is a binomial rate estimated from ``rate_n`` trials (TPR at
            fixed FPRs: ``rate_n = n_pos``), floor the scales by the rate's binomial spread
            (Jeffreys +-1 sigma on the arcsine scale, :func:`_rate_min_scales`), exactly as
            :func:`roc_band` does. Without it the band collapses onto the estimate wherever
            every replicate is equal (TPR = 1 at high FPR: coverage 0.07 instead of 0.95).
    """
    conf = _check_confidence(confidence)
    est = np.asarray(estimate, dtype=float)
    reps = np.asarray(replicates, dtype=float)
    if reps.ndim != 2 or reps.shape[1] != est.size:
        raise ValueError(f"replicates must have shape (B, {est.size}), got {reps.shape}")
    floor: Any = 0.0 if min_scale is None else min_scale
    if rate_n is not None:
        if not (float(rate_n) > 0 and math.isfinite(float(rate_n))):
            raise ValueError(f"rate_n must be a positive number of trials, got {_plain(rate_n)!r}")
        if scale != "arcsine":
            raise ValueError(f"rate_n needs scale='arcsine', got scale={scale!r}")
        r_lo, r_hi = _rate_min_scales(est, float(rate_n))
        f_lo, f_hi = floor if isinstance(floor, tuple) else (floor, floor)
        floor = (np.maximum(r_lo, f_lo), np.maximum(r_hi, f_hi))
    low, high, ext = _band_from_replicates(est, reps, conf, simultaneous, scale, floor)
    ext.update(extra or {})
    if method is None:
        method = (
            f"count bootstrap asymmetric sup-t over {grid_name} grid ({scale} scale)"
            if simultaneous
            else "count bootstrap percentile"
        )
    return Band(
        np.asarray(grid, dtype=float),
        grid_name,
        est,
        low,
        high,
        method,
        conf,
        simultaneous,
        metric,
        int(reps.shape[0]),
        _seed_record(seed),
        ext,
    )


def pr_band_from_roc(
    roc: Band,
    prevalence: float,
    recall_grid: Any = None,
    *,
    estimate: Any = None,
) -> Band:
    """PR-curve band at ``prevalence`` from a simultaneous ROC band, through Brabec eq. 8.

    The true ROC curve ``T(f)`` is non-decreasing, so if it lies in the ROC band at the band's
    FPR grid points it lies in the step envelope ``[max_{j<=i} low_j, min_{j>=i+1} high_j]``
    on every ``(f_i, f_{i+1}]`` too (and ``T <= min_j high_j`` below the first grid FPR). The
    FPR at which the curve first reaches recall ``r``, ``F(r)``, then lies in
    ``[F_lo(r), F_hi(r)]`` with ``F_hi`` the first grid FPR whose lower envelope reaches ``r``
    (1 if none) and ``F_lo`` the grid FPR just before the upper envelope reaches ``r`` (0 if
    already at the first). Precision at recall ``r``, ``o r / (o r + F(r))`` (``o`` the odds
    of ``prevalence``; Brabec et al. 2020 eq. 8 with ``LR = r / F``), is decreasing in ``F``,
    so ``[o r / (o r + F_hi), o r / (o r + F_lo)]`` holds at every recall AND every
    prevalence whenever the ROC band holds: the PR band inherits the ROC band's simultaneous
    coverage, with no bootstrap of its own and no requirement of false-positive support
    (where the ROC band cannot exclude a jump at tiny FPR the upper edge is 1, as it must be).
    It is conservative (the grid steps widen it by one FPR step, ~11% in FPR for the default
    100 log-spaced points) and wide where the data are thin, which is the honest answer there.

    Args:
        roc: a simultaneous ROC :class:`Band` (``grid_name="fpr"``), e.g. :func:`roc_band` or
            :func:`band_from_replicates` with ``rate_n=n_pos``.
        prevalence: target prevalence ``eta``.
        recall_grid: recalls in (0, 1] (default 100 points in [0.01, 1]).
        estimate: precision at each recall to carry as the estimate (default: from the ROC
            band's own estimate, inverted by linear interpolation).

    Returns:
        :class:`Band` with ``grid_name="recall"``, ``metric="pr"``, the ROC band's confidence,
        ``simultaneous`` as the ROC band, ``extra["prevalence"]`` and ``extra["fpr_bounds"]``.
    """
    if not isinstance(roc, Band) or roc.grid_name != "fpr":
        raise ValueError(f"roc must be a Band over an FPR grid, got {type(roc).__name__}")
    eta = float(check_prevalence(prevalence, "prevalence"))
    grid = np.linspace(0.01, 1.0, 100) if recall_grid is None else np.asarray(recall_grid, float)
    if grid.ndim != 1 or np.any((grid <= 0) | (grid > 1)):
        raise ValueError("recall_grid must be a 1-d array of values in (0, 1]")
    f = np.asarray(roc.grid, float)
    if f.size < 1 or np.any(np.diff(f) <= 0):
        raise ValueError("roc.grid must be strictly increasing FPRs")
    lo = np.maximum.accumulate(np.clip(np.asarray(roc.low, float), 0.0, 1.0))
    hi = np.minimum.accumulate(np.clip(np.asarray(roc.high, float), 0.0, 1.0)[::-1])[::-1]
    if f[-1] < 1.0:  # T(1) = 1 exactly
        f, lo, hi = np.r_[f, 1.0], np.r_[lo, 1.0], np.r_[hi, 1.0]
    i = np.searchsorted(lo, grid, side="left")  # first grid FPR with lower envelope >= r
    f_hi = np.where(i < f.size, f[np.minimum(i, f.size - 1)], 1.0)
    j = np.searchsorted(hi, grid, side="left")  # first grid FPR with upper envelope >= r
    f_lo = np.where(j > 0, f[np.maximum(j - 1, 0)], 0.0)
    o = eta / (1.0 - eta)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_lo = o * grid / (o * grid + f_hi)
        p_hi = np.where(f_lo > 0, o * grid / (o * grid + f_lo), 1.0)
    if estimate is None:
        est_t = np.asarray(roc.estimate, float)
        tz = np.maximum.accumulate(np.r_[0.0, est_t, 1.0][: f.size + 1])
        fz = np.r_[0.0, f]
        # FPR where the (interpolated) estimate first reaches r
        k = np.clip(np.searchsorted(tz, grid, side="left"), 1, tz.size - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(tz[k] > tz[k - 1], (grid - tz[k - 1]) / (tz[k] - tz[k - 1]), 1.0)
        fq = fz[k - 1] + np.clip(lam, 0, 1) * (fz[k] - fz[k - 1])
        with np.errstate(divide="ignore", invalid="ignore"):
            est = np.where(fq > 0, o * grid / (o * grid + fq), 1.0)
    else:
        est = np.asarray(estimate, float)
        if est.shape != grid.shape:
            raise ValueError(f"estimate must have shape {grid.shape}, got {est.shape}")
    extra = {"prevalence": eta, "fpr_bounds": (f_lo, f_hi), "roc_method": roc.method}
    return Band(
        grid,
        "recall",
        est,
        np.minimum(p_lo, est),
        np.maximum(p_hi, est),
        f"{roc.method}, mapped to PR through eq. 8 (valid at every recall and prevalence)",
        roc.confidence,
        roc.simultaneous,
        "pr",
        roc.n_boot,
        roc.seed,
        extra,
    )


#: Metrics of :func:`prevalence_band_from_roc`.
ROC_MAPPED_METRICS = ("ap", "pr_auc", "max_f1")


def _roc_envelopes(roc: Band) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(f, lo, hi)``: the FPR grid (ending at 1) with the monotone step envelopes of a band.

    A non-decreasing ROC curve inside the band at the grid points satisfies
    ``T(f) >= lo_i`` for ``f >= f_i`` and ``T(f) <= hi_i`` for ``f <= f_i``, with
    ``lo = running max of the lower edge`` and ``hi = running min from the right of the upper
    edge``; ``T(1) = 1`` exactly.
    """
    if not isinstance(roc, Band) or roc.grid_name != "fpr":
        raise ValueError(f"roc must be a Band over an FPR grid, got {type(roc).__name__}")
    f = np.asarray(roc.grid, float)
    if f.ndim != 1 or f.size < 1 or np.any(np.diff(f) <= 0) or f[0] < 0 or f[-1] > 1:
        raise ValueError("roc.grid must be strictly increasing FPRs in [0, 1]")
    lo = np.maximum.accumulate(np.clip(np.asarray(roc.low, float), 0.0, 1.0))
    hi = np.minimum.accumulate(np.clip(np.asarray(roc.high, float), 0.0, 1.0)[::-1])[::-1]
    if f[-1] < 1.0:
        f, lo, hi = np.r_[f, 1.0], np.r_[lo, 1.0], np.r_[hi, 1.0]
    lo[-1] = hi[-1] = 1.0
    return f, lo, hi


def _integral_prec(a: np.ndarray, b: np.ndarray, f: np.ndarray, o: np.ndarray) -> np.ndarray:
    """``int_a^b o r / (o r + f) dr`` (precision along a vertical ROC segment at FPR ``f``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_term = np.where(f > 0, (f / o) * np.log((o * b + f) / (o * a + f)), 0.0)
    return np.where(b > a, (b - a) - log_term, 0.0)


def _prec(r: np.ndarray, f: np.ndarray, o: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(f > 0, o * r / (o * r + f), np.where(r > 0, 1.0, 0.0))


def _staircase_bounds(
    metric: str, f: np.ndarray, lo: np.ndarray, hi: np.ndarray, eta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ``metric(eta)`` over every monotone ROC curve inside the envelopes.

    Lower envelope curve: vertical steps at ``f_i`` from ``lo_{i-1}`` to ``lo_i``; upper: at
    ``f_{i-1}`` (``f_{-1} = 0``) from ``hi_{i-1}`` to ``hi_i``. See
    :func:`prevalence_band_from_roc` for why each bound holds.
    """
    o = _odds(eta)[:, None]
    g = f.size
    lo0 = np.r_[0.0, lo[:-1]]  # start recall of each lower step
    hi0 = np.r_[0.0, hi[:-1]]
    fu = np.r_[0.0, f[:-1]]  # FPR of each upper step
    if metric == "max_f1":
        with np.errstate(divide="ignore", invalid="ignore"):
            low = np.max(2 * o * lo / (o + o * lo + f), axis=1)
            high = np.max(2 * o * hi / (o + o * hi + fu), axis=1)
        return low, high
    if metric == "pr_auc":
        low = _integral_prec(lo0, lo, f, o).sum(axis=1)
        high = _integral_prec(hi0, hi, fu, o).sum(axis=1)
        return low, high
    # AP = sum_k dT_k Prec(T_k): each vertex's precision lies between the envelope precisions
    # at its recall, and T_k >= every r in (T_{k-1}, T_k], so the suffix inf / sup (over
    # recalls >= r) of those precisions bound the step sum for ANY set of vertices.
    live_lo = lo > lo0
    inf_piece = np.where(live_lo, _prec(lo0, f, o), np.inf)  # left limit on each lower step
    suffix = np.minimum.accumulate(inf_piece[:, ::-1], axis=1)[:, ::-1]
    m_next = np.c_[suffix[:, 1:], np.full((eta.size, 1), np.inf)]
    m = np.minimum(m_next, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r_star = np.where(m < 1, m * f / (o * (1 - m)), np.inf)  # where o r/(o r + f) = m
    c = np.clip(r_star, lo0, lo)
    low = (_integral_prec(lo0, c, f, o) + m * (lo - c)).sum(axis=1)
    sup_piece = np.where(hi > hi0, _prec(np.broadcast_to(hi, (eta.size, g)), fu, o), 0.0)
    run_max = np.maximum.accumulate(sup_piece[:, ::-1], axis=1)[:, ::-1]
    high = ((hi - hi0) * run_max).sum(axis=1)
    return low, high


def _curve_metric(metric: str, fv: np.ndarray, tv: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """``metric(eta)`` of the piecewise-linear ROC curve through ``(0,0)`` and ``(fv, tv)``."""
    o = _odds(eta)[:, None]
    t0, f0 = np.r_[0.0, tv[:-1]], np.r_[0.0, fv[:-1]]
    if metric == "pr_auc":
        return _pr_auc_exact_segments(
            t0[None, :], f0[None, :], (tv - t0)[None, :], (fv - f0)[None, :], eta
        )[0]
    if metric == "ap":
        return _prec(np.broadcast_to(tv, (eta.size, tv.size)), fv, o) @ (tv - t0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.max(np.nan_to_num(2 * o * tv / (o + o * tv + fv)), axis=1)


def prevalence_band_from_roc(
    roc: Band,
    prevalences: Any = None,
    metric: str = "pr_auc",
    *,
    estimate: Any = None,
) -> Band:
    """Band for AP, PR-AUC or max-F1 against prevalence from a simultaneous ROC band.

    Construction. If the true ROC curve ``T(f)`` (non-decreasing) lies inside the band at its
    grid FPRs ``f_i``, it lies between two staircase ROC curves, both valid curves from (0, 0)
    to (1, 1): the lower envelope ``L`` (vertical steps at ``f_i`` up to
    ``lo_i = max_{j<=i} low_j``) and the upper envelope ``U`` (vertical steps at ``f_{i-1}``,
    ``f_{-1} = 0``, up to ``hi_i = min_{j>=i} high_j``). The FPR ``F(r)`` at which the curve first
    reaches recall ``r`` then lies in ``[F_U(r), F_L(r)]``, and precision at ``r``,
    ``o r / (o r + F(r))`` (Brabec et al. 2020 eq. 8 with ``LR = r / F``), is decreasing in F:

    * PR-AUC (Davis-Goadrich, the integral of that precision over recall) and max-F1
      (``F1 = 2 o T / (o + o T + F)``, increasing in T, decreasing in F; its sup over the
      curve) are monotone functionals of the curve, so ``[metric(L), metric(U)]`` holds.
    * AP (the step sum ``sum_k dT_k Prec(T_k)`` over the curve's vertices) is NOT monotone in
      the curve (extra vertices on a lower curve can raise it), so instead: each vertex's
      precision lies in ``[P_L(T_k), P_U(T_k)]`` and ``T_k >= r`` for every ``r`` in
      ``(T_{k-1}, T_k]``, hence ``int inf_{s>=r} P_L(s) dr <= AP <= int sup_{s>=r} P_U(s) dr``
      for ANY set of vertices on ANY curve inside the band -- the population AP of a
      discretised score included (and its continuous limit, where AP = PR-AUC).

    Each bound is exact (closed-form integrals of eq. 8 along vertical segments), so the band
    holds at every prevalence at once whenever the ROC band holds: its coverage is at least
    the ROC band's, with no false-positive support condition and no bootstrap of its own.
    Conservative (one FPR grid step of slack, the worst curve in the band), and honestly wide
    at prevalences where the ROC band cannot pin down the curve at tiny FPR.
    docs/statistics.md, "Metric bands from the ROC band".

    Args:
        roc: a simultaneous ROC :class:`Band` (``grid_name="fpr"``), e.g. :func:`roc_band`.
        prevalences: grid (default: 200 log-spaced values in [1e-6, 0.5]).
        metric: ``"ap"``, ``"pr_auc"`` or ``"max_f1"``.
        estimate: the point estimate on the grid (e.g. the exact metric from the counts);
            default: the metric of the ROC band's estimate curve (linear interpolation through
            the grid points). The band is widened to contain it if needed.

    Returns:
        :class:`Band` with ``grid_name="prevalence"``, the ROC band's confidence, ``n_boot``
        and seed, ``extra["supported"]`` all True, ``extra["roc_method"]`` and the bounds
        before widening to the estimate, ``extra["envelope_low"]`` / ``["envelope_high"]``.
    """
    if metric not in ROC_MAPPED_METRICS:
        raise ValueError(f"metric must be one of {ROC_MAPPED_METRICS}, got {metric!r}")
    f, lo, hi = _roc_envelopes(roc)
    if not roc.simultaneous:
        raise ValueError("roc must be a simultaneous band (a pointwise band maps to nothing)")
    eta = _prevalence_grid(prevalences)
    low, high = _staircase_bounds(metric, f, lo, hi, eta)
    if estimate is None:
        fv = np.asarray(roc.grid, float)
        tv = np.maximum.accumulate(np.clip(np.asarray(roc.estimate, float), 0.0, 1.0))
        if fv[-1] < 1.0:
            fv, tv = np.r_[fv, 1.0], np.r_[tv, 1.0]
        est = _curve_metric(metric, fv, tv, eta)
    else:
        est = np.asarray(estimate, float)
        if est.shape != eta.shape:
            raise ValueError(f"estimate must have shape {eta.shape}, got {est.shape}")
    extra = {
        "supported": np.ones(eta.size, dtype=bool),
        "roc_method": roc.method,
        "envelope_low": low,
        "envelope_high": high,
        "fpr_grid_points": int(f.size),
    }
    return Band(
        eta,
        "prevalence",
        est,
        np.minimum(low, est),
        np.maximum(high, est),
        f"{roc.method}; ROC band mapped (simultaneous over η; conservative)",
        roc.confidence,
        True,
        metric,
        roc.n_boot,
        roc.seed,
        extra,
    )


# ---------------------------------------------------------------------------- headline intervals
class RocAucInterval(Interval):
    """:class:`Interval` for ROC-AUC that also carries the estimate and DeLong's standard error.

    ``low``/``high`` are NaN when no interval exists (the method text says why).
    """

    estimate: float
    se: float | None

    def __new__(
        cls,
        low: Any,
        high: Any,
        method: str,
        confidence: float,
        estimate: float = math.nan,
        se: float | None = None,
    ) -> RocAucInterval:
        """Build from the limits, method, level, the AUC estimate and its standard error."""
        obj = super().__new__(cls, low, high, method, confidence)
        obj.estimate = float(estimate)
        obj.se = None if se is None else float(se)
        return obj

    def __getnewargs__(self) -> tuple[Any, ...]:  # type: ignore[override]
        return (self[0], self[1], self.method, self.confidence, self.estimate, self.se)

    @property
    def available(self) -> bool:
        """True when the limits are numbers (not the NaN of "no interval")."""
        return bool(np.isfinite(self.low) and np.isfinite(self.high))


def roc_auc_interval(counts: RocCounts, confidence: float = 0.95) -> RocAucInterval:
    """ROC-AUC with DeLong's variance computed exactly from the counts (ties count 1/2).

    DeLong, DeLong & Clarke-Pearson (1988): the Mann-Whitney AUC is the mean of the positives'
    placement values ``V10 = P(negative < x) + P(negative = x) / 2`` (and equally of the
    negatives' ``V01``); its variance is ``S10 / n_pos + S01 / n_neg`` with ``S10``, ``S01`` the
    sample variances (ddof 1) of the placement values. Every example at one threshold shares its
    placement value, so both variances are weighted sums over the thresholds (O(K), no scores
    needed); lossless compression merges only negative-only thresholds between two positive
    ones, whose negatives share one placement value, so the result is exact for compressed
    counts too.

    Chosen over Hanley-McNeil (whose variance assumes exponential score distributions) because
    it is distribution-free and exact from the counts, and over the count bootstrap because it
    costs nothing and has no Monte-Carlo error. The interval is Wald on the logit scale
    (``logit(A) +- z se / (A (1 - A))``; Pepe 2003 §5.2.3): it stays inside (0, 1) and covers
    better than the raw-scale Wald interval for AUC near 1 (binormal check: 0.91-0.99 at 95%
    with 40 positives, ``tests/test_uncertainty.py``).

    Degenerate cases: when the DeLong variance is 0 (e.g. perfect separation) the interval is
    Clopper-Pearson for ``round(A m)`` successes in ``m = min(n_pos, n_neg)`` trials: ``m``
    disjoint positive-negative pairs are independent Bernoulli(AUC) trials (conservative).
    Fewer than 2 examples of a class, or weighted counts: no interval (NaN limits, the method
    text says why).

    Args:
        counts: ROC counts.
        confidence: two-sided level.

    Returns:
        :class:`RocAucInterval` (``.estimate``, ``.se``, ``.method``, ``.confidence``).
    """
    conf = _check_confidence(confidence)
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    nan = math.nan
    if counts.weighted:
        return RocAucInterval(
            nan,
            nan,
            "no interval: weighted counts (DeLong needs integer counts)",
            conf,
            float(_metrics.roc_auc(counts)),
        )
    dpos, dneg = (np.asarray(v, dtype=np.float64) for v in counts.per_threshold())
    n_pos, n_neg = float(counts.n_pos), float(counts.n_neg)
    tp, fp = np.asarray(counts.tp, np.float64), np.asarray(counts.fp, np.float64)
    v10 = (n_neg - fp + 0.5 * dneg) / n_neg  # per threshold, shared by its positives
    v01 = (tp - 0.5 * dpos) / n_pos  # shared by its negatives
    auc = float(np.dot(dpos, v10) / n_pos)
    exact = (
        ""
        if counts.is_exact
        else f" (on reduced counts, TPR/FPR error <= {counts.max_tpr_error:.2g})"
    )
    if n_pos < 2 or n_neg < 2:
        method = "no interval: DeLong needs >= 2 positives and >= 2 negatives"
        return RocAucInterval(nan, nan, method, conf, auc)
    s10 = float(np.dot(dpos, (v10 - auc) ** 2) / (n_pos - 1))
    s01 = float(np.dot(dneg, (v01 - auc) ** 2) / (n_neg - 1))
    se = math.sqrt(max(s10 / n_pos + s01 / n_neg, 0.0))
    z = float(stats.norm.ppf((1 + conf) / 2))
    level = f"{conf:.0%}"
    if se > 0 and 0 < auc < 1:
        centre = math.log(auc / (1 - auc))
        half = z * se / (auc * (1 - auc))
        lo, hi = (1 / (1 + math.exp(-(centre + d))) for d in (-half, half))
        method = f"DeLong variance from the counts, Wald on the logit scale, {level}{exact}"
        return RocAucInterval(lo, hi, method, conf, auc, se)
    mm = int(min(n_pos, n_neg))
    k = round(auc * mm)
    lo, hi = _rate_limits(np.asarray(float(k)), np.asarray(float(mm)), conf, "clopper-pearson")
    method = (
        f"DeLong variance is 0: Clopper-Pearson over min(n_pos, n_neg) = {mm} disjoint "
        f"positive-negative pairs, {level} (conservative){exact}"
    )
    return RocAucInterval(float(lo), float(hi), method, conf, auc, se)


class Thinned(NamedTuple):
    """Counts thinned by :func:`thin_for_bootstrap` and how far the dropped points moved.

    Attributes:
        counts: the thinned counts (the input itself when nothing was dropped).
        max_tpr_error: largest TPR move of a dropped point to its kept representative.
        max_fpr_error: largest FPR move likewise.
    """

    counts: RocCounts
    max_tpr_error: float
    max_fpr_error: float


def thin_for_bootstrap(counts: RocCounts, points: int = 200) -> Thinned:
    """Counts with at most about ``3 * points`` thresholds, and the error that introduced.

    Keeps the last threshold of each of ``points`` equal bins of ``TPR``, of ``TPR + FPR`` and
    of ``log10 FPR`` (floored at ``0.5 / n_neg``, so the low-FPR region that decides precision
    at small eta keeps resolution); counts with ``<= 3 * points`` thresholds are returned as
    they are. The thinned counts are exactly the counts of the scores quantised to the kept
    thresholds (any subset of cumulative counts is valid counts), so their count bootstrap is
    the bootstrap of that quantised classifier. The move of every dropped point to its kept
    representative (the next lower kept threshold) is measured: ``max_tpr_error < 1 / points``
    and ``max_fpr_error < 2 / points`` by construction. The report uses the same thinning
    for drawing (``points=1500``) and for its bootstrap; the logging hook for its bootstrap.

    Args:
        counts: ROC counts (weighted counts keep their flag).
        points: bins per axis (>= 1).

    Returns:
        :class:`Thinned` ``(counts, max_tpr_error, max_fpr_error)``.
    """
    if isinstance(points, bool) or int(points) != points or points < 1:
        raise ValueError(f"points must be an integer >= 1, got {_plain(points)!r}")
    points = int(points)
    k = counts.n_thresholds
    if k <= 3 * points:
        return Thinned(counts, 0.0, 0.0)
    tpr, fpr = counts.tpr, counts.fpr
    fmin = 0.5 / max(float(counts.n_neg), 1.0)
    lf = np.log10(np.maximum(fpr, fmin))
    keep = np.zeros(k, dtype=bool)
    for values, lo, hi in ((tpr, 0.0, 1.0), (tpr + fpr, 0.0, 2.0), (lf, math.log10(fmin), 0.0)):
        b = np.floor((values - lo) * (points / (hi - lo))).astype(np.int64)
        keep[:-1] |= b[1:] != b[:-1]
    keep[-1] = True
    kept = np.flatnonzero(keep)
    rep = kept[np.searchsorted(kept, np.arange(k))]
    thin = RocCounts(
        counts.thresholds[keep],
        counts.tp[keep],
        counts.fp[keep],
        counts.n_pos,
        counts.n_neg,
        compressed=True,
        weighted=counts.weighted,
    )
    return Thinned(thin, float(np.max(tpr[rep] - tpr)), float(np.max(fpr[rep] - fpr)))


def _logit(x: Any) -> np.ndarray:
    x = np.clip(np.asarray(x, dtype=float), 1e-12, 1 - 1e-12)
    return np.log(x) - np.log1p(-x)


def _expit(y: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-y))


def recentre(band: Band, exact: Any) -> tuple[np.ndarray, np.ndarray]:
    """Shift a band computed on thinned counts onto the exact estimate, on the logit scale.

    ``low' = expit(logit(low) + logit(exact) - logit(band.estimate))`` (likewise ``high``),
    then widened if needed to contain ``exact``: the bootstrap of the thinned counts estimates
    the spread, the full counts the centre. Values stay inside (0, 1).

    Returns:
        ``(low, high)`` arrays on the band's grid.
    """
    ex = np.asarray(exact, dtype=float)
    shift = _logit(ex) - _logit(band.estimate)
    low = _expit(_logit(band.low) + shift)
    high = _expit(_logit(band.high) + shift)
    return np.minimum(low, ex), np.maximum(high, ex)


@dataclass(frozen=True)
class HeadlineIntervals:
    """Percentile intervals of AP, PR-AUC and max-F1 at several prevalences.

    Attributes:
        prevalences: the prevalences ``(M,)``.
        intervals: ``{metric: (M, 2) array of [low, high]}`` for :data:`HEADLINE_METRICS`.
        info: the record (``n_boot``, ``seed``, ``confidence``, ``interval``,
            ``n_thresholds``, ``thinned_to``, ``max_tpr_error``, ``max_fpr_error``,
            ``max_estimate_shift``, ``kernel_max_error``, ``min_support``), JSON-ready.
    """

    prevalences: np.ndarray
    intervals: dict[str, np.ndarray]
    info: dict[str, Any]

    @property
    def method(self) -> str:
        """One line saying how the intervals were made (B, seed, thinning and its error)."""
        info = self.info
        text = (
            f"count bootstrap, {info['confidence']:.0%} percentile (pointwise), "
            f"B = {info['n_boot']}, seed {info['seed']}"
        )
        if info["thinned_to"] < info["n_thresholds"]:
            text += (
                f"; resampled on {info['thinned_to']} of {info['n_thresholds']} thresholds "
                f"(TPR moved ≤ {info['max_tpr_error']:.2g}, FPR ≤ {info['max_fpr_error']:.2g}; "
                f"estimates moved ≤ {info['max_estimate_shift']:.2g}, re-centred on the exact "
                "value)"
            )
        return text


def headline_intervals(
    counts: RocCounts,
    prevalences: Any,
    *,
    exact: Mapping[str, Any] | None = None,
    n_boot: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    points: int = 200,
) -> HeadlineIntervals:
    """Percentile intervals of AP, PR-AUC and max-F1 at each prevalence, one shared bootstrap.

    One :func:`bootstrap_statistics` call (stratified count bootstrap: each class's
    per-threshold counts resampled multinomially, equal in distribution to resampling examples
    within each class) feeds all three statistics at every prevalence, on counts thinned by
    :func:`thin_for_bootstrap`; the exact kernels are used (no deposit grid). The intervals
    are pointwise percentile intervals, shifted on the logit scale onto the exact values
    (:func:`recentre`; the largest shift is recorded as ``max_estimate_shift``). They do not
    cover where the estimate rests on fewer than :data:`MIN_FP_SUPPORT` false positives
    (docs/statistics.md, "Coverage"); ``info["min_support"]`` records that threshold so a
    caller can flag those rows.

    Args:
        counts: unweighted counts.
        prevalences: the prevalences (1-d).
        exact: ``{"ap": (M,), "pr_auc": (M,), "max_f1": (M,)}`` from the full counts
            (computed with :mod:`mlflow_imbalance.metrics` when None).
        n_boot: replicates.
        seed: the generator seed (recorded).
        confidence: nominal level.
        points: thinning resolution (:func:`thin_for_bootstrap`).

    Returns:
        :class:`HeadlineIntervals`.
    """
    conf = _check_confidence(confidence)
    _check_bootstrappable(counts)
    etas = np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    if exact is None:
        exact = {
            "ap": _metrics.average_precision(counts, etas),
            "pr_auc": _metrics.pr_auc(counts, etas),
            "max_f1": _metrics.max_f1(counts, etas),
        }
    thin, tpr_err, fpr_err = thin_for_bootstrap(counts, points)
    stat = {key: metric_statistic(thin, key, etas, grid_step=None) for key in HEADLINE_METRICS}
    reps = bootstrap_statistics(thin, stat, n_boot, np.random.default_rng(seed))
    out: dict[str, np.ndarray] = {}
    shift = kernel = 0.0
    for key in HEADLINE_METRICS:
        est_thin = stat[key].estimate(thin)
        kernel = max(kernel, stat[key].max_error)
        band = band_from_replicates(
            est_thin, reps[key], etas, metric=key, confidence=conf, simultaneous=False
        )
        ex = np.atleast_1d(np.asarray(exact[key], dtype=float))
        low, high = recentre(band, ex)
        shift = max(shift, float(np.max(np.abs(ex - est_thin))))
        out[key] = np.column_stack([low, high])
    info = {
        "n_boot": int(n_boot),
        "seed": int(seed),
        "confidence": conf,
        "interval": "percentile, pointwise",
        "n_thresholds": int(counts.n_thresholds),
        "thinned_to": int(thin.n_thresholds),
        "max_tpr_error": tpr_err,
        "max_fpr_error": fpr_err,
        "max_estimate_shift": shift,
        "kernel_max_error": kernel,
        "min_support": MIN_FP_SUPPORT,
    }
    return HeadlineIntervals(etas, out, info)
