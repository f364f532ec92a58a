"""Paired bootstrap replicates for comparing runs scored on the same examples.

Leading runs that kept their scores on the same examples (the same labels digest and labels)
are compared, in the verdict and in the tables' ties, by a paired test (pROC's bootstrap test,
as :func:`~mlflow_imbalance.stats.compare.paired_metric_test`): z = difference of the exact
values / s.d. of the difference, two-sided normal. The s.d. comes from the paired
replicates and is kept at least as large as the runs' own variances (those of the unpaired
test) less twice the replicates' covariance (:meth:`SharedReplicates.difference_sd`). One
stratified resample of the shared examples per replicate serves every run of the group at every
table prevalence and for every metric
(:func:`~mlflow_imbalance.stats.compare._shared_count_replicates`), so a group of k runs costs
O(B n k) once instead of one bootstrap per cell. Runs on different test sets, or without
scores, keep the unpaired test (conservative for positively correlated runs).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlflow_imbalance.stats.bootstrap import metric_statistic, min_cost_statistic
from mlflow_imbalance.stats.compare import _shared_count_replicates

logger = logging.getLogger(__name__)

#: Metrics of the tables that are tested from paired replicates (``cost`` when costs are given).
PAIRED_KEYS = ("ap", "pr_auc", "max_f1")
#: Paired replicates per group for the tables' ties (``--bootstrap`` if smaller): the test
#: needs only the s.d. of the difference, to about +-3.5 % at 400.
TIE_BOOTSTRAP = 400
#: Most resampled example-replicates (B x n x runs) per report for the tables' paired tests:
#: 0.8 s for 3 runs x 400 x 30,000 examples (3.6e7; the quick start's runs, 2 busy cores), so
#: about 7 s at the bound. Runs of a group beyond it (the later of the leading runs, best
#: first) stay unpaired.
MAX_PAIRED_WORK = 300_000_000


@dataclass
class SharedReplicates:
    """Per run of a group on shared examples, replicates ``(B, J)`` of each table metric.

    Attributes:
        group: run name -> group id (runs in one group share their examples).
        reps: run name -> metric key -> replicates ``(B, J)`` at the run's table prevalences.
        n_boot: replicates per group.
    """

    group: dict[str, int] = field(default_factory=dict)
    reps: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    n_boot: int = 0

    def difference_sd(
        self, a: str, b: str, key: str, j: int, var_a: float = 0.0, var_b: float = 0.0
    ) -> float | None:
        """S.d. of ``M_a - M_b`` at column ``j`` from the paired replicates; None when unpaired.

        ``var_a``, ``var_b``: each run's own variance there (the unpaired test's, the larger of
        its count-bootstrap and Bayesian-draw variances). The result is the larger of the
        paired replicates' s.d. of the difference and ``sqrt(var_a + var_b - 2 cov)`` with
        the covariance of the paired replicates: the pairing removes what the runs share,
        and the marginal variances keep the Bayesian draws' lower tail where no negative was
        seen above the top scores, which a resample of the examples cannot create (the
        reason the unpaired test takes the larger variance at eta = 1e-4).
        """
        ga, gb = self.group.get(a), self.group.get(b)
        if ga is None or ga != gb or key not in self.reps.get(a, {}):
            return None
        ra, rb = self.reps[a][key], self.reps[b][key]
        if j >= ra.shape[1] or j >= rb.shape[1]:
            return None
        x, y = ra[:, j], rb[:, j]
        var_d = float(np.var(x - y, ddof=1))
        cov = float(np.cov(x, y, ddof=1)[0, 1])
        return math.sqrt(max(var_d, float(var_a) + float(var_b) - 2.0 * cov, 0.0))


def _groups(runs: Sequence[Any], max_examples: int) -> list[list[Any]]:
    """Runs that kept scores on the same examples, grouped (groups of two or more only)."""
    groups: list[list[Any]] = []
    for r in runs:
        if r.scores is None or r.digest is None or r.counts.weighted:
            continue
        y = np.asarray(r.scores[0])
        if y.size > max_examples:
            continue
        for g in groups:
            if g[0].digest == r.digest and np.array_equal(np.asarray(g[0].scores[0]), y):
                g.append(r)
                break
        else:
            groups.append([r])
    return [g for g in groups if len(g) > 1]


def shared_replicates(
    runs: Sequence[Any],
    etas: Mapping[str, Any],
    opts: Any,
    seed_for: Any,
    max_examples: int,
    max_work: int = MAX_PAIRED_WORK,
) -> SharedReplicates:
    """Paired replicates of the tables' metrics for every group of runs on shared examples.

    The work is bounded: groups are formed from ``runs`` in their order (pass the leading
    runs, best first) and a group keeps as many runs as fit in what is left of ``max_work``
    resampled example-replicates (at least two, or none); the rest stay unpaired.

    Args:
        runs: the runs to pair (``RunData``: ``name``, ``counts``, ``scores``, ``digest``),
            in order of priority.
        etas: run name -> the run's table prevalences (test prevalence first, as ``point``).
        opts: the report's options (``n_bootstrap``, ``costs_given``, ``cost_fp``,
            ``cost_fn``, ``seed``).
        seed_for: ``(seed, *parts) -> SeedSequence``; each group's stream from its run names.
        max_examples: the largest test set resampled (as the verdict's paired test).
        max_work: the most resampled example-replicates, summed over the groups.

    Returns:
        :class:`SharedReplicates` (empty when no two runs share examples or the bootstrap is
        off).
    """
    out = SharedReplicates(n_boot=min(int(opts.n_bootstrap or 0), TIE_BOOTSTRAP))
    if not out.n_boot:
        return out
    left = int(max_work)
    for gid, whole in enumerate(_groups(runs, max_examples)):
        per_run = out.n_boot * np.asarray(whole[0].scores[0]).size
        group = whole[: max(0, left // max(per_run, 1))]
        if len(group) < 2:
            logger.info("tables: paired work bound reached; %d runs stay unpaired", len(whole))
            continue
        left -= per_run * len(group)
        names = [r.name for r in group]
        ev = np.asarray(etas[names[0]], dtype=float)
        rng = np.random.default_rng(seed_for(opts.seed, "tables-paired", *names))
        try:
            counts, chunks = _shared_count_replicates(
                group[0].scores[0], [r.scores[1] for r in group], out.n_boot, rng, names
            )
        except (ValueError, TypeError) as exc:  # scores the validation refuses: stay unpaired
            logger.info("tables: no paired replicates for %s: %s", names, exc)
            continue
        stats = []
        for c in counts:
            st = {key: metric_statistic(c, key, ev, grid_step=None) for key in PAIRED_KEYS}
            if opts.costs_given:
                st["cost"] = min_cost_statistic(c, ev, opts.cost_fp, opts.cost_fn)
            stats.append(st)
        parts: list[dict[str, list[np.ndarray]]] = [{k: [] for k in st} for st in stats]
        for chunk in chunks:
            for i, (tp, fp) in enumerate(chunk):
                tpf, fpf = tp.astype(float), fp.astype(float)
                for key, st in stats[i].items():
                    parts[i][key].append(np.asarray(st(tpf, fpf), dtype=float))
        for name, p in zip(names, parts, strict=True):
            out.group[name] = gid
            out.reps[name] = {key: np.concatenate(v, axis=0) for key, v in p.items()}
    return out
