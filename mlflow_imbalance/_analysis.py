"""The report's numbers: loaded runs → template context (no MLflow, no HTML here).

Every number comes from :mod:`mlflow_imbalance.metrics` (exact functions of the counts at η),
every interval and band from :mod:`mlflow_imbalance.uncertainty`, every flip point and its
significance from :mod:`mlflow_imbalance.ranking`, every figure from
:mod:`mlflow_imbalance.plots`. This module only chooses what to compute, times the stages and
shapes the results for the templates (strings are left raw: jinja2 autoescapes them).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from mlflow_imbalance import metrics, uncertainty
from mlflow_imbalance.core.counts import RocCounts

logger = logging.getLogger(__name__)

FLIP_METRICS: tuple[tuple[str, str], ...] = (
    ("ap", "AP"),
    ("pr_auc", "PR-AUC"),
    ("max_f1", "max-F1"),
)
_METRIC_FN = {
    "ap": metrics.average_precision,
    "pr_auc": metrics.pr_auc,
    "max_f1": metrics.max_f1,
}
#: Points per curve drawn in figures (a display-only decimation, see :func:`draw_counts`).
DRAW_POINTS = 1500
#: Relative half-width of the precision interval accepted as adequate (Brabec §5: ±10 %).
ADEQUACY_TOLERANCE = 0.1


# ---------------------------------------------------------------------------------- helpers
class _Timer:
    def __init__(self, timings: dict[str, float], cpu: dict[str, float] | None = None) -> None:
        self.timings = timings
        self.cpu = {} if cpu is None else cpu

    def stage(self, name: str) -> _Stage:
        return _Stage(self.timings, self.cpu, name)


class _Stage:
    """Wall (perf_counter) and CPU (process_time, all threads) seconds of one stage."""

    def __init__(self, timings: dict[str, float], cpu: dict[str, float], name: str) -> None:
        self.timings, self.cpu, self.name = timings, cpu, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()
        self.c0 = time.process_time()

    def __exit__(self, *exc: Any) -> None:
        self.timings[self.name] = self.timings.get(self.name, 0.0) + time.perf_counter() - self.t0
        self.cpu[self.name] = self.cpu.get(self.name, 0.0) + time.process_time() - self.c0


def draw_counts(c: RocCounts, max_points: int = DRAW_POINTS) -> RocCounts:
    """Counts thinned for drawing only (numbers in tables always use the full counts).

    :func:`uncertainty.thin_for_bootstrap` at ``max_points`` bins per axis (``TPR + FPR`` for
    linear axes, ``log10 FPR`` for the log-FPR ROC and low-η PR curves, ``TPR``), so the drawn
    curve moves less than about ``1/max_points`` of an axis between kept points on every
    figure; the bootstrap uses the same thinning at :data:`BOOT_POINTS`.
    """
    return uncertainty.thin_for_bootstrap(c, max_points).counts


def _f1_box(c: RocCounts, threshold: float, eta: float, conf: float) -> tuple[float, float]:
    """F1 at ``threshold`` and ``eta`` with its Clopper-Pearson box interval (exact)."""
    band = uncertainty.f1_band(c, threshold, [eta], confidence=conf)
    return float(band.low[0]), float(band.high[0])


def _rank(values: Sequence[float], higher_better: bool = True) -> list[int | None]:
    """Competition ranks (1 = best; equal values share a rank); None for NaN."""
    v = np.asarray(values, dtype=float)
    out: list[int | None] = []
    for x in v:
        if not np.isfinite(x):
            out.append(None)
            continue
        better = v > x if higher_better else v < x
        out.append(1 + int(np.sum(better & np.isfinite(v))))
    return out


def _method_name(obj: Any, default: str) -> str:
    for attr in ("method", "label", "description"):
        val = getattr(obj, attr, None)
        if isinstance(val, str) and val:
            return val
    return default


# ---------------------------------------------------------------------------------- context
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
) -> dict[str, Any]:
    """Compute everything the report shows and shape it for the templates."""
    from mlflow_imbalance import plots

    fmt, feta, fint, fci = (formatters[k] for k in ("fmt", "eta", "int", "ci"))
    timer = _Timer(timings, cpu_timings)
    names = [r.name for r in runs]
    counts = {r.name: r.counts for r in runs}
    colors = plots.run_colors(names)
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
    warnings: list[dict[str, str]] = []

    # ------------------------------------------------------------ point metrics (exact)
    with timer.stage("metrics"):
        point: dict[str, dict[str, Any]] = {}
        for n, c in counts.items():
            etas = np.array([test_prev[n], *chosen], dtype=float)
            mf1, thr = metrics.max_f1_point(c, etas)
            opt = metrics.optimal_operating_point(c, etas, opts.cost_fp, opts.cost_fn)
            # each run's AP / PR-AUC / max-F1 curve over the eta grid, ONCE: drawn in the
            # metric-vs-eta figures, centre of the bands and scanned for ranking flips
            sweep, sweep_err = {}, 0.0
            for key, _ in FLIP_METRICS:
                st = uncertainty.metric_statistic(c, key, grid)
                sweep[key] = st.estimate(c)
                sweep_err = max(sweep_err, st.max_error)
            point[n] = {
                "roc_auc": float(metrics.roc_auc(c)),
                "etas": etas,
                "ap": np.atleast_1d(metrics.average_precision(c, etas)),
                "pr_auc": np.atleast_1d(metrics.pr_auc(c, etas)),
                "max_f1": np.atleast_1d(mf1),
                "max_f1_threshold": np.atleast_1d(thr),
                "cost": np.atleast_1d(opt.cost),
                "sweep": sweep,
                "sweep_error": sweep_err,
            }
            idx = np.searchsorted(-c.thresholds, -np.atleast_1d(thr))
            point[n]["op_tp"] = c.tp[idx].astype(float)
            point[n]["op_fp"] = c.fp[idx].astype(float)
            point[n]["op_tpr"] = c.tpr[idx]
            point[n]["op_fpr"] = c.fpr[idx]
            point[n]["f1_box"] = [
                None if c.weighted else _f1_box(c, float(t), float(e), conf)
                for t, e in zip(c.thresholds[idx], etas, strict=True)
            ]
            point[n]["op_precision"] = np.array(
                [
                    float(metrics.p3_curve(float(t), float(f), float(e)))
                    for t, f, e in zip(c.tpr[idx], c.fpr[idx], etas, strict=True)
                ]
            )

    # ------------------------------------------------------------ intervals and bands
    with timer.stage("bootstrap"):
        unc = _Uncertainty(opts, seed_for)
        for i, (n, c) in enumerate(counts.items()):
            p = point[n]
            # weighted counts: point estimates only (no binomial counts; as the logging hook)
            p["op_precision_ci"] = [
                None if c.weighted else unc.precision_interval(tp, fp, c.n_pos, c.n_neg, eta)
                for tp, fp, eta in zip(p["op_tp"], p["op_fp"], p["etas"], strict=True)
            ]
            p["boot"] = unc.bootstrap(n, c, p["etas"], grid, p["sweep"])
            p["adequacy"] = [
                unc.adequacy(c, tp, fp, eta)
                for tp, fp, eta in zip(p["op_tp"], p["op_fp"], p["etas"], strict=True)
            ]
            if progress is not None:
                progress("bootstrap", i + 1, len(counts))

    # ------------------------------------------------------------ ranking flips
    with timer.stage("ranking"):
        flips, contradictions = _flips(
            runs, counts, point, opts, (lo, hi), chosen, test_prev, progress, feta, fmt, unc, grid
        )

    # ------------------------------------------------------------ figures
    with timer.stage("figures"):
        figures = _figures(
            runs, counts, point, opts, chosen, test_prev, grid, (lo, hi), flips, progress, unc
        )

    # ------------------------------------------------------------ table
    table = _table(names, point, chosen, colors, runs, fmt, feta, fci, opts)

    # ------------------------------------------------------------ warnings (first in report)
    major = [f for f in flips if f["major"]]
    if major:
        sig = sum(1 for f in major if f["significant"])
        warnings.append(
            {
                "level": "danger",
                "title": "The winner depends on the prevalence.",
                "text": (
                    f"{len(major)} ranking flip(s) lie between the test prevalence and the "
                    f"chosen deployment prevalence(s) ({sig} significant at {conf:.0%}); the "
                    "ranking at the test prevalence does not carry over. See “Ranking flips”."
                ),
            }
        )
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
                "text": "Positives of " + ", ".join(synth) + " were synthesised from negatives "
                "(Cataltepe et al.): TPR, precision and every PR number of these runs estimate "
                "detection of the synthetic anomalies, not of real positives.",
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
                + ", ".join(small)
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
                "text": "Counts of " + ", ".join(inexact) + " were reduced with a bounded error "
                "(max TPR/FPR error recorded in the file); their numbers are approximate.",
            }
        )
    weighted = [n for n, c in counts.items() if c.weighted]
    if weighted:
        warnings.append(
            {
                "level": "info",
                "title": "Weighted counts.",
                "text": "Binomial intervals of "
                + ", ".join(weighted)
                + " treat weights as counts.",
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

    return {
        "title": title,
        "experiment": experiment,
        "counts_name": opts.name,
        "version": __version__,
        "test_prevalences": [
            f"{feta(e)} ({', '.join(n for n in names if test_prev[n] == e)})"
            for e in sorted(set(test_prev.values()))
        ],
        "deployment_prevalences": [feta(e) for e in chosen],
        "prevalence_range": f"{feta(lo)} – {feta(hi)}",
        "range_chosen": range_chosen,
        "cost_fp": fmt(opts.cost_fp),
        "cost_fn": fmt(opts.cost_fn),
        "confidence": f"{conf:.0%}" if round(conf * 100) == conf * 100 else f"{conf:.1%}",
        "methods": unc.methods(),
        "n_bootstrap": opts.n_bootstrap,
        "seed": opts.seed,
        "warnings": warnings,
        "table": table,
        "flips": flips,
        "flips_note": unc.flips_note,
        "roc_contradictions": contradictions,
        "figures": figures,
        "bands_note": unc.bands_note,
        "adequacy": _adequacy_rows(runs, point, chosen, feta, fmt, fint),
        "adequacy_note": (
            "Brabec et al. (2020) §5: precision at η is only as good as the estimates of TPR "
            "and FPR at the operating point. For each run at each prevalence, the operating "
            "point is the max-F1 threshold; “relative width” is the half-width of "
            f"the {conf:.0%} Koopman precision interval over the estimate (adequate when at most "
            f"{ADEQUACY_TOLERANCE:.0%}); “needed” is the test-set size at which Brabec's Δ, the "
            f"largest width of the precision band over all η, would be at most "
            f"{ADEQUACY_TOLERANCE:g} (uncertainty.required_sample_size)."
        ),
        "runs": [_run_row(r, colors[r.name], fmt, feta, fint) for r in runs],
        "digest_groups": digests,
        "skipped": [{"name": s.name, "run_id": s.run_id, "reason": s.reason} for s in skipped],
    }


def _run_row(r: Any, color: str, fmt: Any, feta: Any, fint: Any) -> dict[str, Any]:
    c = r.counts
    return {
        "name": r.name,
        "color": color,
        "run_id": r.run_id,
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


# ---------------------------------------------------------------------------------- table
def _table(names, point, chosen, colors, runs, fmt, feta, fci, opts) -> dict[str, Any]:
    groups = [
        {
            "label": "Any prevalence",
            "columns": [
                {"key": ("roc_auc", None), "label": "ROC-AUC", "title": "area under the ROC curve"}
            ],
        }
    ]
    cols = [
        ("ap", "AP", "average precision at η (step interpolation)"),
        ("pr_auc", "PR-AUC", "area under the PR curve at η (ROC-segment interpolation)"),
        ("max_f1", "max-F1", "largest F1 over thresholds at η"),
        ("precision", "Precision @ op", "precision at the max-F1 operating point at η"),
        ("cost", "Min cost", "lowest expected cost per example at η (lower is better)"),
    ]
    for j, label in enumerate(["Test prevalence", *[f"η = {feta(e)}" for e in chosen]]):
        groups.append(
            {
                "label": label,
                "columns": [{"key": (k, j), "label": lab, "title": t} for k, lab, t in cols],
            }
        )
    # values and intervals per column
    columns = [c for g in groups for c in g["columns"]]
    matrix: dict[tuple, list[tuple[float, float | None, float | None]]] = {}
    for col in columns:
        key, j = col["key"]
        vals = []
        for n in names:
            p = point[n]
            if key == "roc_auc":
                ci = p["boot"].get(("roc_auc", None))
                vals.append((p["roc_auc"], *(ci or (None, None))))
            elif key == "precision":
                lo, hi = p["op_precision_ci"][j] or (None, None)
                vals.append((float(p["op_precision"][j]), lo, hi))
            elif key == "cost":
                ci = p["boot"].get(("cost", j))
                vals.append((float(p["cost"][j]), *(ci or (None, None))))
            else:
                ci = p["boot"].get((key, j))
                if ci is not None and _fp_short(p, j) is not None:
                    ci = None  # not valid there: neither shown as an interval nor used for ties
                vals.append((float(p[key][j]), *(ci or (None, None))))
        matrix[col["key"]] = vals
    rows = []
    cell_data: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for col in columns:
        key, j = col["key"]
        higher = key != "cost"
        vals = matrix[col["key"]]
        v = [x[0] for x in vals]
        ranks = _rank(v, higher_better=higher)
        finite = [i for i, x in enumerate(v) if math.isfinite(x)]
        best_i = None
        if finite:
            best_i = max(finite, key=lambda i: v[i]) if higher else min(finite, key=lambda i: v[i])
        for i, n in enumerate(names):
            val, lo, hi = vals[i]
            is_best = best_i is not None and ranks[i] == 1
            tie = False
            if not is_best and best_i is not None and lo is not None and hi is not None:
                b_lo, b_hi = vals[best_i][1], vals[best_i][2]
                if b_lo is not None and b_hi is not None:
                    tie = (hi >= b_lo) if higher else (lo <= b_hi)
            classes = []
            if j is not None and key == "ap":
                classes.append("grp-start")
            if key == "roc_auc":
                classes.append("grp-start")
            if is_best:
                classes.append("best")
            elif tie:
                classes.append("tie")
            title = ""
            if key == "precision":
                p = point[n]
                title = (
                    f"recall {fmt(p['op_tpr'][j])}, FPR {fmt(p['op_fpr'][j])}, "
                    f"threshold {fmt(p['max_f1_threshold'][j])}"
                )
            ci_note, invalid = "", False
            short = _fp_short(point[n], j) if key in _METRIC_FN else None
            if short is not None:
                invalid = True
                alt = point[n]["f1_box"][j]
                exact = (
                    f"F1 at the max-F1 threshold {fci(*alt)} (Clopper–Pearson box, exact)"
                    if key == "max_f1" and alt is not None
                    else "“Precision @ op” (Koopman interval, exact at every η)"
                )
                ci_note = f"interval not valid: {short:.0f} FP at this η; exact: " + (
                    f"F1 {fci(*alt)}"
                    if key == "max_f1" and alt is not None
                    else "see Precision @ op"
                )
                title = (
                    f"The bootstrap interval rests on {short:.0f} false positive(s) "
                    f"(< {uncertainty.MIN_FP_SUPPORT}) at this η: the estimate is biased "
                    "upwards and the bootstrap cannot create unseen false positives, so no "
                    f"valid interval is shown. Exact alternative: {exact}."
                )
            cell_data[n].append(
                {
                    "value": fmt(val),
                    "ci": fci(lo, hi),
                    "ci_note": ci_note,
                    "invalid": invalid,
                    "rank": ranks[i] if len(names) > 1 else None,
                    "best": is_best and len(names) > 1,
                    "tie": tie,
                    "classes": " ".join(classes),
                    "title": title,
                }
            )
    for r in runs:
        rows.append(
            {
                "name": r.name,
                "color": colors[r.name],
                "synthesized": r.synthesized,
                "cells": cell_data[r.name],
            }
        )
    return {
        "groups": groups,
        "rows": rows,
        "op_note": (
            "“Precision @ op” is precision at each run's max-F1 threshold at that η (hover for "
            f"recall, FPR and threshold); “Min cost” is the expected cost per example at the "
            f"cost-optimal hull vertex with C_FP = {fmt(opts.cost_fp)}, C_FN = {fmt(opts.cost_fn)}."
            f" “Interval not valid”: fewer than {uncertainty.MIN_FP_SUPPORT} false positives "
            "carry AP / PR-AUC / max-F1 at that η, where the bootstrap interval does not cover "
            "(docs/statistics.md, “Coverage”); use the exact intervals named there instead — "
            "precision at the operating point (Koopman) and F1 at the max-F1 threshold "
            "(Clopper–Pearson box), both valid at every η."
        ),
    }


def _fp_short(p: Mapping[str, Any], j: int) -> float | None:
    """False positives behind AP / PR-AUC / max-F1 at the table's j-th η when too few."""
    fp = p["boot"].get(("fp_support", j))
    if fp is None or fp[0] >= uncertainty.MIN_FP_SUPPORT:
        return None
    return fp[0]


