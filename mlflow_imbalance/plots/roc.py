"""ROC curves (with convex hulls and iso-performance lines) and B-ROC curves.

:class:`RocDisplay` / :func:`plot_roc` draw each run's empirical ROC curve point to point, its
convex hull and iso-performance lines, on a linear or logarithmic FPR axis.
:class:`BrocDisplay` / :func:`plot_broc` draw B-ROC curves (Cárdenas & Baras): detection rate
against the Bayesian false-alarm rate ``1 − PPV`` at one or more prevalences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mlflow_imbalance.core import curves, metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.plots._common import (
    _as_counts_mapping,
    _check_bands,
    _draw_bands,
    _float_map,
    _prevalence_list,
)
from mlflow_imbalance.plots._display import Display
from mlflow_imbalance.plots._legend import _legend
from mlflow_imbalance.plots._style import (
    _LIGHT,
    _LINESTYLES,
    _fmt_eta,
    _log_axis_with_zero,
    _log_floor,
    _proxy_line,
    _run_styles,
    _set_title,
    _zero_position,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Self

    from matplotlib.axes import Axes

__all__ = ["BrocDisplay", "RocDisplay", "plot_broc", "plot_roc"]


def _log_densify(
    x: np.ndarray, y: np.ndarray, x_min: float, n: int = 24, *, zero_at: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Insert points along segments that are long on a log x axis.

    A straight ROC segment (a tie batch, a hull edge) is a curve when the FPR axis is
    logarithmic; drawing only its end points would show a straight line in display space, which
    misrepresents it. Segments spanning more than a factor 1.2 in x get ``n`` interior points
    spaced geometrically (segments starting at x = 0 start at ``x_min / 10``, off the axis).
    The original points are all kept, in order; at most ``log(1/x_min)/log(1.2)`` segments can
    be long, so the cost is small.

    With ``zero_at`` (the position of x = 0 on an axis from :func:`_log_axis_with_zero`),
    segments starting at x = 0 start there instead, and the points at x = 0 are returned at
    ``zero_at``: the curve then leaves the axis's "0" tick at its true height.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    x0, x1, y0, y1 = x[:-1], x[1:], y[:-1], y[1:]
    lo = np.maximum(x0, x_min * 0.1 if zero_at is None else zero_at)
    idx = np.flatnonzero(x1 > lo * 1.2)
    if idx.size:
        frac = np.linspace(0.0, 1.0, n + 2)[1:-1]
        xs = lo[idx, None] * (x1[idx] / lo[idx])[:, None] ** frac
        ys = y0[idx, None] + (y1 - y0)[idx, None] * (xs - x0[idx, None]) / (x1 - x0)[idx, None]
        keys = np.concatenate((np.arange(x.size, dtype=np.float64), (idx[:, None] + frac).ravel()))
        order = np.argsort(keys, kind="stable")
        x, y = np.concatenate((x, xs.ravel()))[order], np.concatenate((y, ys.ravel()))[order]
    return (x if zero_at is None else np.where(x > 0, x, zero_at)), y


def _parse_slopes(iso_slopes: Any) -> list[tuple[float, str]]:
    out: list[tuple[float, str]] = []
    for item in iso_slopes or ():
        if isinstance(item, (tuple, list)):
            if len(item) != 2:
                raise ValueError(f"iso_slopes entries must be slopes or (slope, label): {item!r}")
            slope, label = float(item[0]), str(item[1])
        else:
            slope = float(item)
            label = f"iso-performance, slope {slope:.3g}"
        if not (np.isfinite(slope) and slope > 0):
            raise ValueError(f"iso_slopes must be positive and finite, got {slope!r}")
        out.append((slope, label))
    return out


def _iso_tangent(
    curves: Mapping[str, tuple[np.ndarray, np.ndarray, Any]], slope: float
) -> tuple[float, float, str]:
    """Where the iso-performance line of ``slope`` touches the ROC convex hull of all runs.

    The tangent point maximises ``tpr - slope * fpr``; a linear function's maximum over the
    convex hull of a point set is attained at one of the points, so it is found over every run's
    ROC points and the trivial classifiers (0, 0) "always negative" and (1, 1) "always positive"
    (Maxion & Roberts 2004, §5.2–5.3: the ROCCH of all detectors; an iso line steeper or flatter
    than every hull edge touches a trivial corner). Ties go to the lowest FPR.
    """
    best = (0.0, 0.0, "always negative")
    best_val = 0.0
    if 1.0 - slope > best_val:
        best, best_val = (1.0, 1.0, "always positive"), 1.0 - slope
    for name, (f, t, _) in curves.items():
        v = np.asarray(t, dtype=np.float64) - slope * np.asarray(f, dtype=np.float64)
        i = int(np.argmax(v))
        if v[i] > best_val + 1e-15:
            best, best_val = (float(f[i]), float(t[i]), name), float(v[i])
    return best


def _iso_line_x(f0: float, t0: float, slope: float, log: bool, x_min: float) -> np.ndarray:
    """The x values of the iso line ``y = t0 + slope (x - f0)`` inside the unit square."""
    lo = max(0.0, f0 - t0 / slope)
    hi = min(1.0, f0 + (1.0 - t0) / slope)
    if log:
        lo = max(lo, x_min)
        if hi <= lo:
            return np.array([])
        return np.unique(np.concatenate((np.geomspace(lo, hi, 256), [f0] if f0 > 0 else [])))
    return np.array([lo, f0, hi])


class RocDisplay(Display):
    """ROC curves of several runs, their convex hulls and iso-performance lines.

    Create it with :meth:`from_counts` or :meth:`from_predictions` (which compute and draw), or
    from arrays; draw it with :meth:`plot`.

    Args:
        fpr: ``name -> FPR`` of each ROC point, origin first (as :func:`metrics.roc_curve`).
        tpr: ``name -> TPR``, aligned with ``fpr``.
        roc_auc: ``name -> ROC AUC`` shown in the legend; None leaves it out.
        hull_fpr: ``name -> FPR`` of the convex-hull vertices; None: no hulls.
        hull_tpr: ``name -> TPR`` of the convex-hull vertices.

    Attributes:
        names: run names, in drawing order.
        fpr, tpr, roc_auc, hull_fpr, hull_tpr: as given (``{}`` when not given).
        ax_: the axes drawn on by :meth:`plot`.
        figure_: their figure.
    """

    def __init__(
        self,
        *,
        fpr: Mapping[str, Any],
        tpr: Mapping[str, Any],
        roc_auc: Mapping[str, float] | None = None,
        hull_fpr: Mapping[str, Any] | None = None,
        hull_tpr: Mapping[str, Any] | None = None,
    ) -> None:
        self.fpr = _float_map(fpr, "fpr")
        self.names = list(self.fpr)
        self.tpr = _float_map(tpr, "tpr", self.names)
        for name in self.names:
            if self.tpr[name].shape != self.fpr[name].shape:
                raise ValueError(f"fpr[{name!r}] and tpr[{name!r}] must have one length")
        self.roc_auc = {str(k): float(v) for k, v in (roc_auc or {}).items()}
        if (hull_fpr is None) != (hull_tpr is None):
            raise ValueError("give both hull_fpr and hull_tpr, or neither")
        self.hull_fpr = {} if hull_fpr is None else _float_map(hull_fpr, "hull_fpr", self.names)
        self.hull_tpr = {} if hull_tpr is None else _float_map(hull_tpr, "hull_tpr", self.names)

    @classmethod
    def from_counts(
        cls,
        counts_by_name: Mapping[str, RocCounts] | RocCounts,
        *,
        hull: bool = True,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """Compute each run's ROC curve, AUC and (with ``hull``) convex hull, then draw.

        Args:
            counts_by_name: ``name -> RocCounts`` (a bare RocCounts is called ``"run"``).
            hull: compute (and draw) each run's ROC convex hull.
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        counts = _as_counts_mapping(counts_by_name)
        roc = {n: metrics.roc_curve(c) for n, c in counts.items()}
        hulls = {n: curves.convex_hull(c) for n, c in counts.items()} if hull else None
        disp = cls(
            fpr={n: f for n, (f, _, _) in roc.items()},
            tpr={n: t for n, (_, t, _) in roc.items()},
            roc_auc={n: float(metrics.roc_auc(c)) for n, c in counts.items()},
            hull_fpr=None if hulls is None else {n: h.fpr for n, h in hulls.items()},
            hull_tpr=None if hulls is None else {n: h.tpr for n, h in hulls.items()},
        )
        return disp.plot(ax=ax, hull=hull, **plot_options)

    def plot(
        self,
        ax: Axes | None = None,
        *,
        log_fpr: bool = False,
        hull: bool | None = None,
        iso_slopes: Sequence[float | tuple[float, str]] | None = None,
        bands: Mapping[str, Any] | None = None,
        chance: bool = True,
        legend: str | None = "outside",
    ) -> Self:
        """Draw the ROC curves (see :func:`plot_roc` for what is drawn).

        Args:
            ax: axes to draw on; a new figure is created when None.
            log_fpr: logarithmic FPR axis; FPR = 0 gets its own tick, "0", left of a break.
            hull: draw each run's ROC convex hull (dashed); None: when hulls were computed.
            iso_slopes: slopes, or ``(slope, label)`` pairs, of iso-performance lines.
            bands: ``name -> (fpr_grid, tpr_lower, tpr_upper, label)`` confidence bands (or
                band objects with ``grid``, ``low``, ``high``, ``label``).
            chance: draw the chance diagonal TPR = FPR.
            legend: ``"outside"`` (right of the axes), ``"inside"`` or None.

        Returns:
            ``self``, with ``ax_`` and ``figure_`` set.
        """
        names = self.names
        band_map = _check_bands(bands, names)
        slopes = _parse_slopes(iso_slopes)
        draw_hull = bool(self.hull_fpr) if hull is None else hull
        if draw_hull and not self.hull_fpr:
            raise ValueError("hull=True needs hulls: give hull_fpr and hull_tpr")
        styles = _run_styles(names)
        roc = {n: (self.fpr[n], self.tpr[n], None) for n in names}
        x_min = _log_floor([float(np.min(f[f > 0])) for f, _, _ in roc.values() if np.any(f > 0)])
        x_zero = _zero_position(x_min)  # where FPR = 0 is drawn on the log axis

        def draw(ax: Any) -> None:
            extra = _draw_bands(ax, band_map, styles)
            if chance:
                xs = np.geomspace(x_min, 1.0, 128) if log_fpr else np.array([0.0, 1.0])
                ax.plot(xs, xs, color=_LIGHT, lw=1.0, ls="--", gid="chance", zorder=1)
                extra.append(_proxy_line("chance (TPR = FPR)", color=_LIGHT, ls="--"))
            for name in names:
                color, ls = styles[name]
                fpr, tpr, _ = roc[name]
                if log_fpr:
                    fpr, tpr = _log_densify(fpr, tpr, x_min, zero_at=x_zero)
                auc = self.roc_auc.get(name)
                ax.plot(
                    fpr,
                    tpr,
                    color=color,
                    ls=ls,
                    label=name if auc is None else f"{name} (AUC {auc:.3f})",
                    gid=f"roc:{name}",
                    zorder=3,
                )
            if draw_hull:
                for name in names:
                    hx, hy = self.hull_fpr[name], self.hull_tpr[name]
                    if log_fpr:
                        hx, hy = _log_densify(hx, hy, x_min, zero_at=x_zero)
                    ax.plot(
                        hx,
                        hy,
                        color=styles[name][0],
                        ls=(0, (4, 2)),
                        lw=1.0,
                        alpha=0.9,
                        gid=f"hull:{name}",
                        zorder=2,
                    )
                extra.append(_proxy_line("convex hull (dashed)", ls=(0, (4, 2))))
            for k, (slope, label) in enumerate(slopes):
                f0, t0, who = _iso_tangent(roc, slope)
                xs = _iso_line_x(f0, t0, slope, log_fpr, x_min)
                if xs.size:
                    ax.plot(
                        xs,
                        t0 + slope * (xs - f0),
                        color="#333333",
                        ls=_LINESTYLES[1 + k % (len(_LINESTYLES) - 1)],
                        lw=0.9,
                        label=f"{label} (touches {who})",
                        gid=f"iso:{slope:.6g}",
                        zorder=4,
                    )
                ax.plot(
                    [f0 if f0 > 0 or not log_fpr else x_zero],
                    [t0],
                    marker="o",
                    ms=5,
                    mfc="white",
                    mec="#333333",
                    ls="none",
                    gid=f"iso_point:{slope:.6g}",
                    zorder=5,
                )
            if log_fpr:
                _log_axis_with_zero(ax, x_min)
                ax.set_xlabel("false positive rate FPR (log scale)")
            else:
                ax.set_xlim(-0.01, 1.01)
                ax.set_xlabel("false positive rate FPR")
            ax.set_ylim(-0.01, 1.01)
            ax.set_ylabel("true positive rate TPR (recall)")
            _set_title(
                ax,
                "ROC"
                + (" (log FPR)" if log_fpr else "")
                + (" with convex hull" if draw_hull else ""),
                loc="left",
            )
            _legend(ax, extra, legend)

        return self._plot_with(ax, draw)


