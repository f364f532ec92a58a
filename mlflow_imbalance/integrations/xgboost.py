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

from mlflow_imbalance.integrations._common import ValidationLogger

logger = logging.getLogger(__name__)

__all__ = ["ImbalanceCallback"]


class ImbalanceCallback(ValidationLogger, xgboost.callback.TrainingCallback):
    """Score a validation set after training and log it with :func:`~mlflow_imbalance.log_scores`.

    The booster's output for a binary objective (``binary:logistic`` probabilities, or margins
    for ``binary:logitraw``) is the score. With early stopping, the best iteration is used
    (``use_best=True``). A logging failure warns and training still returns normally
    (``strict=True`` raises instead).

    Args:
        X_val: validation features (array, DataFrame or an ``xgboost.DMatrix``).
        y_val: validation labels (binary).
        name: counts name (``imbalance/<name>/``); ``"test"`` by default, as every entry
            point: the set is whatever data you scored (validation or test).
        use_best: score with the best iteration when early stopping recorded one.
        strict: re-raise logging errors instead of warning.
        **log_kwargs: passed to :func:`~mlflow_imbalance.log_scores` (``prevalences``,
            ``costs``, ``run_id``, ``keep_scores``, ``pos_label``, ``sample_weight``,
            ``log_figures``, ``tracking_uri``).

    Attributes:
        logged: the :class:`~mlflow_imbalance.tracking.LoggedCounts` of the last logging, or
            None.
    """

    source = "XGBoost callback"

    def __init__(
        self,
        X_val: Any,
        y_val: Any,
        *,
        name: str = "test",
        use_best: bool = True,
        strict: bool = False,
        **log_kwargs: Any,
    ) -> None:
        super().__init__()
        self._init_validation(X_val, y_val, name=name, strict=strict, log_kwargs=log_kwargs)
        self.use_best = use_best

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
        self._score_and_log(lambda: self._scores(model))
        return model
