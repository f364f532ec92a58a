"""Bayesian count bootstrap with a Jeffreys pseudo-negative, and credible bands from its draws.

Why. The ordinary count bootstrap resamples the negatives that were seen, so where a
prevalence-adjusted metric rests on a handful of false positives (AP, PR-AUC, max-F1 at
eta = 1e-4 with 10^4-10^5 negatives) no replicate can hold a false positive above the highest
scored negative: the band collapses onto an upward-biased estimate (measured simultaneous
coverage 0.43-0.92, pointwise 0.43-0.50 at eta = 1e-4; docs/statistics.md). Mapping a
simultaneous ROC band instead covers, but is 10-20 times wider than the sampling spread.

Construction (:func:`bayesian_counts`). Rubin's (1981) Bayesian bootstrap on the counts: each
class's per-threshold masses are drawn from a Dirichlet whose parameters are the observed
per-threshold counts (Gamma draws normalised), so a draw is a plausible *population* ROC
curve rather than a resample. For the negatives one more cell is added *above the highest
threshold* with Jeffreys' pseudo-count 1/2. Its mass is a false-positive rate that every
threshold carries: the marginal of the FPR at a threshold with ``F`` observed false positives
is then ``Beta(F + 1/2, N - F)``, the Jeffreys posterior's lower tail, which is what the
count bootstrap lacks when ``F`` is 0-3 (Brown, Cai & DasGupta 2001 for the Jeffreys interval
of a binomial rate). Symmetrically the positives get a pseudo-count 1/2 at the *lowest*
threshold: a positive scoring below every observed one, which the count bootstrap cannot
create either; with 100 positives over heavily tied scores the unseen lower tail made AP and
PR-AUC at eta ~ 0.1-0.5 too high (simultaneous coverage 0.87 without it, 0.92 with it in a
prototype of the benchmark, R = 150). Then the metric is evaluated on each draw with the
batched kernels, through the same code as the estimate, on rates scaled back to counts.

Band (:func:`credible_band`; max-F1: :func:`max_band`, and its pointwise intervals split
alpha 0.2 below / 0.6 above). Pointwise: equal-tailed quantiles of the draws at each grid
point. Simultaneous: the envelope of pointwise quantiles at the smallest level ``g >=
confidence`` for which at least ``confidence`` of the draws lie inside it at every grid point
(a simultaneous credible band, e.g. Besag et al. 1995). The band is not centred on the
estimate: where the estimate is biased (low eta) the posterior is centred nearer the truth,
which is how it covers at a width close to the sampling spread.

Measured (``benchmarks/bench_band_coverage.py``, binormal and skewed/tied score models, P/N =
200/20,000, 1,000/100,000, 100/1,000,000): see docs/statistics.md for the table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlflow_imbalance.stats._checks import _check_confidence, _seed_record
from mlflow_imbalance.stats.bands import Band
from mlflow_imbalance.stats.bootstrap import (
    PSEUDO_NEGATIVES,
    bayesian_counts,
    bayesian_statistics,
)

__all__ = [
    "MAX_LOWER_ALPHA",
    "MAX_UPPER_ALPHA",
    "band_from_draws",
    "credible_band",
    "max_band",
    "min_cost_interval",
    "recentre_max",
]

# the draws live in :mod:`mlflow_imbalance.stats.bootstrap` (beside the count bootstrap, so the
# ROC band can use them without an import circle); re-exported here for readers of this module
_DRAWS = (PSEUDO_NEGATIVES, bayesian_counts, bayesian_statistics)


def recentre_max(draws: np.ndarray, base: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """Draws of a maximum over thresholds (max-F1) moved by the selection bias ``b``.

    The largest F1 of a noisy curve exceeds that of the curve: the estimate is biased up by
    ``b``, and a draw, being a noisier curve around the estimate, by about ``b`` again (the
    bootstrap principle); the truth sits below the band otherwise (measured: 9-13% of the
    misses below, under 2% above). ``b`` is estimated by the median of the plain Bayesian
    bootstrap draws ``base`` minus the estimate, and subtracted once from the draws with the
    pseudo-negative, which centres them on the estimate where the pseudo-negative does not
    matter and keeps its low-prevalence shift where it does.
    """
    return draws - (np.median(base, axis=0) - estimate)


def min_cost_interval(
    draws: Any,
    base: Any,
    estimate: Any,
    exact: Any,
    confidence: float = 0.95,
    chosen: Any = None,
    cap: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise interval of the lowest expected cost per case, ``(low, high)`` per η.

    The lowest cost over thresholds is a minimum: its estimate is biased *down* (the mirror
    of max-F1), and equal-tailed quantiles of the draws shifted onto ``exact`` left the truth
    above the interval in up to 18.5 % of test sets (a scratch run on continuous binormal
    scores, 200 / 20,000 and 1,000 / 100,000, 200 test sets, B = 1000: coverage 0.81-0.94
    with C_FP = 1, C_FN = 100; 0.86-0.93 at η = 1e-2 and 0.1 with equal costs). So, as for
    max-F1: the draws are moved by the selection bias (:func:`recentre_max`: median of the
    plain draws ``base`` minus the ``estimate`` they were drawn around) and α is split
    unevenly, mirrored -- ``MAX_UPPER_ALPHA`` · α of the draws left below, ``MAX_LOWER_ALPHA``
    · α above. Where the minimum sits at the flag-nothing cap η·C_FN (η = 1e-4 with equal
    costs) that recentred interval misses (0.01-0.21) and the plain one covers, so the result
    is the union of the two.

    That still under-covered where the lowest cost is decided by the positives' lower tail
    (η = 0.1 with C_FN = 100 on continuous binormal scores: 0.916 at 200 / 20,000 and 0.902 at
    1,000 / 100,000, misses above; the estimate there is biased down by about one s.d., which
    the draws, holding no positive below the lowest observed one, see only a tenth of). Hence
    ``chosen``: the draws of the cost at the threshold the estimate chose, held fixed
    (:func:`~mlflow_imbalance.stats.bootstrap.chosen_cost_statistic`; no selection, and the
    true lowest cost is at most that threshold's true cost). The upper limit is at least their
    ``1 - MAX_LOWER_ALPHA · α`` quantile (0.99 at 95 %: the same share above as the recentred
    draws leave): 0.958-0.965 there, 1.14-1.19 times as wide, the other cells 1.02-1.07 times
    (scratch, R = 400-600, B = 1000; with the ``1 - α/2`` quantile 0.932-0.942). Clipped at 0
    and widened to contain ``exact``. Coverage as measured by ``bench_band_coverage.py
    --cost`` is in docs/statistics.md.

    ``cap``: the cost of the better trivial decision at each η, ``min(η C_FN, (1 - η) C_FP)``
    (flag nothing, flag everything). Both are among the decisions the minimum runs over and
    their costs are known exactly (no sampling error), so the true lowest cost never exceeds
    the cap: the upper limit is clipped there, which cannot lower coverage. Without it the
    shifts above (selection bias, the move onto ``exact``) printed upper limits above the
    cost of flagging nothing (503 against 500 per 10,000 cases, issue 37).

    Args:
        draws: Bayesian draws of the lowest cost ``(B, M)`` (with the pseudo-negative).
        base: the same draws without it (``"cost:base"`` of ``bayesian_statistics``).
        estimate: the lowest cost on the counts the draws come from ``(M,)``.
        exact: the exact lowest cost on the full counts ``(M,)``.
        confidence: nominal level.
        chosen: draws of the cost at the estimate's own threshold ``(B, M)`` (``None``: no
            such limit).
        cap: ``(M,)`` the cost of the better trivial decision per η, ``min(η C_FN,
            (1 - η) C_FP)``; the upper limit never exceeds it (``None``: no cap).
    """
    d = np.asarray(draws, dtype=float)
    est = np.asarray(estimate, dtype=float)
    ex = np.asarray(exact, dtype=float)
    alpha = 1.0 - confidence
    plain = np.quantile(d, [alpha / 2, 1 - alpha / 2], axis=0)
    moved = recentre_max(d, np.asarray(base, dtype=float), est)
    sel = np.quantile(moved, [MAX_UPPER_ALPHA * alpha, 1 - MAX_LOWER_ALPHA * alpha], axis=0)
    low = ex + np.minimum(plain[0], sel[0]) - est
    high = ex + np.maximum(plain[1], sel[1]) - est
    if chosen is not None:
        fixed = np.quantile(np.asarray(chosen, dtype=float), 1 - MAX_LOWER_ALPHA * alpha, axis=0)
        high = np.maximum(high, ex + fixed - est)
    if cap is not None:  # the trivial decisions' costs are known exactly: the minimum is below
        high = np.minimum(high, np.asarray(cap, dtype=float))
    return np.minimum(np.maximum(low, 0.0), ex), np.maximum(high, ex)


