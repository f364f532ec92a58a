"""Deciding when the deployment prevalence is known only as a range.

A deployed decision is a fixed rule: one run's model at one threshold (predict positive when
``score >= t``), or one of the two decisions that need no model -- flag nothing, flag
everything. At a prevalence η its expected cost per case is linear in η (Maxion & Roberts §5.2;
Brabec et al. 2020, eq. 8 for the rates behind it)::

    C(d, η) = η · C_FN · (1 − TPR_d) + (1 − η) · C_FP · FPR_d

and the best any available decision can do at η, ``B(η) = min_d C(d, η)``, is a minimum of
lines: concave and piecewise linear (the lower envelope of the cost lines, the cost curve of
the runs' ROC convex hulls with the trivial decisions included; Drummond & Holte's cost curves,
the slides' "COST CURVES"). The *regret* of ``d`` at η, ``C(d, η) − B(η)``, is a line minus a
concave function, so it is convex in η: over an interval ``[low, high]`` its largest value is
at one of the two ends. The decision that stays good over the interval is therefore found
exactly from the two ends alone (:func:`minimax_regret`), over every threshold of every run.

Why minimax regret (and not the least expected cost under the estimate's distribution): the
range is what *none* of the prevalence estimates rules out, and where the estimates are least
trustworthy (drift that the prior-shift check cannot see) their bootstrap distribution is
exactly what is wrong; a worst case over the range needs no distribution, is exact from two
points, and says in the cost unit how much the decision can lose. docs/statistics.md
("Deciding over a range of η") gives the argument and ``benchmarks/bench_decision.py`` its
measured cost against an oracle. The regret uses the runs' test ROC counts as they are: it
ignores the test set's own sampling error, which the verdict's intervals and its "beats
flagging nothing" check (report/analysis/verdict.py) account for instead.

:func:`common_prevalence_test` asks whether several runs' estimates of one production batch
are consistent with one η (a batch is one population whichever model scored it).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats as _sps

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_cost, check_prevalence

logger = logging.getLogger(__name__)

__all__ = [
    "DecisionOption",
    "RobustChoice",
    "SettlingBudget",
    "best_cost",
    "common_prevalence_test",
    "decision_cost",
    "labels_to_settle",
    "minimax_regret",
    "settle_estimate",
    "with_audit_advice",
    "worst_regret",
]


@dataclass(frozen=True)
class DecisionOption:
    """One deployable decision and its test-set rates.

    Attributes:
        kind: ``"run"``, ``"nothing"`` (threshold +inf: no case flagged) or ``"everything"``
            (threshold -inf: every case flagged).
        run: the run's name (None unless ``kind == "run"``).
        threshold: predict positive when ``score >= threshold``.
        tpr: true-positive rate on the run's test counts (0 / 1 for the trivial decisions).
        fpr: false-positive rate likewise.
    """

    kind: str
    run: str | None
    threshold: float
    tpr: float
    fpr: float

    def cost(self, eta: Any, cost_fp: float, cost_fn: float) -> Any:
        """Expected cost per case at ``eta`` (scalar or array)."""
        return decision_cost(self.tpr, self.fpr, eta, cost_fp, cost_fn)

    @property
    def label(self) -> str:
        """``"flag nothing"``, ``"flag everything"`` or ``"<run> at <threshold>"``."""
        if self.kind == "nothing":
            return "flag nothing"
        if self.kind == "everything":
            return "flag everything"
        return f"{self.run} at {self.threshold:.6g}"


NOTHING = DecisionOption("nothing", None, math.inf, 0.0, 0.0)
EVERYTHING = DecisionOption("everything", None, -math.inf, 1.0, 1.0)


@dataclass(frozen=True)
class RobustChoice:
    """The decision of least worst-case regret over ``[low, high]`` (:func:`minimax_regret`).

    Attributes:
        option: the decision.
        regret: its largest regret over the range, per case (0 when it is best throughout).
        low: the range's lower end.
        high: its upper end.
        best_low: the best decision at ``low`` (what knowing η = low would choose).
        best_high: the best decision at ``high``.
        regret_nothing: flagging nothing's worst-case regret over the range.
        regret_everything: flagging everything's.
        regret_by_run: each run's least worst-case regret over its thresholds.
    """

    option: DecisionOption
    regret: float
    low: float
    high: float
    best_low: DecisionOption
    best_high: DecisionOption
    regret_nothing: float
    regret_everything: float
    regret_by_run: dict[str, float]

    @property
    def uniform(self) -> bool:
        """True when one decision is best at every η of the range (regret 0)."""
        return self.regret <= 0.0


def decision_cost(tpr: Any, fpr: Any, eta: Any, cost_fp: float, cost_fn: float) -> Any:
    """Expected cost per case of a decision with rates ``(tpr, fpr)`` at prevalence ``eta``.

    ``η · C_FN · (1 − TPR) + (1 − η) · C_FP · FPR`` (Maxion & Roberts §5.2). Broadcasts.
    """
    eta = np.asarray(eta, dtype=float)
    return eta * cost_fn * (1.0 - np.asarray(tpr, dtype=float)) + (1.0 - eta) * cost_fp * (
        np.asarray(fpr, dtype=float)
    )


def _rates(c: RocCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thresholds, TPR, FPR) of every stored threshold of ``c``."""
    return (
        np.asarray(c.thresholds, dtype=float),
        np.asarray(c.tpr, dtype=float),
        np.asarray(c.fpr, dtype=float),
    )


