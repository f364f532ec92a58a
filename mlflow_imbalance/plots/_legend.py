"""Legend placement: outside the axes, wrapped, and moved below when the entries do not fit.

A legend never covers data. :func:`_legend` puts it right of the axes while its entries fit the
figure's height (estimated, not measured, so no text layout is needed), in a smaller font if
need be; with many entries it goes below the x label in columns and a one-axes figure grows
taller so that the plot keeps its size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlflow_imbalance.plots._style import _legend_kw, _literal_axes

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
    try:
        _place_legend(ax, extra, where)
    finally:  # run names in titles, labels and legend entries are literal text, never mathtext
        _literal_axes(ax)


def _place_legend(ax: Any, extra: Sequence[Any], where: str | None) -> None:
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
                **_legend_kw(ax, handlelength=2.4, ncol=ncol, fontsize=fontsize),
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
            **_legend_kw(ax, handlelength=2.4, ncol=ncol, fontsize=fontsize),
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
        ax.legend(handles, labels, **_legend_kw(ax, loc="lower right", handlelength=2.4))
    else:
        raise ValueError(f"legend must be 'outside', 'inside' or None, got {where!r}")
