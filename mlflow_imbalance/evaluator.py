"""Old import path of the evaluator plugin: see :mod:`mlflow_imbalance.tracking.evaluator`."""

from mlflow_imbalance.tracking.evaluator import ImbalanceEvaluator

__all__ = ["ImbalanceEvaluator"]
