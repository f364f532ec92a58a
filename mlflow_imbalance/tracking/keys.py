r"""How a logged counts set appears in MLflow's runs table and charts: metric keys, tags, URLs.

:mod:`mlflow_imbalance.tracking.headline` computes the numbers; this module names them. MLflow
metric, param and tag names allow only ``[/\w.\- :]`` (no ``@``, ``=``, ``+``; colons are refused
on Windows, so none are used here). The UI truncates long column headers and chart titles at the
end, so every key puts what tells it apart first:

``imb/<metric> [<η>] <name>``
    e.g. ``imb/ap 1e-4 test`` (AP at η = 10⁻⁴ on the set ``test``), ``imb/max_f1 test`` (no η:
    at the test set's own prevalence), ``imb/roc_auc test`` (does not depend on η). The section
    prefix ``imb/`` groups the charts in the UI's chart view; η is written compactly
    (:func:`eta_label`: ``1e-4``, ``2.5e-3``).

Every key that names no η holds, as its **latest** value (the one the runs table shows and sorts
by), the value at the test prevalence. The across-prevalence series are the history of those
same keys: steps ``0 … SWEEP_POINTS-1`` walk the prevalence grid upwards and the last step is the
test prevalence again, and ``imb/log10_eta <name>`` holds log10 η at every step. Choosing that
metric as the charts' x axis (chart view → the gear "Configure charts" → X-axis → Metric) draws
every run's curve over prevalence, overlaid; MLflow sorts the points by the x metric, so the
closing test-prevalence step falls into place on the curve.

Constants of the set (class totals, test prevalence, the fixed operating threshold) are **tags**
``imb/<what> <name>``, not metrics: they would lead the chart view with identical bars, and
params cannot change when a set is re-logged.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "METRIC_PREFIX",
    "SWEEP_METRICS",
    "X_AXIS_METRIC",
    "constant_tags",
    "eta_label",
    "flat_metrics",
    "metric_key",
    "parse_metric_key",
    "runs_view_url",
    "sweep_metrics",
    "tag_key",
]

#: Section prefix of every metric and tag key (the UI's chart view groups charts by it).
METRIC_PREFIX = "imb/"
#: The metric holding log10 η at every step of the across-prevalence series (the x axis).
X_AXIS_METRIC = "log10_eta"
#: Across-prevalence series: metric key stem -> column of the summary's ``sweep`` rows.
#: ``precision_op`` and ``f1_op`` keep one operating point fixed (the max-F1 threshold at the
#: test prevalence); the others re-optimise the threshold at every η.
SWEEP_METRICS: dict[str, str] = {
    "ap": "ap",
    "pr_auc": "pr_auc",
    "max_f1": "max_f1",
    "prec_f1": "precision_at_max_f1",
    "precision_op": "precision",
    "f1_op": "f1",
}


def eta_label(eta: float) -> str:
    """A prevalence (or rate) as a metric-name component: ``1e-4``, ``2.5e-3``, ``0.5 -> 5e-1``.

    Four significant digits at most, trailing zeros dropped, no zero-padded exponent; only
    ``[0-9.e-]`` characters (no ``+``, which MLflow metric names do not allow: a value rounding
    to 1 gives ``1e0``).
    """
    mantissa, exponent = f"{float(eta):.3e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def metric_key(name: str, metric: str, prevalence: float | None = None) -> str:
    """The MLflow metric key ``imb/<metric> [<η>] <name>`` (no η: the test prevalence)."""
    middle = metric if prevalence is None else f"{metric} {eta_label(prevalence)}"
    return f"{METRIC_PREFIX}{middle} {name}"


def tag_key(name: str, what: str) -> str:
    """The MLflow tag key of a constant of the set: ``imb/<what> <name>``."""
    return f"{METRIC_PREFIX}{what} {name}"


def parse_metric_key(key: str) -> tuple[str, float | None, str] | None:
    """``(metric, η or None, name)`` of a key made by :func:`metric_key`; None for other keys."""
    if not key.startswith(METRIC_PREFIX):
        return None
    parts = key[len(METRIC_PREFIX) :].split(" ")
    if len(parts) == 2:
        return parts[0], None, parts[1]
    if len(parts) == 3:
        try:
            eta = float(parts[1])
        except ValueError:
            return None
        return parts[0], eta, parts[2]
    return None


def flat_metrics(name: str, headline: dict[str, Any]) -> dict[str, float]:
    """The single-valued metrics of a set, from its ``summary.json`` headline.

    At the test prevalence (no η in the key): ``roc_auc``; per prevalence of interest: ``ap``,
    ``pr_auc``, ``max_f1``, ``prec_f1`` (precision at the max-F1 threshold) and, with costs,
    ``min_cost`` (normalised expected cost at the optimal operating point);
    ``tpr_at_fpr_<α>`` per false-positive budget. The test-prevalence values of ``ap`` etc. are
    the last step of the series
    (:func:`sweep_metrics`) and are returned here too (the ``EvaluationResult`` of the
    evaluator carries them).
    """
    flat: dict[str, float] = {metric_key(name, "roc_auc"): headline["roc_auc"]["value"]}
    for row in headline["at_prevalence"]:
        eta = None if row["is_test_prevalence"] else row["prevalence"]
        flat[metric_key(name, "ap", eta)] = row["ap"]["value"]
        flat[metric_key(name, "pr_auc", eta)] = row["pr_auc"]["value"]
        flat[metric_key(name, "max_f1", eta)] = row["max_f1"]["value"]
        flat[metric_key(name, "prec_f1", eta)] = row["precision_at_max_f1"]["value"]
        if eta is not None and "min_cost" in row:
            flat[metric_key(name, "min_cost", eta)] = row["min_cost"]["normalized_expected_cost"]
    for budget in headline["tpr_at_fpr"]:
        flat[metric_key(name, f"tpr_at_fpr_{eta_label(budget['max_fpr'])}")] = budget["tpr"][
            "value"
        ]
    return flat


def sweep_metrics(
    name: str, series: list[dict[str, float]], headline: dict[str, Any], test_prevalence: float
) -> list[tuple[str, float, int]]:
    """The across-prevalence series as ``(key, value, step)``, the test prevalence last.

    Steps ``0 … len(series)-1`` are the grid in ascending η; step ``len(series)`` is the test
    prevalence, so each key's latest value is its value at the test prevalence (equal to the
    headline row 0: the fixed operating point *is* the max-F1 point there).
    """
    rows = sorted(series, key=lambda r: r["prevalence"])
    test_row = headline["at_prevalence"][0]
    last = {
        "ap": test_row["ap"]["value"],
        "pr_auc": test_row["pr_auc"]["value"],
        "max_f1": test_row["max_f1"]["value"],
        "precision_at_max_f1": test_row["precision_at_max_f1"]["value"],
        "precision": test_row["precision_at_max_f1"]["value"],
        "f1": test_row["max_f1"]["value"],
    }
    out: list[tuple[str, float, int]] = []
    x_key = metric_key(name, X_AXIS_METRIC)
    for step, row in enumerate([*rows, None]):
        eta = test_prevalence if row is None else row["prevalence"]
        out.append((x_key, math.log10(eta), step))
        for stem, column in SWEEP_METRICS.items():
            value = last[column] if row is None else row[column]
            if value is not None and math.isfinite(value):
                out.append((metric_key(name, stem), float(value), step))
    return out


def constant_tags(name: str, summary: dict[str, Any]) -> dict[str, str]:
    """Tags holding the set's constants, as strings.

    ``n_pos``, ``n_neg``, ``test_prevalence`` and ``operating_threshold`` (the max-F1 threshold
    at the test prevalence, the fixed operating point of ``precision_op`` / ``f1_op``).
    """

    def num(v: float) -> str:
        return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else f"{float(v):.6g}"

    op = summary["headline"].get("operating_point") or {}
    tags = {
        tag_key(name, "n_pos"): num(summary["n_pos"]),
        tag_key(name, "n_neg"): num(summary["n_neg"]),
        tag_key(name, "test_prevalence"): repr(float(summary["test_prevalence"])),
    }
    if "threshold" in op:  # repr: the shortest text that reads back as the same float
        tags[tag_key(name, "operating_threshold")] = repr(float(op["threshold"]))
    return tags


def runs_view_url(tracking_uri: str, experiment_id: str | int) -> str:
    """The MLflow UI page listing an experiment's runs (MLflow 3's classic-ML runs view).

    ``http://127.0.0.1:5000`` alone opens MLflow 3's GenAI overview; this opens
    ``#/experiments/<id>/runs?workflowType=machine_learning``. For a non-HTTP tracking URI
    (SQLite, a local folder) the UI of ``mlflow ui`` on its default address is assumed.
    """
    base = str(tracking_uri).rstrip("/")
    if not base.startswith(("http://", "https://")):
        base = "http://127.0.0.1:5000"
    return f"{base}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
