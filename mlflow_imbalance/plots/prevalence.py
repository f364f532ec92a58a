"""Prevalence-dependent metrics against η, and sample-size adequacy against the operating FPR.

:class:`PrevalenceDisplay` / :func:`plot_metric_vs_prevalence` draw AP, PR-AUC or max-F1 of each
run over a log η axis with ranking flips and the test/deployment prevalences marked (Brabec et
al. 2020, Figs. 3–4). :class:`SampleSizeDisplay` / :func:`plot_sample_size` draw the relative
uncertainty of the FPR against the operating FPR (Brabec et al. §5).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mlflow_imbalance.core import curves, metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_prevalence, plain
from mlflow_imbalance.plots._common import (
    _as_counts_mapping,
    _check_bands,
    _curve_pairs,
    _draw_bands,
    _highlight,
    _is_counts_input,
    _prevalence_list,
)
from mlflow_imbalance.plots._display import Display
from mlflow_imbalance.plots._legend import _legend
from mlflow_imbalance.plots._style import (
    _proxy_line,
    _run_styles,
    _set_log,
    _set_title,
    _vline_label,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Self

    from matplotlib.axes import Axes

__all__ = [
    "METRICS",
    "PrevalenceDisplay",
    "SampleSizeDisplay",
    "plot_metric_vs_prevalence",
    "plot_sample_size",
]

#: Metrics :class:`PrevalenceDisplay` computes from counts: key -> (function of (counts, η
#: grid), default axis label).
METRICS: dict[str, tuple[Callable[[RocCounts, np.ndarray], Any], str]] = {
    "ap": (metrics.average_precision, "average precision"),
    "pr_auc": (metrics.pr_auc, "PR-AUC"),
    "max_f1": (metrics.max_f1, "max F1"),
}


# --------------------------------------------------------------------------- metric vs η


class PrevalenceDisplay(Display):
    """A prevalence-dependent metric of several runs against the prevalence η.

    Args:
        prevalences: ``name -> η grid`` of each run (or one grid shared by every run).
        values: ``name -> the metric on that grid``.
        metric_label: y axis label, e.g. ``"average precision"``.
        metric: the metric's key (``"ap"``, ``"pr_auc"``, ``"max_f1"``) when known.

    Attributes:
        names: run names, in drawing order.
        prevalences: ``name -> η grid``.
        values: ``name -> metric values``.
        metric_label, metric: as given.
        ax_: the axes drawn on by :meth:`plot`.
        figure_: their figure.
    """

    def __init__(
        self,
        *,
        prevalences: Mapping[str, Any] | Any,
        values: Mapping[str, Any],
        metric_label: str,
        metric: str | None = None,
    ) -> None:
        if not isinstance(metric_label, str) or not metric_label:
            raise ValueError("metric_label must be a non-empty string")
        if not isinstance(values, Mapping):
            raise ValueError("values must be a mapping name -> values")
        if not isinstance(prevalences, Mapping):
            prevalences = dict.fromkeys(values, prevalences)
        missing = [n for n in values if n not in prevalences]
        if missing:
            raise ValueError(f"prevalences has no grid for run(s) {missing!r}")
        data = _curve_pairs(
            {n: (prevalences[n], v) for n, v in values.items()}, "sweeps", ("eta", "values")
        )
        for name, (e, _) in data.items():
            check_prevalence(e, f"sweeps[{name!r}] eta")
        self.names = list(data)
        self.prevalences = {n: e for n, (e, _) in data.items()}
        self.values = {n: v for n, (_, v) in data.items()}
        self.metric_label = metric_label
        self.metric = metric

    @classmethod
    def from_sweeps(
        cls,
        sweeps: Mapping[str, tuple[Any, Any]],
        *,
        metric_label: str,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """Precomputed sweeps ``name -> (eta array, values array)``, drawn.

        Args:
            sweeps: e.g. from :func:`curves.prevalence_sweep`.
            metric_label: y axis label.
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        if not isinstance(metric_label, str) or not metric_label:
            raise ValueError("metric_label must be a non-empty string")
        data = _curve_pairs(sweeps, "sweeps", ("eta", "values"))
        disp = cls(
            prevalences={n: e for n, (e, _) in data.items()},
            values={n: v for n, (_, v) in data.items()},
            metric_label=metric_label,
        )
        return disp.plot(ax=ax, **plot_options)

    @classmethod
    def from_counts(
        cls,
        counts_by_name: Mapping[str, RocCounts] | RocCounts,
        metric: str = "ap",
        prevalences: Any = None,
        *,
        metric_label: str | None = None,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """Compute ``metric`` of each run over a prevalence grid, then draw.

        Args:
            counts_by_name: ``name -> RocCounts`` (a bare RocCounts is called ``"run"``).
            metric: ``"ap"`` (:func:`metrics.average_precision`), ``"pr_auc"``
                (:func:`metrics.pr_auc`) or ``"max_f1"`` (:func:`metrics.max_f1`).
            prevalences: 1-d η grid (default :func:`curves.default_prevalence_grid`).
            metric_label: y axis label (default: the metric's name, see :data:`METRICS`).
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        counts = _as_counts_mapping(counts_by_name)
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {sorted(METRICS)}, got {metric!r}")
        fn, default_label = METRICS[metric]
        grid = (
            curves.default_prevalence_grid()
            if prevalences is None
            else np.asarray(_prevalence_list(prevalences), dtype=np.float64)
        )
        if grid.size == 0:
            raise ValueError("prevalences is empty: give at least one η")
        values = {n: np.atleast_1d(fn(c, grid)) for n, c in counts.items()}
        disp = cls(
            prevalences=grid,
            values=values,
            metric_label=default_label if metric_label is None else metric_label,
            metric=metric,
        )
        return disp.plot(ax=ax, **plot_options)

    def plot(
        self,
        ax: Axes | None = None,
        *,
        bands: Mapping[str, Any] | None = None,
        flip_points: Sequence[tuple[float, str]] | None = None,
        test_prevalence: float | Sequence[float] | None = None,
        deployment_prevalences: Sequence[float] | None = None,
        deployment_range: tuple[float, float] | None = None,
        legend: str | None = "outside",
    ) -> Self:
        """Draw the metric against η (see :func:`plot_metric_vs_prevalence`).

        Args:
            ax: axes to draw on; a new figure is created when None.
            bands: ``name -> (eta_grid, lower, upper, label)`` (or band objects).
            flip_points: ``(η*, label)`` pairs, e.g. ``(3e-4, "A ↔ B (AP)")``.
            test_prevalence: test-set prevalence(s) to highlight.
            deployment_prevalences: deployment prevalences to highlight.
            deployment_range: ``(low, high)`` deployment range, shaded.
            legend: ``"outside"``, ``"inside"`` or None.

        Returns:
            ``self``, with ``ax_`` and ``figure_`` set.
        """
        names = self.names
        band_map = _check_bands(bands, names)
        flips: list[tuple[float, str]] = []
        for item in flip_points or ():
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise ValueError(f"flip_points entries must be (eta, label), got {item!r}")
            (eta_f,) = _prevalence_list(item[0], "flip_points eta")
            flips.append((eta_f, str(item[1])))
        styles = _run_styles(names)
        all_eta = np.concatenate([self.prevalences[n] for n in names])
        metric_label = self.metric_label

        def draw(ax: Any) -> None:
            extra = _draw_bands(ax, band_map, styles)
            for name in names:
                color, ls = styles[name]
                ax.plot(
                    self.prevalences[name],
                    self.values[name],
                    color=color,
                    ls=ls,
                    label=name,
                    gid=f"sweep:{name}",
                    zorder=3,
                )
            extra += _highlight(ax, test_prevalence, deployment_prevalences, deployment_range)
            if flips:
                trans = ax.get_xaxis_transform()  # x in data, y in axes fraction
                for eta_f, label in flips:
                    _vline_label(
                        ax, eta_f, label, color="#B2182B", ls=(0, (1, 1.5)), lw=1.2, gid="flip",
                        label_gid="flip_label",
                    )  # fmt: skip
                    ax.plot(
                        [eta_f],
                        [1.0],
                        transform=trans,
                        marker="v",
                        ms=7,
                        color="#B2182B",
                        ls="none",
                        clip_on=False,
                        gid="flip_marker",
                        zorder=5,
                    )
                extra.append(
                    _proxy_line("ranking flip η*", color="#B2182B", ls=(0, (1, 1.5)), marker="v")
                )
            _set_log(ax, "x")
            ax.set_xlim(float(all_eta.min()), float(all_eta.max()))
            ax.set_xlabel("prevalence η (log scale)")
            ax.set_ylabel(metric_label)
            _set_title(
                ax, f"{metric_label[:1].upper()}{metric_label[1:]} against prevalence", loc="left"
            )
            _legend(ax, extra, legend)

        return self._plot_with(ax, draw)


def plot_metric_vs_prevalence(
    counts_by_name: Mapping[str, RocCounts] | RocCounts | Mapping[str, tuple[Any, Any]],
    metric: str | None = None,
    prevalences: Any = None,
    *,
    metric_label: str | None = None,
    ax: Axes | None = None,
    bands: Mapping[str, Any] | None = None,
    flip_points: Sequence[tuple[float, str]] | None = None,
    test_prevalence: float | Sequence[float] | None = None,
    deployment_prevalences: Sequence[float] | None = None,
    deployment_range: tuple[float, float] | None = None,
    legend: str | None = "outside",
) -> Axes:
    """A prevalence-dependent metric (AP, PR-AUC, max-F1, ...) of each run against η.

    Brabec et al. (2020) Figs. 3–4: the order of runs under F1 or PR-AUC can change with η, so
    the metric is shown as a curve over a log η axis rather than one number. Ranking flips are
    marked by vertical dotted lines with a triangle at the top and their label; the test
    prevalence (dotted grey) and the deployment prevalences (dashed dark, or a shaded range) are
    highlighted.

    Args:
        counts_by_name: ``name -> RocCounts`` (``metric`` is computed on ``prevalences``), or
            -- precomputed sweeps -- ``name -> (eta array, values array)``, e.g. from
            :func:`curves.prevalence_sweep` (then ``metric_label`` is required and ``metric``
            and ``prevalences`` are not allowed).
        metric: with counts, ``"ap"`` (default), ``"pr_auc"`` or ``"max_f1"``.
        prevalences: with counts, the η grid (default :func:`curves.default_prevalence_grid`).
        metric_label: y axis label, e.g. ``"average precision"`` (with counts it defaults to
            the metric's name).
        ax: axes to draw on; a new figure is created when None.
        bands: ``name -> (eta_grid, lower, upper, label)``.
        flip_points: ``(η*, label)`` pairs, e.g. ``(3e-4, "A ↔ B (AP)")``.
        test_prevalence: test-set prevalence(s) to highlight.
        deployment_prevalences: deployment prevalences to highlight.
        deployment_range: ``(low, high)`` deployment range, shaded.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on; :class:`PrevalenceDisplay` constructors return the Display instead.
    """
    options = {
        "ax": ax,
        "bands": bands,
        "flip_points": flip_points,
        "test_prevalence": test_prevalence,
        "deployment_prevalences": deployment_prevalences,
        "deployment_range": deployment_range,
        "legend": legend,
    }
    if _is_counts_input(counts_by_name):
        disp = PrevalenceDisplay.from_counts(
            counts_by_name,  # type: ignore[arg-type]
            "ap" if metric is None else metric,
            prevalences,
            metric_label=metric_label,
            **options,
        )
    else:
        if metric is not None or prevalences is not None:
            raise ValueError("metric and prevalences need counts; sweeps carry their own values")
        disp = PrevalenceDisplay.from_sweeps(
            counts_by_name,  # type: ignore[arg-type]
            metric_label=metric_label,  # type: ignore[arg-type]
            **options,
        )
    return disp.ax_


# --------------------------------------------------------------------------- sample size


class SampleSizeDisplay(Display):
    """Relative uncertainty of the FPR against the operating FPR, per run (Brabec et al. §5).

    Args:
        fpr: ``name -> operating FPR grid`` (values in (0, 1]).
        width: ``name -> relative half-width (CV) of the FPR interval`` on that grid.
        interval_label: which interval the widths come from (shown in the title by default).

    Attributes:
        names: run names, in drawing order.
        fpr, width, interval_label: as given.
        ax_: the axes drawn on by :meth:`plot`.
        figure_: their figure.
    """

    def __init__(
        self,
        *,
        fpr: Mapping[str, Any],
        width: Mapping[str, Any],
        interval_label: str | None = None,
    ) -> None:
        if not isinstance(fpr, Mapping) or not isinstance(width, Mapping):
            raise ValueError("fpr and width must be mappings name -> array")
        missing = [n for n in width if n not in fpr]
        if missing:
            raise ValueError(f"fpr has no grid for run(s) {missing!r}")
        data = _curve_pairs(
            {n: (fpr[n], w) for n, w in width.items()}, "widths_by_name", ("fpr", "width")
        )
        for name, (f, _) in data.items():
            if np.any(f <= 0) or np.any(f > 1):
                raise ValueError(f"widths_by_name[{name!r}]: fpr must lie in (0, 1]")
        self.names = list(data)
        self.fpr = {n: f for n, (f, _) in data.items()}
        self.width = {n: w for n, (_, w) in data.items()}
        self.interval_label = interval_label

    @classmethod
    def from_widths(
        cls,
        widths_by_name: Mapping[str, tuple[Any, Any]],
        *,
        interval_label: str | None = None,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """Precomputed curves ``name -> (fpr array, relative half-width array)``, drawn.

        Args:
            widths_by_name: e.g. from the stats layer's ``expected_rate_cv``.
            interval_label: which interval the widths come from, shown in the title.
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        data = _curve_pairs(widths_by_name, "widths_by_name", ("fpr", "width"))
        disp = cls(
            fpr={n: f for n, (f, _) in data.items()},
            width={n: w for n, (_, w) in data.items()},
            interval_label=interval_label,
        )
        return disp.plot(ax=ax, **plot_options)

    @classmethod
    def from_counts(
        cls,
        counts_by_name: Mapping[str, RocCounts] | RocCounts,
        *,
        confidence: float = 0.95,
        num: int = 60,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """Clopper–Pearson CV of the FPR at the expected count of each run's negatives, drawn.

        The grid runs from ``max(1 / N_neg, 10⁻⁷)`` to 0.5 (``num`` log-spaced FPRs), as in the
        report; the widths come from ``mlflow_imbalance.stats.sample_size.expected_rate_cv``.

        Args:
            counts_by_name: ``name -> RocCounts`` (unweighted: the widths need integer counts).
            confidence: two-sided level of the interval.
            num: grid size.
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        from mlflow_imbalance.stats.sample_size import expected_rate_cv

        counts = _as_counts_mapping(counts_by_name)
        weighted = [n for n, c in counts.items() if c.weighted]
        if weighted:
            raise ValueError(f"sample-size curves need unweighted counts; weighted: {weighted!r}")
        fpr = {n: np.geomspace(max(1.0 / c.n_neg, 1e-7), 0.5, num) for n, c in counts.items()}
        width = {n: expected_rate_cv(fpr[n], c.n_neg, confidence) for n, c in counts.items()}
        disp = cls(fpr=fpr, width=width, interval_label=f"Clopper–Pearson, {confidence:.0%}")
        return disp.plot(ax=ax, **plot_options)

    def plot(
        self,
        ax: Axes | None = None,
        *,
        tolerance: float = 0.1,
        min_fpr: Mapping[str, float] | None = None,
        ylabel: str = "relative CI half-width of FPR (CV)",
        interval_label: str | None = None,
        legend: str | None = "outside",
    ) -> Self:
        """Draw the adequacy curves (see :func:`plot_sample_size`).

        Args:
            ax: axes to draw on; a new figure is created when None.
            tolerance: acceptable relative half-width (0.1 = ±10 %).
            min_fpr: ``name -> smallest adequately estimated FPR``; from the curves when None.
            ylabel: y axis label.
            interval_label: shown in the title (default: the Display's ``interval_label``).
            legend: ``"outside"``, ``"inside"`` or None.

        Returns:
            ``self``, with ``ax_`` and ``figure_`` set.
        """
        if not (np.isfinite(tolerance) and tolerance > 0):
            raise ValueError(f"tolerance must be positive, got {plain(tolerance)!r}")
        names = self.names
        data = {n: (self.fpr[n], self.width[n]) for n in names}
        limits: dict[str, float] = {}
        for name, (f, w) in data.items():
            if min_fpr is not None and name in min_fpr:
                limits[name] = float(min_fpr[name])
            else:
                too_wide = f[~(w <= tolerance)]
                limits[name] = float(too_wide.max()) if too_wide.size else float("nan")
        styles = _run_styles(names)
        all_f = np.concatenate([f for f, _ in data.values()])
        label = self.interval_label if interval_label is None else interval_label

        def draw(ax: Any) -> None:
            for name in names:
                f, w = data[name]
                color, ls = styles[name]
                lim = limits[name]
                suffix = f" (too few below FPR {lim:.2g})" if np.isfinite(lim) else ""
                ax.plot(f, w, color=color, ls=ls, label=name + suffix, gid=f"size:{name}", zorder=3)
                if np.isfinite(lim):
                    ax.axvline(lim, color=color, ls=":", lw=1.0, gid=f"size_limit:{name}", zorder=2)
            ax.axhline(tolerance, color="#222222", ls="--", lw=1.0, gid="tolerance", zorder=2)
            extra = [_proxy_line(f"tolerance ±{tolerance:.0%}", color="#222222", ls="--")]
            finite = [v for v in limits.values() if np.isfinite(v)]
            if finite:
                ax.axvspan(
                    float(all_f.min()),
                    max(finite),
                    color="#B2182B",
                    alpha=0.06,
                    lw=0,
                    gid="too_small",
                    zorder=0,
                )
                from matplotlib.patches import Patch

                extra.append(Patch(facecolor="#B2182B", alpha=0.15, label="test set too small"))
            _set_log(ax, "x")
            _set_log(ax, "y")
            ax.set_xlim(float(all_f.min()), float(all_f.max()))
            ax.set_xlabel("operating false positive rate FPR (log scale)")
            ax.set_ylabel(ylabel + " (log scale)")
            title = "Sample-size adequacy"
            if label:
                title += f" ({label})"
            _set_title(ax, title, loc="left")
            _legend(ax, extra, legend)

        return self._plot_with(ax, draw)


def plot_sample_size(
    counts_by_name: Mapping[str, RocCounts] | RocCounts | Mapping[str, tuple[Any, Any]],
    *,
    tolerance: float = 0.1,
    min_fpr: Mapping[str, float] | None = None,
    ylabel: str = "relative CI half-width of FPR (CV)",
    interval_label: str | None = None,
    confidence: float = 0.95,
    ax: Axes | None = None,
    legend: str | None = "outside",
) -> Axes:
    """Sample-size adequacy: relative uncertainty of a rate against the operating FPR.

    Brabec et al. (2020) §5, Theorem 1: the precision interval at every prevalence is at most
    ``max(CV_TPR, CV_FPR)`` wide (half-width relative to the estimate), and ``CV_FPR`` grows as
    FPR shrinks because only ``FPR · N_neg`` negatives are left to estimate it. Each run's curve
    (computed from the counts by :meth:`SampleSizeDisplay.from_counts`, or given) is drawn on
    log–log axes with the tolerance as a horizontal line; below the FPR where the curve crosses
    it, the test set is too small for the chosen tolerance (marked, shaded region to the left of
    the largest).

    Args:
        counts_by_name: ``name -> RocCounts``, or -- precomputed curves -- ``name -> (fpr
            array, relative half-width array)``.
        tolerance: acceptable relative half-width (0.1 = ±10 %).
        min_fpr: ``name -> smallest adequately estimated FPR``; computed from the curves (the
            largest FPR where the width exceeds ``tolerance``) when None.
        ylabel: y axis label.
        interval_label: which interval the widths come from, shown in the title.
        confidence: with counts, the level of the Clopper–Pearson interval.
        ax: axes to draw on; a new figure is created when None.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on; :class:`SampleSizeDisplay` constructors return the Display instead.
    """
    options = {
        "ax": ax,
        "tolerance": tolerance,
        "min_fpr": min_fpr,
        "ylabel": ylabel,
        "interval_label": interval_label,
        "legend": legend,
    }
    if _is_counts_input(counts_by_name):
        disp = SampleSizeDisplay.from_counts(
            counts_by_name,  # type: ignore[arg-type]
            confidence=confidence,
            **options,
        )
    else:
        disp = SampleSizeDisplay.from_widths(counts_by_name, **options)  # type: ignore[arg-type]
    return disp.ax_
