"""Intervals at one operating point: rates, likelihood ratios, precision at any η.

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

Every result is an :class:`Interval` that carries its method and confidence level.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from mlflow_imbalance.core.validation import check_prevalence
from mlflow_imbalance.stats._checks import (
    InsufficientDataError,
    _check_confidence,
    _check_counts,
    _scalar_or_array,
)

__all__ = [
    "RATE_METHODS",
    "RATIO_METHODS",
    "InsufficientDataError",
    "Interval",
    "PrecisionUncertainty",
    "box_band_max_width",
    "brabec_delta",
    "likelihood_ratio_interval",
    "precision_interval",
    "precision_uncertainty",
    "rate_interval",
]

RATE_METHODS = ("clopper-pearson", "jeffreys", "wilson")
RATIO_METHODS = ("koopman-cp", "koopman", "box")


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
        # Beta quantiles by scipy.special.betaincinv: stats.beta.ppf's values (the same on 10^7
        # random arguments), without its ~40 us of argument handling per call (sample-size
        # planning asks for thousands of them)
        low = np.where(k_arr > 0, special.betaincinv(a_lo, lo_b, alpha / 2), 0.0)
        high = np.where(k_arr < n_arr, special.betaincinv(hi_a, b_hi, 1 - alpha / 2), 1.0)
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


#: Points evaluated per round of :func:`_bisect_log`.
_SEARCH_SPLIT = 15


def _bisect_log(
    f: Callable[[np.ndarray], np.ndarray], inside: np.ndarray, outside: np.ndarray, rounds: int = 20
) -> np.ndarray:
    """Vectorised search for the boundary where ``f`` (True = inside the set) changes.

    A 16-ary bisection: each round evaluates :data:`_SEARCH_SPLIT` equally spaced points of
    every bracket at once (``f`` gets a ``(15, n)`` array) and keeps the last inside and the
    first outside point, so the bracket shrinks 16-fold per round: 20 rounds reach float
    resolution (as 80 halvings do) in a quarter of the calls. The set is an interval on each
    line searched (Koopman's acceptance region is), as a halving search also assumes.
    """
    a, b = np.array(inside, dtype=float), np.array(outside, dtype=float)
    frac = (np.arange(1, _SEARCH_SPLIT + 1) / (_SEARCH_SPLIT + 1)).reshape((-1,) + (1,) * a.ndim)
    for _ in range(rounds):
        m = a + frac * (b - a)
        ok = np.asarray(f(m), dtype=bool)
        j = np.where(ok.all(axis=0), _SEARCH_SPLIT, np.argmin(ok, axis=0))  # first outside
        a = np.where(j > 0, np.take_along_axis(m, np.maximum(j - 1, 0)[None], 0)[0], a)
        b = np.where(
            j < _SEARCH_SPLIT,
            np.take_along_axis(m, np.minimum(j, _SEARCH_SPLIT - 1)[None], 0)[0],
            b,
        )
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
    ends = _bisect_log(
        inside, np.stack([start_lo, start_hi]), np.stack([lo_end, hi_end])
    )  # both limits in one search
    low, high = np.exp(ends[0]), np.exp(ends[1])
    low = np.where(x1 == 0, 0.0, low)
    high = np.where(x2 == 0, np.inf, high)
    return low, high


def likelihood_ratio_interval(
    tp: Any,
    fp: Any,
    n_pos: Any,
    n_neg: Any,
    confidence: float = 0.95,
    method: str = "koopman-cp",
) -> Interval:
    """Confidence interval for the positive likelihood ratio ``LR = TPR / FPR``.

    Args:
        tp: true positives at the operating point (scalar or array).
        fp: false positives at the operating point.
        n_pos: positives in the test set.
        n_neg: negatives in the test set.
        confidence: two-sided level.
        method: ``"koopman-cp"`` (default): Koopman's interval with its upper limit raised,
            where needed, to ``TPR_hat / FPR_lo`` with ``FPR_lo`` the one-sided
            Clopper-Pearson lower limit of FPR at level ``1 - alpha`` -- Koopman alone
            under-covers when the expected number of false positives is below 1 (exact
            coverage by enumeration down to 0.854 at E[FP] = 0.16: one observed false
            positive when the truth is a sixth of one makes LR look 6 times too small); with
            the correction the exact coverage stays >= 0.94 over TPR 0.05-0.95 x E[FP]
            0.05-500 (``tests/test_uncertainty.py``), at an expected log-width 0.54-2.2
            against the box's 0.77-3.2. Not exact: approximate, checked by enumeration.
            ``"koopman"``: Koopman's (1984) score interval for a ratio of two
            independent binomial proportions -- the set of ``theta`` whose Pearson chi-square
            under the constrained MLE ``p1 = theta * p2`` stays below ``chi2_1(conf)``; the
            lower limit stays finite and positive when ``fp = 0`` (the upper is then ``inf``).
            Close to nominal for E[FP] >= 1, not below. ``"box"``: ``TPR_lo / FPR_hi ..
            TPR_hi / FPR_lo`` from Clopper-Pearson intervals at level ``sqrt(conf)`` each
            (Brabec et al. 2020 §5): guaranteed coverage, wider.

    Returns:
        :class:`Interval` of LR limits (``high`` is ``inf`` when ``fp = 0``).
    """
    conf = _check_confidence(confidence)
    if method not in RATIO_METHODS:
        raise ValueError(f"method must be one of {RATIO_METHODS}, got {method!r}")
    tp_a, np_a = _check_counts(tp, n_pos, "tp", "n_pos")
    fp_a, nn_a = _check_counts(fp, n_neg, "fp", "n_neg")
    scalar = all(a.ndim == 0 for a in (tp_a, np_a, fp_a, nn_a))
    if method in ("koopman", "koopman-cp"):
        low, high = _koopman_interval(tp_a, np_a, fp_a, nn_a, conf)
        name = "koopman score"
        if method == "koopman-cp":
            tp_b, np_b, fp_b, nn_b = np.broadcast_arrays(tp_a, np_a, fp_a, nn_a)
            alpha = 1.0 - conf
            with np.errstate(divide="ignore", invalid="ignore"):
                f_lo = np.where(
                    fp_b > 0,
                    stats.beta.ppf(alpha, np.maximum(fp_b, 1e-300), nn_b - fp_b + 1),
                    0.0,
                )
                cp_high = np.where(f_lo > 0, (tp_b / np_b) / f_lo, np.inf)
            high = np.maximum(high, cp_high)
            name = "koopman score, small-FP corrected (upper >= TPR / Clopper-Pearson FPR lower)"
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
    method: str = "koopman-cp",
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
        method: ``"koopman-cp"`` (default), ``"koopman"`` or ``"box"`` (see
            :func:`likelihood_ratio_interval`).

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
