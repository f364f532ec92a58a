"""The report's first stage: each run's exact point metrics at the report's prevalences.

Everything here is exact (from the counts, Brabec et al. 2020 eq. 8); the intervals come later
(:mod:`mlflow_imbalance.report.analysis.intervals`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlflow_imbalance.core import curves as _curves
from mlflow_imbalance.core import metrics as _metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.report.analysis._common import FLIP_METRICS, _f1_box, cost_point
from mlflow_imbalance.stats.bootstrap import metric_statistic

__all__ = ["criterion_sweep", "run_point"]


def run_point(c: RocCounts, etas: np.ndarray, grid: np.ndarray, opts: Any) -> dict[str, Any]:
    """One run's exact metrics at ``etas`` (test prevalence first) and its sweeps over ``grid``.

    The operating point has ONE definition everywhere: the cost-optimal hull vertex when costs
    are given (Maxion & Roberts §5.2), else the max-F1 threshold at that η.
    """
    mf1, thr = _metrics.max_f1_point(c, etas)
    opt = cost_point(c, etas, opts)
    # the AP / PR-AUC / max-F1 curves over the η grid, ONCE: the metric-vs-η charts, the
    # centres of the bands and the curves scanned for ranking flips
    sweep, sweep_err = {}, 0.0
    for key, _ in FLIP_METRICS:
        st = metric_statistic(c, key, grid)
        sweep[key] = st.estimate(c)
        sweep_err = max(sweep_err, st.max_error)
    p: dict[str, Any] = {
        "roc_auc": float(_metrics.roc_auc(c)),
        "etas": etas,
        "ap": np.atleast_1d(_metrics.average_precision(c, etas)),
        "pr_auc": np.atleast_1d(_metrics.pr_auc(c, etas)),
        "max_f1": np.atleast_1d(mf1),
        "cost": np.atleast_1d(opt.cost),
        "sweep": sweep,
        "sweep_error": sweep_err,
    }
    if opts.costs_given:
        op_thr = np.atleast_1d(opt.threshold).astype(float)
        op_tpr = np.atleast_1d(opt.tpr).astype(float)
        op_fpr = np.atleast_1d(opt.fpr).astype(float)
    else:
        op_thr = np.atleast_1d(thr).astype(float)
        idx = np.searchsorted(-c.thresholds, -op_thr)
        op_tpr, op_fpr = c.tpr[idx].astype(float), c.fpr[idx].astype(float)
    whole = (lambda x: x) if c.weighted else np.round
    p.update(
        op_threshold=op_thr,
        op_tp=whole(op_tpr * c.n_pos),
        op_fp=whole(op_fpr * c.n_neg),
        op_tpr=op_tpr,
        op_fpr=op_fpr,
        op_precision=np.array(
            [
                _curves.p3_curve(float(t), float(f), float(e))
                for t, f, e in zip(op_tpr, op_fpr, etas, strict=True)
            ]
        ),
        op_f1=2 * etas * op_tpr / (etas * op_tpr + etas + (1 - etas) * op_fpr),
        f1_box=[
            None
            if c.weighted or not np.isfinite(t)
            else _f1_box(c, float(t), float(e), opts.confidence)
            for t, e in zip(op_thr, etas, strict=True)
        ],
    )
    return p


def criterion_sweep(c: RocCounts, p: dict[str, Any], grid: np.ndarray, key: str, opts: Any) -> Any:
    """The decision criterion of one run over ``grid`` (exact; cost computed once, cached)."""
    if key == "cost":
        if "cost_sweep" not in p:
            p["cost_sweep"] = np.atleast_1d(cost_point(c, grid, opts).cost)
        return p["cost_sweep"]
    return p["sweep"][key]
