"""Loaded runs → the report's template context (no MLflow, no HTML here).

The stages (metrics, bootstrap, ranking, figures) are timed; strings are left raw (jinja2
autoescapes them).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from mlflow_imbalance.core import curves as _curves
from mlflow_imbalance.core import metrics as _metrics
from mlflow_imbalance.report.analysis._common import (
    ADEQUACY_TOLERANCE,
    FLIP_METRICS,
    _f1_box,
    _Timer,
)
from mlflow_imbalance.report.analysis.charts import (
    BAND_RUNS,
    MAX_LEAD,
    payload,
    specs,
    swatches,
)
from mlflow_imbalance.report.analysis.flips import (
    _flips,
)
from mlflow_imbalance.report.analysis.intervals import (
    _Uncertainty,
)
from mlflow_imbalance.report.analysis.paired import shared_replicates
from mlflow_imbalance.report.analysis.tables import (
    _adequacy_rows,
    _roc_rows,
    _tables,
)
from mlflow_imbalance.report.analysis.verdict import (
    MAX_PAIRED_EXAMPLES,
    build_verdicts,
    chance_text,
    count,
    criterion_orders,
    p_value_text,
)
from mlflow_imbalance.stats.bootstrap import metric_statistic

logger = logging.getLogger(__name__)


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
    from mlflow_imbalance.plots._style import run_colors

    fmt, feta, fint, fci = (formatters[k] for k in ("fmt", "eta", "int", "ci"))
    links = dict(links or {})
    timer = _Timer(timings, cpu_timings)
    names = [r.name for r in runs]
    counts = {r.name: r.counts for r in runs}
    test_prev = {n: float(c.prevalence) for n, c in counts.items()}
    chosen = list(opts.prevalences)
    key_etas = sorted({*test_prev.values(), *chosen})
    if opts.prevalence_range is not None:
        lo, hi = opts.prevalence_range
        range_chosen = True
    else:
        lo = max(1e-6, min(key_etas) / 10.0)
        hi = min(0.5, max(key_etas) * 10.0)
        if hi <= lo:
            lo, hi = min(lo, hi) / 10, 0.5
        range_chosen = False
    grid = np.unique(
        np.concatenate([np.geomspace(lo, hi, opts.n_grid), [e for e in chosen if lo <= e <= hi]])
    )
    conf = opts.confidence
    cost_rule = opts.costs_given
    warnings: list[dict[str, str]] = []
    notify = progress or (lambda *_: None)

    # ------------------------------------------------------------ point metrics (exact)
    with timer.stage("metrics"):
        point: dict[str, dict[str, Any]] = {}
        notify("metrics", 0, len(counts))
        for i, (n, c) in enumerate(counts.items()):
            etas = np.array([test_prev[n], *chosen], dtype=float)
            mf1, thr = _metrics.max_f1_point(c, etas)
            opt = _curves.optimal_operating_point(c, etas, opts.cost_fp, opts.cost_fn)
            # each run's AP / PR-AUC / max-F1 curve over the eta grid, ONCE: the metric-vs-eta
            # charts, centre of the bands and scanned for ranking flips
            sweep, sweep_err = {}, 0.0
            for key, _ in FLIP_METRICS:
                st = metric_statistic(c, key, grid)
                sweep[key] = st.estimate(c)
                sweep_err = max(sweep_err, st.max_error)
            point[n] = {
                "roc_auc": float(_metrics.roc_auc(c)),
                "etas": etas,
                "ap": np.atleast_1d(_metrics.average_precision(c, etas)),
                "pr_auc": np.atleast_1d(_metrics.pr_auc(c, etas)),
                "max_f1": np.atleast_1d(mf1),
                "cost": np.atleast_1d(opt.cost),
                "sweep": sweep,
                "sweep_error": sweep_err,
            }
            # the operating point, ONE definition everywhere: the cost-optimal hull vertex when
            # costs are given, else the max-F1 threshold at that eta
            if cost_rule:
                op_thr = np.atleast_1d(opt.threshold).astype(float)
                op_tpr = np.atleast_1d(opt.tpr).astype(float)
                op_fpr = np.atleast_1d(opt.fpr).astype(float)
            else:
                op_thr = np.atleast_1d(thr).astype(float)
                idx = np.searchsorted(-c.thresholds, -op_thr)
                op_tpr, op_fpr = c.tpr[idx].astype(float), c.fpr[idx].astype(float)
            point[n]["op_threshold"] = op_thr
            point[n]["op_tp"] = np.round(op_tpr * c.n_pos) if not c.weighted else op_tpr * c.n_pos
            point[n]["op_fp"] = np.round(op_fpr * c.n_neg) if not c.weighted else op_fpr * c.n_neg
            point[n]["op_tpr"] = op_tpr
            point[n]["op_fpr"] = op_fpr
            point[n]["f1_box"] = [
                None if c.weighted or not np.isfinite(t) else _f1_box(c, float(t), float(e), conf)
                for t, e in zip(op_thr, etas, strict=True)
            ]
            point[n]["op_precision"] = np.array(
                [
                    float(_curves.p3_curve(float(t), float(f), float(e)))
                    for t, f, e in zip(op_tpr, op_fpr, etas, strict=True)
                ]
            )
            point[n]["op_f1"] = np.array(
                [
                    2 * e * t / (e * t + e + (1 - e) * f)
                    for t, f, e in zip(op_tpr, op_fpr, etas, strict=True)
                ]
            )
            notify("metrics", i + 1, len(counts))

    # the verdict's prevalences and the leading runs (drawn, compared pairwise) from the exact
    # criterion values: the bootstrap resamples the band grid for those runs only
    same_test = len(set(test_prev.values())) == 1
    if chosen:
        v_etas, v_index = chosen, [1 + j for j in range(len(chosen))]
    else:
        v_etas = [float(np.median(list(test_prev.values())))]
        v_index = [0 if same_test else None]
    v_orders = criterion_orders(counts, v_etas, opts)
    lead = _leading(names, v_orders)

    # ------------------------------------------------------------ intervals and bands
    with timer.stage("bootstrap"):
        unc = _Uncertainty(opts, seed_for)
        notify("bootstrap", 0, len(counts))
        for i, (n, c) in enumerate(counts.items()):
            p = point[n]
            # weighted counts: point estimates only (no binomial counts; as the logging hook)
            # intervals at the operating point, valid although it was chosen on these counts
            sel = [
                unc.selected_interval(n, c, t, e)
                for t, e in zip(p["op_threshold"], p["etas"], strict=True)
            ]
            p["op_precision_ci"] = [
                None if s is None or tp <= 0 else s[0]
                for s, tp in zip(sel, p["op_tp"], strict=True)
            ]
            p["op_recall_ci"] = [None if s is None else s[1] for s in sel]
            p["boot"] = unc.bootstrap(n, c, p["etas"], grid, p["sweep"], full=n in lead)
            p["adequacy"] = [
                unc.adequacy(c, tp, fp, eta)
                for tp, fp, eta in zip(p["op_tp"], p["op_fp"], p["etas"], strict=True)
            ]
            notify("bootstrap", i + 1, len(counts))

    # ------------------------------------------------------------ verdict
    with timer.stage("verdict"):
        notify("verdict", 0, 1)
        # runs scored on the same examples: one paired resample per group for the verdict's
        # and the tables' tests (the leading runs, best first; the others stay unpaired)
        by_name, lead_set = {r.name: r for r in runs}, set(lead)
        best_first = [n for n in next(iter(v_orders.values()), names) if n in lead_set]
        unc.shared = shared_replicates(
            [by_name[n] for n in best_first], {n: point[n]["etas"] for n in names}, opts,
            seed_for, MAX_PAIRED_EXAMPLES,
        )  # fmt: skip
        verdicts, orders = build_verdicts(
            runs, v_etas, v_index, opts, unc, fmt, feta, fint, seed_for, fci,
            intervals={n: point[n]["boot"] for n in names},
        )  # fmt: skip
        notify("verdict", 1, 1)
        colors = {n: "#8c959f" for n in names}
        colors.update(run_colors(lead))
        swatch = swatches(lead, colors)  # the tables' and controls' colour keys

    # ------------------------------------------------------------ ranking flips
    with timer.stage("ranking"):
        lead_runs = [r for r in runs if r.name in set(lead)]
        lead_counts = {r.name: r.counts for r in lead_runs}
        flips, contradictions = _flips(
            lead_runs, lead_counts, point, opts, (lo, hi), chosen, test_prev, progress, feta,
            fmt, unc, grid,
        )  # fmt: skip
        for f in flips:
            f["changes_winner_at"] = _changes_winner(f, verdicts, chosen, test_prev, feta)

    # ------------------------------------------------------------ charts (data + specs)
    with timer.stage("charts"):
        notify("charts", 0, 1)
        criterion = "cost" if cost_rule else opts.primary_metric
        if cost_rule:
            for n in lead:
                point[n]["cost_sweep"] = np.atleast_1d(
                    _curves.optimal_operating_point(
                        counts[n], grid, opts.cost_fp, opts.cost_fn
                    ).cost
                )
        data = payload(
            runs, lead, swatch, point, grid, unc, opts, criterion, chosen,
            list(test_prev.values()), flips, links,
        )  # fmt: skip
        # the runs whose bands are drawn at first: the best few when more are charted
        data["band_runs"] = _leading(lead, v_orders, BAND_RUNS)
        # one flag for the band layers, the page's "Bands" control and the "Shaded" sentence:
        # no bands without replicates, nor for weighted runs (they have none)
        data["has_bands"] = bool(opts.n_bootstrap) and any(
            "roc_band" in it or it.get("sweep_bands") for it in data["runs"] if it["lead"]
        )
        chart_specs = specs(
            lead, colors, criterion, "", (float(grid[0]), float(grid[-1])),
            data["has_bands"], cost_rule, tuple(data["roc_axis"]),
        )  # fmt: skip
        notify("charts", 1, 1)

    # ------------------------------------------------------------ tables
    with timer.stage("tables"):
        tables = _tables(
            runs, point, chosen, swatch, fmt, feta, fci, opts, orders, verdicts, lead,
            reps=getattr(unc, "point_reps", None), shared=unc.shared,
        )  # fmt: skip
    roc_rows = _roc_rows(runs, point, swatch, fmt, fci, unc, conf)

    # ------------------------------------------------------------ warnings (first in report)
    major = [f for f in flips if f["major"]]
    if major:
        warnings.append(_major_flip_warning(major, conf))
    elif flips:
        warnings.append(
            {
                "level": "warning",
                "title": "Rankings flip within the prevalence range.",
                "text": f"{len(flips)} flip(s) in {feta(lo)}–{feta(hi)}, none between the test and "
                "chosen prevalences.",
            }
        )
    if contradictions:
        warnings.append(
            {
                "level": "warning",
                "title": "ROC-AUC ranks runs differently.",
                "text": f"{len(contradictions)} pair(s) are ordered one way by ROC-AUC and the "
                "other way by a prevalence-dependent metric at a chosen prevalence: do not pick "
                "by ROC-AUC.",
            }
        )
    digests = _digest_groups(runs)
    if len(digests) > 1:
        warnings.append(
            {
                "level": "warning",
                "title": "Runs were evaluated on different test sets.",
                "text": "Their label digests differ (see “Runs”); compare them with caution.",
            }
        )
    synth = [r.name for r in runs if r.synthesized]
    if synth:
        warnings.append(
            {
                "level": "warning",
                "title": "Synthesised positives.",
                "text": "Positives of "
                + _names_short(synth, 8)
                + " were synthesised from negatives (Cataltepe et al.): TPR, precision and "
                "every PR number of these runs estimate detection of the synthetic anomalies, "
                "not of real positives.",
            }
        )
    small = sorted(
        {a["run"] for a in _adequacy_rows(runs, point, chosen, feta, fmt, fint) if not a["ok"]}
    )
    if small:
        warnings.append(
            {
                "level": "warning",
                "title": "Test set too small for some claims.",
                "text": "Precision at a chosen prevalence is known only to worse than "
                f"±{ADEQUACY_TOLERANCE:.0%} for: "
                + _names_short(small, 8)
                + " (see “Sample-size adequacy”).",
            }
        )
    if skipped:
        warnings.append(
            {
                "level": "warning",
                "title": f"{len(skipped)} run(s) skipped.",
                "text": "They lack valid counts named “" + opts.name + "”; reasons under “Runs”.",
            }
        )
    inexact = [n for n, c in counts.items() if not c.is_exact]
    if inexact:
        warnings.append(
            {
                "level": "info",
                "title": "Reduced counts.",
                "text": "Counts of "
                + _names_short(inexact, 8)
                + " were reduced with a bounded error (max TPR/FPR error recorded in the "
                "file); their numbers are approximate.",
            }
        )
    weighted = [n for n, c in counts.items() if c.weighted]
    if weighted:
        warnings.append(
            {
                "level": "info",
                "title": "Weighted counts.",
                "text": _names_short(weighted, 8)
                + (" carries" if len(weighted) == 1 else " carry")
                + " sample weights: every metric is exact, but intervals, bands and tests need "
                "whole-number counts, so these numbers are point estimates only.",
            }
        )
    if not chosen:
        warnings.append(
            {
                "level": "info",
                "title": "No deployment prevalence chosen.",
                "text": "Pass prevalences (--prevalence) to see every number at the prevalence the "
                "model will meet.",
            }
        )
    warnings.extend(unc.notes)

    title = opts.title or (f"Imbalance report: {experiment}" if experiment else "Imbalance report")
    from mlflow_imbalance._version import __version__

    op_rule = (
        f"the cost-optimal threshold (C_FP = {fmt(opts.cost_fp)}, C_FN = {fmt(opts.cost_fn)})"
        if cost_rule
        else "the max-F1 threshold"
    )
    big = len(runs) > MAX_TABLE_ROWS
    all_weighted = all(r.counts.weighted for r in runs)
    return {
        "title": title,
        "experiment": experiment,
        "counts_name": opts.name,
        "version": __version__,
        "test_prevalences": [
            f"{feta(e)} ({_names_short(n for n in names if test_prev[n] == e)})"
            for e in sorted(set(test_prev.values()))
        ],
        "deployment_prevalences": [feta(e) for e in chosen],
        "prevalences_source": opts.prevalences_source,
        "prevalence_range": f"{feta(lo)} – {feta(hi)}",
        "range_chosen": range_chosen,
        "costs_given": cost_rule,
        "costs_source": opts.costs_source,
        "cost_fp": fmt(opts.cost_fp),
        "cost_fn": fmt(opts.cost_fn),
        "criterion": (
            "lowest expected cost per case" if cost_rule else f"highest {_label(criterion)}"
        ),
        "criterion_key": criterion,
        "op_rule": op_rule,
        "confidence": f"{conf:.0%}" if round(conf * 100) == conf * 100 else f"{conf:.1%}",
        "methods": unc.methods(),
        "n_bootstrap": opts.n_bootstrap,
        "seed": opts.seed,
        "warnings": warnings,
        "verdict_data": verdicts,
        "verdicts": [_verdict_view(v, fmt, feta, fint, fci, conf) for v in verdicts],
        "tables": tables,
        "roc_rows": roc_rows,
        "flips": flips,
        "flips_note": unc.flips_note,
        "roc_contradictions": contradictions,
        "lead": lead,
        "n_runs": len(runs),
        "any_weighted": any(r.counts.weighted for r in runs),
        "all_weighted": all_weighted,  # no interval, band or test
        "has_bands": data["has_bands"],
        "big": big,
        "max_rows": MAX_TABLE_ROWS,
        "live_eta": (chosen or v_etas)[0],
        "eta_lo": float(grid[0]),
        "eta_hi": float(grid[-1]),
        "data": data,
        "specs": chart_specs,
        "chart_ids": list(chart_specs),
        "bands_note": (
            "none drawn: the runs carry sample weights, and the bands need whole-number counts."
            if all_weighted
            else unc.bands_note
        ),
        "adequacy": _adequacy_rows(runs, point, chosen, feta, fmt, fint),
        # per run and metric: (exact values, draws) at the table's prevalences (test first),
        # behind the table intervals, the ties and the verdict's unpaired test
        "point_reps": dict(getattr(unc, "point_reps", {}) or {}),
        # runs scored on the same examples: the paired replicates behind the verdict's and
        # the tables' paired tests
        "shared_replicates": unc.shared,
        "adequacy_note": (
            "Brabec et al. (2020) §5: precision at η is only as good as the estimates of TPR "
            f"and FPR at the operating point ({op_rule}). “Relative width” is the half-width of "
            f"the {conf:.0%} Koopman precision interval over the estimate (adequate when at most "
            f"{ADEQUACY_TOLERANCE:.0%}). “False positives” are the test negatives scoring at "
            "or above the threshold: at small η precision rests on them, and k of them pin FPR "
            "down only to about ±2/√k (±10 % takes some 400). “Needed” is the test-set size at "
            "which Brabec's Δ, the "
            f"largest width of the precision band over all η, would be at most "
            f"{ADEQUACY_TOLERANCE:g} (uncertainty.required_sample_size)."
        ),
        "runs": [_run_row(r, swatch[r.name], fmt, feta, fint, links) for r in runs],
        "digest_groups": digests,
        "skipped": [{"name": s.name, "run_id": s.run_id, "reason": s.reason} for s in skipped],
    }


#: Rows of a per-prevalence table shown before "show all runs".
MAX_TABLE_ROWS = 12


def _label(key: str) -> str:
    return {"ap": "AP", "pr_auc": "PR-AUC", "max_f1": "max-F1", "roc_auc": "ROC-AUC",
            "cost": "expected cost"}[key]  # fmt: skip


def _names_short(names: Any, limit: int = 4) -> str:
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


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


def _changes_winner(f, verdicts, chosen, test_prev, feta) -> list[str]:
    """Chosen η (formatted) whose recommended run loses this pair at the test prevalence."""
    out = []
    tests = sorted(set(test_prev.values()))
    for v in verdicts:
        if not chosen or v.run not in (f["a"], f["b"]):
            continue
        for t in tests:
            if min(t, v.prevalence) < f["eta_value"] < max(t, v.prevalence):
                out.append(feta(v.prevalence))
                break
    return out


def _scaled(x: float | None, v: Any) -> float | None:
    """A criterion value as the verdict prints it: expected cost per ``v.per`` cases."""
    return None if x is None else x * (v.per if v.criterion_key == "cost" else 1)


def _verdict_view(
    v: Any, fmt: Any, feta: Any, fint: Any, fci: Any, alpha_conf: float
) -> dict[str, Any]:
    """A :class:`Verdict` shaped for the template (numbers formatted, raw η kept)."""
    per = fint(v.per)
    inf_thr = math.isinf(v.threshold) and v.threshold > 0
    return {
        "eta_value": repr(float(v.prevalence)),
        "eta": feta(v.prevalence),
        "run": v.run,
        "criterion": v.criterion,
        "value": fmt(_scaled(v.value, v), 3),
        "value_unit": f"per {per} cases" if v.criterion_key == "cost" else "",
        "threshold": "none (flag nothing)" if inf_thr else fmt(v.threshold, 4),
        "per": per,
        "alerts": count(v.alerts, fint),
        "caught": count(v.caught, fint),
        "positives": count(v.per * v.prevalence, fint),
        "missed": count(v.missed, fint),
        "precision": fmt(v.precision, 3),
        "precision_ci": fci(v.precision_low, v.precision_high),
        "recall": fmt(v.recall, 3),
        "recall_ci": fci(v.recall_low, v.recall_high),
        "value_ci": fci(*(_scaled(x, v) for x in (v.value_low, v.value_high))),
        "runner_up": v.runner_up,
        "runner_up_ci": fci(*(_scaled(x, v) for x in (v.runner_up_low, v.runner_up_high))),
        "runner_up_value": (
            None if v.runner_up_value is None else fmt(_scaled(v.runner_up_value, v), 3)
        ),
        "significant": v.significant,
        "intervals_apart": v.intervals_apart,
        "p": (None if v.p_value is None else p_value_text(v.p_value, 1 - alpha_conf)),
        "test": v.test,
        "more_data": v.more_data,
        "disagree": v.disagree,
        "chance": v.chance,
        "chance_text": chance_text(
            v.chance, feta(v.prevalence), fci(v.precision_low, v.precision_high)
        ),
        "text": v.text,
    }


def _run_row(
    r: Any, color: str, fmt: Any, feta: Any, fint: Any, links: Mapping[str, str]
) -> dict[str, Any]:
    c = r.counts
    return {
        "name": r.name,
        "color": color,
        "run_id": r.run_id,
        "link": links.get(r.name, ""),
        "n_pos": fint(c.n_pos),
        "n_neg": fint(c.n_neg),
        "prevalence": feta(c.prevalence),
        "n_thresholds": fint(c.n_thresholds),
        "digest": (r.digest[:16] if r.digest else None),
        "source": r.source,
        "synthesized": r.synthesized,
        "params": sorted((str(k), str(v)) for k, v in r.params.items()),
        "tags": sorted((str(k), str(v)) for k, v in r.tags.items()),
    }


def _digest_groups(runs: Sequence[Any]) -> list[dict[str, Any]]:
    groups: dict[str, list[str]] = {}
    for r in runs:
        groups.setdefault(r.digest[:16] if r.digest else "unknown", []).append(r.name)
    if len(groups) == 1 and "unknown" in groups:
        return []
    return [{"digest": k, "runs": v} for k, v in groups.items()]


def _major_flip_warning(major: list[dict[str, Any]], conf: float) -> dict[str, str]:
    """The callout for flips between the test prevalence and a chosen one.

    Alarming ("danger") when a flip there is significant, or when none was tested (no
    bootstrap, weighted counts, beyond the budget); a caution when every one was tested and
    none is significant: the estimates cross, but the test sets cannot tell whether the order
    really changes.
    """
    n = len(major)
    sig = sum(1 for f in major if f["significant"])
    untested = sum(1 for f in major if f["significant"] is None)
    where = (
        f"{n} ranking flip(s) lie between the test prevalence and the chosen deployment "
        "prevalence(s)"
    )
    if sig:
        return {
            "level": "danger",
            "title": "The winner depends on the prevalence.",
            "text": f"{where} ({sig} significant at {conf:.0%}); the ranking at the test "
            "prevalence does not carry over. See “Ranking flips”.",
        }
    if untested:
        how = (
            "not tested for significance"
            if untested == n
            else f"{untested} not tested for significance; none of the {n - untested} tested "
            "is significant"
        )
        return {
            "level": "danger",
            "title": "The winner may depend on the prevalence.",
            "text": f"{where} ({how}); do not carry "
            "the ranking at the test prevalence over. See “Ranking flips”.",
        }
    return {
        "level": "warning",
        "title": "Rankings cross between the test and deployment prevalences.",
        "text": f"{where}, none significant at {conf:.0%}: the estimates change order, but "
        "these test sets cannot tell whether the runs really do. Rank them at the deployment "
        "prevalence (the verdict above), not at the test prevalence. See “Ranking flips”.",
    }