# ---------------------------------------------------------------------------------- adequacy
def _adequacy_rows(runs, point, chosen, feta, fmt, fint) -> list[dict[str, Any]]:
    rows = []
    for r in runs:
        p = point[r.name]
        for j, eta in enumerate(p["etas"]):
            a = p["adequacy"][j]
            if a is None:
                continue
            rows.append(
                {
                    "run": r.name,
                    "eta": feta(eta) + (" (test)" if j == 0 else ""),
                    "op": f"TPR {fmt(p['op_tpr'][j], 3)}, FPR {fmt(p['op_fpr'][j], 3)}",
                    "precision": fmt(p["op_precision"][j], 3),
                    "rel_width": f"±{a['rel_width']:.1%}" if math.isfinite(a["rel_width"]) else "∞",
                    "n_neg": fint(r.counts.n_neg),
                    "need_neg": fint(a["need_neg"]) if a.get("need_neg") is not None else "—",
                    "n_pos": fint(r.counts.n_pos),
                    "need_pos": fint(a["need_pos"]) if a.get("need_pos") is not None else "—",
                    "ok": bool(a["ok"]),
                    "text": a.get("text", ""),
                }
            )
    return rows


# ---------------------------------------------------------------------------------- flips
def _flips(runs, counts, point, opts, rng, chosen, test_prev, progress, feta, fmt, unc, grid):
    """Every pair's flips on AP, PR-AUC and max-F1 from :func:`ranking.flip_table`.

    The curves come from the metrics stage (computed once per run on the report's η grid);
    flip_table only takes differences, brackets sign changes and refines each root with
    Brent's method on the exact metric. Significance: see :meth:`_Uncertainty.significance`.
    """
    out: list[dict[str, Any]] = []
    contradictions: list[str] = []
    from mlflow_imbalance import ranking

    names = [r.name for r in runs]
    by_name = {r.name: r for r in runs}
    keys = tuple(k for k, _ in FLIP_METRICS)
    table = ranking.flip_table(
        counts,
        keys,
        rng,
        grid=grid,
        curves={n: {k: point[n]["sweep"][k] for k in keys} for n in names},
    )
    labels = dict(FLIP_METRICS)
    key_lo = min([*test_prev.values(), *chosen])
    key_hi = max([*test_prev.values(), *chosen])
    # ROC-AUC order against the order at each chosen prevalence (exact values of the table)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            auc_a, auc_b = point[a]["roc_auc"], point[b]["roc_auc"]
            if auc_a == auc_b:
                continue
            for key in keys:
                for j, e in enumerate(chosen):
                    da = float(point[a][key][1 + j]) - float(point[b][key][1 + j])
                    if da != 0 and (auc_a > auc_b) != (da > 0):
                        hi_auc, lo_auc = (a, b) if auc_a > auc_b else (b, a)
                        contradictions.append(
                            f"{hi_auc} has the higher ROC-AUC, but {lo_auc} has the higher "
                            f"{labels[key]} at η = {feta(e)}."
                        )
    sig = unc.significance(table, by_name, point, chosen or sorted(set(test_prev.values())))
    done = 0
    for (a, b, key), fps in table.flips.items():
        label = labels[key]
        auc_a, auc_b = point[a]["roc_auc"], point[b]["roc_auc"]
        for k, eta_star in enumerate(fps):
            # winners just below and above eta* (the table's winner intervals, exact signs)
            w_lo, w_hi = fps.winners[k][2], fps.winners[k + 1][2]
            low_w, low_l = (a, b) if w_lo == "a" else (b, a)
            high_w, high_l = (a, b) if w_hi == "a" else (b, a)
            sg = sig.get((a, b, key, k), {"significant": None, "text": ""})
            major = key_lo < eta_star < key_hi
            roc_txt = ""
            if auc_a != auc_b:
                auc_w = a if auc_a > auc_b else b
                losers = [w for w, side in ((low_w, "below"), (high_w, "above")) if w != auc_w]
                if losers:
                    side = "below" if low_w != auc_w else "above"
                    roc_txt = (
                        f"ROC-AUC ranks {auc_w} first ({fmt(max(auc_a, auc_b))} vs "
                        f"{fmt(min(auc_a, auc_b))}), yet {losers[0]} wins on {label} {side} "
                        f"η* = {feta(eta_star)}."
                    )
            out.append(
                {
                    "a": a,
                    "b": b,
                    "metric": label,
                    "metric_key": key,
                    "eta_value": float(eta_star),
                    "eta": feta(eta_star),
                    "eta_ci": sg.get("eta_ci_text", ""),
                    "low_winner": low_w,
                    "low_loser": low_l,
                    "high_winner": high_w,
                    "high_loser": high_l,
                    "significant": sg.get("significant"),
                    "significance": sg.get("text", ""),
                    "tested": sg.get("tested", False),
                    "roc_contradiction": roc_txt,
                    "major": major,
                    "affects_chosen": major and bool(chosen),
                }
            )
        done += 1
        if progress is not None:
            progress("ranking", done, len(table.flips))
    out.sort(key=lambda f: (not f["major"], not f["significant"], f["eta_value"], f["a"], f["b"]))
    return out, list(dict.fromkeys(contradictions))


