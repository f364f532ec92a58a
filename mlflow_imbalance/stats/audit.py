r"""Audits: which production cases to label, and what the labels say (numpy, scipy, core).

A production batch's unlabeled scores say how many cases score where; a few labels drawn by a
*stratified design over the score* say how many of them are positives -- whatever has drifted.
This module plans the design (:func:`design_audit`), draws the sample (:func:`sample_audit`),
estimates the prevalence and the threshold's precision, recall and expected cost from the labels
(:func:`estimate_audit`), and says up front how many labels a target precision needs
(:func:`audit_budget`). Storage and the public ``mi.plan_audit`` / ``mi.log_audit_labels`` are
:mod:`mlflow_imbalance.tracking.audit`'s job.

**The design.** Strata are score intervals with the decision threshold as one boundary, so a
stratum is wholly flagged or wholly not. The run's test ROC is the prior guess of where the
positives are: under prior shift at the guessed prevalence ``eta0`` a fine score bin ``b`` with
``N_b`` production cases holds about ``N eta0 dTPR_b`` positives (Brabec et al. 2020, eq. 8 in
count form), a guessed positive share ``p_b``. Boundaries equalise the cumulative Neyman mass
``N_b sqrt(p_b (1 - p_b))`` within each side of the threshold (the cumulative-square-root-``f``
rule of Dalenius & Hodges 1959 applied to the guessed shares; Cochran 1977 §5A.7). The budget is
allocated by Neyman's rule (Cochran §5.5) for the sum of the relative variances of the three
estimates -- ``n_h`` proportional to ``N_h S_h sqrt(g_h)``, ``g_h = 1/Y^2 + [h flagged]/Y_A^2 +
([h flagged] - R)^2 / Y_A^2`` with the guessed totals -- above a floor of
:data:`FLOOR_SHARE` of the budget spread over the strata (at least :data:`MIN_LABELS` each), so
every stratum keeps a non-zero inclusion probability and the estimates stay unbiased whatever
the truth; the guess only decides how precise they are. Within a stratum the cases are a simple
random sample without replacement, reproducible by ``seed``.

**The estimators** are the stratified ones (Cochran 1977 ch. 5, §6.11 for the ratio; Särndal,
Swensson & Wretman 1992 §3.7): prevalence ``sum W_h p_h``, precision at the threshold (a
stratified mean over the flagged strata), recall (the combined ratio estimator), expected cost
per case ``(C_FP FP + C_FN FN) / N`` (the unit of the report verdict's ``value``). Labels that
have not come back are taken as missing at random within their stratum. Intervals: joint beta
draws per stratum (:mod:`mlflow_imbalance.stats._audit_draws`); the construction, its measured
coverage and why it was chosen: docs/statistics.md, "Audits".

**ROC shift.** ``roc_shift_p`` tests whether production's TPR and FPR at the threshold (from the
labels) still match the test set's (with the test set's own sampling error), at the level of the
prior-shift check of :func:`~mlflow_imbalance.stats.prevalence.estimate_prevalence`
(:data:`ROC_SHIFT_ALPHA`, read from its default).
"""

from __future__ import annotations

import logging
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.production import ScoreCounts
from mlflow_imbalance.stats._audit_alloc import (
    FLOOR_SHARE,
    MIN_BELOW_LABELS,
    MIN_BELOW_SHARE,
    MIN_LABELS,
    PRECISION_FOCUS_HALF_WIDTH,
    _allocate,
    _keep_below,
    _precision_first,
    _precision_labels,
    _split,
)
from mlflow_imbalance.stats._audit_draws import INTERVAL_METHODS, audit_kernel
from mlflow_imbalance.stats.prevalence import PRIOR_SHIFT_LEVEL, estimate_prevalence

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_METHOD",
    "FLOOR_SHARE",
    "FOCUSES",
    "MIN_BELOW_LABELS",
    "MIN_BELOW_SHARE",
    "MIN_LABELS",
    "PRECISION_FOCUS_HALF_WIDTH",
    "ROC_SHIFT_ALPHA",
    "AuditBudget",
    "AuditDesign",
    "AuditEstimate",
    "AuditInterval",
    "audit_budget",
    "design_audit",
    "estimate_audit",
    "expected_half_widths",
    "sample_audit",
]