def credible_band(
    draws: np.ndarray, confidence: float, simultaneous: bool, target: float | None = None
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Equal-tailed pointwise or simultaneous credible band from draws ``(B, G)``.

    Simultaneous: the smallest pointwise level ``g`` in ``[confidence, 1]`` (bisection on the
    draws' ranks) whose quantile envelope holds at least ``target`` (default ``confidence``)
    of the draws at every grid point at once; ``extra["pointwise_level"]`` records ``g``.
    """
    reps = np.asarray(draws, dtype=float)
    goal = float(confidence if target is None else target)
    nb = reps.shape[0]
    # the bisection takes quantiles at ~10 levels: of the draws sorted once per grid point
    # (the same order statistics, so the same values; np.quantile is ~3x faster on them)
    ranked = np.sort(reps, axis=0) if simultaneous else reps

    def envelope(g: float) -> tuple[np.ndarray, np.ndarray]:
        a = (1.0 - g) / 2.0
        lo, hi = np.quantile(ranked, [a, 1.0 - a], axis=0)
        return lo, hi

    if not simultaneous:
        lo, hi = envelope(confidence)
        return lo, hi, {"pointwise_level": confidence}

    def inside(g: float) -> float:
        lo, hi = envelope(g)
        return float(np.mean(np.all((reps >= lo) & (reps <= hi), axis=1)))

    g_lo, g_hi = float(confidence), 1.0 - 0.5 / nb
    if inside(g_lo) >= goal:
        g = g_lo
    else:
        for _ in range(30):
            mid = 0.5 * (g_lo + g_hi)
            if inside(mid) >= goal:
                g_hi = mid
            else:
                g_lo = mid
            if g_hi - g_lo < 0.25 / nb:
                break
        g = g_hi
    lo, hi = envelope(g)
    return lo, hi, {"pointwise_level": g}


#: Shares of ``alpha = 1 - confidence`` that the max-F1 band (:func:`max_band`) and the
#: pointwise max-F1 intervals (headline, report table) leave to their draws below / above them
#: (0.2 and 0.6: one-sided levels 0.99 and 0.97 at 95%). The lower side gets the smaller share
#: because the draws under-state how far a maximum over thresholds overshoots the truth (their
#: bias is 16-150% of the estimator's). Pointwise, the equal split (0.5 / 0.5) covered 0.893 at
#: eta = 1e-4 (binormal 1,000 / 100,000) with 9% of misses below; this split covers
#: 0.937-0.973 in all 18 cells of ``benchmarks/bench_band_coverage.py`` (docs/statistics.md).
MAX_LOWER_ALPHA = 0.2
MAX_UPPER_ALPHA = 0.6


def max_band(draws: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, dict]:
    """Simultaneous band for a maximum over thresholds (max-F1) from re-centred draws ``(B, G)``.

    On the arcsine-sqrt scale ``g(x) = asin(sqrt x)`` (the draws' spread grows with the level
    at low eta; ``g`` evens it out): centre ``m`` = the draws' median, scale ``s`` = their
    s.d. per grid point; one-sided sup-t critical values ``c_lo`` / ``c_hi`` = the
    ``1 - MAX_LOWER_ALPHA * alpha`` / ``1 - MAX_UPPER_ALPHA * alpha`` quantiles of the draws'
    largest standardised shortfall ``max_eta (m - g) / s`` / excess ``max_eta (g - m) / s``.
    ``high = g^-1(m + c_hi s)``; ``low = min(g^-1(m - c_lo s), the lower edge of the credible
    band holding 1 - alpha/2 of the draws)``: the credible band's lower edge follows the long
    lower tail that the Jeffreys pseudo-negative gives the draws where no false positive was
    seen above the top scores. The credible band calibrated to hold ``1 - alpha/2`` of the
    draws (the earlier max-F1 band) is wider at eta = 1e-4 with P = 100: 1.63 against 1.42
    times the estimator's true spread at B = 300, 1.72 against 1.45 at B = 1000 (its upper
    edge follows the draws' long right tail, where the truth rarely is; docs/statistics.md).
    """
    reps = np.arcsin(np.sqrt(np.clip(draws, 0.0, 1.0)))
    alpha = 1.0 - confidence
    m = np.median(reps, axis=0)
    s = np.maximum(np.std(reps, axis=0, ddof=1), 1e-12)
    c_lo = float(np.quantile(np.max((m - reps) / s, axis=1), 1.0 - MAX_LOWER_ALPHA * alpha))
    c_hi = float(np.quantile(np.max((reps - m) / s, axis=1), 1.0 - MAX_UPPER_ALPHA * alpha))
    c_lo, c_hi = max(c_lo, 0.0), max(c_hi, 0.0)
    low_env, _, ext = credible_band(draws, confidence, True, 1.0 - alpha / 2.0)
    low = np.minimum(np.sin(np.clip(m - c_lo * s, 0.0, np.pi / 2)) ** 2, low_env)
    high = np.sin(np.clip(m + c_hi * s, 0.0, np.pi / 2)) ** 2
    ext["critical_values"] = (c_lo, c_hi)
    return low, high, ext


def band_from_draws(
    estimate: Any,
    draws: Any,
    grid: Any,
    *,
    metric: str,
    base: Any = None,
    confidence: float = 0.95,
    simultaneous: bool = True,
    seed: Any = None,
    extra: dict[str, Any] | None = None,
) -> Band:
    """The band of :func:`~mlflow_imbalance.stats.prevalence_bands.prevalence_band` from draws.

    For callers that already hold Bayesian count-bootstrap draws (:func:`bayesian_statistics`,
    e.g. one shared draw set per run in the report): the credible band (simultaneous over the
    grid, or pointwise), for ``metric="max_f1"`` on draws re-centred for the maximum's
    selection bias (:func:`recentre_max`, needs ``base`` = the ``"<name>:base"`` draws), the
    simultaneous band by :func:`max_band`; widened where needed to contain the estimate.
    ``extra["supported"]`` is all True: no support rule; the measured coverage, and where it
    falls short, is in docs/statistics.md ("Coverage at a glance").

    Args:
        estimate: the exact metric on the grid ``(G,)``.
        draws: the draws ``(B, G)`` (with the pseudo-negative).
        grid: the prevalences ``(G,)``.
        metric: ``"ap"``, ``"pr_auc"``, ``"max_f1"`` or ``"f1"``.
        base: for ``"max_f1"``: the same draws without the pseudo-negative.
        confidence: nominal level.
        simultaneous: simultaneous credible band (True) or pointwise equal-tailed intervals.
        seed: the seed of the draws (recorded).
        extra: merged into ``Band.extra``.

    Returns:
        :class:`~mlflow_imbalance.stats.bands.Band` with ``grid_name="prevalence"``.
    """
    conf = _check_confidence(confidence)
    est = np.asarray(estimate, dtype=float)
    reps = np.asarray(draws, dtype=float)
    if reps.ndim != 2 or reps.shape[1] != est.size:
        raise ValueError(f"draws must have shape (B, {est.size}), got {reps.shape}")
    is_max = metric == "max_f1"
    if is_max:
        if base is None:
            raise ValueError("metric 'max_f1' needs base= (the draws without the pseudo-negative)")
        reps = recentre_max(reps, np.asarray(base, dtype=float), est)
    if is_max and simultaneous:
        low, high, ext = max_band(reps, conf)
    elif is_max:
        # pointwise, the same split of alpha: 0.2 alpha of the draws below, 0.6 alpha above
        alpha = 1.0 - conf
        low, high = np.quantile(reps, [MAX_LOWER_ALPHA * alpha, 1.0 - MAX_UPPER_ALPHA * alpha], 0)
        ext = {"pointwise_level": 1.0 - (MAX_LOWER_ALPHA + MAX_UPPER_ALPHA) * alpha}
    else:
        low, high, ext = credible_band(reps, conf, simultaneous)
    low, high = np.minimum(low, est), np.maximum(high, est)
    # AP, PR-AUC and max-F1 lie in [0, 1]: clipping a bound to the parameter space never
    # lowers coverage (the re-centring of max-F1 can push a lower bound below 0 at small eta)
    low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    ext["se"] = np.std(np.arcsin(np.sqrt(np.clip(reps, 0.0, 1.0))), axis=0, ddof=1)
    ext["supported"] = np.ones(est.size, dtype=bool)
    ext["pseudo_negatives"] = PSEUDO_NEGATIVES
    ext.update(extra or {})
    kind = "simultaneous credible band" if simultaneous else "pointwise equal-tailed"
    if is_max:
        kind += ", re-centred for the selection bias of the maximum"
        if simultaneous:
            kind += " (arcsine-scale one-sided sup-t, lower edge floored by the credible band)"
        else:
            kind = (
                "pointwise, re-centred for the selection bias of the maximum, "
                f"{MAX_LOWER_ALPHA:g} alpha of the draws below and {MAX_UPPER_ALPHA:g} alpha above"
            )
    method = (
        f"Bayesian count bootstrap (Dirichlet, Jeffreys pseudo-negative {PSEUDO_NEGATIVES} above "
        f"the top threshold), {kind} over the prevalence grid"
    )
    return Band(
        np.asarray(grid, dtype=float), "prevalence", est, low, high, method, conf, simultaneous,
        metric, int(reps.shape[0]), _seed_record(seed), ext,
    )  # fmt: skip