# ---------------------------------------------------------------------------------- figures
def _figures(runs, counts, point, opts, chosen, test_prev, grid, rng, flips, progress, unc):
    from mlflow_imbalance import plots
    from mlflow_imbalance.report import figure_to_data_uri

    draw = {n: draw_counts(c) for n, c in counts.items()}
    etas_pr = [None, *chosen]
    iso = [
        (metrics.iso_performance_slope(e, opts.cost_fp, opts.cost_fn), f"iso-cost η={e:.3g}")
        for e in (chosen or [float(np.median(list(test_prev.values())))])
    ]
    sections: list[dict[str, Any]] = []
    specs: list[tuple[str, str, str, Callable[[Any], Any], str, str]] = []

    def add(section, sec_title, intro, fn, title, caption):
        specs.append((section, sec_title, intro, fn, title, caption))

    roc_bands = unc.bands_for("roc")
    add(
        "roc",
        "ROC curves",
        "Prevalence-free. Dashed: convex hulls; straight lines: "
        "iso-performance lines at the chosen prevalences and costs.",
        lambda ax: plots.plot_roc(draw, ax=ax, iso_slopes=iso, bands=roc_bands),
        "ROC (linear FPR)",
        "hulls dashed; iso-cost lines tangent to the combined hull",
    )
    add(
        "roc",
        "",
        "",
        lambda ax: plots.plot_roc(draw, ax=ax, log_fpr=True, iso_slopes=iso, bands=roc_bands),
        "ROC (log FPR)",
        "the low-FPR region that decides precision at small η",
    )
    for e in etas_pr:
        label = "test prevalence" if e is None else f"η = {e:.3g}"
        bands = unc.bands_for("pr", e)
        add(
            "pr",
            "Precision–recall curves",
            "One panel per prevalence: the test set's own "
            "and each chosen deployment prevalence (Brabec et al. eq. 8).",
            lambda ax, e=e, bands=bands: plots.plot_pr(draw, e, ax=ax, bands=bands),
            f"PR at {label}",
            "chance level = η"
            + (
                "; band: the ROC band mapped through eq. 8, valid at every recall and η"
                if bands
                else ""
            ),
        )
    op = {}
    for n in counts:
        j = 1 if chosen else 0
        op[n] = (
            float(point[n]["op_tpr"][j]),
            float(point[n]["op_fpr"][j]),
            "max-F1 point at " + ("first chosen η" if chosen else "test η"),
        )
        if not counts[n].weighted:
            unc.p3_band(n, counts[n], point[n]["op_tp"][j], point[n]["op_fp"][j], grid)
    hl = (sorted(set(test_prev.values())), chosen or None)
    add(
        "p3",
        "Precision against prevalence (P³)",
        "Brabec et al. §3.1: precision of a fixed operating point as η changes.",
        lambda ax: plots.plot_p3(op, grid, ax=ax, bands=unc.bands_for("p3"), highlight=hl),
        "P³ curves",
        "operating point: each run's max-F1 threshold",
    )
    flip_marks = {
        k: [(f["eta_value"], f"{f['a']} ⇄ {f['b']}") for f in flips if f["metric_key"] == k]
        for k, _ in FLIP_METRICS
    }
    for key, label in FLIP_METRICS:
        sweeps = {n: (grid, point[n]["sweep"][key]) for n in counts}
        add(
            "sweep",
            "Metrics against prevalence",
            "Log η axis; vertical dotted lines: ranking "
            "flips; grey dotted: test prevalence; dark dashed: chosen prevalences.",
            lambda ax, sweeps=sweeps, key=key, label=label: plots.plot_metric_vs_prevalence(
                sweeps,
                metric_label=label,
                ax=ax,
                bands=unc.bands_for(key),
                flip_points=flip_marks[key],
                test_prevalence=sorted(set(test_prev.values())),
                deployment_prevalences=chosen or None,
                deployment_range=opts.prevalence_range,
            ),
            f"{label} against η",
            "flip points marked. " + unc.support_caption(key),
        )
    broc_etas = chosen or sorted(set(test_prev.values()))
    add(
        "broc",
        "B-ROC",
        "Cárdenas & Baras: detection rate against the Bayesian false-alarm "
        "rate 1 − precision at each chosen prevalence.",
        lambda ax: plots.plot_broc(draw, broc_etas, ax=ax),
        "B-ROC",
        "",
    )
    add(
        "cost",
        "Cost curves",
        "Drummond–Holte: normalised expected cost against probability "
        "cost; bold = lower envelope of the hull lines.",
        lambda ax: plots.plot_cost_curve(draw, cost_fp=opts.cost_fp, cost_fn=opts.cost_fn, ax=ax),
        "Cost curves",
        f"C_FP = {opts.cost_fp:g}, C_FN = {opts.cost_fn:g}",
    )
    widths = unc.sample_size_curves(counts)
    if widths:
        add(
            "adequacy",
            "Sample-size adequacy",
            "Relative half-width of the FPR interval "
            "against the operating FPR (Brabec §5); left of the marked FPR the test set is "
            "too small for ±10 %.",
            lambda ax: plots.plot_sample_size(
                widths, tolerance=ADEQUACY_TOLERANCE, ax=ax, interval_label=unc.rate_method
            ),
            "Sample-size adequacy",
            "",
        )
    by_id: dict[str, dict[str, Any]] = {}
    for k, (sec, sec_title, intro, fn, title, caption) in enumerate(specs):
        ax = plots.new_axes()
        fig = ax.figure
        try:
            fn(ax)
            src, kind = figure_to_data_uri(fig)
        except Exception as exc:  # a broken figure must not break the whole report
            logger.exception("figure %r failed", title)
            unc.notes.append(
                {
                    "level": "warning",
                    "title": f"Figure “{title}” failed.",
                    "text": f"{type(exc).__name__}: {exc}",
                }
            )
            continue
        finally:
            plots.close_figure(fig)
        w, h = (round(v * 100) for v in fig.get_size_inches())
        if sec not in by_id:
            by_id[sec] = {"id": sec, "title": sec_title or sec, "intro": intro, "figs": []}
            sections.append(by_id[sec])
        by_id[sec]["figs"].append(
            {
                "src": src,
                "alt": title,
                "title": title,
                "caption": caption,
                "kind": kind,
                "width": w,
                "height": h,
            }
        )
        if progress is not None:
            progress("figures", k + 1, len(specs))
    return sections