def plot_roc(
    counts_by_name: Mapping[str, RocCounts] | RocCounts,
    *,
    ax: Axes | None = None,
    log_fpr: bool = False,
    hull: bool = True,
    iso_slopes: Sequence[float | tuple[float, str]] | None = None,
    bands: Mapping[str, Any] | None = None,
    chance: bool = True,
    legend: str | None = "outside",
) -> Axes:
    """ROC curves (one per run), their convex hulls and iso-performance lines.

    Each curve is :func:`metrics.roc_curve` drawn point to point: tied scores give one diagonal
    segment (Maxion & Roberts 2004, §2.2), never an optimistic staircase. With ``hull`` the ROC
    convex hull of each run (:func:`curves.convex_hull`) is drawn dashed. Each entry of
    ``iso_slopes`` draws the iso-performance line of that slope tangent to the convex hull of all
    runs together, with its tangent point marked (Maxion & Roberts §5.3; the slope for prevalence
    η and costs is :func:`curves.iso_performance_slope`, ``(1-η)/η · C_FP/C_FN``).

    With ``log_fpr`` the FPR axis is logarithmic (Brabec et al. 2020, Fig. 4 top right): the
    region that matters at low prevalence. Points at FPR = 0 cannot be placed on a log axis;
    the curve leaves the left edge there. The left limit is the decade below the smallest
    positive FPR of any run.

    Args:
        counts_by_name: ``name -> RocCounts``.
        ax: axes to draw on; a new figure is created when None.
        log_fpr: logarithmic FPR axis; FPR = 0 gets its own tick, "0", left of a break.
        hull: draw each run's ROC convex hull (dashed).
        iso_slopes: slopes, or ``(slope, label)`` pairs, of iso-performance lines.
        bands: ``name -> (fpr_grid, tpr_lower, tpr_upper, label)`` confidence bands
            (or band objects, see :mod:`mlflow_imbalance.plots._common`).
        chance: draw the chance diagonal TPR = FPR.
        legend: ``"outside"`` (right of the axes), ``"inside"`` or None.

    Returns:
        The axes drawn on; :meth:`RocDisplay.from_counts` returns the Display instead.
    """
    return RocDisplay.from_counts(
        counts_by_name,
        hull=hull,
        ax=ax,
        log_fpr=log_fpr,
        iso_slopes=iso_slopes,
        bands=bands,
        chance=chance,
        legend=legend,
    ).ax_


