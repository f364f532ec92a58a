"""The prior-shift check of :func:`mlflow_imbalance.stats.prevalence.estimate_prevalence`.

Score-axis bins of the test and production counts, their multinomial resampling, and the
goodness-of-fit test of the production counts against the fitted mixture ``eta p_pos + (1 -
eta) p_neg``: a Pearson statistic over the fit's bins and a cumulative (Cramer-von Mises-type)
statistic over finer bins, combined by their smaller p-value and calibrated together by one
parametric bootstrap that redraws the test set and the production batch from the fit (so the
test set's own noise is in the null). docs/statistics.md, "The prior-shift check", has the
measured level and power.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.production import ScoreCounts
from mlflow_imbalance.stats.bootstrap import _resample_bins


# ---------------------------------------------------------------------------- bins
@dataclass(frozen=True)
class _Bins:
    """A partition of the score axis by test thresholds.

    ``cuts`` are indices into ``counts.thresholds`` (increasing, i.e. descending scores):
    bin 0 holds scores ``>= thr[cuts[0]]``, bin i scores in ``[thr[cuts[i]], thr[cuts[i-1]])``
    and the last bin everything below ``thr[cuts[-1]]``.
    """

    cuts: np.ndarray
    edges: np.ndarray  # thr[cuts]
    pos: np.ndarray  # test positives per bin, len(cuts) + 1
    neg: np.ndarray
    prod: np.ndarray  # production cases per bin

    @property
    def k(self) -> int:
        return int(self.pos.size)


def _per_bin(cum: np.ndarray, total: int) -> np.ndarray:
    return np.diff(np.concatenate([[0], cum, [total]])).astype(np.int64)


def _make_bins(counts: RocCounts, prod: ScoreCounts, cuts: np.ndarray) -> _Bins:
    cuts = np.asarray(cuts, dtype=np.int64)
    edges = counts.thresholds[cuts]
    return _Bins(
        cuts=cuts,
        edges=edges,
        pos=_per_bin(counts.tp[cuts], int(counts.n_pos)),
        neg=_per_bin(counts.fp[cuts], int(counts.n_neg)),
        prod=_per_bin(np.asarray(prod.count_at_or_above(edges)), prod.n),
    )


def _resample(rng: np.random.Generator, d: np.ndarray, n: int, b: int) -> np.ndarray:
    """``b`` multinomial resamples of bin counts ``d`` (total ``n``), ``(b, K)`` int64."""
    return _resample_bins(rng, d, np.flatnonzero(d), n, b, d.size)


def _resample_p(rng: np.random.Generator, p: np.ndarray, n: int, b: int) -> np.ndarray:
    """``b`` draws of ``Multinomial(n, p)``, ``(b, K)`` int64."""
    out = np.zeros((b, p.size), dtype=np.int64)
    nz = np.flatnonzero(p > 0)
    out[:, nz] = rng.multinomial(n, p[nz] / p[nz].sum(), size=b)
    return out


# ---------------------------------------------------------------------------- the check
def _residuals(
    a: np.ndarray,
    b: np.ndarray,
    m: np.ndarray,
    eta: np.ndarray,
    n_pos: int,
    n_neg: int,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Standardised residuals of production counts ``m`` against the mixture, per row.

    ``a``, ``b``: the test positives' and negatives' shares (of a bin, or at or above a cut).
    The variance is the production multinomial's plus the test set's:
    ``n p (1 - p) + n^2 (eta^2 a (1 - a) / n_pos + (1 - eta)^2 b (1 - b) / n_neg)``.
    Returns ``(residuals, expected counts)``.
    """
    e = eta[:, None]
    p = e * a + (1 - e) * b
    var = n * p * (1 - p) + n * n * (
        e**2 * a * (1 - a) / n_pos + (1 - e) ** 2 * b * (1 - b) / n_neg
    )
    expected = n * p
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, (m - expected) / np.sqrt(var), 0.0)
    return z, expected


