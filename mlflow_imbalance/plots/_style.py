"""Styling shared by every figure: palette, run colours, per-artist styling, new axes, ticks.

Global ``rcParams`` are never read for our styling nor written: every setting of :data:`_STYLE`
(and :data:`_PREVIEW_STYLE` for the MLflow previews) is passed to the artists themselves --
spines, grid and tick label sizes when the axes are made (:func:`_apply_axes_style`), font size
and weight of titles (:func:`_set_title`) and legends (:func:`_legend_kw`), line widths where
lines are drawn. So figures can be drawn from several threads at once, and a user's own
``rcParams`` are left alone. New figures are plain :class:`matplotlib.figure.Figure` objects with
an Agg canvas (:func:`new_axes`), except when a plot is asked to make its own figure
(``ax=None``) in a notebook or interactive pyplot session: then the figure is made through
:mod:`matplotlib.pyplot` so that the session shows it (see :func:`_pyplot_session`).
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlflow_imbalance.core.validation import plain

#: Colourblind-safe palette: the six chromatic Okabe & Ito (2008) colours that read well on white
#: (their yellow and black are left out: yellow is too pale for lines, black is kept for
#: annotations), then Paul Tol's wine and indigo.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#D55E00",  # vermillion
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

#: Our styling, in rcParams' key names but never written to rcParams: applied to the artists
#: (see the module docstring). SVG output keeps matplotlib's defaults (glyphs as paths, path
#: simplification); :func:`~mlflow_imbalance.plots.export.figure_to_svg` makes its ids
#: deterministic.
_STYLE: dict[str, Any] = {
    "font.size": 9.5,
    "axes.titlesize": 10.5,
    "axes.titlepad": 10.0,
    "axes.titleweight": "bold",
    "axes.titley": 1.0,  # a fixed title height (see _set_title)
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
}

#: The MLflow preview figures (:func:`mlflow_imbalance.plots.preview_figures`): sized for MLflow's
#: artifact preview pane, which shows a PNG at its pixel size up to the pane's width (about
#: 850 px at a 1400 px window). At :data:`PREVIEW_DPI` the smallest text,
#: :data:`PREVIEW_MIN_FONT_PT`, is 10·100/72 ≈ 13.9 px at full size, 12 px down to 86 % of it.
PREVIEW_DPI = 100
PREVIEW_FIGSIZE = (8.4, 5.2)
PREVIEW_MIN_FONT_PT = 10.0
#: One colour per prevalence in the preview figures, far apart in hue and lightness (Okabe &
#: Ito): the test prevalence first, then the prevalences of interest in descending order.
PREVIEW_ETA_COLORS: tuple[str, ...] = (
    "#222222",  # test prevalence: near black
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple (before green: blue and bluish green are the closest pair)
    "#009E73",  # bluish green
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
)
_PREVIEW_STYLE: dict[str, Any] = {
    **_STYLE,
    "font.size": 11.0,
    "axes.titlesize": 12.0,
    "axes.labelsize": 11.0,
    "legend.fontsize": PREVIEW_MIN_FONT_PT,
    "xtick.labelsize": PREVIEW_MIN_FONT_PT,
    "ytick.labelsize": PREVIEW_MIN_FONT_PT,
    "lines.linewidth": 2.0,
    "legend.frameon": True,
    "legend.framealpha": 0.9,
    "legend.edgecolor": "#DDDDDD",
}


def _style_of(ax: Any) -> dict[str, Any]:
    """The style an axes was made with (:data:`_STYLE` for axes made elsewhere)."""
    return getattr(ax, "_mlflow_imbalance_style", _STYLE)


def _apply_axes_style(ax: Any, style: dict[str, Any]) -> None:
    """Style a new axes through its own artists (no rcParams): spines, grid, ticks, labels."""
    ax._mlflow_imbalance_style = style
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_axisbelow(True)
    ax.grid(True, color=style["grid.color"], linewidth=style["grid.linewidth"])
    ax.tick_params(axis="x", labelsize=style["xtick.labelsize"])
    ax.tick_params(axis="y", labelsize=style["ytick.labelsize"])
    ax.xaxis.label.set_fontsize(style["axes.labelsize"])
    ax.yaxis.label.set_fontsize(style["axes.labelsize"])


def _set_title(ax: Any, text: str, **kwargs: Any) -> Any:
    """``ax.set_title`` with the axes' style: size, weight, pad, fixed height (1.0).

    A fixed title height skips matplotlib's per-draw search for decorations above the axes
    (about a fifth of the drawing time); the top spine and ticks are off, so nothing collides.
    """
    style = _style_of(ax)
    kw = {
        "fontsize": style["axes.titlesize"],
        "fontweight": style["axes.titleweight"],
        "pad": style["axes.titlepad"],
        "y": style["axes.titley"],
        "parse_math": False,
        **kwargs,
    }
    return ax.set_title(text, **kw)


def _legend_kw(ax: Any, **kwargs: Any) -> dict[str, Any]:
    """Keyword arguments of ``ax.legend`` for the axes' style (``kwargs`` take precedence)."""
    style = _style_of(ax)
    kw: dict[str, Any] = {"fontsize": style["legend.fontsize"], "frameon": style["legend.frameon"]}
    if style["legend.frameon"]:
        kw["framealpha"] = style["legend.framealpha"]
        kw["edgecolor"] = style["legend.edgecolor"]
    kw.update(kwargs)
    return kw


