"""Matplotlib figures of ROC counts at any class prevalence, each drawn on a given ``ax``.

Every ``plot_*`` function takes keyword ``ax=None``: it draws on ``ax`` and returns it, and only
when ``ax`` is None does it create a new :class:`matplotlib.figure.Figure` (with an Agg canvas
attached directly, never through :mod:`matplotlib.pyplot`, so no figure is registered in pyplot's
global state and nothing has to be closed). Matplotlib is imported inside the functions, so
``import mlflow_imbalance.plots`` stays cheap, and global ``rcParams`` are never changed: styling
is applied inside :func:`matplotlib.rc_context` while our own artists are created.

Computation and drawing are kept apart (as in scikit-learn's Display objects): each plot asks
:mod:`mlflow_imbalance.metrics` for plain arrays first, then draws them. Multi-run plots take a
mapping ``name -> RocCounts`` (a single run is a one-item mapping; a bare :class:`RocCounts` is
accepted and called ``"run"``) so the per-run figures of the logging hook and the report's
comparison figures are the same code.

Confidence bands are passed as plain arrays, so this module does not depend on the classes of
:mod:`mlflow_imbalance.uncertainty`: ``bands={name: (x, lower, upper, label)}`` with ``lower``
and ``upper`` aligned with ``x`` and ``label`` saying what the band is, e.g. ``"95%
simultaneous (bootstrap sup-t)"``. The label is shown once in the legend; nothing is ever shaded
without saying which interval it is. An optional fifth element ``valid`` (boolean, aligned with
``x``) marks where the band is claimed; the rest is drawn hatched and very light, with a legend
entry saying why (optional sixth element, e.g. ``"hatched: band not valid, < 20 FP"``).

Colours come from the Okabe & Ito colourblind-safe palette and are assigned per run name by
:func:`run_colors`, deterministically (the same set of names always gets the same colours,
independent of the order of the mapping).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import math
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mlflow_imbalance import metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_cost, check_prevalence, plain

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

logger = logging.getLogger(__name__)

__all__ = [
    "PALETTE",
    "close_figure",
    "figure_to_png",
    "figure_to_svg",
    "new_axes",
    "plot_broc",
    "plot_cost_curve",
    "plot_metric_vs_prevalence",
    "plot_p3",
    "plot_pr",
    "plot_roc",
    "plot_sample_size",
    "run_colors",
    "run_figures",
]

#: Colourblind-safe palette: the six chromatic Okabe & Ito (2008) colours that read well on white
#: (their yellow and black are left out: yellow is too pale for lines, black is kept for
#: annotations), then Paul Tol's wine and indigo.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#882255",  # wine (Tol)
    "#332288",  # indigo (Tol)
)
#: Line styles cycled once the palette is exhausted (9th run onwards) and for prevalences.
_LINESTYLES: tuple[Any, ...] = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))
_GREY = "#555555"
_LIGHT = "#BBBBBB"
_DEFAULT_FIGSIZE = (8.4, 4.8)
_DEFAULT_DPI = 110

_STYLE: dict[str, Any] = {
    "font.size": 9.5,
    "axes.titlesize": 10.5,
    "axes.titlepad": 10.0,
    "axes.titleweight": "bold",
    # A fixed title height skips matplotlib's per-draw search for decorations above the axes
    # (about a fifth of the drawing time); the top spine and ticks are off, so nothing collides.
    "axes.titley": 1.0,
    "axes.labelsize": 9.5,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "lines.linewidth": 1.6,
    "svg.fonttype": "path",  # glyphs as paths: no font files or external references
    "svg.hashsalt": "mlflow-imbalance",  # deterministic ids in SVG output
    "path.simplify": True,
}


# --------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def _style() -> Iterator[None]:
    """Our styling, applied only while our artists are created (rcParams restored after)."""
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        yield


def new_axes(
    figsize: tuple[float, float] = _DEFAULT_FIGSIZE,
    *,
    ncols: int = 1,
    layout: str = "constrained",
) -> Any:
    """A new Figure (Agg canvas, not registered with pyplot) and its axes.

    Args:
        figsize: figure size in inches.
        ncols: number of side-by-side axes.
        layout: ``"constrained"`` (margins fitted to labels and the outside legend at every
            draw) or ``"fixed"`` (fixed margins leaving the right 40 % for the legend: about
            40 % less drawing time, used for the logging hook's per-run figures).

    Returns:
        One Axes when ``ncols == 1``, else an array of Axes; ``ax.figure`` is the Figure.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if ncols < 1:
        raise ValueError(f"ncols must be at least 1, got {plain(ncols)!r}")
    if layout not in ("constrained", "fixed"):
        raise ValueError(f"layout must be 'constrained' or 'fixed', got {layout!r}")
    with _style():
        fig = Figure(figsize=figsize, layout="constrained" if layout == "constrained" else None)
        FigureCanvasAgg(fig)
        if layout == "fixed":
            fig.subplots_adjust(left=0.085, right=0.6, bottom=0.115, top=0.91, wspace=0.3)
        axes = fig.subplots(1, ncols, squeeze=True)
    return axes


def _axes(ax: Any) -> Any:
    return new_axes() if ax is None else ax


def run_colors(names: Sequence[str] | Mapping[str, Any]) -> dict[str, str]:
    """Deterministic colour per name from the colourblind-safe :data:`PALETTE`.

    Each name prefers the palette slot given by a stable hash (MD5) of the name, so one run keeps
    its colour across figures; collisions are resolved in sorted-name order by taking the next
    free slot, so up to ``len(PALETTE)`` names always get distinct colours. The result does not
    depend on the order of ``names``. Beyond the palette size colours repeat (line styles then
    tell runs apart, see :func:`_run_styles`).

    Args:
        names: run names (or a mapping keyed by them).

    Returns:
        ``name -> hex colour``.
    """
    unique = sorted(set(names))
    n = len(PALETTE)
    taken: set[int] = set()
    out: dict[str, str] = {}
    for name in unique:
        slot = int(hashlib.md5(str(name).encode("utf-8")).hexdigest(), 16) % n
        if len(taken) < n:  # palette not exhausted: probe for a free slot
            while slot in taken:
                slot = (slot + 1) % n
            taken.add(slot)
        out[name] = PALETTE[slot]
    return out


def _run_styles(names: Sequence[str]) -> dict[str, tuple[str, Any]]:
    """Colour and line style per name: solid while the palette lasts, then other dash patterns."""
    colors = run_colors(names)
    unique = sorted(set(names))
    n = len(PALETTE)
    return {
        name: (colors[name], _LINESTYLES[(i // n) % len(_LINESTYLES)])
        for i, name in enumerate(unique)
    }


def _as_counts_mapping(counts_by_name: Any, arg: str = "counts_by_name") -> dict[str, RocCounts]:
    """Validate ``name -> RocCounts``; a bare RocCounts becomes ``{"run": counts}``."""
    if isinstance(counts_by_name, RocCounts):
        return {"run": counts_by_name}
    if not isinstance(counts_by_name, Mapping):
        raise TypeError(
            f"{arg} must be a mapping name -> RocCounts, got {type(counts_by_name).__name__}"
        )
    if len(counts_by_name) == 0:
        raise ValueError(f"{arg} is empty: give at least one run")
    out: dict[str, RocCounts] = {}
    for name, c in counts_by_name.items():
        if not isinstance(c, RocCounts):
            raise TypeError(f"{arg}[{name!r}] must be a RocCounts, got {type(c).__name__}")
        out[str(name)] = c
    return out


def _prevalence_list(prevalences: Any, arg: str = "prevalences") -> list[float]:
    if prevalences is None:
        return []
    arr = np.atleast_1d(np.asarray(prevalences, dtype=np.float64))
    if arr.ndim != 1:
        raise ValueError(f"{arg} must be a number or a 1-d sequence, got shape {arr.shape}")
    check_prevalence(arr, arg)
    return [float(v) for v in arr]


def _curve_pairs(
    curves: Any, arg: str, parts: tuple[str, str]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Validate ``name -> (x, y)``: a non-empty mapping of 1-d float arrays of one length."""
    x_name, y_name = parts
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError(f"{arg} must be a non-empty mapping name -> ({x_name}, {y_name})")
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, value in curves.items():
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueError(f"{arg}[{name!r}] must be ({x_name}, {y_name})")
        x = np.asarray(value[0], dtype=np.float64)
        y = np.asarray(value[1], dtype=np.float64)
        if x.ndim != 1 or y.shape != x.shape:
            raise ValueError(
                f"{arg}[{name!r}]: {x_name} and {y_name} must be 1-d of one length, got shapes "
                f"{x.shape} and {y.shape}"
            )
        out[str(name)] = (x, y)
    return out


#: Legend text of the part of a band that is drawn but not claimed (hatched).
BAND_NOT_VALID_LABEL = "hatched: band not valid there"


def _check_band(band: Any, arg: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, Any, str]:
    """``(x, lower, upper, label[, valid[, invalid_label]])`` -> validated arrays and labels.

    ``valid`` (optional, boolean, aligned with ``x``) marks where the band is claimed; the rest
    is drawn hatched and very light with the legend entry ``invalid_label`` (default
    :data:`BAND_NOT_VALID_LABEL`). Returns ``(x, lower, upper, label, valid or None,
    invalid_label)``.
    """
    if not isinstance(band, (tuple, list)) or len(band) not in (4, 5, 6):
        raise ValueError(
            f"{arg} must be a tuple (x, lower, upper, label[, valid[, invalid_label]]), "
            f"got {band!r:.80}"
        )
    x, lo, hi, label = band[:4]
    arrays = []
    for part, value in (("x", x), ("lower", lo), ("upper", hi)):
        a = np.asarray(value, dtype=np.float64)
        if a.ndim != 1:
            raise ValueError(f"{arg} {part} must be one-dimensional, got shape {a.shape}")
        arrays.append(a)
    sizes = {a.size for a in arrays}
    if len(sizes) != 1:
        raise ValueError(
            f"{arg}: x, lower and upper must have one length, got "
            f"{arrays[0].size}, {arrays[1].size}, {arrays[2].size}"
        )
    if not isinstance(label, str) or not label:
        raise ValueError(f"{arg} label must be a non-empty string saying what the band is")
    if np.any(arrays[1] > arrays[2] + 1e-12):
        bad = int(np.sum(arrays[1] > arrays[2] + 1e-12))
        raise ValueError(f"{arg}: lower exceeds upper at {bad} point(s)")
    valid = None
    if len(band) >= 5 and band[4] is not None:
        valid = np.asarray(band[4])
        if valid.dtype != bool or valid.shape != arrays[0].shape:
            raise ValueError(
                f"{arg} valid must be a boolean array of length {arrays[0].size}, got "
                f"dtype {valid.dtype} shape {valid.shape}"
            )
    invalid_label = BAND_NOT_VALID_LABEL
    if len(band) == 6:
        invalid_label = band[5]
        if not isinstance(invalid_label, str) or not invalid_label:
            raise ValueError(f"{arg} invalid_label must be a non-empty string")
    return arrays[0], arrays[1], arrays[2], label, valid, invalid_label


def _check_bands(bands: Any, names: Sequence[str], arg: str = "bands") -> dict[str, tuple]:
    if bands is None:
        return {}
    if not isinstance(bands, Mapping):
        raise TypeError(f"{arg} must be a mapping name -> (x, lower, upper, label)")
    unknown = [k for k in bands if k not in names]
    if unknown:
        raise ValueError(f"{arg} has entries for unknown name(s) {unknown!r}; known: {names!r}")
    return {k: _check_band(v, f"{arg}[{k!r}]") for k, v in bands.items()}


def _draw_bands(ax: Any, bands: dict[str, tuple], styles: Mapping[str, tuple[str, Any]]) -> list:
    """Shade each band in its run's colour; return one legend proxy per distinct band label.

    Where a band's ``valid`` mask is False it is drawn hatched and very light instead (gid
    ``band-invalid:<name>``), with one legend entry per distinct ``invalid_label``; the two
    parts share their boundary point so the band stays continuous.
    """
    from matplotlib.patches import Patch

    labels: list[str] = []
    invalid_labels: list[str] = []
    for name, (x, lo, hi, label, valid, invalid_label) in bands.items():
        color = styles[name][0]
        if valid is None or valid.all():
            ax.fill_between(x, lo, hi, color=color, alpha=0.18, linewidth=0, gid=f"band:{name}")
        else:
            bad = ~valid
            # each part also takes its neighbours so adjacent parts meet
            bad_draw = bad | np.r_[bad[1:], False] | np.r_[False, bad[:-1]]
            if valid.any():
                ax.fill_between(
                    x, lo, hi, where=valid, color=color, alpha=0.18, linewidth=0,
                    gid=f"band:{name}",
                )  # fmt: skip
            ax.fill_between(
                x, lo, hi, where=bad_draw, facecolor="none", edgecolor=color, alpha=0.35,
                hatch="////", linewidth=0, gid=f"band-invalid:{name}",
            )  # fmt: skip
            if invalid_label not in invalid_labels:
                invalid_labels.append(invalid_label)
        if label not in labels:
            labels.append(label)
    out = [Patch(facecolor=_LIGHT, alpha=0.6, label=f"shaded: {lab}") for lab in labels]
    out += [
        Patch(facecolor="none", edgecolor=_GREY, hatch="////", alpha=0.6, label=lab)
        for lab in invalid_labels
    ]
    return out


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _pow10(exp: int) -> str:
    """``10`` with a Unicode superscript exponent (no mathtext: cheap to lay out)."""
    return "10" + str(exp).translate(_SUPERSCRIPT)


def _fmt_eta(eta: float) -> str:
    """A prevalence for legends and titles: 0.05, 0.3, 10⁻³ or 2.5×10⁻⁴."""
    if eta >= 0.01:
        return f"{eta:.3g}"
    exp = math.floor(math.log10(eta))
    mant = float(f"{eta / 10**exp:.3g}")
    if mant >= 10:  # rounding carried into the next decade
        mant, exp = mant / 10, exp + 1
    if mant == 1:
        return _pow10(exp)
    return f"{mant:g}×{_pow10(exp)}"


def _log_tick_label(value: float, _pos: Any = None) -> str:
    """Major tick label of a log axis: 1, 10⁻¹, 10⁻², ... (decades only)."""
    if value <= 0:
        return ""
    exp = round(math.log10(value))
    if not math.isclose(value, 10.0**exp, rel_tol=1e-9):
        return f"{value:g}"
    return "1" if exp == 0 else _pow10(exp)


def _set_log(ax: Any, axis: str = "x") -> None:
    """Log scale with decade labels in plain Unicode and minor ticks at 2 and 5 per decade.

    Matplotlib's default log labels go through mathtext, whose parsing dominated the time to
    draw a figure; these are plain text and read the same.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    target.set_major_locator(LogLocator(base=10.0, numticks=12))
    target.set_major_formatter(FuncFormatter(_log_tick_label))
    target.set_minor_locator(LogLocator(base=10.0, subs=(2.0, 5.0), numticks=12))
    target.set_minor_formatter(NullFormatter())


#: Legend entries wider than this wrap onto further lines, so a long band or method label
#: cannot push the axes out of the figure (constrained layout would collapse them).
_LEGEND_WIDTH = 36


def _wrap_label(label: str, width: int = _LEGEND_WIDTH) -> str:
    """A legend label wrapped to ``width`` characters per line (words kept whole)."""
    import textwrap

    if len(label) <= width:
        return label
    return "\n".join(textwrap.wrap(label, width=width, break_long_words=False)) or label


#: Legend font sizes (points) tried in turn before the legend leaves the right of the axes.
_LEGEND_FONTS = (8.5, 7.5)
#: Font size of a legend placed below the axes (many entries).
_LEGEND_BELOW_FONT = 7.5
#: Height of one legend row per text line, and width of a character, in units of the font size
#: (DejaVu Sans, labelspacing 0.5; measured, rounded up so the estimate errs on the large side).
_ROW_EM, _LINE_EM, _CHAR_EM = 1.7, 1.2, 0.6
#: Room above the axes for the title (points): a right-side legend starts at the axes' top.
_TITLE_ROOM_PT = 36.0
#: Room below the axes for the tick labels and the x label (points).
_XLABEL_ROOM_PT = 34.0


def _legend_height_pt(lines: Sequence[int], fontsize: float, ncol: int = 1) -> float:
    """Estimated legend height for entries of ``lines`` text lines each, in ``ncol`` columns."""
    rows = [max(lines[i : i + ncol]) for i in range(0, len(lines), ncol)]
    return fontsize * (0.8 + sum(_ROW_EM + _LINE_EM * (k - 1) for k in rows))


def _legend_placement(ax: Any, labels: Sequence[str]) -> tuple[str, int, float]:
    """Where the outside legend goes: ``(side, ncol, fontsize)``, side ``"right"``/``"below"``.

    A legend to the right starts at the top of the axes and must end inside the figure, or
    constrained layout collapses the axes. It keeps one column at the usual font size while the
    entries fit (estimated from the figure height, not measured: no text layout needed), then
    tries a smaller font. Beyond that it goes below the x label in as many columns as the width
    allows; only on a fixed-margin figure with several axes (whose margins it cannot move) it
    stays on the right in more columns.
    """
    fig = ax.figure
    fig_w, fig_h = (float(v) * 72.0 for v in fig.get_size_inches())
    lines = [lab.count("\n") + 1 for lab in labels]
    constrained = fig.get_layout_engine() is not None
    room = fig_h - _TITLE_ROOM_PT if constrained else ax.get_position().y1 * fig_h - 6.0
    for fontsize in _LEGEND_FONTS:
        if _legend_height_pt(lines, fontsize) <= room:
            return "right", 1, fontsize
    fontsize = _LEGEND_BELOW_FONT
    if not constrained and len(fig.axes) > 1:  # fixed margins shared by several axes: keep
        ncol = 2  # to the right, in as many columns as the height needs (may be cramped)
        while ncol < len(labels) and _legend_height_pt(lines, fontsize, ncol) > room:
            ncol += 1
        return "right", ncol, fontsize
    width = max(len(line) for lab in labels for line in lab.split("\n"))
    entry = fontsize * (2.4 + 0.8 + 2.0 + _CHAR_EM * width)  # handle, pad, column gap, text
    spec = ax.get_subplotspec() if hasattr(ax, "get_subplotspec") else None
    share = 1.0 / spec.get_gridspec().ncols if spec is not None else 1.0
    ncol = int(max(1, min(len(labels), (fig_w * share - 40.0) // entry)))
    return "below", ncol, fontsize


def _legend(ax: Any, extra: Sequence[Any] = (), where: str | None = "outside") -> None:
    """Legend outside the axes (never covers data), plus style proxies.

    ``"outside"`` puts it right of the axes while its entries fit the figure's height (in a
    smaller font if need be); with more entries (e.g. 20 runs at two prevalences) it goes
    below the x label in columns, and a figure holding only these axes grows taller by the
    legend's height so the plot keeps its size (fixed margins are moved to match; see
    :func:`_legend_placement`).
    """
    if where is None:
        return
    handles, labels = ax.get_legend_handles_labels()
    handles = list(handles) + list(extra)
    labels = [_wrap_label(lab) for lab in [*labels, *(h.get_label() for h in extra)]]
    if not handles:
        return
    if where == "outside":
        side, ncol, fontsize = _legend_placement(ax, labels)
        if side == "right":
            ax.legend(
                handles,
                labels,
                loc="upper left",
                bbox_to_anchor=(1.01, 1.0),
                borderaxespad=0.0,
                handlelength=2.4,
                ncol=ncol,
                fontsize=fontsize,
            )
            return
        from matplotlib.transforms import ScaledTranslation

        fig = ax.figure
        below_xlabel = ax.transAxes + ScaledTranslation(
            0.0, -_XLABEL_ROOM_PT / 72.0, fig.dpi_scale_trans
        )
        ax.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            bbox_transform=below_xlabel,
            borderaxespad=0.0,
            handlelength=2.4,
            ncol=ncol,
            fontsize=fontsize,
        )
        if len(fig.axes) == 1:  # grow the figure so that the plot keeps its size
            lines = [lab.count("\n") + 1 for lab in labels]
            grow = _legend_height_pt(lines, fontsize, ncol) + 6.0
            old_h = fig.get_figheight() * 72.0
            new_h = old_h + grow
            fig.set_figheight(new_h / 72.0)
            if fig.get_layout_engine() is None:  # fixed margins: move the axes up instead
                sp = fig.subplotpars
                fig.subplots_adjust(
                    bottom=(sp.bottom * old_h + grow) / new_h,
                    top=(sp.top * old_h + grow) / new_h,
                    right=0.97,  # the right-hand room is not needed any more
                )
    elif where == "inside":
        ax.legend(handles, labels, loc="lower right", handlelength=2.4)
    else:
        raise ValueError(f"legend must be 'outside', 'inside' or None, got {where!r}")


def _proxy_line(label: str, *, color: str = _GREY, ls: Any = "-", marker: str | None = None):
    from matplotlib.lines import Line2D

    return Line2D([], [], color=color, linestyle=ls, marker=marker, label=label)


def _vline_label(
    ax: Any, x: float, label: str, *, color: str, ls: Any, lw: float, gid: str, label_gid: str
) -> None:
    """A vertical line at data ``x`` with its label written upwards along it, from the top."""
    ax.axvline(x, color=color, ls=ls, lw=lw, gid=gid, zorder=2)
    ax.annotate(
        label,
        xy=(x, 1.0),
        xycoords=ax.get_xaxis_transform(),  # x in data, y in axes fraction
        xytext=(3, -3),
        textcoords="offset points",
        rotation=90,
        ha="left",
        va="top",
        fontsize=7.5,
        color=color,
        gid=label_gid,
    )


def _log_floor(values: Sequence[float]) -> float:
    """Left limit of a log axis: the decade at or below the smallest positive value."""
    pos = [v for v in values if v > 0 and np.isfinite(v)]
    if not pos:
        return 1e-6
    return 10.0 ** math.floor(math.log10(min(pos)) - 1e-12)


# --------------------------------------------------------------------------- ROC


def _log_densify(
    x: np.ndarray, y: np.ndarray, x_min: float, n: int = 24
) -> tuple[np.ndarray, np.ndarray]:
    """Insert points along segments that are long on a log x axis.

    A straight ROC segment (a tie batch, a hull edge) is a curve when the FPR axis is
    logarithmic; drawing only its end points would show a straight line in display space, which
    misrepresents it. Segments spanning more than a factor 1.2 in x get ``n`` interior points
    spaced geometrically (segments starting at x = 0 start at ``x_min / 10``, off the axis).
    The original points are all kept, in order; at most ``log(1/x_min)/log(1.2)`` segments can
    be long, so the cost is small.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.size < 2:
        return x, y
    x0, x1, y0, y1 = x[:-1], x[1:], y[:-1], y[1:]
    lo = np.maximum(x0, x_min * 0.1)
    idx = np.flatnonzero(x1 > lo * 1.2)
    if idx.size == 0:
        return x, y
    frac = np.linspace(0.0, 1.0, n + 2)[1:-1]
    xs = lo[idx, None] * (x1[idx] / lo[idx])[:, None] ** frac
    ys = y0[idx, None] + (y1 - y0)[idx, None] * (xs - x0[idx, None]) / (x1 - x0)[idx, None]
    keys = np.concatenate((np.arange(x.size, dtype=np.float64), (idx[:, None] + frac).ravel()))
    order = np.argsort(keys, kind="stable")
    return np.concatenate((x, xs.ravel()))[order], np.concatenate((y, ys.ravel()))[order]


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


def plot_roc(
    counts_by_name: Mapping[str, RocCounts] | RocCounts,
    *,
    ax: Axes | None = None,
    log_fpr: bool = False,
    hull: bool = True,
    iso_slopes: Sequence[float | tuple[float, str]] | None = None,
    bands: Mapping[str, tuple] | None = None,
    chance: bool = True,
    legend: str | None = "outside",
) -> Axes:
    """ROC curves (one per run), their convex hulls and iso-performance lines.

    Each curve is :func:`metrics.roc_curve` drawn point to point: tied scores give one diagonal
    segment (Maxion & Roberts 2004, §2.2), never an optimistic staircase. With ``hull`` the ROC
    convex hull of each run (:func:`metrics.convex_hull`) is drawn dashed. Each entry of
    ``iso_slopes`` draws the iso-performance line of that slope tangent to the convex hull of all
    runs together, with its tangent point marked (Maxion & Roberts §5.3; the slope for prevalence
    η and costs is :func:`metrics.iso_performance_slope`, ``(1-η)/η · C_FP/C_FN``).

    With ``log_fpr`` the FPR axis is logarithmic (Brabec et al. 2020, Fig. 4 top right): the
    region that matters at low prevalence. Points at FPR = 0 cannot be placed on a log axis;
    the curve leaves the left edge there. The left limit is the decade below the smallest
    positive FPR of any run.

    Args:
        counts_by_name: ``name -> RocCounts``.
        ax: axes to draw on; a new figure is created when None.
        log_fpr: logarithmic FPR axis.
        hull: draw each run's ROC convex hull (dashed).
        iso_slopes: slopes, or ``(slope, label)`` pairs, of iso-performance lines.
        bands: ``name -> (fpr_grid, tpr_lower, tpr_upper, label)`` confidence bands.
        chance: draw the chance diagonal TPR = FPR.
        legend: ``"outside"`` (right of the axes), ``"inside"`` or None.

    Returns:
        The axes drawn on.
    """
    counts = _as_counts_mapping(counts_by_name)
    names = list(counts)
    band_map = _check_bands(bands, names)
    slopes = _parse_slopes(iso_slopes)
    styles = _run_styles(names)
    curves = {n: metrics.roc_curve(c) for n, c in counts.items()}
    aucs = {n: float(metrics.roc_auc(c)) for n, c in counts.items()}
    hulls = {n: metrics.convex_hull(c) for n, c in counts.items()} if hull else {}
    x_min = _log_floor([float(np.min(f[f > 0])) for f, _, _ in curves.values() if np.any(f > 0)])

    with _style():
        ax = _axes(ax)
        extra = _draw_bands(ax, band_map, styles)
        if chance:
            xs = np.geomspace(x_min, 1.0, 128) if log_fpr else np.array([0.0, 1.0])
            ax.plot(xs, xs, color=_LIGHT, lw=1.0, ls="--", gid="chance", zorder=1)
            extra.append(_proxy_line("chance (TPR = FPR)", color=_LIGHT, ls="--"))
        for name in names:
            color, ls = styles[name]
            fpr, tpr, _ = curves[name]
            if log_fpr:
                fpr, tpr = _log_densify(fpr, tpr, x_min)
            ax.plot(
                fpr,
                tpr,
                color=color,
                ls=ls,
                label=f"{name} (AUC {aucs[name]:.3f})",
                gid=f"roc:{name}",
                zorder=3,
            )
        if hull:
            for name in names:
                hx, hy = hulls[name].fpr, hulls[name].tpr
                if log_fpr:
                    hx, hy = _log_densify(hx, hy, x_min)
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
            f0, t0, who = _iso_tangent(curves, slope)
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
                [f0],
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
            _set_log(ax, "x")
            ax.set_xlim(x_min, 1.0)
            ax.set_xlabel("false positive rate FPR (log scale)")
        else:
            ax.set_xlim(-0.01, 1.01)
            ax.set_xlabel("false positive rate FPR")
        ax.set_ylim(-0.01, 1.01)
        ax.set_ylabel("true positive rate TPR (recall)")
        ax.set_title(
            "ROC" + (" (log FPR)" if log_fpr else "") + (" with convex hull" if hull else ""),
            loc="left",
        )
        _legend(ax, extra, legend)
    return ax


# --------------------------------------------------------------------------- PR


def plot_pr(
    counts_by_name: Mapping[str, RocCounts] | RocCounts,
    prevalence: float | Sequence[float] | None = None,
    *,
    ax: Axes | None = None,
    bands: Mapping[str, tuple] | None = None,
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
        The axes drawn on.
    """
    counts = _as_counts_mapping(counts_by_name)
    names = list(counts)
    etas: list[float | None] = (
        [None] if prevalence is None else list(_prevalence_list(prevalence, "prevalence"))
    )
    if not etas:
        raise ValueError("prevalence is an empty sequence: give None or at least one η")
    if bands and len(etas) > 1:
        raise ValueError(f"bands need a single prevalence, got {len(etas)} prevalences")
    band_map = _check_bands(bands, names)
    styles = _run_styles(names)
    data = {}
    for name, c in counts.items():
        for j, eta in enumerate(etas):
            pps = (
                int(np.clip(20000 // max(len(c), 1), 1, 20))
                if points_per_segment is None
                else points_per_segment
            )
            rec, prec = metrics.pr_curve(c, eta, interpolate=True, points_per_segment=pps)
            ap = float(metrics.average_precision(c, eta))
            data[name, j] = (rec, prec, ap, c.prevalence if eta is None else eta)

    with _style():
        ax = _axes(ax)
        extra = _draw_bands(ax, band_map, styles)
        many = len(etas) > 1
        for j, eta in enumerate(etas):
            ls_eta = _LINESTYLES[j % len(_LINESTYLES)]
            for name in names:
                rec, prec, ap, eta_used = data[name, j]
                color, ls_run = styles[name]
                ls = ls_eta if many else ls_run
                label = (
                    f"{name}, η = {_fmt_eta(eta_used)} (AP {ap:.3f})"
                    if (many or eta is None)
                    else f"{name} (AP {ap:.3f})"
                )
                ax.plot(rec, prec, color=color, ls=ls, label=label, gid=f"pr:{name}:{j}", zorder=3)
        # chance level: precision = η for every recall
        chance_etas = sorted({float(data[n, j][3]) for n in names for j in range(len(etas))})
        for eta_c in chance_etas:
            ax.axhline(eta_c, color=_LIGHT, lw=0.9, ls="--", gid="chance", zorder=1)
        extra.append(_proxy_line("chance (precision = η)", color=_LIGHT, ls="--"))
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.01, 1.01)
        ax.set_xlabel("recall (TPR)")
        ax.set_ylabel("precision at prevalence η")
        if prevalence is None:
            tests = sorted({c.prevalence for c in counts.values()})
            which = (
                f"test prevalence η = {_fmt_eta(tests[0])}"
                if len(tests) == 1
                else "each run's test prevalence"
            )
        else:
            which = "η = " + ", ".join(_fmt_eta(e) for e in etas if e is not None)
        ax.set_title(f"Precision–recall at {which}", loc="left")
        _legend(ax, extra, legend)
    return ax


# --------------------------------------------------------------------------- P3


def _highlight(
    ax: Any,
    test_prevalence: Any,
    deployment_prevalences: Any,
    deployment_range: Any = None,
) -> list:
    """Vertical marks: the test prevalence (dotted grey), deployment ones (dashed dark)."""
    extra = []
    tests = _prevalence_list(test_prevalence, "test_prevalence")
    for eta in tests:
        ax.axvline(eta, color=_GREY, ls=":", lw=1.3, gid="test_prevalence", zorder=2)
    if tests:
        extra.append(
            _proxy_line(
                "test prevalence" + (f" {_fmt_eta(tests[0])}" if len(tests) == 1 else "s"),
                ls=":",
            )
        )
    deps = _prevalence_list(deployment_prevalences, "deployment_prevalences")
    for eta in deps:
        ax.axvline(eta, color="#222222", ls="--", lw=1.1, gid="deployment_prevalence", zorder=2)
    if deps:
        extra.append(
            _proxy_line(
                "deployment prevalence" + (f" {_fmt_eta(deps[0])}" if len(deps) == 1 else "s"),
                color="#222222",
                ls="--",
            )
        )
    if deployment_range is not None:
        lo, hi = _prevalence_list(deployment_range, "deployment_range")
        if not lo < hi:
            raise ValueError(f"deployment_range must be (low, high) with low < high: {lo}, {hi}")
        ax.axvspan(lo, hi, color="#999999", alpha=0.12, lw=0, gid="deployment_range", zorder=0)
        from matplotlib.patches import Patch

        extra.append(Patch(facecolor="#999999", alpha=0.25, label="deployment range"))
    return extra


def plot_p3(
    operating_points: Mapping[str, tuple[float, float, str]],
    prevalences: Sequence[float] | np.ndarray | None = None,
    *,
    ax: Axes | None = None,
    bands: Mapping[str, tuple] | None = None,
    highlight: tuple[Any, Any] | None = None,
    legend: str | None = "outside",
) -> Axes:
    """Positive-prevalence precision (P³) curves: precision of fixed operating points against η.

    Brabec et al. (2020) §3.1, Fig. 1: for an operating point (TPR, FPR) precision is the linear
    rational function of η in eq. 8, drawn on a log η axis. Computed by
    :func:`metrics.p3_curve`.

    Args:
        operating_points: ``name -> (tpr, fpr, label)``; ``label`` describes the point, e.g.
            ``"max-F1 threshold"``.
        prevalences: η grid (default :func:`metrics.default_prevalence_grid`).
        ax: axes to draw on; a new figure is created when None.
        bands: ``name -> (eta_grid, precision_lower, precision_upper, label)``.
        highlight: ``(test prevalence, deployment prevalences)``; either may be None; marked
            with a dotted grey and dashed dark vertical lines, and each curve's precision at the
            deployment prevalences is marked with a dot.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on.
    """
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
    names = list(points)
    eta = (
        metrics.default_prevalence_grid()
        if prevalences is None
        else np.asarray(_prevalence_list(prevalences), dtype=np.float64)
    )
    if eta.size < 2:
        raise ValueError(f"prevalences needs at least 2 values for a curve, got {eta.size}")
    band_map = _check_bands(bands, names)
    test_eta, deploy = highlight if highlight is not None else (None, None)
    deploy_list = _prevalence_list(deploy, "highlight deployment prevalences")
    styles = _run_styles(names)
    curves = {
        n: np.asarray(metrics.p3_curve(t, f, eta), dtype=np.float64)
        for n, (t, f, _) in points.items()
    }
    at_deploy = (
        {
            n: np.asarray(metrics.p3_curve(t, f, np.asarray(deploy_list)), dtype=np.float64)
            for n, (t, f, _) in points.items()
        }
        if deploy_list
        else {}
    )

    with _style():
        ax = _axes(ax)
        extra = _draw_bands(ax, band_map, styles)
        for name in names:
            tpr, fpr, label = points[name]
            color, ls = styles[name]
            ax.plot(
                eta,
                curves[name],
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
        ax.set_title("P³: precision of fixed operating points against prevalence", loc="left")
        _legend(ax, extra, legend)
    return ax


# --------------------------------------------------------------------------- metric vs η


def plot_metric_vs_prevalence(
    sweeps: Mapping[str, tuple[Any, Any]],
    *,
    metric_label: str,
    ax: Axes | None = None,
    bands: Mapping[str, tuple] | None = None,
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
        sweeps: ``name -> (eta array, values array)``, e.g. from :func:`metrics.prevalence_sweep`.
        metric_label: y axis label, e.g. ``"average precision"``.
        ax: axes to draw on; a new figure is created when None.
        bands: ``name -> (eta_grid, lower, upper, label)``.
        flip_points: ``(η*, label)`` pairs, e.g. ``(3e-4, "A ↔ B (AP)")``.
        test_prevalence: test-set prevalence(s) to highlight.
        deployment_prevalences: deployment prevalences to highlight.
        deployment_range: ``(low, high)`` deployment range, shaded.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on.
    """
    if not isinstance(metric_label, str) or not metric_label:
        raise ValueError("metric_label must be a non-empty string")
    data = _curve_pairs(sweeps, "sweeps", ("eta", "values"))
    for name, (e, _) in data.items():
        check_prevalence(e, f"sweeps[{name!r}] eta")
    names = list(data)
    band_map = _check_bands(bands, names)
    flips: list[tuple[float, str]] = []
    for item in flip_points or ():
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ValueError(f"flip_points entries must be (eta, label), got {item!r}")
        (eta_f,) = _prevalence_list(item[0], "flip_points eta")
        flips.append((eta_f, str(item[1])))
    styles = _run_styles(names)
    all_eta = np.concatenate([e for e, _ in data.values()])

    with _style():
        ax = _axes(ax)
        extra = _draw_bands(ax, band_map, styles)
        for name in names:
            e, v = data[name]
            color, ls = styles[name]
            ax.plot(e, v, color=color, ls=ls, label=name, gid=f"sweep:{name}", zorder=3)
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
        ax.set_title(f"{metric_label[:1].upper()}{metric_label[1:]} against prevalence", loc="left")
        _legend(ax, extra, legend)
    return ax


# --------------------------------------------------------------------------- B-ROC


def plot_broc(
    counts_by_name: Mapping[str, RocCounts] | RocCounts,
    prevalences: float | Sequence[float],
    *,
    ax: Axes | None = None,
    legend: str | None = "outside",
) -> Axes:
    """B-ROC curves (Cárdenas & Baras): detection rate against Bayesian false alarm 1 − PPV.

    Computed from each run's ROC convex hull by :func:`metrics.broc_curve`, with the straight
    hull segments mapped point by point (they are curves in B-ROC space). One line style per
    prevalence, one colour per run. Random guessing maps to the vertical line
    ``B_FA = 1 − p`` (Cárdenas & Baras, "Mapping of ROC to B-ROC"), drawn faint per prevalence.

    Args:
        counts_by_name: ``name -> RocCounts``.
        prevalences: one η or several.
        ax: axes to draw on; a new figure is created when None.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on.
    """
    counts = _as_counts_mapping(counts_by_name)
    etas = _prevalence_list(prevalences)
    if not etas:
        raise ValueError("prevalences is empty: give at least one η")
    names = list(counts)
    styles = _run_styles(names)
    data = {
        (n, j): metrics.broc_curve(c, eta) for n, c in counts.items() for j, eta in enumerate(etas)
    }
    with _style():
        ax = _axes(ax)
        extra = []
        many = len(etas) > 1
        for j, eta in enumerate(etas):
            ls = _LINESTYLES[j % len(_LINESTYLES)]
            ax.axvline(1.0 - eta, color=_LIGHT, ls=ls, lw=0.9, gid="chance", zorder=1)
            for name in names:
                bfa, pd = data[name, j]
                color, ls_run = styles[name]
                ax.plot(
                    bfa,
                    pd,
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
        ax.set_title("B-ROC at η = " + ", ".join(_fmt_eta(e) for e in etas), loc="left")
        _legend(ax, extra, legend)
    return ax


# --------------------------------------------------------------------------- cost curves


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

    Computed by :func:`metrics.cost_curve`: every hull vertex is a line of normalised expected
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
            :func:`metrics.probability_cost`), e.g. the deployment prevalences.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on.
    """
    from matplotlib.collections import LineCollection

    counts = _as_counts_mapping(counts_by_name)
    cost_fp, cost_fn = check_cost(cost_fp, "cost_fp"), check_cost(cost_fn, "cost_fn")
    names = list(counts)
    styles = _run_styles(names)
    data = {n: metrics.cost_curve(c, cost_fp, cost_fn, num=num) for n, c in counts.items()}
    marks = _prevalence_list(prevalences, "prevalences")
    mark_pc = [float(metrics.probability_cost(e, cost_fp, cost_fn)) for e in marks]
    with _style():
        ax = _axes(ax)
        x = np.linspace(0.0, 1.0, 3)
        ax.plot(x, x, color=_GREY, lw=1.0, ls="--", gid="always_negative", zorder=1)
        ax.plot(x, 1 - x, color=_GREY, lw=1.0, ls="-.", gid="always_positive", zorder=1)
        extra = [
            _proxy_line("always negative", ls="--"),
            _proxy_line("always positive", ls="-."),
        ]
        for name in names:
            pc, lines, envelope = data[name]
            pc = np.asarray(pc, dtype=np.float64)
            lines = np.atleast_2d(np.asarray(lines, dtype=np.float64))
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
                envelope,
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
        ax.set_title(f"Cost curves (C_FP = {cost_fp:g}, C_FN = {cost_fn:g})", loc="left")
        _legend(ax, extra, legend)
    return ax


# --------------------------------------------------------------------------- sample size


def plot_sample_size(
    widths_by_name: Mapping[str, tuple[Any, Any]],
    *,
    tolerance: float = 0.1,
    min_fpr: Mapping[str, float] | None = None,
    ylabel: str = "relative CI half-width of FPR (CV)",
    interval_label: str | None = None,
    ax: Axes | None = None,
    legend: str | None = "outside",
) -> Axes:
    """Sample-size adequacy: relative uncertainty of a rate against the operating FPR.

    Brabec et al. (2020) §5, Theorem 1: the precision interval at every prevalence is at most
    ``max(CV_TPR, CV_FPR)`` wide (half-width relative to the estimate), and ``CV_FPR`` grows as
    FPR shrinks because only ``FPR · N_neg`` negatives are left to estimate it. Each run's curve
    (computed elsewhere, e.g. by :mod:`mlflow_imbalance.uncertainty`) is drawn on log–log axes
    with the tolerance as a horizontal line; below the FPR where the curve crosses it, the test
    set is too small for the chosen tolerance (marked, shaded region to the left of the largest).

    Args:
        widths_by_name: ``name -> (fpr array, relative half-width array)``.
        tolerance: acceptable relative half-width (0.1 = ±10 %).
        min_fpr: ``name -> smallest adequately estimated FPR``; computed from the curves (the
            largest FPR where the width exceeds ``tolerance``) when None.
        ylabel: y axis label.
        interval_label: which interval the widths come from, shown in the title.
        ax: axes to draw on; a new figure is created when None.
        legend: ``"outside"``, ``"inside"`` or None.

    Returns:
        The axes drawn on.
    """
    data = _curve_pairs(widths_by_name, "widths_by_name", ("fpr", "width"))
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be positive, got {plain(tolerance)!r}")
    for name, (f, _) in data.items():
        if np.any(f <= 0) or np.any(f > 1):
            raise ValueError(f"widths_by_name[{name!r}]: fpr must lie in (0, 1]")
    names = list(data)
    limits: dict[str, float] = {}
    for name, (f, w) in data.items():
        if min_fpr is not None and name in min_fpr:
            limits[name] = float(min_fpr[name])
        else:
            too_wide = f[~(w <= tolerance)]
            limits[name] = float(too_wide.max()) if too_wide.size else float("nan")
    styles = _run_styles(names)
    all_f = np.concatenate([f for f, _ in data.values()])
    with _style():
        ax = _axes(ax)
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
        if interval_label:
            title += f" ({interval_label})"
        ax.set_title(title, loc="left")
        _legend(ax, extra, legend)
    return ax


# --------------------------------------------------------------------------- per-run figures


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
        (float(metrics.iso_performance_slope(e, cost_fp, cost_fn)), f"iso line η = {_fmt_eta(e)}")
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
    grid = metrics.default_prevalence_grid(num=200, low=min(1e-6, *pr_etas) / 2, high=0.5)
    figs["p3"] = plot_p3(
        points, grid, highlight=(test, etas or None), ax=new_axes(layout="fixed")
    ).figure
    figs["broc"] = plot_broc(one, pr_etas, ax=new_axes(layout="fixed")).figure
    figs["cost"] = plot_cost_curve(
        one, cost_fp=cost_fp, cost_fn=cost_fn, prevalences=pr_etas, ax=new_axes(layout="fixed")
    ).figure
    return figs


def _threshold_index(counts: RocCounts, threshold: float) -> int:
    """Index of ``threshold`` in the (descending) thresholds of ``counts``."""
    thr = np.asarray(counts.thresholds)
    k = int(np.searchsorted(-thr, -float(threshold), side="left"))
    return min(max(k, 0), thr.size - 1)


# --------------------------------------------------------------------------- output


def figure_to_png(fig: Figure, dpi: int = _DEFAULT_DPI, *, close: bool = False) -> bytes:
    """Render a figure to PNG bytes with the Agg renderer (no pyplot involved).

    Args:
        fig: the figure.
        dpi: resolution.
        close: release the figure afterwards (see :func:`close_figure`).

    Returns:
        The PNG file's bytes.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buf = io.BytesIO()
    with _style():
        fig.savefig(
            buf,
            format="png",
            dpi=dpi,
            metadata={"Software": None},
            # zlib level 3: files ~1% larger than the default 6, encoding about 3x faster
            pil_kwargs={"compress_level": 3},
        )
    if close:
        close_figure(fig)
    return buf.getvalue()


_SVG_STRIP = (
    re.compile(r"<\?xml[^>]*\?>\s*"),
    re.compile(r"<!DOCTYPE[^>]*>\s*"),
    re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL),
)


def figure_to_svg(fig: Figure, *, close: bool = False) -> str:
    """Render a figure to a self-contained SVG string.

    Text is drawn as paths (no font files), ids are deterministic (a fixed hash salt), and the
    XML declaration, DOCTYPE (an external DTD reference) and RDF metadata block are removed, so
    the only URLs left are the SVG and XLink namespace names; the string can be saved as a file
    or inlined in HTML.

    Args:
        fig: the figure.
        close: release the figure afterwards (see :func:`close_figure`).

    Returns:
        The SVG document as text.
    """
    buf = io.StringIO()
    with _style():
        fig.savefig(buf, format="svg", metadata={"Date": None})
    if close:
        close_figure(fig)
    text = buf.getvalue()
    for pattern in _SVG_STRIP:
        text = pattern.sub("", text, count=1)
    return text


def close_figure(fig: Figure) -> None:
    """Release a figure: close it in pyplot if pyplot manages it, then clear it.

    Figures made by this module are not registered with pyplot and are freed by garbage
    collection; this also handles figures a user created with pyplot (pyplot is used only if the
    user already imported it).
    """
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # a no-op for figures pyplot does not manage
        with contextlib.suppress(Exception):
            pyplot.close(fig)
    fig.clear()
