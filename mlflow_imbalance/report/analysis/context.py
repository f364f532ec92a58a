"""Loaded runs → the report's template context (no MLflow, no HTML here).

A pipeline of small stages, each timed and each a function of what the earlier ones made:

1. :func:`_frame` -- the prevalences: test, chosen, the η grid and its range;
2. point metrics (:mod:`.point`): exact values at those prevalences, sweeps over the grid;
3. :func:`_uncertainty_stage` -- intervals and bands (:mod:`.intervals`);
4. :func:`_verdict_stage` -- the verdict per chosen η (:mod:`.verdict`);
5. :func:`_flip_stage` -- does the decision depend on η (:mod:`.decision`), and the other
   metrics' flips (:mod:`.flips`);
6. :func:`_chart_stage` -- data and Vega-Lite specs (:mod:`.charts`);
7. tables (:mod:`.tables`), callouts (:mod:`.notes`), and :func:`_assemble` the context.

Strings are left raw (jinja2 autoescapes them).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mlflow_imbalance.report.analysis import views
from mlflow_imbalance.report.analysis._common import _Timer, too_small_to_test
from mlflow_imbalance.report.analysis.charts import MAX_LEAD, payload, specs, swatches
from mlflow_imbalance.report.analysis.decision import Anchor, decision_flips, winner_map
from mlflow_imbalance.report.analysis.deployment import (
    Deployment,
    deciding_range,
    deployment_note,
    drift_spec,
    estimate_batches,
    header_rows,
    pick,
    shown_eta,
)
from mlflow_imbalance.report.analysis.draws import live_cost_grid
from mlflow_imbalance.report.analysis.flips import (
    decision_rows,
    metric_flips,
    other_flips_summary,
    roc_auc_pairs,
)
from mlflow_imbalance.report.analysis.intervals import _Uncertainty
from mlflow_imbalance.report.analysis.notes import data_notes, decision_note
from mlflow_imbalance.report.analysis.paired import shared_replicates
from mlflow_imbalance.report.analysis.point import criterion_sweep, run_point
from mlflow_imbalance.report.analysis.tables import _adequacy_rows, _roc_rows, _tables
from mlflow_imbalance.report.analysis.verdict import (
    _LABELS,
    MAX_PAIRED_EXAMPLES,
    build_verdicts,
    criterion_orders,
    pair_test,
)

logger = logging.getLogger(__name__)

#: Rows of a per-prevalence table shown before "show all runs".
MAX_TABLE_ROWS = views.MAX_TABLE_ROWS


@dataclass(frozen=True)
class _Frame:
    """What every stage reads: the runs, the prevalences and the formatters."""

    runs: Sequence[Any]
    opts: Any
    fmt: Callable[..., str]
    feta: Callable[[float], str]
    fint: Callable[..., str]
    fci: Callable[..., str]
    test_prev: dict[str, float]
    chosen: list[float]
    grid: np.ndarray
    lo: float
    hi: float
    range_chosen: bool
    v_etas: list[float]
    v_index: list[int | None]

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.runs]

    @property
    def counts(self) -> dict[str, Any]:
        return {r.name: r.counts for r in self.runs}

    @property
    def criterion(self) -> str:
        return "cost" if self.opts.costs_given else self.opts.primary_metric

    @property
    def same_test(self) -> bool:
        return len(set(self.test_prev.values())) == 1


def build_context(
    runs: Sequence[Any],
    skipped: Sequence[Any],
    opts: Any,
    *,
    experiment: str | None,
    progress: Callable[[str, int, int], None] | None,
    timings: dict[str, float],
    palette: Sequence[str],
    formatters: Mapping[str, Callable[..., str]],
    seed_for: Callable[..., np.random.SeedSequence],
    cpu_timings: dict[str, float] | None = None,
    links: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Compute everything the report shows and shape it for the templates."""
    timer = _Timer(timings, cpu_timings)
    notify = progress or (lambda *_: None)
    failed: list[dict[str, str]] = []  # per-run failures of a stage: the run is judged alone
    with timer.stage("production"):
        dep, opts = _deployment_stage(runs, opts)
    with timer.stage("metrics"):
        point, dropped = _point_stage(_frame(runs, opts, formatters, dep), notify, failed)
    if dropped:  # a run without exact metrics cannot be shown: it joins the skipped runs
        skipped = [*skipped, *dropped]
        runs = [r for r in runs if r.name in point]
        if not runs:
            raise ValueError("no run could be analysed: " + "; ".join(d.reason for d in dropped))
    fr = _frame(runs, opts, formatters, dep)
    # the leading runs (drawn, compared pairwise) from the exact criterion values: the
    # bootstrap resamples the band grid for those runs only
    v_orders = criterion_orders(fr.counts, fr.v_etas, opts)
    lead = _leading(fr.names, v_orders)
    with timer.stage("bootstrap"):
        unc = _uncertainty_stage(fr, point, lead, seed_for, notify, failed)
    with timer.stage("verdict"):
        verdicts, orders = _without_culprits(
            "verdict", fr.runs, failed,
            lambda rs: _verdict_stage(
                _sub(fr, rs), point, _keep(lead, rs), _keep_orders(v_orders, rs), unc, seed_for,
                notify,
            ),
        )  # fmt: skip
    with timer.stage("ranking"):
        flips = _isolated(
            "ranking flips", "all runs", failed, _NO_FLIPS,
            _flip_stage, fr, point, lead, verdicts, unc, seed_for, progress,
        )  # fmt: skip
    with timer.stage("charts"):
        charts = _without_culprits(
            "charts", fr.runs, failed,
            lambda rs: _chart_stage(
                _sub(fr, rs), point, _keep(lead, rs), v_orders, verdicts, unc, flips, links,
                notify,
            ),
        )  # fmt: skip
        _live_rules(charts["data"], fr, point, unc)
        swatch = {**dict.fromkeys(fr.names, "#8c959f"), **charts["swatch"]}
        charts = {**charts, "swatch": swatch}  # a run left out of the charts keeps a grey key
    with timer.stage("tables"):
        tables = _without_culprits(
            "tables", fr.runs, failed,
            lambda rs: _tables(
                rs, point, fr.chosen, swatch, fr.fmt, fr.feta, fr.fci, opts,
                _keep_orders(orders, rs), verdicts, _keep(lead, rs),
                reps=getattr(unc, "point_reps", None), shared=unc.shared,
            ),
        )  # fmt: skip
    adequacy = _adequacy_rows(fr.runs, point, fr.chosen, fr.feta, fr.fmt, fr.fint)
    dep_note = deployment_note(dep, fr.feta)
    # with an estimate (its callout, or a verdict over its range) a quiet "same winner" adds
    # nothing: the verdict already says what holds over the range
    ranged = any(v.prevalence_high > v.prevalence_low for v in verdicts)
    decision = (
        flips["note"]
        if flips["note"] and not ((dep_note or ranged) and flips["note"]["level"] == "ok")
        else None
    )
    notes = [
        *([dep_note] if dep_note else []),
        *([decision] if decision else []),
        *_small_and_failed_notes(fr.runs, failed),
        *data_notes(
            fr.runs,
            skipped,
            sorted({a["run"] for a in adequacy if not a["ok"]}),
            views.digest_groups(fr.runs),
            fr.chosen,
            opts.name,
        ),
        *unc.notes,
    ]
    out = _assemble(
        fr, point, lead, unc, verdicts, flips, charts, tables, adequacy, notes, skipped,
        experiment, links or {},
    )  # fmt: skip
    out["deployment"] = {
        "rows": header_rows(dep, fr.feta, fr.fint),
        "eta": dep.eta_shown,
        "batch": dep.chosen.batch if dep.chosen else None,
        "failed": dep.failed,
        "disagree": dep.disagree,
        "range": (
            f"{fr.feta(dep.low) if dep.low > 0 else '0'} – {fr.feta(dep.high)}"
            if dep.high is not None
            else ""
        ),
    }
    rows = out["deployment"]["rows"]
    # the drift chart's log axis: an estimate or lower limit at 0 sits at its floor, a third
    # of the smallest positive value shown (not at an arbitrary 1e-7 that squashes the rest)
    shown = [v for r in rows for v in (r["estimate"], r["low"], r["high"]) if v > 0]
    floor = min(shown) / 3 if shown else 1e-6
    out["data"]["deployment"] = [
        {**{k: row[k] for k in ("run", "batch", "estimate", "low", "high", "chosen")},
         "plot_estimate": max(row["estimate"], floor), "plot_low": max(row["low"], floor)}
        for row in rows
    ]  # fmt: skip
    if rows:
        from mlflow_imbalance.plots._style import run_colors

        colors = {**dict.fromkeys(fr.names, "#8c959f"), **run_colors(lead)}
        has = {r["run"] for r in rows}  # in the other charts' order (leading runs first)
        drawn = [n for n in dict.fromkeys((*lead, *fr.names, *has)) if n in has]
        out["specs"]["chart-drift"] = drift_spec(drawn, colors)
        out["chart_ids"].append("chart-drift")
    for v, vd in zip(out["verdicts"], verdicts, strict=True):
        if vd.source == "estimated":
            v["source"] = (
                f"batch {vd.batch}: audited, {dep.audited.audit.n_labels} labels"
                if dep.audited is not None
                else f"batch {vd.batch}: every run's interval"
                if dep.union and dep.n_runs > 1
                else f"batch {vd.batch}"
            )
        elif vd.source == "range":
            v["source"] = "the range asked"
        elif dep.eta_shown is not None and float(v["eta_value"]) == dep.eta_shown:
            v["source"] = f"estimated, batch {dep.chosen.batch}"
    return out