def _literal_axes(ax: Any) -> None:
    r"""Draw the titles, axis labels, legend entries and annotations of ``ax`` as literal text.

    User strings (run names, counts names, legend labels) may hold ``$``: with
    ``parse_math=False`` matplotlib neither parses them as mathtext (``$\frac{$`` would fail
    the figure) nor renders ``$x^2$`` as maths. Tick labels keep their formatters' output.
    """
    texts = [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
    texts.extend(ax.texts)
    legend = ax.get_legend()
    if legend is not None:
        texts.extend(legend.get_texts())
        texts.append(legend.get_title())
    for text in texts:
        text.set_parse_math(False)


def _literal_texts(fig: Any) -> None:
    """:func:`_literal_axes` for every axes of a figure we made, and its figure-level texts."""
    for ax in fig.axes:
        _literal_axes(ax)
    for legend in fig.legends:
        for text in legend.get_texts():
            text.set_parse_math(False)
    for text in fig.texts:
        text.set_parse_math(False)


def preview_axes() -> Any:
    """A new Agg Figure and Axes for a preview figure (fixed margins, the legend inside)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=PREVIEW_FIGSIZE, dpi=PREVIEW_DPI)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.1, right=0.975, bottom=0.13, top=0.9)
    ax = fig.add_subplot()
    _apply_axes_style(ax, _PREVIEW_STYLE)
    return ax


#: Matplotlib's built-in backends that cannot show a figure on screen.
_NON_INTERACTIVE = frozenset({"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"})


# --------------------------------------------------------------------------- figures


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
    fig = Figure(figsize=figsize, layout="constrained" if layout == "constrained" else None)
    FigureCanvasAgg(fig)
    if layout == "fixed":
        fig.subplots_adjust(left=0.085, right=0.6, bottom=0.115, top=0.91, wspace=0.3)
    axes = fig.subplots(1, ncols, squeeze=True)
    for ax in np.atleast_1d(axes):
        _apply_axes_style(ax, _STYLE)
    return axes


def _backend_name() -> str | None:
    """The configured backend, lower case, without resolving it (None: not chosen yet)."""
    import matplotlib

    value = matplotlib.rcParams._get("backend")  # _get: never triggers backend resolution
    return value.lower() if isinstance(value, str) else None


def _ipython_shell() -> Any:
    """The running IPython shell, or None (IPython is never imported here)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    with contextlib.suppress(Exception):
        return ipython.get_ipython()
    return None


def _pyplot_session() -> Any:
    """:mod:`matplotlib.pyplot` when a figure made for ``ax=None`` should be managed by it.

    That is the case in a Jupyter notebook with the inline backend (IPython running and the
    backend's name containing ``inline``, or a Jupyter kernel with no backend chosen yet, which
    resolves to inline; pyplot is imported if need be), and in an interactive session where the
    user already imported pyplot (an IPython shell or ``pyplot.ion()``) with a backend that can
    show figures. Figures made there are shown by the session, like those of scikit-learn's
    Display objects. Everywhere else -- scripts, the logging hook, the report,
    any thread other than the main one -- None: the figure is a plain Agg :class:`Figure` that
    pyplot never sees.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    shell = _ipython_shell()
    backend = _backend_name()
    pyplot = sys.modules.get("matplotlib.pyplot")
    kernel = type(shell).__name__ == "ZMQInteractiveShell"  # Jupyter: inline by default
    if shell is not None and (("inline" in backend) if backend is not None else kernel):
        if pyplot is None:
            import matplotlib.pyplot as pyplot
        return pyplot
    if pyplot is None or backend in _NON_INTERACTIVE:
        return None
    if shell is not None or pyplot.isinteractive():
        return pyplot
    return None


def _shown_by_pyplot(fig: Any) -> bool:
    """Whether ``fig`` is an open pyplot figure that an interactive backend will show."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    manager = getattr(fig.canvas, "manager", None)
    if pyplot is None or manager is None or not pyplot.fignum_exists(manager.num):
        return False
    backend = _backend_name()
    return backend is not None and backend not in _NON_INTERACTIVE


def _axes(ax: Any) -> Any:
    """``ax``, or new axes: through pyplot in a notebook/interactive session, else Agg."""
    if ax is not None:
        return ax
    pyplot = _pyplot_session()
    if pyplot is None:
        return new_axes()
    fig = pyplot.figure(figsize=_DEFAULT_FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    _apply_axes_style(ax, _STYLE)
    return ax


# --------------------------------------------------------------------------- colours


def run_colors(names: Sequence[str] | Mapping[str, Any]) -> dict[str, str]:
    """Deterministic colour per name from the colourblind-safe :data:`PALETTE`.

    The names, sorted, take the palette's colours in order, so the first four runs always get
    four distinct hues (blue, orange, green, purple: Okabe & Ito's colourblind-safe set) and up
    to ``len(PALETTE)`` names distinct colours. The result depends only on the set of names,
    not on their order. Beyond the palette size colours repeat (line styles then tell runs
    apart, see :func:`_run_styles`).

    Args:
        names: run names (or a mapping keyed by them).

    Returns:
        ``name -> hex colour``.
    """
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(sorted(set(names)))}


def _run_styles(names: Sequence[str]) -> dict[str, tuple[str, Any]]:
    """Colour and line style per name: solid while the palette lasts, then other dash patterns."""
    colors = run_colors(names)
    unique = sorted(set(names))
    n = len(PALETTE)
    return {
        name: (colors[name], _LINESTYLES[(i // n) % len(_LINESTYLES)])
        for i, name in enumerate(unique)
    }


# --------------------------------------------------------------------------- text and axes


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _pow10(exp: int) -> str:
    """``10`` with a Unicode superscript exponent (no mathtext: cheap to lay out)."""
    return "10" + str(exp).translate(_SUPERSCRIPT)


def _fmt_eta(eta: float) -> str:
    """A prevalence for legends and titles, written as the text beside them writes it.

    :func:`mlflow_imbalance._numbers.fmt_eta` (0.05, 0.001, 1e-4, 2.5e-5): the card's and the
    report's sentences and tables use it, so a figure's legend reads the same η.
    """
    from mlflow_imbalance._numbers import fmt_eta

    return fmt_eta(eta)


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


#: Where FPR = 0 sits on a logarithmic FPR axis: this many decades left of the axis's first
#: decade, past a break in the axis (see :func:`_log_axis_with_zero`).
_ZERO_DECADES = 0.6


def _zero_position(x_min: float) -> float:
    """Where x = 0 is drawn on a log axis whose first decade is ``x_min``."""
    return x_min * 10.0**-_ZERO_DECADES


def _decade_ticks(x_min: float, max_ticks: int = 11) -> list[float]:
    """The decades from ``x_min`` to 1, ascending; every second one past ``max_ticks``."""
    first = round(math.log10(x_min))
    step = 1 if 1 - first <= max_ticks else 2
    return [10.0**e for e in range(0, first - 1, -step)][::-1]


def _log_axis_with_zero(ax: Any, x_min: float) -> float:
    """A logarithmic x axis from the decade ``x_min`` to 1 that also shows x = 0.

    A log axis has no 0, yet on a ROC curve FPR = 0 is common and matters (positives ranked
    above every negative; the operating point of a strict threshold). Drawn at the axis's left
    limit such a point would read as FPR = ``x_min``. Here x = 0 gets its own tick, labelled
    "0", :data:`_ZERO_DECADES` decades left of ``x_min``, separated from the log part by a
    break mark (//) on the axis; the decade ticks start at ``x_min``. Callers draw x = 0 at
    the returned position. Major ticks are the decades (every second one past ten decades),
    minor ticks 2 and 5 per decade, none in the break.

    Returns:
        The x position at which FPR = 0 is drawn.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter

    x_zero = _zero_position(x_min)
    ax.set_xscale("log")
    ax.set_xlim(x_zero, 1.0)
    first = round(math.log10(x_min))
    ax.xaxis.set_major_locator(FixedLocator([x_zero, *_decade_ticks(x_min)]))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda v, pos=None: "0" if v < x_min * 0.99 else _log_tick_label(v))
    )
    minor = [m * 10.0**e for e in range(first, 0) for m in (2.0, 5.0)]
    ax.xaxis.set_minor_locator(FixedLocator(minor))
    mid = x_min * 10.0 ** (-_ZERO_DECADES / 2)
    tr = ax.get_xaxis_transform()  # x in data, y in axes fraction
    for f in (10.0**-0.05, 10.0**0.05):
        # two short slanted strokes across the axis line: the usual mark of a break
        ax.plot([mid * f / 1.04, mid * f * 1.04], [-0.018, 0.018], transform=tr,
                color="#444444", lw=1.0, clip_on=False, zorder=6, gid="axis-break")  # fmt: skip
    return x_zero


def _log_floor(values: Sequence[float]) -> float:
    """Left limit of a log axis: the decade at or below the smallest positive value."""
    pos = [v for v in values if v > 0 and np.isfinite(v)]
    if not pos:
        return 1e-6
    return 10.0 ** math.floor(math.log10(min(pos)) - 1e-12)


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
        parse_math=False,
    )
