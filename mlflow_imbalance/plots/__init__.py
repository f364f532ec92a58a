"""Matplotlib figures of ROC counts at any class prevalence, each drawn on a given ``ax``.

Every ``plot_*`` function takes keyword ``ax=None``: it draws on ``ax`` and returns it, and only
when ``ax`` is None does it create a new figure: a plain :class:`matplotlib.figure.Figure` with
an Agg canvas attached directly, never through :mod:`matplotlib.pyplot`, so no figure is
registered in pyplot's global state and nothing has to be closed -- except in a notebook
(inline backend) or an interactive pyplot session, where the figure is made through pyplot so
that the session shows it (see :func:`mlflow_imbalance.plots._style._pyplot_session`; never from
a thread other than the main one). Matplotlib is imported inside the functions, so
``import mlflow_imbalance.plots`` stays cheap, and global ``rcParams`` are never read for our
styling nor changed: font sizes, colours, grid and legend frames are passed to the artists
themselves, so figures can be drawn from several threads at once. Run names and other user
strings are drawn as literal text (``parse_math=False``), never as mathtext.

Computation and drawing are kept apart, as in scikit-learn's Display objects: each figure has a
Display class (:class:`RocDisplay`, :class:`PrecisionRecallDisplay`, :class:`P3Display`,
:class:`PrevalenceDisplay`, :class:`BrocDisplay`, :class:`CostCurveDisplay`,
:class:`SampleSizeDisplay`) that holds the plain arrays computed by
:mod:`mlflow_imbalance.core` (``from_counts`` / ``from_predictions`` compute them and draw;
``plot(ax=None, ...)`` draws and returns the Display with ``ax_`` and ``figure_``; in a notebook
a Display shows itself through ``_repr_png_``). The ``plot_*`` functions are the same drawings
returning the axes.

One input convention: every plot takes a mapping ``name -> RocCounts`` (a single run is a
one-item mapping; a bare :class:`RocCounts` is accepted and called ``"run"``) plus keyword
options, so the per-run figures of the logging hook and the report's comparison figures are the
same code. Three plots also accept precomputed inputs in the same position (kept for existing
callers): :func:`plot_p3` ``name -> (tpr, fpr, label)`` operating points,
:func:`plot_metric_vs_prevalence` ``name -> (eta, values)`` sweeps with ``metric_label``, and
:func:`plot_sample_size` ``name -> (fpr, width)`` curves.

Confidence bands are passed as plain arrays, so the plots do not depend on the classes of the
stats layer: ``bands={name: (x, lower, upper, label)}`` with ``lower`` and ``upper`` aligned
with ``x`` and ``label`` saying what the band is, e.g. ``"95% simultaneous (bootstrap
sup-t)"``. The label is shown once in the legend; nothing is ever shaded without saying which
interval it is. An optional fifth element ``valid`` (boolean, aligned with ``x``) marks where
the band is claimed; the rest is drawn hatched and very light, with a legend entry saying why
(optional sixth element, e.g. ``"hatched: band not valid, < 20 FP"``). A band object with
``grid``, ``low``, ``high`` and ``label`` attributes (the stats layer's ``Band``) is accepted
too (duck-typed; its ``extra["supported"]`` mask becomes ``valid``).

Colours come from the Okabe & Ito colourblind-safe palette and are assigned per run name by
:func:`run_colors`, deterministically (the same set of names always gets the same colours,
independent of the order of the mapping).

Modules: ``_style`` (palette, run colours, per-artist styling, new axes, log-axis labels),
``_legend`` (legend placement), ``_common`` (inputs, bands, η marks), ``_display`` (the Display
base), ``roc`` (ROC, B-ROC), ``pr`` (PR, P³), ``prevalence`` (metric against η, sample size),
``cost`` (cost curves), ``run`` (the logging hook's per-run figures), ``export`` (PNG/SVG),
``_static`` (the preview figures' frames drawn once per process, their pixels reused).
"""

from __future__ import annotations

from mlflow_imbalance.plots._common import BAND_NOT_VALID_LABEL
from mlflow_imbalance.plots._display import Display
from mlflow_imbalance.plots._style import PALETTE, new_axes, run_colors
from mlflow_imbalance.plots.cost import CostCurveDisplay, plot_cost_curve
from mlflow_imbalance.plots.export import close_figure, figure_to_png, figure_to_svg
from mlflow_imbalance.plots.pr import P3Display, PrecisionRecallDisplay, plot_p3, plot_pr
from mlflow_imbalance.plots.prevalence import (
    PrevalenceDisplay,
    SampleSizeDisplay,
    plot_metric_vs_prevalence,
    plot_sample_size,
)
from mlflow_imbalance.plots.roc import BrocDisplay, RocDisplay, plot_broc, plot_roc
from mlflow_imbalance.plots.run import PREVIEW_KINDS, preview_figures, run_figures

__all__ = [
    "BAND_NOT_VALID_LABEL",
    "PALETTE",
    "PREVIEW_KINDS",
    "BrocDisplay",
    "CostCurveDisplay",
    "Display",
    "P3Display",
    "PrecisionRecallDisplay",
    "PrevalenceDisplay",
    "RocDisplay",
    "SampleSizeDisplay",
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
    "preview_figures",
    "run_colors",
    "run_figures",
]