#: The level of the ROC-shift test: the prior-shift check level of ``estimate_prevalence``.
ROC_SHIFT_ALPHA = float(PRIOR_SHIFT_LEVEL)
#: Weights of the design effects (variance over simple random sampling's) of the prevalence,
#: precision and recall estimates in the allocation's objective.
WEIGHTS = (1.0, 4.0, 1.0)
#: Candidate boundaries: production ranks log-spaced from the top (fine where positives sit).
_CANDIDATES = 240
#: The interval construction by default (docs/statistics.md, "Audits": measured).
DEFAULT_METHOD = "directional"
#: What a design is planned for: ``"balanced"`` (η, precision and recall together; the default)
#: or ``"precision"`` (precision at the threshold first, then the rest as balanced).
FOCUSES = ("balanced", "precision")


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class AuditInterval:
    """One audited quantity: ``estimate`` with its interval ``[low, high]``."""

    estimate: float
    low: float
    high: float

    @property
    def text(self) -> str:
        """``0.0123 [0.00812, 0.0187]``."""
        return f"{_g(self.estimate)} [{_g(self.low)}, {_g(self.high)}]"


def _g(x: float) -> str:
    return "n/a" if not math.isfinite(x) else ("0" if x == 0 else f"{x:.3g}")


@dataclass(frozen=True, eq=False)
class AuditDesign:
    """A stratified design over the score of one production batch.

    Strata are ordered from the highest scores down: stratum 0 holds scores ``>= cuts[0]``,
    stratum ``h`` scores in ``[cuts[h], cuts[h - 1])``, the last one scores ``< cuts[-1]``.

    Attributes:
        threshold: the decision threshold (flagged: score ``>= threshold``); one of ``cuts``.
        cuts: the ``H - 1`` strata boundaries, strictly descending.
        n_cases: cases per stratum (``N_h``, exact from the batch's counts).
        allocation: labels planned per stratum (``n_h``; they sum to ``budget``; at least one
            each from :func:`design_audit`; a Spark plan stores the realised Bernoulli sizes).
        above: stratum ``h`` is flagged (lies at or above ``threshold``).
        prior_rate: the guessed positive share per stratum (test ROC at ``prevalence_guess``).
        prevalence_guess: the prevalence the guess assumed.
        budget: labels planned.
        focus: what the allocation was planned for (one of :data:`FOCUSES`).
    """

    threshold: float
    cuts: np.ndarray
    n_cases: np.ndarray
    allocation: np.ndarray
    above: np.ndarray
    prior_rate: np.ndarray
    prevalence_guess: float
    budget: int
    focus: str = "balanced"

    @property
    def n(self) -> int:
        """Cases in the batch."""
        return int(self.n_cases.sum())

    @property
    def n_strata(self) -> int:
        """Number of strata."""
        return int(self.n_cases.size)

    @property
    def inclusion_probability(self) -> np.ndarray:
        """``n_h / N_h`` per stratum (every one > 0)."""
        return self.allocation / self.n_cases

    def stratum_of(self, scores: Any) -> np.ndarray:
        """The stratum of each score (int64): the number of ``cuts`` above it."""
        s = np.asarray(scores, dtype=np.float64)
        return (self.cuts.size - np.searchsorted(self.cuts[::-1], s, side="right")).astype(np.int64)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``from_dict`` inverts it exactly: floats round-trip in JSON)."""
        return {
            "threshold": float(self.threshold),
            "cuts": [float(c) for c in self.cuts],
            "n_cases": [int(v) for v in self.n_cases],
            "allocation": [int(v) for v in self.allocation],
            "above": [bool(v) for v in self.above],
            "prior_rate": [float(v) for v in self.prior_rate],
            "prevalence_guess": float(self.prevalence_guess),
            "budget": int(self.budget),
            "focus": self.focus,
            "inclusion_probability": [float(v) for v in self.inclusion_probability],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AuditDesign:
        """The design stored by :meth:`to_dict`, checked for consistency."""
        design = cls(
            threshold=float(d["threshold"]),
            cuts=np.asarray(d["cuts"], dtype=np.float64).reshape(-1),
            n_cases=np.asarray(d["n_cases"], dtype=np.int64),
            allocation=np.asarray(d["allocation"], dtype=np.int64),
            above=np.asarray(d["above"], dtype=bool),
            prior_rate=np.asarray(d["prior_rate"], dtype=np.float64),
            prevalence_guess=float(d["prevalence_guess"]),
            budget=int(d["budget"]),
            focus=str(d.get("focus", "balanced")),  # plans stored before the focus existed
        )
        h = design.n_cases.size
        ok = (
            design.cuts.size == h - 1
            and design.allocation.size == design.above.size == design.prior_rate.size == h
            and bool(np.all(np.diff(design.cuts) < 0))
            and bool(np.all((design.allocation >= 0) & (design.allocation <= design.n_cases)))
            and int(design.allocation.sum()) == design.budget
            and design.threshold in set(design.cuts.tolist())
            and design.focus in FOCUSES
        )
        if not ok:
            raise ValueError("the stored audit design is inconsistent (strata, sizes, threshold)")
        return design


@dataclass(frozen=True)
class AuditEstimate:
    """What the audit labels say about one production batch at one threshold.

    Attributes:
        threshold: the decision threshold the estimates are at.
        prevalence, precision, recall: :class:`AuditInterval` (estimate, low, high) of the
            batch's positive share, the share of positives among the flagged cases, and the
            share of the batch's positives that are flagged.
        cost: expected cost per case ``(C_FP FP + C_FN FN) / N`` at the threshold (the unit of
            the report verdict's ``value``; ``costs`` says which costs, 1 and 1 when the run
            logged none: then it is the error rate).
        n_labels: labels in so far; n_planned: labels the plan asked for.
        n_positive: positives among the labels.
        roc_shift_p: p-value of "production's TPR and FPR at the threshold equal the test
            set's" (NaN without the test counts); below ``roc_shift_alpha`` the ROC has shifted.
        roc_shift_alpha: the test's level (:data:`ROC_SHIFT_ALPHA`).
        test_tpr, test_fpr: the test set's TPR and FPR at the threshold (NaN without counts).
        predicted_precision: precision the test ROC predicts at the audited prevalence.
        confidence: the intervals' level; method: the interval construction.
        costs: ``{"fp": .., "fn": ..}`` used for ``cost``.
        strata_unlabelled: strata with no label yet (their share is then unknown: wide limits).
        text: one line for a reviewer.
    """

    threshold: float
    prevalence: AuditInterval
    precision: AuditInterval
    recall: AuditInterval
    cost: AuditInterval
    n_labels: int
    n_planned: int
    n_positive: int
    roc_shift_p: float
    roc_shift_alpha: float
    test_tpr: float
    test_fpr: float
    predicted_precision: float
    confidence: float
    method: str
    costs: dict[str, float] = field(default_factory=dict)
    strata_unlabelled: int = 0
    text: str = ""

    @property
    def roc_shifted(self) -> bool:
        """True when the ROC-shift test rejects at ``roc_shift_alpha``."""
        return bool(self.roc_shift_p < self.roc_shift_alpha)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (NaN as None)."""

        def num(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        out: dict[str, Any] = {}
        for k in ("prevalence", "precision", "recall", "cost"):
            iv = getattr(self, k)
            out[k] = {"estimate": num(iv.estimate), "low": num(iv.low), "high": num(iv.high)}
        for k in ("threshold", "roc_shift_p", "roc_shift_alpha", "test_tpr", "test_fpr",
                  "predicted_precision", "confidence"):  # fmt: skip
            out[k] = num(getattr(self, k))
        for k in ("n_labels", "n_planned", "n_positive", "strata_unlabelled"):
            out[k] = int(getattr(self, k))
        out.update(method=self.method, costs=dict(self.costs), text=self.text)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AuditEstimate:
        """Inverse of :meth:`to_dict`."""

        def num(v: Any) -> float:
            return math.nan if v is None else float(v)

        ivs = {
            k: AuditInterval(num(d[k]["estimate"]), num(d[k]["low"]), num(d[k]["high"]))
            for k in ("prevalence", "precision", "recall", "cost")
        }
        return cls(
            threshold=num(d["threshold"]),
            **ivs,
            n_labels=int(d["n_labels"]),
            n_planned=int(d["n_planned"]),
            n_positive=int(d["n_positive"]),
            roc_shift_p=num(d["roc_shift_p"]),
            roc_shift_alpha=num(d["roc_shift_alpha"]),
            test_tpr=num(d["test_tpr"]),
            test_fpr=num(d["test_fpr"]),
            predicted_precision=num(d["predicted_precision"]),
            confidence=num(d["confidence"]),
            method=str(d["method"]),
            costs={k: float(v) for k, v in (d.get("costs") or {}).items()},
            strata_unlabelled=int(d.get("strata_unlabelled", 0)),
            text=str(d.get("text", "")),
        )


# ---------------------------------------------------------------------------- checks
def _check_int(value: Any, arg: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < low:
        raise ValueError(f"{arg} must be an integer >= {low}, got {value!r:.80}")
    return int(value)


def _check_threshold(threshold: Any) -> float:
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        t = math.nan
    if isinstance(threshold, bool) or not math.isfinite(t):
        raise ValueError(f"threshold must be a finite score, got {threshold!r:.80}")
    return t


def _guess_prevalence(counts: RocCounts, production: ScoreCounts) -> float:
    """The label-free estimate (prior shift) as the design's guess; the test prevalence if none."""
    try:
        eta = estimate_prevalence(counts, production, n_boot=1, n_check=0).estimate
    except ValueError:  # InsufficientDataError is one; the guess only steers the allocation
        eta = float(counts.prevalence)
    return float(min(0.5, max(eta, 10.0 / production.n)))


# ---------------------------------------------------------------------------- design
def _test_at(counts: RocCounts, cuts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Test positives and negatives scoring ``>= cut`` for each cut (exact)."""
    k = np.searchsorted(-counts.thresholds, -cuts, side="right")  # thresholds >= cut
    tp = np.concatenate(([0], counts.tp))[k]
    fp = np.concatenate(([0], counts.fp))[k]
    return tp.astype(np.float64), fp.astype(np.float64)


def _candidate_cuts(production: ScoreCounts, t: float) -> np.ndarray:
    """Descending candidate boundaries: production scores at log-spaced ranks, and ``t``."""
    ranks = np.unique(np.round(np.geomspace(1, production.n, _CANDIDATES)).astype(np.int64))
    idx = np.unique(np.searchsorted(production.n_above, ranks, side="left"))
    cand = production.thresholds[idx[idx < production.n_thresholds]]
    cand = cand[cand > production.min_score]  # a cut at the lowest score leaves nothing below
    cand = np.unique(np.concatenate([cand, [t]]))[::-1]
    n_at = np.asarray(production.count_at_or_above(cand))
    # drop cuts that leave an empty bin (same count as the cut above), never the threshold
    keep = np.ones(cand.size, dtype=bool)
    prev_count = 0
    for i in range(cand.size):  # a few hundred candidates, not samples
        if n_at[i] == prev_count and cand[i] != t:
            keep[i] = False
        else:
            prev_count = n_at[i]
    cand = cand[keep]
    n_at = n_at[keep]
    j = int(np.flatnonzero(cand == t)[0])
    if j > 0 and n_at[j] == n_at[j - 1]:  # the threshold displaces an equal-count neighbour
        cand = np.delete(cand, j - 1)
    return cand


def design_audit(
    counts: RocCounts,
    production: ScoreCounts,
    budget: int,
    threshold: float,
    *,
    prevalence: float | None = None,
    n_strata: int | None = None,
    focus: str = "balanced",
) -> AuditDesign:
    """Plan a stratified audit of one production batch (no sample drawn yet).

    Args:
        counts: the run's ROC counts on its labeled test set (the guess of where positives are).
        production: the batch's exact :class:`ScoreCounts`.
        budget: labels to plan, ``1 <= budget <= production.n`` (at least 4 for two strata).
        threshold: the decision threshold; it becomes a stratum boundary and must flag some but
            not all of the batch.
        prevalence: the guessed prevalence (default: the label-free estimate of
            :func:`~mlflow_imbalance.stats.prevalence.estimate_prevalence`, at least ``10 / N``).
        n_strata: strata (default ``clip(budget // 20, 4, 10)``, fewer when the budget or the
            batch's distinct scores cannot fill them).
        focus: ``"balanced"`` (default): Neyman allocation for η, precision and recall
            together (weights :data:`WEIGHTS`). ``"precision"``: the flagged strata get at least
            the labels for an expected 95 % half-width of precision of
            :data:`PRECISION_FOCUS_HALF_WIDTH` (Neyman within them), as far as keeping
            :data:`MIN_BELOW_SHARE` of the budget (at least :data:`MIN_BELOW_LABELS`) below
            the threshold allows; the rest as balanced. One budget cannot serve both: at
            η = 0.01 with 1 % flagged, precision ±0.06 takes about 210 of 300 labels above the
            threshold, where η's variance is least with most of them below
            (docs/statistics.md, "Audits", measured).

    Returns:
        An :class:`AuditDesign`.

    Raises:
        ValueError: naming ``budget``, ``threshold``, ``prevalence``, ``n_strata`` or
            ``focus``.
    """
    if focus not in FOCUSES:
        raise ValueError(f"focus must be one of {FOCUSES}, got {focus!r:.80}")
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    if not isinstance(production, ScoreCounts):
        raise TypeError(f"production must be a ScoreCounts, got {type(production).__name__}")
    n = production.n
    budget = _check_int(budget, "budget", 4)
    if budget > n:
        raise ValueError(f"budget={budget} exceeds the batch's {n:,} cases")
    t = _check_threshold(threshold)
    flagged = int(production.count_at_or_above(t))
    if flagged == 0 or flagged == n:
        which = "none" if flagged == 0 else "all"
        raise ValueError(
            f"threshold={t:.6g} flags {which} of the batch's {n:,} cases (scores "
            f"{production.min_score:.6g} to {production.max_score:.6g}): an audit at it has "
            "nothing to compare; pass a threshold inside the batch's scores"
        )
    if prevalence is None:
        eta = _guess_prevalence(counts, production)
    else:
        eta = float(prevalence)
        if not 0.0 < eta < 1.0:
            raise ValueError(f"prevalence must lie in (0, 1), got {prevalence!r:.80}")
    h_max = (
        int(np.clip(budget // 20, 4, 10))
        if n_strata is None
        else _check_int(n_strata, "n_strata", 2)
    )
    h_max = max(2, min(h_max, budget // MIN_LABELS))

    # fine bins between candidate cuts, and the guessed positive share in each
    cand = _candidate_cuts(production, t)
    n_at = np.asarray(production.count_at_or_above(cand), dtype=np.int64)
    sizes = np.diff(np.concatenate(([0], n_at, [n])))
    tp_at, _ = _test_at(counts, cand)
    d_tp = np.diff(np.concatenate(([0.0], tp_at, [float(counts.n_pos)])))
    tpr_b = (d_tp + 0.5 * sizes / n) / (float(counts.n_pos) + 0.5)
    p_b = np.clip(n * eta * tpr_b / np.maximum(sizes, 1), 0.0, 1.0)
    j = int(np.flatnonzero(cand == t)[0])  # bins 0..j are flagged
    flag_b = np.arange(sizes.size) <= j
    y_b = sizes * p_b
    y_all, y_a = max(y_b.sum(), 1e-12), max(y_b[flag_b].sum(), 1e-12)
    r_guess = y_a / y_all

    n_a = float(sizes[flag_b].sum())
    p_guess = min(max(y_a / n_a, 1e-9), 1 - 1e-9)
    r_c = min(max(r_guess, 1e-9), 1 - 1e-9)
    eta_c = min(max(y_all / n, 1e-12), 1 - 1e-9)
    coef_a = (
        WEIGHTS[0] / (n**2 * eta_c * (1 - eta_c))
        + WEIGHTS[1] / (n_a * n * p_guess * (1 - p_guess))
        + WEIGHTS[2] * eta_c * (1 - r_c) ** 2 / (y_all**2 * r_c * (1 - r_c))
    )
    coef_b = WEIGHTS[0] / (n**2 * eta_c * (1 - eta_c)) + WEIGHTS[2] * eta_c * r_c**2 / (
        y_all**2 * r_c * (1 - r_c)
    )

    def mass(n_x: np.ndarray, p_x: np.ndarray, flag: np.ndarray) -> np.ndarray:
        """Neyman mass ``sqrt(c_h)`` for the weighted sum of the three design effects."""
        return n_x * np.sqrt(p_x * (1 - p_x)) * np.sqrt(np.where(flag, coef_a, coef_b))

    f = mass(sizes, p_b, flag_b)

    # strata: equal cumulative Neyman mass on each side of the threshold; as many strata above
    # as the labels' share above (the precision focus's share, guessed unstratified, if larger)
    fa, fb = f[: j + 1].sum(), f[j + 1 :].sum()
    share_a = fa / max(fa + fb, 1e-300)
    if focus == "precision":
        need = _precision_labels(np.array([n_a]), np.array([p_guess]))
        share_a = max(share_a, min(need, budget - _keep_below(budget, 0)) / budget)
    h_a = int(np.clip(round(h_max * share_a), 1, h_max - 1))
    h_a = min(h_a, j + 1)
    h_b = min(h_max - h_a, sizes.size - j - 1)
    ends_a = _split(f[: j + 1], sizes[: j + 1], h_a)
    ends_b = _split(f[j + 1 :], sizes[j + 1 :], h_b) + j + 1
    ends = np.concatenate([ends_a, ends_b])  # exclusive bin ends of each stratum
    starts = np.concatenate(([0], ends[:-1]))
    n_h = np.add.reduceat(sizes, starts)
    y_h = np.add.reduceat(y_b, starts)
    above = ends <= j + 1
    p_h = np.clip(y_h / n_h, 0.0, 1.0)
    weight = mass(n_h.astype(np.float64), p_h, above)
    alloc = _allocate(budget, n_h, weight)
    if focus == "precision":
        alloc = _precision_first(budget, n_h, weight, above, p_h, alloc)
    cuts = cand[ends[:-1] - 1]
    design = AuditDesign(
        threshold=t,
        cuts=cuts,
        n_cases=n_h.astype(np.int64),
        allocation=alloc,
        above=above,
        prior_rate=p_h,
        prevalence_guess=eta,
        budget=budget,
        focus=focus,
    )
    logger.debug("audit design: %d strata, allocation %s", design.n_strata, alloc.tolist())
    return design


def sample_audit(design: AuditDesign, scores: Any, seed: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """Draw the design's sample: ``allocation[h]`` cases of each stratum, without replacement.

    Args:
        design: the plan.
        scores: the batch's scores (1-d), in the positions the indices refer to.
        seed: int, Generator or None; the same seed and scores give the same indices.

    Returns:
        ``(indices, strata)``: the chosen positions, ascending (int64), and the stratum of each.

    Raises:
        ValueError: the scores' strata sizes differ from the design's (other scores).
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    strata = design.stratum_of(s)
    sizes = np.bincount(strata, minlength=design.n_strata)
    if not np.array_equal(sizes, design.n_cases):
        raise ValueError(
            f"scores do not match the design: strata sizes {sizes.tolist()} against the "
            f"design's {design.n_cases.tolist()}"
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    order = np.argsort(strata, kind="stable")  # positions grouped by stratum, ascending
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    picks = [
        order[starts[h] + rng.choice(int(sizes[h]), int(design.allocation[h]), replace=False)]
        for h in range(design.n_strata)  # one draw per stratum (<= 10), not per case
    ]
    idx = np.sort(np.concatenate(picks)).astype(np.int64)
    return idx, strata[idx]


# ---------------------------------------------------------------------------- estimate
def estimate_audit(
    design: AuditDesign,
    strata: Any,
    labels: Any,
    *,
    counts: RocCounts | None = None,
    costs: dict[str, float] | None = None,
    confidence: float = 0.95,
    method: str = DEFAULT_METHOD,
    n_draws: int = 20_000,
    seed: Any = 0,
) -> AuditEstimate:
    """Stratified estimates from the labels in so far, with intervals and the ROC-shift test.

    The intervals (``method="directional"``) are quantiles of joint beta draws per stratum
    holding one Clopper-Pearson pseudo-observation split over the strata and directed towards
    each limit: a linearised variance is 0 in a stratum without positives, these keep an upper
    tail there. Measured by ``benchmarks/bench_audit.py`` (R = 1,000, 72 cells: η 1e-3 to 0.1,
    100-1,000 labels, prior shift and three drifts): η, precision and recall covered
    0.936-1.000 (docs/statistics.md, "Audits").

    Args:
        design: the plan the labelled cases were drawn by.
        strata: the stratum of each labelled case (``(k,)`` ints).
        labels: its label, 0/1 (``(k,)``).
        counts: the run's test ROC counts (for ``roc_shift_p`` and the test-set predictions);
            None leaves them NaN.
        costs: ``{"fp": C_FP, "fn": C_FN}`` for ``cost``; None = 1 and 1 (the error rate).
        confidence: the intervals' level.
        method: the interval construction, ``"directional"`` (default), ``"split"``,
            ``"jeffreys"`` or ``"conservative"`` (:mod:`~mlflow_imbalance.stats._audit_draws`;
            measured in docs/statistics.md, "Audits").
        n_draws: joint draws for the intervals and the test.
        seed: the draws' seed (the same labels give the same intervals).

    Returns:
        An :class:`AuditEstimate`.
    """
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {', '.join(INTERVAL_METHODS)}, got {method!r}")
    st = np.asarray(strata, dtype=np.int64).reshape(-1)
    lab = np.asarray(labels, dtype=np.int64).reshape(-1)
    h = design.n_strata
    m = np.bincount(st, minlength=h)
    y = np.bincount(st, weights=lab, minlength=h)
    if np.any(m > design.n_cases):
        raise ValueError("more labels than cases in a stratum: labels do not fit the design")
    cfp, cfn = (1.0, 1.0) if costs is None else (float(costs["fp"]), float(costs["fn"]))
    test_kw: dict[str, Any] = {}
    tpr_t = fpr_t = math.nan
    if counts is not None:
        tp, fp = _test_at(counts, np.asarray([design.threshold]))
        test_kw = dict(test_tp=tp, test_fp=fp, test_n_pos=counts.n_pos, test_n_neg=counts.n_neg)
        tpr_t, fpr_t = float(tp[0] / counts.n_pos), float(fp[0] / counts.n_neg)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    k = audit_kernel(
        design.n_cases[None], m[None], y[None], design.above[None], cost_fp=cfp, cost_fn=cfn,
        confidence=confidence, n_draws=n_draws, method=method, rng=rng, **test_kw,
    )  # fmt: skip

    def iv(q: str) -> AuditInterval:
        return AuditInterval(float(k[q][0]), float(k[q + "_low"][0]), float(k[q + "_high"][0]))

    eta = iv("prevalence")
    pred = math.nan
    if counts is not None and math.isfinite(eta.estimate):
        den = eta.estimate * tpr_t + (1 - eta.estimate) * fpr_t
        pred = eta.estimate * tpr_t / den if den > 0 else math.nan
    est = AuditEstimate(
        threshold=design.threshold,
        prevalence=eta,
        precision=iv("precision"),
        recall=iv("recall"),
        cost=iv("cost"),
        n_labels=int(m.sum()),
        n_planned=int(design.budget),
        n_positive=int(y.sum()),
        roc_shift_p=float(k["roc_shift_p"][0]),
        roc_shift_alpha=ROC_SHIFT_ALPHA,
        test_tpr=tpr_t,
        test_fpr=fpr_t,
        predicted_precision=pred,
        confidence=float(confidence),
        method=method,
        costs={"fp": cfp, "fn": cfn},
        strata_unlabelled=int(np.sum(m == 0)),
    )
    object.__setattr__(est, "text", _sentence(est))
    return est


def _sentence(e: AuditEstimate) -> str:
    s = (
        f"Audit at threshold {e.threshold:.4g} ({e.n_labels} of {e.n_planned} labels in, "
        f"{e.n_positive} positive; {e.confidence:.0%}): η {e.prevalence.text}, precision "
        f"{e.precision.text}, recall {e.recall.text}"
    )
    if e.strata_unlabelled:
        s += f"; {e.strata_unlabelled} strata have no label yet (their share is unknown)"
    if math.isnan(e.roc_shift_p):
        return s
    p = "p < 0.001" if e.roc_shift_p < 0.001 else f"p = {e.roc_shift_p:.2g}"
    if e.roc_shifted:
        return s + (
            f"; production's TPR/FPR at the threshold differ from the test set's ({p}): "
            "the ROC has shifted, trust these labels over the test set"
        )
    return s + f"; TPR/FPR consistent with the test set ({p})"


# ---------------------------------------------------------------------------- budget
def expected_half_widths(design: AuditDesign, confidence: float = 0.95) -> dict[str, float]:
    """Half-widths of the prevalence and precision intervals the design should give.

    Normal approximation with the design's stratified variance at the guessed shares
    (Cochran 1977 eq. 5.6, with the finite population correction): a planning figure, not a
    coverage claim.
    """
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    n_h, a, p = design.n_cases.astype(float), design.allocation.astype(float), design.prior_rate
    fpc = np.where(n_h > 1, (n_h - a) / np.maximum(n_h - 1, 1), 0.0)
    v_h = p * (1 - p) / a * fpc
    w = n_h / n_h.sum()
    wa = np.where(design.above, n_h, 0.0) / n_h[design.above].sum()
    return {
        "prevalence": float(z * math.sqrt(np.sum(w**2 * v_h))),
        "precision": float(z * math.sqrt(np.sum(wa**2 * v_h))),
    }


@dataclass(frozen=True)
class AuditBudget:
    """Labels an audit needs, planned from the design's expected variance.

    Attributes:
        precision_labels: labels for ``precision_half_width`` (None when not asked).
        prevalence_labels: labels for ``prevalence_half_width`` (None when not asked).
        precision_half_width, prevalence_half_width: the targets.
        text: one sentence.
    """

    precision_labels: int | None
    prevalence_labels: int | None
    precision_half_width: float | None
    prevalence_half_width: float | None
    text: str


def audit_budget(
    counts: RocCounts,
    production: ScoreCounts,
    threshold: float,
    *,
    precision_half_width: float | None = 0.05,
    prevalence_half_width: float | None = None,
    prevalence: float | None = None,
    confidence: float = 0.95,
) -> AuditBudget:
    """How many labels drawn by :func:`design_audit` give the stated half-widths.

    The smallest budget whose design's expected half-width (:func:`expected_half_widths`) is
    at most the target, by bisection over the budget. Pinning the prevalence itself is costly
    at low prevalence: its half-width shrinks like ``sqrt(eta / n)`` even with a good design.

    Args:
        counts: the run's test ROC counts.
        production: the batch's :class:`ScoreCounts`.
        threshold: the decision threshold.
        prevalence: the guessed prevalence (default as :func:`design_audit`).
        precision_half_width: target half-width of precision at the threshold (None: skip).
        prevalence_half_width: target absolute half-width of the prevalence (None: skip).
        confidence: the intervals' level.

    Returns:
        An :class:`AuditBudget` (a count is the whole batch when even that falls short).
    """
    eta = _guess_prevalence(counts, production) if prevalence is None else float(prevalence)
    hi_n = production.n
    out: dict[str, int | None] = {}
    for key, target in (("precision", precision_half_width), ("prevalence", prevalence_half_width)):
        if target is None:
            out[key] = None
            continue
        if not 0.0 < float(target) < 1.0:
            raise ValueError(f"{key}_half_width must lie in (0, 1), got {target!r:.80}")

        def hw(b: int, key: str = key) -> float:
            d = design_audit(counts, production, b, threshold, prevalence=eta)
            return expected_half_widths(d, confidence)[key]

        lo, hi = 4, hi_n
        if hw(lo) <= target:
            out[key] = lo
            continue
        while hi - lo > max(1, lo // 100):  # to 1 % of the answer
            mid = (lo + hi) // 2
            if hw(mid) <= target:
                hi = mid
            else:
                lo = mid
        out[key] = hi
    parts = []
    if out["precision"] is not None:
        parts.append(f"{out['precision']:,} labels for precision ±{precision_half_width:g}")
    if out["prevalence"] is not None:
        parts.append(f"{out['prevalence']:,} labels for η ±{prevalence_half_width:g}")
    text = f"At threshold {float(threshold):.4g} (η ≈ {eta:.3g}): " + "; ".join(parts) + "."
    if out["prevalence"] is not None and eta < 0.05:
        text += " Pinning η itself is costly at low prevalence."
    return AuditBudget(
        out["precision"], out["prevalence"], precision_half_width, prevalence_half_width, text
    )
