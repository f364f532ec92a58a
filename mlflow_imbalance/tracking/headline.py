r"""The numbers of a run's ``summary.json`` and metrics, from its counts (no mlflow).

Headline intervals (``summary.json`` ``headline``; every number is ``{value, interval, method}``):
ROC-AUC by DeLong's variance from the counts
(:func:`mlflow_imbalance.uncertainty.roc_auc_interval`); AP, PR-AUC and max-F1 by one seeded
Bayesian count bootstrap (:func:`mlflow_imbalance.uncertainty.headline_intervals`,
``n_bootstrap``/``seed`` recorded in ``headline.bootstrap``), one construction at every
prevalence (measured pointwise coverage in docs/statistics.md, "Coverage at a glance"); a row
whose intervals fall in the measured under-covering regime
(:func:`mlflow_imbalance.stats.coverage.undercovers`: few test positives above the threshold
that decides the metric) carries ``"undercovers": true`` and ``"undercovers_reason"``;
precision and recall at the max-F1 point by bounds valid after selection
(:func:`mlflow_imbalance.stats.decision.selected_point_interval`), TPR at an FPR budget by
Clopper-Pearson. Weighted
counts: "point estimate only (weighted)". This module only calls them: every number comes from
:mod:`mlflow_imbalance.core.metrics`, :mod:`mlflow_imbalance.core.curves` and
:mod:`mlflow_imbalance.uncertainty`.

The step series over a log-spaced prevalence grid is computed here too; the MLflow metric keys,
tags and the order of steps are :mod:`mlflow_imbalance.tracking.keys`'s job.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlflow_imbalance.core import curves as cv
from mlflow_imbalance.core import metrics as m
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.stats.decision import per_cases
from mlflow_imbalance.tracking._timing import _Timer

__all__ = [
    "BOOTSTRAP_POINTS",
    "CONFIDENCE",
    "DEFAULT_N_BOOTSTRAP",
    "FPR_BUDGETS",
    "MIN_N_BOOTSTRAP",
    "RATE_METHOD",
    "SWEEP_POINTS",
    "WEIGHTED_METHOD",
]

#: False-positive-rate budgets for the ``tpr_at_fpr_*`` metrics.
FPR_BUDGETS: tuple[float, ...] = (1e-2, 1e-3, 1e-4)
#: Points of the prevalence step series (log-spaced from 1e-6, or lower, to 0.5).
SWEEP_POINTS = 41

#: Nominal level of every headline interval.
CONFIDENCE = 0.95
#: Count-bootstrap replicates for the AP / PR-AUC / max-F1 intervals (``n_bootstrap=``). Modest
#: on purpose: the hook runs at the end of every training run, and 200 replicates put 5 in each
#: tail of a 95% percentile interval (endpoints good to about a tenth of the width; the report
#: uses 1000).
DEFAULT_N_BOOTSTRAP = 200
#: Smallest positive ``n_bootstrap`` accepted (fewer cannot place a 95% percentile endpoint).
MIN_N_BOOTSTRAP = 50
#: Largest ``n_bootstrap`` accepted (the replicates are held in memory per prevalence).
MAX_N_BOOTSTRAP = 100_000
#: Counts with more thresholds than ``3 * BOOTSTRAP_POINTS`` are thinned for the bootstrap only
#: (:func:`mlflow_imbalance.uncertainty.thin_for_bootstrap`); point values use the full counts.
#: The value of :data:`mlflow_imbalance.stats.headline.BOOTSTRAP_POINTS` (kept here so that
#: importing the hook does not import scipy; a test checks that the two agree).
BOOTSTRAP_POINTS = 80
WEIGHTED_METHOD = "point estimate only (weighted)"


#: The interval of TPR at an FPR budget.
RATE_METHOD = "clopper-pearson 95%"


def _point(value: float, interval: Any, method: str | None) -> dict:
    return {
        "value": float(value),
        "interval": None if interval is None else [float(interval[0]), float(interval[1])],
        "method": method,
    }


def _rate_ci(unc: Any, k: float, n: float, weighted: bool) -> tuple[Any, str | None]:
    if weighted:
        return None, WEIGHTED_METHOD
    lo, hi = unc.rate_interval(int(k), int(n), confidence=CONFIDENCE, method="clopper-pearson")
    return (float(lo), float(hi)), RATE_METHOD


def _selected_ci(
    c: RocCounts, k: int, eta: float, rule: str = "max-F1", limits: Any = None
) -> tuple[Any, Any, str]:
    """Precision and recall intervals at a point chosen here (max-F1 or lowest cost), valid.

    The threshold is picked on these counts, so a pointwise interval there under-covers
    (Koopman: 0.85 at P = 100); :func:`mlflow_imbalance.stats.decision.selected_point_interval`
    gives bounds that hold at every threshold at once. ``limits``: the counts'
    :func:`~mlflow_imbalance.stats.decision.candidate_limits`, made once for every point.
    """
    if c.weighted:
        return None, None, WEIGHTED_METHOD
    from mlflow_imbalance.stats.decision import selected_point_interval

    sp = selected_point_interval(c, k, eta, CONFIDENCE, limits=limits)
    return (
        (sp.precision_low, sp.precision_high),
        (sp.recall_low, sp.recall_high),
        f"threshold chosen on this test set ({rule}): " + sp.method,
    )


def _check_bootstrap(n_bootstrap: Any, seed: Any) -> tuple[int, int]:
    """Validate ``n_bootstrap`` / ``seed``; a None seed becomes fresh entropy (then recorded)."""
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int | np.integer):
        raise ValueError(f"n_bootstrap must be an integer, got {n_bootstrap!r}")
    n_boot = int(n_bootstrap)
    if n_boot != 0 and n_boot < MIN_N_BOOTSTRAP:
        raise ValueError(
            f"n_bootstrap must be 0 (no bootstrap intervals) or >= {MIN_N_BOOTSTRAP}, "
            f"got {n_bootstrap!r}"
        )
    if n_boot > MAX_N_BOOTSTRAP:
        raise ValueError(f"n_bootstrap must be at most {MAX_N_BOOTSTRAP}, got {n_bootstrap!r}")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (1 << 63))
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return n_boot, int(seed)


def _headline(
    c: RocCounts,
    name: str,
    prevalences: list[float],
    costs: dict[str, float] | None,
    *,
    n_boot: int = DEFAULT_N_BOOTSTRAP,
    seed: int = 0,
    timer: _Timer | None = None,
) -> tuple[dict[str, Any], list[dict[str, float]]]:
    """Headline metrics for the summary and the step series over the prevalence grid."""
    timer = timer or _Timer()
    from mlflow_imbalance.stats import intervals as unc
    from mlflow_imbalance.stats.auc import roc_auc_interval
    from mlflow_imbalance.stats.coverage import undercover_text
    from mlflow_imbalance.stats.headline import headline_intervals

    test = float(c.prevalence)
    headline: dict[str, Any] = {"confidence": CONFIDENCE}
    with timer.part("intervals"):
        auc_iv = roc_auc_interval(c, CONFIDENCE)
    auc, auc_se = auc_iv.estimate, auc_iv.se
    auc_ci = (auc_iv.low, auc_iv.high) if auc_iv.available else None
    auc_method = WEIGHTED_METHOD if c.weighted else auc_iv.method
    headline["roc_auc"] = _point(auc, auc_ci, auc_method)
    headline["roc_auc"]["se"] = auc_se

    etas = [test, *prevalences]
    eta_arr = np.asarray(etas)
    ap = np.atleast_1d(m.average_precision(c, eta_arr))
    prauc = np.atleast_1d(m.pr_auc(c, eta_arr))
    f1v, f1thr = m.max_f1_point(c, eta_arr)
    f1v, f1thr = np.atleast_1d(f1v), np.atleast_1d(f1thr)

    boot: dict[str, np.ndarray] = {}
    boot_info: dict[str, Any] | None = None
    cost_method: str | None = None
    if c.weighted:
        boot_method = WEIGHTED_METHOD
    elif n_boot == 0:
        boot_method = "no interval (n_bootstrap=0)"
    else:
        with timer.part("intervals"):
            hi = headline_intervals(
                c,
                eta_arr,
                exact={"ap": ap, "pr_auc": prauc, "max_f1": f1v},
                n_boot=n_boot,
                seed=seed,
                confidence=CONFIDENCE,
                points=BOOTSTRAP_POINTS,
                costs=None if costs is None else (costs["fp"], costs["fn"]),
            )
        boot, boot_info, boot_method = hi.intervals, hi.info, hi.method
        cost_method = hi.cost_method

    rows = []
    if c.weighted:
        limits = None
    else:  # the candidates' limits serve every operating point and prevalence
        from mlflow_imbalance.stats.decision import candidate_limits

        limits = candidate_limits(c, CONFIDENCE)
    for i, eta in enumerate(etas):
        k = int(np.searchsorted(-c.thresholds, -f1thr[i]))
        prec = float(np.atleast_1d(m.precision(c, eta))[k])
        p_ci, r_ci, p_method = _selected_ci(c, k, eta, limits=limits)
        r_method = p_method
        row: dict[str, Any] = {
            "prevalence": float(eta),
            "is_test_prevalence": i == 0,
            "max_f1_threshold": float(f1thr[i]),
            "precision_at_max_f1": _point(prec, p_ci, p_method),
            "recall_at_max_f1": _point(float(c.tpr[k]), r_ci, r_method),
        }
        for key, values in (("ap", ap), ("pr_auc", prauc), ("max_f1", f1v)):
            iv = boot[key][i] if key in boot else None
            row[key] = _point(float(values[i]), iv, boot_method)
        if boot:
            # One under-coverage rule, shared with the card and the report
            # (stats/coverage.py): few test positives above the threshold deciding the metric
            whys = {key: undercover_text(c, key, float(eta)) for key in ("ap", "pr_auc", "max_f1")}
            for key, why in whys.items():
                row[key]["undercovers"] = bool(why)
            row["undercovers"] = any(whys.values())
            row["undercovers_reason"] = next((w for w in whys.values() if w), None)
        if boot_info is not None:
            # One validity rule, shared with the report: the intervals come from the Bayesian
            # count bootstrap, valid at every prevalence (docs/statistics.md), so every row is
            # supported; the flag stays for readers of older summaries.
            row["bootstrap_supported"] = bool(boot_info.get("valid_everywhere", False)) or bool(
                min(float(c.fp[k]), float(c.tp[k])) >= boot_info["min_support"]
            )
        if costs is not None:
            # the report's verdict's point: the same function, so the same threshold and cost
            op = cv.optimal_operating_point(c, eta, costs["fp"], costs["fn"])
            worst = (1.0 - eta) * costs["fp"] + eta * costs["fn"]
            per = per_cases(eta)  # the unit of the verdict, the card and the MLflow key
            row["min_cost"] = {
                "threshold": float(op.threshold),
                "per_cases": per,
                "expected_cost_per_cases": float(op.cost) * per,
                "expected_cost": float(op.cost),
                "normalized_expected_cost": float(op.cost / worst),
                "tpr": float(op.tpr),
                "fpr": float(op.fpr),
            }
            if "cost" in boot:  # the report's construction (min_cost_interval), same draws
                lo_c, hi_c = (float(v) for v in boot["cost"][i])
                row["min_cost"]["expected_cost_per_cases_interval"] = [lo_c * per, hi_c * per]
                row["min_cost"]["expected_cost_interval"] = [lo_c, hi_c]
                row["min_cost"]["normalized_expected_cost_interval"] = [lo_c / worst, hi_c / worst]
            if math.isfinite(float(op.threshold)):
                # precision and recall there, with bounds valid after the choice (as max-F1's)
                k_op = int(np.searchsorted(-c.thresholds, -float(op.threshold)))
                p_op = float(np.atleast_1d(m.precision(c, eta))[k_op])
                pc, rc, how = _selected_ci(c, k_op, eta, "lowest expected cost", limits)
                row["min_cost"]["precision"] = _point(p_op, pc, how)
                row["min_cost"]["recall"] = _point(float(c.tpr[k_op]), rc, how)
        rows.append(row)
    headline["at_prevalence"] = rows
    if boot_info is not None:
        headline["bootstrap"] = boot_info
    else:
        headline["bootstrap"] = None
    headline["methods"] = {
        "roc_auc": auc_method,
        "ap, pr_auc, max_f1": boot_method,
        "precision_at_max_f1, recall_at_max_f1": rows[0]["precision_at_max_f1"]["method"],
    }
    op_cost = next((r["min_cost"] for r in rows if "precision" in r.get("min_cost", {})), None)
    if costs is not None:
        headline["methods"]["min_cost expected_cost"] = cost_method or boot_method
    if op_cost is not None:
        headline["methods"]["min_cost precision, recall"] = op_cost["precision"]["method"]
    headline["intervals"] = (
        f"{CONFIDENCE:.0%} intervals: ROC-AUC {auc_method}; AP, PR-AUC, max-F1 {boot_method}"
        if not c.weighted
        else f"Intervals: {WEIGHTED_METHOD}; the count bootstrap and DeLong need integer counts"
    )

    budgets = []
    for alpha in FPR_BUDGETS:
        if c.n_neg * alpha < 1:
            continue
        op = cv.tpr_at_fpr(c, alpha)
        k_tp = op.tpr * c.n_pos
        ci, method = _rate_ci(unc, round(k_tp), c.n_pos, c.weighted)
        budgets.append(
            {
                "max_fpr": alpha,
                "tpr": _point(op.tpr, ci, method),
                "fpr": float(op.fpr),
                "threshold": float(op.threshold),
            }
        )
    headline["tpr_at_fpr"] = budgets
    # the budget fixes the threshold from the negatives alone, so given it the positives
    # above are binomial: Clopper-Pearson holds conditionally (not a selection among thresholds)
    headline["methods"]["tpr_at_fpr"] = WEIGHTED_METHOD if c.weighted else RATE_METHOD

    # The fixed operating point of sweep/precision and sweep/f1: the max-F1 threshold at the
    # test prevalence (row 0). Its TPR and FPR do not depend on η; precision and F1 do.
    k0 = int(np.searchsorted(-c.thresholds, -f1thr[0]))
    t0, f0 = float(c.tpr[k0]), float(c.fpr[k0])
    headline["operating_point"] = {
        "rule": "max-F1 threshold at the test prevalence",
        "threshold": float(f1thr[0]),
        "tpr": t0,
        "fpr": f0,
        "used_by": ["sweep[].precision", "sweep[].f1"],  # metrics imb/{precision,f1}_op_sweep
    }

    low = min(1e-6, *(e / 2 for e in etas))
    grid = cv.default_prevalence_grid(num=SWEEP_POINTS, low=low, high=0.5)
    sweep = cv.prevalence_sweep(c, grid)
    idx = np.searchsorted(-c.thresholds, -np.asarray(sweep["max_f1_threshold"]))
    # precision of each η's own max-F1 point at that η (Brabec eq. 8 via metrics.p3_curve):
    # the diagonal of a (grid x grid) table, never a (grid x thresholds) one
    prec_at = np.diagonal(cv.p3_curve(c.tpr[idx], c.fpr[idx], grid))
    # the fixed operating point: its precision and F1 at every η
    op_counts = RocCounts(
        [float(f1thr[0])], [c.tp[k0]], [c.fp[k0]], c.n_pos, c.n_neg, weighted=c.weighted
    )
    prec_op = np.asarray(cv.p3_curve(t0, f0, grid), dtype=float)
    f1_op = np.asarray(m.f1(op_counts, grid), dtype=float)[:, 0]
    series = [
        {
            "prevalence": float(grid[j]),
            "log10_prevalence": float(np.log10(grid[j])),
            "ap": float(sweep["ap"][j]),
            "pr_auc": float(sweep["pr_auc"][j]),
            "max_f1": float(sweep["max_f1"][j]),
            "precision_at_max_f1": float(prec_at[j]),
            "precision": float(prec_op[j]),
            "f1": float(f1_op[j]),
        }
        for j in range(grid.size)
    ]
    return headline, series
