"""The deployment prevalence from unlabeled production scores, and a check of prior shift.

Under *prior shift* the class-conditional score distributions of production are those of the
test set and only the class balance differs, so the share of production cases scoring at or
above a threshold ``t`` is

    q(t) = eta * TPR(t) + (1 - eta) * FPR(t)                                   (1)

with TPR and FPR read off the run's ROC counts (Forman 2005, eq. 1; Saerens, Latinne &
Decaestecker 2002, eq. 2.5 in count form). This module inverts (1) for ``eta`` with three
estimators, gives an interval that carries both error sources (the production sample *and* the
finite test set), and tests whether (1) holds at all.

Estimators (``method=``):

* ``"mle"`` (the default, ``"auto"``) -- maximum likelihood of the production bin counts under
  the mixture ``eta * p_pos + (1 - eta) * p_neg`` (the count form of the EM of Saerens et al.
  2002: their EM iterates to this maximum; the log-likelihood is concave in ``eta`` so it is
  maximised directly, by a bracketed Newton search on its derivative). Bins are the test
  set's own thresholds, merged from the top until each holds ``min_bin_count`` test positives
  and negatives (a bin with no test negatives would force every production case falling in it
  to be a positive: with 200 test positives and a continuous score that biased ``eta`` upward
  by orders of magnitude at ``eta = 1e-4``).
* ``"acc"`` -- adjusted classify-and-count (Forman 2005) ``(q(t) - FPR(t)) / (TPR(t) - FPR(t))``
  at Forman's "T50" threshold (the highest threshold with TPR >= 0.5). T50 rather than "max"
  or "X": at small ``eta`` the error of ``FPR(t)`` (from the test negatives) dominates, and
  T50 sits at a lower FPR than the "max"/"X" threshold (binormal ``mu = 2``: FPR 0.023 against
  0.16, standard error of the estimate about 0.58x), as Forman (2008) recommends under high
  imbalance.
* ``"median_sweep"`` -- Forman's (2008) median sweep: the median of the adjusted counts at every
  test threshold with ``TPR - FPR > 1/4``.

The interval is a bootstrap over both sources: each replicate resamples the test positives'
and negatives' bin counts multinomially (exactly resampling examples within each class, as
:func:`mlflow_imbalance.stats.bootstrap.bootstrap_counts`) and the production bin counts
multinomially, and refits. By default (``interval="auto"``) it is a normal interval on the logit
of ``eta`` (standard error ``sd(eta*) / (eta (1 - eta))`` from the replicates, centre shifted by
the replicates' median bias on that scale) where that standard error is at most 0.1, else the
percentile interval shifted by the bootstrap's mean bias, and the plain percentile interval when
at least ``(1 - confidence) / 2`` of the replicates sit at 0 or 1 (at 0 a one-sided upper
limit). The shifted percentile interval alone covered 91-95 % at ``eta`` = 0.1 and 0.3 (24 cells,
R = 400), missing mostly above its upper limit; the logit interval, wider upward, 93-96 % there
(92.8 % in one cell). The plain percentile interval covered 85-88 % at ``eta = 0.3``, the
reflected ("basic") one 45-62 % at ``eta = 1e-4``. Replicates with one source
resampled at a time split the variance into its production, test-positive and test-negative
parts (``limited_by_test``, ``more_negatives_needed``). Measured coverage:
``docs/statistics.md``, "Estimating the deployment prevalence".

The prior-shift check (:mod:`mlflow_imbalance.stats._prevalence_check`) is a parametric
bootstrap goodness-of-fit test of the production counts against the fitted mixture: a Pearson
statistic over the fit's bins and a cumulative (Cramer-von Mises-type) statistic over finer
bins, each variance including the test set's sampling error, combined by their smaller
p-value; the null distribution is simulated by drawing a test set and a production batch from
the fitted mixture, refitting and recomputing, so the test set's own noise is in the null.

References: G. Forman, "Counting positives accurately despite inaccurate classification",
ECML 2005; G. Forman, "Quantifying counts and costs via classification", DMKD 17 (2008);
M. Saerens, P. Latinne, C. Decaestecker, "Adjusting the outputs of a classifier to new a priori
probabilities", Neural Computation 14 (2002); Brabec et al. 2020, eq. 8 (why ``eta`` matters:
precision at ``eta`` is ``eta TPR / (eta TPR + (1 - eta) FPR)``).
"""

from __future__ import annotations