def _check_range(low: Any, high: Any) -> tuple[float, float]:
    """``(low, high)`` as floats: ``0 <= low <= high < 1`` (``low`` may be 0, ``high`` not)."""
    lo = (
        0.0
        if isinstance(low, int | float) and low == 0
        else float(check_prevalence(low, "low", scalar=True))
    )
    hi = float(check_prevalence(high, "high", scalar=True))
    if not lo <= hi:
        raise ValueError(f"low must not exceed high, got low={low!r}, high={high!r}")
    return lo, hi


def best_cost(
    counts: Mapping[str, RocCounts], eta: Any, cost_fp: float, cost_fn: float
) -> np.ndarray:
    """The least expected cost per case any decision achieves at ``eta`` (scalar or array).

    The minimum over every threshold of every run in ``counts`` and the two trivial decisions
    (flag nothing: ``η · C_FN``; flag everything: ``(1 − η) · C_FP``). Exact on the counts.
    """
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    eta = np.atleast_1d(np.asarray(eta, dtype=float))
    best = np.minimum(eta * cfn, (1.0 - eta) * cfp)
    for c in counts.values():
        _, tpr, fpr = _rates(c)
        if tpr.size:
            best = np.minimum(best, decision_cost(tpr[None, :], fpr[None, :], eta[:, None],
                                                  cfp, cfn).min(axis=1))  # fmt: skip
    return best


def worst_regret(
    tpr: float,
    fpr: float,
    counts: Mapping[str, RocCounts],
    low: float,
    high: float,
    cost_fp: float,
    cost_fn: float,
) -> float:
    """The largest regret over ``[low, high]`` of a fixed decision with rates ``(tpr, fpr)``.

    Regret against the best decision available among ``counts`` (and the trivial ones) at each
    η; convex in η, so the larger of its values at the two ends (module docstring).
    """
    lo, hi = _check_range(low, high)
    ends = np.array([lo, hi])
    reg = decision_cost(tpr, fpr, ends, cost_fp, cost_fn) - best_cost(counts, ends, cost_fp,
                                                                      cost_fn)  # fmt: skip
    return float(max(0.0, np.max(reg)))