def _fit_stat(
    pos: np.ndarray,
    neg: np.ndarray,
    prod: np.ndarray,
    eta: np.ndarray,
    n_pos: int,
    n_neg: int,
    n: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pearson statistic of production bin counts against the fitted mixture, per row.

    Returns ``(statistic, standardised residuals, expected counts)`` (:func:`_residuals`).
    """
    z, expected = _residuals(pos / n_pos, neg / n_neg, prod, eta, n_pos, n_neg, n)
    return np.sum(z * z, axis=1), z, expected


#: Bins of the check's cumulative statistic: about this many, of equal expected production mass.
_CHECK_BINS = 64


def _check_cuts(counts: RocCounts, bins: _Bins, eta: float) -> np.ndarray:
    """The fit's cuts plus cuts at the fitted mixture's 1/64 quantiles (test thresholds).

    The fit's bins need ``c`` test positives *and* negatives each, so where one class is rare
    (the negatives' bulk at small eta) they are wide, and a shift there barely moves them; the
    cumulative statistic reads the production share at these finer cuts instead.
    """
    mix = eta * counts.tpr + (1 - eta) * counts.fpr  # share >= each threshold, ascending
    q = np.arange(1, _CHECK_BINS) / _CHECK_BINS
    extra = np.searchsorted(mix[:-1], q, side="left")
    extra = extra[extra < mix.size - 1]
    return np.union1d(bins.cuts, extra).astype(np.int64)


def _cumulative_stat(
    pos: np.ndarray,
    neg: np.ndarray,
    prod: np.ndarray,
    eta: np.ndarray,
    n_pos: int,
    n_neg: int,
    n: int,
) -> np.ndarray:
    """Mean squared standardised cumulative residual, per row (a Cramer-von Mises-type statistic).

    At each cut ``j`` (scores at or above it), ``D_j = M_j - n (eta A_j + (1 - eta) B_j)`` with
    the variance of :func:`_residuals` (production binomial plus the test set's); it sees a
    smooth misfit, such as a shift of the negatives' bulk, that no single bin shows.
    """
    a = np.cumsum(pos, axis=-1)[..., :-1] / n_pos
    b = np.cumsum(neg, axis=-1)[..., :-1] / n_neg
    m = np.cumsum(prod, axis=-1)[..., :-1]
    z, _ = _residuals(a, b, m, eta, n_pos, n_neg, n)
    return np.mean(z * z, axis=1)


def _min_p(observed: np.ndarray, replicates: np.ndarray) -> float:
    """p-value of the smaller of several statistics' bootstrap p-values, by the same bootstrap.

    ``observed`` ``(1, S)``, ``replicates`` ``(C, S)`` (large = misfit). Each replicate's own
    p-values come from the other replicates' ranks, so the combination keeps the level.
    """
    c = replicates.shape[0]
    srt = np.sort(replicates, axis=0)

    def p_of(x: np.ndarray) -> np.ndarray:  # (rows, S): share of replicates >= x
        ge = np.stack(
            [c - np.searchsorted(srt[:, j], x[:, j], side="left") for j in range(x.shape[1])],
            axis=1,
        )
        return (1 + ge) / (c + 1)

    p_obs = float(p_of(observed).min())
    p_rep = p_of(replicates).min(axis=1)
    return float((1 + np.sum(p_rep <= p_obs)) / (c + 1))


def check_p_value(
    counts: RocCounts,
    prod: ScoreCounts,
    mle_bins: _Bins,
    eta_fit: float,
    stat0: float,
    n_check: int,
    rng: np.random.Generator,
    refit: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> float:
    """The check's p-value: ``n_check`` parametric-bootstrap replicates from the fit.

    ``stat0`` is the observed Pearson statistic on ``mle_bins``; ``refit(a, b, m)`` the
    maximum-likelihood fit of each replicate (rows of bin shares ``a``, ``b`` and counts
    ``m``), so the replicates carry the fit's own estimation error.
    """
    n_pos, n_neg, n = int(counts.n_pos), int(counts.n_neg), prod.n
    eta0 = np.asarray([eta_fit])
    fine = _make_bins(counts, prod, _check_cuts(counts, mle_bins, eta_fit))
    coarse = np.searchsorted(fine.cuts, mle_bins.cuts)  # fine bins -> the fit's bins
    starts = np.r_[0, coarse + 1]
    cum0 = _cumulative_stat(fine.pos[None], fine.neg[None], fine.prod[None], eta0, n_pos, n_neg, n)
    mix = eta_fit * fine.pos / n_pos + (1 - eta_fit) * fine.neg / n_neg
    c = int(n_check)
    pp = _resample(rng, fine.pos, n_pos, c)
    qq = _resample(rng, fine.neg, n_neg, c)
    mm = _resample_p(rng, mix, n, c)
    pc, qc, mc = (np.add.reduceat(x, starts, axis=1) for x in (pp, qq, mm))
    eta_star = refit(pc / n_pos, qc / n_neg, mc.astype(np.float64))
    stat_star, _, _ = _fit_stat(pc, qc, mc, eta_star, n_pos, n_neg, n)
    cum_star = _cumulative_stat(pp, qq, mm, eta_star, n_pos, n_neg, n)
    return _min_p(np.c_[[stat0], cum0], np.c_[stat_star, cum_star])
