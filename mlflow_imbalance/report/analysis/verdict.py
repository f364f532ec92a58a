"""The report's verdict: which run to ship at each chosen prevalence, at which threshold, how sure.

One decision criterion for the whole report: the lowest expected cost per case when costs are
given (by the caller or logged with the runs), otherwise the primary metric (default AP). At
each chosen prevalence η the run that is best by the criterion is recommended, with

- the threshold to deploy: the cost-optimal hull vertex under the cost criterion
  (:func:`mlflow_imbalance.core.curves.optimal_operating_point`), else the max-F1 threshold;
- what it means per 10,000 or per 1,000,000 cases at η: alerts, caught and missed positives,
  precision and recall with bounds valid although the threshold was chosen on the same counts
  (:func:`mlflow_imbalance.stats.decision.selected_point_interval`, as the logging hook's);
- how sure: a test of the difference to the runner-up -- DeLong for ROC-AUC
  (:func:`mlflow_imbalance.stats.compare.delong_test` when both runs kept their scores on the
  same examples, else :func:`~mlflow_imbalance.stats.compare.delong_test_unpaired`); for AP,
  PR-AUC, max-F1 and expected cost, on shared examples a paired bootstrap: the leading runs'
  shared replicates with the s.d. floored by the runs' own variances less twice their
  covariance (:mod:`mlflow_imbalance.report.analysis.paired`, the tables' test; level:
  ``benchmarks/bench_band_coverage.py --verdict-report``), or
  :func:`~mlflow_imbalance.stats.compare.paired_metric_test` for a pair outside them; else a
  z-test with each run's variance the larger of its count-bootstrap and Bayesian-draw
  variances (level measured by ``benchmarks/bench_band_coverage.py --verdict``);
  a tie says how much more data would make a difference of that size significant;
- the other metrics that would pick another run, in one line.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import stats as _sps

from mlflow_imbalance.core import metrics as _metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.report.analysis._common import (
    _METRIC_FN,
    APART_KEYS,
    cost_point,
    intervals_apart,
    too_small_to_test,
)
from mlflow_imbalance.report.model import Verdict
from mlflow_imbalance.report.options import PRIMARY_METRICS
from mlflow_imbalance.stats.compare import delong_test, delong_test_unpaired, paired_metric_test
from mlflow_imbalance.stats.decision import chance_level, per_cases

logger = logging.getLogger(__name__)

#: Largest test set (examples) on which the verdict runs a paired bootstrap of raw scores.
MAX_PAIRED_EXAMPLES = 300_000
#: Power used for "what more data would separate them".
POWER = 0.8

_LABELS = {"cost": "expected cost", **PRIMARY_METRICS}


def criterion_value(c: RocCounts, eta: float, key: str, opts: Any) -> float:
    """One run's exact value of the candidate criterion ``key`` at ``eta``.

    The value :func:`criterion_values` gives; for callers that need one criterion only (the
    winner map's root finding evaluates it at many η).
    """
    if key == "cost":
        return float(cost_point(c, eta, opts).cost)
    if key == "roc_auc":
        return float(_metrics.roc_auc(c))
    return float(_METRIC_FN[key](c, eta))


def criterion_values(
    counts: Mapping[str, RocCounts], eta: float, opts: Any
) -> dict[str, dict[str, float]]:
    """Every run's value of every candidate criterion at ``eta`` (exact, from the counts)."""
    keys = ("cost", "ap", "pr_auc", "max_f1", "roc_auc")
    return {n: {k: criterion_value(c, eta, k, opts) for k in keys} for n, c in counts.items()}


def _order(values: Mapping[str, float], key: str) -> list[str]:
    """Run names best first (lowest cost / highest metric); NaN last.

    Exact ties go by run name, so the verdict does not depend on the order the runs were
    passed in (the CLI lists an experiment's runs newest first, a caller may pass them in
    training order); the verdict then calls the two a statistical tie.
    """

    def k(n: str) -> tuple[bool, float, str]:
        v = values[n]
        return (not math.isfinite(v), (v if key == "cost" else -v) if math.isfinite(v) else 0.0, n)

    return sorted(values, key=k)


def criterion_orders(
    counts: Mapping[str, RocCounts], etas: Sequence[float], opts: Any
) -> dict[float, list[str]]:
    """Each η's order of runs by the report's criterion, best first (exact values)."""
    key = "cost" if opts.costs_given else opts.primary_metric
    out = {}
    for eta in etas:
        if key == "cost":
            vals = {n: float(cost_point(c, eta, opts).cost) for n, c in counts.items()}
        elif key == "roc_auc":
            vals = {n: float(_metrics.roc_auc(c)) for n, c in counts.items()}
        else:
            fn = {"ap": _metrics.average_precision, "pr_auc": _metrics.pr_auc,
                  "max_f1": _metrics.max_f1}[key]  # fmt: skip
            vals = {n: float(fn(c, eta)) for n, c in counts.items()}
        out[float(eta)] = _order(vals, key)
    return out


def _paired(ra: Any, rb: Any) -> bool:
    if ra.scores is None or rb.scores is None or ra.digest is None or ra.digest != rb.digest:
        return False
    ya = np.asarray(ra.scores[0])
    return ya.size <= MAX_PAIRED_EXAMPLES and np.array_equal(ya, np.asarray(rb.scores[0]))


def _test(
    key: str, a: Any, b: Any, eta: float, j: int | None, opts: Any, unc: Any, seed: int
) -> tuple[float | None, float | None, str]:
    """(z, p-value, method) of a minus b on the criterion; (None, None, why) when untested."""
    conf = opts.confidence
    if a.counts.weighted or b.counts.weighted:
        return None, None, "not tested: weighted counts"
    small = too_small_to_test(a.name, a.counts) or too_small_to_test(b.name, b.counts)
    if small:
        return None, None, f"not tested: {small}"
    try:
        if key == "roc_auc":
            if _paired(a, b):
                t = delong_test(a.scores[0], a.scores[1], b.scores[1], confidence=conf)
            else:
                t = delong_test_unpaired(a.counts, b.counts, confidence=conf)
            return t.z, t.p_value, t.method
        if not opts.n_bootstrap:
            return None, None, "not tested: bootstrap off (--bootstrap 0)"
        metric = "min_cost" if key == "cost" else key
        shared = getattr(unc, "shared", None)
        reps = getattr(unc, "point_reps", {})
        if shared is not None and j is not None and a.name in reps and b.name in reps:
            # the leading runs on shared examples: the tables' paired test, on one resample
            ea, va = reps[a.name][key]
            eb, vb = reps[b.name][key]
            sd = shared.difference_sd(a.name, b.name, key, j, float(va[j]), float(vb[j]))
            if sd is not None:
                return _z_result(float(ea[j] - eb[j]), sd, _SHARED_METHOD.format(shared.n_boot))
        if _paired(a, b):
            t = paired_metric_test(
                metric=metric,
                prevalence=eta,
                y_true=a.scores[0],
                score_a=a.scores[1],
                score_b=b.scores[1],
                cost_fp=opts.cost_fp,
                cost_fn=opts.cost_fn,
                n_boot=opts.n_bootstrap,
                confidence=conf,
                seed=seed,
            )
            return t.z, t.p_value, t.method
    except (ValueError, TypeError) as exc:
        return None, None, f"not tested: {exc}"
    reps = getattr(unc, "point_reps", {})
    if j is None or a.name not in reps or b.name not in reps:
        return None, None, "not tested: no bootstrap replicates at this prevalence"
    ea, va = reps[a.name][key]
    eb, vb = reps[b.name][key]
    sd = math.sqrt(float(va[j]) + float(vb[j]))
    return _z_result(
        float(ea[j] - eb[j]),
        sd,
        "unpaired (independent test sets): z = difference / sqrt(var_A + var_B), each "
        "run's variance the larger of its count-bootstrap replicates' and its Bayesian "
        "draws', two-sided normal",
    )


#: How the verdict's test reads for leading runs scored on the same examples.
_SHARED_METHOD = (
    "paired stratified bootstrap of the shared examples, {} replicates; z = difference / s.d., "
    "two-sided normal, the s.d. never below what each run's own uncertainty allows (see "
    "Methods)"
)


def _z_result(diff: float, sd: float, method: str) -> tuple[float, float, str]:
    """(z, two-sided normal p, method) of a difference and its s.d."""
    if not (sd > 0):
        return (
            (0.0 if diff == 0 else math.copysign(math.inf, diff)),
            (1.0 if diff == 0 else 0.0),
            "replicates without spread",
        )
    z = diff / sd
    return z, float(2 * _sps.norm.sf(abs(z))), method


def _more_data(z: float | None, conf: float, a: RocCounts, b: RocCounts, fint: Any) -> str:
    if z is None or not math.isfinite(z):
        return ""
    if z == 0:
        return "Identical here: more data of the same kind will not separate them."
    zc = _sps.norm.ppf(1 - (1 - conf) / 2) + _sps.norm.ppf(POWER)
    k = (zc / abs(z)) ** 2
    n_pos = min(a.n_pos, b.n_pos) * k
    n_neg = min(a.n_neg, b.n_neg) * k
    # a rough figure (the observed difference taken as the true one): two significant digits
    times = _two_digits(k)
    return (
        f"About {fint(times) if times >= 10 else f'{times:g}'}× the test data (≈ "
        f"{fint(_two_digits(n_pos))} positives, {fint(_two_digits(n_neg))} negatives) would "
        f"separate them if the difference is real ({POWER:.0%} power)."
    )


def _two_digits(x: float) -> float:
    """``x`` rounded to two significant digits (e.g. 129.2 -> 130, 3,743,981 -> 3,700,000)."""
    return float(f"{x:.2g}") if x > 0 else 0.0


def pair_test(
    key: str,
    a: Any,
    b: Any,
    eta: float,
    j: int | None,
    opts: Any,
    unc: Any,
    seed_for: Any,
    intervals: Mapping[str, Mapping[tuple, Any]],
) -> tuple[float | None, float | None, str, bool | None, bool]:
    """The verdict's test of run ``a`` minus run ``b`` on the criterion ``key`` at ``eta``.

    One test for the verdict's "better than the runner-up" and the decision's flips, so the two
    never disagree: :func:`_test`, then for :data:`APART_KEYS` "significant all the same" when
    the two runs' table intervals do not overlap.

    Returns:
        ``(z, p, how, significant, intervals_apart)``; ``p`` and ``significant`` are None when
        untested (``how`` says why).
    """
    conf = opts.confidence
    seed = int(seed_for(opts.seed, a.name, b.name, key, repr(eta)).generate_state(1)[0])
    z, p, how = _test(key, a, b, eta, j, opts, unc, seed)
    if p is None:
        return z, p, how, None, False
    sig = bool(p < 1 - conf)
    if (
        not sig
        and j is not None
        and key in APART_KEYS
        and intervals_apart(intervals.get(a.name, {}).get((key, j)),
                            intervals.get(b.name, {}).get((key, j)))
    ):  # fmt: skip
        how += (
            f"; significant all the same: the two runs’ {conf:.0%} {_LABELS[key]} intervals "
            "do not overlap"
        )
        return z, p, how, True, True
    return z, p, how, sig, False


def build_verdicts(
    runs: Sequence[Any],
    etas: Sequence[float],
    table_index: Sequence[int | None],
    opts: Any,
    unc: Any,
    fmt: Any,
    feta: Any,
    fint: Any,
    seed_for: Any,
    fci: Any,
    intervals: Mapping[str, Mapping[tuple, Any]] | None = None,
    ranges: Mapping[float, Any] | None = None,
) -> tuple[list[Verdict], dict[float, list[str]]]:
    """One :class:`Verdict` per η of ``etas``, plus each η's full order of runs (best first).

    Args:
        runs: the report's runs (``RunData``).
        etas: prevalences to decide at.
        table_index: for each η, its column in the bootstrap's per-run prevalences (None when
            the replicates do not hold it).
        opts: validated options (criterion, costs, confidence, bootstrap).
        unc: the report's uncertainty stage (``point_reps``: per-run exact values, variances).
        fmt: number formatter.
        feta: prevalence formatter.
        fint: integer formatter.
        seed_for: ``(seed, *parts) -> SeedSequence`` for the paired tests.
        fci: the interval formatter (``[lo, hi]`` or "").
        intervals: per run, the table intervals ``{(key, j): (low, high)}``: runs whose
            intervals on the criterion do not overlap are significantly different whatever
            the z-test says (:func:`~mlflow_imbalance.report.analysis._common.intervals_apart`).
        ranges: η -> :class:`~mlflow_imbalance.report.analysis.robust.DecideRange` for the
            verdicts decided over a range of η (an estimated batch, ``decide_over``).

    Runs too small to be judged are never the verdict's run (they come last in the orders);
    under the cost criterion flagging nothing or everything wins where no run is shown to beat
    it, and a range is decided by least worst-case regret (:mod:`.robust`).
    """
    from dataclasses import replace as _replace

    from mlflow_imbalance.report.analysis import robust as _robust

    intervals = intervals or {}
    ranges = ranges or {}
    key = "cost" if opts.costs_given else opts.primary_metric
    judged, not_judged = _robust.judged_runs(runs)
    by_name = {r.name: r for r in judged}
    counts = {r.name: r.counts for r in judged}
    all_counts = {r.name: r.counts for r in runs}
    compared = tuple(r.name for r in judged)
    ids = tuple(r.run_id for r in judged)
    costs = (opts.cost_fp, opts.cost_fn) if opts.costs_given else (None, None)
    out: list[Verdict] = []
    orders: dict[float, list[str]] = {}
    for eta, j in zip(etas, table_index, strict=True):
        # every run in the tables' order; runs too small to be judged come last
        all_vals = criterion_values(all_counts, eta, opts)
        small = [r.name for r in runs if r.name not in by_name]
        order = _order({n: all_vals[n][key] for n in by_name}, key)
        orders[eta] = [*order, *_order({n: all_vals[n][key] for n in small}, key)]
        if not judged:
            v = _robust.none_judged(eta, key, _LABELS[key], not_judged, opts, feta)
        else:
            vals = {n: all_vals[n] for n in by_name}
            best = order[0]
            pt = _deployed_point(unc, best, counts[best], eta, key, opts)
            cmp = _compare_runner(
                key, order, vals, by_name, eta, j, opts, unc, seed_for, intervals, fint
            )
            crit = _criterion_intervals(intervals, key, j, (best, cmp.runner))
            disagree = _disagree(vals, order, key, opts)
            text = _verdict_text(
                eta, best, key, vals, pt, cmp, crit, disagree, opts, (fmt, feta, fint, fci)
            )
            v = _verdict(eta, best, key, vals, pt, cmp, crit, disagree, text)
            v = _replace(
                v, run_id=by_name[best].run_id, cost_fp=costs[0], cost_fn=costs[1],
                compared=compared, compared_ids=ids, not_judged=not_judged,
            )  # fmt: skip
            if key == "cost":  # a typed η: the least-cost decision there loses nothing
                v = _replace(_robust.trivial_rule(v, eta, opts, fmt, feta, fint), regret=0.0)
        if not_judged and v.decision != "none_judged":
            v = _replace(
                v, text=f"{v.text} Not judged (too few test cases): {'; '.join(not_judged)}."
            )
        rng = ranges.get(float(eta))
        if rng is not None:
            v = _robust.over_range(v, rng, counts, unc, opts, (fmt, feta, fint, fci))
        out.append(v)
    return out, orders


class _Point(NamedTuple):
    """The recommended run's operating point at η and what it means per ``per`` cases."""

    threshold: float
    precision: float
    recall: float
    precision_low: float | None
    precision_high: float | None
    recall_low: float | None
    recall_high: float | None
    chance: str
    per: int
    alerts: float
    caught: float
    missed: float


def _deployed_point(unc: Any, best: str, c: RocCounts, eta: float, key: str, opts: Any) -> _Point:
    """The threshold to deploy (lowest cost, else max-F1), its precision, recall and bounds."""
    if key == "cost":
        op = cost_point(c, eta, opts)
        thr, tpr, fpr = float(op.threshold), float(op.tpr), float(op.fpr)
    else:
        _, thr = _metrics.max_f1_point(c, eta)
        i = int(np.searchsorted(-c.thresholds, -thr))
        tpr, fpr = float(c.tpr[i]), float(c.fpr[i])
    tp = tpr * c.n_pos
    denom = eta * tpr + (1 - eta) * fpr
    prec = eta * tpr / denom if denom > 0 else math.nan
    p_lo = p_hi = r_lo = r_hi = None
    # bounds valid although the threshold was chosen on these counts (as the tables')
    sel = unc.selected_interval(best, c, thr, eta)
    if sel is not None:
        if tp > 0:
            p_lo, p_hi = sel[0]
        r_lo, r_hi = sel[1]
    flags_nothing = math.isinf(thr) and thr > 0
    chance = "" if flags_nothing else chance_level(tpr, fpr, p_lo, eta)
    per = per_cases(eta)
    alerts, caught = per * denom, per * eta * tpr
    missed = per * eta - caught
    return _Point(thr, prec, tpr, p_lo, p_hi, r_lo, r_hi, chance, per, alerts, caught, missed)


class _Comparison(NamedTuple):
    """The recommended run against its runner-up (all None / "" with a single run)."""

    runner: str | None = None
    difference: float | None = None
    z: float | None = None
    p: float | None = None
    test: str = ""
    significant: bool | None = None
    apart: bool = False
    more: str = ""


def _compare_runner(
    key, order, vals, by_name, eta, j, opts, unc, seed_for, intervals, fint
) -> _Comparison:
    """The test of the best run against the runner-up, and "more data" for a tie."""
    if len(order) < 2:
        return _Comparison()
    best, runner = order[0], order[1]
    diff = vals[best][key] - vals[runner][key]
    z, p, test_txt, sig, apart = pair_test(
        key, by_name[best], by_name[runner], eta, j, opts, unc, seed_for, intervals
    )
    more = ""
    if sig is False:
        a, b = by_name[best].counts, by_name[runner].counts
        more = _more_data(z, opts.confidence, a, b, fint)
    return _Comparison(runner, diff, z, p, test_txt, sig, apart, more)


def _criterion_intervals(intervals, key, j, names) -> dict[str, Any]:
    """The criterion's own interval (the tables') of each of ``names`` (None: no run)."""
    return {
        n: (intervals.get(n, {}).get((key, j)) if j is not None else None)
        for n in names
        if n is not None
    }


def _disagree(vals, order, key, opts) -> str:
    """The other metrics that would pick another run than the best, in one line ("" if none)."""
    others = [k for k in ("cost", "ap", "pr_auc", "max_f1", "roc_auc") if k != key]
    if not opts.costs_given:
        others.remove("cost")
    picks: dict[str, list[str]] = {}
    if len(order) > 1:
        for k in others:
            w = _order({n: v[k] for n, v in vals.items()}, k)[0]
            if w != order[0]:
                picks.setdefault(w, []).append(_LABELS[k])
    return "; ".join(
        f"{_and(ms)} {'favours' if len(ms) == 1 else 'favour'} {w}" for w, ms in picks.items()
    )


def _verdict_text(
    eta, best, key, vals, pt: _Point, cmp: _Comparison, crit, disagree, opts, formatters
) -> str:
    """The verdict's sentence (:func:`_sentence`) from the point and the comparison."""
    fmt, feta, fint, fci = formatters
    scale = pt.per if key == "cost" else 1  # the cost is printed per `per` cases
    value_ci = fci(*(x * scale for x in crit[best])) if crit.get(best) else ""
    return _sentence(
        eta, best, key, _LABELS[key], vals, pt.threshold, pt.precision, pt.recall, pt.per,
        pt.alerts, pt.caught, cmp.runner, cmp.p, cmp.significant, cmp.more, disagree, opts,
        fmt, feta, fint,
        cis=(fci(pt.precision_low, pt.precision_high), fci(pt.recall_low, pt.recall_high)),
        apart=cmp.apart, value_ci=value_ci, chance=pt.chance,
    )  # fmt: skip


def _verdict(eta, best, key, vals, pt: _Point, cmp: _Comparison, crit, disagree, text) -> Verdict:
    """The :class:`Verdict` record from its parts."""
    runner = cmp.runner
    return Verdict(
        prevalence=float(eta),
        run=best,
        criterion=_LABELS[key],
        criterion_key=key,
        value=float(vals[best][key]),
        threshold=pt.threshold,
        precision=pt.precision,
        precision_low=pt.precision_low,
        precision_high=pt.precision_high,
        recall=pt.recall,
        recall_low=pt.recall_low,
        recall_high=pt.recall_high,
        per=pt.per,
        alerts=pt.alerts,
        caught=pt.caught,
        missed=pt.missed,
        runner_up=runner,
        runner_up_value=None if runner is None else float(vals[runner][key]),
        value_low=None if crit.get(best) is None else float(crit[best][0]),
        value_high=None if crit.get(best) is None else float(crit[best][1]),
        runner_up_low=None if crit.get(runner) is None else float(crit[runner][0]),
        runner_up_high=None if crit.get(runner) is None else float(crit[runner][1]),
        difference=cmp.difference,
        p_value=cmp.p,
        significant=cmp.significant,
        intervals_apart=cmp.apart,
        test=cmp.test,
        more_data=cmp.more,
        disagree=disagree,
        chance=pt.chance,
        text=text,
    )


def chance_text(chance: str, eta: str, ci: str) -> str:
    """The verdict's sentence for a :func:`~mlflow_imbalance.stats.decision.chance_level` result.

    ``eta`` and ``ci`` come formatted.
    """
    if chance == "all":
        return f"Its threshold flags every case: at η = {eta} no model is needed to do that."
    if chance == "interval":
        return (
            "At this threshold its alerts are not shown to be more precise than flagging as "
            f"many cases at random: precision {ci} reaches η = {eta}."
        )
    return ""


def _with_ci(value: str, ci: str) -> str:
    """``value [lo, hi]``, or the value alone when there is no interval."""
    return f"{value} {ci}" if ci else value


def _sentence(
    eta, best, key, label, vals, thr, prec, tpr, per, alerts, caught, runner, p, sig, more,
    disagree, opts, fmt, feta, fint, cis=("", ""), apart=False, value_ci="", chance="",
) -> str:  # fmt: skip
    how = (
        f"lowest expected cost, {_with_ci(fmt(vals[best]['cost'] * per), value_ci)} per "
        f"{fint(per)} cases with C_FP = {fmt(opts.cost_fp)}, C_FN = {fmt(opts.cost_fn)}"
        if key == "cost"
        else f"highest {label}, {_with_ci(fmt(vals[best][key]), value_ci)}"
    )
    if math.isinf(thr) and thr > 0:
        deploy = "flagging nothing (no threshold beats predicting every case negative)"
    else:
        deploy = f"threshold {fmt(thr, 4)}"
    text = (
        f"At η = {feta(eta)}: ship {best} at {deploy} ({how}). Per {fint(per)} cases: "
        f"{count(alerts, fint)} alerts, {count(caught, fint)} of {count(per * eta, fint)}"
        f" positives caught; precision {_with_ci(fmt(prec, 3), cis[0])}, "
        f"recall {_with_ci(fmt(tpr, 3), cis[1])}."
    )
    if chance:
        text += " " + chance_text(chance, feta(eta), cis[0])
    if runner is None:
        return text
    if sig is True and apart:
        text += (
            f" Significantly better than {runner} (their {opts.confidence:.0%} {label} "
            f"intervals do not overlap; the z-test alone: {_p(p, 1 - opts.confidence)})."
        )
    elif sig is True:
        text += f" Significantly better than {runner} ({_p(p, 1 - opts.confidence)})."
    elif sig is False:
        text += f" A statistical tie with {runner} ({_p(p, 1 - opts.confidence)}). {more}".rstrip()
    else:
        text += f" Runner-up: {runner} (difference not tested)."
    if disagree:
        text += f" Other metrics: {disagree}."
    return text


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def count(x: float, fint: Any) -> str:
    """A count of cases: whole numbers from 10 up, one decimal below."""
    return fint(round(x)) if abs(x) >= 10 else fint(round(x, 1))


def p_value_text(p: float, alpha: float = 0.05) -> str:
    """``p`` with as few digits as keep it on its side of ``alpha`` (0.0499 is not "0.05")."""
    if p < 1e-3:
        return "< 0.001"
    for d in (2, 3, 4, 6):
        text = f"{p:.{d}g}"
        if (float(text) < alpha) == (p < alpha):
            return text
    return f"{p:.6g}"


def _p(p: float | None, alpha: float = 0.05) -> str:
    if p is None:
        return "p not computed"
    text = p_value_text(p, alpha)
    return f"p {text}" if text.startswith("<") else f"p = {text}"
