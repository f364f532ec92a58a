"""The served decision model: a model applying one threshold (MLflow "models from code").

:func:`~mlflow_imbalance.deploy.register.register_decision` logs this file as the decision
model's code (``mlflow.pyfunc.log_model(python_model=<this file>, model_config=...)``), so the
served model needs only MLflow, numpy and pandas -- not mlflow-imbalance -- wherever it is
loaded or served. Keep it self-contained: it imports nothing from this package.

``model_config`` (written at registration, docs/format.md "Registered decisions"):

- ``threshold``: predict positive when ``score >= threshold`` (the ROC counts' rule);
- ``kind``: ``"sklearn"`` (artifact ``inner`` is a scikit-learn model: a
  ``FixedThresholdClassifier`` around the run's fitted estimator, saved with the original's
  serialisation settings) or ``"pyfunc"`` (artifact ``inner`` is the run's own model, loaded as
  a pyfunc; its output's column ``column`` is the score);
- ``response``: what the score is, e.g. ``"predict_proba[:, 1]"`` (recorded, for the reader);
- ``column``: for ``"pyfunc"``, the output column holding the score (an index or a name;
  None: the output is 1-d).

``predict(X)`` returns 0/1 (int64); ``predict(X, params={"output": "score"})`` returns the
scores the threshold is applied to (float64).
"""

from __future__ import annotations

from typing import Any

import mlflow
import numpy as np
from mlflow.pyfunc import PythonModel

OUTPUTS = ("decision", "score")


class ThresholdModel(PythonModel):
    """0/1 at the registered threshold, or the scores on request (``params={"output": ...}``)."""

    def load_context(self, context: Any) -> None:
        """Load the inner model and read the threshold from the model config."""
        config = dict(context.model_config or {})
        self.threshold = float(config["threshold"])
        self.kind = str(config.get("kind", "pyfunc"))
        self.column = config.get("column")
        path = context.artifacts["inner"]
        if self.kind == "sklearn":
            from mlflow import sklearn as mlflow_sklearn

            self.inner = mlflow_sklearn.load_model(path)
        else:
            self.inner = mlflow.pyfunc.load_model(path)

    def scores(self, model_input: Any) -> np.ndarray:
        """The score of every row (1-d float64)."""
        if self.kind == "sklearn":
            est = getattr(self.inner, "estimator_", self.inner.estimator)
            if self.inner.response_method == "decision_function":
                s = est.decision_function(model_input)
            else:  # predict_proba: the positive class is classes_[1], as sklearn's
                s = np.asarray(est.predict_proba(model_input))[:, 1]
            return np.asarray(s, dtype=np.float64).ravel()
        out = self.inner.predict(model_input)
        if self.column is not None:
            if hasattr(out, "iloc"):
                out = out[self.column] if self.column in out.columns else out.iloc[:, self.column]
            else:
                out = np.asarray(out)[:, int(self.column)]
        return np.asarray(out, dtype=np.float64).ravel()

    def predict(self, context, model_input, params=None):
        """0/1 per row (``score >= threshold``), or the scores with ``output="score"``.

        No type hints: MLflow would read them as the model's input schema.
        """
        output = str((params or {}).get("output", "decision"))
        if output not in OUTPUTS:
            raise ValueError(f"params output must be one of {OUTPUTS}, got {output!r:.60}")
        if output == "score":
            return self.scores(model_input)
        if self.kind == "sklearn":
            # FixedThresholdClassifier: classes_[1] where score >= threshold (sklearn's rule)
            labels = np.asarray(self.inner.predict(model_input))
            return (labels == self.inner.classes_[1]).astype(np.int64)
        return (self.scores(model_input) >= self.threshold).astype(np.int64)


mlflow.models.set_model(ThresholdModel())
