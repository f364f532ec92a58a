"""Honest uncertainty for prevalence-adjusted metrics: the public ``uncertainty`` namespace.

Everything is a function of ROC counts (numpy + scipy only), and every result carries the name
of its method and its confidence level, so a report can print exactly what a band means
(measured coverage of each construction: ``docs/statistics.md``). Where the code lives:

* :mod:`mlflow_imbalance.stats.intervals` -- :func:`rate_interval` (Clopper-Pearson, Jeffreys,
  Wilson), :func:`likelihood_ratio_interval` / :func:`precision_interval` (precision at every
  η through LR = TPR/FPR, Brabec et al. 2020 eq. 8), :func:`precision_uncertainty`.
* :mod:`mlflow_imbalance.stats.sample_size` -- :func:`required_sample_size`,
  :func:`check_sample_size` (Brabec §5).
* :mod:`mlflow_imbalance.stats.bootstrap`, :mod:`~mlflow_imbalance.stats.posterior` -- the count
  bootstrap and the Bayesian count bootstrap behind every band against η.
* :mod:`mlflow_imbalance.stats.bands`, :mod:`~mlflow_imbalance.stats.prevalence_bands` --
  :func:`roc_band`, :func:`pr_band`, :func:`p3_band`, :func:`f1_band`,
  :func:`prevalence_band` (the band the report draws).
* :mod:`mlflow_imbalance.stats.auc`, :mod:`~mlflow_imbalance.stats.headline` --
  :func:`roc_auc_interval` (DeLong) and :func:`headline_intervals` (hook and report table).
* :mod:`mlflow_imbalance.stats.compare` -- :func:`delong_test`, :func:`delong_test_unpaired`,
  :func:`paired_metric_test`, :func:`cost_difference_test`, :func:`partial_auc_interval`,
  :func:`partial_auc_test`.
* :mod:`mlflow_imbalance.stats.decision` -- :func:`choose_threshold`.
* :mod:`mlflow_imbalance.stats.prevalence` -- :func:`estimate_prevalence` (the deployment
  prevalence from unlabeled production scores, with a prior-shift check) and
  :class:`PrevalenceEstimate`.
"""

from __future__ import annotations

from mlflow_imbalance.core.curves import default_prevalence_grid as default_prevalence_grid
from mlflow_imbalance.stats import _batch
from mlflow_imbalance.stats import auc as _auc
from mlflow_imbalance.stats import bands as _bands
from mlflow_imbalance.stats import bootstrap as _bootstrap
from mlflow_imbalance.stats import compare as _compare
from mlflow_imbalance.stats import decision as _decision
from mlflow_imbalance.stats import headline as _headline
from mlflow_imbalance.stats import intervals as _intervals
from mlflow_imbalance.stats import posterior as _posterior
from mlflow_imbalance.stats import prevalence as _prevalence
from mlflow_imbalance.stats import prevalence_bands as _prevalence_bands
from mlflow_imbalance.stats import sample_size as _sample_size
from mlflow_imbalance.stats._batch import *  # noqa: F403
from mlflow_imbalance.stats.auc import *  # noqa: F403
from mlflow_imbalance.stats.bands import *  # noqa: F403
from mlflow_imbalance.stats.bootstrap import *  # noqa: F403
from mlflow_imbalance.stats.compare import *  # noqa: F403
from mlflow_imbalance.stats.decision import *  # noqa: F403
from mlflow_imbalance.stats.headline import *  # noqa: F403
from mlflow_imbalance.stats.intervals import *  # noqa: F403
from mlflow_imbalance.stats.posterior import *  # noqa: F403
from mlflow_imbalance.stats.prevalence import *  # noqa: F403
from mlflow_imbalance.stats.prevalence_bands import *  # noqa: F403
from mlflow_imbalance.stats.sample_size import *  # noqa: F403

__all__ = sorted(
    [
        "default_prevalence_grid",
        *_intervals.__all__,
        *_sample_size.__all__,
        *_batch.__all__,
        *_bootstrap.__all__,
        *_bands.__all__,
        *_prevalence_bands.__all__,
        *_posterior.__all__,
        *_auc.__all__,
        *_headline.__all__,
        *_compare.__all__,
        *_decision.__all__,
        *_prevalence.__all__,
    ]
)