def _deployment_stage(runs: Sequence[Any], opts: Any) -> tuple[Deployment, Any]:
    """The production batches' prevalence estimates and the verdict's ranges of η.

    The chosen batch's verdict is decided over the union of the judged runs' intervals
    (:func:`~.deployment.deciding_range`), at its point estimate; ``decide_over`` adds a verdict
    over the range asked. Both η go first in the prevalences, with their ranges in
    ``opts.decide_ranges``.
    """
    from mlflow_imbalance.report.analysis.robust import DecideRange, judged_runs

    ranges: dict[float, Any] = {}
    first: list[float] = []
    judged = [r.name for r in judged_runs(runs)[0]]
    if opts.use_production:
        costs = (opts.cost_fp, opts.cost_fn) if opts.cost_fp is not None else None
        estimates, failed = estimate_batches(runs, opts.confidence, costs)
        dep = pick(estimates, opts.batch, failed)
        dep = deciding_range(dep, judged, opts.confidence, _feta_plain)
    else:
        dep = Deployment([], None, [], [])
    if dep.high is not None and dep.eta_shown is not None:
        if dep.audited is not None:
            how = (
                f"batch {dep.chosen.batch}'s η audited with {dep.audited.audit.n_labels} "
                f"production labels ({dep.audited.run}'s plan)"
            )
        elif dep.union and dep.n_runs > 1:
            how = f"what the {dep.n_runs} runs' estimates of batch {dep.chosen.batch} allow"
        else:
            how = f"the interval of batch {dep.chosen.batch}'s estimate by {dep.chosen.run}"
        prod = {
            r.name: r.production[dep.chosen.batch]
            for r in runs
            if dep.chosen.batch in (getattr(r, "production", None) or {})
        }
        ranges[dep.eta_shown] = DecideRange(
            dep.low, dep.high, "estimated", dep.chosen.batch, how, dep.drift, prod,
            dep.audited is not None,
        )  # fmt: skip
        first.append(dep.eta_shown)
    elif dep.eta is not None and dep.eta > 0:  # no judged run estimated it
        dep = replace(dep, eta_shown=shown_eta(dep.eta))
        first.append(dep.eta_shown)
    if opts.decide_over is not None:
        lo, hi = opts.decide_over
        mid = shown_eta(math.sqrt(lo * hi) if lo > 0 else hi / 2)
        ranges.setdefault(mid, DecideRange(lo, hi, "range", "", "the range asked"))
        first.insert(0, mid)
    first = list(dict.fromkeys(first))
    rest = tuple(p for p in opts.prevalences if p not in first)
    return dep, replace(opts, prevalences=(*first, *rest), decide_ranges=ranges)


