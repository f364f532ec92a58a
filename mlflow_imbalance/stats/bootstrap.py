"""The count bootstrap and the statistics evaluated on its replicates.

* :func:`bootstrap_counts` -- each class's per-threshold counts are resampled multinomially,
  which is exactly equal in distribution to resampling (score, label) pairs within each class,
  at O(B*K) instead of O(B*n log n).
* :class:`Statistic` -- a batched statistic ``stat(tp, fp) -> (b, G)``: :func:`metric_statistic`
  (AP, PR-AUC, max-F1, F1 against η), :func:`roc_statistic`, :func:`pr_statistic`,
  :func:`roc_auc_statistic`, :func:`min_cost_statistic`, :func:`chosen_cost_statistic`.
* :func:`bootstrap_statistics` -- every statistic on ONE shared set of replicates (intervals,
  bands and flip tests of a run stay consistent and the draw is paid once);
  :func:`bootstrap_statistic` for one.
* :func:`bayesian_counts`, :func:`bayesian_statistics` -- the Bayesian count bootstrap with a
  Jeffreys pseudo-negative above the top threshold (why and how:
  :mod:`mlflow_imbalance.stats.posterior`, which builds the credible bands from its draws).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_prevalence
from mlflow_imbalance.stats._batch import (
    _LOGISTIC_MAX_CURVATURE,
    _check_metric_args,
    _metric_batch,
    _positive_columns,
    _pr_auc_error_bound,
    _threshold_column,
)
from mlflow_imbalance.stats._checks import _plain, _require_unweighted

__all__ = [
    "DEPOSIT_MIN_WORK",
    "DEPOSIT_STEP",
    "EXACT_MAX_PREVALENCES",
    "PSEUDO_NEGATIVES",
    "Statistic",
    "bayesian_counts",
    "bayesian_statistics",
    "bootstrap_counts",
    "bootstrap_statistic",
    "bootstrap_statistics",
    "chosen_cost_statistic",
    "default_fpr_grid",
    "metric_statistic",
    "min_cost_statistic",
    "pr_statistic",
    "roc_auc_statistic",
    "roc_statistic",
]

#: ``K * M`` above which the bootstrap kernels of AP and PR-AUC switch from exact sums to the
#: linear-deposit grid (AP error <= 1.2e-6, PR-AUC error <= 2.1e-6 at step 0.01).
DEPOSIT_MIN_WORK = 200_000
#: Grid step (in log(FPR/TPR)) of the deposit kernels.
DEPOSIT_STEP = 0.01
#: Prevalences per call up to which the exact sums are cheaper than the deposit kernels, whose
#: cost does not grow with the number of prevalences (measured at K = 170-530 thresholds and
#: b = 1000 replicates: the exact AP sum costs ~3 ns per (replicate, threshold, prevalence)
#: against ~95 ns per (replicate, threshold) for the deposit; PR-AUC ~40 ns against ~300 ns).
EXACT_MAX_PREVALENCES = {"ap": 16, "pr_auc": 6}


def _rng(seed: Any) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _check_bootstrappable(c: RocCounts) -> None:
    """Counts the count bootstrap can resample: a ``RocCounts``, unweighted.

    Raises:
        TypeError: ``c`` is not a :class:`RocCounts`.
        InsufficientDataError: weighted counts (a ``ValueError``; the report isolates the run).
    """
    if not isinstance(c, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(c).__name__}")
    _require_unweighted(c, "the count bootstrap (bootstrap the raw weighted data instead)")


def default_fpr_grid(n_neg: float) -> np.ndarray:
    """The ROC band's default FPR grid: 100 log-spaced FPRs from ``max(1e-6, 1/n_neg)`` to 1.

    (``1/n_neg`` capped at 1, for weighted counts whose negatives weigh less than one.)

    Strictly increasing by construction: with a single negative (``1/n_neg = 1``) it is the one
    point ``[1.0]``, where TPR is 1 by definition, so the ROC band there says nothing about
    lower FPRs and the PR band mapped from it spans every precision the data cannot exclude
    (:func:`~mlflow_imbalance.stats.bands.pr_band_from_roc`): an honest "not known".
    """
    lo = min(max(1e-6, 1.0 / float(n_neg)), 1.0)  # weighted: n_neg may be below 1
    return np.unique(np.logspace(math.log10(lo), 0.0, 100))


def bootstrap_counts(
    counts: RocCounts,
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Count bootstrap: yield chunks of resampled cumulative ``(tp, fp)``, shape ``(b, K)``.

    Each class is resampled separately (the class totals are fixed, as in a stratified
    bootstrap): the per-threshold positive counts are drawn from
    ``Multinomial(n_pos, pos_k / n_pos)`` and the negatives likewise. Drawing ``n`` examples
    with replacement from a class and counting them per threshold gives exactly this
    distribution, so this equals resampling (score, label) pairs within each class, at O(B*K).
    Lossless compression does not change the result: merging bins of a multinomial is the
    multinomial of the merged bins, and compression only merges negatives between two
    positive thresholds.

    Args:
        counts: unweighted ROC counts.
        n_boot: number of replicates.
        seed: int, ``numpy.random.Generator`` or None; the same seed gives the same replicates.
        chunk_size: replicates per chunk (default: bounded to about 4e6 numbers per array).

    Yields:
        ``(tp, fp)`` int64 arrays of shape ``(b, K)``, cumulative along thresholds.
    """
    _check_bootstrappable(counts)
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {_plain(n_boot)!r}")
    rng = _rng(seed)
    dpos, dneg = counts.per_threshold()
    k = dpos.size
    if chunk_size is None:
        chunk_size = max(1, min(int(n_boot), int(4_000_000 // max(k, 1))))
    # Only bins that hold something need drawing (the others stay 0).
    ip, ineg = np.flatnonzero(dpos), np.flatnonzero(dneg)
    done = 0
    while done < n_boot:
        b = min(chunk_size, int(n_boot) - done)
        tp = _resample_bins(rng, dpos, ip, int(counts.n_pos), b, k)
        fp = _resample_bins(rng, dneg, ineg, int(counts.n_neg), b, k)
        np.cumsum(tp, axis=1, out=tp)
        np.cumsum(fp, axis=1, out=fp)
        done += b
        yield tp, fp


def _resample_bins(
    rng: np.random.Generator, d: np.ndarray, nz: np.ndarray, n: int, b: int, k: int
) -> np.ndarray:
    """``b`` draws of ``Multinomial(n, d / n)`` over ``k`` bins, shape ``(b, k)`` int64.

    Two exact samplers: with few examples per occupied bin (``n <= 2 * len(nz)``) draw the ``n``
    example indices with replacement and count them per bin (O(b*n)); otherwise numpy's
    multinomial over the occupied bins (O(b*len(nz))).
    """
    out = np.zeros((b, k), dtype=np.int64)
    if n <= 2 * nz.size:
        bin_of = np.repeat(nz, d[nz].astype(np.int64))
        draws = bin_of[rng.integers(0, n, size=(b, n))]
        draws += (np.arange(b, dtype=np.int64) * k)[:, None]
        out.reshape(-1)[:] = np.bincount(draws.reshape(-1), minlength=b * k)
    else:
        pz = d[nz] / float(d[nz].sum())
        out[:, nz] = rng.multinomial(n, pz, size=b)
    return out


def bootstrap_statistic(
    counts: RocCounts,
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
) -> np.ndarray:
    """Evaluate ``statistic(tp, fp) -> (b, G)`` on count-bootstrap replicates; returns (B, G)."""
    parts = [statistic(tp, fp) for tp, fp in bootstrap_counts(counts, n_boot, seed, chunk_size)]
    return np.concatenate(parts, axis=0)


def _interp_rows(xq: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise linear interpolation of non-decreasing rows ``x`` in [0, 1] at ``xq``.

    At a vertical step (ties in x) the value after the step is used: the query is placed after
    the last point with ``x <= xq``.
    """
    b, k = x.shape
    off = 2.0 * np.arange(b)[:, None]
    flat = (x + off).ravel()
    q = (xq[None, :] + off).ravel()
    j = np.searchsorted(flat, q, side="right") - 1  # last point with x <= q (global index)
    row_start = (np.arange(b) * k).repeat(xq.size)
    j = np.clip(j, row_start, row_start + k - 1)
    j1 = np.minimum(j + 1, row_start + k - 1)
    x0, x1 = flat[j], flat[j1]
    y0, y1 = y.ravel()[j], y.ravel()[j1]
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(x1 > x0, (q - x0) / (x1 - x0), 0.0)
    return (y0 + np.clip(lam, 0, 1) * (y1 - y0)).reshape(b, xq.size)


def _with_origin(tp: np.ndarray, n: float) -> np.ndarray:
    return np.concatenate([np.zeros((tp.shape[0], 1)), tp / n], axis=1)


class Statistic:
    """A batched statistic of count-bootstrap replicates: ``stat(tp, fp) -> (b, G)``.

    Built by :func:`metric_statistic`, :func:`roc_statistic`, :func:`pr_statistic`,
    :func:`roc_auc_statistic` or :func:`min_cost_statistic` and evaluated, together with any
    others, on one shared set of replicates by :func:`bootstrap_statistics`.

    Attributes:
        name: what it computes (e.g. ``"ap"``, ``"roc"``).
        grid: the x values of its ``G`` outputs (prevalences, FPRs, recalls or ``[0]``).
        grid_name: what ``grid`` holds.
        max_error: largest absolute error of the kernel against the exact statistic (0 when
            exact; the deposit kernels state their bound).
    """

    def __init__(
        self,
        name: str,
        grid: np.ndarray,
        grid_name: str,
        fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
        max_error: float = 0.0,
    ) -> None:
        """Wrap ``fn(tp, fp) -> (b, G)`` with its grid and error bound."""
        self.name, self.grid, self.grid_name = name, np.asarray(grid, float), grid_name
        self.fn, self.max_error = fn, float(max_error)

    def __call__(self, tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        """Evaluate on cumulative counts of shape ``(b, K)``; returns ``(b, G)``."""
        return self.fn(np.asarray(tp, dtype=float), np.asarray(fp, dtype=float))

    def estimate(self, counts: RocCounts) -> np.ndarray:
        """The statistic of ``counts`` itself, shape ``(G,)``."""
        return self(np.asarray(counts.tp, float)[None], np.asarray(counts.fp, float)[None])[0]

    def __repr__(self) -> str:
        return f"Statistic({self.name!r}, G={self.grid.size}, max_error={self.max_error:.2g})"


def metric_statistic(
    counts: RocCounts,
    metric: str,
    prevalences: Any = None,
    *,
    threshold: float | None = None,
    grid_step: float | str | None = "auto",
) -> Statistic:
    """AP, PR-AUC, max-F1 or F1 (at ``threshold``) over ``prevalences`` as a :class:`Statistic`.

    ``grid_step="auto"`` sums exactly when a call's work ``b * K * M <= DEPOSIT_MIN_WORK``
    (``b`` replicates) or there are few prevalences (``M <= EXACT_MAX_PREVALENCES[metric]``:
    then the exact sums are also the faster) and otherwise uses the linear-deposit kernels (step
    :data:`DEPOSIT_STEP` in ``log(FPR/TPR)``) for AP and PR-AUC; ``max_error`` states their
    bound (an upper bound: small calls are exact). max-F1 and F1 are always exact.
    """
    eta = _check_metric_args(metric, prevalences, threshold)
    # the positive columns, and the lowest threshold: it holds no positive in the counts (zero
    # weight, no effect on the estimate or on count-bootstrap replicates) but can in Bayesian
    # draws, whose pseudo-positive sits there (:func:`bayesian_counts`)
    cols = _positive_columns(counts)  # sorted and distinct: append the last if missing
    if cols.size == 0 or cols[-1] != counts.n_thresholds - 1:  # (np.union1d, without a sort)
        cols = np.append(cols, counts.n_thresholds - 1)
    col = _threshold_column(counts, threshold) if metric == "f1" else None
    auto = grid_step == "auto"
    step: float | None
    if auto:
        step = DEPOSIT_STEP
    else:
        step = None if grid_step is None else float(grid_step)  # type: ignore[arg-type]
    if metric not in ("ap", "pr_auc"):
        step = None
    err = 0.0
    if step is not None:
        err = step**2 * _LOGISTIC_MAX_CURVATURE / 8 if metric == "ap" else _pr_auc_error_bound(step)
    n_pos, n_neg = counts.n_pos, counts.n_neg

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        use = step
        if auto and (
            tp.shape[0] * cols.size * eta.size <= DEPOSIT_MIN_WORK
            or eta.size <= EXACT_MAX_PREVALENCES.get(metric, 0)
        ):
            use = None  # small: exact sums are cheap
        return _metric_batch(metric, tp, fp, n_pos, n_neg, eta, cols, col, use)

    s = Statistic(metric, eta, "prevalence", fn, err)
    s.grid_step = step  # type: ignore[attr-defined]
    return s


def roc_statistic(counts: RocCounts, fpr_grid: Any = None) -> Statistic:
    """TPR at each FPR of a grid on the linearly interpolated ROC curve (see :func:`roc_band`).

    The default grid is :func:`default_fpr_grid` (strictly increasing for any ``n_neg``).
    """
    if fpr_grid is None:
        fpr_grid = default_fpr_grid(counts.n_neg)
    grid = np.asarray(fpr_grid, dtype=float)
    if grid.ndim != 1 or np.any((grid < 0) | (grid > 1)):
        raise ValueError("fpr_grid must be a 1-d array of values in [0, 1]")
    n_pos, n_neg = counts.n_pos, counts.n_neg

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        return _interp_rows(grid, _with_origin(fp, n_neg), _with_origin(tp, n_pos))

    return Statistic("roc", grid, "fpr", fn)


def pr_statistic(counts: RocCounts, prevalence: float, recall_grid: Any = None) -> Statistic:
    """Precision at each recall of the PR curve at ``prevalence`` (see :func:`pr_band`)."""
    eta = float(check_prevalence(prevalence, "prevalence"))
    grid = np.linspace(0.01, 1.0, 100) if recall_grid is None else np.asarray(recall_grid, float)
    if grid.ndim != 1 or np.any((grid <= 0) | (grid > 1)):
        raise ValueError("recall_grid must be a 1-d array of values in (0, 1]")
    o = eta / (1 - eta)
    n_pos, n_neg = counts.n_pos, counts.n_neg

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        t = _with_origin(tp, n_pos)
        f = _with_origin(fp, n_neg)
        # FPR at TPR = r: first point reaching r and its predecessor (side='left').
        b, k = t.shape
        off = 2.0 * np.arange(b)[:, None]
        flat = (t + off).ravel()
        q = (grid[None, :] + off).ravel()
        j = np.searchsorted(flat, q, side="left")
        row_start = (np.arange(b) * k).repeat(grid.size)
        j = np.clip(j, row_start + 1, row_start + k - 1)
        t0, t1 = flat[j - 1], flat[j]
        f0, f1 = f.ravel()[j - 1], f.ravel()[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(t1 > t0, (q - t0) / (t1 - t0), 1.0)
        fq = (f0 + np.clip(lam, 0, 1) * (f1 - f0)).reshape(b, grid.size)
        return o * grid / (o * grid + fq)

    s = Statistic("pr", grid, "recall", fn)
    s.prevalence = eta  # type: ignore[attr-defined]
    return s


def roc_auc_statistic(counts: RocCounts) -> Statistic:
    """ROC-AUC (trapezoid through the origin and the stored points, closed at (1, 1))."""
    n_pos, n_neg = counts.n_pos, counts.n_neg

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        b = tp.shape[0]
        t = np.concatenate([np.zeros((b, 1)), tp / n_pos, np.ones((b, 1))], axis=1)
        f = np.concatenate([np.zeros((b, 1)), fp / n_neg, np.ones((b, 1))], axis=1)
        return np.sum(np.diff(f, axis=1) * (t[:, 1:] + t[:, :-1]) / 2, axis=1)[:, None]

    return Statistic("roc_auc", np.zeros(1), "none", fn)


def min_cost_statistic(
    counts: RocCounts, prevalences: Any, cost_fp: float = 1.0, cost_fn: float = 1.0
) -> Statistic:
    """Lowest expected cost per example over thresholds (and the two trivial classifiers).

    ``cost = FPR (1 - eta) C_FP + (1 - TPR) eta C_FN`` minimised over the stored points plus
    (0, 0) and (1, 1), at each ``eta``.
    """
    eta = np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    n_pos, n_neg = counts.n_pos, counts.n_neg
    cfp, cfn = float(cost_fp), float(cost_fn)

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        b = tp.shape[0]
        t = np.concatenate([np.zeros((b, 1)), tp / n_pos, np.ones((b, 1))], axis=1)
        f = np.concatenate([np.zeros((b, 1)), fp / n_neg, np.ones((b, 1))], axis=1)
        # f (1 - e) C_FP + (1 - t) e C_FN per eta, the same operations in the same order, into
        # two buffers (1 - t formed once): no temporaries per eta
        miss = 1 - t
        cost, part = np.empty_like(f), np.empty_like(f)
        out = np.empty((b, eta.size))
        for i, e in enumerate(eta):
            np.multiply(f, 1 - e, out=cost)
            cost *= cfp
            np.multiply(miss, e, out=part)
            part *= cfn
            cost += part
            np.min(cost, axis=1, out=out[:, i])
        return out

    return Statistic("min_cost", eta, "prevalence", fn)


def chosen_cost_statistic(
    counts: RocCounts, prevalences: Any, cost_fp: float = 1.0, cost_fn: float = 1.0
) -> Statistic:
    """Expected cost per example at the threshold where ``counts`` has its lowest cost.

    The threshold is chosen once, on ``counts`` (per ``eta``, among the stored points and the
    two trivial classifiers, as :func:`min_cost_statistic`), and then held fixed: on a
    replicate this is the cost of *that* threshold, with no minimum taken again, capped at
    the costs of the two trivial classifiers, ``eta C_FN`` (flag nothing) and
    ``(1 - eta) C_FP`` (flag everything), which are known exactly. The true lowest cost is at
    most the true cost of any fixed classifier, so an upper limit of this statistic is an
    upper limit of the lowest cost that involves no selection over thresholds
    (:func:`mlflow_imbalance.stats.posterior.min_cost_interval`). Without the cap a threshold
    chosen near the top at eta = 1e-4 (a few cases flagged) gave upper limits 2.5-40 times
    above the flag-nothing cost that bounds the minimum anyway.
    """
    eta = np.atleast_1d(check_prevalence(prevalences, "prevalences")).astype(float)
    n_pos, n_neg = counts.n_pos, counts.n_neg
    cfp, cfn = float(cost_fp), float(cost_fn)
    t0 = np.r_[0.0, counts.tpr, 1.0]
    f0 = np.r_[0.0, counts.fpr, 1.0]
    pick = np.array([int(np.argmin(f0 * (1 - e) * cfp + (1 - t0) * e * cfn)) for e in eta])
    cap = np.minimum(eta * cfn, (1 - eta) * cfp)

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        b = tp.shape[0]
        t = np.concatenate([np.zeros((b, 1)), tp / n_pos, np.ones((b, 1))], axis=1)[:, pick]
        f = np.concatenate([np.zeros((b, 1)), fp / n_neg, np.ones((b, 1))], axis=1)[:, pick]
        return np.minimum(f * (1 - eta) * cfp + (1 - t) * eta * cfn, cap)

    return Statistic("chosen_cost", eta, "prevalence", fn)


def bootstrap_statistics(
    counts: RocCounts,
    statistics: Mapping[str, Callable[[np.ndarray, np.ndarray], np.ndarray]],
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
) -> dict[str, np.ndarray]:
    """Every statistic on ONE shared set of count-bootstrap replicates: ``{name: (B, G)}``.

    The replicates are drawn once (:func:`bootstrap_counts`, chunked) and each chunk is handed
    to every statistic before the next is drawn, so intervals, bands and flip tests of one run
    share the same resamples (consistent with each other) and the draw is paid once.
    """
    if not statistics:
        raise ValueError("statistics is empty")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in statistics}
    for tp, fp in bootstrap_counts(counts, n_boot, seed, chunk_size):
        tpf, fpf = tp.astype(float), fp.astype(float)
        for k, stat in statistics.items():
            parts[k].append(np.asarray(stat(tpf, fpf), dtype=float))
    return {k: np.concatenate(v, axis=0) for k, v in parts.items()}


# ---------------------------------------------------------------------------- Bayesian
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
    masses: negatives ``Dirichlet(pseudo, neg_k)`` with the pseudo cell above the first
    threshold, positives ``Dirichlet(pos_k + pseudo * [k = K])`` with the pseudo-positive at
    the lowest threshold (a positive scoring below every observed one; see
    :mod:`mlflow_imbalance.stats.posterior`). O(B*K).

    Args:
        counts: unweighted counts.
        n_boot: number of draws.
        seed: int, Generator or None.
        chunk_size: draws per chunk (default bounded to ~4e6 numbers per array).
        pseudo_negatives: Jeffreys pseudo-count of the top negative cell and of the bottom
            positive one (0 gives Rubin's plain Bayesian bootstrap, which under-covers at low
            prevalence).

    Yields:
        ``(tp, fp)`` float64 arrays ``(b, K)``, cumulative, ending at ``n_pos``/``n_neg``.
    """
    for tp, fp, _ in _draws(counts, n_boot, seed, chunk_size, pseudo_negatives):
        yield tp, fp


def _draws(
    counts: RocCounts,
    n_boot: int,
    seed: Any,
    chunk_size: int | None,
    pseudo_negatives: float,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`bayesian_counts` plus the same draws without the pseudo cell: ``(tp, fp, fp0)``."""
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
        if a0 > 0:
            gp[:, -1] += rng.standard_gamma(a0, size=b)  # the pseudo-positive, at the bottom
        np.cumsum(gp, axis=1, out=gp)
        gp *= n_pos / gp[:, -1:]
        np.cumsum(gn, axis=1, out=gn)
        g0 = gn * (n_neg / gn[:, -1:])
        gn += top
        gn *= n_neg / gn[:, -1:]
        done += b
        yield gp, gn, g0


def bayesian_statistics(
    counts: RocCounts,
    statistics: Mapping[str, Callable[[np.ndarray, np.ndarray], np.ndarray]],
    n_boot: int = 1000,
    seed: Any = None,
    chunk_size: int | None = None,
    pseudo_negatives: float = PSEUDO_NEGATIVES,
    base_for: Collection[str] = (),
) -> dict[str, np.ndarray]:
    """Every statistic on ONE shared set of Bayesian count-bootstrap draws: ``{name: (B, G)}``.

    For each name in ``base_for`` also ``"<name>:base"``: the statistic on the same draws
    without the pseudo-negative (Rubin's plain Bayesian bootstrap), which
    :func:`mlflow_imbalance.stats.posterior.recentre_max` uses to remove the selection bias of a
    maximum over thresholds.
    """
    if not statistics:
        raise ValueError("statistics is empty")
    names = list(statistics) + [f"{k}:base" for k in base_for]
    parts: dict[str, list[np.ndarray]] = {k: [] for k in names}
    for tp, fp, fp0 in _draws(counts, n_boot, seed, chunk_size, pseudo_negatives):
        for key, stat in statistics.items():
            parts[key].append(np.asarray(stat(tp, fp), dtype=float))
            if key in base_for:
                parts[f"{key}:base"].append(np.asarray(stat(tp, fp0), dtype=float))
    return {key: np.concatenate(v, axis=0) for key, v in parts.items()}
