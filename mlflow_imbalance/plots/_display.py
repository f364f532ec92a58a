"""The base of the Display objects: computed arrays, ``plot(ax)`` and a notebook picture.

Following scikit-learn's Display convention (``sklearn/metrics/_plot``): a Display holds the
arrays a figure shows, computed once; ``from_counts`` / ``from_predictions`` compute them and
draw; ``plot(ax=None, ...)`` draws on ``ax`` (a new figure when None) and returns the Display,
with the axes and figure in ``ax_`` and ``figure_``. Unlike scikit-learn's, every Display holds
several runs, keyed by name, and draws them with the colours of :func:`run_colors`.

In a notebook a Display shows itself: ``_repr_png_`` renders its figure (drawing it on a new
Agg figure first if it was never plotted), unless pyplot already shows that figure (then it
returns None, so the picture does not appear twice).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mlflow_imbalance.plots._common import _counts_from_predictions
from mlflow_imbalance.plots._style import _axes, _literal_axes, _shown_by_pyplot, new_axes

if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Self

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


class Display:
    """Common machinery of the Display objects (not used on its own).

    Attributes:
        names: the runs' names, in drawing order.
        ax_: the axes last drawn on by :meth:`plot` (None before).
        figure_: the figure of ``ax_`` (None before).
    """

    names: list[str]
    ax_: Axes | None = None
    figure_: Figure | None = None

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Self:  # pragma: no cover
        """Draw on ``ax`` (a new figure when None) and return ``self``; see the subclasses."""
        raise NotImplementedError

    @classmethod
    def from_counts(  # pragma: no cover
        cls, counts_by_name: Any, *args: Any, **kwargs: Any
    ) -> Self:
        """Compute from ``name -> RocCounts`` and draw; see the subclasses."""
        raise NotImplementedError

    @classmethod
    def from_predictions(
        cls,
        y_true: Any,
        y_score_by_name: Mapping[str, Any] | Any,
        *args: Any,
        sample_weight: Any = None,
        pos_label: Any = None,
        **kwargs: Any,
    ) -> Self:
        """Exact ROC counts of each run's scores, then :meth:`from_counts`.

        Args:
            y_true: binary labels shared by every run.
            y_score_by_name: ``name -> scores`` (one array per run, aligned with ``y_true``),
                or one score array (the run is then called ``"run"``).
            *args: further positional arguments of :meth:`from_counts` (e.g. the prevalence).
            sample_weight: optional weights, one per example.
            pos_label: the positive label, when the labels are not {0, 1}, {-1, 1} or bools.
            **kwargs: keyword options of :meth:`from_counts` (including ``ax`` and the
                drawing options).

        Returns:
            The Display, drawn.
        """
        counts = _counts_from_predictions(
            y_true, y_score_by_name, sample_weight=sample_weight, pos_label=pos_label
        )
        return cls.from_counts(counts, *args, **kwargs)

    def _plot_with(self, ax: Axes | None, draw: Callable[[Any], None]) -> Self:
        """Run ``draw(ax)`` on ``ax`` or new (styled) axes, user text drawn literally."""
        ax = _axes(ax)
        draw(ax)
        _literal_axes(ax)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    def _repr_png_(self) -> bytes | None:
        """PNG of the figure for IPython/Jupyter (None when pyplot shows the figure itself)."""
        from mlflow_imbalance.plots.export import figure_to_png

        fig = self.figure_
        if fig is not None:
            return None if _shown_by_pyplot(fig) else figure_to_png(fig)
        drawn = copy.copy(self).plot(ax=new_axes())  # never plotted: draw a private figure
        return figure_to_png(drawn.figure_, close=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(runs={self.names!r})"
