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

One unit per number: a key's name says what its value is, in the unit the report, the CLI's
verdict, the run card and ``summary.json`` show it. Thresholds say which rule chose them
(``max_f1_threshold``, ``cost_threshold``); the expected cost is per
:func:`~mlflow_imbalance.stats.decision.per_cases` cases and says so
(``min_cost_per_10k``, ``min_cost_per_1m``).

Every single-valued key that names no η holds the value at the test prevalence. The
across-prevalence series have keys of their own, ``imb/<metric>_sweep <name>`` (e.g.
``imb/ap_sweep test``): steps ``0 … SWEEP_POINTS-1`` walk the prevalence grid upwards, nothing
else, so MLflow's default chart (x = step) draws a plain curve; ``imb/log10_eta <name>`` holds
log10 η at the same steps. Choosing that metric as the charts' x axis (chart view → the gear
"Configure charts" → X-axis → Metric) draws every run's curve over prevalence, overlaid.

Constants of the set (class totals, test prevalence) are **tags** ``imb/<what> <name>``, not
metrics: they would lead the chart view with identical bars, and params cannot change when a set
is re-logged.
"""

from __future__ import annotations

import math
from typing import Any

from mlflow_imbalance.stats.decision import per_cases

__all__ = [
    "METRIC_PREFIX",
    "SWEEP_METRICS",
    "SWEEP_SUFFIX",
    "X_AXIS_METRIC",
    "constant_tags",
    "cost_metric",
    "eta_label",
    "flat_metrics",
    "metric_key",
    "parse_metric_key",
    "run_view_path",
    "run_view_url",
    "runs_view_url",
    "sweep_key",
    "sweep_metrics",
    "tag_key",
]

#: Section prefix of every metric and tag key (the UI's chart view groups charts by it).
METRIC_PREFIX = "imb/"
#: The metric holding log10 η at every step of the across-prevalence series (the x axis).
X_AXIS_METRIC = "log10_eta"
#: Appended to a metric's stem for its across-prevalence series: ``imb/ap_sweep test``.
SWEEP_SUFFIX = "_sweep"
#: Across-prevalence series: metric stem -> column of the summary's ``sweep`` rows. The series
#: key is the stem plus :data:`SWEEP_SUFFIX`. ``precision_op`` and ``f1_op`` keep one operating
#: point fixed (the max-F1 threshold at the test prevalence, metric ``imb/max_f1_threshold
#: <name>``); the others re-optimise the threshold at every η.
SWEEP_METRICS: dict[str, str] = {
    "ap": "ap",
    "pr_auc": "pr_auc",
    "max_f1": "max_f1",
    "prec_f1": "precision_at_max_f1",
    "precision_op": "precision",
    "f1_op": "f1",
}
#: Short forms of :func:`~mlflow_imbalance.stats.decision.per_cases` in metric names.
_PER_CASES_LABELS = {10_000: "10k", 1_000_000: "1m"}


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


def sweep_key(name: str, stem: str) -> str:
    """The key of a metric's across-prevalence series: ``imb/<stem>_sweep <name>``."""
    return metric_key(name, stem + SWEEP_SUFFIX)


def cost_metric(prevalence: float) -> str:
    """The stem of the expected-cost key at η: ``min_cost_per_10k`` or ``min_cost_per_1m``.

    The value is the lowest expected cost per :func:`~mlflow_imbalance.stats.decision.per_cases`
    cases (10,000 when η ≥ 1e-3, else 1,000,000), the unit of the report's verdict and the card.
    """
    per = per_cases(prevalence)
    return f"min_cost_per_{_PER_CASES_LABELS.get(per, str(per))}"


