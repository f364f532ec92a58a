"""Drummond & Holte cost curves from each run's ROC convex hull."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mlflow_imbalance.core import curves
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_cost
from mlflow_imbalance.plots._common import _as_counts_mapping, _float_map, _prevalence_list
from mlflow_imbalance.plots._display import Display
from mlflow_imbalance.plots._legend import _legend
from mlflow_imbalance.plots._style import (
    _GREY,
    _LIGHT,
    _fmt_eta,
    _proxy_line,
    _run_styles,
    _set_title,
    _vline_label,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Self

    from matplotlib.axes import Axes

__all__ = ["CostCurveDisplay", "plot_cost_curve"]


class CostCurveDisplay(Display):
    """Cost curves of several runs: normalised expected cost against probability cost PC(+).

    Args:
        probability_cost: ``name -> PC(+) grid``, shape ``(N,)``.
        costs: ``name -> (K, N)`` cost line of each of the run's ``K`` hull vertices.
        envelope: ``name -> (N,)`` lower envelope of the lines (the run's cost curve).
        cost_fp: cost of a false positive the curves were computed for.
        cost_fn: cost of a false negative.

    Attributes:
        names: run names, in drawing order.
        probability_cost, costs, envelope, cost_fp, cost_fn: as given (as
            :func:`curves.cost_curve`'s ``pc``, ``costs``, ``envelope``).
        ax_: the axes drawn on by :meth:`plot`.
        figure_: their figure.
    """

    def __init__(
        self,
        *,
        probability_cost: Mapping[str, Any],
        costs: Mapping[str, Any],
        envelope: Mapping[str, Any],
        cost_fp: float = 1.0,
        cost_fn: float = 1.0,
    ) -> None:
        self.cost_fp = check_cost(cost_fp, "cost_fp")
        self.cost_fn = check_cost(cost_fn, "cost_fn")
        self.probability_cost = _float_map(probability_cost, "probability_cost")
        self.names = list(self.probability_cost)
        self.costs = _float_map(costs, "costs", self.names, ndim=(1, 2))
        self.envelope = _float_map(envelope, "envelope", self.names)
        for name in self.names:
            n = self.probability_cost[name].shape
            self.costs[name] = np.atleast_2d(self.costs[name])
            if self.costs[name].shape[1:] != n or self.envelope[name].shape != n:
                raise ValueError(f"costs[{name!r}] and envelope[{name!r}] must match the PC grid")

    @classmethod
    def from_counts(
        cls,
        counts_by_name: Mapping[str, RocCounts] | RocCounts,
        *,
        cost_fp: float = 1.0,
        cost_fn: float = 1.0,
        num: int = 201,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """Compute each run's cost curve (:func:`curves.cost_curve`), then draw.

        Args:
            counts_by_name: ``name -> RocCounts`` (a bare RocCounts is called ``"run"``).
            cost_fp: cost of a false positive (> 0).
            cost_fn: cost of a false negative (> 0).
            num: points along the x axis.
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        counts = _as_counts_mapping(counts_by_name)
        cost_fp, cost_fn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
        data = {n: curves.cost_curve(c, cost_fp, cost_fn, num=num) for n, c in counts.items()}
        disp = cls(
            probability_cost={n: d.pc for n, d in data.items()},
            costs={n: d.costs for n, d in data.items()},
            envelope={n: d.envelope for n, d in data.items()},
            cost_fp=cost_fp,
            cost_fn=cost_fn,
        )
        return disp.plot(ax=ax, **plot_options)

    def plot(
        self,
        ax: Axes | None = None,
        *,
        prevalences: float | Sequence[float] | None = None,
        legend: str | None = "outside",
    ) -> Self:
        """Draw the cost curves (see :func:`plot_cost_curve`).

        Args:
            ax: axes to draw on; a new figure is created when None.
            prevalences: prevalences to mark at their ``PC(+)``.
            legend: ``"outside"``, ``"inside"`` or None.

        Returns:
            ``self``, with ``ax_`` and ``figure_`` set.
        """
        from matplotlib.collections import LineCollection

        names = self.names
        cost_fp, cost_fn = self.cost_fp, self.cost_fn
        styles = _run_styles(names)
        marks = _prevalence_list(prevalences, "prevalences")
        mark_pc = [float(curves.probability_cost(e, cost_fp, cost_fn)) for e in marks]

        def draw(ax: Any) -> None:
            x = np.linspace(0.0, 1.0, 3)
            ax.plot(x, x, color=_GREY, lw=1.0, ls="--", gid="always_negative", zorder=1)
            ax.plot(x, 1 - x, color=_GREY, lw=1.0, ls="-.", gid="always_positive", zorder=1)
            extra = [
                _proxy_line("always negative", ls="--"),
                _proxy_line("always positive", ls="-."),
            ]
            for name in names:
                pc, lines = self.probability_cost[name], self.costs[name]
                color, ls = styles[name]
                segs = np.stack((np.broadcast_to(pc, lines.shape), lines), axis=-1)
                ax.add_collection(
                    LineCollection(
                        list(segs),
                        colors=color,
                        linewidths=0.6,
                        alpha=0.25,
                        gid=f"cost_lines:{name}",
                        zorder=2,
                    )
                )
                ax.plot(
                    pc,
                    self.envelope[name],
                    color=color,
                    ls=ls,
                    lw=2.2,
                    label=name,
                    gid=f"cost_envelope:{name}",
                    zorder=3,
                )
            extra.append(_proxy_line("one operating point (faint)", color=_LIGHT))
            for e, pc_e in zip(marks, mark_pc, strict=True):
                _vline_label(
                    ax, pc_e, f"η = {_fmt_eta(e)}", color="#222222", ls="--", lw=1.0,
                    gid="prevalence_mark", label_gid="prevalence_label",
                )  # fmt: skip
            ax.set_xlim(0.0, 1.0)
            ax.set_ylim(0.0, 0.55)
            ax.set_xlabel("probability cost PC(+) = η·C_FN / (η·C_FN + (1−η)·C_FP)")
            ax.set_ylabel("normalised expected cost")
            _set_title(ax, f"Cost curves (C_FP = {cost_fp:g}, C_FN = {cost_fn:g})", loc="left")
            _legend(ax, extra, legend)

        return self._plot_with(ax, draw)


def plot_cost_curve(
    counts_by_name: Mapping[str, RocCounts] | RocCounts,
    *,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    ax: Axes | None = None,
    num: int = 201,
    prevalences: float | Sequence[float] | None = None,
    legend: str | None = "outside",
) -> Axes:
    """Drummond & Holte cost curves from each run's ROC convex hull.

    Computed by :func:`curves.cost_curve`: every hull vertex is a line of normalised expected
    cost against the probability cost ``PC(+) = η·C_FN / (η·C_FN + (1−η)·C_FP)``, drawn faint;
    their lower envelope (the run's cost curve) is bold. The trivial classifiers are the
    diagonals: always negative costs ``PC(+)``, always positive ``1 − PC(+)``; they cross at
    the cost-indifference point (ranking-metrics slides, "Cost curves").

    Args:
        counts_by_name: ``name -> RocCounts``.
        cost_fp: cost of a false positive (> 0).
        cost_fn: cost of a false negative (> 0).
        ax: axes to draw on; a new figure is created when None.
        num: points along the x axis.
        prevalences: prevalences to mark (dashed dark vertical lines at their ``PC(+)``, from
            :func:`curves.probability_cost`), e.g. the deployment prevalences.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on; :meth:`CostCurveDisplay.from_counts` returns the Display instead.
    """
    return CostCurveDisplay.from_counts(
        counts_by_name,
        cost_fp=cost_fp,
        cost_fn=cost_fn,
        num=num,
        ax=ax,
        prevalences=prevalences,
        legend=legend,
    ).ax_
