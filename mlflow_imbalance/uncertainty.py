"""Honest uncertainty for prevalence-adjusted metrics: intervals, count bootstrap, bands.

Everything here is a function of ROC counts (numpy + scipy only). Every result carries the name
of its method and its confidence level, so a report can print exactly what a band means.

Intervals at one operating point
    * :func:`rate_interval` -- TPR / FPR. Clopper-Pearson (exact, guaranteed coverage; the only
      safe choice for a handful of false positives among 10^6 negatives), Jeffreys and Wilson.
      ``k = 0`` gives the finite Clopper-Pearson upper limit ``1 - (alpha/2)^(1/n)``.
    * :func:`likelihood_ratio_interval` / :func:`precision_interval` -- precision at prevalence
      ``eta`` depends on the operating point only through ``LR = TPR / FPR``:
      ``Prec = LR*o / (1 + LR*o)``, ``o = eta / (1 - eta)`` (Brabec et al. 2020, §2 eq. 8).
      One interval for LR therefore gives a band valid for every ``eta`` at once. Default
      ``"koopman-cp"``: Koopman's (1984) score interval for a ratio of two binomial proportions
      with its upper limit corrected for small false-positive counts (approximate; exact
      coverage by enumeration >= 0.94, where plain ``"koopman"`` dips to 0.85); ``"box"``: the
      Brabec §5 box, Clopper-Pearson intervals for TPR and FPR each at level ``sqrt(1 - alpha)``
      (joint coverage >= ``1 - alpha`` because the two classes are sampled independently).
    * :func:`precision_uncertainty` -- Brabec's bound ``Delta <= max(CV_TPR, CV_FPR)``
      (Theorem 1) beside the exact largest width of the box band,
      ``tanh((artanh CV_TPR + artanh CV_FPR) / 2)``, and the ``eta`` where it occurs.
    * :func:`required_sample_size`, :func:`check_sample_size` -- Brabec §5: how many positives
      and negatives are needed for precision to be known within a chosen width at every ``eta``,
      with a :class:`SmallTestSetWarning` when the test set is too small for the FPR region
      claimed.

Bands over whole curves
    * :func:`bootstrap_counts` -- the count bootstrap: each class's per-threshold counts are
      resampled multinomially, which is exactly equal in distribution to resampling
      (score, label) pairs within each class, at O(B*K) instead of O(B*n log n).
    * :func:`prevalence_band` -- AP, PR-AUC, max-F1 against eta: by default the Bayesian count
      bootstrap with a Jeffreys pseudo-negative (:func:`bayesian_counts`) and a simultaneous
      credible band (:func:`band_from_draws`), valid at every eta; ``construction="bootstrap"``
      keeps the earlier sup-t band.
    * :func:`roc_band` -- bootstrap sup-t band (simultaneous over the grid; Montiel Olea &
      Plagborg-Moller 2019), or percentile bands labelled pointwise.
      :func:`pr_band` is the ROC band mapped through eq. 8 (:func:`pr_band_from_roc`):
      simultaneous over every recall and every ``eta`` at once. :func:`p3_band` (small-FP
      corrected Koopman, approximate) and :func:`f1_band` (Clopper-Pearson box) are
      simultaneous over every ``eta`` (see their docstrings). ``docs/statistics.md`` documents
      the choices and the coverage they have.

Comparing runs and choosing a threshold
    * :func:`delong_test` (paired, same examples) and :func:`delong_test_unpaired` (counts of
      independent test sets) -- DeLong's test of ROC-AUC, as pROC's ``roc.test``.
    * :func:`paired_metric_test`, :func:`cost_difference_test`, :func:`partial_auc_test` --
      bootstrap tests of AP, PR-AUC, max-F1, lowest expected cost or partial AUC (paired when
      both runs' scores on the same examples are given); :func:`partial_auc_interval`.
    * :func:`choose_threshold` -- the threshold meeting a precision / recall / alert-budget
      requirement at a prevalence, judged by bounds simultaneous over the candidates (valid
      after the choice).

Headline intervals (what the logging hook stores and the report's table prints)
    * :func:`roc_auc_interval` -- DeLong's variance computed exactly from the counts, Wald on
      the logit scale (Clopper-Pearson fallback when the variance is 0).
    * :func:`headline_intervals` -- AP, PR-AUC and max-F1 at several prevalences from ONE
      Bayesian count-bootstrap draw set (the same construction as :func:`prevalence_band`), on
      counts thinned by :func:`thin_for_bootstrap` and re-centred on the exact values
      (:func:`recentre`).

The code lives in :mod:`mlflow_imbalance.stats` (``intervals``, ``sample_size``,
``bootstrap``, ``bands``, ``posterior``, ``prevalence_bands``, ``auc``, ``headline``,
``compare``, ``decision``); this module re-exports
their public names so ``from mlflow_imbalance import uncertainty`` keeps one flat namespace.
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
    ]
)
