"""Choose an operating threshold for a deployment requirement, with bounds valid after choosing.

:func:`choose_threshold` picks, from logged ROC counts, the threshold that meets a requirement
at a deployment prevalence eta -- a minimum precision, a minimum recall, a maximum number of
alerts per ``N`` cases -- judged by *confidence bounds* rather than point estimates, and
returns the bounds at the chosen threshold.

Validity after selection. The threshold is chosen on the same counts its bounds come from, so
a pointwise interval at the chosen point would under-cover (the issue measured 0.85 for the
max-F1 threshold at P = 100). Here every candidate's bounds hold *simultaneously*: candidates
are a fixed set of ``m`` thresholds (a geometric grid in the false-positive and true-positive
counts, at most :data:`MAX_CANDIDATES`), and at each of them TPR and FPR get exact
Clopper-Pearson limits at level ``1 - alpha / (2 m)`` (Bonferroni over the ``2 m`` rate
intervals). With probability at least ``confidence`` all of them cover at once, so whichever
candidate the rule picks -- by any rule that looks at the data -- its bounds are valid.
Precision at eta is a monotone function of ``(TPR, FPR)`` (Brabec et al. 2020, §2 eq. 8), so
``Prec_low = TPR_low o / (TPR_low o + FPR_high)`` with ``o = eta / (1 - eta)`` inherits the
guarantee; so does the alert rate ``eta TPR + (1 - eta) FPR``.

A minimum precision alone (issue 30) needs less: one *one-sided* statement at the chosen
threshold, "true precision >= q", wrong in at most ``alpha`` of test sets. The simultaneous
boxes above spend ``alpha / (4 m)`` per tail and returned thresholds whose true precision was
1.4-3x q (0 failures in ~9,400). So ``choose_threshold(min_precision=q)`` alone tests the
hypotheses "precision < q" along a data-independent sequence of false-positive count levels,
from high to low score, by the fallback procedure (a fixed-sequence test with a few entry
points): see :func:`choose_threshold` for the construction and its proof, and
``benchmarks/bench_threshold.py`` / docs/statistics.md ("Choosing a threshold: measured") for
its failure rate and recall. The bounds it *reports* at the chosen threshold are still the
simultaneous ones (:func:`selected_point_interval`), whose semantics are unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_alerts_per, check_fraction, check_prevalence
from mlflow_imbalance.stats._checks import _check_confidence, _require_unweighted
from mlflow_imbalance.stats.intervals import _rate_limits

__all__ = [
    "MAX_CANDIDATES",
    "CandidateLimits",
    "SelectedPoint",
    "ThresholdChoice",
    "candidate_limits",
    "candidate_thresholds",
    "chance_level",
    "choose_threshold",
    "per_cases",
    "selected_point_interval",
    "sequence_levels",
]

#: Largest number of candidate thresholds (the Bonferroni factor grows with it).
MAX_CANDIDATES = 64


@dataclass(frozen=True)
class ThresholdChoice:
    """The threshold chosen for a requirement at one prevalence, with simultaneous bounds.

    Attributes:
        threshold: score threshold (predict positive when ``score >= threshold``); NaN when
            infeasible.
        feasible: True when some candidate meets every requirement by its confidence bound.
        reason: why not (empty when feasible).
        prevalence: eta the requirement is judged at.
        precision: precision at eta (estimate) at the chosen threshold.
        precision_low: lower confidence bound (simultaneous over the candidates).
        precision_high: upper confidence bound.
        recall: recall (TPR) estimate.
        recall_low: lower bound.
        recall_high: upper bound.
        fpr: false-positive rate estimate.
        fpr_high: its upper bound.
        alerts_per: ``{"per": N, "expected": ..., "low": ..., "high": ...}`` -- alerts per
            ``N`` cases at eta (``N`` from ``max_alerts_per``, else 10,000).
        confidence: joint level of the bounds.
        n_candidates: thresholds considered (simultaneous boxes: the Bonferroni factor is twice
            this; ``min_precision`` alone: the length of the fallback sequence).
        method: how the bounds were made.
    """

    threshold: float
    feasible: bool
    reason: str
    prevalence: float
    precision: float
    precision_low: float
    precision_high: float
    recall: float
    recall_low: float
    recall_high: float
    fpr: float
    fpr_high: float
    alerts_per: dict[str, float] = field(default_factory=dict)
    confidence: float = 0.95
    n_candidates: int = 0
    method: str = ""


def candidate_thresholds(counts: RocCounts, max_candidates: int = MAX_CANDIDATES) -> np.ndarray:
    """Indices of the candidate operating points: a geometric grid in FP and TP counts.

    The grid holds, for 40 geometric count levels from 1 to the class size (thinned to fit
    ``max_candidates``), the last threshold whose false-positive count is at most the level,
    and likewise for the true-positive count; dense where precision changes fastest (few false
    positives). A threshold picked by its own class's count is an order statistic of that
    class's scores, for which Clopper-Pearson limits stay valid (the true rate at the ``k``-th
    highest score is Beta(k, n - k + 1), bracketed by the Clopper-Pearson Beta quantiles); the
    other class's count at it is binomial and independent. So the choice of candidates enters
    the guarantee only through their number ``m``.
    """
    fp = np.asarray(counts.fp, np.float64)
    tp = np.asarray(counts.tp, np.float64)
    k = fp.size
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    idx: set[int] = set()
    for arr, total in ((fp, float(counts.n_neg)), (tp, float(counts.n_pos))):
        levels = np.unique(np.round(np.geomspace(1, max(total, 1.0), 40)))
        pos = np.searchsorted(arr, levels, side="right") - 1  # last point with count <= level
        idx.update(int(i) for i in pos if 0 <= i < k)
    idx.add(k - 1)
    out = np.array(sorted(idx), dtype=np.int64)
    if out.size > max_candidates:
        keep = np.unique(np.round(np.linspace(0, out.size - 1, max_candidates)).astype(int))
        out = out[keep]
    return out


def _alerts(t: Any, f: Any, eta: float, per: float) -> Any:
    return per * (eta * np.asarray(t) + (1.0 - eta) * np.asarray(f))


def _prec(t: Any, f: Any, o: float) -> Any:
    t, f = np.asarray(t, float), np.asarray(f, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(t * o + f > 0, t * o / (t * o + f), 0.0)


def choose_threshold(
    counts: RocCounts,
    prevalence: float,
    *,
    min_precision: float | None = None,
    min_recall: float | None = None,
    max_alerts_per: tuple[float, float] | None = None,
    confidence: float = 0.95,
) -> ThresholdChoice:
    """The threshold meeting a deployment requirement at ``prevalence``, judged by its bounds.

    **min_precision alone: a fallback sequence** (issue 30). Guarantee: P(true precision at eta
    of the returned threshold < q) <= ``1 - confidence`` (an infeasible answer never fails);
    exact, finite-sample, any score distribution (ties included). Construction, with
    ``alpha = 1 - confidence``, ``o = eta / (1 - eta)``, ``N`` negatives:

    * levels ``j``: 0 and ``floor(1.2**i)`` from ``0.03 j_max`` up to ``j_max = N o (1-q)/q``
      (beyond it no TPR reaches q) -- fixed before the data (:func:`sequence_levels`);
      threshold ``tau_j``: the lowest with at most ``j`` false positives (a function of the
      negatives only), visited from high to low score.
    * FPR: one-sided Clopper-Pearson upper limit ``b_j`` at count ``j`` and level
      ``0.3 alpha / K`` (Bonferroni over the ``K`` levels; at a threshold reached by several
      levels the smallest is used, still ``>=`` its count). ``FPR(tau_j) <= U_(j+1)`` (the
      ``(j+1)``-th smallest latent uniform; equality for continuous scores), so all ``K``
      limits hold at once with probability ``>= 1 - 0.3 alpha``.
    * TPR: given the negatives every ``tau_j`` is fixed and the TP count at it is binomial, so
      "precision(tau_j) < q" implies (on the FPR event) "TPR(tau_j) < t_j" with
      ``t_j o / (t_j o + b_j) = q`` -- a fixed hypothesis tested by the one-sided
      Clopper-Pearson lower limit. These are tested by Wiens' (2003) fallback procedure:
      ``0.7 alpha`` is split equally among entry points at ``0.03, 0.1, 0.3 j_max``; each
      threshold is tested at its own share plus, if the previous one passed, the previous
      one's level (a pure fixed-sequence test once the chain is unbroken); it controls the
      family-wise error at ``0.7 alpha`` under any dependence. The lowest passing threshold
      (highest recall) is returned.

    So an error needs an FPR limit to fail or a true hypothesis to be rejected:
    ``<= 0.3 alpha + 0.7 alpha``. Why not a single fixed sequence from the top: at the first
    thresholds the counts are tiny and the first failure ends it (an R = 20 pilot: infeasible
    in 40 % of test sets where the oracle's recall is 0.6). Measured (binormal mu = 2,
    continuous and rounded scores, 200 / 20,000 and 1,000 / 100,000, eta = 1e-2 and 1e-3,
    R = 1,000 per cell, ``benchmarks/bench_threshold.py``): 1 failure in 16,000 (set, q) pairs
    (upper 95 % bound <= 0.005 per cell); median recall 0.82-0.92 of the oracle's where that is
    0.55-0.6 (boxes: 0.76-0.90; rounded scores at 1,000 positives: the oracle's level itself,
    1.00) and 0.84 at 1,000 positives where it is 0.35 (boxes: 0.72); at 200 positives where it
    is 0.35, feasible in 72-74 % of sets and median 0.52-0.54 (boxes: 42-44 %, median 0). The
    reported
    bounds (``precision_low`` ...) are :func:`selected_point_interval` at the chosen threshold
    (two-sided, valid after any selection); ``precision_low`` may lie below q, the certificate
    is the one-sided test above, stated in ``method``.

    **Otherwise** (``min_recall`` or ``max_alerts_per`` given): among the candidates
    (:func:`candidate_thresholds`) whose bounds meet every requirement given --
    ``precision_low >= min_precision``, ``recall_low >= min_recall``, upper bound on alerts per
    ``N`` cases ``<= max`` -- the one with the highest recall estimate is chosen (ties: the
    higher threshold); with only ``min_recall`` the one with the highest precision (the fewest
    alerts). Bounds are simultaneous over all candidates (Bonferroni over exact
    Clopper-Pearson rate limits; see the module docstring), so they stay valid at the chosen
    threshold although it was chosen on these counts.

    Args:
        counts: unweighted ROC counts of the run (test set).
        prevalence: deployment prevalence eta in (0, 1).
        min_precision: required precision at eta (alone: certified by the fallback sequence;
            with other requirements: by its simultaneous lower bound).
        min_recall: required recall (by its lower bound).
        max_alerts_per: ``(max_alerts, per_cases)``, e.g. ``(50, 10_000)``: at most 50 alerts
            per 10,000 cases at eta (by the upper bound).
        confidence: joint level of all bounds over all candidates.

    Returns:
        :class:`ThresholdChoice` (``feasible=False`` and ``reason`` when none qualifies; the
        estimates and bounds then describe the candidate that came closest). Any class size
        works: with one positive or one negative the bounds are wide and the choice is usually
        infeasible, the honest answer.

    Raises:
        ValueError: naming the argument, for a prevalence that is not one number in (0, 1),
            a rate that is not a number in [0, 1] (strings, booleans, lists), or an alert budget
            that is not a pair of finite numbers.
        InsufficientDataError: weighted counts (the bounds need integer counts).
    """
    conf = _check_confidence(confidence)
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    eta = float(check_prevalence(prevalence, "prevalence", scalar=True))
    if min_precision is not None:
        min_precision = check_fraction(min_precision, "min_precision")
    if min_recall is not None:
        min_recall = check_fraction(min_recall, "min_recall")
    if max_alerts_per is not None:
        max_alerts_per = check_alerts_per(max_alerts_per, "max_alerts_per")
    if min_precision is None and min_recall is None and max_alerts_per is None:
        raise ValueError("give at least one of min_precision, min_recall, max_alerts_per")
    _require_unweighted(counts, "choose_threshold's confidence bounds")

    if min_precision is not None and min_recall is None and max_alerts_per is None:
        return _choose_fixed_sequence(counts, eta, float(min_precision), conf)
    return _choose_simultaneous(counts, eta, min_precision, min_recall, max_alerts_per, conf)


def _choose_simultaneous(
    counts: RocCounts,
    eta: float,
    min_precision: float | None,
    min_recall: float | None,
    max_alerts_per: tuple[float, float] | None,
    conf: float,
) -> ThresholdChoice:
    """The earlier construction, by the simultaneous limits of :func:`candidate_limits`.

    Every requirement is judged by the simultaneous (Bonferroni) Clopper-Pearson limits; still
    used whenever ``min_recall`` or ``max_alerts_per`` is given, and kept for comparison (tests,
    ``benchmarks/bench_threshold.py``) with ``min_precision`` alone.
    """
    per = 10_000.0
    max_alerts = math.inf
    if max_alerts_per is not None:
        max_alerts, per = max_alerts_per
    lim = candidate_limits(counts, conf)
    cand, m = lim.index, int(lim.index.size)
    level = 1.0 - (1.0 - conf) / (2 * m)  # Bonferroni over 2m two-sided rate intervals
    t_lo, t_hi, f_lo, f_hi = lim.tpr_low, lim.tpr_high, lim.fpr_low, lim.fpr_high
    o = eta / (1.0 - eta)
    t, f = lim.tp / float(counts.n_pos), lim.fp / float(counts.n_neg)
    p_est, p_lo, p_hi = _prec(t, f, o), _prec(t_lo, f_hi, o), _prec(t_hi, f_lo, o)
    a_est, a_lo, a_hi = (
        _alerts(t, f, eta, per),
        _alerts(t_lo, f_lo, eta, per),
        _alerts(t_hi, f_hi, eta, per),
    )
    ok = np.ones(m, dtype=bool)
    short = np.zeros(m)
    if min_precision is not None:
        ok &= p_lo >= float(min_precision)
        short += np.maximum(float(min_precision) - p_lo, 0.0)
    if min_recall is not None:
        ok &= t_lo >= float(min_recall)
        short += np.maximum(float(min_recall) - t_lo, 0.0)
    if max_alerts_per is not None:
        ok &= a_hi <= max_alerts
        short += np.maximum(a_hi - max_alerts, 0.0) / per
    if ok.any():
        pool = np.flatnonzero(ok)
        if min_precision is None and max_alerts_per is None:
            j = pool[np.lexsort((-cand[pool], -p_est[pool]))[0]]  # best precision, then higher thr
        else:
            j = pool[np.lexsort((cand[pool], -t[pool]))[0]]  # best recall, then higher threshold
        reason = ""
    else:
        j = int(np.argmin(short))
        reason = (
            f"no threshold meets the requirement at prevalence {eta:.3g} by its "
            f"{conf:.0%} confidence bound; the closest candidate is reported"
        )
    j = int(j)
    method = (
        f"exact Clopper-Pearson limits for TPR and FPR at {m} candidate thresholds, Bonferroni "
        f"over all 2x{m} intervals (each at {level:.5f}): joint level >= {conf:.0%}, valid at "
        "the chosen threshold although it was chosen on the same data; precision and alerts "
        "mapped through eq. 8 of Brabec et al. (2020)"
    )
    return ThresholdChoice(
        threshold=float(counts.thresholds[cand[j]]) if ok.any() else math.nan,
        feasible=bool(ok.any()),
        reason=reason,
        prevalence=eta,
        precision=float(p_est[j]),
        precision_low=float(p_lo[j]),
        precision_high=float(p_hi[j]),
        recall=float(t[j]),
        recall_low=float(t_lo[j]),
        recall_high=float(t_hi[j]),
        fpr=float(f[j]),
        fpr_high=float(f_hi[j]),
        alerts_per={
            "per": per,
            "expected": float(a_est[j]),
            "low": float(a_lo[j]),
            "high": float(a_hi[j]),
        },
        confidence=conf,
        n_candidates=m,
        method=method,
    )


#: Ratio of the geometric grid of false-positive count levels along the fixed sequence, and the
#: share of ``alpha`` spent on the (Bonferroni, one-sided) FPR upper limits; the rest goes to
#: the one pointwise TPR lower limit. Tuned by ``benchmarks/bench_threshold.py``.
SEQUENCE_RATIO = 1.2
SEQUENCE_FPR_SHARE = 0.3
#: Entry points of the fallback sequence, as fractions of ``j_max`` (see
#: :func:`sequence_levels`), and the share of the TPR level each one brings.
SEQUENCE_ENTRIES = (0.03, 0.1, 0.3)
SEQUENCE_WEIGHTS = (1 / 3, 1 / 3, 1 / 3)


def sequence_levels(n_neg: int, prevalence: float, min_precision: float) -> np.ndarray:
    """The false-positive count levels ``j`` of the fixed sequence (data-independent).

    ``0`` and ``floor(r**i)`` (``r`` = :data:`SEQUENCE_RATIO`) up to the largest ``j`` at which
    a precision of ``min_precision`` is still possible at all with TPR = 1:
    ``j <= n_neg * o * (1 - q) / q`` (the FPR upper limit at level ``j`` exceeds ``j / n_neg``).
    They depend on the class size, eta and q only, never on the scores.
    """
    o = prevalence / (1.0 - prevalence)
    q = float(min_precision)
    j_max = float(n_neg) if q <= 0 else min(float(n_neg), math.floor(n_neg * o * (1 - q) / q))
    if j_max < 1:
        return np.zeros(1)
    i_max = math.floor(math.log(j_max) / math.log(SEQUENCE_RATIO) + 1e-9)
    geo = np.floor(SEQUENCE_RATIO ** np.arange(i_max + 1) + 1e-9)
    levels = np.unique(np.r_[0.0, geo[geo <= j_max]])
    start = levels[levels <= min(SEQUENCE_ENTRIES) * j_max].max()
    return levels[levels >= start]


def _choose_fixed_sequence(counts: RocCounts, eta: float, q: float, conf: float) -> ThresholdChoice:
    """``min_precision`` alone: the fallback sequence of :func:`choose_threshold`."""
    from scipy import stats

    alpha = 1.0 - conf
    o = eta / (1.0 - eta)
    n_pos, n_neg = float(counts.n_pos), float(counts.n_neg)
    fp = np.asarray(counts.fp, np.float64)
    tp = np.asarray(counts.tp, np.float64)
    levels = sequence_levels(int(counts.n_neg), eta, q)
    k_lev = int(levels.size)
    a_f = SEQUENCE_FPR_SHARE * alpha / k_lev  # one-sided, per level (Bonferroni)
    a_t = (1.0 - SEQUENCE_FPR_SHARE) * alpha  # one-sided, once (fixed sequence)
    # each level's threshold: the lowest with FP count <= j; keep the smallest level per point
    pos = np.searchsorted(fp, levels, side="right") - 1
    keep = pos >= 0
    idx, first = np.unique(pos[keep], return_index=True)
    lev = levels[keep][first]
    f_hi = np.where(lev < n_neg, stats.beta.ppf(1.0 - a_f, lev + 1.0, n_neg - lev), 1.0)
    x = tp[idx]
    # the TPR each threshold needs: t o / (t o + f_hi) >= q
    need = q * f_hi / (o * (1.0 - q)) if q < 1 else np.full(idx.size, np.inf)
    # weights: each entry point's share goes to the first threshold at or below it
    j_max = float(levels[-1])
    w = np.zeros(idx.size)
    for e, share in zip(SEQUENCE_ENTRIES, SEQUENCE_WEIGHTS, strict=True):
        entry = max(levels[0], levels[levels <= e * j_max + 1e-9].max(initial=0.0))
        at = np.flatnonzero(idx == np.searchsorted(fp, entry, side="right") - 1)
        if at.size:
            w[at[0]] += share
    w /= w.sum() if w.sum() > 0 else 1.0
    passed = np.zeros(idx.size, dtype=bool)
    p_lo = np.zeros(idx.size)
    carry = 0.0
    for i in range(idx.size):  # fallback (Wiens 2003): a rejection passes its level on
        lvl = w[i] * a_t + carry
        t_lo = float(stats.beta.ppf(lvl, x[i], n_pos - x[i] + 1.0)) if x[i] > 0 and lvl > 0 else 0.0
        p_lo[i] = float(_prec(t_lo, f_hi[i], o))
        passed[i] = lvl > 0 and t_lo >= need[i]
        carry = lvl if passed[i] else 0.0
    feasible = bool(passed.any())
    n_pass = int(np.flatnonzero(passed)[-1]) + 1 if feasible else 0
    if feasible:
        k = int(idx[n_pass - 1])  # the last threshold of the unbroken run of passes
        reason = ""
    else:
        k = int(idx[int(np.argmax(p_lo))]) if idx.size else 0
        reason = (
            f"no threshold meets the requirement at prevalence {eta:.3g} with "
            f"{conf:.0%} confidence (no threshold of the fallback sequence passes); the "
            "closest candidate is reported"
        )
    lim = candidate_limits(counts, conf)
    tl, th, fl, fh = lim.bracket(float(tp[k]), float(fp[k]))
    t, f = tp[k] / n_pos, fp[k] / n_neg
    per = 10_000.0
    method = (
        f"fallback (fixed-sequence) test of 'precision at eta < {q:.4g}' along {idx.size} "
        f"thresholds (FP count levels, ratio {SEQUENCE_RATIO}) from high to low score, "
        f"{len(SEQUENCE_ENTRIES)} entry points: one-sided Clopper-Pearson TPR lower limits at "
        f"levels summing to {a_t:.4g} and FPR upper limits at {a_f:.3g} (Bonferroni over "
        f"{k_lev} levels); P(true precision < {q:.4g} at the returned threshold) <= "
        f"{alpha:.3g}. Bounds reported: the simultaneous two-sided limits valid after any "
        "selection (selected_point_interval)"
    )
    return ThresholdChoice(
        threshold=float(counts.thresholds[k]) if feasible else math.nan,
        feasible=feasible,
        reason=reason,
        prevalence=eta,
        precision=float(_prec(t, f, o)),
        precision_low=float(_prec(tl, fh, o)),
        precision_high=float(_prec(th, fl, o)),
        recall=float(t),
        recall_low=tl,
        recall_high=th,
        fpr=float(f),
        fpr_high=fh,
        alerts_per={
            "per": per,
            "expected": float(_alerts(t, f, eta, per)),
            "low": float(_alerts(tl, fl, eta, per)),
            "high": float(_alerts(th, fh, eta, per)),
        },
        confidence=conf,
        n_candidates=int(idx.size),
        method=method,
    )


@dataclass(frozen=True)
class SelectedPoint:
    """Precision and recall bounds at an operating point chosen on the same data.

    Attributes:
        index: the operating point (index into the counts' thresholds).
        prevalence: eta.
        precision_low: lower bound of precision at eta.
        precision_high: upper bound.
        recall_low: lower bound of recall (TPR).
        recall_high: upper bound.
        confidence: joint level (valid whichever point a data-driven rule picked).
        method: how they were made.
    """

    index: int
    prevalence: float
    precision_low: float
    precision_high: float
    recall_low: float
    recall_high: float
    confidence: float
    method: str


@dataclass(frozen=True)
class CandidateLimits:
    """Simultaneous Clopper-Pearson limits of TPR and FPR at the candidate thresholds.

    They do not depend on the prevalence: the report embeds them once per run, and its page
    brackets the operating point it finds at any eta exactly as :func:`selected_point_interval`
    does (by the candidates' counts, see :meth:`bracket`).

    Attributes:
        index: the candidates (indices into the counts' thresholds, ascending).
        tp, fp: their true- and false-positive counts (non-decreasing).
        tpr_low, tpr_high, fpr_low, fpr_high: the limits, jointly at level ``confidence``.
        confidence: joint level.
    """

    index: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    tpr_low: np.ndarray
    tpr_high: np.ndarray
    fpr_low: np.ndarray
    fpr_high: np.ndarray
    confidence: float

    @property
    def method(self) -> str:
        """How the limits were made (and that they stay valid after a data-driven choice)."""
        return (
            f"valid after selection: Clopper-Pearson limits at {self.index.size} candidate "
            f"thresholds, Bonferroni (joint {self.confidence:.0%}), bracketing the chosen point "
            "by monotonicity"
        )

    def bracket(self, tp: float, fp: float) -> tuple[float, float, float, float]:
        """``(tpr_low, tpr_high, fpr_low, fpr_high)`` at the point with counts ``(tp, fp)``.

        Candidates at or above the point (higher thresholds) are those with both counts at
        most the point's, those at or below it with both at least (counts only grow as the
        threshold falls, and each threshold adds an example): the nearest of each bounds it.
        """
        above = np.flatnonzero((self.tp <= tp) & (self.fp <= fp))
        below = np.flatnonzero((self.tp >= tp) & (self.fp >= fp))
        tl = float(self.tpr_low[above[-1]]) if above.size else 0.0
        fl = float(self.fpr_low[above[-1]]) if above.size else 0.0
        th = float(self.tpr_high[below[0]]) if below.size else 1.0
        fh = float(self.fpr_high[below[0]]) if below.size else 1.0
        return tl, th, fl, fh


def candidate_limits(counts: RocCounts, confidence: float = 0.95) -> CandidateLimits:
    """TPR and FPR limits at :func:`candidate_thresholds`, holding jointly at ``confidence``.

    Clopper-Pearson at level ``1 - alpha / (2 m)`` for each of the ``2 m`` rates (Bonferroni),
    exact for the order statistics the candidates are (see :func:`candidate_thresholds`).
    Any class size works (one positive: TPR limits spanning nearly [0, 1]).

    Raises:
        InsufficientDataError: weighted counts (Clopper-Pearson limits need integer counts).
    """
    conf = _check_confidence(confidence)
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    _require_unweighted(counts, "the simultaneous TPR/FPR limits")
    cand = candidate_thresholds(counts)
    m = int(cand.size)
    level = 1.0 - (1.0 - conf) / (2 * max(m, 1))
    tp = np.asarray(counts.tp, np.float64)[cand]
    fp = np.asarray(counts.fp, np.float64)[cand]
    t_lo, t_hi = _rate_limits(tp, np.full(m, float(counts.n_pos)), level, "clopper-pearson")
    f_lo, f_hi = _rate_limits(fp, np.full(m, float(counts.n_neg)), level, "clopper-pearson")
    as_arr = np.asarray
    return CandidateLimits(
        cand, tp, fp, as_arr(t_lo, float), as_arr(t_hi, float), as_arr(f_lo, float),
        as_arr(f_hi, float), conf,
    )  # fmt: skip


def selected_point_interval(
    counts: RocCounts,
    index: int,
    prevalence: float,
    confidence: float = 0.95,
    *,
    limits: CandidateLimits | None = None,
) -> SelectedPoint:
    """Bounds valid after selection at ANY operating point (e.g. the max-F1 or min-cost one).

    The candidates' simultaneous limits (:func:`candidate_limits`) bracket every other point by
    monotonicity: TPR and FPR only grow as the threshold falls, so at index ``k`` between
    candidates ``i <= k <= j``, ``TPR_low(i) <= TPR(k) <= TPR_high(j)`` and likewise FPR; these
    hold for every ``k`` at once whenever the candidates' limits do (probability >=
    ``confidence``), so the max-F1 point chosen on the test set keeps its coverage (a pointwise
    Koopman interval there covered 0.85 at P = 100). ``limits`` passes
    :func:`candidate_limits` already computed for these counts (they serve every point and
    prevalence).

    Raises:
        InsufficientDataError: weighted counts (as :func:`candidate_limits`).
    """
    conf = _check_confidence(confidence)
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    _require_unweighted(counts, "the bounds after selection")
    k = int(index)
    if not 0 <= k < counts.n_thresholds:
        raise ValueError(f"index must lie in [0, {counts.n_thresholds}), got {index!r}")
    eta = float(check_prevalence(prevalence, "prevalence"))
    if limits is None:
        limits = candidate_limits(counts, conf)
    elif limits.confidence != conf:
        raise ValueError(
            f"limits were made at confidence {limits.confidence}, not {conf}: pass matching ones"
        )
    tl, th, fl, fh = limits.bracket(float(counts.tp[k]), float(counts.fp[k]))
    o = eta / (1.0 - eta)
    return SelectedPoint(
        k, eta, float(_prec(tl, fh, o)), float(_prec(th, fl, o)), tl, th, conf, limits.method
    )


def chance_level(tpr: float, fpr: float, precision_low: float | None, prevalence: float) -> str:
    """Whether an operating point is shown to beat flagging cases at random at ``prevalence``.

    Flagging cases at random has likelihood ratio 1, so its precision at η is η (Brabec et al.
    2020, eq. 8). Used by the report's verdict and the run card, so both say the same.

    Args:
        tpr: the point's TPR (a point that flags nothing is not passed here).
        fpr: its FPR.
        precision_low: lower bound of its precision at η (valid after the choice of threshold:
            :func:`selected_point_interval`), or None without one.
        prevalence: η.

    Returns:
        ``"all"`` when it flags every case (TPR = FPR = 1, to 1e-9: needs no model),
        ``"interval"`` when ``precision_low <= η`` (not shown more precise than random), else
        ``""``. A statement about the alerts at that threshold, not about the ranking.
    """
    if tpr >= 1.0 and fpr >= 1.0 - 1e-9:
        return "all"
    if precision_low is not None and tpr > 0 and precision_low <= prevalence:
        return "interval"
    return ""


def per_cases(prevalence: float) -> int:
    """How many cases the plain-unit counts and costs refer to at ``prevalence``.

    10,000 when η ≥ 1e-3 (at least 10 positives among them), else 1,000,000. The one rule behind
    "per 10,000 cases" in the report, the CLI's verdict, the run card and the MLflow cost keys.
    """
    return 10_000 if float(prevalence) >= 1e-3 else 1_000_000