import logging
import math
import statistics
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.production import ScoreCounts
from mlflow_imbalance.stats._checks import (
    InsufficientDataError,
    _check_confidence,
    _plain,
    _require_unweighted,
)
from mlflow_imbalance.stats._prevalence_check import (
    _Bins,
    _fit_stat,
    _make_bins,
    _resample,
    check_p_value,
)
from mlflow_imbalance.stats.bootstrap import _rng

logger = logging.getLogger(__name__)

__all__ = [
    "INTERVALS",
    "PREVALENCE_METHODS",
    "PRIOR_SHIFT_LEVEL",
    "Misfit",
    "PrevalenceEstimate",
    "estimate_prevalence",
]

#: The estimators of :func:`estimate_prevalence` (``"auto"`` means ``"mle"``).
PREVALENCE_METHODS = ("mle", "acc", "median_sweep")
#: The interval constructions of :func:`estimate_prevalence` (``interval=``).
INTERVALS = ("auto", "logit", "shifted", "percentile", "basic")
#: The level of the prior-shift check: it fails below this p-value. The one level of every
#: surface (``estimate_prevalence``'s default and text, the report's badge, the card, the batch
#: JSON): each reads :attr:`PrevalenceEstimate.check_passed`, none compares p itself. Chosen
#: by measurement (``bench_prevalence.py --drift --reps 1000``; docs/statistics.md, "The
#: prior-shift check's level"): false alarms under prior shift 0.90 / 2.0 / 5.1 / 10.1 % of
#: 4,000 batches at 0.01 / 0.02 / 0.05 / 0.1; batches silently wrong under drift (interval
#: misses, check passes) 6.3 / 5.2 / 3.6 / 2.8 % of 16,000 (worst cell 15.7 / 13.9 / 10.4 /
#: 8.4 %). 0.05 removes 43 % of the silent errors of 0.01; beyond it each further point of
#: false alarms buys a sixth of a point fewer.
PRIOR_SHIFT_LEVEL = 0.05
#: Most score bins of the maximum-likelihood fit (the minimum bin count grows beyond).
MAX_BINS = 512
#: Share of production scores outside the test range above which the inputs are refused.
_REFUSE_OUTSIDE = 0.5


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Misfit:
    """Where on the score axis production fits the prior-shift mixture worst.

    Attributes:
        low_score: lower edge of the worst bin (scores ``>= low_score``); None for the lowest
            bin (everything below ``high_score``).
        high_score: upper edge (scores ``< high_score``); None for the top bin.
        observed_share: production share at or above ``low_score`` (below ``high_score`` for
            the lowest bin).
        expected_share: the same share under the fitted mixture.
        z: standardised residual of the bin's count (test-set noise included in its variance).
    """

    low_score: float | None
    high_score: float | None
    observed_share: float
    expected_share: float
    z: float

    @property
    def text(self) -> str:
        """``"scores 0.8–0.9 (observed 2.1 % ≥ 0.8, expected 0.9 %)"``."""
        lo, hi = self.low_score, self.high_score
        obs, exp = _pct(self.observed_share), _pct(self.expected_share)
        if lo is None:
            return f"scores below {hi:.3g} (observed {obs} < {hi:.3g}, expected {exp})"
        where = f"scores {lo:.3g}–{hi:.3g}" if hi is not None else f"scores from {lo:.3g} up"
        return f"{where} (observed {obs} ≥ {lo:.3g}, expected {exp})"


