"""The decision in the registry: register it, serve it at its threshold, re-check it.

- :func:`register_decision`: a report's verdict (a run's model at a threshold, for an η) as a
  new version of a registered model, served 0/1 at the threshold (scores on request);
- :func:`check_decision`: holds / retune / reconsider / unknown on the production batches logged
  since (:class:`DecisionCheck`; the CLI's ``mlflow-imbalance check``, exit 0 / 3 / 4 / 5);
- :func:`read_decision`: the registered decision, its compared runs and its check history (what
  ``mlflow-imbalance report --model`` shows).

The schema of the tags and files: docs/format.md, "Registered decisions". The loop in one page:
docs/deploy.md.
"""

from __future__ import annotations

from mlflow_imbalance.deploy.check import EXIT_CODES, DecisionCheck, check_decision
from mlflow_imbalance.deploy.register import register_decision
from mlflow_imbalance.deploy.view import read_decision

__all__ = ["EXIT_CODES", "DecisionCheck", "check_decision", "read_decision", "register_decision"]
