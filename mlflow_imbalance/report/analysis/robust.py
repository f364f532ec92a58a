"""The verdict when the deployment prevalence is known only as a range, and the trivial decisions.

Three rules on top of :mod:`.verdict`'s answer at one η (issue 37):

- **Runs too small to be judged never win.** A run with fewer than ``MIN_TEST_CLASS`` test
  positives or negatives is listed as not judged and is never the verdict's run; with no
  judged run the decision is ``"none_judged"``.
- **Flagging nothing and flagging everything are decisions** (cost criterion). A run's
  decision stands only where the upper limit of its lowest-cost interval is below the cost of
  the better trivial decision, ``min(η · C_FN, (1 − η) · C_FP)``; otherwise the verdict is that
  trivial decision. The live verdict in the page applies the same rule to the same limits.
- **A range of η** (a production batch's estimates, or ``decide_over``): the decision of least
  worst-case regret over the range (:func:`mlflow_imbalance.stats.robust.minimax_regret`), what
  it can lose at worst, its numbers at the point estimate and at the range's ends, and the
  point estimate's own decision (``at_estimate``) where it differs. The "beats flagging nothing"
  rule is applied at the range's upper end: a run's advantage over flagging nothing,
  ``η · C_FN`` minus its lowest cost, is convex in η and 0 at η = 0, so the upper end is where
  it is largest; below it, the loss against flagging nothing is what the regret counts.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from mlflow_imbalance.report.analysis._common import MIN_TEST_CLASS
from mlflow_imbalance.report.model import Verdict
from mlflow_imbalance.stats.decision import per_cases
from mlflow_imbalance.stats.robust import (
    EVERYTHING,
    NOTHING,
    DecisionOption,
    decide_over_range,
    worst_regret,
)

logger = logging.getLogger(__name__)

__all__ = ["DecideRange", "judged_runs", "none_judged", "over_range", "trivial_rule"]


class DecideRange(NamedTuple):
    """A range of η one verdict is decided over.

    Attributes:
        low: lower end (may be 0).
        high: upper end.
        source: ``"estimated"`` (a production batch) or ``"range"`` (``decide_over``).
        batch: the batch's label ("" for ``decide_over``).
        how: what the range is, in a few words ("the estimates of batch 2018 by 4 runs").
        drift: one line when the batch has drifted or its estimates disagree ("" otherwise).
    """

    low: float
    high: float
    source: str
    batch: str = ""
    how: str = ""
    drift: str = ""
    #: the batch's production counts by run (for the labels that would settle it)
    production: Mapping[str, Any] | None = None
    audited: bool = False


def not_judged_reason(c: Any) -> str:
    """Why a run is too small to be judged ("3 positives, 1 negative"), else ""."""
    if c.weighted:
        small = c.n_pos <= 0 or c.n_neg <= 0
    else:
        small = c.n_pos < MIN_TEST_CLASS or c.n_neg < MIN_TEST_CLASS
    if not small:
        return ""

    def n(k: float, what: str) -> str:
        k = float(k)
        shown = f"{int(k)}" if k == int(k) else f"{k:.3g}"
        return f"{shown} {what}{'' if k == 1 else 's'}"

    return f"{n(c.n_pos, 'positive')}, {n(c.n_neg, 'negative')}"


def judged_runs(runs: Sequence[Any]) -> tuple[list[Any], tuple[str, ...]]:
    """``(runs that can be judged, "name (3 positives, 1 negative)" for the others)``."""
    keep, lines = [], []
    for r in runs:
        why = not_judged_reason(r.counts)
        if why:
            lines.append(f"{r.name} ({why})")
        else:
            keep.append(r)
    return keep, tuple(lines)


def _trivial(eta: float, cfp: float, cfn: float) -> tuple[DecisionOption, float]:
    nothing, every = eta * cfn, (1.0 - eta) * cfp
    return (NOTHING, nothing) if nothing <= every else (EVERYTHING, every)


def _facts(opt: DecisionOption, eta: float, per: int, cfp: float, cfn: float) -> dict[str, float]:
    """Precision, alerts, caught and missed cases per ``per`` of ``opt`` at ``eta``."""
    alerts = eta * opt.tpr + (1.0 - eta) * opt.fpr
    return {
        "prevalence": float(eta),
        "per": int(per),
        "precision": float(eta * opt.tpr / alerts) if alerts > 0 and eta > 0 else math.nan,
        "recall": float(opt.tpr),
        "alerts": float(per * alerts),
        "caught": float(per * eta * opt.tpr),
        "missed": float(per * eta * (1.0 - opt.tpr)),
        "cost": float(opt.cost(eta, cfp, cfn)),
    }


def action_text(v: Verdict, fmt: Any) -> str:
    """What the verdict says to do: "ship gbm at threshold 0.6796", "flag nothing", ..."""
    if v.decision == "run":
        return f"ship {v.run} at threshold {fmt(v.threshold, 4)}"
    return {"nothing": "flag nothing", "everything": "flag everything"}.get(
        v.decision, "no run can be judged"
    )


def _trivial_verdict(
    v: Verdict, opt: DecisionOption, eta: float, cfp: float, cfn: float, why: str, text: str
) -> Verdict:
    f = _facts(opt, eta, v.per, cfp, cfn)
    return replace(
        v, run=None, decision=opt.kind, threshold=opt.threshold, value=f["cost"],
        value_low=None, value_high=None, precision=f["precision"], precision_low=None,
        precision_high=None, recall=f["recall"], recall_low=None, recall_high=None,
        alerts=f["alerts"], caught=f["caught"], missed=f["missed"], run_id=None,
        runner_up=v.run, runner_up_value=v.value, runner_up_low=v.value_low,
        runner_up_high=v.value_high, difference=None, p_value=None, significant=None,
        intervals_apart=False, test=why, more_data="", chance="", text=text,
    )  # fmt: skip


def trivial_rule(v: Verdict, eta: float, opts: Any, fmt: Any, feta: Any, fint: Any) -> Verdict:
    """The cost verdict ``v`` at ``eta``, or flagging nothing / everything where no run beats it.

    See the module docstring for the rule.
    """
    cfp, cfn = opts.cost_fp, opts.cost_fn
    opt, cost = _trivial(eta, cfp, cfn)
    per = v.per
    unit = f"per {fint(per)} cases"
    what = "flagging nothing" if opt.kind == "nothing" else "flagging everything"
    if math.isinf(v.threshold) and v.threshold > 0:
        opt, why = NOTHING, "no threshold of any judged run beats predicting every case negative"
    elif v.recall >= 1.0 and v.chance == "all":
        opt, why = EVERYTHING, "the best threshold of every judged run flags every case"
    elif v.value_high is not None and v.value_high >= cost:
        why = (
            f"no run is shown to beat {what}: the best, {v.run}, has lowest expected cost, "
            f"{fmt(v.value * per)} [{fmt(v.value_low * per, 3)}, {fmt(v.value_high * per, 3)}] "
            f"{unit}, "
            f"an interval that reaches {what}'s {fmt(cost * per)}"
        )
    else:
        return v
    action = "flag nothing" if opt.kind == "nothing" else "flag everything"
    f = _facts(opt, eta, per, cfp, cfn)
    text = (
        f"At η = {feta(eta)}: {action} ({why}). Per {fint(per)} cases: "
        f"{_count(f['alerts'], fint)} alerts, {_count(f['caught'], fint)} of "
        f"{_count(per * eta, fint)} positives caught; expected cost {fmt(f['cost'] * per)} {unit} "
        f"with C_FP = {fmt(cfp)}, C_FN = {fmt(cfn)}."
    )
    return _trivial_verdict(v, opt, eta, cfp, cfn, why, text)


def none_judged(
    eta: float, key: str, label: str, not_judged: Sequence[str], opts: Any, feta: Any
) -> Verdict:
    """The verdict when no run has enough test cases to be judged."""
    text = (
        f"At η = {feta(eta)}: no run can be judged; each needs at least {MIN_TEST_CLASS} test "
        f"positives and {MIN_TEST_CLASS} test negatives: {'; '.join(not_judged)}."
    )
    per = per_cases(eta)
    return Verdict(
        prevalence=float(eta), run=None, criterion=label, criterion_key=key, value=math.nan,
        threshold=math.nan, precision=math.nan, precision_low=None, precision_high=None,
        recall=math.nan, recall_low=None, recall_high=None, per=per, alerts=math.nan,
        caught=math.nan, missed=math.nan, text=text, decision="none_judged",
        not_judged=tuple(not_judged),
        cost_fp=opts.cost_fp if opts.costs_given else None,
        cost_fn=opts.cost_fn if opts.costs_given else None,
    )  # fmt: skip


def _count(x: float, fint: Any) -> str:
    return fint(round(x)) if abs(x) >= 10 else fint(round(x, 1))


def _option_of(v: Verdict, counts: Mapping[str, Any]) -> DecisionOption:
    """The decision of verdict ``v`` as an option with its test rates."""
    if v.decision == "nothing":
        return NOTHING
    if v.decision == "everything":
        return EVERYTHING
    c = counts[v.run]
    k = int(np.searchsorted(-np.asarray(c.thresholds, dtype=float), -float(v.threshold)))
    return DecisionOption("run", v.run, float(v.threshold), float(c.tpr[k]), float(c.fpr[k]))


def over_range(
    v: Verdict,
    rng: DecideRange,
    counts: Mapping[str, Any],
    unc: Any,
    opts: Any,
    formatters: tuple[Any, Any, Any, Any],
) -> Verdict:
    """The verdict decided over ``rng``; the point verdict ``v`` becomes ``at_estimate``.

    ``counts``: the judged runs' counts by name. Without costs the decision stays the point
    estimate's (``regret`` None) and the range is recorded and said.
    """
    fmt, feta, fint, _ = formatters
    lo, hi, eta = float(rng.low), float(rng.high), float(v.prevalence)
    base = replace(
        v, prevalence_low=lo, prevalence_high=hi, source=rng.source, batch=rng.batch,
        drift=rng.drift,
    )  # fmt: skip
    head = f"{rng.drift} " if rng.drift else ""
    span = f"η between {_eta0(lo, feta)} and {feta(hi)} ({rng.how})"
    if v.criterion_key != "cost" or v.decision == "none_judged":
        return replace(base, text=f"{head}Over {span}; at its point estimate: {v.text}")
    cfp, cfn = opts.cost_fp, opts.cost_fn
    # the tables' and the card's cost-interval draws (headline_intervals, seed = the report's):
    # the limit at the range's end is the one those would print there
    rd = decide_over_range(
        counts, lo, hi, cfp, cfn, n_boot=opts.n_bootstrap, seed=opts.seed,
        confidence=opts.confidence,
    )  # fmt: skip
    opt, regret, why = rd.option, rd.regret, ""
    if rd.not_shown:
        per_hi = per_cases(hi)
        what = "flagging nothing" if opt.kind == "nothing" else "flagging everything"
        why = (
            f"{rd.choice.option.run}, the least-regret run, is not shown to beat {what} even at "
            f"η = {feta(hi)} (its lowest-cost upper limit {fmt(rd.upper * per_hi)} ≥ "
            f"{fmt(rd.trivial_cost * per_hi)} per {fint(per_hi)} cases)"
        )
    per = v.per
    point = _facts(opt, eta, per, cfp, cfn)
    ends = (_facts(opt, lo, per, cfp, cfn), _facts(opt, hi, per, cfp, cfn))
    p_lo = p_hi = r_lo = r_hi = None
    if opt.kind == "run":
        sel = unc.selected_interval(opt.run, counts[opt.run], opt.threshold, eta)
        if sel is not None:
            (p_lo, p_hi), (r_lo, r_hi) = sel
            if opt.tpr <= 0:
                p_lo = p_hi = None
    same = _option_of(v, counts) == opt if v.decision in ("run", "nothing", "everything") else False
    out = replace(
        base,
        run=opt.run,
        decision=opt.kind,
        threshold=opt.threshold,
        value=point["cost"],
        value_low=v.value_low if same else None,
        value_high=v.value_high if same else None,
        precision=point["precision"],
        precision_low=p_lo,
        precision_high=p_hi,
        recall=point["recall"],
        recall_low=r_lo,
        recall_high=r_hi,
        alerts=point["alerts"],
        caught=point["caught"],
        missed=point["missed"],
        regret=float(regret),
        at_estimate=v,
        at_low=ends[0],
        at_high=ends[1],
        run_id=v.run_id if same else _run_id(v, opt.run),
        runner_up=None if not same else v.runner_up,
        runner_up_value=None if not same else v.runner_up_value,
        runner_up_low=None if not same else v.runner_up_low,
        runner_up_high=None if not same else v.runner_up_high,
        difference=None if not same else v.difference,
        p_value=None if not same else v.p_value,
        significant=None if not same else v.significant,
        test=(why or "least worst-case regret over the range") if not same else v.test,
        more_data="" if not same else v.more_data,
        chance="" if not same else v.chance,
    )
    out = _with_audit_budget(out, v, rng, counts, opts)
    at_est_regret = worst_regret(
        _option_of(v, counts).tpr, _option_of(v, counts).fpr, counts, lo, hi, cfp, cfn
    ) if v.decision in ("run", "nothing", "everything") else math.nan  # fmt: skip
    return replace(out, text=_range_text(out, v, span, head, why, at_est_regret, formatters))


def _with_audit_budget(
    out: Verdict, v: Verdict, rng: DecideRange, counts: Mapping[str, Any], opts: Any
) -> Verdict:
    """The labels that would settle a label-free range (issue 39: the budget, said up front)."""
    from mlflow_imbalance.stats.robust import AUDIT_TOLERANCE_SHARE, labels_to_settle

    if rng.source != "estimated" or rng.audited or not rng.production:
        return out
    tol = AUDIT_TOLERANCE_SHARE * float(v.value)
    if not (out.regret is not None and (out.regret > tol or rng.drift)) or not tol > 0:
        return out
    run = out.run if out.decision == "run" else v.run if v.decision == "run" else None
    thr = out.threshold if out.decision == "run" else v.threshold
    sc = rng.production.get(run) if run is not None else None
    if sc is None:
        return out
    try:
        got = labels_to_settle(
            counts, run, sc, thr, float(out.prevalence), tol, opts.cost_fp, opts.cost_fn,
            opts.confidence,
        )  # fmt: skip
    except Exception:  # advice only: the verdict stands without it
        logger.warning("no audit budget for %r", run, exc_info=True)
        return out
    if got.labels is None:
        return out
    # labels_to_settle's own sentence (as the estimate's and the check's), in the verdict's unit
    text = got.text[0].upper() + got.text[1:]
    return replace(out, audit_labels=got.labels, audit_text=text, audit_threshold=float(thr))


def _run_id(v: Verdict, run: str | None) -> str | None:
    if run is None:
        return None
    ids = dict(zip(v.compared, v.compared_ids, strict=False))
    return ids.get(run)


def _eta0(x: float, feta: Any) -> str:
    return feta(x) if x > 0 else "0"


def _range_text(
    out: Verdict, at: Verdict, span: str, head: str, why: str, at_regret: float, formatters: Any
) -> str:
    """The range verdict's sentence: decision, worst case, numbers at the estimate and ends."""
    fmt, feta, fint, fci = formatters
    per, unit = out.per, f"per {fint(out.per)} cases"
    action = action_text(out, fmt)
    if out.regret <= 0:
        worst = "the best decision at every η in that range"
    else:
        worst = (
            f"it loses at most {fmt(out.regret * per)} {unit} against the best decision at any "
            "η in that range"
        )
    text = f"{head}Over {span}: {action}; {worst}"
    text += f" ({why})." if why else "."

    def facts(f: Mapping[str, float], prec_ci: str = "") -> str:
        if not float(f["prevalence"]) > 0:  # no positives to catch: every alert is false
            return f"{_count(f['alerts'], fint)} alerts, all false (no positives at η = 0)"
        prec = "" if math.isnan(f["precision"]) else f", precision {fmt(f['precision'], 3)}"
        return (
            f"{_count(f['alerts'], fint)} alerts, {_count(f['caught'], fint)} of "
            f"{_count(per * f['prevalence'], fint)} positives caught{prec}{prec_ci}"
        )

    ci = fci(out.precision_low, out.precision_high)
    point = {"prevalence": out.prevalence, "precision": out.precision, "alerts": out.alerts,
             "caught": out.caught}  # fmt: skip
    text += (
        f" {unit[0].upper()}{unit[1:]}: at η = {feta(out.prevalence)}, "
        f"{facts(point, f' {ci}' if ci else '')}; at η = {_eta0(out.prevalence_low, feta)}, "
        f"{facts(out.at_low)}; at η = {feta(out.prevalence_high)}, {facts(out.at_high)}."
    )
    if _option_key(at) != _option_key(out) and at.decision != "none_judged":
        loss = (
            f" (it could lose {fmt(at_regret * per)} {unit} over the range)"
            if math.isfinite(at_regret)
            else ""
        )
        text += f" At η = {feta(out.prevalence)} alone: {action_text(at, fmt)}{loss}."
    return text + (f" {out.audit_text}." if out.audit_text else "")


def _option_key(v: Verdict) -> tuple:
    return (v.decision, v.run, None if v.decision != "run" else float(v.threshold))
