"""Bands over whole curves: the sup-t machinery, ROC and PR bands, P³ and F1 bands.

* :class:`Band` -- a band around a curve or a metric-vs-prevalence series; it says what it is
  (method, confidence, simultaneous or pointwise, replicates, seed).
* :func:`band_from_replicates` -- bootstrap sup-t bands (simultaneous over the grid; Montiel
  Olea & Plagborg-Moller 2019) on the arcsine-sqrt scale, or percentile bands labelled
  pointwise, from an estimate and its count-bootstrap replicates.
* :func:`roc_band` -- TPR at each FPR of a grid, with a binomial scale floor.
* :func:`pr_band` is the ROC band mapped through eq. 8 (:func:`pr_band_from_roc`):
  simultaneous over every recall and every ``eta`` at once.
* :func:`p3_band` (one small-FP corrected Koopman LR interval; approximate, checked by exact
  enumeration) and :func:`f1_band` (Clopper-Pearson box, guaranteed) are simultaneous over
  every ``eta`` (see their docstrings).

``docs/statistics.md`` documents the choices and the coverage they have. Bands against η
(:func:`~mlflow_imbalance.stats.prevalence_bands.prevalence_band`,
:func:`~mlflow_imbalance.stats.prevalence_bands.prevalence_band_from_roc`) are in
:mod:`mlflow_imbalance.stats.prevalence_bands`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_prevalence
from mlflow_imbalance.stats._batch import _odds, _threshold_column
from mlflow_imbalance.stats._checks import (
    _check_confidence,
    _plain,
    _prevalence_grid,
    _require_unweighted,
    _seed_record,
)
from mlflow_imbalance.stats.bootstrap import (
    bayesian_statistics,
    bootstrap_statistic,
    pr_statistic,
    roc_statistic,
)
from mlflow_imbalance.stats.intervals import _precision_from_lr, precision_interval, rate_interval

__all__ = [
    "MIN_FP_SUPPORT",
    "PR_BAND_CONSTRUCTIONS",
    "Band",
    "band_from_replicates",
    "f1_band",
    "p3_band",
    "pr_band",
    "pr_band_from_roc",
    "roc_band",
    "roc_low_fpr_floor",
]

#: Constructions of :func:`pr_band`.
PR_BAND_CONSTRUCTIONS = ("roc", "sup-t")


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
    return low, high, {"critical_value": crit, "se": se, "s_lo": s_lo, "s_hi": s_hi}


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


def roc_low_fpr_floor(counts: RocCounts, fpr_grid: Any, n_boot: int, seed: Any) -> np.ndarray:
    """Floor for the ROC band's lower one-sided scale (arcsine scale) at each grid FPR.

    ``g(TPR_hat) - q16`` with ``q16`` the 15.9% quantile, on the arcsine-sqrt scale, of TPR at
    that FPR in the Bayesian count bootstrap with a Jeffreys pseudo-negative
    (:func:`mlflow_imbalance.stats.bootstrap.bayesian_statistics`), drawn with a seed derived
    from ``seed``. Pass it as ``min_scale=(floor, 0.0)`` to :func:`band_from_replicates` to
    build exactly :func:`roc_band` from replicates held elsewhere.
    """
    stat = roc_statistic(counts, fpr_grid)
    est = stat.estimate(counts)
    rng = np.random.default_rng(np.random.SeedSequence(_seed_entropy(seed)).spawn(1)[0])
    draws = bayesian_statistics(counts, {"roc": stat}, int(n_boot), rng)["roc"]
    g_est = np.arcsin(np.sqrt(np.clip(est, 0.0, 1.0)))
    q16 = np.quantile(np.arcsin(np.sqrt(np.clip(draws, 0.0, 1.0))), 0.158655, axis=0)
    return np.maximum(g_est - q16, 0.0)


def _seed_entropy(seed: Any) -> int:
    """An integer for a derived seed: the seed itself, or a draw from a given Generator."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(1 << 62))
    if seed is None:
        return int(np.random.SeedSequence().entropy % (1 << 62))
    return int(seed)


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

    Low-FPR floor: the count bootstrap cannot put a negative above the top-scoring one, so at
    the first grid points (FPR ~ 1/n_neg) its lower edge was too high (coverage at FPR = 1/N
    0.88-0.93 in the skewed/tied and P = 1,000 regimes; misses concentrated there). The lower
    one-sided scale is therefore also at least the spread of the Bayesian count bootstrap with
    a Jeffreys pseudo-negative (:mod:`mlflow_imbalance.stats.posterior`; its 15.9% quantile on
    the arcsine scale), which lets the curve start later. Measured in
    ``benchmarks/bench_band_coverage.py`` (docs/statistics.md).

    Tiny counts degrade honestly rather than fail: with one negative the default grid is the
    single FPR 1 (:func:`~mlflow_imbalance.stats.bootstrap.default_fpr_grid`), so the band claims
    nothing below it; with one positive the binomial floor spans most of [0, 1].

    Raises:
        InsufficientDataError: weighted counts (the count bootstrap needs integers).
    """
    conf = _check_confidence(confidence)
    stat = roc_statistic(counts, fpr_grid)
    grid = stat.grid
    est = stat.estimate(counts)
    reps = bootstrap_statistic(counts, stat, n_boot, seed)
    floor_lo, floor_hi = _rate_min_scales(est, counts.n_pos)
    if simultaneous:
        floor_lo = np.maximum(floor_lo, roc_low_fpr_floor(counts, grid, n_boot, seed))
    low, high, extra = _band_from_replicates(
        est, reps, conf, simultaneous, "arcsine", (floor_lo, floor_hi)
    )
    method = (
        "count bootstrap asymmetric sup-t over FPR grid (arcsine-sqrt scale, binomial scale "
        "floor, Jeffreys pseudo-negative floor at low FPR)"
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
    method: str = "koopman-cp",
) -> Band:
    """P^3 curve (precision against prevalence at one operating point) with its band.

    Simultaneous over *every* eta: precision is increasing in LR at every eta, so ``LR in [lo,
    hi]`` (one :func:`likelihood_ratio_interval`) holds iff the whole curve lies in the band.
    Coverage: the default ``"koopman-cp"`` is approximate, >= 0.94 by exact enumeration over
    TPR x E[FP] 0.05-500; plain ``"koopman"`` dips to 0.85 below one expected false positive;
    ``"box"`` guaranteed.
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
    Any class size works (one positive gives a wide box, the honest answer).

    Raises:
        InsufficientDataError: weighted counts (the Clopper-Pearson limits need integers).
    """
    conf = _check_confidence(confidence)
    _require_unweighted(counts, "the F1 box band (Clopper-Pearson limits)")
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