def _live_rules(data: dict, fr: _Frame, point: Mapping[str, Any], unc: _Uncertainty) -> None:
    """What the live verdict needs to apply the printed verdict's rules at any η.

    Each run gets ``judged`` (runs too small to be judged never win); with costs and replicates
    each judged leading run (the runs drawn, :data:`~.charts.MAX_LEAD` at most) gets
    ``cost_hi``: the upper limit of its lowest expected cost on a log grid
    (:func:`mlflow_imbalance.stats.robust.lowest_cost_limits`, the tables' seed, from the
    tables' draws: :meth:`_Uncertainty.live_cost_limits`) and, at the chosen prevalences,
    exactly the tables' limit the printed verdict used. A run outside the leading ones has no
    limits in the page, and the live verdict keeps its decision there.
    """
    from mlflow_imbalance.report.analysis.robust import not_judged_reason
    from mlflow_imbalance.stats.robust import lowest_cost_limits

    opts = fr.opts
    grid = live_cost_grid(fr.grid)
    by_name = {r.name: r for r in fr.runs}
    for item in data.get("runs", []):
        r = by_name.get(item["name"])
        if r is None:
            continue
        item["judged"] = not not_judged_reason(r.counts)
        if not (item["judged"] and item.get("lead") and opts.costs_given and opts.n_bootstrap):
            continue  # runs beyond the leading ones are not checked live (one bootstrap each)
        if r.counts.weighted:
            continue
        drawn = unc.live_cost_limits(r.name)  # the tables' draws, evaluated with theirs
        if drawn is not None and np.array_equal(drawn[0], grid):
            hi = drawn[2]
        else:  # the same draws again (the tables' seed: headline_intervals)
            _, hi = lowest_cost_limits(
                r.counts, grid, opts.cost_fp, opts.cost_fn, n_boot=opts.n_bootstrap,
                seed=opts.seed, confidence=opts.confidence,
            )  # fmt: skip
        exact = {}
        boot = point[r.name].get("boot", {})
        for j, eta in enumerate(fr.chosen):
            iv = boot.get(("cost", 1 + j))
            if iv is not None:
                exact[repr(float(eta))] = min(float(iv[1]), eta * opts.cost_fn,
                                              (1 - eta) * opts.cost_fp)  # fmt: skip
        item["cost_hi"] = {"eta": grid.tolist(), "hi": hi.tolist(), "exact": exact}


