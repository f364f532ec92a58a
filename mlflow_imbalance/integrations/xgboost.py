"""XGBoost training callback that logs the ROC counts of a validation set at the end.

Example::

    from mlflow_imbalance.integrations.xgboost import ImbalanceCallback

    with mlflow.start_run():
        xgboost.train(params, dtrain, callbacks=[ImbalanceCallback(X_val, y_val)])
        # or XGBClassifier(callbacks=[ImbalanceCallback(X_val, y_val)]).fit(X, y)
"""

from __future__ import annotations

import logging
from typing import Any

import xgboost

from mlflow_imbalance.tracking import LoggedCounts, _log_safely

logger = logging.getLogger(__name__)

__all__ = ["ImbalanceCallback"]


class ImbalanceCallback(xgboost.callback.TrainingCallback):
    """Score a validation set after training and log it with :func:`~mlflow_imbalance.log_scores`.

    The booster's output for a binary objective (``binary:logistic`` probabilities, or margins
    for ``binary:logitraw``) is the score. With early stopping, the best iteration is used
    (``use_best=True``). A logging failure warns and training still returns normally
    (``strict=True`` raises instead).

    Args:
        X_val: validation features (array, DataFrame or an ``xgboost.DMatrix``).
        y_val: validation labels (binary).
        name: counts name (``imbalance/<name>/``).
        use_best: score with the best iteration when early stopping recorded one.
        strict: re-raise logging errors instead of warning.
        **log_kwargs: passed to :func:`~mlflow_imbalance.log_scores` (``prevalences``,
            ``costs``, ``run_id``, ``keep_scores``, ``pos_label``, ``sample_weight``,
            ``log_figures``, ``tracking_uri``).

    Attributes:
        logged: the :class:`~mlflow_imbalance.tracking.LoggedCounts` of the last logging, or
            None.
    """

    def __init__(
        self,
        X_val: Any,
        y_val: Any,
        *,
        name: str = "validation",
        use_best: bool = True,
        strict: bool = False,
        **log_kwargs: Any,
    ) -> None:
        super().__init__()
        self.X_val = X_val
        self.y_val = y_val
        self.name = name
        self.use_best = use_best
        self.strict = strict
        self.log_kwargs = log_kwargs
        self.logged: LoggedCounts | None = None

    def _scores(self, booster: xgboost.Booster) -> Any:
        dmat = (
            self.X_val if isinstance(self.X_val, xgboost.DMatrix) else xgboost.DMatrix(self.X_val)
        )
        kwargs: dict[str, Any] = {}
        best = None
        if self.use_best:
            try:
                best = booster.best_iteration
            except AttributeError:
                best = None
        if best is not None:
            kwargs["iteration_range"] = (0, int(best) + 1)
        return booster.predict(dmat, **kwargs)

    def after_training(self, model: Any) -> Any:
        """Score the validation set with the trained booster and log; returns the model."""
        try:
            scores = self._scores(model)
        except Exception as exc:
            if self.strict:
                raise
            logger.warning("mlflow-imbalance XGBoost callback: scoring failed: %r", exc)
            scores = None
        if scores is not None:
            self.logged = _log_safely(
                self.y_val,
                scores,
                source="XGBoost callback",
                strict=self.strict,
                name=self.name,
                **self.log_kwargs,
            )
        return model
