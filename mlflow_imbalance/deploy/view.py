"""The registered decision as the report shows it (``mlflow-imbalance report --model``).

:func:`read_decision` returns plain values (no recomputation: the record's tags, its compared
runs and the recorded checks); the report's ``_decision.html.j2`` renders them (autoescaped).
"""

from __future__ import annotations

import logging
from typing import Any

from mlflow_imbalance.deploy import _registry
from mlflow_imbalance.deploy.check import read_checks
from mlflow_imbalance.tracking._store import bounded_store
from mlflow_imbalance.tracking.load import _no_mlflow_progress_bar

logger = logging.getLogger(__name__)

__all__ = ["read_decision"]


def _g(x: Any) -> str:
    return "" if x is None else f"{float(x):.4g}"


def read_decision(model: str, *, tracking_uri: str | None = None) -> dict[str, Any]:
    """The decision registered as ``model`` (``fraud@champion``, ``models:/fraud/3``).

    Returns:
        ``{"model", "name", "version", "run", "run_id", "threshold", "response", "eta",
        "eta_low", "eta_high", "source", "batch", "criterion", "cost_fp", "cost_fn", "regret",
        "tolerance", "created_at", "compared": [{"name", "run_id"}], "compared_ids",
        "checks": [check dicts, batch order], "latest": {"status", "reason", "time"} or None}``
        (numbers as the record holds them; ``*_text`` keys formatted for display).

    Raises:
        ValueError: an unusable URI, an unknown model or alias, a version without a decision.
    """
    uri = _registry.usable_uri(tracking_uri, must_exist=True)
    with bounded_store(uri), _no_mlflow_progress_bar():
        c = _registry.client(uri)
        mv = _registry.model_version(c, model)
        rec = _registry.read_record(c, mv)
        checks = read_checks(c, rec)
    tags = dict(mv.tags or {})
    latest = None
    if tags.get("mlflow_imbalance.check.status"):
        latest = {
            k: tags.get(f"mlflow_imbalance.check.{k}", "") for k in ("status", "reason", "time")
        }
    costs = (
        f"C_FP = {rec.cost_fp:g}, C_FN = {rec.cost_fn:g}"
        if rec.has_costs
        else (rec.criterion or "no costs")
    )
    return {
        "model": _registry.version_label(mv),
        "asked": model,
        "name": mv.name,
        "version": str(mv.version),
        "run": rec.run,
        "run_id": rec.run_id,
        "threshold": rec.threshold,
        "threshold_text": repr(float(rec.threshold)),
        "response": rec.response,
        "eta": rec.prevalence,
        "eta_low": rec.prevalence_low,
        "eta_high": rec.prevalence_high,
        "eta_text": _g(rec.prevalence)
        + (
            ""
            if rec.prevalence_low == rec.prevalence_high
            else f" [{_g(rec.prevalence_low)}, {_g(rec.prevalence_high)}]"
        ),
        "source": rec.source,
        "batch": rec.batch,
        "criterion": rec.criterion,
        "cost_fp": rec.cost_fp,
        "cost_fn": rec.cost_fn,
        "costs_text": costs,
        "regret": rec.regret,
        "regret_text": _g(rec.regret) or "n/a",
        "tolerance": rec.tolerance,
        "tolerance_text": _g(rec.tolerance) or "n/a",
        "created_at": rec.created_at,
        "compared": [dict(x) for x in rec.compared],
        "compared_ids": [x.get("run_id") for x in rec.compared if x.get("run_id")],
        "checks": [
            {
                **chk,
                "eta_text": ""
                if chk.get("eta") is None
                else f"{_g(chk['eta'])} [{_g(chk.get('eta_low'))}, {_g(chk.get('eta_high'))}]",
                "regret_text": _g(chk.get("regret")) or "n/a",
            }
            for chk in checks
        ],
        "latest": latest,
    }