def _feta_plain(x: float) -> str:
    from mlflow_imbalance._numbers import fmt_eta

    return fmt_eta(x)


def _frame(
    runs: Sequence[Any], opts: Any, formatters: Mapping[str, Callable], dep: Deployment
) -> _Frame:
    """The report's prevalences: test, chosen, the η grid and its range, the verdict's η.

    The range also spans every production batch's estimate and interval, so the control can
    move to each of them.
    """
    test_prev = {r.name: float(r.counts.prevalence) for r in runs}
    chosen = list(opts.prevalences)
    batches = [float(x) for e in dep.estimates for x in (e.result.low, e.result.high) if x > 0]
    key_etas = sorted({*test_prev.values(), *chosen, *batches})
    if opts.prevalence_range is not None:
        lo, hi = opts.prevalence_range
    else:
        lo, hi = max(1e-6, min(key_etas) / 10.0), min(0.5, max(key_etas) * 10.0)
        if hi <= lo:
            lo, hi = min(lo, hi) / 10, 0.5
    grid = np.unique(
        np.concatenate([np.geomspace(lo, hi, opts.n_grid), [e for e in chosen if lo <= e <= hi]])
    )
    if chosen:
        v_etas, v_index = chosen, [1 + j for j in range(len(chosen))]
    else:  # no chosen η: decide at the (median) test prevalence
        v_etas = [float(np.median(list(test_prev.values())))]
        v_index = [0 if len(set(test_prev.values())) == 1 else None]
    return _Frame(
        runs, opts, formatters["fmt"], formatters["eta"], formatters["int"], formatters["ci"],
        test_prev, chosen, grid, float(lo), float(hi), opts.prevalence_range is not None,
        v_etas, v_index,
    )  # fmt: skip


