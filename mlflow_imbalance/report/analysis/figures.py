"""The report's figures: matplotlib drawings embedded as data URIs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from mlflow_imbalance.core import curves as _curves
from mlflow_imbalance.report.analysis._common import (
    ADEQUACY_TOLERANCE,
    FLIP_METRICS,
    draw_counts,
)

logger = logging.getLogger(__name__)


def _figures(runs, counts, point, opts, chosen, test_prev, grid, rng, flips, progress, unc):
    from mlflow_imbalance import plots
    from mlflow_imbalance.report.render import figure_to_data_uri

    draw = {n: draw_counts(c) for n, c in counts.items()}
    etas_pr = [None, *chosen]
    iso = [
        (_curves.iso_performance_slope(e, opts.cost_fp, opts.cost_fn), f"iso-cost η={e:.3g}")
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
