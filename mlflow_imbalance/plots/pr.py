"""Precision–recall curves at a chosen prevalence, and P³ curves (precision against η).

:class:`PrecisionRecallDisplay` / :func:`plot_pr` draw each run's PR curve at one or more
prevalences η (Brabec et al. 2020, eq. 8), interpolated along the ROC segments.
:class:`P3Display` / :func:`plot_p3` draw the precision of a fixed operating point of each run
against η on a log axis (Brabec et al. §3.1, Fig. 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mlflow_imbalance.core import curves, metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import plain
from mlflow_imbalance.plots._common import (
    _as_counts_mapping,
    _check_bands,
    _draw_bands,
    _float_map,
    _highlight,
    _is_counts_input,
    _prevalence_list,
)
from mlflow_imbalance.plots._display import Display
from mlflow_imbalance.plots._legend import _legend
from mlflow_imbalance.plots._style import (
    _LIGHT,
    _LINESTYLES,
    _fmt_eta,
    _proxy_line,
    _run_styles,
    _set_log,
    _set_title,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Self

    from matplotlib.axes import Axes

__all__ = ["P3Display", "PrecisionRecallDisplay", "plot_p3", "plot_pr"]


# --------------------------------------------------------------------------- PR


class PrecisionRecallDisplay(Display):
    """Precision–recall curves of several runs at a prevalence η (or several).

    Args:
        recall: ``name -> recall`` of each curve point, shape ``(L,)``.
        precision: ``name -> precision at η``: shape ``(L,)`` for one prevalence given as a
            number or None, ``(M, L)`` for ``M`` prevalences given as a sequence (as
            :func:`metrics.pr_curve`).
        prevalence: η, a sequence of η, or None for each run's own test prevalence.
        average_precision: ``name -> AP at η`` (a float, or ``(M,)``) shown in the legend;
            None leaves it out.
        test_prevalence: ``name -> the run's test prevalence``; needed when ``prevalence`` is
            None (it is then the η of each run's curve and its chance level).

    Attributes:
        names: run names, in drawing order.
        prevalences: the prevalences as a list (``[None]`` for the test prevalences).
        recall, precision, average_precision, test_prevalence: as given.
        ax_: the axes drawn on by :meth:`plot`.
        figure_: their figure.
    """

    def __init__(
        self,
        *,
        recall: Mapping[str, Any],
        precision: Mapping[str, Any],
        prevalence: float | Sequence[float] | None = None,
        average_precision: Mapping[str, Any] | None = None,
        test_prevalence: Mapping[str, float] | None = None,
    ) -> None:
        self.prevalence = prevalence
        self._scalar = prevalence is None or np.ndim(prevalence) == 0
        self.prevalences: list[float | None] = (
            [None] if prevalence is None else list(_prevalence_list(prevalence, "prevalence"))
        )
        if not self.prevalences:
            raise ValueError("prevalence is an empty sequence: give None or at least one η")
        self.recall = _float_map(recall, "recall")
        self.names = list(self.recall)
        self.precision = _float_map(
            precision, "precision", self.names, ndim=(1,) if self._scalar else (2,)
        )
        for name in self.names:
            shape = (len(self.prevalences),) * (not self._scalar) + self.recall[name].shape
            if self.precision[name].shape != shape:
                raise ValueError(
                    f"precision[{name!r}] must have shape {shape}, got {self.precision[name].shape}"
                )
        self.average_precision = {str(k): v for k, v in (average_precision or {}).items()}
        self.test_prevalence = {str(k): float(v) for k, v in (test_prevalence or {}).items()}
        if prevalence is None and set(self.test_prevalence) != set(self.names):
            raise ValueError("prevalence=None needs test_prevalence for every run")

    @classmethod
    def from_counts(
        cls,
        counts_by_name: Mapping[str, RocCounts] | RocCounts,
        prevalence: float | Sequence[float] | None = None,
        *,
        points_per_segment: int | None = None,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """Compute each run's PR curve and AP at η (Brabec et al. eq. 8), then draw.

        Args:
            counts_by_name: ``name -> RocCounts`` (a bare RocCounts is called ``"run"``).
            prevalence: η, a sequence of η, or None for each run's own test prevalence.
            points_per_segment: samples per ROC segment for the interpolation; None chooses
                ``clip(20000 // n_points, 1, 20)`` per run (see :func:`plot_pr`).
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        counts = _as_counts_mapping(counts_by_name)
        etas: list[float | None] = (
            [None] if prevalence is None else list(_prevalence_list(prevalence, "prevalence"))
        )
        if not etas:
            raise ValueError("prevalence is an empty sequence: give None or at least one η")
        if plot_options.get("bands") and len(etas) > 1:
            raise ValueError(f"bands need a single prevalence, got {len(etas)} prevalences")
        scalar = prevalence is None or np.ndim(prevalence) == 0
        recall: dict[str, np.ndarray] = {}
        precision: dict[str, Any] = {}
        ap: dict[str, Any] = {}
        for name, c in counts.items():
            pps = (
                int(np.clip(20000 // max(len(c), 1), 1, 20))
                if points_per_segment is None
                else points_per_segment
            )
            rows, aps = [], []
            for eta in etas:
                recall[name], prec = metrics.pr_curve(
                    c, eta, interpolate=True, points_per_segment=pps
                )
                rows.append(prec)
                aps.append(float(metrics.average_precision(c, eta)))
            precision[name] = rows[0] if scalar else np.stack(rows)
            ap[name] = aps[0] if scalar else np.asarray(aps)
        disp = cls(
            recall=recall,
            precision=precision,
            prevalence=prevalence,
            average_precision=ap,
            test_prevalence={n: c.prevalence for n, c in counts.items()},
        )
        return disp.plot(ax=ax, **plot_options)

    def plot(
        self,
        ax: Axes | None = None,
        *,
        bands: Mapping[str, Any] | None = None,
        legend: str | None = "outside",
    ) -> Self:
        """Draw the PR curves (see :func:`plot_pr`).

        Args:
            ax: axes to draw on; a new figure is created when None.
            bands: ``name -> (recall_grid, precision_lower, precision_upper, label)`` (or band
                objects); only with a single prevalence.
            legend: ``"outside"``, ``"inside"`` or None.

        Returns:
            ``self``, with ``ax_`` and ``figure_`` set.
        """
        names, etas = self.names, self.prevalences
        if bands and len(etas) > 1:
            raise ValueError(f"bands need a single prevalence, got {len(etas)} prevalences")
        band_map = _check_bands(bands, names)
        styles = _run_styles(names)

        def row(values: Any, j: int) -> Any:
            return values if self._scalar else values[j]

        def draw(ax: Any) -> None:
            extra = _draw_bands(ax, band_map, styles)
            many = len(etas) > 1
            used: set[float] = set()
            for j, eta in enumerate(etas):
                ls_eta = _LINESTYLES[j % len(_LINESTYLES)]
                for name in names:
                    color, ls_run = styles[name]
                    ls = ls_eta if many else ls_run
                    eta_used = self.test_prevalence[name] if eta is None else eta
                    used.add(float(eta_used))
                    ap = self.average_precision.get(name)
                    ap_text = "" if ap is None else f" (AP {float(row(ap, j)):.3f})"
                    label = (
                        f"{name}, η = {_fmt_eta(eta_used)}{ap_text}"
                        if (many or eta is None)
                        else f"{name}{ap_text}"
                    )
                    ax.plot(
                        self.recall[name],
                        row(self.precision[name], j),
                        color=color,
                        ls=ls,
                        label=label,
                        gid=f"pr:{name}:{j}",
                        zorder=3,
                    )
            # chance level: precision = η for every recall
            for eta_c in sorted(used):
                ax.axhline(eta_c, color=_LIGHT, lw=0.9, ls="--", gid="chance", zorder=1)
            extra.append(_proxy_line("chance (precision = η)", color=_LIGHT, ls="--"))
            ax.set_xlim(-0.01, 1.01)
            ax.set_ylim(-0.01, 1.01)
            ax.set_xlabel("recall (TPR)")
            ax.set_ylabel("precision at prevalence η")
            if self.prevalence is None:
                tests = sorted(set(self.test_prevalence.values()))
                which = (
                    f"test prevalence η = {_fmt_eta(tests[0])}"
                    if len(tests) == 1
                    else "each run's test prevalence"
                )
            else:
                which = "η = " + ", ".join(_fmt_eta(e) for e in etas if e is not None)
            _set_title(ax, f"Precision–recall at {which}", loc="left")
            _legend(ax, extra, legend)

        return self._plot_with(ax, draw)


def plot_pr(
    counts_by_name: Mapping[str, RocCounts] | RocCounts,
    prevalence: float | Sequence[float] | None = None,
    *,
    ax: Axes | None = None,
    bands: Mapping[str, Any] | None = None,
    points_per_segment: int | None = None,
    legend: str | None = "outside",
) -> Axes:
    """Precision–recall curves of each run at a chosen prevalence (or several).

    The curves are :func:`metrics.pr_curve` with ``interpolate=True``: between two ROC points
    precision is interpolated along the straight ROC segment (the achievable interpolation,
    Davis & Goadrich 2006), not linearly in PR space, which would overstate it. Precision at
    prevalence η is Brabec et al. (2020) eq. 8. The chance level (precision = η) is drawn for
    each prevalence, and the title states the prevalence(s) -- a PR curve means nothing without
    it (Brabec et al. §3.2).

    Args:
        counts_by_name: ``name -> RocCounts``.
        prevalence: η, a sequence of η (one line style each), or None for each run's own test
            prevalence.
        ax: axes to draw on; a new figure is created when None.
        bands: ``name -> (recall_grid, precision_lower, precision_upper, label)``; only with a
            single prevalence.
        points_per_segment: samples per ROC segment for the interpolation; None chooses
            ``clip(20000 // n_points, 1, 20)`` per run, so curves of long counts stay cheap to
            draw (their segments are then short enough that the interpolation is invisible).
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on; :meth:`PrecisionRecallDisplay.from_counts` returns the Display.
    """
    return PrecisionRecallDisplay.from_counts(
        counts_by_name,
        prevalence,
        points_per_segment=points_per_segment,
        ax=ax,
        bands=bands,
        legend=legend,
    ).ax_


# --------------------------------------------------------------------------- P3


def _threshold_index(counts: RocCounts, threshold: float) -> int:
    """Index of ``threshold`` in the (descending) thresholds of ``counts``."""
    thr = np.asarray(counts.thresholds)
    k = int(np.searchsorted(-thr, -float(threshold), side="left"))
    return min(max(k, 0), thr.size - 1)


def _check_points(operating_points: Any) -> dict[str, tuple[float, float, str]]:
    """Validate ``name -> (tpr, fpr, label)``."""
    if not isinstance(operating_points, Mapping) or not operating_points:
        raise ValueError("operating_points must be a non-empty mapping name -> (tpr, fpr, label)")
    points: dict[str, tuple[float, float, str]] = {}
    for name, value in operating_points.items():
        if not isinstance(value, (tuple, list)) or len(value) != 3:
            shown = [plain(v) for v in value] if isinstance(value, (tuple, list)) else value
            raise ValueError(f"operating_points[{name!r}] must be (tpr, fpr, label): {shown!r}")
        tpr, fpr, label = float(value[0]), float(value[1]), str(value[2])
        for arg, v in (("tpr", tpr), ("fpr", fpr)):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"operating_points[{name!r}] {arg} must be in [0, 1], got {v}")
        points[str(name)] = (tpr, fpr, label)
    return points


def _p3_grid(prevalences: Any) -> np.ndarray:
    eta = (
        curves.default_prevalence_grid()
        if prevalences is None
        else np.asarray(_prevalence_list(prevalences), dtype=np.float64)
    )
    if eta.size < 2:
        raise ValueError(f"prevalences needs at least 2 values for a curve, got {eta.size}")
    return eta


class P3Display(Display):
    """P³ curves: precision of one fixed operating point per run against the prevalence η.

    Args:
        operating_points: ``name -> (tpr, fpr, label)``; ``label`` describes the point, e.g.
            ``"max-F1 threshold"``.
        prevalences: the η grid, shape ``(M,)``.
        precision: ``name -> precision on the grid``, ``(M,)``; computed by
            :func:`curves.p3_curve` when None.

    Attributes:
        names: run names, in drawing order.
        operating_points: as given (validated).
        prevalences: the η grid.
        precision: ``name -> (M,)`` precision at each η.
        ax_: the axes drawn on by :meth:`plot`.
        figure_: their figure.
    """

    def __init__(
        self,
        *,
        operating_points: Mapping[str, tuple[float, float, str]],
        prevalences: Any,
        precision: Mapping[str, Any] | None = None,
    ) -> None:
        self.operating_points = _check_points(operating_points)
        self.names = list(self.operating_points)
        self.prevalences = _p3_grid(prevalences)
        if precision is None:
            precision = {
                n: curves.p3_curve(t, f, self.prevalences)
                for n, (t, f, _) in self.operating_points.items()
            }
        self.precision = _float_map(precision, "precision", self.names)
        for name in self.names:
            if self.precision[name].shape != self.prevalences.shape:
                raise ValueError(f"precision[{name!r}] must have the prevalences' length")

    @classmethod
    def from_operating_points(
        cls,
        operating_points: Mapping[str, tuple[float, float, str]],
        prevalences: Sequence[float] | np.ndarray | None = None,
        *,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """P³ curves of given operating points ``name -> (tpr, fpr, label)``, drawn.

        Args:
            operating_points: ``name -> (tpr, fpr, label)``.
            prevalences: η grid (default :func:`curves.default_prevalence_grid`).
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        points = _check_points(operating_points)
        disp = cls(operating_points=points, prevalences=_p3_grid(prevalences))
        return disp.plot(ax=ax, **plot_options)

    @classmethod
    def from_counts(
        cls,
        counts_by_name: Mapping[str, RocCounts] | RocCounts,
        prevalences: Sequence[float] | np.ndarray | None = None,
        *,
        at_prevalence: float | None = None,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """P³ curve of each run's max-F1 operating point, drawn.

        The operating point of a run is its max-F1 threshold (:func:`metrics.max_f1_point`) at
        ``at_prevalence``, or at the run's own test prevalence when that is None; the threshold
        is then fixed and its precision followed across η.

        Args:
            counts_by_name: ``name -> RocCounts`` (a bare RocCounts is called ``"run"``).
            prevalences: η grid (default :func:`curves.default_prevalence_grid`).
            at_prevalence: η at which each run's max-F1 threshold is chosen.
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        counts = _as_counts_mapping(counts_by_name)
        if at_prevalence is not None:
            (at_prevalence,) = _prevalence_list(at_prevalence, "at_prevalence")
        points = {}
        for name, c in counts.items():
            eta = c.prevalence if at_prevalence is None else at_prevalence
            _, thr = metrics.max_f1_point(c, eta)
            k = _threshold_index(c, thr)
            where = "test η" if at_prevalence is None else f"η = {_fmt_eta(eta)}"
            points[name] = (float(c.tpr[k]), float(c.fpr[k]), f"max-F1 threshold at {where}")
        return cls.from_operating_points(points, prevalences, ax=ax, **plot_options)

    def plot(
        self,
        ax: Axes | None = None,
        *,
        bands: Mapping[str, Any] | None = None,
        highlight: tuple[Any, Any] | None = None,
        legend: str | None = "outside",
    ) -> Self:
        """Draw the P³ curves (see :func:`plot_p3`).

        Args:
            ax: axes to draw on; a new figure is created when None.
            bands: ``name -> (eta_grid, precision_lower, precision_upper, label)`` (or band
                objects).
            highlight: ``(test prevalence, deployment prevalences)``; either may be None.
            legend: ``"outside"``, ``"inside"`` or None.

        Returns:
            ``self``, with ``ax_`` and ``figure_`` set.
        """
        names, eta = self.names, self.prevalences
        band_map = _check_bands(bands, names)
        test_eta, deploy = highlight if highlight is not None else (None, None)
        deploy_list = _prevalence_list(deploy, "highlight deployment prevalences")
        styles = _run_styles(names)
        at_deploy = (
            {
                n: np.asarray(curves.p3_curve(t, f, np.asarray(deploy_list)), dtype=np.float64)
                for n, (t, f, _) in self.operating_points.items()
            }
            if deploy_list
            else {}
        )

        def draw(ax: Any) -> None:
            extra = _draw_bands(ax, band_map, styles)
            for name in names:
                tpr, fpr, label = self.operating_points[name]
                color, ls = styles[name]
                ax.plot(
                    eta,
                    self.precision[name],
                    color=color,
                    ls=ls,
                    gid=f"p3:{name}",
                    zorder=3,
                    label=f"{name}: {label} (TPR {tpr:.2g}, FPR {fpr:.2g})",
                )
                if deploy_list:
                    ax.plot(
                        deploy_list,
                        at_deploy[name],
                        ls="none",
                        marker="o",
                        ms=4.5,
                        color=color,
                        gid=f"p3_at_deployment:{name}",
                        zorder=4,
                    )
            extra += _highlight(ax, test_eta, deploy_list)
            _set_log(ax, "x")
            ax.set_xlim(float(eta.min()), float(eta.max()))
            ax.set_ylim(-0.01, 1.01)
            ax.set_xlabel("prevalence η (log scale)")
            ax.set_ylabel("precision at η")
            _set_title(ax, "P³: precision of fixed operating points against prevalence", loc="left")
            _legend(ax, extra, legend)

        return self._plot_with(ax, draw)


def plot_p3(
    counts_by_name: Mapping[str, RocCounts] | RocCounts | Mapping[str, tuple[float, float, str]],
    prevalences: Sequence[float] | np.ndarray | None = None,
    *,
    at_prevalence: float | None = None,
    ax: Axes | None = None,
    bands: Mapping[str, Any] | None = None,
    highlight: tuple[Any, Any] | None = None,
    legend: str | None = "outside",
) -> Axes:
    """Positive-prevalence precision (P³) curves: precision of fixed operating points against η.

    Brabec et al. (2020) §3.1, Fig. 1: for an operating point (TPR, FPR) precision is the linear
    rational function of η in eq. 8, drawn on a log η axis. Computed by
    :func:`curves.p3_curve`.

    Args:
        counts_by_name: ``name -> RocCounts`` (each run's max-F1 operating point at
            ``at_prevalence`` is followed, see :meth:`P3Display.from_counts`), or -- the
            explicit form -- ``name -> (tpr, fpr, label)`` operating points; ``label``
            describes the point, e.g. ``"max-F1 threshold"``.
        prevalences: η grid (default :func:`curves.default_prevalence_grid`).
        at_prevalence: with counts, the η at which the max-F1 threshold is chosen (None: each
            run's test prevalence); not allowed with explicit operating points.
        ax: axes to draw on; a new figure is created when None.
        bands: ``name -> (eta_grid, precision_lower, precision_upper, label)``.
        highlight: ``(test prevalence, deployment prevalences)``; either may be None; marked
            with a dotted grey and dashed dark vertical lines, and each curve's precision at the
            deployment prevalences is marked with a dot.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on; :class:`P3Display` constructors return the Display instead.
    """
    options = {"ax": ax, "bands": bands, "highlight": highlight, "legend": legend}
    if _is_counts_input(counts_by_name):
        disp = P3Display.from_counts(
            counts_by_name,  # type: ignore[arg-type]
            prevalences,
            at_prevalence=at_prevalence,
            **options,
        )
    else:
        if at_prevalence is not None:
            raise ValueError("at_prevalence needs counts, not explicit operating points")
        disp = P3Display.from_operating_points(
            counts_by_name,  # type: ignore[arg-type]
            prevalences,
            **options,
        )
    return disp.ax_
