"""What each run's draws and replicates carry in the report's uncertainty stage.

A run has one set of Bayesian count-bootstrap draws -- the logging hook's
(:func:`~mlflow_imbalance.stats.headline.headline_intervals`, seeded by the report's seed) --
and, from its own stream, count-bootstrap replicates. :func:`draw_statistics` says which
statistics each evaluates beside the table intervals' own; :func:`live_limits` turns the draws
of the lowest cost at :func:`live_cost_grid` into the live verdict's limits
(:class:`~mlflow_imbalance.report.analysis.intervals._Uncertainty` uses both).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.report.analysis._common import FLIP_METRICS
from mlflow_imbalance.stats.bootstrap import (
    Statistic,
    chosen_cost_statistic,
    metric_statistic,
    min_cost_statistic,
    roc_statistic,
)

#: Prevalences (log-spaced over the report's η range) at which the live verdict gets each
#: judged leading run's upper cost limit (``_Uncertainty.live_cost_limits``).
LIVE_COST_POINTS = 24


def live_cost_grid(grid: np.ndarray) -> np.ndarray:
    """The :data:`LIVE_COST_POINTS` prevalences of the live verdict's cost limits.

    Args:
        grid: the report's η grid (increasing).

    Returns:
        Log-spaced prevalences from its first to its last.
    """
    return np.geomspace(grid[0], grid[-1], LIVE_COST_POINTS)


def draw_statistics(
    thin: RocCounts,
    etas: np.ndarray,
    bgrid: np.ndarray,
    live: np.ndarray | None,
    full: bool,
    opts: Any,
) -> tuple[dict[str, Statistic], tuple[str, ...], dict[str, Statistic]]:
    """The statistics of one run's draws (beside the table's own) and of its replicates.

    The draws' extra statistics, when ``full`` (a leading run): AP / PR-AUC / max-F1 on the
    band grid ``bgrid`` (``"band:<metric>"``, max-F1 also without the pseudo-negative), the
    ROC curve (``"roc"``) and, at the live verdict's prevalences ``live`` (None: not asked), the
    lowest cost and the cost at the threshold chosen on the counts (``"live:cost"`` with its
    base, ``"live:cost:chosen"``). The replicates': AP / PR-AUC / max-F1 and the lowest cost
    at the table's η, for the verdict's and the tables' unpaired tests, where each run's
    variance is the larger of its count-bootstrap replicates' and its Bayesian draws'. At
    η = 1e-4 the draws' s.d. averages ~0.7x the estimator's (false alarms 0.10-0.24 on them
    alone); the replicates' is right on average but small exactly in test sets whose top
    scores hold no negative, which no replicate can add (up to 0.094 on them alone); the larger
    of the two: <= 0.060 in every null cell (bench_band_coverage.py --verdict). Every run's
    replicates and draws are on counts thinned to 80 points per axis (at 40 the replicates'
    s.d. fell to ~0.9x the estimator's at η = 1e-4, 1,000 / 100,000).

    Args:
        thin: the run's thinned counts (``thin_for_bootstrap(counts, BOOT_POINTS)``).
        etas: the table's prevalences.
        bgrid: the band grid.
        live: the live verdict's prevalences, or None.
        full: a leading run (bands, ROC band, live limits).
        opts: the report's options (costs).

    Returns:
        ``(extra statistics, their base_for, statistics of the tests' replicates)``.
    """
    cfp, cfn = opts.cost_fp, opts.cost_fn
    tests: dict[str, Statistic] = {
        key: metric_statistic(thin, key, etas) for key, _ in FLIP_METRICS
    }
    tests["cost"] = min_cost_statistic(thin, etas, cfp, cfn)
    extra: dict[str, Statistic] = {}
    base: tuple[str, ...] = ()
    if full:
        extra = {f"band:{key}": metric_statistic(thin, key, bgrid) for key, _ in FLIP_METRICS}
        extra["roc"] = roc_statistic(thin)
        base = ("band:max_f1",)
    if full and live is not None:
        extra["live:cost"] = min_cost_statistic(thin, live, cfp, cfn)
        extra["live:cost:chosen"] = chosen_cost_statistic(thin, live, cfp, cfn)
        base += ("live:cost",)
    return extra, base, tests


def live_limits(
    c: RocCounts,
    thin: RocCounts,
    etas: np.ndarray,
    stat: Statistic,
    draws: Mapping[str, np.ndarray],
    opts: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~mlflow_imbalance.stats.robust.lowest_cost_limits` from draws already made.

    The same construction and operations, on the ``"live:cost"`` draws of
    :func:`draw_statistics`, which are the draws that function makes (the hook's thinning,
    seed and B); a test holds the two equal.

    Args:
        c: the run's counts (the exact lowest costs).
        thin: its thinned counts (the estimate the draws are centred on).
        etas: the live verdict's prevalences.
        stat: the lowest cost's statistic at ``etas`` (``"live:cost"``).
        draws: the run's draws (``"live:cost"``, ``"live:cost:base"``, ``"live:cost:chosen"``).
        opts: the report's options (costs, confidence).

    Returns:
        ``(etas, low, high)``, capped at the cost of the better trivial decision.
    """
    from mlflow_imbalance.stats.robust import cost_limits_from_draws

    low, high = cost_limits_from_draws(
        c, etas, opts.cost_fp, opts.cost_fn, draws["live:cost"], draws["live:cost:base"],
        draws["live:cost:chosen"], stat.estimate(thin), opts.confidence,
    )  # fmt: skip
    return etas, low, high
