"""Per-run figures: the six of :func:`run_figures` and the three MLflow previews.

:func:`preview_figures` are what the logging hook logs: drawn for MLflow's artifact preview
pane (100 dpi, large text, legends inside, one colour per prevalence, the cost curve as its
envelope). :func:`run_figures` keeps the fuller set (ROC, log ROC, PR, P³, B-ROC, cost) for
notebooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mlflow_imbalance.core import curves, metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.plots._common import _prevalence_list
from mlflow_imbalance.plots._static import mark_static
from mlflow_imbalance.plots._style import (
    _GREY,
    _LIGHT,
    PREVIEW_ETA_COLORS,
    _fmt_eta,
    _legend_kw,
    _literal_texts,
    _log_axis_with_zero,
    _log_floor,
    _set_title,
    new_axes,
    preview_axes,
)
from mlflow_imbalance.plots.cost import plot_cost_curve
from mlflow_imbalance.plots.pr import _threshold_index, plot_p3, plot_pr
from mlflow_imbalance.plots.roc import plot_broc, plot_roc

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.figure import Figure

__all__ = ["PREVIEW_KINDS", "preview_figures", "run_figures"]


def run_figures(
    counts: RocCounts,
    *,
    prevalences: Sequence[float] = (),
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    name: str = "run",
) -> dict[str, Figure]:
    """The per-run figures of the logging hook, as Figures not registered with pyplot.

    Keys: ``"roc"`` and ``"roc_log"`` (ROC with convex hull and the iso-performance lines of
    each prevalence of interest at the given costs), ``"pr"`` (PR at the test prevalence and at
    each prevalence of interest), ``"p3"`` (P³ of the max-F1 operating point at the test
    prevalence and at each prevalence of interest), ``"broc"`` (B-ROC at the test prevalence and
    the prevalences of interest), ``"cost"`` (cost curve).

    Args:
        counts: the run's counts.
        prevalences: prevalences of interest (deployment).
        cost_fp: cost of a false positive.
        cost_fn: cost of a false negative.
        name: the run's name in legends.

    Returns:
        ``key -> Figure``; turn them into bytes with :func:`figure_to_png` or
        :func:`figure_to_svg`.
    """
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    etas = _prevalence_list(prevalences)
    test = float(counts.prevalence)
    one = {name: counts}
    slopes = [
        (float(curves.iso_performance_slope(e, cost_fp, cost_fn)), f"iso line η = {_fmt_eta(e)}")
        for e in etas
    ]
    figs: dict[str, Any] = {}
    figs["roc"] = plot_roc(one, iso_slopes=slopes, ax=new_axes(layout="fixed")).figure
    figs["roc_log"] = plot_roc(
        one, log_fpr=True, iso_slopes=slopes, ax=new_axes(layout="fixed")
    ).figure
    pr_etas = sorted({test, *etas}, reverse=True)
    figs["pr"] = plot_pr(one, pr_etas, ax=new_axes(layout="fixed")).figure
    points = {}
    for e in pr_etas:
        _, thr = metrics.max_f1_point(counts, e)
        k = _threshold_index(counts, thr)
        tag = "test" if e == test else "deploy"
        points[f"η {_fmt_eta(e)} ({tag})"] = (float(counts.tpr[k]), float(counts.fpr[k]), "max-F1")
    grid = curves.default_prevalence_grid(num=200, low=min(1e-6, *pr_etas) / 2, high=0.5)
    figs["p3"] = plot_p3(
        points, grid, highlight=(test, etas or None), ax=new_axes(layout="fixed")
    ).figure
    figs["broc"] = plot_broc(one, pr_etas, ax=new_axes(layout="fixed")).figure
    figs["cost"] = plot_cost_curve(
        one, cost_fp=cost_fp, cost_fn=cost_fn, prevalences=pr_etas, ax=new_axes(layout="fixed")
    ).figure
    return figs


# --------------------------------------------------------------------------- MLflow previews

#: The preview figures' keys, in the order the run card shows them.
PREVIEW_KINDS: tuple[str, ...] = ("pr", "roc", "cost")
#: Above this many thresholds the PR curves are drawn through the stored points only (no
#: interpolated samples between them): the segments are then too short to see.
_PR_INTERPOLATE_MAX = 2000


def preview_figures(
    counts: RocCounts,
    *,
    prevalences: Sequence[float] = (),
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    name: str = "run",
    kinds: Sequence[str] = PREVIEW_KINDS,
) -> dict[str, Figure]:
    """The logging hook's figures, drawn for MLflow's artifact preview pane.

    Three figures, one colour per prevalence throughout (the test prevalence near black):

    - ``"pr"``: precision–recall at the test prevalence and at each prevalence of interest,
      with AP in the legend and each curve's max-F1 point marked;
    - ``"roc"``: the ROC curve on a logarithmic false-positive-rate axis (where imbalanced
      problems live), its convex hull, and the max-F1 operating point of each prevalence;
    - ``"cost"``: the cost curve (the lower envelope of the hull's cost lines only) between the
      trivial classifiers, with the probability cost of each prevalence marked.

    :data:`PREVIEW_DPI` (100) and :data:`PREVIEW_FIGSIZE` (840 × 520 px), text at least
    :data:`PREVIEW_MIN_FONT_PT` points, legends inside the axes where the curves leave room.
    Cheap: one axes each, fixed margins, no outside legend; and :func:`figure_to_png` draws
    their frame (ticks, tick labels, grid, axis labels) once per process and kind and reuses its
    pixels (the same image: see :mod:`mlflow_imbalance.plots._static`).

    Args:
        counts: the run's counts.
        prevalences: prevalences of interest (deployment).
        cost_fp: cost of a false positive.
        cost_fn: cost of a false negative.
        name: the counts set's name (in the titles).
        kinds: which of :data:`PREVIEW_KINDS` to draw (the hook leaves out ``"cost"`` when no
            costs were given).

    Returns:
        ``key -> Figure`` for each of ``kinds``, Figures not registered with pyplot.
    """
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    unknown = set(kinds) - set(PREVIEW_KINDS)
    if unknown:
        raise ValueError(f"kinds must be among {PREVIEW_KINDS}, got {sorted(unknown)}")
    etas = _prevalence_list(prevalences)
    test = float(counts.prevalence)
    rows = [(test, "test")] + [(e, "") for e in sorted(set(etas), reverse=True) if e != test]
    colors = {e: PREVIEW_ETA_COLORS[i % len(PREVIEW_ETA_COLORS)] for i, (e, _) in enumerate(rows)}
    labels = {e: f"η = {_fmt_eta(e)}" + (" (test)" if tag else "") for e, tag in rows}
    eta_arr = np.asarray([e for e, _ in rows])
    _, thr = metrics.max_f1_point(counts, eta_arr)
    thr = np.atleast_1d(thr)
    ops = {e: _threshold_index(counts, t) for (e, _), t in zip(rows, thr, strict=True)}
    thin = _drawn(counts) if {"pr", "roc"} & set(kinds) else counts  # once for both figures
    draw = {
        "pr": lambda: _preview_pr(counts, thin, eta_arr, rows, colors, labels, ops, name),
        "roc": lambda: _preview_roc(counts, thin, rows, colors, labels, ops, name),
        "cost": lambda: _preview_cost(counts, rows, colors, labels, cost_fp, cost_fn, name),
    }
    figs = {kind: draw[kind]() for kind in PREVIEW_KINDS if kind in kinds}
    for kind, fig in figs.items():
        _literal_texts(fig)
        mark_static(fig, f"preview:{kind}")  # figure_to_png draws the frame once per process
    return figs


#: Width of the preview figures' curves (points).
_LW = 2.0
#: The model's own curve (ROC, cost envelope): a slate grey that no prevalence colour uses.
_MODEL_COLOR = "#5A6B7B"
#: Points per axis kept for drawing (a figure is ~840 px wide: finer detail is invisible).
_DRAW_POINTS = 1500


def _drawn(c: RocCounts) -> RocCounts:
    """The counts thinned for drawing only.

    Keeps the points at which TPR, FPR or log10 FPR passes each of :data:`_DRAW_POINTS` even
    steps (and both ends): exact points of the curve, fewer of them, so a million-threshold
    curve draws like the full one at preview size in a fraction of the time.
    """
    if c.n_thresholds <= 3 * _DRAW_POINTS:
        return c
    grid = np.linspace(0.0, 1.0, _DRAW_POINTS + 1)
    fpr_pos = c.fpr[c.fpr > 0]
    lo = np.log10(fpr_pos.min()) if fpr_pos.size else -6.0
    log_grid = 10.0 ** np.linspace(lo, 0.0, _DRAW_POINTS + 1)
    last = c.n_thresholds - 1
    idx = np.unique(
        np.concatenate(
            (
                np.searchsorted(c.tpr, grid, side="right") - 1,
                np.searchsorted(c.fpr, grid, side="right") - 1,
                np.searchsorted(c.fpr, log_grid, side="right") - 1,
                [0, last],
            )
        ).clip(0, last)
    )
    return RocCounts(c.thresholds[idx], c.tp[idx], c.fp[idx], c.n_pos, c.n_neg, weighted=c.weighted)


def _preview_pr(c, d, eta_arr, rows, colors, labels, ops, name):
    ax = preview_axes()
    interpolate = d.n_thresholds <= _PR_INTERPOLATE_MAX
    recall, precision = metrics.pr_curve(d, eta_arr, interpolate=interpolate, points_per_segment=8)
    precision = np.atleast_2d(precision)
    ap = np.atleast_1d(metrics.average_precision(c, eta_arr))
    for j, (e, _) in enumerate(rows):
        k = ops[e]
        ax.plot(recall, precision[j], color=colors[e], label=f"{labels[e]}  AP {ap[j]:.3f}",
                lw=_LW, gid=f"pr:{j}", zorder=3)  # fmt: skip
        p_k = float(np.atleast_1d(metrics.precision(c, e))[k])
        ax.plot([c.tpr[k]], [p_k], "o", color=colors[e], ms=7, mec="white", mew=1.2, zorder=4)
    ax.plot([], [], "o", color=_GREY, ms=7, mec="white", label="max-F1 point")
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.02)
    ax.set_xlabel("recall (true-positive rate)")
    ax.set_ylabel("precision at prevalence η")
    _set_title(ax, f"Precision–recall by prevalence · {name}", loc="left")
    ax.legend(**_legend_kw(ax, loc="upper right"))
    return ax.figure


def _preview_roc(c, d, rows, colors, labels, ops, name):
    from mlflow_imbalance.plots.roc import _log_densify

    ax = preview_axes()
    fpr, tpr = np.concatenate(([0.0], d.fpr)), np.concatenate(([0.0], d.tpr))
    x_min = _log_floor([float(fpr[fpr > 0].min())] if np.any(fpr > 0) else [])
    x_zero = _log_axis_with_zero(ax, x_min)  # FPR = 0 has its own tick, past an axis break
    hull = curves.convex_hull(c)
    hx, hy = _log_densify(hull.fpr, hull.tpr, x_min, zero_at=x_zero)
    ax.plot(hx, hy, color=_GREY, lw=1.3, ls="--", label="convex hull", zorder=2)
    x, y = _log_densify(fpr, tpr, x_min, zero_at=x_zero)
    auc = float(metrics.roc_auc(c))
    ax.plot(x, y, color=_MODEL_COLOR, lw=_LW, label=f"ROC  AUC {auc:.3f}", gid="roc", zorder=3)
    chance = np.geomspace(x_min, 1.0, 50)
    ax.plot(chance, chance, color=_LIGHT, lw=1.0, ls=":", label="chance", zorder=1)
    for e, _ in rows:
        k = ops[e]
        x_op = c.fpr[k] if c.fpr[k] > 0 else x_zero
        ax.plot([x_op], [c.tpr[k]], "o", color=colors[e], ms=8, mec="white", mew=1.2,
                label=f"max-F1 at {labels[e]}", zorder=4, clip_on=False)  # fmt: skip
    ax.set_ylim(-0.01, 1.02)
    ax.set_xlabel("false-positive rate (log scale)")
    ax.set_ylabel("true-positive rate")
    _set_title(ax, f"ROC, logarithmic false-positive rate · {name}", loc="left")
    ax.legend(**_legend_kw(ax, loc="upper left"))
    return ax.figure


def _preview_cost(c, rows, colors, labels, cost_fp, cost_fn, name):
    ax = preview_axes()
    cc = curves.cost_curve(c, cost_fp, cost_fn, num=201)
    x = np.array([0.0, 0.5, 1.0])
    ax.plot(x, x, color=_GREY, lw=1.1, ls="--", label="always negative", zorder=1)
    ax.plot(x, 1 - x, color=_GREY, lw=1.1, ls="-.", label="always positive", zorder=1)
    ax.plot(cc.pc, cc.envelope, color=_MODEL_COLOR, lw=2.4,
            label="this model (best threshold)", gid="cost_envelope", zorder=3)  # fmt: skip
    pcs = []
    for e, _ in rows:
        pc = float(curves.probability_cost(e, cost_fp, cost_fn))
        pcs.append(pc)
        ax.axvline(pc, color=colors[e], lw=1.4, ls=(0, (4, 2)), label=labels[e], zorder=2)
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 0.62)
    ax.set_xlabel("probability cost PC(+) = η·C_FN / (η·C_FN + (1−η)·C_FP)")
    ax.set_ylabel("normalised expected cost")
    _set_title(ax, f"Cost curve (C_FP = {cost_fp:g}, C_FN = {cost_fn:g}) · {name}", loc="left")
    ax.legend(**_legend_kw(ax, loc="upper right" if np.mean(pcs) < 0.5 else "upper left"))
    return ax.figure