def _point_stage(
    fr: _Frame, notify: Callable, failed: list[dict[str, str]]
) -> tuple[dict[str, dict[str, Any]], list[Any]]:
    """Exact metrics per run at its test prevalence and the chosen ones (:func:`run_point`).

    A run whose metrics fail is left out with its reason (a ``SkippedRun``); the others go on.
    """
    from mlflow_imbalance.report.model import SkippedRun

    point: dict[str, dict[str, Any]] = {}
    dropped = []
    notify("metrics", 0, len(fr.runs))
    for i, r in enumerate(fr.runs):
        etas = np.array([fr.test_prev[r.name], *fr.chosen], dtype=float)
        try:
            point[r.name] = run_point(r.counts, etas, fr.grid, fr.opts)
        except Exception as exc:  # one run's failure must not abort the report
            reason = f"its metrics could not be computed ({type(exc).__name__}: {exc})"
            logger.warning("run %r left out of the report: %s", r.name, reason, exc_info=True)
            dropped.append(SkippedRun(r.name, reason, r.run_id))
        notify("metrics", i + 1, len(fr.runs))
    return point, dropped


def _uncertainty_stage(
    fr: _Frame,
    point: dict,
    lead: Sequence[str],
    seed_for: Callable,
    notify: Callable,
    failed: list[dict[str, str]],
) -> _Uncertainty:
    """Intervals at the operating points, bootstrap replicates and bands, sample-size rows.

    A run whose intervals fail keeps its exact values without intervals (and with a note); a
    run too small to be tested (:func:`too_small_to_test`) keeps its intervals but gives no
    replicates to the difference tests.
    """
    unc = _Uncertainty(fr.opts, seed_for)
    notify("bootstrap", 0, len(fr.runs))
    for i, r in enumerate(fr.runs):
        p = point[r.name]
        ok = _isolated("intervals", r.name, failed, False, _run_intervals, unc, r, p, fr, lead)
        if not ok:
            k = len(p["etas"])
            p.update(op_precision_ci=[None] * k, op_recall_ci=[None] * k, boot={},
                     adequacy=[None] * k)  # fmt: skip
            unc.point_reps.pop(r.name, None)
        elif too_small_to_test(r.name, r.counts):
            unc.point_reps.pop(r.name, None)
        notify("bootstrap", i + 1, len(fr.runs))
    return unc


def _run_intervals(unc: _Uncertainty, r: Any, p: dict, fr: _Frame, lead: Sequence[str]) -> bool:
    """One run's intervals (valid although its operating point was chosen on its counts)."""
    n, c = r.name, r.counts
    pts = zip(p["op_threshold"], p["etas"], strict=True)
    sel = [unc.selected_interval(n, c, t, e) for t, e in pts]
    p["op_precision_ci"] = [
        None if s is None or tp <= 0 else s[0] for s, tp in zip(sel, p["op_tp"], strict=True)
    ]
    p["op_recall_ci"] = [None if s is None else s[1] for s in sel]
    p["boot"] = unc.bootstrap(n, c, p["etas"], fr.grid, p["sweep"], full=n in lead)
    p["adequacy"] = [
        unc.adequacy(c, tp, fp, eta)
        for tp, fp, eta in zip(p["op_tp"], p["op_fp"], p["etas"], strict=True)
    ]
    return True


_NO_FLIPS: dict[str, Any] = {"decision": [], "flips": [], "note": None, "all": [], "roc_auc": [],
                             "others": {"text": "", "listed": [], "n_summarised": 0}}  # fmt: skip


def _sub(fr: _Frame, runs: Sequence[Any]) -> _Frame:
    """The frame with only ``runs`` (a stage run without the runs that failed in it)."""
    return fr if len(runs) == len(fr.runs) else replace(fr, runs=list(runs))


def _keep(names: Sequence[str], runs: Sequence[Any]) -> list[str]:
    keep = {r.name for r in runs}
    return [n for n in names if n in keep]


def _keep_orders(orders: Mapping[float, Sequence[str]], runs: Sequence[Any]) -> dict:
    return {eta: _keep(order, runs) for eta, order in orders.items()}


