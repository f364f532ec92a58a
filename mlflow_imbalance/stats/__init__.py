"""Honest uncertainty and ranking for ROC counts (numpy, scipy and :mod:`mlflow_imbalance.core`).

Every result carries the name of its method and its confidence level, so a report can print
exactly what an interval or band means. ``docs/statistics.md`` documents the choices.

Modules (imports point down this list only):

* ``intervals`` -- rate intervals (Clopper-Pearson, Jeffreys, Wilson), Koopman and box
  intervals for LR = TPR/FPR and so precision at every η, Brabec's Δ and the exact box width.
* ``sample_size`` -- test-set size needed for precision claims in an FPR region (Brabec §5).
* ``_batch`` -- batched metric kernels (AP, PR-AUC, max-F1, F1 at many η for many replicates).
* ``bootstrap`` -- the count bootstrap and the statistics evaluated on its shared replicates.
* ``bands`` -- :class:`~mlflow_imbalance.stats.bands.Band`, sup-t bands from replicates, ROC,
  PR, P³ and F1 bands.
* ``posterior`` -- the Bayesian count bootstrap (Jeffreys pseudo-negative) and credible bands
  from its draws: the default construction for metrics against η and the headline intervals.
* ``prevalence_bands`` -- AP, PR-AUC, max-F1 and F1 against η: Bayesian (default), bootstrap
  and ROC-band mapped.
* ``auc`` -- ROC-AUC interval with DeLong's variance exact from the counts.
* ``headline`` -- thinning, re-centring and the headline intervals of the logging hook and
  the report.
* ``compare`` -- DeLong's paired and unpaired tests, partial-AUC interval and test, bootstrap
  tests of AP / PR-AUC / max-F1 / expected cost between two runs.
* ``decision`` -- ``choose_threshold`` and intervals valid after a data-driven choice of the
  operating point.
* ``prevalence`` -- the deployment prevalence estimated from unlabeled production scores
  (:func:`estimate_prevalence`, :class:`PrevalenceEstimate`) and the prior-shift check.
* ``ranking`` -- order of runs across η and exact flip points; ``flip_significance`` -- whether
  a flip is real (paired or unpaired bootstrap).
* ``_checks`` -- boundary checks shared by the modules above, and
  :class:`InsufficientDataError` (re-exported here, from ``intervals`` and so from
  :mod:`mlflow_imbalance.uncertainty`): the one exception a statistic raises when a run's
  counts cannot support it (too few examples of a class, or weighted counts where integers are
  needed), so a caller evaluating many runs can isolate such a run.

The public namespaces are :mod:`mlflow_imbalance.uncertainty` and
:mod:`mlflow_imbalance.ranking`, which re-export these modules.
"""

from mlflow_imbalance.stats._checks import InsufficientDataError
from mlflow_imbalance.stats.prevalence import PrevalenceEstimate, estimate_prevalence

__all__ = ["InsufficientDataError", "PrevalenceEstimate", "estimate_prevalence"]
