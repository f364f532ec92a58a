r"""Log ROC counts to MLflow runs and load them back; ``autolog()`` for scikit-learn metrics.

What :func:`log_scores` / :func:`log_counts` put into a run, under ``imbalance/<name>/``:

- ``roc_counts.npz``: the lossless counts (format: :mod:`mlflow_imbalance.core.format`);
- ``scores.npz`` (optional, see ``keep_scores``): labels, scores (and weights) in example order,
  compressed, so the report can pair runs on the same examples;
- ``roc.png``, ``roc_log.png``, ``pr.png``, ``p3.png``, ``broc.png``, ``cost.png``: per-run
  figures from :func:`mlflow_imbalance.plots.run_figures`;
- ``card.html``: a one-run, self-contained HTML card (inline CSS, figures as data-URI PNG, no
  script) that the MLflow UI previews;
- ``summary.json``: written **last**, the commit marker. Its ``files`` manifest holds the sha256
  of every other file; :func:`load_counts` verifies it, so a half-written or stale set is never
  read silently (schema: :mod:`mlflow_imbalance.summary`).

Metrics (names obey MLflow's ``[/\w.\- :]`` rule; η written as ``eta_1e-04``):

- ``imbalance/<name>/roc_auc``, ``n_pos``, ``n_neg``, ``test_prevalence``,
  ``operating_threshold`` (the max-F1 threshold at the test prevalence);
- ``imbalance/<name>/{ap,pr_auc,max_f1}`` at the test prevalence, and
  ``imbalance/<name>/{ap,pr_auc,max_f1,precision_at_max_f1}/eta_<η>`` per prevalence of interest;
- ``imbalance/<name>/tpr_at_fpr_<α>`` for α in 1e-2, 1e-3, 1e-4 when ``n_neg >= 1/α`` (at least
  one false positive can be spent; below that the point is not estimable);
- ``imbalance/<name>/min_cost/eta_<η>`` (normalised expected cost at the optimal hull vertex)
  when ``costs`` are given;
- a step series over a log-spaced prevalence grid (step i = grid point i):
  ``imbalance/<name>/sweep/{prevalence,log10_prevalence,ap,pr_auc,max_f1,precision_at_max_f1,
  precision,f1}``; ``precision`` and ``f1`` hold one operating point fixed (``operating_threshold``)
  while the others re-optimise it at each η. In the MLflow UI, a line chart of e.g.
  ``sweep/max_f1`` with ``sweep/log10_prevalence`` as its x axis overlays the runs.

Headline intervals (``summary.json`` ``headline``; every number is ``{value, interval, method}``):
ROC-AUC by DeLong's variance from the counts
(:func:`mlflow_imbalance.uncertainty.roc_auc_interval`); AP, PR-AUC and max-F1 by one seeded
count bootstrap (:func:`mlflow_imbalance.uncertainty.headline_intervals`, ``n_bootstrap``/``seed``
recorded in ``headline.bootstrap``); precision by Koopman, rates by Clopper-Pearson. Weighted
counts: "point estimate only (weighted)". This module only calls them: every number comes from
:mod:`mlflow_imbalance.metrics` and :mod:`mlflow_imbalance.uncertainty`.

Atomicity: all input is validated and every file computed and rendered in a temporary directory
before the store is touched; bad input raises before anything is logged. Data files go up first,
then the metrics, then ``summary.json``. A failure in between leaves no (new) ``summary.json``:
a first-time set is then invisible to :func:`list_counts`, and a re-logged set whose upload broke
half-way fails the manifest check with a clear error instead of mixing old and new files.
Re-logging a name replaces its files; stale files not in the new manifest are ignored. MLflow
cannot delete metrics: re-logged metrics append a newer value (the latest is what the UI shows).
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import functools
import hashlib
import inspect
import io
import logging
import math
import re
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from mlflow_imbalance._version import __version__
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.format import COUNTS_FILENAME
from mlflow_imbalance.core.validation import (
    as_1d_array,
    binarize_labels,
    check_prevalence,
    check_same_length,
    check_scores,
    check_weights,
)
from mlflow_imbalance.summary import (
    SCHEMA_NAME,
    SCHEMA_VERSION,
    SUMMARY_FILENAME,
    file_sha256,
    labels_digest,
    scores_digest,
    summary_from_json,
    summary_to_json,
)

logger = logging.getLogger(__name__)

__all__ = [
    "ARTIFACT_ROOT",
    "CARD_FILENAME",
    "DEFAULT_PREVALENCES",
    "KEEP_SCORES_AUTO_LIMIT",
    "SCORES_FILENAME",
    "LoggedCounts",
    "Scores",
    "autolog",
    "list_counts",
    "load_counts",
    "load_scores",
    "load_summary",
    "log_counts",
    "log_scores",
    "metric_key",
]

ARTIFACT_ROOT = "imbalance"
SCORES_FILENAME = "scores.npz"
CARD_FILENAME = "card.html"
#: ``keep_scores="auto"`` keeps the raw scores of at most this many examples (about 9 MB raw,
#: typically 4–8 MB compressed); larger test sets keep only the counts.
KEEP_SCORES_AUTO_LIMIT = 1_000_000
#: Prevalences of interest used when ``prevalences=None``: three decades typical of fraud,
#: intrusion and screening work.
DEFAULT_PREVALENCES: tuple[float, ...] = (1e-2, 1e-3, 1e-4)
#: False-positive-rate budgets for the ``tpr_at_fpr_*`` metrics.
FPR_BUDGETS: tuple[float, ...] = (1e-2, 1e-3, 1e-4)
#: Points of the prevalence step series (log-spaced from 1e-6, or lower, to 0.5).
SWEEP_POINTS = 41
#: Resolution of the per-run PNG figures (modest: they are previews; the report redraws).
FIGURE_DPI = 72

_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}$")
_SCORES_MAX_BYTES = 4 << 30

# ------------------------------------------------------------------------------ small helpers


class Scores(NamedTuple):
    """Raw scores kept with a run: labels (True = positive), scores and optional weights."""

    y_true: np.ndarray
    y_score: np.ndarray
    sample_weight: np.ndarray | None


@dataclasses.dataclass(frozen=True)
class LoggedCounts:
    """What :func:`log_scores` / :func:`log_counts` wrote: where, and the committed summary."""

    run_id: str
    name: str
    artifact_path: str
    summary: dict[str, Any]
    metrics: dict[str, float]


def _mlflow_exception(message: str, code: str = "INVALID_PARAMETER_VALUE") -> Exception:
    from mlflow.exceptions import MlflowException
    from mlflow.protos import databricks_pb2

    return MlflowException(message, error_code=getattr(databricks_pb2, code))


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name) or ".." in name:
        raise ValueError(
            f"name must be 1-100 characters from [A-Za-z0-9_.-] (not starting with '.' or '-', "
            f"no '..'), usable as a folder and a metric-name component; got {name!r}"
        )
    return name


def eta_label(eta: float) -> str:
    """A prevalence as a metric-name component: ``1e-04``, ``2.5e-03``, ``0.5`` -> ``5e-01``.

    Four significant digits at most, trailing zeros dropped; only ``[0-9.e-]`` characters (no
    ``+``, which MLflow metric names do not allow: a value rounding to 1 gives ``1e00``).
    """
    mantissa, exponent = f"{float(eta):.3e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    exp = int(exponent)
    return f"{mantissa}e-{-exp:02d}" if exp < 0 else f"{mantissa}e{exp:02d}"


def metric_key(name: str, metric: str, prevalence: float | None = None) -> str:
    """The MLflow metric key of a headline metric: ``imbalance/<name>/<metric>[/eta_<η>]``."""
    key = f"{ARTIFACT_ROOT}/{name}/{metric}"
    return key if prevalence is None else f"{key}/eta_{eta_label(prevalence)}"


def _check_prevalences(prevalences: Any) -> list[float]:
    if prevalences is None:
        prevalences = DEFAULT_PREVALENCES
    if isinstance(prevalences, int | float | np.floating):
        prevalences = [prevalences]
    arr = np.asarray(prevalences, dtype=np.float64).reshape(-1)
    check_prevalence(arr, "prevalences")
    out = sorted({float(v) for v in arr}, reverse=True)
    labels = [eta_label(v) for v in out]
    if len(set(labels)) != len(labels):
        raise ValueError(
            f"prevalences {out!r} contain values equal to 4 significant digits; "
            "they would share a metric name"
        )
    return out


def _check_costs(costs: Any) -> dict[str, float] | None:
    """``None``, ``(cost_fp, cost_fn)`` or a mapping with keys fp/fn (or cost_fp/cost_fn)."""
    if costs is None:
        return None
    if isinstance(costs, Mapping):
        keys = set(costs)
        fp_key = "fp" if "fp" in keys else "cost_fp"
        fn_key = "fn" if "fn" in keys else "cost_fn"
        if {fp_key, fn_key} != keys:
            raise ValueError(
                f"costs must have exactly the keys 'fp' and 'fn' (or 'cost_fp' and 'cost_fn'), "
                f"got {sorted(map(str, keys))!r}"
            )
        pair = (costs[fp_key], costs[fn_key])
    elif isinstance(costs, tuple | list) and len(costs) == 2:
        pair = tuple(costs)
    else:
        raise ValueError(
            f"costs must be None, (cost_fp, cost_fn) or {{'fp':..,'fn':..}}: {costs!r}"
        )
    out = {}
    for key, value in zip(("fp", "fn"), pair, strict=True):
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"costs[{key!r}] must be a number, got {value!r}") from None
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"costs[{key!r}] must be positive and finite, got {value!r}")
        out[key] = v
    return out


def _resolve_keep_scores(keep_scores: Any, n: int) -> bool:
    if keep_scores == "auto":
        return n <= KEEP_SCORES_AUTO_LIMIT
    if isinstance(keep_scores, bool):
        return keep_scores
    if isinstance(keep_scores, int) and keep_scores >= 0:
        return n <= keep_scores
    raise ValueError(
        f"keep_scores must be 'auto', True, False or a maximum number of examples, "
        f"got {keep_scores!r}"
    )


def _check_extra(extra: Any) -> dict[str, Any]:
    if extra is None:
        return {}
    if not isinstance(extra, Mapping) or not all(isinstance(k, str) for k in extra):
        raise ValueError(f"extra_summary must be a mapping with string keys, got {extra!r:.200}")
    out = dict(extra)
    try:
        summary_to_json(out)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"extra_summary must be JSON-serialisable: {exc}") from None
    return out


def _client(tracking_uri: str | None = None) -> Any:
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri)


def _resolve_run(client: Any, run_id: str | None) -> str:
    """The run to log into: ``run_id`` (any status, not deleted), else the active run.

    With neither, a run is started, as ``mlflow.log_metric`` does.
    """
    import mlflow

    if run_id is None:
        active = mlflow.active_run()
        if active is None:
            active = mlflow.start_run()
            logger.info("no active run: started run %s to log into", active.info.run_id)
        run_id = active.info.run_id
    if not isinstance(run_id, str) or not run_id:
        raise ValueError(f"run_id must be a non-empty string, got {run_id!r}")
    run = client.get_run(run_id)  # raises MlflowException when unknown or unreachable
    if run.info.lifecycle_stage != "active":
        raise _mlflow_exception(
            f"run {run_id} is {run.info.lifecycle_stage}; restore it before logging to it"
        )
    return run_id


# ------------------------------------------------------------------------------ headline numbers

#: Nominal level of every headline interval.
CONFIDENCE = 0.95
#: Count-bootstrap replicates for the AP / PR-AUC / max-F1 intervals (``n_bootstrap=``). Modest
#: on purpose: the hook runs at the end of every training run, and 200 replicates put 5 in each
#: tail of a 95% percentile interval (endpoints good to about a tenth of the width; the report
#: uses 1000).
DEFAULT_N_BOOTSTRAP = 200
#: Smallest positive ``n_bootstrap`` accepted (fewer cannot place a 95% percentile endpoint).
MIN_N_BOOTSTRAP = 50
#: Counts with more thresholds than ``3 * BOOTSTRAP_POINTS`` are thinned for the bootstrap only
#: (:func:`mlflow_imbalance.uncertainty.thin_for_bootstrap`); point values use the full counts.
BOOTSTRAP_POINTS = 200
WEIGHTED_METHOD = "point estimate only (weighted)"


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
    return (float(lo), float(hi)), "clopper-pearson 95%"


def _precision_ci(
    unc: Any, c: RocCounts, k: int, eta: float
) -> tuple[tuple[float, float] | None, str | None]:
    if c.weighted:
        return None, WEIGHTED_METHOD
    tp, fp = int(c.tp[k]), int(c.fp[k])
    lo, hi = unc.precision_interval(tp, fp, int(c.n_pos), int(c.n_neg), eta, confidence=CONFIDENCE)
    return (float(lo), float(hi)), "koopman 95% (ratio of binomial rates at prevalence η)"


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
) -> tuple[dict[str, Any], dict[str, float], list[dict[str, float]]]:
    """Headline metrics for the summary, flat metrics for MLflow, and the step series."""
    from mlflow_imbalance import metrics as m

    timer = timer or _Timer()
    from mlflow_imbalance import uncertainty as unc

    flat: dict[str, float] = {}
    test = float(c.prevalence)
    headline: dict[str, Any] = {"confidence": CONFIDENCE}
    with timer.part("intervals"):
        auc_iv = unc.roc_auc_interval(c, CONFIDENCE)
    auc, auc_se = auc_iv.estimate, auc_iv.se
    auc_ci = (auc_iv.low, auc_iv.high) if auc_iv.available else None
    auc_method = WEIGHTED_METHOD if c.weighted else auc_iv.method
    headline["roc_auc"] = _point(auc, auc_ci, auc_method)
    headline["roc_auc"]["se"] = auc_se
    flat[metric_key(name, "roc_auc")] = auc
    flat[metric_key(name, "n_pos")] = float(c.n_pos)
    flat[metric_key(name, "n_neg")] = float(c.n_neg)
    flat[metric_key(name, "test_prevalence")] = test

    etas = [test, *prevalences]
    eta_arr = np.asarray(etas)
    ap = np.atleast_1d(m.average_precision(c, eta_arr))
    prauc = np.atleast_1d(m.pr_auc(c, eta_arr))
    f1v, f1thr = m.max_f1_point(c, eta_arr)
    f1v, f1thr = np.atleast_1d(f1v), np.atleast_1d(f1thr)

    boot: dict[str, np.ndarray] = {}
    boot_info: dict[str, Any] | None = None
    if c.weighted:
        boot_method = WEIGHTED_METHOD
    elif n_boot == 0:
        boot_method = "no interval (n_bootstrap=0)"
    else:
        with timer.part("intervals"):
            hi = unc.headline_intervals(
                c,
                eta_arr,
                exact={"ap": ap, "pr_auc": prauc, "max_f1": f1v},
                n_boot=n_boot,
                seed=seed,
                confidence=CONFIDENCE,
                points=BOOTSTRAP_POINTS,
            )
        boot, boot_info, boot_method = hi.intervals, hi.info, hi.method

    rows = []
    for i, eta in enumerate(etas):
        k = int(np.searchsorted(-c.thresholds, -f1thr[i]))
        prec = float(np.atleast_1d(m.precision(c, eta))[k])
        p_ci, p_method = _precision_ci(unc, c, k, eta)
        r_ci, r_method = _rate_ci(unc, c.tp[k], c.n_pos, c.weighted)
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
        if boot_info is not None:
            # The bootstrap under-covers where the estimate rests on a handful of errors
            # (docs/statistics.md, "Coverage"): flag rows whose max-F1 point holds fewer than
            # uncertainty.MIN_FP_SUPPORT false or true positives.
            row["bootstrap_supported"] = bool(
                min(float(c.fp[k]), float(c.tp[k])) >= boot_info["min_support"]
            )
        if costs is not None:
            op = m.optimal_operating_point(c, eta, costs["fp"], costs["fn"])
            worst = (1.0 - eta) * costs["fp"] + eta * costs["fn"]
            row["min_cost"] = {
                "expected_cost": float(op.cost),
                "normalized_expected_cost": float(op.cost / worst),
                "threshold": float(op.threshold),
                "tpr": float(op.tpr),
                "fpr": float(op.fpr),
            }
        rows.append(row)
        for key in ("ap", "pr_auc", "max_f1"):
            flat[metric_key(name, key, None if i == 0 else eta)] = row[key]["value"]
        if i > 0:
            flat[metric_key(name, "precision_at_max_f1", eta)] = prec
            if costs is not None:
                flat[metric_key(name, "min_cost", eta)] = row["min_cost"][
                    "normalized_expected_cost"
                ]
    headline["at_prevalence"] = rows
    if boot_info is not None:
        headline["bootstrap"] = boot_info
    else:
        headline["bootstrap"] = None
    headline["methods"] = {
        "roc_auc": auc_method,
        "ap, pr_auc, max_f1": boot_method,
        "precision_at_max_f1": rows[0]["precision_at_max_f1"]["method"],
        "recall_at_max_f1, tpr_at_fpr": rows[0]["recall_at_max_f1"]["method"],
    }
    headline["intervals"] = (
        f"{CONFIDENCE:.0%} intervals: ROC-AUC {auc_method}; AP, PR-AUC, max-F1 {boot_method}"
        if not c.weighted
        else f"Intervals: {WEIGHTED_METHOD}; the count bootstrap and DeLong need integer counts"
    )

    budgets = []
    for alpha in FPR_BUDGETS:
        if c.n_neg * alpha < 1:
            continue
        op = m.tpr_at_fpr(c, alpha)
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
        flat[f"{ARTIFACT_ROOT}/{name}/tpr_at_fpr_{eta_label(alpha)}"] = float(op.tpr)
    headline["tpr_at_fpr"] = budgets

    # The fixed operating point of sweep/precision and sweep/f1: the max-F1 threshold at the
    # test prevalence (row 0). Its TPR and FPR do not depend on η; precision and F1 do.
    k0 = int(np.searchsorted(-c.thresholds, -f1thr[0]))
    t0, f0 = float(c.tpr[k0]), float(c.fpr[k0])
    headline["operating_point"] = {
        "rule": "max-F1 threshold at the test prevalence",
        "threshold": float(f1thr[0]),
        "tpr": t0,
        "fpr": f0,
        "used_by": ["sweep/precision", "sweep/f1"],
    }
    flat[metric_key(name, "operating_threshold")] = float(f1thr[0])

    low = min(1e-6, *(e / 2 for e in etas))
    grid = m.default_prevalence_grid(num=SWEEP_POINTS, low=low, high=0.5)
    sweep = m.prevalence_sweep(c, grid)
    idx = np.searchsorted(-c.thresholds, -np.asarray(sweep["max_f1_threshold"]))
    # precision of each η's own max-F1 point at that η (Brabec eq. 8 via metrics.p3_curve):
    # the diagonal of a (grid x grid) table, never a (grid x thresholds) one
    prec_at = np.diagonal(m.p3_curve(c.tpr[idx], c.fpr[idx], grid))
    # the fixed operating point: its precision and F1 at every η
    op_counts = RocCounts(
        [float(f1thr[0])], [c.tp[k0]], [c.fp[k0]], c.n_pos, c.n_neg, weighted=c.weighted
    )
    prec_op = np.asarray(m.p3_curve(t0, f0, grid), dtype=float)
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
    return headline, flat, series


# ------------------------------------------------------------------------------ figures and card


def _render_figures(
    c: RocCounts, name: str, prevalences: list[float], costs: dict[str, float] | None, out: Path
) -> dict[str, str]:
    """Write the per-run PNGs into ``out``; ``{key: filename}``. Empty if plotting is missing."""
    try:
        from mlflow_imbalance import plots
    except ImportError as exc:  # pragma: no cover - plots ships with the package
        logger.warning("figures skipped: mlflow_imbalance.plots unavailable (%s)", exc)
        return {}
    cfp, cfn = (costs["fp"], costs["fn"]) if costs else (1.0, 1.0)
    files: dict[str, str] = {}
    try:
        figs = plots.run_figures(c, prevalences=prevalences, cost_fp=cfp, cost_fn=cfn, name=name)
        for key, fig in figs.items():
            fname = f"{key}.png"
            (out / fname).write_bytes(plots.figure_to_png(fig, dpi=FIGURE_DPI, close=True))
            files[key] = fname
    except Exception as exc:  # figures are a convenience: never lose the counts over them
        message = f"mlflow-imbalance: figures for {name!r} skipped, drawing failed: {exc!r}"
        logger.warning(message)
        warnings.warn(message, UserWarning, stacklevel=4)
        for fname in files.values():
            (out / fname).unlink(missing_ok=True)
        return {}
    return files


_FIGURE_TITLES = {
    "roc": "ROC curve with convex hull",
    "roc_log": "ROC curve, logarithmic false-positive rate",
    "pr": "Precision-recall at the test and chosen prevalences",
    "p3": "P³: precision of the max-F1 point across prevalence",
    "broc": "B-ROC",
    "cost": "Cost curve",
}


def _template_env() -> Any:
    import jinja2

    here = Path(__file__).resolve().parent
    dirs = [d for d in (here / "templates", here.parent / "templates") if d.is_dir()]
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(d) for d in dirs]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    v = float(value)
    if not math.isfinite(v):
        return "–"
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e5):
        mantissa, exponent = f"{v:.{digits - 1}e}".split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    return f"{v:.{digits}g}"


def _render_card(summary: dict[str, Any], figure_dir: Path, figures: dict[str, str]) -> str:
    env = _template_env()
    env.filters["fmt"] = _fmt
    template = env.get_template("run_card.html.j2")
    images = [
        {
            "key": key,
            "title": _FIGURE_TITLES.get(key, key),
            "src": "data:image/png;base64,"
            + base64.b64encode((figure_dir / fname).read_bytes()).decode("ascii"),
        }
        for key, fname in figures.items()
    ]
    return template.render(s=summary, figures=images)


# ------------------------------------------------------------------------------ logging


def log_scores(
    y_true: Any,
    y_score: Any,
    *,
    name: str = "test",
    prevalences: Any = None,
    costs: Any = None,
    run_id: str | None = None,
    keep_scores: bool | int | str = "auto",
    pos_label: Any = None,
    sample_weight: Any = None,
    log_figures: bool = True,
    extra_summary: Mapping[str, Any] | None = None,
    tracking_uri: str | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    seed: int | None = 0,
) -> LoggedCounts:
    """Log the ROC counts of scores, with metrics, figures and a card, into an MLflow run.

    Args:
        y_true: binary labels (bool, int, float or str; list, array or pandas Series).
        y_score: scores, higher meaning more likely positive (finite).
        name: the set's name: artifacts go to ``imbalance/<name>/``, metrics to
            ``imbalance/<name>/...``; ``[A-Za-z0-9_.-]``, up to 100 characters.
        prevalences: prevalences of interest (deployment η), in (0, 1); None =
            :data:`DEFAULT_PREVALENCES`; ``[]`` = only the test prevalence.
        costs: None, ``(cost_fp, cost_fn)`` or ``{"fp": .., "fn": ..}``: adds the minimum
            expected cost at each prevalence and sets the figures' iso-performance lines.
        run_id: the run to log into (it may be finished); None = the active run (one is started
            if none is active, as ``mlflow.log_metric`` does).
        keep_scores: also store the raw labels and scores (``scores.npz``) for pairing: "auto"
            keeps them up to :data:`KEEP_SCORES_AUTO_LIMIT` examples; True/False; or an int
            limit.
        pos_label: the positive label, needed unless labels are {0,1}, {-1,1} or bools.
        sample_weight: optional non-negative weights (counts become weight sums; no intervals).
        log_figures: render the PNG figures (and embed them in the card).
        extra_summary: extra JSON entries for ``summary.json`` (see :func:`log_counts`).
        tracking_uri: tracking server/store; None = MLflow's current one.
        n_bootstrap: count-bootstrap replicates for the AP / PR-AUC / max-F1 intervals
            (:data:`DEFAULT_N_BOOTSTRAP`; 0 = no bootstrap intervals; else at least
            :data:`MIN_N_BOOTSTRAP`). ROC-AUC uses DeLong's variance and needs none.
        seed: seed of the bootstrap (recorded in ``summary.json``); None draws a fresh one,
            which is recorded too.

    Returns:
        :class:`LoggedCounts` with the run id, artifact path and the committed summary.

    Raises:
        ValueError: on bad input (naming the argument), before anything is logged.
        mlflow.exceptions.MlflowException: unknown or deleted run, or the store failing.
    """
    y = as_1d_array(y_true, "y_true")
    s = check_scores(y_score, "y_score")
    check_same_length([y, s], ["y_true", "y_score"])
    is_pos = binarize_labels(y, pos_label, name="y_true")
    w = check_weights(sample_weight, y.size)
    keep = _resolve_keep_scores(keep_scores, int(y.size))
    timer = _Timer()
    with timer.part("counts"):
        counts = RocCounts._from_validated(is_pos, s, w, compress=True)
    internal = {"y_true_digest": labels_digest(is_pos, w), "n_examples": int(y.size)}
    return _log(
        counts,
        name=name,
        prevalences=prevalences,
        costs=costs,
        run_id=run_id,
        scores=Scores(is_pos, s, w) if keep else None,
        extra_summary=extra_summary,
        internal=internal,
        log_figures=log_figures,
        tracking_uri=tracking_uri,
        n_bootstrap=n_bootstrap,
        seed=seed,
        timer=timer,
    )


def log_counts(
    counts: RocCounts,
    *,
    name: str = "test",
    prevalences: Any = None,
    costs: Any = None,
    run_id: str | None = None,
    scores: Any = None,
    extra_summary: Mapping[str, Any] | None = None,
    log_figures: bool = True,
    tracking_uri: str | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    seed: int | None = 0,
) -> LoggedCounts:
    """Log already-computed counts (Spark, accumulators, synthetic positives) into a run.

    Same artifacts and metrics as :func:`log_scores`. ``y_true_digest`` is None unless
    ``scores`` are given.

    Args:
        counts: the counts to log.
        name: see :func:`log_scores`.
        prevalences: see :func:`log_scores`.
        costs: see :func:`log_scores`.
        run_id: see :func:`log_scores`.
        scores: optional ``(y_true, y_score[, sample_weight])`` to store as ``scores.npz``; they
            must reproduce ``n_pos`` and ``n_neg`` of ``counts``.
        extra_summary: JSON entries recorded in ``summary.json`` under ``extra`` and, when the
            key is not a schema key, at the top level too (e.g. ``{"positives": "synthesized"}``).
        log_figures: render the figures and embed them in the card.
        tracking_uri: see :func:`log_scores`.
        n_bootstrap: see :func:`log_scores`.
        seed: see :func:`log_scores`.

    Returns:
        :class:`LoggedCounts`.
    """
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    internal: dict[str, Any] = {"y_true_digest": None, "n_examples": None}
    kept = None
    if scores is not None:
        if not isinstance(scores, tuple | list) or len(scores) not in (2, 3):
            raise ValueError("scores must be (y_true, y_score) or (y_true, y_score, sample_weight)")
        y = as_1d_array(scores[0], "scores[0] (y_true)")
        s = check_scores(scores[1], "scores[1] (y_score)")
        check_same_length([y, s], ["y_true", "y_score"])
        is_pos = binarize_labels(y, None if y.dtype == bool else _pos_of(y), name="y_true")
        w = check_weights(scores[2] if len(scores) == 3 else None, y.size)
        n_pos = float(is_pos.sum() if w is None else w[is_pos].sum())
        n_neg = float((~is_pos).sum() if w is None else w[~is_pos].sum())
        if not (math.isclose(n_pos, counts.n_pos) and math.isclose(n_neg, counts.n_neg)):
            raise ValueError(
                f"scores hold n_pos={n_pos:g}, n_neg={n_neg:g} but counts have "
                f"n_pos={counts.n_pos:g}, n_neg={counts.n_neg:g}"
            )
        kept = Scores(is_pos, s, w)
        internal = {"y_true_digest": labels_digest(is_pos, w), "n_examples": int(y.size)}
    return _log(
        counts,
        name=name,
        prevalences=prevalences,
        costs=costs,
        run_id=run_id,
        scores=kept,
        extra_summary=extra_summary,
        internal=internal,
        log_figures=log_figures,
        tracking_uri=tracking_uri,
        n_bootstrap=n_bootstrap,
        seed=seed,
    )


def _pos_of(y: np.ndarray) -> Any:
    """Positive label of stored scores: 1/True when present, else the larger of two labels."""
    labels = np.unique(y)
    return 1 if np.any(labels == 1) else labels[-1]


#: A member is deflated only when deflating its first bytes saves at least this share.
_DEFLATE_MIN_SAVING = 0.10
_DEFLATE_PROBE_BYTES = 1 << 18


def _worth_deflating(arr: np.ndarray) -> bool:
    """Whether deflate (level 1) shrinks a sample of ``arr``'s bytes by a useful amount."""
    import zlib

    sample = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)[:_DEFLATE_PROBE_BYTES]
    if sample.size == 0:
        return False
    return len(zlib.compress(sample.tobytes(), 1)) <= (1 - _DEFLATE_MIN_SAVING) * sample.size


