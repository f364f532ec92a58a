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

from mlflow_imbalance.integrations._common import ValidationLogger

logger = logging.getLogger(__name__)

__all__ = ["ImbalanceCallback"]


class ImbalanceCallback(ValidationLogger, keras.callbacks.Callback):
    """On ``on_train_end``, score ``X_val`` with ``model.predict`` and log the counts.

    The model must output one score per example (a sigmoid unit, or logits): an output of
    shape ``(n, 1)`` is flattened; ``(n, 2)`` softmax outputs use the column ``positive_column``.
    A logging failure warns and ``fit`` returns normally (``strict=True`` raises instead).

    Args:
        X_val: validation inputs accepted by ``model.predict``.
        y_val: validation labels (binary).
        name: counts name (``imbalance/<name>/``); ``"test"`` by default, as every entry
            point: the set is whatever data you scored (validation or test).
        positive_column: column of a two-column output holding the positive class.
        batch_size: passed to ``model.predict``.
        strict: re-raise logging errors instead of warning.
        **log_kwargs: passed to :func:`~mlflow_imbalance.log_scores`.
    """

    source = "Keras callback"

    def __init__(
        self,
        X_val: Any,
        y_val: Any,
        *,
        name: str = "test",
        positive_column: int = 1,
        batch_size: int | None = None,
        strict: bool = False,
        **log_kwargs: Any,
    ) -> None:
        super().__init__()
        self._init_validation(X_val, y_val, name=name, strict=strict, log_kwargs=log_kwargs)
        self.positive_column = positive_column
        self.batch_size = batch_size

    def on_train_end(self, logs: Any = None) -> None:
        """Keras hook: score and log."""
        self._score_and_log(self._scores)

    def _scores(self) -> np.ndarray:
        out = np.asarray(self.model.predict(self.X_val, batch_size=self.batch_size, verbose=0))
        if out.ndim == 2 and out.shape[1] == 2:
            out = out[:, self.positive_column]
        return out.reshape(-1)
