"""What every training callback shares: hold a validation set, score it once, log it safely."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

from mlflow_imbalance.tracking import LoggedCounts, PendingLog, _log_safely
from mlflow_imbalance.tracking._checks import _renamed_options

logger = logging.getLogger(__name__)


class ValidationLogger:
    """Mixin for callbacks that score a validation set at the end of training and log it.

    Scoring or logging failures warn and return None, so the user's training always finishes;
    ``strict=True`` re-raises instead. Only the scoring and the counts (one sort) run on the
    training thread: the rest of the logging is finished by the background thread
    (:mod:`mlflow_imbalance.tracking._worker`), so :attr:`logged` is a
    :class:`~mlflow_imbalance.tracking.PendingLog` (``.result()`` gives the
    :class:`~mlflow_imbalance.tracking.LoggedCounts`); with ``strict=True`` logging is
    synchronous and raises, and :attr:`logged` is the ``LoggedCounts``.

    Args:
        X_val: features of the data to score (validation or test), in whatever form the
            framework's model accepts.
        y_val: their labels (binary).
        name: counts name (``imbalance/<name>/``); ``"test"`` by default, as every entry
            point: the set is whatever data you scored (validation or test).
        strict: re-raise scoring and logging errors instead of warning.
        **log_kwargs: passed to :func:`~mlflow_imbalance.log_scores` (``prevalences=``,
            ``costs=``, ...; the old spellings ``prevalence=``, ``cost_fp=`` / ``cost_fn=``
            work with a ``FutureWarning``).
    """

    #: framework name used in warnings, e.g. "XGBoost callback"
    source = "callback"

    def _init_validation(
        self, X_val: Any, y_val: Any, *, name: str, strict: bool, log_kwargs: dict[str, Any]
    ) -> None:
        self.X_val = X_val
        self.y_val = y_val
        self.name = name
        self.strict = strict
        # old spellings become prevalences= / costs= now, warning at the callback's creation
        self.log_kwargs = _renamed_options(log_kwargs, type(self).__name__, stacklevel=4)
        self.logged: LoggedCounts | PendingLog | None = None

    def _score_and_log(self, score: Callable[[], Any]) -> LoggedCounts | PendingLog | None:
        """Call ``score()`` for the validation scores and log them; never raises unless strict."""
        try:
            scores = score()
        except Exception as exc:
            if self.strict:
                raise
            message = f"mlflow-imbalance {self.source}: scoring the validation set failed: {exc}"
            logger.debug(message, exc_info=True)
            warnings.warn(message, UserWarning, stacklevel=3)
            return None
        self.logged = _log_safely(
            self.y_val,
            scores,
            source=self.source,
            strict=self.strict,
            name=self.name,
            **self.log_kwargs,
        )
        return self.logged
