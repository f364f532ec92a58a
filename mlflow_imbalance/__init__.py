"""mlflow-imbalance: evaluate binary classifiers on imbalanced data at any class prevalence.

The ROC counts of a run do not depend on the class prevalence of its test set; every
prevalence-dependent metric (precision, F1, PR curves, AP, PR-AUC, expected cost, B-ROC) is an
exact function of them. This package stores the counts as MLflow run artifacts and recomputes
everything at the prevalence a model will really meet (Brabec et al. 2020).

Heavy modules (MLflow glue, plotting, the report) are imported lazily, so ``import
mlflow_imbalance`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from mlflow_imbalance._version import __version__
from mlflow_imbalance.core.counts import CountsAccumulator, RocCounts, merge_counts

_LAZY = {
    "log_scores": "mlflow_imbalance.tracking",
    "log_counts": "mlflow_imbalance.tracking",
    "load_counts": "mlflow_imbalance.tracking",
    "load_summary": "mlflow_imbalance.tracking",
    "load_scores": "mlflow_imbalance.tracking",
    "list_counts": "mlflow_imbalance.tracking",
    "autolog": "mlflow_imbalance.tracking",
    "flush": "mlflow_imbalance.tracking",
    "log_production_scores": "mlflow_imbalance.tracking",
    "load_production_counts": "mlflow_imbalance.tracking",
    "list_production_batches": "mlflow_imbalance.tracking",
    "plan_audit": "mlflow_imbalance.tracking",
    "log_audit_labels": "mlflow_imbalance.tracking",
    "load_audit": "mlflow_imbalance.tracking",
    "load_audit_plan": "mlflow_imbalance.tracking",
    "AuditEstimate": "mlflow_imbalance.stats.audit",
    "ScoreCounts": "mlflow_imbalance.core.production",
    "merge_score_counts": "mlflow_imbalance.core.production",
    "estimate_prevalence": "mlflow_imbalance.stats.prevalence",
    "PrevalenceEstimate": "mlflow_imbalance.stats.prevalence",
    "build_report": "mlflow_imbalance.report.build",
    "Report": "mlflow_imbalance.report.model",
    "register_decision": "mlflow_imbalance.deploy",
    "check_decision": "mlflow_imbalance.deploy",
    "DecisionCheck": "mlflow_imbalance.deploy",
    "metrics": "mlflow_imbalance.metrics",
    "uncertainty": "mlflow_imbalance.uncertainty",
    "ranking": "mlflow_imbalance.ranking",
    "synthetic": "mlflow_imbalance.synthetic",
    "plots": "mlflow_imbalance.plots",
    "artifacts": "mlflow_imbalance.artifacts",
}

__all__ = [
    "CountsAccumulator",
    "RocCounts",
    "__version__",
    "merge_counts",
    *sorted(_LAZY),
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mlflow_imbalance' has no attribute {name!r}")
    mod = importlib.import_module(module)
    value = mod if module.endswith("." + name) else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