# ---------------------------------------------------------------------------------- uncertainty
#: Thresholds kept (per log-aware bin family) in the counts that the bootstrap resamples
#: (:func:`uncertainty.thin_for_bootstrap`; the logging hook uses the same 200).
BOOT_POINTS = 200
#: Prevalences of the bootstrap bands drawn in the metric-vs-η figures (a subset of the
#: report's η grid, log-spaced; the curves are smooth in log η, so the band is drawn there).
BAND_GRID = 50
#: Metric-vs-eta bands taken from the ROC band (:func:`uncertainty.prevalence_band_from_roc`):
#: PR-AUC and max-F1 are monotone in the ROC curve, so the mapped band is simultaneous over eta
#: with no false-positive support condition. AP keeps its bootstrap band (its ROC-mapped bound
#: is valid but 0.35-0.5 wide at eta = 0.5 in the binormal study; docs/statistics.md).
ROC_MAPPED_BANDS = ("pr_auc", "max_f1")
#: Legend label of those bands.
ROC_MAPPED_LABEL = "ROC band mapped (simultaneous over η; conservative)"
#: Legend entry of the part of an AP band that is not claimed.
NOT_VALID_LABEL = f"hatched: band not valid (< {uncertainty.MIN_FP_SUPPORT} FP support it)"
#: Pair/metric comparisons whose flips get a significance test (nearest the deployment
#: prevalences first); unpaired tests reuse the shared replicates and cost milliseconds.
MAX_SIGNIFICANCE = 100
#: Of those, comparisons that may use the (costlier, O(B n)) paired bootstrap of raw scores.
MAX_PAIRED = 12


