"""The ``imbalance`` MLflow model evaluator (entry point group ``mlflow.model_evaluator``).

``mlflow.models.evaluate(model, data, targets="label", model_type="classifier",
evaluators=["default", "imbalance"])`` logs the ROC counts of the model's positive-class scores
with :func:`mlflow_imbalance.log_scores` (same artifacts and metrics). MLflow also runs every
registered evaluator when ``evaluators=None``; therefore this evaluator **never raises** by
default: anything it cannot handle (multiclass targets, a model without scores, a broken
store) becomes a warning and the default evaluator's results are untouched. Set
``evaluator_config={"imbalance": {"strict": True}}`` to get the errors instead.

Configuration keys (``evaluator_config["imbalance"]``, or the flat config when
``evaluators=None``): ``name`` (default ``"test"``), ``prevalences``, ``costs``,
``keep_scores``, ``log_figures``, ``n_bootstrap`` (count-bootstrap replicates for the AP /
PR-AUC / max-F1 headline intervals; 0 turns them off, default 200), ``seed`` (the bootstrap's
seed, recorded in ``summary.json``; None draws a fresh one), ``pos_label`` (shared with MLflow's
classifier evaluator), ``score_column`` (a column of a static dataset holding the scores),
``strict``. All but the last three are passed to :func:`mlflow_imbalance.log_scores` unchanged.

Scores: ``predict_proba`` of the underlying model (the column of the positive class, located
with the model's ``classes_`` when it has them, else the sorted labels), else the model's
``predict`` output when it is continuous. For a static dataset (``model=None``): the
``score_column`` when configured, else the ``predictions`` column (MLflow's classifier evaluator
wants hard labels there, so keep the scores in their own column and name it). Hard 0/1
predictions give one threshold only; that is logged, with a warning.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

from mlflow_imbalance.tracking.log import log_scores

logger = logging.getLogger(__name__)

__all__ = ["ImbalanceEvaluator"]

_CONFIG_KEYS = (
    "name",
    "prevalences",
    "costs",
    "keep_scores",
    "log_figures",
    "n_bootstrap",
    "seed",
)


def _warn(message: str) -> None:
    logger.warning(message)
    warnings.warn(message, UserWarning, stacklevel=3)


class ImbalanceEvaluator(ModelEvaluator):
    """Logs ROC counts, prevalence-aware metrics, figures and a card for binary classifiers."""

    name = "imbalance"

    @classmethod
    def can_evaluate(cls, *, model_type: Any, evaluator_config: Any, **kwargs: Any) -> bool:
        """True for ``model_type="classifier"``; never raises."""
        try:
            return model_type == "classifier"
        except Exception:  # pragma: no cover - defensive: a comparison that raises
            return False

    def evaluate(
        self,
        *,
        model_type: Any,
        dataset: Any,
        run_id: str,
        evaluator_config: Any,
        model: Any = None,
        extra_metrics: Any = None,
        custom_artifacts: Any = None,
        predictions: Any = None,
        **kwargs: Any,
    ) -> EvaluationResult | None:
        """Log the counts of the model's scores on ``dataset`` into ``run_id``.

        Returns:
            An ``EvaluationResult`` holding the headline metrics, or None when nothing was
            logged (a warning says why) — MLflow merges None as "no result".
        """
        config = evaluator_config if isinstance(evaluator_config, dict) else {}
        strict = bool(config.get("strict", False))
        try:
            return self._evaluate(dataset, run_id, config, model, predictions)
        except Exception as exc:
            if strict:
                raise
            _warn(f"mlflow-imbalance evaluator skipped: {exc}")
            return None

    def _evaluate(
        self, dataset: Any, run_id: str, config: dict, model: Any, predictions: Any
    ) -> EvaluationResult | None:
        y_true = dataset.labels_data
        if y_true is None:
            _warn("mlflow-imbalance evaluator skipped: the dataset has no targets")
            return None
        y = np.asarray(y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true).reshape(-1)
        labels = np.unique(y)
        if labels.size != 2:
            _warn(
                f"mlflow-imbalance evaluator skipped: targets have {labels.size} classes; "
                "ROC counts need a binary target"
            )
            return None
        pos_label = config.get("pos_label")
        if pos_label is None or not np.any(labels == pos_label):
            pos_label = labels[-1]  # MLflow's classifier evaluator: the larger label
        column = config.get("score_column")
        if column is not None:
            features = dataset.features_data
            if not hasattr(features, "columns") or column not in features.columns:
                raise ValueError(f"score_column {column!r} is not a column of the data")
            scores = features[column].to_numpy()
        else:
            scores = self._scores(dataset, model, labels, pos_label)
        if scores is None:
            return None
        if np.unique(scores).size <= 2:
            _warn(
                "mlflow-imbalance evaluator: the model gives hard predictions (at most two "
                "distinct scores); the ROC has a single operating point"
            )
        kwargs = {k: config[k] for k in _CONFIG_KEYS if k in config}
        logged = log_scores(y, scores, pos_label=pos_label, run_id=run_id, **kwargs)
        return EvaluationResult(metrics=dict(logged.metrics), artifacts={}, run_id=run_id)

    @staticmethod
    def _scores(dataset: Any, model: Any, labels: np.ndarray, pos_label: Any) -> Any:
        if model is None:
            preds = dataset.predictions_data
            if preds is None:
                _warn("mlflow-imbalance evaluator skipped: neither a model nor predictions")
                return None
            return np.asarray(preds.to_numpy() if hasattr(preds, "to_numpy") else preds)
        import pandas as pd

        features = dataset.features_data
        X = pd.DataFrame(features)
        names = getattr(dataset, "feature_names", None)
        if names is not None and len(names) == X.shape[1]:
            X = X.rename(columns=dict(zip(X.columns, names, strict=True)))
        raw = _raw_model(model)
        proba = getattr(raw, "predict_proba", None) if raw is not None else None
        if proba is not None:
            out = np.asarray(proba(X))
            if out.ndim == 2 and out.shape[1] == 2:
                classes = getattr(raw, "classes_", None)
                order = np.asarray(classes) if classes is not None else labels
                col = np.flatnonzero(order == pos_label)
                return out[:, int(col[0]) if col.size else 1]
            if out.ndim == 1 or (out.ndim == 2 and out.shape[1] == 1):
                return out.reshape(-1)
            _warn(f"mlflow-imbalance evaluator skipped: predict_proba gave shape {out.shape}")
            return None
        out = model.predict(X)
        out = np.asarray(out.to_numpy() if hasattr(out, "to_numpy") else out)
        if out.ndim == 2 and out.shape[1] == 1:
            out = out.reshape(-1)
        if out.ndim != 1 or out.dtype.kind not in "biuf":
            _warn(
                "mlflow-imbalance evaluator skipped: the model has no predict_proba and its "
                f"predict output (dtype {out.dtype}, shape {out.shape}) is not a score"
            )
            return None
        return out


def _raw_model(model: Any) -> Any:
    """The underlying flavor model of a pyfunc model, when MLflow can give it (else None)."""
    try:
        from mlflow.models.evaluation.default_evaluator import _extract_raw_model
    except ImportError:  # pragma: no cover - MLflow moved it
        _extract_raw_model = None
    if _extract_raw_model is not None:
        try:
            return _extract_raw_model(model)[1]
        except Exception:  # pragma: no cover - odd pyfunc wrappers
            pass
    try:
        return model.unwrap_python_model()
    except Exception:
        return None