def flat_metrics(name: str, headline: dict[str, Any]) -> dict[str, float]:
    """The single-valued metrics of a set, from its ``summary.json`` headline.

    Per row of ``headline["at_prevalence"]`` (no η in the key for the test prevalence, else
    that η): ``ap``, ``pr_auc``, ``max_f1``, ``prec_f1`` (precision at the max-F1 threshold),
    ``max_f1_threshold``; with costs ``min_cost_per_10k`` / ``min_cost_per_1m``
    (:func:`cost_metric`: the lowest expected cost per that many cases, ``min_cost.
    expected_cost_per_cases`` of the summary), ``cost_threshold`` (the lowest-cost
    threshold, ``min_cost.threshold``) and ``prec_cost`` (precision at η there), the last two
    left out when flagging nothing is cheapest (threshold +inf). At the test prevalence also
    ``roc_auc``, and ``tpr_at_fpr_<α>`` per false-positive budget. Non-finite values are left
    out.
    """
    flat: dict[str, float] = {metric_key(name, "roc_auc"): headline["roc_auc"]["value"]}
    for row in headline["at_prevalence"]:
        eta = None if row["is_test_prevalence"] else row["prevalence"]
        flat[metric_key(name, "ap", eta)] = row["ap"]["value"]
        flat[metric_key(name, "pr_auc", eta)] = row["pr_auc"]["value"]
        flat[metric_key(name, "max_f1", eta)] = row["max_f1"]["value"]
        flat[metric_key(name, "prec_f1", eta)] = row["precision_at_max_f1"]["value"]
        flat[metric_key(name, "max_f1_threshold", eta)] = row["max_f1_threshold"]
        mc = row.get("min_cost")
        if mc:
            flat[metric_key(name, cost_metric(row["prevalence"]), eta)] = mc[
                "expected_cost_per_cases"
            ]
            flat[metric_key(name, "cost_threshold", eta)] = mc["threshold"]
            if "precision" in mc:
                flat[metric_key(name, "prec_cost", eta)] = mc["precision"]["value"]
    for budget in headline["tpr_at_fpr"]:
        flat[metric_key(name, f"tpr_at_fpr_{eta_label(budget['max_fpr'])}")] = budget["tpr"][
            "value"
        ]
    return {k: float(v) for k, v in flat.items() if v is not None and math.isfinite(v)}


def sweep_metrics(name: str, series: list[dict[str, float]]) -> list[tuple[str, float, int]]:
    """The across-prevalence series as ``(key, value, step)``: the grid in ascending η.

    Steps ``0 … len(series)-1`` only (no closing test-prevalence step, which drew a hook back
    to the start on MLflow's default step axis): :func:`sweep_key` per
    :data:`SWEEP_METRICS` stem, and ``imb/log10_eta <name>`` at the same steps.
    """
    rows = sorted(series, key=lambda r: r["prevalence"])
    out: list[tuple[str, float, int]] = []
    x_key = metric_key(name, X_AXIS_METRIC)
    for step, row in enumerate(rows):
        out.append((x_key, math.log10(row["prevalence"]), step))
        for stem, column in SWEEP_METRICS.items():
            value = row[column]
            if value is not None and math.isfinite(value):
                out.append((sweep_key(name, stem), float(value), step))
    return out


def constant_tags(name: str, summary: dict[str, Any]) -> dict[str, str]:
    """Tags holding the set's constants, as strings: ``n_pos``, ``n_neg``, ``test_prevalence``.

    (Before issue 29 a tag ``operating_threshold`` held the max-F1 threshold at the test
    prevalence; it is the metric ``imb/max_f1_threshold <name>`` now.)
    """

    def num(v: float) -> str:
        return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else f"{float(v):.6g}"

    return {
        tag_key(name, "n_pos"): num(summary["n_pos"]),
        tag_key(name, "n_neg"): num(summary["n_neg"]),
        tag_key(name, "test_prevalence"): repr(float(summary["test_prevalence"])),
    }


def runs_view_url(tracking_uri: str, experiment_id: str | int) -> str:
    """The MLflow UI page listing an experiment's runs (MLflow 3's classic-ML runs view).

    ``http://127.0.0.1:5000`` alone opens MLflow 3's GenAI overview; this opens
    ``#/experiments/<id>/runs?workflowType=machine_learning``. For a non-HTTP tracking URI
    (SQLite, a local folder) the UI of ``mlflow ui`` on its default address is assumed.
    """
    base = str(tracking_uri).rstrip("/")
    if not base.startswith(("http://", "https://")):
        base = "http://127.0.0.1:5000"
    return f"{base}/#/experiments/{experiment_id}/runs?{TRAINING_VIEW}"


#: The MLflow UI's query parameter that opens the classic model-training view (MLflow 3 picks the
#: GenAI view for an experiment it cannot classify, or from the browser's last choice).
TRAINING_VIEW = "workflowType=machine_learning"


def run_view_path(experiment_id: str | int, run_id: str, artifact: str | None = None) -> str:
    """The UI route of a run's page (or of one of its artifacts), in the training view.

    ``#/experiments/<id>/runs/<run>?workflowType=machine_learning``; with ``artifact``, the run's
    Artifacts tab with that file selected (``.../artifactPath/<artifact>``).
    """
    from urllib.parse import quote

    where = f"/artifactPath/{quote(artifact)}" if artifact else ""
    return f"#/experiments/{experiment_id}/runs/{run_id}{where}?{TRAINING_VIEW}"


def run_view_url(
    tracking_uri: str, experiment_id: str | int, run_id: str, artifact: str | None = None
) -> str:
    """:func:`run_view_path` on the tracking server (``mlflow ui``'s address when not HTTP)."""
    base = str(tracking_uri).rstrip("/")
    if not base.startswith(("http://", "https://")):
        base = "http://127.0.0.1:5000"
    return f"{base}/{run_view_path(experiment_id, run_id, artifact)}"