@dataclass(frozen=True)
class PrevalenceEstimate:
    """The deployment prevalence estimated from production scores, with its check.

    Attributes:
        estimate: the estimate of ``eta`` in [0, 1].
        low, high: the bootstrap interval over the production sample and the test set (both
            resampled), at ``confidence`` (construction: ``interval=`` of
            :func:`estimate_prevalence`).
        method: ``"mle"``, ``"acc"`` or ``"median_sweep"``.
        prior_shift_p: p-value of the prior-shift check (parametric bootstrap goodness of fit;
            NaN when ``n_check=0``). Small means production differs from the test data in more
            than the class balance, and no estimate (nor any metric at it) can be trusted.
        confidence: the interval's level.
        at_zero: the estimate is pinned at 0 (no positives detectable at this resolution).
        limited_by_test: the test set's sampling error is more than half of the variance.
        more_negatives_needed: extra test negatives that would halve the interval's width
            (None when negatives alone cannot: the production sample or the positives limit).
        test_share: share of the estimate's variance due to the test set (positives and
            negatives).
        misfit: where the mixture fits production worst (None without a check).
        out_of_range: a note when production scores fall outside the test scores' range.
        n_production: production cases used.
        n_bins: bins of the maximum-likelihood fit and the check.
        check_alpha: level below which the check fails (:data:`PRIOR_SHIFT_LEVEL` unless the
            caller chose another).
        estimates: the point estimate of every method (for comparison).
        variance_shares: the estimate's bootstrap variance split into ``"production"``,
            ``"test_positives"`` and ``"test_negatives"`` (each source resampled alone; shares
            of their sum).
        audit: set by :func:`mlflow_imbalance.stats.robust.with_audit_advice` (given the run's
            costs) where the interval is too wide to decide within 10 % of the least expected
            cost or the check fails: the labels drawn by :func:`~mlflow_imbalance.plan_audit`
            that would settle the run's decision
            (:class:`~mlflow_imbalance.stats.robust.SettlingBudget`; its sentence then ends
            :attr:`text`); None otherwise.
        text: one plain sentence for a reviewer (it opens with :attr:`brief`).
    """

    estimate: float
    low: float
    high: float
    method: str
    prior_shift_p: float
    confidence: float
    at_zero: bool
    limited_by_test: bool
    more_negatives_needed: int | None
    test_share: float
    misfit: Misfit | None
    out_of_range: str | None
    n_production: int
    n_bins: int
    check_alpha: float
    estimates: dict[str, float] = field(default_factory=dict)
    variance_shares: dict[str, float] = field(default_factory=dict)
    audit: Any = None
    text: str = ""

    @property
    def brief(self) -> str:
        """``0.00139 [0, 0.00289]``: the estimate and its interval as the report writes them."""
        return f"{_fmt(self.estimate)} [{_fmt(self.low)}, {_fmt(self.high)}]"

    @property
    def check_text(self) -> str:
        """``"passes (p = 0.017)"``, ``"FAILS (p = 0.0049)"`` or ``"not run"``: for a table cell.

        Pass or fail by :attr:`check_passed`; the p-value with as many digits as keep it on its
        side of :attr:`check_alpha` (0.0496 is not written "0.05" beside "FAILS" at 0.05).
        """
        if math.isnan(self.prior_shift_p):
            return "not run"
        verdict = "passes" if self.check_passed else "FAILS"
        return f"{verdict} ({_fmt_p(self.prior_shift_p, self.check_alpha)})"

    @property
    def check_passed(self) -> bool:
        """True unless the prior-shift check failed: ``not prior_shift_p < check_alpha``.

        The one pass/fail rule of the check: the estimate's text, the report's badge and
        verdict, the run card and the batch JSON (``check_passed``) all read it, none compares
        the p-value itself. A NaN p-value (``n_check=0``: no check was run) passes.
        """
        return not (self.prior_shift_p < self.check_alpha)


# ---------------------------------------------------------------------------- formatting
def _fmt(x: float) -> str:
    """A prevalence as the report, the card and the CLI write it.

    ``0``, ``0.0736``, ``3.21e-4``: :func:`mlflow_imbalance._numbers.fmt_eta`.
    """
    from mlflow_imbalance._numbers import fmt_eta

    return "0" if x == 0 else fmt_eta(x)


def _pct(x: float) -> str:
    return f"{100 * x:.2g} %" if x < 0.1 else f"{100 * x:.1f} %"


def _fmt_p(p: float, level: float = PRIOR_SHIFT_LEVEL) -> str:
    """``p = 0.017`` with as few digits (two or more) as keep ``p`` on its side of ``level``.

    A p-value of 0.0496 at level 0.05 reads ``p = 0.0496``, not ``p = 0.05`` beside "fails"
    (nor is 0.0504 written as the level itself).
    """
    if p < 0.001 and level > 0.001:
        return "p < 0.001"
    for digits in range(2, 17):
        shown = f"{p:.{digits}g}"
        v = float(shown)
        if (v < level) == (p < level) and (v != level or p == level):
            return f"p = {shown}"
    return f"p = {p!r}"