# --------------------------------------------------------------------------- B-ROC


class BrocDisplay(Display):
    """B-ROC curves of several runs at one or more prevalences (Cárdenas & Baras).

    Args:
        prevalences: the prevalence p (a number) or several (a sequence).
        bayes_false_alarm: ``name -> B_FA = 1 − PPV``: shape ``(L,)`` for one prevalence given
            as a number, ``(M, L)`` for ``M`` prevalences given as a sequence (as
            :func:`curves.broc_curve`).
        detection_rate: ``name -> P_D (TPR)``, shape ``(L,)``.

    Attributes:
        names: run names, in drawing order.
        prevalences: the prevalences, as a list.
        bayes_false_alarm, detection_rate: as given.
        ax_: the axes drawn on by :meth:`plot`.
        figure_: their figure.
    """

    def __init__(
        self,
        *,
        prevalences: float | Sequence[float],
        bayes_false_alarm: Mapping[str, Any],
        detection_rate: Mapping[str, Any],
    ) -> None:
        self._scalar = np.ndim(prevalences) == 0
        self.prevalences = _prevalence_list(prevalences)
        if not self.prevalences:
            raise ValueError("prevalences is empty: give at least one η")
        self.bayes_false_alarm = _float_map(
            bayes_false_alarm, "bayes_false_alarm", ndim=(1,) if self._scalar else (2,)
        )
        self.names = list(self.bayes_false_alarm)
        self.detection_rate = _float_map(detection_rate, "detection_rate", self.names)
        for name in self.names:
            shape = (len(self.prevalences),) * (not self._scalar) + self.detection_rate[name].shape
            if self.bayes_false_alarm[name].shape != shape:
                raise ValueError(
                    f"bayes_false_alarm[{name!r}] must have shape {shape}, got "
                    f"{self.bayes_false_alarm[name].shape}"
                )

    @classmethod
    def from_counts(
        cls,
        counts_by_name: Mapping[str, RocCounts] | RocCounts,
        prevalences: float | Sequence[float],
        *,
        points_per_segment: int = 50,
        ax: Axes | None = None,
        **plot_options: Any,
    ) -> Self:
        """Map each run's ROC convex hull to B-ROC space at each prevalence, then draw.

        Args:
            counts_by_name: ``name -> RocCounts`` (a bare RocCounts is called ``"run"``).
            prevalences: one η or several.
            points_per_segment: samples per hull segment (:func:`curves.broc_curve`).
            ax: axes to draw on; a new figure is created when None.
            **plot_options: keyword options of :meth:`plot`.

        Returns:
            The Display, drawn.
        """
        counts = _as_counts_mapping(counts_by_name)
        etas = _prevalence_list(prevalences)
        if not etas:
            raise ValueError("prevalences is empty: give at least one η")
        scalar = np.ndim(prevalences) == 0
        bfa: dict[str, Any] = {}
        detection: dict[str, Any] = {}
        for n, c in counts.items():
            rows = []
            for eta in etas:
                x, detection[n] = curves.broc_curve(c, eta, points_per_segment)
                rows.append(x)
            bfa[n] = rows[0] if scalar else np.stack(rows)
        disp = cls(prevalences=prevalences, bayes_false_alarm=bfa, detection_rate=detection)
        return disp.plot(ax=ax, **plot_options)

    def plot(self, ax: Axes | None = None, *, legend: str | None = "outside") -> Self:
        """Draw the B-ROC curves (see :func:`plot_broc`).

        Args:
            ax: axes to draw on; a new figure is created when None.
            legend: ``"outside"``, ``"inside"`` or None.

        Returns:
            ``self``, with ``ax_`` and ``figure_`` set.
        """
        names, etas = self.names, self.prevalences
        styles = _run_styles(names)

        def draw(ax: Any) -> None:
            extra = []
            many = len(etas) > 1
            for j, eta in enumerate(etas):
                ls = _LINESTYLES[j % len(_LINESTYLES)]
                ax.axvline(1.0 - eta, color=_LIGHT, ls=ls, lw=0.9, gid="chance", zorder=1)
                for name in names:
                    bfa = self.bayes_false_alarm[name]
                    color, ls_run = styles[name]
                    ax.plot(
                        bfa if self._scalar else bfa[j],
                        self.detection_rate[name],
                        color=color,
                        ls=ls if many else ls_run,
                        gid=f"broc:{name}:{j}",
                        label=f"{name}, η = {_fmt_eta(eta)}" if many else name,
                        zorder=3,
                    )
            extra.append(_proxy_line("random guessing (B_FA = 1 − η)", color=_LIGHT))
            ax.set_xlim(-0.01, 1.01)
            ax.set_ylim(-0.01, 1.01)
            ax.set_xlabel("Bayesian false alarm rate 1 − PPV = P(negative | alarm)")
            ax.set_ylabel("detection rate P_D (TPR)")
            _set_title(ax, "B-ROC at η = " + ", ".join(_fmt_eta(e) for e in etas), loc="left")
            _legend(ax, extra, legend)

        return self._plot_with(ax, draw)


def plot_broc(
    counts_by_name: Mapping[str, RocCounts] | RocCounts,
    prevalences: float | Sequence[float],
    *,
    ax: Axes | None = None,
    legend: str | None = "outside",
) -> Axes:
    """B-ROC curves (Cárdenas & Baras): detection rate against Bayesian false alarm 1 − PPV.

    Computed from each run's ROC convex hull by :func:`curves.broc_curve`, with the straight
    hull segments mapped point by point (they are curves in B-ROC space). One line style per
    prevalence, one colour per run. Random guessing maps to the vertical line
    ``B_FA = 1 − p`` (Cárdenas & Baras, "Mapping of ROC to B-ROC"), drawn faint per prevalence.

    Args:
        counts_by_name: ``name -> RocCounts``.
        prevalences: one η or several.
        ax: axes to draw on; a new figure is created when None.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on; :meth:`BrocDisplay.from_counts` returns the Display instead.
    """
    return BrocDisplay.from_counts(counts_by_name, prevalences, ax=ax, legend=legend).ax_