def _write_scores(path: Path, scores: Scores) -> None:
    """Write ``scores.npz``: a zip of ``.npy`` members (``numpy.load`` reads it as an npz).

    Each member is deflated (level 1) only when a probe of its first 256 KiB shows deflate saves
    at least 10 %: labels and rounded or low-entropy scores shrink a lot, whereas the mantissas of
    continuous float64 scores are nearly incompressible and deflating them would cost most of
    the hook's time for a few percent of size (they are stored). Scores that are exactly float32
    (most model outputs) are stored as float32, losslessly; labels as bool.
    """
    import zipfile

    s = np.asarray(scores.y_score, dtype=np.float64)
    s32 = s.astype(np.float32)
    arrays = {
        "y_true": np.asarray(scores.y_true, dtype=bool),
        "y_score": s32 if np.array_equal(s32, s) else s,
    }
    if scores.sample_weight is not None:
        arrays["sample_weight"] = np.asarray(scores.sample_weight, dtype=np.float64)
    with zipfile.ZipFile(path, "w") as zf:
        for key, arr in arrays.items():
            arr = np.ascontiguousarray(arr)
            # ZipFile.open(name, "w") takes the archive's current method for the new member
            deflate = _worth_deflating(arr)
            zf.compression = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            zf.compresslevel = 1 if deflate else None
            with zf.open(f"{key}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)


def _now() -> float:
    import time

    return time.perf_counter()


class _Timer:
    """Wall-clock and process-CPU split of one logging call (read by bench_logging.py)."""

    def __init__(self) -> None:
        self.parts: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextmanager
    def part(self, key: str) -> Iterator[None]:
        import time

        t0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.parts[key] = self.parts.get(key, 0.0) + time.perf_counter() - t0
            self.cpu[key] = self.cpu.get(key, 0.0) + time.process_time() - c0


#: Timings of the last logging call in this thread: ``parts`` (wall) and ``cpu`` (process CPU),
#: {"counts", "metrics", "intervals", "figures", "card", "upload"} -> seconds (counts = the
#: from_scores part measured by the caller, when any; "metrics" excludes "intervals").
last_timings = threading.local()


def _log(
    counts: RocCounts,
    *,
    name: str,
    prevalences: Any,
    costs: Any,
    run_id: str | None,
    scores: Scores | None,
    extra_summary: Mapping[str, Any] | None,
    internal: dict[str, Any],
    log_figures: bool,
    tracking_uri: str | None,
    n_bootstrap: Any = DEFAULT_N_BOOTSTRAP,
    seed: Any = 0,
    timer: _Timer | None = None,
) -> LoggedCounts:
    import mlflow
    from mlflow.entities import Metric

    timer = timer or _Timer()
    name = _check_name(name)
    etas = _check_prevalences(prevalences)
    cost = _check_costs(costs)
    extra = _check_extra(extra_summary)
    n_boot, seed = _check_bootstrap(n_bootstrap, seed)
    client = _client(tracking_uri)
    run_id = _resolve_run(client, run_id)
    artifact_path = f"{ARTIFACT_ROOT}/{name}"

    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        data_dir = Path(tmp) / "data"
        commit_dir = Path(tmp) / "commit"
        data_dir.mkdir()
        commit_dir.mkdir()
        with timer.part("metrics"):
            headline, flat, series = _headline(
                counts, name, etas, cost, n_boot=n_boot, seed=seed, timer=timer
            )
        for table in (timer.parts, timer.cpu):  # report the intervals apart from the metrics
            table["metrics"] -= table.get("intervals", 0.0)
        counts.save(data_dir / COUNTS_FILENAME)
        (data_dir / COUNTS_FILENAME).chmod(0o644)
        roles = {COUNTS_FILENAME: "counts"}
        scores_info = None
        pending = None
        pool = None
        if scores is not None:
            # zlib and sha256 release the GIL: write the scores in a thread while the figures
            # render in this one (the two are the largest parts of the hook).
            from concurrent.futures import ThreadPoolExecutor

            def write_scores() -> tuple[str, float]:
                t0 = _now()
                _write_scores(data_dir / SCORES_FILENAME, scores)
                return scores_digest(scores.y_score), _now() - t0

            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mlflow-imbalance")
            pending = pool.submit(write_scores)
        try:
            figures: dict[str, str] = {}
            if log_figures:
                with timer.part("figures"):
                    figures = _render_figures(counts, name, etas, cost, data_dir)
                roles.update({f: "figure" for f in figures.values()})
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        if pending is not None:
            digest, seconds = pending.result()
            timer.parts["scores (in parallel)"] = seconds
            roles[SCORES_FILENAME] = "scores"
            scores_info = {"file": SCORES_FILENAME, "n": int(scores.y_score.size), "digest": digest}
        summary: dict[str, Any] = {
            "schema": SCHEMA_NAME,
            "schema_version": SCHEMA_VERSION,
            "name": name,
            "package_version": __version__,
            "mlflow_version": mlflow.__version__,
            "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "run_id": run_id,
            "n_pos": counts.n_pos,
            "n_neg": counts.n_neg,
            "n_examples": internal.get("n_examples"),
            "n_thresholds": counts.n_thresholds,
            "test_prevalence": float(counts.prevalence),
            "weighted": counts.weighted,
            "compressed": counts.compressed,
            "max_tpr_error": counts.max_tpr_error,
            "max_fpr_error": counts.max_fpr_error,
            "y_true_digest": internal.get("y_true_digest"),
            "prevalences": etas,
            "costs": cost,
            "headline": headline,
            "sweep": series,
            "figures": figures,
            "card": None,
            "scores": scores_info,
            "files": {},
            "extra": extra,
        }
        for key, value in extra.items():
            summary.setdefault(key, value)
        with timer.part("card"):
            card = _render_card(summary, data_dir, figures)
            (data_dir / CARD_FILENAME).write_text(card, encoding="utf-8")
        roles[CARD_FILENAME] = "card"
        summary["card"] = CARD_FILENAME
        summary["files"] = {
            fname: {
                "sha256": file_sha256(data_dir / fname),
                "bytes": (data_dir / fname).stat().st_size,
                "role": role,
            }
            for fname, role in roles.items()
        }
        text = summary_to_json(summary)
        summary_from_json(text, source="the summary being written")  # never commit an invalid one
        (commit_dir / SUMMARY_FILENAME).write_text(text, encoding="utf-8")

        # ---- only now touch the store: data files, metrics, then the commit marker
        with timer.part("upload"):
            client.log_artifacts(run_id, str(data_dir), artifact_path=artifact_path)
            import time

            now = int(time.time() * 1000)
            batch = [Metric(k, float(v), now, 0) for k, v in flat.items() if math.isfinite(v)]
            for step, row in enumerate(series):
                batch.extend(
                    Metric(f"{artifact_path}/sweep/{k}", v, now, step)
                    for k, v in row.items()
                    if math.isfinite(v)
                )
            for i in range(0, len(batch), 1000):
                client.log_batch(run_id, metrics=batch[i : i + 1000])
            client.log_artifact(run_id, str(commit_dir / SUMMARY_FILENAME), artifact_path)
    last_timings.parts = dict(timer.parts)
    last_timings.cpu = dict(timer.cpu)
    logger.info("logged counts %r to run %s (%s)", name, run_id, artifact_path)
    return LoggedCounts(run_id, name, artifact_path, summary, flat)


# ------------------------------------------------------------------------------ loading


@contextmanager
def _no_mlflow_progress_bar() -> Iterator[None]:
    """Silence MLflow's per-file tqdm bars: our loads are small and the CLI draws its own."""
    import os

    key = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"
    old = os.environ.get(key)
    os.environ[key] = "false"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old


def _download(client: Any, run_id: str, path: str, dst: str) -> Path:
    with _no_mlflow_progress_bar():
        return Path(client.download_artifacts(run_id, path, dst))


def load_summary(
    run_id: str, name: str = "test", *, tracking_uri: str | None = None
) -> dict[str, Any]:
    """The validated ``summary.json`` of ``imbalance/<name>/`` in a run.

    Raises:
        mlflow.exceptions.MlflowException: the run has no committed set of that name (the
            message lists the names it has).
        ValueError: the summary is not a valid mlflow-imbalance summary.
    """
    name = _check_name(name)
    client = _client(tracking_uri)
    return _load_summary(client, run_id, name)


def _load_summary(client: Any, run_id: str, name: str) -> dict[str, Any]:
    from mlflow.exceptions import MlflowException

    path = f"{ARTIFACT_ROOT}/{name}/{SUMMARY_FILENAME}"
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        try:
            local = _download(client, run_id, path, tmp)
        except (MlflowException, OSError) as exc:
            listed = [f.path for f in client.list_artifacts(run_id, f"{ARTIFACT_ROOT}/{name}")]
            if f"{ARTIFACT_ROOT}/{name}/{SUMMARY_FILENAME}" in listed:
                raise
            names = _committed_names(client, run_id)
            raise _mlflow_exception(
                f"run {run_id} has no committed counts named {name!r} (no {path}); "
                f"it has: {names or 'none'}",
                "RESOURCE_DOES_NOT_EXIST",
            ) from exc
        text = local.read_bytes()
    summary = summary_from_json(text, source=f"run {run_id}: {path}")
    if summary["name"] != name:
        raise ValueError(f"run {run_id}: {path} describes {summary['name']!r}, not {name!r}")
    return summary


def _committed_names(client: Any, run_id: str) -> list[str]:
    names = []
    for entry in client.list_artifacts(run_id, ARTIFACT_ROOT):
        if not entry.is_dir:
            continue
        inner = {f.path.rsplit("/", 1)[-1] for f in client.list_artifacts(run_id, entry.path)}
        if SUMMARY_FILENAME in inner:
            names.append(entry.path.rsplit("/", 1)[-1])
    return sorted(names)


def _fetch_verified(
    client: Any, run_id: str, name: str, summary: dict[str, Any], fname: str, dst: str
) -> bytes:
    entry = summary["files"].get(fname)
    if entry is None:
        raise ValueError(f"run {run_id}: {fname} is not in the manifest of counts {name!r}")
    data = _download(client, run_id, f"{ARTIFACT_ROOT}/{name}/{fname}", dst).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["sha256"]:
        raise ValueError(
            f"run {run_id}: {ARTIFACT_ROOT}/{name}/{fname} does not match its summary.json "
            f"manifest (sha256 {digest[:12]}… vs {entry['sha256'][:12]}…): the set was "
            "modified or a re-log did not finish; log it again"
        )
    return data


def load_counts(run_id: str, name: str = "test", *, tracking_uri: str | None = None) -> RocCounts:
    """Load and validate the counts of ``imbalance/<name>/`` from a run.

    The file must match the sha256 in ``summary.json`` and the counts' class totals must match
    the summary; the counts themselves are validated by :mod:`mlflow_imbalance.core.format`.
    """
    name = _check_name(name)
    client = _client(tracking_uri)
    summary = _load_summary(client, run_id, name)
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        data = _fetch_verified(client, run_id, name, summary, COUNTS_FILENAME, tmp)
    source = f"run {run_id}: {ARTIFACT_ROOT}/{name}/roc_counts.npz"
    counts = RocCounts.from_bytes(data, source=source)
    if not (
        math.isclose(counts.n_pos, summary["n_pos"])
        and math.isclose(counts.n_neg, summary["n_neg"])
    ):
        raise ValueError(f"run {run_id}: counts {name!r} disagree with their summary.json totals")
    return counts


def load_scores(
    run_id: str, name: str = "test", *, tracking_uri: str | None = None
) -> Scores | None:
    """The raw scores kept with ``imbalance/<name>/`` (for paired comparisons), or None.

    Returns None when the run kept no scores; raises when kept scores fail the manifest or the
    label digest.
    """
    name = _check_name(name)
    client = _client(tracking_uri)
    summary = _load_summary(client, run_id, name)
    info = summary.get("scores")
    if not info:
        return None
    entry = summary["files"][info["file"]]
    if int(entry.get("bytes", 0)) > _SCORES_MAX_BYTES:
        raise ValueError(f"run {run_id}: scores file of {entry['bytes']} bytes is too large")
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        data = _fetch_verified(client, run_id, name, summary, info["file"], tmp)
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        y = np.asarray(npz["y_true"], dtype=bool)
        s = np.asarray(npz["y_score"], dtype=np.float64)
        w = np.asarray(npz["sample_weight"], dtype=np.float64) if "sample_weight" in npz else None
    if summary.get("y_true_digest") and labels_digest(y, w) != summary["y_true_digest"]:
        raise ValueError(f"run {run_id}: kept labels of {name!r} do not match y_true_digest")
    return Scores(y, s, w)


def list_counts(run_id: str, *, tracking_uri: str | None = None) -> dict[str, dict[str, Any]]:
    """Names of the committed count sets of a run, each with its summary.

    Folders without a valid ``summary.json`` (an interrupted first upload, foreign files) are
    left out, with a log message.
    """
    client = _client(tracking_uri)
    out: dict[str, dict[str, Any]] = {}
    for name in _committed_names(client, run_id):
        try:
            out[name] = _load_summary(client, run_id, name)
        except (ValueError, OSError) as exc:
            logger.warning("run %s: ignoring counts %r: %s", run_id, name, exc)
    return out


# ------------------------------------------------------------------------------ autolog

_AUTOLOG_FUNCTIONS = (
    "roc_auc_score",
    "average_precision_score",
    "roc_curve",
    "precision_recall_curve",
    "det_curve",
)
_AUTOLOG_DISPLAYS = ("RocCurveDisplay", "PrecisionRecallDisplay")


@dataclasses.dataclass
class _AutologConfig:
    enabled: bool = False
    silent: bool = False
    log_figures: bool = True
    keep_scores: Any = "auto"
    prevalences: Any = None
    costs: Any = None
    max_captures_per_run: int = 20


_config = _AutologConfig()
_lock = threading.RLock()
_local = threading.local()
#: run id -> {capture digest: name}
_captures: dict[str, dict[str, str]] = {}
#: (id of owner, attribute name) -> (owner, attribute name, replaced object, our wrapper)
_patches: dict[tuple[int, str], tuple[Any, str, Any, Any]] = {}


def _warn(message: str) -> None:
    if _config.silent:
        logger.debug(message)
        return
    logger.warning(message)
    warnings.warn(message, UserWarning, stacklevel=4)


@contextmanager
def _reentry_guard() -> Iterator[bool]:
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    try:
        yield depth == 0
    finally:
        _local.depth = depth


_SCORE_ARGS = ("y_score", "probas_pred", "y_pred", "y_score_pred")


def _extract(fn: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """``y_true``, ``y_score``, ``sample_weight``, ``pos_label`` of a metric/Display call."""
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    except TypeError:
        return None
    a = dict(bound.arguments)
    a.pop("cls", None)
    extra_kwargs = a.pop("kwargs", None) or {}
    a.update(extra_kwargs)
    y_true = a.get("y_true")
    y_score = None
    for key in _SCORE_ARGS:
        value = a.get(key)
        if value is not None and not (isinstance(value, str) and value == "deprecated"):
            y_score = value
            break
    if y_true is None or y_score is None:
        return None
    return {
        "y_true": y_true,
        "y_score": y_score,
        "sample_weight": a.get("sample_weight"),
        "pos_label": a.get("pos_label"),
    }


def _inside_mlflow_sklearn_training() -> bool:
    """True inside a fit patched by ``mlflow.sklearn.autolog`` (its own training metrics)."""
    import sys

    if "mlflow.sklearn" not in sys.modules:
        return False
    try:
        from mlflow.sklearn import _SklearnTrainingSession

        return bool(_SklearnTrainingSession.is_active())
    except Exception:  # pragma: no cover - MLflow internals moved
        return False


def _capture(source: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Log one captured call; every failure becomes a warning (never reaches the user)."""
    import mlflow

    try:
        run = mlflow.active_run()
        if run is None or _inside_mlflow_sklearn_training():
            return
        info = _extract(fn, args, kwargs)
        if info is None:
            logger.debug("autolog: %s call without y_true/y_score; skipped", source)
            return
        y = as_1d_array(info["y_true"], "y_true")
        s_raw = np.asarray(
            info["y_score"].to_numpy() if hasattr(info["y_score"], "to_numpy") else info["y_score"]
        )
        if s_raw.ndim != 1 and not (s_raw.ndim == 2 and 1 in s_raw.shape):
            logger.debug(
                "autolog: %s with %d-d scores (multiclass/multilabel); skipped", source, s_raw.ndim
            )
            return
        labels = np.unique(y)
        if labels.size != 2:
            logger.debug("autolog: %s with %d classes; skipped", source, labels.size)
            return
        pos_label = info["pos_label"]
        if pos_label is None or not np.any(labels == pos_label):
            pos_label = (
                None
                if labels.dtype.kind in "biuf" and set(labels.tolist()) <= {-1, 0, 1}
                else labels[-1]
            )
        s = check_scores(s_raw.reshape(-1), "y_score")
        check_same_length([y, s], ["y_true", "y_score"])
        is_pos = binarize_labels(y, pos_label, name="y_true")
        w = check_weights(info["sample_weight"], y.size)
        digest = hashlib.sha256(
            (labels_digest(is_pos, w) + scores_digest(s)).encode("ascii")
        ).hexdigest()
        run_id = run.info.run_id
        with _lock:
            seen = _captures.setdefault(run_id, {})
            if digest in seen:
                logger.debug("autolog: %s repeats capture %r; skipped", source, seen[digest])
                return
            if len(seen) >= _config.max_captures_per_run:
                _warn(
                    f"mlflow-imbalance autolog: run {run_id} already has "
                    f"{len(seen)} captures (max_captures_per_run); {source} not logged"
                )
                return
            n = len(seen) + 1
            name = "autolog" if n == 1 else f"autolog_{n}"
            seen[digest] = name
        try:
            log_scores(
                is_pos,
                s,
                name=name,
                sample_weight=w,
                run_id=run_id,
                prevalences=_config.prevalences,
                costs=_config.costs,
                keep_scores=_config.keep_scores,
                log_figures=_config.log_figures,
                extra_summary={"source": "autolog", "captured_from": source},
            )
        except BaseException:
            with _lock:
                _captures.get(run_id, {}).pop(digest, None)
            raise
    except Exception as exc:
        _warn(f"mlflow-imbalance autolog: could not log scores from {source}: {exc!r}")


def _make_function_wrapper(original: Callable[..., Any], source: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _reentry_guard() as outermost:
            result = original(*args, **kwargs)
            if outermost and _config.enabled and wrapper._mlflow_imbalance_active:
                _capture(source, original, args, kwargs)
        return result

    wrapper._mlflow_imbalance_active = True  # type: ignore[attr-defined]
    wrapper._mlflow_imbalance_original = original  # type: ignore[attr-defined]
    return wrapper


def _make_classmethod_wrapper(cls: type, attr: str, source: str) -> Any:
    original = cls.__dict__[attr]  # the classmethod object
    func = original.__func__

    @functools.wraps(func)
    def wrapper(klass: type, *args: Any, **kwargs: Any) -> Any:
        # from_estimator computes the scores and hands them to cls.from_predictions: it does
        # not capture itself but lets that nested call capture, under its own name.
        delegated = getattr(_local, "delegate", None)
        with _reentry_guard() as outermost:
            if attr == "from_estimator":
                if not outermost:
                    return func(klass, *args, **kwargs)
                _local.delegate = source
                try:
                    return func(klass, *args, **kwargs)
                finally:
                    _local.delegate = None
            if delegated is not None:
                _local.delegate = None  # consumed by this call only
            result = func(klass, *args, **kwargs)
            if (
                (outermost or delegated is not None)
                and _config.enabled
                and wrapper._mlflow_imbalance_active
            ):
                _capture(delegated or source, func, (klass, *args), kwargs)
        return result

    wrapper._mlflow_imbalance_active = True  # type: ignore[attr-defined]
    return classmethod(wrapper), wrapper, original


def _wrapper_of(obj: Any) -> Any:
    inner = obj.__func__ if isinstance(obj, classmethod) else obj
    return inner if hasattr(inner, "_mlflow_imbalance_active") else None


def _patch_estimator_displays(sk_metrics: Any) -> None:
    for cls_name in _AUTOLOG_DISPLAYS:
        cls = getattr(sk_metrics, cls_name, None)
        if cls is None:
            continue
        # from_estimator calls cls.from_predictions, so one patch captures both
        # (the re-entry guard keeps the capture single).
        for attr in ("from_predictions", "from_estimator"):
            key = (id(cls), attr)
            current = cls.__dict__.get(attr)
            if current is None or not isinstance(current, classmethod):
                continue
            existing = _wrapper_of(current)
            if existing is not None:
                existing._mlflow_imbalance_active = True
                continue
            new, inner, original = _make_classmethod_wrapper(cls, attr, f"{cls_name}.{attr}")
            setattr(cls, attr, new)
            _patches[key] = (cls, attr, original, inner)


def _patch() -> None:
    import sklearn.metrics as sk_metrics

    for fname in _AUTOLOG_FUNCTIONS:
        current = getattr(sk_metrics, fname, None)
        if current is None:
            continue
        existing = _find_our_wrapper(current)
        if existing is not None:
            existing._mlflow_imbalance_active = True
            continue
        wrapper = _make_function_wrapper(current, f"sklearn.metrics.{fname}")
        setattr(sk_metrics, fname, wrapper)
        _patches[(id(sk_metrics), fname)] = (sk_metrics, fname, current, wrapper)
    _patch_estimator_displays(sk_metrics)


def _find_our_wrapper(fn: Any) -> Any:
    """Our wrapper, also when another patcher (mlflow.sklearn.autolog) wrapped it since."""
    seen = 0
    while fn is not None and seen < 10:
        if hasattr(fn, "_mlflow_imbalance_active"):
            return fn
        fn = getattr(fn, "__wrapped__", None)
        seen += 1
    return None


def _unpatch() -> None:
    for key, (owner, attr, original, wrapper) in list(_patches.items()):
        current = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr)
        if current is wrapper or _wrapper_of(current) is wrapper:
            setattr(owner, attr, original)
            del _patches[key]
        else:
            # someone (e.g. mlflow.sklearn.autolog) patched on top of us: removing our wrapper
            # would remove theirs too, so leave it in place but inactive.
            wrapper._mlflow_imbalance_active = False


def autolog(
    disable: bool = False,
    silent: bool = False,
    *,
    log_figures: bool = True,
    keep_scores: bool | int | str = "auto",
    prevalences: Any = None,
    costs: Any = None,
    max_captures_per_run: int = 20,
) -> None:
    """Capture binary scores passed to scikit-learn's ranking metrics inside an active run.

    While enabled, calls of ``sklearn.metrics.roc_auc_score``, ``average_precision_score``,
    ``roc_curve``, ``precision_recall_curve``, ``det_curve`` and of
    ``RocCurveDisplay``/``PrecisionRecallDisplay`` ``.from_predictions``/``.from_estimator``
    made inside an active MLflow run are logged with :func:`log_scores` at capture time, under
    ``autolog``, ``autolog_2``, ... (identical captures — same labels, scores and weights — are
    logged once per run). Multiclass/multilabel calls and calls outside a run are ignored. The
    user's call always returns sklearn's own result; a logging failure (bad data, unreachable
    server) becomes a warning (a debug log when ``silent``).

    Limitation: functions are patched as attributes of ``sklearn.metrics`` (as
    ``mlflow.sklearn.autolog`` does), so a name bound with ``from sklearn.metrics import
    roc_auc_score`` *before* ``autolog()`` keeps the unpatched function; call ``autolog()``
    first or call through the module (``metrics.roc_auc_score``). The Display classmethods are
    patched on the classes themselves and are captured however they were imported.

    Works alongside ``mlflow.sklearn.autolog()`` in either order; the metric calls it makes for
    its own training metrics inside a patched ``fit`` are not captured (training-set scores).

    Args:
        disable: True removes the patches (or deactivates them when another library has
            wrapped them since).
        silent: suppress warnings and info logs from autologging.
        log_figures: render figures for captured scores (costs most of the logging time).
        keep_scores: passed to :func:`log_scores`.
        prevalences: passed to :func:`log_scores`.
        costs: passed to :func:`log_scores`.
        max_captures_per_run: most distinct captures logged per run.
    """
    with _lock:
        if disable:
            _config.enabled = False
            _config.silent = silent
            _unpatch()
            return
        # validate now, so bad options fail at autolog() and not silently at capture time
        _check_prevalences(prevalences)
        _check_costs(costs)
        _resolve_keep_scores(keep_scores, 0)
        if int(max_captures_per_run) < 1:
            raise ValueError(f"max_captures_per_run must be >= 1, got {max_captures_per_run!r}")
        _config.enabled = True
        _config.silent = silent
        _config.log_figures = log_figures
        _config.keep_scores = keep_scores
        _config.prevalences = prevalences
        _config.costs = costs
        _config.max_captures_per_run = int(max_captures_per_run)
        try:
            _patch()
        except ImportError:
            _warn("mlflow-imbalance autolog: scikit-learn is not installed; nothing to patch")
            return
        if not silent:
            logger.info("mlflow-imbalance autologging enabled for scikit-learn ranking metrics")


# ------------------------------------------------------------------------------ callbacks


def _log_safely(
    y_true: Any, y_score: Any, *, source: str, strict: bool = False, **kwargs: Any
) -> LoggedCounts | None:
    """:func:`log_scores` for training callbacks and plugins: failures warn, never raise.

    A failure (bad validation data, unreachable tracking server, ...) is logged and warned about
    and None is returned, so the user's training finishes; ``strict=True`` re-raises instead.
    """
    try:
        return log_scores(y_true, y_score, **kwargs)
    except Exception as exc:
        if strict:
            raise
        message = f"mlflow-imbalance {source}: could not log scores: {exc!r}"
        logger.warning(message)
        warnings.warn(message, UserWarning, stacklevel=3)
        return None