def minimax_regret(
    counts: Mapping[str, RocCounts],
    low: float,
    high: float,
    cost_fp: float,
    cost_fn: float,
) -> RobustChoice:
    """The decision whose largest regret over ``[low, high]`` is least.

    Candidates: every stored threshold of every run (predict positive when
    ``score >= threshold``), flag nothing and flag everything. Regret is convex in η (module
    docstring), so each candidate's worst case is the larger of its regrets at ``low`` and
    ``high``; the minimum over candidates is exact, vectorised over thresholds. With
    ``low == high`` this is the least expected cost at that η.

    Ties (equal worst-case regret) go to flagging nothing, then flagging everything (no model
    is needed for either), then to the run first by name, and within a run to the threshold of
    lower FPR (as :func:`~mlflow_imbalance.core.curves.optimal_operating_point`).

    Args:
        counts: the runs that may be chosen, by name (runs too small to be judged are left out
            by the caller).
        low: lowest prevalence of the range (0 allowed).
        high: highest prevalence (``>= low``).
        cost_fp: cost of one false positive.
        cost_fn: cost of one false negative.

    Returns:
        :class:`RobustChoice`.
    """
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    lo, hi = _check_range(low, high)
    ends = np.array([lo, hi])
    best = best_cost(counts, ends, cfp, cfn)

    def worst(tpr: np.ndarray, fpr: np.ndarray) -> np.ndarray:
        reg = decision_cost(tpr[:, None], fpr[:, None], ends[None, :], cfp, cfn) - best
        return np.maximum(reg.max(axis=1), 0.0)

    best_option, best_regret, by_run = _least(counts, worst)
    r_nothing = float(worst(np.zeros(1), np.zeros(1))[0])
    r_every = float(worst(np.ones(1), np.ones(1))[0])
    return RobustChoice(
        option=best_option,
        regret=best_regret,
        low=lo,
        high=hi,
        best_low=_best_at(counts, lo, cfp, cfn),
        best_high=_best_at(counts, hi, cfp, cfn),
        regret_nothing=r_nothing,
        regret_everything=r_every,
        regret_by_run=by_run,
    )


def _least(
    counts: Mapping[str, RocCounts], loss: Any
) -> tuple[DecisionOption, float, dict[str, float]]:
    """The decision of least ``loss(tpr, fpr)`` (arrays in, array out), its loss, and each run's.

    Ties go to flagging nothing, then flagging everything, then the run first by name, and
    within a run to the threshold of lower FPR.
    """
    best_option, best = NOTHING, float(loss(np.zeros(1), np.zeros(1))[0])
    every = float(loss(np.ones(1), np.ones(1))[0])
    if every < best:
        best_option, best = EVERYTHING, every
    by_run: dict[str, float] = {}
    for name in sorted(counts):
        thr, tpr, fpr = _rates(counts[name])
        if not tpr.size:
            continue
        values = loss(tpr, fpr)
        m = float(values.min())
        by_run[name] = m
        if m < best:
            cand = np.flatnonzero(values == m)
            k = int(cand[np.argmin(fpr[cand])])
            best_option = DecisionOption("run", name, float(thr[k]), float(tpr[k]), float(fpr[k]))
            best = m
    return best_option, best, by_run


def _best_at(counts: Mapping[str, RocCounts], eta: float, cfp: float, cfn: float) -> DecisionOption:
    """The least-cost decision at ``eta`` (ties as :func:`minimax_regret`)."""
    return _least(counts, lambda tpr, fpr: decision_cost(tpr, fpr, eta, cfp, cfn))[0]


@dataclass(frozen=True)
class CommonPrevalence:
    """Are several estimates of one batch's prevalence consistent with one η?

    Attributes:
        estimate: the inverse-variance weighted common η (None with fewer than two usable
            estimates).
        p_value: Cochran's Q test of one common value (None: not tested).
        disagree: indices of the estimates that disagree with the common value (empty when
            the test passes).
    """

    estimate: float | None
    p_value: float | None
    disagree: tuple[int, ...]