def _without_culprits(
    stage: str, runs: Sequence[Any], failed: list[dict[str, str]], fn: Callable[[list], Any]
) -> Any:
    """``fn(runs)``; when it fails, the runs that fail it alone are left out of this stage.

    Each left-out run gets a callout naming the stage and the error; the stage is then built
    from the others. A failure no single run causes (or that every run causes) is raised.
    """
    try:
        return fn(list(runs))
    except Exception as exc:
        culprits = {}
        for r in runs:
            try:
                fn([r])
            except Exception as alone:  # this run cannot go through the stage
                culprits[r.name] = alone
        if not culprits or len(culprits) == len(runs):
            raise exc from None
        for name, err in culprits.items():
            logger.warning("report stage %r left out run %r: %s", stage, name, err)
            failed.append({"stage": stage, "who": name, "error": f"{type(err).__name__}: {err}"})
        return fn([r for r in runs if r.name not in culprits])


def _isolated(
    stage: str, who: str, failed: list[dict[str, str]], fallback: Any, fn: Callable, *args: Any
) -> Any:
    """``fn(*args)``, or ``fallback`` with the failure recorded: one run cannot sink a stage."""
    try:
        return fn(*args)
    except Exception as exc:  # reported in the page and the log, the report goes on
        logger.warning("report stage %r failed for %s", stage, who, exc_info=True)
        failed.append({"stage": stage, "who": who, "error": f"{type(exc).__name__}: {exc}"})
        return fallback


def _small_and_failed_notes(runs: Sequence[Any], failed: Sequence[dict[str, str]]) -> list:
    """Callouts for runs too small to test and for stages that failed (one line each)."""
    out = []
    small = [too_small_to_test(r.name, r.counts) for r in runs]
    small = [s for s in small if s]
    if small:
        out.append({"level": "warning", "title": "Too few cases to test:",
                    "text": "; ".join(small) + ". Such a run has exact values and wide "
                    "intervals, but no test against other runs."})  # fmt: skip
    for f in failed:
        out.append({"level": "warning", "title": f"No {f['stage']} for {f['who']}:",
                    "text": f"{f['error']} (the rest of the report is complete)."})  # fmt: skip
    return out


def _verdict_stage(
    fr: _Frame,
    point: dict,
    lead: Sequence[str],
    v_orders: Mapping[float, Sequence[str]],
    unc: _Uncertainty,
    seed_for: Callable,
    notify: Callable,
) -> tuple[list[Any], dict[float, list[str]]]:
    """The verdict at each chosen η, tested on one paired resample of the leading runs."""
    notify("verdict", 0, 1)
    by_name, lead_set = {r.name: r for r in fr.runs}, set(lead)
    best_first = [n for n in next(iter(v_orders.values()), fr.names) if n in lead_set]
    unc.shared = shared_replicates(
        [by_name[n] for n in best_first], {n: point[n]["etas"] for n in fr.names}, fr.opts,
        seed_for, MAX_PAIRED_EXAMPLES,
    )  # fmt: skip
    out = build_verdicts(
        fr.runs, fr.v_etas, fr.v_index, fr.opts, unc, fr.fmt, fr.feta, fr.fint, seed_for, fr.fci,
        intervals={n: point[n]["boot"] for n in fr.names},
        ranges=getattr(fr.opts, "decide_ranges", None),
    )  # fmt: skip
    notify("verdict", 1, 1)
    return out


def _anchors(fr: _Frame, verdicts: Sequence[Any]) -> list[Anchor]:
    """The prevalences the decision is judged between: the shared test prevalence, the chosen."""
    out = []
    for v in verdicts if fr.chosen else ():
        # the criterion's best run at the verdict's η: a verdict over a range may ship another
        # decision (v.at_estimate is the one at the η), and flagging nothing names the best
        # run it beat as runner_up
        w = v.at_estimate or v
        best = w.run if w.decision == "run" else w.runner_up
        if best is not None:
            out.append(Anchor(v.prevalence, best))
    if fr.same_test:
        eta = next(iter(fr.test_prev.values()))
        winner = criterion_orders(fr.counts, [eta], fr.opts)[eta][0]
        out.append(Anchor(eta, winner, is_test=True))
    return out


