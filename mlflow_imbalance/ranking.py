"""Ranking runs across prevalences: the public ``ranking`` namespace.

Brabec et al. (2020) §4 show that F1 and PR-AUC can rank two classifiers differently at
different prevalences η. :func:`flip_points`, :func:`flip_table` and :func:`rank_runs` (in
:mod:`mlflow_imbalance.stats.ranking`) find where the order of runs swaps;
:func:`flip_significance` (in :mod:`mlflow_imbalance.stats.flip_significance`) says whether a
flip is real. This module re-exports their public names.
"""

from __future__ import annotations

from mlflow_imbalance.stats import flip_significance as _flip_significance
from mlflow_imbalance.stats import ranking as _ranking
from mlflow_imbalance.stats.flip_significance import *  # noqa: F403
from mlflow_imbalance.stats.ranking import *  # noqa: F403

__all__ = sorted([*_ranking.__all__, *_flip_significance.__all__])