def common_prevalence_test(
    estimates: Sequence[tuple[float, float, float]], confidence: float = 0.95, level: float = 0.05
) -> CommonPrevalence:
    """Cochran's Q test that estimates ``(estimate, low, high)`` share one true value.

    Each estimate's standard error is its interval's half-width on the side facing the common
    value divided by the normal quantile of ``confidence`` (the prevalence intervals are
    asymmetric near 0); ``Q = Σ w_i (e_i − ē)²`` with ``w_i = 1 / se_i²`` and ``ē`` the weighted
    mean, referred to χ² with ``k − 1`` degrees of freedom (Cochran 1954). The estimates of one
    batch by several runs share its production scores, so they are positively correlated and
    the test is conservative (it names fewer disagreements than an exact test would). When it
    rejects at ``level``, the estimate of largest standardised residual is named and the test
    repeated on the rest, until the rest agree; two estimates that disagree are both named.
    """
    z = float(_sps.norm.ppf(0.5 + confidence / 2))
    rows = [(float(e), float(lo), float(hi)) for e, lo, hi in estimates]
    usable = [i for i, (_, lo, hi) in enumerate(rows) if hi > lo]
    if len(usable) < 2:
        return CommonPrevalence(None, None, ())
    first = _cochran([rows[i] for i in usable], z)
    named: list[int] = []
    rest = list(usable)
    p, resid = first[1], first[2]
    while p < level:
        if len(rest) <= 2:
            named.extend(rest)
            break
        worst = int(np.argmax(resid))
        named.append(rest.pop(worst))
        _, p, resid = _cochran([rows[i] for i in rest], z)
    return CommonPrevalence(first[0], first[1], tuple(sorted(named)))


def _cochran(rows: Sequence[tuple[float, float, float]], z: float) -> tuple[float, float, Any]:
    """(weighted common value, Q's p-value, standardised residuals) of ``rows``."""
    e = np.array([r[0] for r in rows])
    lo = np.array([r[1] for r in rows])
    hi = np.array([r[2] for r in rows])
    se = np.maximum((hi - lo) / (2 * z), 1e-300)
    w = 1.0 / se**2
    common = float(np.sum(w * e) / np.sum(w))
    for _ in range(3):  # the side facing the common value, refined
        half = np.where(e < common, hi - e, e - lo)
        half = np.where(half > 0, half, (hi - lo) / 2)
        se = np.maximum(half / z, 1e-300)
        w = 1.0 / se**2
        common = float(np.sum(w * e) / np.sum(w))
    q = float(np.sum(w * (e - common) ** 2))
    p = float(_sps.chi2.sf(q, len(rows) - 1))
    resid = np.abs(e - common) / np.sqrt(np.maximum(se**2 - 1.0 / np.sum(w), 1e-300))
    return common, p, resid