def band_indices(n: int, num: int = BAND_GRID) -> np.ndarray:
    """Indices of about ``num`` evenly spread points of an ``n``-point grid, ends included."""
    return np.unique(np.round(np.linspace(0, n - 1, min(num, n))).astype(np.int64))


class _Uncertainty:
    """Intervals, bands and flip significance from :mod:`uncertainty` and :mod:`ranking`.

    Bootstrap work runs on counts thinned by :func:`uncertainty.thin_for_bootstrap` to about
    ``3 * BOOT_POINTS`` thresholds (log-FPR aware, so the low-FPR region that decides precision
    at small η keeps its resolution) -- the same thinning as the logging hook's headline
    intervals: the bootstrap then estimates the *spread*, and every band and interval is
    re-centred (:func:`uncertainty.recentre`, logit scale) on the exact estimate from the full
    counts. This keeps a report of 20 runs of 10^6 scores with 1000 replicates within seconds.
    ROC-AUC intervals are DeLong's (:func:`uncertainty.roc_auc_interval`): exact from the
    counts, no bootstrap needed.
    """

    rate_method = "clopper-pearson"

    def __init__(self, opts: Any, seed_for: Callable[..., np.random.SeedSequence]) -> None:
        from mlflow_imbalance import uncertainty

        self.u = uncertainty
        self.opts = opts
        self.seed_for = seed_for
        self.notes: list[dict[str, str]] = []
        self._bands: dict[tuple, dict[str, tuple]] = {}
        self.band_labels: set[str] = set()
        self.n_sig = 0
        self.untested = 0
        self.thin_shift = 0.0
        self.kernel_error = 0.0
        self.replicates: dict[str, dict[str, tuple]] = {}
        self.roc_bands: dict[str, Any] = {}
        self.support: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _thinning_text(self) -> str:
        return (
            f"each run's counts are thinned to ≈{BOOT_POINTS} thresholds per axis (TPR, TPR+FPR "
            f"and log FPR: between kept thresholds TPR moves < 1/{BOOT_POINTS}, FPR < "
            f"2/{BOOT_POINTS} and log10 FPR < 1/{BOOT_POINTS} of its range) before resampling; "
            f"thinning moved the AP / PR-AUC / max-F1 estimates by at most "
            f"{_fmt_e(self.thin_shift)} (largest over runs and band η), and every band and "
            "interval is re-centred on the exact value from the full counts; the AP and PR-AUC "
            f"kernels add at most {_fmt_e(max(self.kernel_error, 1e-300))} (linear deposit on a "
            "log-ratio grid, Simpson per ROC segment)"
        )

    @property
    def bands_note(self) -> str:
        """What the shaded bands are (rendered above the figures)."""
        b, conf = self.opts.n_bootstrap, self.opts.confidence
        if not b:
            return "Bootstrap disabled (--bootstrap 0): only the analytic P³ bands are drawn."
        return (
            f"Shaded: {conf:.0%} bands. ROC and metric-vs-η bands are simultaneous bootstrap "
            f"sup-t bands over their grid, all from one set of {b} count-bootstrap replicates per "
            "run; each PR band is the ROC band mapped through eq. 8 (valid at every recall and "
            "η at once), and so are the PR-AUC and max-F1 bands against η (the ROC band's "
            "envelope curves evaluated at every η: simultaneous over η, conservative, valid "
            "without false-positive support). The AP band (bootstrap sup-t) is not valid where "
            f"fewer than {self.u.MIN_FP_SUPPORT} false positives carry the estimate (drawn "
            f"hatched). Metric-vs-η bands are computed and drawn on {BAND_GRID} "
            "log-spaced η (the curves are smooth in log η), the curves themselves on the full "
            f"grid. Bootstrap resolution: {self._thinning_text()}. P³ bands come from one "
            "Koopman likelihood-ratio interval and hold at every η at once."
        )

    @property
    def flips_note(self) -> str:
        """How flips were tested, and which were not (rendered in the flips section)."""
        text = (
            "Significance: a bootstrap band for the difference D(η) = M_A(η) − M_B(η), "
            f"simultaneous over {BAND_GRID} log-spaced η of the range; a flip is significant "
            "only when the band excludes 0 with opposite signs on both sides. Paired (same "
            "examples) when both runs kept their scores on the same test set (at most "
            f"{MAX_PAIRED} paired comparisons); otherwise unpaired from each run's shared "
            "replicates, which is conservative for positively correlated scores. Budget: "
            f"{MAX_SIGNIFICANCE} pair/metric comparisons, those with flips nearest the "
            "deployment prevalences first."
        )
        if self.untested:
            text += (
                f" {self.untested} flip(s) beyond the budget were not tested (marked “Not tested”)."
            )
        return text

    def methods(self) -> list[dict[str, str]]:
        conf = f"{self.opts.confidence:.0%}"
        out = [
            {
                "what": "Precision at an operating point",
                "how": f"Koopman score interval ({conf}) for the likelihood ratio TPR/FPR, "
                "valid at every η at once (Brabec et al. eq. 8)",
            },
            {"what": "TPR / FPR", "how": f"Clopper–Pearson ({conf})"},
            {
                "what": "Sample-size adequacy",
                "how": "Brabec §5 box: Clopper–Pearson TPR and FPR at √confidence each",
            },
        ]
        if self.opts.n_bootstrap:
            m = self.u.MIN_FP_SUPPORT
            bad = self.unsupported()
            out.append(
                {
                    "what": "Bands",
                    "how": f"ROC: {conf} simultaneous bootstrap sup-t band with a binomial "
                    "(Jeffreys) scale floor for TPR. PR curves: that ROC band mapped through "
                    "eq. 8 (precision is monotone in FPR), so one band holds at every recall and "
                    "every η at once. PR-AUC and max-F1 against η: the same ROC band's lower and "
                    "upper envelope curves evaluated at each η (both metrics are monotone in the "
                    f"ROC curve): {ROC_MAPPED_LABEL}, valid at every η. AP against η: {conf} "
                    f"simultaneous sup-t band, NOT valid where fewer than {m} false positives "
                    "carry the estimate (drawn hatched). The table's AP / PR-AUC / max-F1 "
                    "intervals are bootstrap percentiles and print “interval not valid” there"
                    + (
                        ": " + "; ".join(f"{n} for η ≤ {_fmt_e(e)}" for n, e in bad.items())
                        if bad
                        else ": valid over the whole range here"
                    )
                    + ".",
                }
            )
            out.append({"what": "Bootstrap resolution", "how": self._thinning_text()})
            out.insert(
                1,
                {
                    "what": "AP, PR-AUC, max-F1, min cost",
                    "how": f"{conf} percentile intervals of a stratified count bootstrap "
                    f"({self.opts.n_bootstrap} replicates, seed {self.opts.seed}), pointwise",
                },
            )
        out.insert(
            1,
            {
                "what": "ROC-AUC",
                "how": f"DeLong variance computed exactly from the counts, {conf} Wald interval "
                "on the logit scale (Clopper–Pearson over disjoint pairs when the variance is "
                "0); no bootstrap. Runs whose intervals overlap the best run's are marked as "
                "ties.",
            },
        )
        return out

    def _seed(self, *parts: str) -> np.random.Generator:
        return np.random.default_rng(self.seed_for(self.opts.seed, *parts))

    def precision_interval(self, tp, fp, n_pos, n_neg, eta):
        iv = self.u.precision_interval(tp, fp, n_pos, n_neg, eta, confidence=self.opts.confidence)
        return float(iv.low), float(iv.high)

    def bootstrap(self, name, c, etas, grid, sweep) -> dict[tuple, tuple[float, float]]:
        """Table intervals, figure bands and flip-test replicates from ONE replicate set.

        One :func:`uncertainty.bootstrap_statistics` call per run (seeded per run) feeds every
        statistic: AP / PR-AUC / max-F1 at the table's prevalences (pointwise percentile
        intervals) and on the band grid (sup-t bands, and the replicates the flip tests
        reuse), minimum cost (percentile), the ROC band and the PR bands. ROC-AUC gets
        DeLong's interval (also without bootstrap; not for weighted counts).
        """
        out: dict[tuple, tuple[float, float]] = {}
        conf = self.opts.confidence
        u = self.u
        auc = u.roc_auc_interval(c, conf)  # DeLong: exact from the counts, nearly free
        if auc.available:
            out[("roc_auc", None)] = (float(auc.low), float(auc.high))
        b = self.opts.n_bootstrap
        if not b or c.weighted:
            if b and c.weighted:
                self.notes.append(
                    {
                        "level": "info",
                        "title": "No bootstrap for weighted counts.",
                        "text": f"{name}: the count bootstrap needs integer counts.",
                    }
                )
            return out
        thin = u.thin_for_bootstrap(c, BOOT_POINTS).counts
        etas = np.asarray(etas, dtype=float)
        grid = np.asarray(grid, dtype=float)
        bidx = band_indices(grid.size)
        bgrid = grid[bidx]
        all_eta = np.concatenate([etas, bgrid])
        cfp, cfn = self.opts.cost_fp, self.opts.cost_fn
        stats: dict[str, Any] = {
            key: u.metric_statistic(thin, key, all_eta) for key, _ in FLIP_METRICS
        }
        stats["cost"] = u.min_cost_statistic(thin, etas, cfp, cfn)
        stats["roc"] = u.roc_statistic(thin)
        pr_etas = [None, *self.opts.prevalences]
        reps = u.bootstrap_statistics(thin, stats, b, self._seed(name, "shared"))
        # false positives carrying AP / PR-AUC / max-F1 at each eta (full counts): the sup-t
        # bands and percentile intervals are claimed only where >= MIN_FP_SUPPORT
        fp_tab = u._fp_support_eta(c, etas)
        fp_band = u._fp_support_eta(c, bgrid)
        sup_band = fp_band >= u.MIN_FP_SUPPORT
        for j in range(etas.size):
            out[("fp_support", j)] = (float(fp_tab[j]), float(fp_tab[j]))
        self.support[name] = (bgrid, fp_band)
        ne = etas.size
        a = (1 - conf) / 2
        exact_band: dict[str, np.ndarray] = {}
        for key, _ in FLIP_METRICS:
            st = stats[key]
            self.kernel_error = max(self.kernel_error, st.max_error)
            est_thin = st.estimate(thin)
            r = reps[key]
            # table: pointwise percentile intervals, re-centred (logit) on the exact values
            exact = np.atleast_1d(_METRIC_FN[key](c, etas)).astype(float)
            band = u.band_from_replicates(
                est_thin[:ne], r[:, :ne], etas, confidence=conf, simultaneous=False
            )
            low, high = u.recentre(band, exact)
            for j in range(ne):
                out[(key, j)] = (float(low[j]), float(high[j]))
            exact_b = np.asarray(sweep[key], dtype=float)[bidx]
            exact_band[key] = exact_b
            if key not in ROC_MAPPED_BANDS:
                # figures: sup-t band over the coarse log-eta grid, re-centred on the exact curve
                band = u.band_from_replicates(
                    est_thin[ne:],
                    r[:, ne:],
                    bgrid,
                    metric=key,
                    confidence=conf,
                    seed=self.opts.seed,
                )
                low, high = u.recentre(band, exact_b)
                label = f"{band.label}, on {bgrid.size} log-spaced η"
                self._bands.setdefault((key, None), {})[name] = (
                    bgrid,
                    low,
                    high,
                    label,
                    sup_band,
                    NOT_VALID_LABEL,
                )
            shift = exact_b - est_thin[ne:]
            self.thin_shift = max(self.thin_shift, float(np.max(np.abs(shift))))
            # flip tests: this run's replicates on the band grid, shifted onto the exact curve
            self.replicates.setdefault(name, {})[key] = (bgrid, exact_b, r[:, ne:] + shift)
        # minimum expected cost: percentile, shifted onto the exact values
        exact = np.atleast_1d(metrics.optimal_operating_point(c, etas, cfp, cfn).cost)
        est_thin = stats["cost"].estimate(thin)
        lo_v = np.maximum(0.0, exact + np.quantile(reps["cost"], a, axis=0) - est_thin)
        hi_v = exact + np.quantile(reps["cost"], 1 - a, axis=0) - est_thin
        for j in range(ne):
            out[("cost", j)] = (float(lo_v[j]), float(hi_v[j]))
        # ROC band: sup-t with the binomial (Jeffreys) scale floor for TPR, exactly the band of
        # uncertainty.roc_band (whose coverage tests/test_band_coverage.py checks)
        rb = u.band_from_replicates(
            stats["roc"].estimate(thin),
            reps["roc"],
            stats["roc"].grid,
            grid_name="fpr",
            metric="roc",
            confidence=conf,
            rate_n=thin.n_pos,
            method="count bootstrap asymmetric sup-t over FPR grid (arcsine-sqrt scale, binomial "
            "scale floor)",
        )
        self._bands.setdefault(("roc", None), {})[name] = (rb.grid, rb.low, rb.high, rb.label)
        self.roc_bands[name] = rb
        # PR-AUC and max-F1 against eta from the ROC band's envelope curves (both monotone in
        # the ROC curve): simultaneous over eta, no false-positive support needed, no hatching
        for key in ROC_MAPPED_BANDS:
            mb = u.prevalence_band_from_roc(rb, bgrid, key, estimate=exact_band[key])
            label = f"{rb.confidence:.0%} band, {ROC_MAPPED_LABEL}, on {bgrid.size} log-spaced η"
            self._bands.setdefault((key, None), {})[name] = (bgrid, mb.low, mb.high, label)
        # PR bands at every prevalence from the ROC band (Brabec eq. 8 is monotone in FPR):
        # simultaneous over recall AND prevalence, no false-positive support needed
        for e in pr_etas:
            pb = u.pr_band_from_roc(rb, c.prevalence if e is None else e)
            label = f"{rb.confidence:.0%} simultaneous band (ROC band mapped through eq. 8)"
            self._bands.setdefault(("pr", e), {})[name] = (pb.grid, pb.low, pb.high, label)
        return out

    def p3_band(self, name: str, c: RocCounts, tp: float, fp: float, grid: np.ndarray) -> None:
        band = self.u.p3_band(tp, fp, c.n_pos, c.n_neg, grid, confidence=self.opts.confidence)
        self._bands.setdefault(("p3", None), {})[name] = (
            band.grid,
            band.low,
            band.high,
            band.label,
        )

    def adequacy(self, c, tp, fp, eta):
        """Brabec §5 at the operating point: relative width and the test-set size needed."""
        if c.weighted or tp <= 0:
            return None
        fpr = float(fp) / c.n_neg
        tpr = float(tp) / c.n_pos
        prec = float(metrics.p3_curve(tpr, fpr, float(eta)))
        lo, hi = self.precision_interval(tp, fp, c.n_pos, c.n_neg, eta)
        rel = (hi - lo) / 2 / prec if prec > 0 else math.inf
        need_neg = need_pos = None
        fpr_eff = fpr if fpr > 0 else 1.0 / c.n_neg
        try:
            need = self.u.required_sample_size(
                min(tpr, 1.0), min(fpr_eff, 0.5), ADEQUACY_TOLERANCE, self.opts.confidence
            )
            need_neg, need_pos = need.n_neg, need.n_pos
        except ValueError:
            pass
        ok = rel <= ADEQUACY_TOLERANCE
        text = (
            ""
            if ok
            else (
                f"{fp:.0f} false positives at this point: precision is known only to ±{rel:.0%}."
                if math.isfinite(rel)
                else "no precision estimate"
            )
        )
        return {
            "rel_width": rel,
            "need_neg": need_neg,
            "need_pos": need_pos,
            "ok": ok,
            "text": text,
        }

    def unsupported(self) -> dict[str, float]:
        """Per run, the largest band η at which fewer than MIN_FP_SUPPORT FPs carry AP.

        The table's AP / PR-AUC / max-F1 percentile intervals are not valid there either.
        """
        out = {}
        for name, (bgrid, fp) in self.support.items():
            bad = fp < self.u.MIN_FP_SUPPORT
            if bad.any():
                out[name] = float(bgrid[bad].max())
        return out

    def support_caption(self, key: str = "ap") -> str:
        """Where the metric-vs-η band of ``key`` is not valid, and why (figure caption)."""
        if not self.opts.n_bootstrap:
            return ""
        if key in ROC_MAPPED_BANDS:
            return (
                f"Band: the ROC band mapped to η ({ROC_MAPPED_LABEL}); valid at every η, with "
                "no false-positive support needed (docs/statistics.md)."
            )
        bad = self.unsupported()
        m = self.u.MIN_FP_SUPPORT
        if not bad:
            return f"Bands valid over the whole range (≥ {m} false positives carry every point)."
        where = "; ".join(f"{n}: η ≤ {_fmt_e(e)}" for n, e in bad.items())
        return (
            f"Hatched, very light: band NOT valid — fewer than {m} false positives carry the "
            f"estimate there ({where}); the estimate is biased upwards and the bootstrap cannot "
            "create unseen false positives (docs/statistics.md, “Coverage”). Use the P³ band "
            "(exact) for low-η claims."
        )

    def bands_for(self, key, eta=None):
        return self._bands.get((key, eta)) or None

    def sample_size_curves(self, counts: Mapping[str, RocCounts]) -> dict[str, tuple]:
        """Relative half-width (CV) of the FPR interval against FPR, per run (Brabec §5)."""
        out = {}
        for name, c in counts.items():
            if c.weighted:
                continue
            fpr = np.geomspace(max(1.0 / c.n_neg, 1e-7), 0.5, 60)
            out[name] = (fpr, self.u.expected_rate_cv(fpr, c.n_neg, self.opts.confidence))
        return out

    def significance(self, table, runs, point, anchors) -> dict[tuple, dict[str, Any]]:
        """Bootstrap significance of every flip of ``table``, within a documented budget.

        Flips are ordered by their distance (in log η) to the nearest deployment prevalence
        (the test prevalence when none is chosen), and the pair/metric comparisons holding
        them are tested in that order, up to :data:`MAX_SIGNIFICANCE` comparisons. Unpaired
        tests reuse each run's shared replicates (``reps_A - reps_B``: no new resampling);
        a paired test (both runs' raw scores on the same examples) draws its own paired
        resamples and is limited to :data:`MAX_PAIRED` comparisons, the rest falling back to
        the unpaired test with a note. Flips beyond the budget say so.
        """
        from mlflow_imbalance import ranking

        out: dict[tuple, dict[str, Any]] = {}
        flips = table.all_flips()
        if not flips:
            return out
        n_boot = self.opts.n_bootstrap
        log_anchor = np.log(np.asarray(anchors, dtype=float))

        def dist(eta: float) -> float:
            return float(np.min(np.abs(log_anchor - math.log(eta))))

        ranked = sorted(flips, key=lambda f: (dist(f[3]), f[3], f[0], f[1]))
        order = list(dict.fromkeys((a, b, key) for a, b, key, _ in ranked))
        conf = self.opts.confidence
        n_paired = 0
        for rank, (a, b, key) in enumerate(order):
            fps = table.flips[(a, b, key)]
            ra, rb = runs[a], runs[b]

            def each(d: dict[str, Any], fps=fps, a=a, b=b, key=key) -> None:
                for k in range(len(fps)):
                    out[(a, b, key, k)] = dict(d)

            if not n_boot:
                each({"significant": None, "text": "Not tested: bootstrap off."})
                continue
            if ra.counts.weighted or rb.counts.weighted:
                each({"significant": None, "text": "Not tested: weighted counts."})
                continue
            if rank >= MAX_SIGNIFICANCE:
                self.untested += len(fps)
                each(
                    {
                        "significant": None,
                        "text": f"Not tested: beyond the budget of {MAX_SIGNIFICANCE} "
                        "pair/metric comparisons, which go to the flips nearest the deployment "
                        "prevalences first.",
                    }
                )
                continue
            paired = (
                ra.digest is not None
                and ra.digest == rb.digest
                and ra.scores is not None
                and rb.scores is not None
                and np.array_equal(np.asarray(ra.scores[0]), np.asarray(rb.scores[0]))
            )
            extra = ""
            res = None
            bgrid, ex_a, rep_a = self.replicates[a][key]
            if paired and n_paired < MAX_PAIRED:
                n_paired += 1
                try:
                    res = ranking.flip_significance(
                        metric=key,
                        prevalences=bgrid,
                        y_true=ra.scores[0],
                        score_a=ra.scores[1],
                        score_b=rb.scores[1],
                        n_boot=n_boot,
                        confidence=conf,
                        seed=self._seed(a, b, key, "flip"),
                    )
                except (ValueError, TypeError) as exc:
                    extra = f" (paired test failed: {exc}; unpaired used)"
            elif paired:
                extra = (
                    f" Paired test skipped (budget of {MAX_PAIRED} paired comparisons); the "
                    "unpaired test is conservative."
                )
            if res is None:
                _, ex_b, rep_b = self.replicates[b][key]
                inside = [e for e in fps if bgrid[0] < e < bgrid[-1]]
                res = ranking.flip_significance_from_replicates(
                    ex_a - ex_b,
                    rep_a - rep_b,
                    bgrid,
                    inside,
                    metric=key,
                    confidence=conf,
                    paired=False,
                    note="unpaired: each run's own count-bootstrap replicates (shared with its "
                    "intervals and bands); conservative for positively correlated scores",
                )
            self.n_sig += 1
            how = (
                "paired bootstrap on the shared examples"
                if res.paired
                else "unpaired bootstrap (conservative)"
            )
            p_text = (
                f" P({a} better) ranges {float(np.min(res.prob_a_better)):.2f}–"
                f"{float(np.max(res.prob_a_better)):.2f} over the range."
            )
            for k, eta_star in enumerate(fps):
                if not len(res.flips):
                    out[(a, b, key, k)] = {
                        "significant": False,
                        "tested": True,
                        "text": "The bootstrap band of D(η) finds no clear crossing: the flip "
                        "is within noise. " + res.note + extra,
                    }
                    continue
                i = int(np.argmin(np.abs(np.log(np.asarray(res.flips)) - math.log(eta_star))))
                sig = bool(res.significant[i])
                lo, hi = res.flip_intervals[i]
                out[(a, b, key, k)] = {
                    "significant": sig,
                    "tested": True,
                    "eta_ci_text": f"[{_fmt_e(lo)}, {_fmt_e(hi)}]",
                    "text": ("Significant" if sig else "Not significant")
                    + f" at {conf:.0%} ({how}, {res.n_boot} replicates)."
                    + p_text
                    + (" " + res.note if res.note else "")
                    + extra,
                }
        return out


def _fmt_e(x: float) -> str:
    x = float(x)
    if x >= 1e-3:
        return f"{x:.3g}"
    mant, exp = f"{x:.2e}".split("e")
    return f"{mant.rstrip('0').rstrip('.')}e{int(exp)}"
