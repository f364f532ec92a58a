"""The ``imbalance`` MLflow model evaluator (entry point group ``mlflow.model_evaluator``).

``mlflow.models.evaluate(model, data, targets="label", model_type="classifier",
evaluators=["default", "imbalance"])`` logs the ROC counts of the model's positive-class scores
with :func:`mlflow_imbalance.log_scores` (same artifacts and metrics). MLflow also runs every
registered evaluator when ``evaluators=None``; therefore this evaluator **never raises** by
default: anything it cannot handle (multiclass targets, a model without scores, a broken
store) becomes a warning and the default evaluator's results are untouched. Set
``evaluator_config={"imbalance": {"strict": True}}`` to get the errors instead.

Configuration keys (``evaluator_config["imbalance"]``, or the flat config when
``evaluators=None``): ``name`` (default ``"test"``, as every entry point), ``prevalences``,
``costs`` (the old spellings ``prevalence``, ``cost_fp`` / ``cost_fn`` work with a
``FutureWarning``),
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
predictions give one threshold only: they are skipped (one short warning) unless the evaluator
was named explicitly (``evaluators=[..., "imbalance"]``), in which case they are logged with a
warning. A skip is at most one short ``UserWarning`` (never also a log record at warning level).
When the tracking server is unreachable, the evaluator gives up after one short probe.
"""

from __future__ import annotations

import logging
import sys
import warnings
from typing import Any

import numpy as np
from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

from mlflow_imbalance.tracking._checks import _renamed_options
from mlflow_imbalance.tracking._store import TrackingServerUnreachable, fail_fast_http
from mlflow_imbalance.tracking.log import log_scores

logger = logging.getLogger(__name__)

__all__ = ["ImbalanceEvaluator"]

_CONFIG_KEYS = (
    "name",
    "prevalences",
    "costs",
    "prevalence",  # old spellings: renamed with a FutureWarning (tracking._checks._RENAMED)
    "cost_fp",
    "cost_fn",
    "keep_scores",
    "log_figures",
    "n_bootstrap",
    "seed",
)


class _Skip(Exception):
    """The evaluator does not apply; the message is the one warning the user sees."""


def _warn(message: str) -> None:
    """The evaluator's one user-visible message (a UserWarning; the log gets it at debug)."""
    logger.debug(message)
    warnings.warn(message, UserWarning, stacklevel=3)


#: Config objects MLflow handed to ``can_evaluate`` while resolving ``evaluators=None`` (the
#: same object reaches ``evaluate``): those evaluations did not name us. Strong references, a
#: few at most, so an id can never be reused while listed.
_implicit_configs: list[Any] = []


def _note_implicit(evaluator_config: Any) -> None:
    """Remember the config when MLflow is resolving ``evaluators=None`` (called by can_evaluate)."""
    caller = sys._getframe(2)
    if caller is not None and caller.f_code.co_name == "resolve_evaluators_and_configs":
        _implicit_configs.append(evaluator_config)
        del _implicit_configs[:-8]


def _named_explicitly(evaluator_config: Any) -> bool:
    """Whether this evaluation named the evaluator (``evaluators=[..., "imbalance"]``).

    With ``evaluators=None`` MLflow asks every registered evaluator's ``can_evaluate`` while
    resolving them (:func:`_note_implicit` sees that call); named evaluators are not asked there.
    A direct call counts as named.
    """
    for i, config in enumerate(_implicit_configs):
        if config is evaluator_config:
            del _implicit_configs[i]
            return False
    return True


class ImbalanceEvaluator(ModelEvaluator):
    """Logs ROC counts, prevalence-aware metrics, figures and a card for binary classifiers."""

    name = "imbalance"

    @classmethod
    def can_evaluate(cls, *, model_type: Any, evaluator_config: Any, **kwargs: Any) -> bool:
        """True for ``model_type="classifier"``; never raises."""
        try:
            ok = bool(model_type == "classifier")
            if ok:
                _note_implicit(evaluator_config)
            return ok
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
        named = _named_explicitly(evaluator_config)
        try:
            return self._evaluate(dataset, run_id, config, model, predictions, named)
        except _Skip as skip:
            if strict:
                raise ValueError(str(skip)) from None
            _warn(f"mlflow-imbalance evaluator skipped: {skip}")
            return None
        except TrackingServerUnreachable as exc:
            if strict:
                raise
            _warn(f"mlflow-imbalance evaluator skipped: {exc.message}")
            return None
        except Exception as exc:
            if strict:
                raise
            _warn(f"mlflow-imbalance evaluator skipped: {str(exc)[:300]}")
            return None

    def _evaluate(
        self,
        dataset: Any,
        run_id: str,
        config: dict,
        model: Any,
        predictions: Any,
        named: bool = True,
    ) -> EvaluationResult | None:
        y_true = dataset.labels_data
        if y_true is None:
            raise _Skip("the dataset has no targets")
        y = np.asarray(y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true).reshape(-1)
        labels = np.unique(y)
        if labels.size != 2:
            raise _Skip(f"targets have {labels.size} classes; ROC counts need a binary target")
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
        if np.unique(scores).size <= 2 and not named:
            raise _Skip(
                "the predictions are hard labels (at most two distinct values), not scores; "
                'name the evaluator (evaluators=[..., "imbalance"]) to log them anyway'
            )
        kwargs = {k: config[k] for k in _CONFIG_KEYS if k in config}
        kwargs = _renamed_options(kwargs, "evaluator_config['imbalance']", stacklevel=2)
        with fail_fast_http():  # a server dying mid-upload costs seconds, not minutes
            logged = log_scores(y, scores, pos_label=pos_label, run_id=run_id, **kwargs)
        return EvaluationResult(metrics=dict(logged.metrics), artifacts={}, run_id=run_id)

    @staticmethod
    def _scores(dataset: Any, model: Any, labels: np.ndarray, pos_label: Any) -> Any:
        if model is None:
            preds = dataset.predictions_data
            if preds is None:
                raise _Skip("neither a model nor predictions")
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
            raise _Skip(f"predict_proba gave shape {out.shape}; a binary score is needed")
        out = model.predict(X)
        out = np.asarray(out.to_numpy() if hasattr(out, "to_numpy") else out)
        if out.ndim == 2 and out.shape[1] == 1:
            out = out.reshape(-1)
        if out.ndim != 1 or out.dtype.kind not in "biuf":
            raise _Skip(
                "the model has no predict_proba and its predict output (dtype "
                f"{out.dtype}, shape {out.shape}) is not a score"
            )
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
