"""The logging hook's per-run figures: ROC (linear and log FPR), PR, P³, B-ROC, cost curve."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlflow_imbalance.core import curves, metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.plots._common import _prevalence_list
from mlflow_imbalance.plots._style import _fmt_eta, new_axes
from mlflow_imbalance.plots.cost import plot_cost_curve
from mlflow_imbalance.plots.pr import _threshold_index, plot_p3, plot_pr
from mlflow_imbalance.plots.roc import plot_broc, plot_roc

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.figure import Figure

__all__ = ["run_figures"]


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