def _flip_stage(
    fr: _Frame,
    point: dict,
    lead: Sequence[str],
    verdicts: Sequence[Any],
    unc: _Uncertainty,
    seed_for: Callable,
    progress: Callable | None,
) -> dict[str, Any]:
    """Does the decision depend on η (the criterion's winner map), and the other flips."""
    key, label = fr.criterion, _LABELS[fr.criterion]
    anchors = _anchors(fr, verdicts)
    # sorted: exact ties go to the first name, as in the verdict's order
    compared = sorted({*lead, *(a.winner for a in anchors)})
    counts, by_name = fr.counts, {r.name: r for r in fr.runs}
    rows, note, flips_found = [], None, []
    if key != "roc_auc" and len(compared) > 1:
        from mlflow_imbalance.report.analysis.verdict import criterion_value

        wmap = winner_map(  # the root finding evaluates the criterion alone (hull cached)
            compared, fr.grid,
            {n: criterion_sweep(counts[n], point[n], fr.grid, key, fr.opts) for n in compared},
            lambda n, e: criterion_value(counts[n], e, key, fr.opts),
            lower_is_better=key == "cost",
        )  # fmt: skip
        intervals = {n: point[n]["boot"] for n in fr.names}
        index = {e: 1 + j for j, e in enumerate(fr.chosen)}

        def test(run: str, other: str, eta: float) -> tuple[bool | None, str]:
            _, p, how, sig, _ = pair_test(
                key, by_name[run], by_name[other], eta, index.get(eta), fr.opts, unc, seed_for,
                intervals,
            )  # fmt: skip
            if p is None:
                return None, how
            return sig, f"{'significant' if sig else 'not significant'} (p = {p:.3g}; {how})"

        flips = flips_found = decision_flips(wmap, anchors, test, fr.feta)
        rows = decision_rows(flips, label, fr.feta)
        for row in rows:
            row["metric_key"] = key
        thresholds = {
            (n, float(e)): float(t)
            for n in compared
            for e, t in zip(point[n]["etas"], point[n]["op_threshold"], strict=True)
        }
        note = decision_note(flips, anchors, label, thresholds, fr.feta, fr.fmt)
    anchor_etas = fr.chosen or sorted(set(fr.test_prev.values()))
    lead_runs = [r for r in fr.runs if r.name in set(lead)]
    others = metric_flips(
        lead_runs, point, fr.opts, (fr.lo, fr.hi), anchor_etas, unc, fr.grid, fr.feta, progress
    )
    return {
        "decision": rows,
        "flips": flips_found,
        "note": note,
        "all": others,
        "others": other_flips_summary(others, key, label),
        "roc_auc": roc_auc_pairs(lead, point, key, fr.chosen, label, fr.feta, fr.fmt),
    }


def _chart_stage(
    fr: _Frame,
    point: dict,
    lead: Sequence[str],
    v_orders: Mapping[float, Sequence[str]],
    verdicts: Sequence[Any],
    unc: _Uncertainty,
    flips: Mapping[str, Any],
    links: Mapping[str, str] | None,
    notify: Callable,
) -> dict[str, Any]:
    """Colours, the page's data and the Vega-Lite specs."""
    from mlflow_imbalance.plots._style import run_colors

    notify("charts", 0, 1)
    colors = {n: "#8c959f" for n in fr.names}
    colors.update(run_colors(lead))
    swatch = swatches(lead, colors)  # the tables' and controls' colour keys
    key = fr.criterion
    if key == "cost":
        for n in lead:
            criterion_sweep(fr.counts[n], point[n], fr.grid, key, fr.opts)
    # the criterion's chart marks where the best run changes; the others where two runs swap
    ticks = [*flips["decision"], *(f for f in flips["all"] if f["metric_key"] != key)]
    data = payload(
        fr.runs, lead, swatch, point, fr.grid, unc, fr.opts, key, fr.chosen,
        list(fr.test_prev.values()), ticks, dict(links or {}),
    )  # fmt: skip
    data["band_runs"] = views.band_runs(lead, verdicts)
    # one flag for the band layers, the page's "Bands" control and the "Shaded" sentence:
    # no bands without replicates, nor for weighted runs (they have none)
    data["has_bands"] = bool(fr.opts.n_bootstrap) and any(
        "roc_band" in it or it.get("sweep_bands") for it in data["runs"] if it["lead"]
    )
    chart_specs = specs(
        lead, colors, key, "", (float(fr.grid[0]), float(fr.grid[-1])), data["has_bands"],
        fr.opts.costs_given, tuple(data["roc_axis"]),
    )  # fmt: skip
    notify("charts", 1, 1)
    return {"swatch": swatch, "data": data, "specs": chart_specs}


