"""Keras callback that logs the ROC counts of a validation set when training ends.

Example::

    from mlflow_imbalance.integrations.keras import ImbalanceCallback

    with mlflow.start_run():
        model.fit(X, y, callbacks=[ImbalanceCallback(X_val, y_val)])
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

try:
    import keras
except ImportError:  # pragma: no cover - depends on the environment
    from tensorflow import keras  # type: ignore[no-redef]

from mlflow_imbalance.tracking import LoggedCounts, _log_safely

logger = logging.getLogger(__name__)

__all__ = ["ImbalanceCallback"]


class ImbalanceCallback(keras.callbacks.Callback):
    """On ``on_train_end``, score ``X_val`` with ``model.predict`` and log the counts.

    The model must output one score per example (a sigmoid unit, or logits): an output of
    shape ``(n, 1)`` is flattened; ``(n, 2)`` softmax outputs use the column ``positive_column``.
    A logging failure warns and ``fit`` returns normally (``strict=True`` raises instead).

    Args:
        X_val: validation inputs accepted by ``model.predict``.
        y_val: validation labels (binary).
        name: counts name (``imbalance/<name>/``).
        positive_column: column of a two-column output holding the positive class.
        batch_size: passed to ``model.predict``.
        strict: re-raise logging errors instead of warning.
        **log_kwargs: passed to :func:`~mlflow_imbalance.log_scores`.
    """

    def __init__(
        self,
        X_val: Any,
        y_val: Any,
        *,
        name: str = "validation",
        positive_column: int = 1,
        batch_size: int | None = None,
        strict: bool = False,
        **log_kwargs: Any,
    ) -> None:
        super().__init__()
        self.X_val = X_val
        self.y_val = y_val
        self.name = name
        self.positive_column = positive_column
        self.batch_size = batch_size
        self.strict = strict
        self.log_kwargs = log_kwargs
        self.logged: LoggedCounts | None = None

    def on_train_end(self, logs: Any = None) -> None:
        """Keras hook: score and log."""
        try:
            out = np.asarray(self.model.predict(self.X_val, batch_size=self.batch_size, verbose=0))
            if out.ndim == 2 and out.shape[1] == 2:
                out = out[:, self.positive_column]
            scores = out.reshape(-1)
        except Exception as exc:
            if self.strict:
                raise
            logger.warning("mlflow-imbalance Keras callback: scoring failed: %r", exc)
            return
        self.logged = _log_safely(
            self.y_val,
            scores,
            source="Keras callback",
            strict=self.strict,
            name=self.name,
            **self.log_kwargs,
        )