def lowest_cost_limits(
    counts: RocCounts,
    prevalences: Any,
    cost_fp: float,
    cost_fn: float,
    *,
    n_boot: int = 1000,
    seed: Any = 0,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of the lowest expected cost per case at each prevalence.

    The construction of the tables' and the card's cost interval
    (:func:`~mlflow_imbalance.stats.headline.headline_intervals` with ``costs``: the Bayesian
    count bootstrap on thinned counts, :func:`~mlflow_imbalance.stats.posterior.min_cost_interval`
    for the bias of a minimum), for the cost alone, at many prevalences from one draw set (the
    draws do not depend on the prevalences, so a prevalence's interval is the same whichever
    others are asked with it). The upper limit is capped at the cost of the better trivial
    decision, ``min(η · C_FN, (1 − η) · C_FP)``: both are available whatever the data, so the
    lowest cost never exceeds it.
    """
    from mlflow_imbalance.stats.bootstrap import (
        bayesian_statistics,
        chosen_cost_statistic,
        min_cost_statistic,
    )
    from mlflow_imbalance.stats.headline import thin_for_bootstrap

    etas = np.atleast_1d(np.asarray(prevalences, dtype=float))
    cfp, cfn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    thin = thin_for_bootstrap(counts).counts
    stat = {
        "cost": min_cost_statistic(thin, etas, cfp, cfn),
        "cost:chosen": chosen_cost_statistic(thin, etas, cfp, cfn),
    }
    reps = bayesian_statistics(thin, stat, n_boot, np.random.default_rng(seed), base_for=("cost",))
    return cost_limits_from_draws(
        counts, etas, cfp, cfn, reps["cost"], reps["cost:base"], reps["cost:chosen"],
        stat["cost"].estimate(thin), confidence,
    )  # fmt: skip


def cost_limits_from_draws(
    counts: RocCounts,
    etas: np.ndarray,
    cost_fp: float,
    cost_fn: float,
    draws: np.ndarray,
    base: np.ndarray,
    chosen: np.ndarray,
    estimate: np.ndarray,
    confidence: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The lowest-cost limits of :func:`lowest_cost_limits` from its draws, wherever they were made.

    :func:`~mlflow_imbalance.stats.posterior.min_cost_interval` around the exact lowest costs
    of ``counts`` at ``etas``, each limit capped at the better trivial decision's cost. The
    report's live verdict calls it on the draws its tables already made.
    """
    from mlflow_imbalance.core.curves import optimal_operating_point
    from mlflow_imbalance.stats.posterior import min_cost_interval

    exact = np.atleast_1d(optimal_operating_point(counts, etas, cost_fp, cost_fn).cost)
    low, high = min_cost_interval(draws, base, estimate, exact, confidence, chosen=chosen)
    cap = np.minimum(etas * cost_fn, (1.0 - etas) * cost_fp)
    return np.minimum(low, cap), np.minimum(high, cap)


@dataclass(frozen=True)
class RangeDecision:
    """What the report decides over a range of η (:func:`decide_over_range`).

    Attributes:
        option: the decision shipped.
        regret: its worst-case regret over the range, per case.
        choice: the least-regret choice before the "beats flagging nothing" check.
        upper: the upper limit of ``choice``'s run's lowest cost at the range's upper end
            (None when not checked: a trivial choice, no replicates, weighted counts).
        trivial_cost: the better trivial decision's cost there.
    """

    option: DecisionOption
    regret: float
    choice: RobustChoice
    upper: float | None
    trivial_cost: float

    @property
    def not_shown(self) -> bool:
        """True when the least-regret run was replaced: not shown to beat the trivial one."""
        return self.option != self.choice.option


def decide_over_range(
    counts: Mapping[str, RocCounts],
    low: float,
    high: float,
    cost_fp: float,
    cost_fn: float,
    *,
    n_boot: int = 1000,
    seed: Any = 0,
    confidence: float = 0.95,
) -> RangeDecision:
    """The decision of least worst-case regret over ``[low, high]``, checked against noise.

    :func:`minimax_regret` over ``counts``; a run's decision then stands only when the upper
    limit of that run's lowest expected cost at ``high`` (:func:`lowest_cost_limits`, seeded
    by ``seed``) is below the better trivial decision's cost there, else the trivial decision
    of lower worst-case regret is returned. At ``high`` a run's advantage over flagging
    nothing, ``η · C_FN`` minus its lowest cost, is largest (it is convex in η and 0 at 0);
    below it, the loss against flagging nothing is what the regret already counts. With
    ``n_boot == 0`` or weighted counts there is no limit and the run's decision stands.
    The report's verdict over a range (``report/analysis/robust.py``) and
    ``benchmarks/bench_decision.py`` both call this.
    """
    choice = minimax_regret(counts, low, high, cost_fp, cost_fn)
    opt, regret, upper = choice.option, choice.regret, None
    triv_cost = float(min(choice.high * cost_fn, (1.0 - choice.high) * cost_fp))
    if opt.kind == "run" and n_boot and not counts[opt.run].weighted:
        _, up = lowest_cost_limits(
            counts[opt.run], [choice.high], cost_fp, cost_fn, n_boot=n_boot, seed=seed,
            confidence=confidence,
        )  # fmt: skip
        upper = float(up[0])
        if upper >= triv_cost:
            if choice.regret_nothing <= choice.regret_everything:
                opt, regret = NOTHING, choice.regret_nothing
            else:
                opt, regret = EVERYTHING, choice.regret_everything
    return RangeDecision(opt, float(regret), choice, upper, triv_cost)


#: From this many labels the advice says why so many (pinning a small η is costly).
MANY_LABELS = 1000
#: The regret tolerance of the audit advice: this share of the least expected cost at the point
#: estimate (the report's verdict, the estimate's own text and ``register_decision``'s default τ).
AUDIT_TOLERANCE_SHARE = 0.1


@dataclass(frozen=True)
class SettlingBudget:
    """Labels that would make a decision's worst case acceptable (:func:`labels_to_settle`).

    Attributes:
        labels: labels drawn by the audit design (None: no half-width is small enough).
        half_width: the η half-width around the estimate within which the least worst-case
            regret is at most ``tolerance``.
        tolerance: the regret tolerance τ, per case.
        precision_half_width: the precision half-width at the threshold those labels should
            give (the design's expected variance; a planning figure).
        text: one sentence.
    """

    labels: int | None
    half_width: float
    tolerance: float
    precision_half_width: float | None
    text: str


def labels_to_settle(
    counts_by_run: Any,
    run: str,
    production: Any,
    threshold: float,
    prevalence: float,
    tolerance: float,
    cost_fp: float,
    cost_fn: float,
    confidence: float = 0.95,
) -> SettlingBudget:
    """How many audit labels would pin η down enough that the decision loses at most τ.

    The widest half-width ``h`` around ``prevalence`` over which the least worst-case regret
    (:func:`minimax_regret` over ``counts_by_run``) is at most ``tolerance`` (bisection: the
    regret grows with the range), then the labels the audit design
    (:func:`mlflow_imbalance.stats.audit.design_audit`) needs for an η half-width ``h``
    (:func:`mlflow_imbalance.stats.audit.audit_budget`), and
    the precision half-width at ``threshold`` they should give. Pinning η is costly at low
    prevalence: the labels grow like η / h².
    """
    from mlflow_imbalance.stats.audit import audit_budget, design_audit, expected_half_widths

    counts = counts_by_run[run]
    eta = max(float(prevalence), 1.0 / max(int(production.n), 1))
    lo_h, hi_h = 0.0, eta
    for _ in range(30):
        h = (lo_h + hi_h) / 2
        r = minimax_regret(counts_by_run, max(eta - h, 0.0), min(eta + h, 0.999), cost_fp, cost_fn)
        lo_h, hi_h = (h, hi_h) if r.regret <= tolerance else (lo_h, h)
    if lo_h <= 0:
        return SettlingBudget(None, 0.0, float(tolerance), None, "no η range is narrow enough")
    b = audit_budget(counts, production, threshold, precision_half_width=None,
                     prevalence_half_width=min(lo_h, 0.999), prevalence=eta,
                     confidence=confidence)  # fmt: skip
    n = b.prevalence_labels
    if n is None:
        return SettlingBudget(None, lo_h, float(tolerance), None, b.text)
    d = design_audit(counts, production, int(n), threshold, prevalence=eta)
    hw = expected_half_widths(d, confidence)["precision"]
    from mlflow_imbalance._numbers import fmt_number
    from mlflow_imbalance.stats.decision import per_cases

    per = per_cases(prevalence)  # the unit of the report's and the card's costs at this η
    text = (
        f"about {n:,} labels drawn by plan_audit(threshold={threshold:.6g}) would pin η to "
        f"±{lo_h:.2g}, where the decision loses at most {fmt_number(tolerance * per)} per "
        f"{per:,} cases (precision ±{hw:.2g} at that threshold)"
    )
    if n >= MANY_LABELS:
        text += "; many, because at low prevalence the labels grow like η / (half-width)²"
    return SettlingBudget(int(n), float(lo_h), float(tolerance), float(hw), text)


def settle_estimate(
    counts: RocCounts,
    production: Any,
    estimate: float,
    low: float,
    high: float,
    cost_fp: float,
    cost_fn: float,
    *,
    check_passed: bool = True,
    confidence: float = 0.95,
) -> SettlingBudget | None:
    """The audit advice of one run's label-free estimate, where it is needed (issue 39).

    The decision is the run's own (any of its thresholds, flag nothing, flag everything). Where
    the least worst-case regret over ``[low, high]`` (:func:`minimax_regret`) exceeds the
    tolerance τ = :data:`AUDIT_TOLERANCE_SHARE` of the least expected cost at ``estimate`` (at
    the interval's middle where the estimate is 0, at which flagging nothing costs nothing), or
    the prior-shift check failed, it is :func:`labels_to_settle` at the threshold of the
    decision over the range (the cost-optimal one at ``estimate`` when that decision is a
    trivial one). None where the range already decides within τ, where a trivial decision is
    best at the estimate (nothing to audit at a threshold), or without any least cost.
    """
    lo, hi = _check_range(low, high)
    runs = {"run": counts}
    # an estimate of 0 costs nothing to flag nothing at: judge at the interval's middle instead
    eta = float(estimate) if float(estimate) > 0 else (lo + hi) / 2
    at = _best_at(runs, eta, cost_fp, cost_fn)
    best = float(decision_cost(at.tpr, at.fpr, eta, cost_fp, cost_fn))
    tol = AUDIT_TOLERANCE_SHARE * best
    if not tol > 0:
        return None
    over = minimax_regret(runs, lo, hi, cost_fp, cost_fn)
    if over.regret <= tol and check_passed:
        return None
    opt = over.option if over.option.kind == "run" else at
    if opt.kind != "run":
        return None
    return labels_to_settle(
        runs, "run", production, opt.threshold, eta, tol, cost_fp, cost_fn, confidence
    )  # fmt: skip


def with_audit_advice(estimate: Any, counts: RocCounts, production: Any, costs: Any) -> Any:
    """A label-free estimate that says how many audit labels would settle it (issue 39).

    ``estimate`` is :func:`~mlflow_imbalance.stats.prevalence.estimate_prevalence`'s result on
    ``counts`` and ``production`` (scores or their
    :class:`~mlflow_imbalance.core.production.ScoreCounts`);
    ``costs`` ``(C_FP, C_FN)`` or ``{"fp": .., "fn": ..}`` (None: returned as is). Where
    :func:`settle_estimate` finds the interval too wide for the run's decision, or the check
    failed, the copy returned carries the budget as ``.audit`` and ends its ``.text`` with it;
    else the estimate itself. ``log_production_scores`` applies it at the run's logged costs and
    the report at its own, so equal costs give equal sentences.
    """
    from mlflow_imbalance.core.validation import check_costs

    pair = check_costs(costs)
    if pair is None:
        return estimate
    from mlflow_imbalance.core.production import ScoreCounts

    if not isinstance(production, ScoreCounts):
        production = ScoreCounts.from_scores(production)
    try:
        advice = settle_estimate(
            counts, production, estimate.estimate, estimate.low, estimate.high, pair[0],
            pair[1], check_passed=estimate.check_passed, confidence=estimate.confidence,
        )  # fmt: skip
    except Exception:  # advice only: the estimate stands without it
        logger.warning("no audit advice for this estimate", exc_info=True)
        return estimate
    if advice is None or advice.labels is None:
        return estimate
    text = f"{estimate.text}. {advice.text[0].upper()}{advice.text[1:]}"
    return replace(estimate, audit=advice, text=text)
