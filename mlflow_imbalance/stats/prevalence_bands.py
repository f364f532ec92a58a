"""Bands for AP, PR-AUC, max-F1 and F1 against prevalence η.

* :func:`prevalence_band` -- default: Bayesian count bootstrap with a Jeffreys pseudo-negative and
  a simultaneous credible band (:mod:`mlflow_imbalance.stats.posterior`), drawn at every η (no
  support rule; measured coverage 0.84-0.97, lowest where
  :func:`mlflow_imbalance.stats.coverage.undercovers` flags); ``construction="bootstrap"``: the
  count-bootstrap sup-t band over a log-η grid, claimed only where at least ``MIN_FP_SUPPORT`` false
  positives carry the estimate.
* :func:`prevalence_band_from_roc` -- PR-AUC, max-F1 and AP against η from a simultaneous ROC
  band's envelope curves: simultaneous over every η, with no false-positive support condition
  and no bootstrap of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.stats._batch import (
    _check_metric_args,
    _odds,
    _positive_columns,
    _pr_auc_exact_segments,
    metric_values,
)
from mlflow_imbalance.stats._checks import _check_confidence, _prevalence_grid, _seed_record
from mlflow_imbalance.stats.bands import (
    MIN_FP_SUPPORT,
    Band,
    _band_from_replicates,
    _fp_support_eta,
    _support_note,
)
from mlflow_imbalance.stats.bootstrap import (
    DEPOSIT_MIN_WORK,
    DEPOSIT_STEP,
    bayesian_statistics,
    bootstrap_statistic,
    metric_statistic,
)
from mlflow_imbalance.stats.posterior import band_from_draws

__all__ = [
    "PREVALENCE_BAND_CONSTRUCTIONS",
    "ROC_MAPPED_METRICS",
    "prevalence_band",
    "prevalence_band_from_roc",
]


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
    construction: str = "bayesian",
) -> Band:
    """Band for AP, PR-AUC, max-F1 or F1 (at ``threshold``) against prevalence.

    ``construction="bayesian"`` (the default; what the report draws): the Bayesian count
    bootstrap with a Jeffreys pseudo-negative above the top threshold
    (:mod:`mlflow_imbalance.stats.posterior`) and a simultaneous credible band from its draws
    (or pointwise equal-tailed intervals with ``simultaneous=False``), widened where needed to
    contain the estimate. Drawn at every eta of the report's range -- no support rule:
    ``extra["supported"]`` is all True -- at about the sampling spread's width. Measured
    simultaneous coverage (docs/statistics.md, "Coverage at a glance"; R = 300): 0.91-0.97 with
    200 or more positives; with 100 positives among 10^6 negatives and continuous scores 0.89-0.91
    over [1e-4, 0.5] and down to 0.84 (max-F1) over [1e-6, 0.5]. Where a stretch falls in a
    measured under-covering regime, :func:`mlflow_imbalance.stats.coverage.undercovers` flags
    it (the report draws it grey and dashed).

    ``construction="bootstrap"`` (the previous band, kept for comparison): count bootstrap
    (:func:`bootstrap_counts`); the simultaneous band is a bootstrap sup-t band over the log-eta
    grid on the variance-stabilising arcsine-sqrt scale ``g(x) = asin(sqrt x)``:
    ``[g(M) - c * s_lo, g(M) + c * s_hi]`` with one-sided scales ``s_lo``/``s_hi`` from the
    replicates' 15.9% / 84.1% quantiles (skew- and outlier-robust) and ``c`` the ``confidence``
    quantile of the largest standardised deviation ``max_eta (g(M*) - g(M)) / s`` over the grid,
    which makes the band simultaneous by construction.
    Its coverage is asymptotic (large counts); at prevalences where the metric rests on a
    handful of false positives the bootstrap underestimates variability and the estimate is
    biased upwards, so the band does NOT cover there (binormal study: ~0.3 at eta = 1e-4 with
    10^4 negatives); ``extra["fp_support"]`` / ``extra["supported"]`` (>= ``MIN_FP_SUPPORT``
    false positives) mark where it is claimed, and the method text says so (docs/statistics.md,
    "Coverage"). Use :func:`prevalence_band_from_roc` (PR-AUC, max-F1: no support rule),
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
        construction: ``"bayesian"`` (default, no support rule) or ``"bootstrap"``.

    Returns:
        :class:`Band` with ``grid_name="prevalence"``.
    """
    conf = _check_confidence(confidence)
    eta = _check_metric_args(metric, prevalences, threshold)
    n_cols = _positive_columns(counts).size
    if grid_step is None and metric in ("ap", "pr_auc") and n_cols * eta.size > DEPOSIT_MIN_WORK:
        grid_step = DEPOSIT_STEP
    if construction not in PREVALENCE_BAND_CONSTRUCTIONS:
        raise ValueError(
            f"construction must be one of {PREVALENCE_BAND_CONSTRUCTIONS}, got {construction!r}"
        )
    stat = metric_statistic(counts, metric, eta, threshold=threshold, grid_step=grid_step)
    est = metric_values(counts, metric, eta, threshold=threshold, grid_step=None)
    if construction == "bayesian":
        return _bayesian_band(counts, metric, eta, stat, est, int(n_boot), conf, seed, simultaneous)
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


def _bayesian_band(
    counts: RocCounts,
    metric: str,
    eta: np.ndarray,
    stat: Any,
    est: np.ndarray,
    n_boot: int,
    conf: float,
    seed: Any,
    simultaneous: bool,
) -> Band:
    """The default band of :func:`prevalence_band` (Bayesian count bootstrap, credible band)."""
    is_max = metric == "max_f1"
    draws = bayesian_statistics(
        counts, {"m": stat}, n_boot, seed, base_for=("m",) if is_max else ()
    )
    extra: dict[str, Any] = {"fp_support": _fp_support_eta(counts, eta)}
    step = stat.grid_step
    if step is not None:
        extra[f"{metric}_grid_step"] = step
        extra[f"{metric}_max_abs_error"] = stat.max_error
    return band_from_draws(
        est, draws["m"], eta, metric=metric, base=draws.get("m:base"), confidence=conf,
        simultaneous=simultaneous, seed=seed, extra=extra,
    )  # fmt: skip


#: Constructions of :func:`prevalence_band` (the first is the default).
PREVALENCE_BAND_CONSTRUCTIONS = ("bayesian", "bootstrap")

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
