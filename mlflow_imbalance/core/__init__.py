"""The numbers: exact ROC counts and every metric at any prevalence η (numpy only).

``counts`` builds, compresses, merges and accumulates :class:`RocCounts`; ``format`` is their
on-disk archive; ``metrics`` are point and curve metrics at η (Brabec et al. 2020, eq. 8);
``curves`` holds hull, dominance, cost curves, B-ROC, P³ and sweeps; ``validation`` checks
inputs at the public boundary. Nothing here imports scipy, matplotlib or mlflow.
"""

from mlflow_imbalance.core.counts import CountsAccumulator, RocCounts, merge_counts

__all__ = ["CountsAccumulator", "RocCounts", "merge_counts"]
