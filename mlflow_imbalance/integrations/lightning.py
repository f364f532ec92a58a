"""PyTorch Lightning callback that logs the ROC counts of a validation set when fit ends.

Example::

    from mlflow_imbalance.integrations.lightning import ImbalanceCallback

    cb = ImbalanceCallback(X_val, y_val)            # X_val: a tensor; or score_fn=...
    with mlflow.start_run():
        lightning.Trainer(callbacks=[cb]).fit(module, train_loader)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import lightning.pytorch as pl
except ImportError:  # pragma: no cover - depends on the environment
    import pytorch_lightning as pl  # type: ignore[no-redef]

from mlflow_imbalance.integrations._common import ValidationLogger

logger = logging.getLogger(__name__)

__all__ = ["ImbalanceCallback"]


class ImbalanceCallback(ValidationLogger, pl.Callback):
    """On ``on_fit_end``, score a validation set and log it with ``log_scores``.

    Scores come from ``score_fn(pl_module)`` when given (return one score per example), else
    from ``pl_module(X_val)`` in eval mode without gradients (an ``(n, 1)`` output is flattened,
    ``(n, 2)`` uses ``positive_column``). Only global rank 0 logs. A logging failure warns and
    ``fit`` returns normally (``strict=True`` raises instead).

    Args:
        X_val: validation inputs (a tensor) for the module's forward; ignored with ``score_fn``.
        y_val: validation labels (binary).
        score_fn: optional ``pl_module -> scores`` function.
        name: counts name (``imbalance/<name>/``); ``"test"`` by default, as every entry
            point: the set is whatever data you scored (validation or test).
        positive_column: column of a two-column output holding the positive class.
        strict: re-raise logging errors instead of warning.
        **log_kwargs: passed to :func:`~mlflow_imbalance.log_scores`.
    """

    source = "Lightning callback"

    def __init__(
        self,
        X_val: Any,
        y_val: Any,
        *,
        score_fn: Callable[[Any], Any] | None = None,
        name: str = "test",
        positive_column: int = 1,
        strict: bool = False,
        **log_kwargs: Any,
    ) -> None:
        super().__init__()
        self._init_validation(X_val, y_val, name=name, strict=strict, log_kwargs=log_kwargs)
        self.score_fn = score_fn
        self.positive_column = positive_column

    def _scores(self, pl_module: Any) -> np.ndarray:
        if self.score_fn is not None:
            out = self.score_fn(pl_module)
        else:
            import torch

            was_training = pl_module.training
            pl_module.eval()
            try:
                with torch.no_grad():
                    x = self.X_val.to(pl_module.device) if hasattr(self.X_val, "to") else self.X_val
                    out = pl_module(x)
            finally:
                pl_module.train(was_training)
        if hasattr(out, "detach"):
            out = out.detach().cpu().numpy()
        out = np.asarray(out)
        if out.ndim == 2 and out.shape[1] == 2:
            out = out[:, self.positive_column]
        return out.reshape(-1)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        """Lightning hook: score and log (rank 0 only)."""
        if getattr(trainer, "global_rank", 0) != 0:
            return
        self._score_and_log(lambda: self._scores(pl_module))
