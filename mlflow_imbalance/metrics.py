"""Metrics of ROC counts at any prevalence η: the public ``mlflow_imbalance.metrics`` namespace.

Point and curve metrics live in :mod:`mlflow_imbalance.core.metrics`; hull, dominance, cost
curves, B-ROC, P³ and prevalence sweeps in :mod:`mlflow_imbalance.core.curves`. This module
re-exports both so ``from mlflow_imbalance import metrics`` keeps one flat namespace.
"""

from __future__ import annotations

from mlflow_imbalance.core import curves as _curves
from mlflow_imbalance.core import metrics as _metrics
from mlflow_imbalance.core.curves import *  # noqa: F403
from mlflow_imbalance.core.metrics import *  # noqa: F403

__all__ = sorted([*_metrics.__all__, *_curves.__all__])
