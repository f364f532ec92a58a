"""Ranking runs across prevalences: orders, exact flip points and whether a flip is real.

Brabec et al. (2020) §4 show that F1 and PR-AUC can rank two classifiers differently at
different prevalences eta. This module finds where that happens:

* :func:`flip_points` -- the eta* in a range where two runs swap on a metric. F1 at fixed
  operating points has a closed form (derivation in :func:`f1_flip_point`); AP, PR-AUC and
  max-F1 are found by sign changes of ``D(eta) = M_A(eta) - M_B(eta)`` on a log-eta grid,
  refined with Brent's method.
* Precision at a fixed threshold, recall (TPR) and FPR never flip: precision at eta is
  ``LR*o/(1 + LR*o)``, increasing in ``LR = TPR/FPR`` for every eta, so its order is the LR
  order; recall and FPR do not depend on eta. :func:`flip_points` returns no flips with that
  reason instead of searching.
* :func:`rank_runs` -- the order of several runs at each eta and every pairwise flip, plus
  where a metric's order disagrees with the ROC-AUC order.
* :func:`flip_significance` -- a paired bootstrap of ``D(eta)`` when both runs' scores on the
  same examples are given (stratified resampling of examples, the same draw for both runs), or
  an unpaired count bootstrap otherwise (conservative for positively correlated scores); a
  simultaneous sup-t band over log eta, ``P(D > 0)`` per eta, significance of each flip and a
  percentile interval for eta*.

The code lives in :mod:`mlflow_imbalance.stats.ranking` and
:mod:`mlflow_imbalance.stats.flip_significance`; this module re-exports their public names.
"""

from __future__ import annotations

from mlflow_imbalance.stats import flip_significance as _flip_significance
from mlflow_imbalance.stats import ranking as _ranking
from mlflow_imbalance.stats.flip_significance import *  # noqa: F403
from mlflow_imbalance.stats.ranking import *  # noqa: F403

__all__ = sorted([*_ranking.__all__, *_flip_significance.__all__])
