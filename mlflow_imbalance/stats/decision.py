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
threshold, "true precision >= q", wrong in at most ``alpha`` of test sets. So
``choose_threshold(min_precision=q)`` alone tests the hypotheses "precision < q" along a
data-independent sequence of false-positive count levels, from high to low score, by a fixed
sequence whose critical counts are calibrated on the exact joint law of the negatives' order
statistics (:mod:`mlflow_imbalance.stats.order_stats`): see :func:`choose_threshold` for the
construction and its proof, and ``benchmarks/bench_threshold.py`` / docs/statistics.md
("Choosing a threshold: measured") for its failure rate and recall. Its ``precision_low`` is
that certificate (q); its other bounds are :func:`selected_point_interval` at the chosen
threshold, the two-sided limits valid after any selection that the report shows there.
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
        precision_low: lower confidence bound (simultaneous over the candidates; with
            ``min_precision`` alone and feasible: q, the certificate of the fixed sequence).
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
            this; ``min_precision`` alone: the number of levels of the fixed sequence).
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

    **min_precision alone: a calibrated fixed sequence** (issue 30). Guarantee: P(true
    precision at eta of the returned threshold < q) <= ``1 - confidence`` (an infeasible answer
    never fails), finite-sample, for every score distribution (ties included). Construction,
    with ``alpha = 1 - confidence``, ``o = eta / (1 - eta)``, ``N`` negatives, ``P`` positives,
    ``k = q / (o (1 - q))`` (precision < q  <=>  TPR < k FPR):

    * levels ``j``: 0 and ``floor(1.1**i)`` from the largest at or below ``0.05 j_max`` up to
      ``j_max = N o (1-q)/q`` (beyond it no TPR reaches q) -- fixed before the data
      (:func:`sequence_levels`); threshold ``tau_j``: the lowest with at most ``j`` false
      positives, visited from high to low score (a threshold reached by several levels is
      tested once, at the smallest).
    * given the negatives, the TP count ``T_j`` at ``tau_j`` is ``Bin(P, TPR(tau_j))`` and
      ``FPR(tau_j) <= V_j = U_(j+1)``, the ``(j+1)``-th smallest latent uniform of the
      negatives; level ``j`` passes when ``T_j >= c_j``. The walk stops at the first level that
      does not pass and returns the last that did (highest recall).
    * an error needs the first true null ``j*`` to pass, and ``j*`` -- the first level whose
      ``V_j`` falls in a set fixed by the score distributions -- is a stopping time of the
      Markov chain ``(V_j)``; so ``P(error) <= sup_tau E[g_tau(V_tau)]`` with ``g_j(v) =
      P(Bin(P, min(1, k v)) >= c_j)``. That optimal-stopping value is computed exactly enough
      to be an upper bound (backward induction on quantile grids, rounded up;
      :func:`~mlflow_imbalance.stats.order_stats.sequence_critical_counts`), and the ``c_j``
      (equal marginal null tails ``gamma``) are the least conservative with value ``<=
      alpha``. Bonferroni over the levels (the previous construction) would spend
      ``alpha / K`` per level; the chain's value allows ``gamma`` ~ 0.03 at ``alpha`` = 0.05.

    Fixed-sequence testing is Westfall & Krishen (2001) / Wiens (2003); its use for certifying
    a threshold on held-out counts is "Learn then Test" (Angelopoulos et al. 2021), here with
    the thresholds indexed by the negatives' order statistics and the FPR integrated out
    exactly instead of bounded separately. Measured (``benchmarks/bench_threshold.py``, R =
    1,000; docs/statistics.md): failure rate 0.000-0.017 in every cell (upper 95 % bounds
    <= 0.025), median recall 0.77-0.80 of the oracle's where that is 0.35 at 200 / 20,000
    (the previous fallback sequence: 0.52-0.54) and 0.91-1.00 elsewhere. The proof is for "score
    above the (j+1)-th highest negative"; the returned threshold, ``thresholds[k]``, makes the
    same decisions on the test set (it differs only by population mass inside one gap between
    adjacent test scores). ``precision_low`` is q (the certificate of this test); the other
    reported bounds (``precision_high``, recall, FPR, alerts) are
    :func:`selected_point_interval` at the chosen threshold (two-sided, valid after any
    selection, and what the report shows there); each statement holds at ``confidence``.

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
        min_precision: required precision at eta (alone: certified by the fixed sequence;
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


#: Ratio of the geometric grid of false-positive count levels along the fixed sequence, and
#: where the sequence starts, as a fraction of ``j_max`` (see :func:`sequence_levels`). Tuned
#: by ``benchmarks/bench_threshold.py``.
SEQUENCE_RATIO = 1.1
SEQUENCE_START = 0.05


def sequence_levels(n_neg: int, prevalence: float, min_precision: float) -> np.ndarray:
    """The false-positive count levels ``j`` of the fixed sequence (data-independent).

    ``floor(r**i)`` (``r`` = :data:`SEQUENCE_RATIO`) from the largest level at or below
    ``SEQUENCE_START * j_max`` (0 when none is) up to ``j_max``, the largest ``j`` at which a
    precision of ``min_precision`` is still possible at all with TPR = 1:
    ``j <= n_neg * o * (1 - q) / q``. They depend on the class size, eta and q only, never on
    the scores.
    """
    o = prevalence / (1.0 - prevalence)
    q = float(min_precision)
    j_max = float(n_neg) if q <= 0 else min(float(n_neg), math.floor(n_neg * o * (1 - q) / q))
    if j_max < 1:
        return np.zeros(1)
    i_max = math.floor(math.log(j_max) / math.log(SEQUENCE_RATIO) + 1e-9)
    geo = np.floor(SEQUENCE_RATIO ** np.arange(i_max + 1) + 1e-9)
    levels = np.unique(np.r_[0.0, geo[geo <= j_max]])
    start = levels[levels <= SEQUENCE_START * j_max].max()
    return levels[levels >= start]


def _choose_fixed_sequence(counts: RocCounts, eta: float, q: float, conf: float) -> ThresholdChoice:
    """``min_precision`` alone: the calibrated fixed sequence of :func:`choose_threshold`."""
    from mlflow_imbalance.stats.order_stats import sequence_critical_counts

    alpha = 1.0 - conf
    o = eta / (1.0 - eta)
    n_pos, n_neg = float(counts.n_pos), float(counts.n_neg)
    fp = np.asarray(counts.fp, np.float64)
    tp = np.asarray(counts.tp, np.float64)
    levels = sequence_levels(int(counts.n_neg), eta, q)
    slope = q / (o * (1.0 - q)) if q < 1 else math.inf
    if math.isfinite(slope):
        crit, gamma, bound = sequence_critical_counts(
            int(counts.n_pos), int(counts.n_neg), slope, tuple(int(v) for v in levels), alpha
        )
    else:  # q = 1: no finite TP count certifies it
        crit, gamma, bound = np.full(levels.size, n_pos + 1.0), 0.0, 0.0
    # each level's threshold: the lowest with FP count <= j (a function of the negatives only)
    pos = np.searchsorted(fp, levels, side="right") - 1
    first = np.r_[True, pos[1:] != pos[:-1]]  # a threshold reached by several levels: the
    pos, crit = pos[first], crit[first]  # smallest (its FPR is still <= U_(j+1) there)
    passed = (pos >= 0) & (tp[np.maximum(pos, 0)] >= crit)
    n_pass = int(np.argmin(passed)) if not passed.all() else int(passed.size)
    feasible = n_pass > 0
    if feasible:
        k = int(pos[n_pass - 1])  # the last level of the unbroken run of passes
        reason = ""
    else:
        k = int(pos[0]) if pos[0] >= 0 else 0
        reason = (
            f"no threshold meets the requirement at prevalence {eta:.3g} with "
            f"{conf:.0%} confidence (the first threshold of the fixed sequence does not pass); "
            "the closest candidate is reported"
        )
    lim = candidate_limits(counts, conf)
    tl, th, fl, fh = lim.bracket(float(tp[k]), float(fp[k]))
    t, f = tp[k] / n_pos, fp[k] / n_neg
    p_low = float(_prec(tl, fh, o))
    if feasible:
        p_low = q  # the certificate: the test that chose the threshold
    per = 10_000.0
    method = (
        f"fixed-sequence test of 'precision at eta < {q:.4g}' along {levels.size} thresholds "
        f"(FP count levels, ratio {SEQUENCE_RATIO}) from high to low score; critical TP counts "
        f"calibrated on the exact joint law of the negatives' order statistics (pointwise "
        f"level {gamma:.3g}): P(true precision < {q:.4g} at the returned threshold) <= "
        f"{bound:.3g} <= {alpha:.3g}; precision_low is that certificate (q), the other bounds the "
        "simultaneous limits valid after any selection (selected_point_interval)"
    )
    return ThresholdChoice(
        threshold=float(counts.thresholds[k]) if feasible else math.nan,
        feasible=feasible,
        reason=reason,
        prevalence=eta,
        precision=float(_prec(t, f, o)),
        precision_low=p_low,
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
        n_candidates=int(levels.size),
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
    tp = np.asarray(counts.tp, np.float64)[cand]
    fp = np.asarray(counts.fp, np.float64)[cand]
    level = 1.0 - (1.0 - conf) / (2 * max(m, 1))
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