def _assemble(
    fr: _Frame,
    point: dict,
    lead: Sequence[str],
    unc: _Uncertainty,
    verdicts: Sequence[Any],
    flips: Mapping[str, Any],
    charts: Mapping[str, Any],
    tables: Any,
    adequacy: Any,
    notes: Sequence[dict[str, str]],
    skipped: Sequence[Any],
    experiment: str | None,
    links: Mapping[str, str],
) -> dict[str, Any]:
    """The template context: what every section of the page reads."""
    opts, fmt, feta = fr.opts, fr.fmt, fr.feta
    conf, data = opts.confidence, charts["data"]
    all_weighted = all(r.counts.weighted for r in fr.runs)
    out = views.header(fr.runs, opts, experiment, fr.test_prev, fr.chosen, fmt, feta)
    out.update(
        prevalence_range=f"{feta(fr.lo)} – {feta(fr.hi)}",
        range_chosen=fr.range_chosen,
        confidence=f"{conf:.0%}" if round(conf * 100) == conf * 100 else f"{conf:.1%}",
        methods=unc.methods(),
        warnings=list(notes),
        verdict_data=verdicts,
        verdicts=[views.verdict_view(v, fmt, feta, fr.fint, fr.fci, conf) for v in verdicts],
        tables=tables,
        roc_rows=_roc_rows(fr.runs, point, charts["swatch"], fmt, fr.fci, unc, conf),
        decision_flips=flips["decision"],
        flips=flips["all"],
        other_flips=flips["others"],
        flips_note=unc.flips_note,
        roc_contradictions=flips["roc_auc"],
        lead=list(lead),
        n_runs=len(fr.runs),
        any_weighted=any(r.counts.weighted for r in fr.runs),
        all_weighted=all_weighted,  # no interval, band or test
        has_bands=data["has_bands"],
        big=len(fr.runs) > MAX_TABLE_ROWS,
        max_rows=MAX_TABLE_ROWS,
        live_eta=(fr.chosen or fr.v_etas)[0],
        eta_lo=float(fr.grid[0]),
        eta_hi=float(fr.grid[-1]),
        data=data,
        specs=charts["specs"],
        chart_ids=list(charts["specs"]),
        bands_note=(
            "none drawn: the runs carry sample weights, and the bands need whole-number counts."
            if all_weighted
            else unc.bands_note
        ),
        adequacy=adequacy,
        # per run and metric: (exact values, draws) at the table's prevalences (test first),
        # behind the table intervals, the ties and the verdict's unpaired test
        point_reps=dict(getattr(unc, "point_reps", {}) or {}),
        # runs scored on the same examples: the paired replicates behind the verdict's and
        # the tables' paired tests
        shared_replicates=unc.shared,
        adequacy_note=views.adequacy_note(out["op_rule"], conf),
        runs=[views.run_row(r, charts["swatch"][r.name], fr.fint, feta, links) for r in fr.runs],
        digest_groups=views.digest_groups(fr.runs),
        skipped=[{"name": s.name, "run_id": s.run_id, "reason": s.reason} for s in skipped],
        # the SkippedRun records, those the analysis left out included (Report.skipped)
        skipped_runs=list(skipped),
    )
    return out


def one_blas_thread() -> Any:
    """One BLAS thread for the analysis's many small matrix products (:func:`build_report`).

    A second thread only adds CPU time on this workload; a no-op without threadpoolctl.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _leading(
    names: Sequence[str], orders: Mapping[float, Sequence[str]], limit: int = MAX_LEAD
) -> list[str]:
    """The runs drawn and listed first: round-robin over each verdict η's order, ≤ ``limit``.

    All of ``names`` (in their order) when they are no more than ``limit``; otherwise only
    runs of ``names`` are taken from the orders.
    """
    if len(names) <= limit:
        return list(names)
    allowed = set(names)
    out: list[str] = []
    lists = [[n for n in order if n in allowed] for order in orders.values()]
    k = 0
    while len(out) < limit and k < len(names):
        for order in lists:
            if k < len(order) and order[k] not in out and len(out) < limit:
                out.append(order[k])
        k += 1
    return out or list(names[:limit])
