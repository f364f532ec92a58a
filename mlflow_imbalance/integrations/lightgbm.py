"""LightGBM callback that logs the ROC counts of a validation set at the end of training.

Example::

    from mlflow_imbalance.integrations.lightgbm import ImbalanceCallback

    cb = ImbalanceCallback(X_val, y_val)
    with mlflow.start_run():
        booster = lightgbm.train(params, train_set, callbacks=[cb])
        # with early stopping, the best iteration is logged when training stops
        booster = lightgbm.train(params, train_set, valid_sets=[val_set],
                                 callbacks=[lightgbm.early_stopping(10), cb])
"""

from __future__ import annotations

import logging
import sys
import warnings
from typing import Any

import lightgbm

from mlflow_imbalance.integrations._common import ValidationLogger
from mlflow_imbalance.tracking import LoggedCounts, PendingLog

logger = logging.getLogger(__name__)

__all__ = ["ImbalanceCallback"]


class ImbalanceCallback(ValidationLogger):
    """A LightGBM callback (a callable taking ``CallbackEnv``) logging at the last iteration.

    At the final iteration of ``lightgbm.train`` (or ``LGBMClassifier.fit``) the validation set
    is scored with the booster (``predict``: probabilities for ``binary``, raw scores for
    objectives without a link) and logged with :func:`~mlflow_imbalance.log_scores`. LightGBM's
    early stopping ends training by an exception before the last iteration; at its first
    iteration this callback wraps the early-stopping callbacks of the running ``lightgbm.train``
    so that, when one stops training, the validation set is scored with the **best iteration**
    and logged before training returns. (Should a future LightGBM hide its callback list, a
    warning says so once and :meth:`log_booster` remains.) A logging failure warns and training
    finishes (``strict=True`` raises instead).

    Args:
        X_val: validation features.
        y_val: validation labels (binary).
        name: counts name (``imbalance/<name>/``); ``"test"`` by default, as every entry
            point: the set is whatever data you scored (validation or test).
        strict: re-raise logging errors instead of warning.
        **log_kwargs: passed to :func:`~mlflow_imbalance.log_scores`.

    Attributes:
        logged: the last logging: a :class:`~mlflow_imbalance.tracking.PendingLog` (or
            ``LoggedCounts`` with ``strict=True``), or None.
    """

    #: run after LightGBM's built-in callbacks (early stopping has order 30)
    order = 40
    source = "LightGBM callback"
    before_iteration = False

    def __init__(
        self,
        X_val: Any,
        y_val: Any,
        *,
        name: str = "test",
        strict: bool = False,
        **log_kwargs: Any,
    ) -> None:
        self._init_validation(X_val, y_val, name=name, strict=strict, log_kwargs=log_kwargs)

    def __call__(self, env: Any) -> None:
        """LightGBM's callback hook: log after the last iteration (or at early stopping)."""
        if env.iteration == env.begin_iteration:
            self._watch_early_stopping(sys._getframe(1))
        if env.iteration + 1 < env.end_iteration:
            return
        if not isinstance(env.model, lightgbm.Booster):  # lightgbm.cv: nothing single to score
            logger.debug("mlflow-imbalance LightGBM callback: not a Booster (cv?); skipped")
            return
        self.log_booster(env.model, num_iteration=env.iteration + 1)

    def _watch_early_stopping(self, frame: Any) -> None:
        """Wrap the early-stopping callbacks of the calling ``lightgbm.train`` (in place)."""
        callbacks = frame.f_locals.get("callbacks_after_iter") if frame is not None else None
        if (
            frame is None
            or frame.f_globals.get("__name__") != "lightgbm.engine"
            or not (isinstance(callbacks, list))
        ):
            warnings.warn(
                "mlflow-imbalance LightGBM callback: cannot see this LightGBM's callback list, "
                "so if early stopping ends training nothing is logged automatically; call "
                "cb.log_booster(booster) after training",
                UserWarning,
                stacklevel=3,
            )
            return
        for i, cb in enumerate(callbacks):
            if _is_early_stopping(cb) and not isinstance(cb, _StopNotifier):
                callbacks[i] = _StopNotifier(cb, self)

    def log_booster(
        self, booster: Any, num_iteration: int | None = None
    ) -> LoggedCounts | PendingLog | None:
        """Score the validation set with ``booster`` and log (use after early stopping).

        Args:
            booster: a ``lightgbm.Booster`` or a fitted ``LGBMClassifier`` (its booster is used).
            num_iteration: iterations to use; None = the best iteration when recorded, else all.

        Returns:
            A :class:`~mlflow_imbalance.tracking.PendingLog` (the counts are computed; the rest
            is logged by the background worker, ``.result()`` waits for it), the
            ``LoggedCounts`` with ``strict=True``, or None when logging failed (and warned).
        """
        booster = getattr(booster, "booster_", booster)

        def score() -> Any:
            n_iter = num_iteration
            if n_iter is None:
                best = getattr(booster, "best_iteration", 0) or 0
                n_iter = best if best > 0 else None
            return booster.predict(self.X_val, num_iteration=n_iter)

        return self._score_and_log(score)


def _is_early_stopping(cb: Any) -> bool:
    cls = getattr(lightgbm.callback, "_EarlyStoppingCallback", None)
    return (cls is not None and isinstance(cb, cls)) or getattr(cb, "order", None) == 30


class _StopNotifier:
    """An early-stopping callback wrapped so that stopping first logs the best iteration."""

    def __init__(self, inner: Any, owner: ImbalanceCallback) -> None:
        self.inner = inner
        self.owner = owner
        self.order = getattr(inner, "order", 30)
        self.before_iteration = getattr(inner, "before_iteration", False)

    def __call__(self, env: Any) -> None:
        try:
            self.inner(env)
        except lightgbm.callback.EarlyStopException as stop:
            if isinstance(env.model, lightgbm.Booster):
                self.owner.log_booster(env.model, num_iteration=int(stop.best_iteration) + 1)
            raise
