"""Bayesian count bootstrap with a Jeffreys pseudo-negative, and credible bands from its draws.

Why. The ordinary count bootstrap resamples the negatives that were seen, so where a
prevalence-adjusted metric rests on a handful of false positives (AP, PR-AUC, max-F1 at
eta = 1e-4 with 10^4-10^5 negatives) no replicate can hold a false positive above the highest
scored negative: the band collapses onto an upward-biased estimate (measured simultaneous
coverage 0.43-0.92, pointwise 0.43-0.50 at eta = 1e-4; docs/statistics.md). Mapping a
simultaneous ROC band instead covers, but is 10-20 times wider than the sampling spread.

Construction (:func:`bayesian_counts`). Rubin's (1981) Bayesian bootstrap on the counts: each
class's per-threshold masses are drawn from a Dirichlet whose parameters are the observed
per-threshold counts (Gamma draws normalised), so a draw is a plausible *population* ROC
curve rather than a resample. For the negatives one more cell is added *above the highest
threshold* with Jeffreys' pseudo-count 1/2. Its mass is a false-positive rate that every
threshold carries: the marginal of the FPR at a threshold with ``F`` observed false positives
is then ``Beta(F + 1/2, N - F)``, the Jeffreys posterior's lower tail, which is what the
count bootstrap lacks when ``F`` is 0-3 (Brown, Cai & DasGupta 2001 for the Jeffreys interval
of a binomial rate). The positives get no pseudo-count (their rates are not near 0 where it
matters). Then the metric is evaluated on each draw with the batched kernels; draws are
evaluated through the same code as the estimate, on rates scaled back to counts.

Band (:func:`credible_band`). Pointwise: equal-tailed quantiles of the draws at each grid
point. Simultaneous: the envelope of pointwise quantiles at the smallest level ``g >=
confidence`` for which at least ``confidence`` of the draws lie inside it at every grid point
(a simultaneous credible band, e.g. Besag et al. 1995). The band is not centred on the
estimate: where the estimate is biased (low eta) the posterior is centred nearer the truth,
which is how it covers at a width close to the sampling spread.

Measured (``benchmarks/bench_band_coverage.py``, binormal and skewed/tied score models, P/N =
200/20,000, 1,000/100,000, 100/1,000,000): see docs/statistics.md for the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.stats._checks import _plain
from mlflow_imbalance.stats.bootstrap import _check_bootstrappable, _rng

__all__ = [
    "PSEUDO_NEGATIVES",
    "bayesian_counts",
    "bayesian_statistics",
    "credible_band",
]

#: Jeffreys pseudo-count of negatives placed above the highest threshold in every draw.
PSEUDO_NEGATIVES = 0.5


def bayesian_counts(
    counts: RocCounts,
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
    pseudo_negatives: float = PSEUDO_NEGATIVES,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Bayesian count bootstrap: chunks of draws of cumulative ``(tp, fp)`` as float counts.

    Each draw is ``n_pos * T`` and ``n_neg * F`` where ``T``/``F`` are cumulative Dirichlet
    masses: positives ``Dirichlet(pos_k)``, negatives ``Dirichlet(pseudo, neg_k)`` with the
    pseudo cell above the first threshold (see the module docstring). O(B*K).

    Args:
        counts: unweighted counts.
        n_boot: number of draws.
        seed: int, Generator or None.
        chunk_size: draws per chunk (default bounded to ~4e6 numbers per array).
        pseudo_negatives: Jeffreys pseudo-count of the top negative cell (0 gives Rubin's
            plain Bayesian bootstrap, which under-covers at low prevalence).

    Yields:
        ``(tp, fp)`` float64 arrays ``(b, K)``, cumulative, ending at ``n_pos``/``n_neg``.
    """
    _check_bootstrappable(counts)
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {_plain(n_boot)!r}")
    a0 = float(pseudo_negatives)
    if not a0 >= 0:
        raise ValueError(f"pseudo_negatives must be >= 0, got {_plain(pseudo_negatives)!r}")
    rng = _rng(seed)
    dpos, dneg = (np.asarray(v, dtype=np.float64) for v in counts.per_threshold())
    k = dpos.size
    ip, ineg = np.flatnonzero(dpos), np.flatnonzero(dneg)
    n_pos, n_neg = float(counts.n_pos), float(counts.n_neg)
    if chunk_size is None:
        chunk_size = max(1, min(int(n_boot), int(4_000_000 // max(k, 1))))
    done = 0
    while done < n_boot:
        b = min(chunk_size, int(n_boot) - done)
        gp = np.zeros((b, k))
        gp[:, ip] = rng.standard_gamma(dpos[ip], size=(b, ip.size))
        gn = np.zeros((b, k))
        gn[:, ineg] = rng.standard_gamma(dneg[ineg], size=(b, ineg.size))
        top = rng.standard_gamma(a0, size=(b, 1)) if a0 > 0 else np.zeros((b, 1))
        np.cumsum(gp, axis=1, out=gp)
        gp *= n_pos / gp[:, -1:]
        np.cumsum(gn, axis=1, out=gn)
        gn += top
        gn *= n_neg / gn[:, -1:]
        done += b
        yield gp, gn


def bayesian_statistics(
    counts: RocCounts,
    statistics: Mapping[str, Callable[[np.ndarray, np.ndarray], np.ndarray]],
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
    pseudo_negatives: float = PSEUDO_NEGATIVES,
) -> dict[str, np.ndarray]:
    """Every statistic on ONE shared set of Bayesian count-bootstrap draws: ``{name: (B, G)}``."""
    if not statistics:
        raise ValueError("statistics is empty")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in statistics}
    for tp, fp in bayesian_counts(counts, n_boot, seed, chunk_size, pseudo_negatives):
        for key, stat in statistics.items():
            parts[key].append(np.asarray(stat(tp, fp), dtype=float))
    return {key: np.concatenate(v, axis=0) for key, v in parts.items()}


def credible_band(
    draws: np.ndarray, confidence: float, simultaneous: bool
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Equal-tailed pointwise or simultaneous credible band from draws ``(B, G)``.

    Simultaneous: the smallest pointwise level ``g`` in ``[confidence, 1]`` (bisection on the
    draws' ranks) whose quantile envelope holds at least ``confidence`` of the draws at every
    grid point at once; ``extra["pointwise_level"]`` records ``g``.
    """
    reps = np.asarray(draws, dtype=float)
    nb = reps.shape[0]

    def envelope(g: float) -> tuple[np.ndarray, np.ndarray]:
        a = (1.0 - g) / 2.0
        lo, hi = np.quantile(reps, [a, 1.0 - a], axis=0)
        return lo, hi

    if not simultaneous:
        lo, hi = envelope(confidence)
        return lo, hi, {"pointwise_level": confidence}

    def inside(g: float) -> float:
        lo, hi = envelope(g)
        return float(np.mean(np.all((reps >= lo) & (reps <= hi), axis=1)))

    g_lo, g_hi = float(confidence), 1.0 - 0.5 / nb
    if inside(g_lo) >= confidence:
        g = g_lo
    else:
        for _ in range(30):
            mid = 0.5 * (g_lo + g_hi)
            if inside(mid) >= confidence:
                g_hi = mid
            else:
                g_lo = mid
            if g_hi - g_lo < 0.25 / nb:
                break
        g = g_hi
    lo, hi = envelope(g)
    return lo, hi, {"pointwise_level": g}