def _mle_cuts(counts: RocCounts, min_bin_count: int | None) -> np.ndarray:
    """Greedy bins from the top: each closes once it holds ``c`` positives and ``c`` negatives.

    By default ``c = max(10, ceil(sqrt(min(n_pos, n_neg))))`` (at most half the smaller class),
    so about ``sqrt(n_pos)`` bins: the estimated bin probabilities' noise biases the plug-in
    likelihood towards 0.5 (measured at 1,000 / 100,000 test examples, eta = 0.3: -2.5 % with
    10 positives a bin, -0.7 % with 40), while too few bins lose the score's resolution.

    The remainder below the last cut must hold ``c`` of each too, else it joins the bin above.
    One ``searchsorted`` per bin (at most :data:`MAX_BINS` bins), not per threshold.
    """
    tp, fp = counts.tp, counts.fp
    n_pos, n_neg, k = int(counts.n_pos), int(counts.n_neg), tp.size
    smaller = min(n_pos, n_neg)
    if min_bin_count is None:
        c = max(1, min(max(10, math.isqrt(smaller - 1) + 1), smaller // 2))
    else:
        c = min(int(min_bin_count), max(1, smaller // 2))
    c = max(c, math.ceil(smaller / MAX_BINS))
    cuts: list[int] = []
    done_pos = done_neg = 0
    while True:
        i = max(
            int(np.searchsorted(tp, done_pos + c, side="left")),
            int(np.searchsorted(fp, done_neg + c, side="left")),
        )
        if i >= k - 1 or n_pos - tp[i] < c or n_neg - fp[i] < c:
            break
        cuts.append(i)
        done_pos, done_neg = int(tp[i]), int(fp[i])
    return np.asarray(cuts, dtype=np.int64)


def _acc_cut(counts: RocCounts) -> np.ndarray:
    """Forman's T50: the highest threshold with TPR >= 0.5.

    If that is the lowest threshold (where TPR = FPR = 1), the one with the largest TPR - FPR.
    """
    tpr, fpr = counts.tpr, counts.fpr
    i = int(np.searchsorted(tpr, 0.5, side="left"))
    if i >= tpr.size - 1:
        i = int(np.argmax((tpr - fpr)[:-1])) if tpr.size > 1 else 0
    return np.asarray([i], dtype=np.int64)


def _sweep_cuts(counts: RocCounts) -> np.ndarray:
    """Forman's (2008) median sweep: every threshold with TPR - FPR > 1/4 (else > 0)."""
    gap = (counts.tpr - counts.fpr)[:-1]
    cuts = np.flatnonzero(gap > 0.25)
    return cuts if cuts.size else np.flatnonzero(gap > 0)


# ---------------------------------------------------------------------------- bins and estimators
def _mle(a: np.ndarray, b: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Maximum of ``sum_k m_k log(eta a_k + (1 - eta) b_k)`` over ``eta`` in [0, 1], per row.

    ``a``, ``b``: class bin probabilities, ``m``: production bin counts, all ``(R, K)``. The
    log-likelihood is concave, so its derivative ``g(eta) = sum m d / (b + eta d)`` (``d = a -
    b``) decreases: 0 when ``g(0) <= 0``, 1 when ``g(1) >= 0``, else the root of ``g``, found by
    Newton steps kept inside a shrinking bracket (bisection when a step leaves it).
    """
    d = a - b
    both_zero = (a == 0) & (b == 0)
    w = np.where(both_zero, 0.0, m * d)  # bins no class reaches carry no information
    b_safe = np.where(both_zero, 1.0, b)
    a_safe = np.where(both_zero, 1.0, a)
    with np.errstate(divide="ignore", invalid="ignore"):
        g0 = np.sum(np.where(w == 0, 0.0, w / b_safe), axis=1)
        g1 = np.sum(np.where(w == 0, 0.0, w / a_safe), axis=1)
    out = np.where(g0 <= 0, 0.0, 1.0)
    todo = np.flatnonzero((g0 > 0) & (g1 < 0))
    if todo.size == 0:
        return out
    d, w, b_s = d[todo], w[todo], b_safe[todo]
    lo = np.zeros(todo.size)
    hi = np.ones(todo.size)
    x = np.full(todo.size, 0.5)
    for _ in range(200):
        mix = b_s + x[:, None] * d
        with np.errstate(divide="ignore", invalid="ignore"):
            r = w / mix
            g = np.sum(np.where(w == 0, 0.0, r), axis=1)
            h = -np.sum(np.where(w == 0, 0.0, r * d / mix), axis=1)
        lo = np.where(g > 0, x, lo)
        hi = np.where(g > 0, hi, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - g / h
        bad = ~np.isfinite(step) | (step <= lo) | (step >= hi)
        new = np.where(bad, 0.5 * (lo + hi), step)
        # bisect in log scale when the root lies many decades below the bracket's top
        small = bad & (lo == 0) & (hi < 0.25)
        new = np.where(small, hi * 0.125, new)
        conv = np.abs(new - x) <= 1e-13 * np.maximum(new, 1e-300) + 1e-300
        x = new
        if np.all(conv | (hi - lo <= 1e-15 * hi)):
            break
    out[todo] = x
    return out


def _adjusted_counts(
    pos: np.ndarray, neg: np.ndarray, prod: np.ndarray, n_pos: int, n_neg: int, n: int
) -> np.ndarray:
    """Forman's adjusted count at every cut, ``(R, J)``; NaN where TPR <= FPR."""
    j = pos.shape[1] - 1
    tpr = np.cumsum(pos[:, :j], axis=1) / n_pos
    fpr = np.cumsum(neg[:, :j], axis=1) / n_neg
    q = np.cumsum(prod[:, :j], axis=1) / n
    den = tpr - fpr
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (q - fpr) / den, np.nan)


def _estimate(
    method: str,
    pos: np.ndarray,
    neg: np.ndarray,
    prod: np.ndarray,
    n_pos: int,
    n_neg: int,
    n: int,
) -> np.ndarray:
    """The estimator ``method`` on per-bin counts ``(R, K)`` (rows are replicates)."""
    if method == "mle":
        return _mle(pos / n_pos, neg / n_neg, prod.astype(np.float64))
    acc = _adjusted_counts(pos, neg, prod, n_pos, n_neg, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows -> NaN
        est = np.nanmedian(acc, axis=1)
    return np.clip(est, 0.0, 1.0)


def _misfit(bins: _Bins, z: np.ndarray, expected: np.ndarray, n: int) -> Misfit:
    k = int(np.argmax(np.abs(z)))
    hi = None if k == 0 else float(bins.edges[k - 1])
    if k == bins.k - 1:
        return Misfit(None, hi, float(bins.prod[k] / n), float(expected[k] / n), float(z[k]))
    return Misfit(
        float(bins.edges[k]),
        hi,
        float(bins.prod[: k + 1].sum() / n),
        float(expected[: k + 1].sum() / n),
        float(z[k]),
    )


# ---------------------------------------------------------------------------- inputs
def _production(production: Any) -> ScoreCounts:
    if isinstance(production, ScoreCounts):
        return production
    if isinstance(production, RocCounts):
        raise TypeError(
            "production must be unlabeled scores or a ScoreCounts, got RocCounts (labeled counts)"
        )
    try:
        return ScoreCounts.from_scores(production)
    except ValueError as err:
        raise ValueError(str(err).replace("scores", "production")) from None


def _range_note(counts: RocCounts, prod: ScoreCounts) -> str | None:
    """Refuse production on another scale (ValueError); a note when a few fall outside."""
    t_lo, t_hi = float(counts.thresholds[-1]), float(counts.thresholds[0])
    p_lo, p_hi = prod.min_score, prod.max_score
    below = prod.n - int(prod.count_at_or_above(t_lo))
    above = int(prod.count_at_or_above(np.nextafter(t_hi, np.inf)))
    share = (below + above) / prod.n
    ranges = (
        f"production scores span [{p_lo:.6g}, {p_hi:.6g}], the test scores [{t_lo:.6g}, {t_hi:.6g}]"
    )
    if p_hi < t_lo or p_lo > t_hi or share > _REFUSE_OUTSIDE:
        raise ValueError(
            f"production does not look like scores of the same model on the same scale: "
            f"{ranges}, and {share:.1%} of production lies outside the test range "
            "(probabilities against logits? another model version?)"
        )
    # Under prior shift a new score exceeds all n of a class with probability 1/(n + 1).
    expect = 2.0 / (counts.n_pos + 1) + 2.0 / (counts.n_neg + 1)
    if below + above >= 10 and share > 5 * expect:
        note = (
            f"{ranges}: {below + above:,} production cases ({share:.2%}) lie outside the test "
            f"range, more than prior shift explains (about {expect:.2%})"
        )
        warnings.warn(note, UserWarning, stacklevel=3)
        logger.warning(note)
        return note
    return None


# ---------------------------------------------------------------------------- the estimate
def estimate_prevalence(
    counts: RocCounts,
    production: Any,
    *,
    confidence: float = 0.95,
    method: str = "auto",
    n_boot: int = 1000,
    n_check: int = 1000,
    check_alpha: float = PRIOR_SHIFT_LEVEL,
    min_bin_count: int | None = None,
    interval: str = "auto",
    seed: Any = 0,
) -> PrevalenceEstimate:
    """Estimate the deployment prevalence from unlabeled production scores (prior shift).

    Inverts ``q(t) = eta TPR(t) + (1 - eta) FPR(t)`` (Forman 2005; Saerens et al. 2002) with
    the run's ROC counts, gives a bootstrap interval over the production sample
    *and* the test set (at ``eta = 1e-4`` the test negatives usually dominate), and checks the
    prior-shift assumption with a parametric bootstrap goodness-of-fit test. Measured coverage
    and the check's level and power: ``docs/statistics.md``.

    Args:
        counts: the run's (unweighted) ROC counts on a labeled test set.
        production: unlabeled production scores (1-d, finite) or their :class:`ScoreCounts`.
        confidence: the interval's level.
        method: ``"auto"`` (= ``"mle"``), ``"mle"`` (maximum likelihood over score bins),
            ``"acc"`` (adjusted count at Forman's T50 threshold) or ``"median_sweep"``.
        n_boot: bootstrap replicates of the interval.
        n_check: parametric-bootstrap replicates of the check (0 skips it: p is NaN).
        check_alpha: the check fails below this p-value; default :data:`PRIOR_SHIFT_LEVEL`
            (chosen by measurement: docs/statistics.md, "The prior-shift check's level").
        min_bin_count: test positives and negatives each bin of the maximum-likelihood fit
            (and the check) must hold; default ``max(10, ceil(sqrt(min(n_pos, n_neg))))``.
            ``1`` bins by every test threshold holding both classes (the per-score
            densities of Saerens et al. when every distinct test score holds both).
        interval: ``"auto"`` (default): ``"logit"`` where the logit-scale standard error
            ``sd(eta*) / (eta (1 - eta))`` is at most 0.1, else ``"shifted"``; ``"logit"``: a
            normal interval on ``logit(eta)`` with the bootstrap's standard error, centred at
            ``logit(eta)`` minus the replicates' median bias; ``"shifted"``: the percentile
            interval minus the replicates' mean bias (the default before issue 33's coverage
            work); ``"percentile"``; ``"basic"`` (reflected about the estimate, clipped to
            [0, 1]). All but ``"basic"`` fall back to ``"percentile"`` when at least
            ``(1 - confidence) / 2`` of the replicates sit at 0 or 1 (at an estimate of 0: a
            one-sided upper limit). Measured (``docs/statistics.md``, ``bench_prevalence.py
            --full --reps 1000``, 60 cells, eta 1e-4 to 0.3): ``"auto"`` covers 93.1-97.6 %,
            above 97 % only where the estimate is 0 in half the batches; ``"shifted"``
            covered 91.0-94.5 % at eta = 0.1 and 0.3 (R = 400).
        seed: int, Generator or None; the default 0 makes the result reproducible.

    Returns:
        A :class:`PrevalenceEstimate`.

    Raises:
        ValueError: bad ``production`` (empty, NaN, 2-d, or on another scale than the test
            scores: both ranges named), ``method``, ``confidence`` or counts.
        InsufficientDataError: weighted counts, or a ROC curve not above the diagonal.
    """
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    _require_unweighted(counts, "estimate_prevalence (bootstrapping the test set)")
    conf = _check_confidence(confidence)
    name = "mle" if method == "auto" else method
    if name not in PREVALENCE_METHODS:
        raise ValueError(
            f"method must be 'auto' or one of {', '.join(PREVALENCE_METHODS)}, got {method!r}"
        )
    for arg, v, least in (("n_boot", n_boot, 1), ("n_check", n_check, 0)):
        if isinstance(v, bool) or int(v) != v or v < least:
            raise ValueError(f"{arg} must be an integer >= {least}, got {_plain(v)!r}")
    if not (0.0 < float(check_alpha) < 1.0):
        raise ValueError(f"check_alpha must lie strictly between 0 and 1, got {check_alpha!r}")
    if interval not in INTERVALS:
        raise ValueError(
            f"interval must be one of {', '.join(map(repr, INTERVALS))}, got {interval!r}"
        )
    if min_bin_count is not None and (
        isinstance(min_bin_count, bool) or int(min_bin_count) != min_bin_count or min_bin_count < 1
    ):
        raise ValueError(f"min_bin_count must be a positive integer, got {min_bin_count!r}")
    prod = _production(production)
    note = _range_note(counts, prod)
    if counts.thresholds.size < 2 or np.all(counts.tpr[:-1] <= counts.fpr[:-1]):
        raise InsufficientDataError(
            "the run's ROC curve is nowhere above the diagonal: its scores carry no information "
            "about the class, so the production prevalence cannot be estimated from them"
        )
    rng = _rng(seed)
    n_pos, n_neg, n = int(counts.n_pos), int(counts.n_neg), prod.n

    mle_bins = _make_bins(counts, prod, _mle_cuts(counts, min_bin_count))
    if mle_bins.k < 2:
        raise InsufficientDataError(
            f"{n_pos} positives and {n_neg} negatives do not split the score axis into two "
            "bins: too few test examples to estimate a prevalence"
        )
    method_bins = {
        "mle": mle_bins,
        "acc": _make_bins(counts, prod, _acc_cut(counts)),
        "median_sweep": _make_bins(counts, prod, _sweep_cuts(counts)),
    }

    def point(meth: str) -> float:
        bb = method_bins[meth]
        return float(_estimate(meth, bb.pos[None], bb.neg[None], bb.prod[None], n_pos, n_neg, n)[0])

    estimates = {m: point(m) for m in PREVALENCE_METHODS}
    est = estimates[name]
    bins = method_bins[name]

    # ---- bootstrap over both sources, and each source alone (variance split)
    b = int(n_boot)
    pos_r = _resample(rng, bins.pos, n_pos, b)
    neg_r = _resample(rng, bins.neg, n_neg, b)
    prod_r = _resample(rng, bins.prod, n, b)
    rep = np.broadcast_to

    def fit(p: np.ndarray, q: np.ndarray, m: np.ndarray) -> np.ndarray:
        shape = (b, bins.k)
        return _estimate(name, rep(p, shape), rep(q, shape), rep(m, shape), n_pos, n_neg, n)

    joint = fit(pos_r, neg_r, prod_r)
    v_prod = float(np.nanvar(fit(bins.pos, bins.neg, prod_r)))
    v_pos = float(np.nanvar(fit(pos_r, bins.neg, bins.prod)))
    v_neg = float(np.nanvar(fit(bins.pos, neg_r, bins.prod)))
    alpha = 1.0 - conf
    q_lo, q_hi = (float(v) for v in np.nanquantile(joint, [alpha / 2, 1 - alpha / 2]))
    pinned = float(np.mean((joint <= 0.0) | (joint >= 1.0)))
    low, high = _interval(interval, joint, est, q_lo, q_hi, pinned, conf)
    low, high = min(low, est), max(high, est)
    v_sum = v_prod + v_pos + v_neg
    test_share = (v_pos + v_neg) / v_sum if v_sum > 0 else 0.0
    more_neg = None
    target = v_sum / 4 - v_prod - v_pos
    if v_neg > 0 and target > 0:
        more_neg = max(0, math.ceil(n_neg * v_neg / target - n_neg))

    # ---- the prior-shift check: the bins' Pearson statistic and a cumulative one on finer
    # bins, combined by their smaller p-value, all calibrated by one parametric bootstrap
    p_value, misfit = float("nan"), None
    eta_fit = estimates["mle"]
    if n_check:
        eta0 = np.asarray([eta_fit])
        stat0, z0, e0 = _fit_stat(
            mle_bins.pos[None], mle_bins.neg[None], mle_bins.prod[None], eta0, n_pos, n_neg, n
        )
        misfit = _misfit(mle_bins, z0[0], e0[0], n)
        p_value = check_p_value(
            counts, prod, mle_bins, eta_fit, float(stat0[0]), int(n_check), rng, _mle
        )

    at_zero = est == 0.0
    result = PrevalenceEstimate(
        estimate=est,
        low=low,
        high=high,
        method=name,
        prior_shift_p=p_value,
        confidence=conf,
        at_zero=bool(at_zero),
        limited_by_test=bool(test_share > 0.5),
        more_negatives_needed=more_neg,
        test_share=float(test_share),
        misfit=misfit,
        out_of_range=note,
        n_production=n,
        n_bins=mle_bins.k,
        check_alpha=float(check_alpha),
        estimates=estimates,
        variance_shares={
            k: (v / v_sum if v_sum > 0 else 0.0)
            for k, v in (
                ("production", v_prod),
                ("test_positives", v_pos),
                ("test_negatives", v_neg),
            )
        },
    )
    object.__setattr__(result, "text", _sentence(result, bins, n_pos, n_neg))
    logger.info(result.text)
    return result


#: Largest logit-scale standard error ``sd(eta*) / (eta (1 - eta))`` at which ``"auto"`` uses
#: the logit interval (beyond, the logit is far from linear over the interval: shifted percentile).
_LOGIT_MAX_SE = 0.1


def _interval(
    how: str,
    joint: np.ndarray,
    est: float,
    q_lo: float,
    q_hi: float,
    pinned: float,
    conf: float,
) -> tuple[float, float]:
    """The interval ``how`` from the joint bootstrap replicates ``joint`` of ``est``.

    ``"percentile"``: ``(q_lo, q_hi)``. ``"basic"``: reflected about ``est``. ``"shifted"``:
    the percentile interval minus the bootstrap's bias estimate ``mean(joint) - est``.
    ``"logit"``: a normal interval on the logit of ``eta``, centred at ``logit(est)`` minus the
    bootstrap's median bias on that scale, with standard error ``sd(joint) / (est (1 - est))``.
    ``"auto"``: ``"logit"`` where that standard error is at most :data:`_LOGIT_MAX_SE`, else
    ``"shifted"``. Every construction but ``"basic"`` falls back to ``"percentile"`` when at
    least ``(1 - conf) / 2`` of the replicates sit at 0 or 1 (or ``est`` does): the clipped
    replicates make any bias or scale estimate meaningless there, and the percentile interval
    at 0 is an honest one-sided upper limit.
    """
    alpha = 1.0 - conf
    if how == "basic":  # reflected about the estimate (corrects a bootstrap-visible bias)
        return max(0.0, 2 * est - q_hi), min(1.0, 2 * est - q_lo)
    if how == "percentile" or pinned >= alpha / 2 or not 0.0 < est < 1.0:
        return q_lo, q_hi
    sd = float(np.nanstd(joint))
    se_logit = sd / (est * (1.0 - est))
    if how == "logit" or (how == "auto" and se_logit <= _LOGIT_MAX_SE):
        med = float(np.nanmedian(joint))
        if 0.0 < med < 1.0 and math.isfinite(se_logit):
            z = statistics.NormalDist().inv_cdf(1.0 - alpha / 2)
            centre = 2 * _logit(est) - _logit(med)  # logit(est) minus the median bias
            return _expit(centre - z * se_logit), _expit(centre + z * se_logit)
        return q_lo, q_hi
    # "shifted": the plug-in bin probabilities' noise biases eta (towards 0.5)
    shift = float(np.nanmean(joint)) - est
    return max(0.0, q_lo - shift), min(1.0, q_hi - shift)


def _logit(x: float) -> float:
    return math.log(x) - math.log1p(-x)


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


_DESCRIBE = {
    "mle": "maximum likelihood over {k} score bins",
    "acc": "adjusted count at the T50 threshold {t:.3g}",
    "median_sweep": "median sweep over {k} thresholds",
}


def _sentence(r: PrevalenceEstimate, bins: _Bins, n_pos: int, n_neg: int) -> str:
    how = _DESCRIBE[r.method].format(k=bins.k - (r.method != "mle"), t=float(bins.edges[0]))
    s = f"η ≈ {r.brief} ({how}; {r.confidence:.0%})"
    if r.at_zero:
        s += ", consistent with no positives at this test set's resolution"
    if r.limited_by_test:
        sh = r.variance_shares
        if sh.get("test_negatives", 0.0) >= sh.get("test_positives", 0.0):
            s += f"; the test set's {n_neg:,} negatives limit the interval"
            if r.more_negatives_needed is not None:
                s += f" (about {r.more_negatives_needed:,} more would halve it)"
        else:
            s += f"; the test set's {n_pos:,} positives limit the interval"
    if math.isnan(r.prior_shift_p):
        s += "; the prior-shift check was not run"
    elif r.check_passed:
        s += f"; the prior-shift check passes ({_fmt_p(r.prior_shift_p, r.check_alpha)})"
    else:
        s += (
            f"; the check FAILS ({_fmt_p(r.prior_shift_p, r.check_alpha)}): production differs "
            "from the test data in more than prevalence"
        )
        if r.misfit is not None:
            s += f", worst at {r.misfit.text}"
        s += "; do not trust this estimate or any metric at it"
    if r.out_of_range:
        s += f" (note: {r.out_of_range})"
    return s
