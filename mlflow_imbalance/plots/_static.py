"""Draw the static part of a figure once per process, reuse its pixels: :func:`render_rgba`.

About half of the time to draw a preview figure goes into its frame: the tick objects
matplotlib makes at every draw, the tick labels, the axis labels and the grid. They depend only
on the figure's size, the axes' position, limits, scales and tick locations, and the labels; not
on the run. A figure marked with :func:`mark_static` (the logging hook's previews) is drawn in two
passes onto one Agg canvas: the *static* artists -- the figure and axes backgrounds and both
axes' :class:`~matplotlib.axis.Axis` (ticks, tick labels, grid, axis label) -- and then,
without clearing, everything else. The first pass is copied once per :func:`_static_key` into a
small process-wide cache (:data:`MAX_BACKGROUNDS` entries) and later figures with the same key
restore those pixels instead of drawing it again.

The result is the same image, pixel for pixel, as one ordinary draw (``tests/test_plots.py``
compares them): the static artists are exactly the ones an ordinary draw paints first (the
backgrounds, then each Axis at zorder 0.5 below every other artist of the axes). A figure for
which that does not hold -- an artist below the axis, a figure-level artist below an axes, a
layout engine, a different dpi -- is drawn the ordinary way. Like the rest of our styling,
the image does not depend on ``savefig.*`` rcParams (no transparent or tight-bbox saving of the
previews); the other rcParams are part of the key, so changing a default draws the frame again.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Any

__all__ = ["MAX_BACKGROUNDS", "mark_static", "render_rgba"]

#: Most static backgrounds kept (each is the figure's RGBA pixels: 1.7 MB for 840 × 520).
MAX_BACKGROUNDS = 8
_ATTR = "_mlflow_imbalance_static"

_lock = threading.Lock()
_backgrounds: OrderedDict[tuple, Any] = OrderedDict()


def mark_static(fig: Any, tag: str) -> None:
    """Mark ``fig`` as drawn with a reusable static part.

    ``tag`` stands for what :func:`_static_key` does not read: the styling of ticks, grid,
    spines and labels and the tick formatters. Figures given the same tag must style those the
    same way (the preview figures: one tag per kind).
    """
    setattr(fig, _ATTR, tag)


def _rc_fingerprint() -> str:
    """Matplotlib's defaults as they are now (fonts, tick sizes, ...): changing one rekeys."""
    import matplotlib

    # dict.items: the raw values, never resolving the backend (as rcParams[...] would)
    return repr(sorted((k, v) for k, v in dict.items(matplotlib.rcParams) if k != "backend"))


def _static_key(fig: Any, tag: str) -> tuple:
    """What the static pixels depend on, read from the figure (tick locations included)."""
    parts: list[Any] = [
        tag,
        _rc_fingerprint(),
        tuple(fig.bbox.size),
        float(fig.dpi),
        tuple(fig.patch.get_facecolor()),
        fig.patch.get_visible(),
    ]
    for ax in fig.axes:
        parts.append(
            (
                tuple(ax.get_position().bounds),
                tuple(ax.get_xlim()),
                tuple(ax.get_ylim()),
                ax.get_xscale(),
                ax.get_yscale(),
                tuple(ax.patch.get_facecolor()),
                ax.patch.get_visible(),
                ax.axison,
                ax.get_axisbelow(),
                *(
                    (
                        axis.get_visible(),
                        axis.label.get_text(),
                        axis.label.get_fontsize(),
                        tuple(axis.get_majorticklocs()),
                        tuple(axis.get_minorticklocs()),
                    )
                    for axis in (ax.xaxis, ax.yaxis)
                ),
            )
        )
    return tuple(parts)


def _split(fig: Any) -> tuple[list[Any], list[Any]] | None:
    """(static, other visible artists) when the static ones are drawn first, else None."""
    static: list[Any] = [fig.patch]
    dynamic: list[Any] = []
    top = float("-inf")
    if fig.subfigs or fig.get_layout_engine() is not None:
        return None  # subfigures, or a layout that hidden artists would change
    for ax in fig.axes:
        axes_static = [ax.patch, ax.xaxis, ax.yaxis]
        others = [
            a for a in ax.get_children() if a.get_visible() and all(a is not s for s in axes_static)
        ]
        below = max(ax.xaxis.get_zorder(), ax.yaxis.get_zorder())
        if any(a.get_zorder() <= below for a in others):
            return None  # something drawn under the ticks and grid: an ordinary draw
        static.extend(axes_static)
        dynamic.extend(others)
        top = max(top, ax.get_zorder())
    for a in fig.get_children():
        if a is fig.patch or any(a is ax for ax in fig.axes) or not a.get_visible():
            continue
        if a.get_zorder() <= top:
            return None  # a figure-level artist drawn before an axes
        dynamic.append(a)
    return static, dynamic


def _set_visible(artists: list[Any], visible: bool) -> None:
    for a in artists:
        a.set_visible(visible)


def render_rgba(fig: Any, dpi: float) -> Any | None:
    """Draw a marked figure on its Agg canvas, reusing the static part; its RGBA buffer.

    Returns None (nothing drawn) when ``fig`` is not marked, ``dpi`` is not the figure's own,
    or its artists are not ordered as :func:`_split` needs; the caller then draws it the
    ordinary way.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    tag = getattr(fig, _ATTR, None)
    if tag is None or float(dpi) != float(fig.dpi) or not isinstance(fig.canvas, FigureCanvasAgg):
        return None
    parts = _split(fig)
    if parts is None:
        return None
    static, dynamic = parts
    key = _static_key(fig, tag)
    canvas = fig.canvas
    # matplotlib's own lock around a draw (its shared font cache); reentrant: fig.draw takes it
    with getattr(Figure, "_render_lock", None) or contextlib.nullcontext():
        renderer = canvas.get_renderer()
        renderer.clear()
        with _lock:
            background = _backgrounds.get(key)
            if background is not None:
                _backgrounds.move_to_end(key)
        if background is None:
            _set_visible(dynamic, False)
            try:
                fig.draw(renderer)
            finally:
                _set_visible(dynamic, True)
            background = canvas.copy_from_bbox(fig.bbox)
            with _lock:
                _backgrounds[key] = background
                while len(_backgrounds) > MAX_BACKGROUNDS:
                    _backgrounds.popitem(last=False)
        else:
            canvas.restore_region(background)
        _set_visible(static, False)
        try:
            fig.draw(renderer)
        finally:
            _set_visible(static, True)
        return canvas.buffer_rgba()


def _clear_backgrounds() -> None:
    """Forget every cached background (tests)."""
    with _lock:
        _backgrounds.clear()
