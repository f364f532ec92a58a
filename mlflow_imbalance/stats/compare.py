"""Tests comparing two runs: DeLong (paired and unpaired), partial AUC, AP and expected cost.

* :func:`delong_test` -- paired DeLong test of ROC-AUC on the same examples (DeLong, DeLong &
  Clarke-Pearson 1988; the test of pROC's ``roc.test(paired=TRUE, method="delong")``),
  vectorised through mid-ranks (Sun & Xu 2014), O(n log n).
* :func:`delong_test_unpaired` -- the same for independent test sets, from the counts alone.
* :func:`partial_auc_interval`, :func:`partial_auc_test` -- partial AUC over FPR in
  ``[0, max_fpr]``: bootstrap interval and test (pROC's bootstrap method for partial AUC).
* :func:`paired_metric_test`, :func:`cost_difference_test` -- AP, PR-AUC, max-F1 or the lowest
  expected cost at a chosen prevalence: paired bootstrap when both runs' scores on the same
  examples are given, else independent count bootstraps.

Every test returns a frozen :class:`ComparisonTest` with ``.z``, ``.p_value``, ``.difference``
(A minus B), the two estimates, the interval of the difference and the method text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.metrics import partial_auc
from mlflow_imbalance.core.validation import (
    as_1d_array,
    binarize_labels,
    check_max_fpr,
    check_prevalence,
    check_same_length,
    check_scores,
)
from mlflow_imbalance.stats._checks import (
    InsufficientDataError,
    _check_confidence,
    _require_class_sizes,
)
from mlflow_imbalance.stats.auc import delong_variance
from mlflow_imbalance.stats.bootstrap import (
    Statistic,
    _check_bootstrappable,
    _rng,
    bayesian_statistics,
    bootstrap_counts,
    metric_statistic,
    min_cost_statistic,
)
from mlflow_imbalance.stats.headline import thin_for_bootstrap

__all__ = [
    "COMPARE_METRICS",
    "ComparisonTest",
    "PartialAucInterval",
    "cost_difference_test",
    "delong_components",
    "delong_test",
    "delong_test_unpaired",
    "paired_metric_test",
    "partial_auc_interval",
    "partial_auc_test",
]

#: Metrics :func:`paired_metric_test` compares (``min_cost``: lowest expected cost at eta).
COMPARE_METRICS = ("ap", "pr_auc", "max_f1", "min_cost", "partial_auc")


@dataclass(frozen=True)
class ComparisonTest:
    """Result of comparing run A with run B (all differences are A minus B).

    Attributes:
        z: standardised difference ``difference / se`` (0 when both are 0).
        p_value: two-sided p-value from the normal reference distribution.
        difference: estimate of A minus B.
        estimate_a: the statistic of run A (``auc_a`` for the DeLong tests).
        estimate_b: the statistic of run B.
        se: standard error of the difference.
        low: lower limit of the interval of the difference.
        high: upper limit.
        confidence: level of the interval.
        method: how it was computed (paired or not, variance, reference distribution).
        paired: True when both runs were evaluated on the same examples.
        metric: what is compared (``"roc_auc"``, ``"ap"``, ...).
        prevalence: eta of a prevalence-dependent metric (None otherwise).
    """

    z: float
    p_value: float
    difference: float
    estimate_a: float
    estimate_b: float
    se: float
    low: float
    high: float
    confidence: float
    method: str
    paired: bool
    metric: str = "roc_auc"
    prevalence: float | None = None

    @property
    def auc_a(self) -> float:
        """Run A's (partial) AUC (alias of ``estimate_a``)."""
        return self.estimate_a

    @property
    def auc_b(self) -> float:
        """Run B's (partial) AUC (alias of ``estimate_b``)."""
        return self.estimate_b

    def significant(self, alpha: float | None = None) -> bool:
        """True when ``p_value < alpha`` (default ``1 - confidence``)."""
        a = 1.0 - self.confidence if alpha is None else float(alpha)
        return bool(self.p_value < a)


def _normal_result(
    diff: float,
    se: float,
    est_a: float,
    est_b: float,
    conf: float,
    method: str,
    paired: bool,
    metric: str,
    prevalence: float | None = None,
) -> ComparisonTest:
    """z, two-sided normal p and the Wald interval ``diff +- z_{(1+conf)/2} se``.

    A zero standard error gives ``z = 0, p = 1`` for a zero difference (pROC's convention for
    identical curves) and ``z = +-inf, p = 0`` otherwise.
    """
    if se > 0 and math.isfinite(se):
        z = diff / se
    elif diff == 0 or not math.isfinite(se):
        z = 0.0
    else:
        z = math.copysign(math.inf, diff)
    p = float(2.0 * stats.norm.sf(abs(z)))
    q = float(stats.norm.ppf((1.0 + conf) / 2.0))
    return ComparisonTest(
        z=float(z),
        p_value=min(1.0, p),
        difference=float(diff),
        estimate_a=float(est_a),
        estimate_b=float(est_b),
        se=float(se),
        low=float(diff - q * se),
        high=float(diff + q * se),
        confidence=conf,
        method=method,
        paired=paired,
        metric=metric,
        prevalence=prevalence,
    )


# ---------------------------------------------------------------------------- DeLong
def _midranks(x: np.ndarray) -> np.ndarray:
    """1-based mid-ranks of ``x`` (tied values share the mean of their ranks), O(n log n)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    n = xs.size
    start = np.r_[True, xs[1:] != xs[:-1]]
    first = np.flatnonzero(start)
    last = np.r_[first[1:], n]
    mid = (first + last + 1) / 2.0
    out = np.empty(n, dtype=np.float64)
    out[order] = mid[np.cumsum(start) - 1]
    return out


def _placements(score: np.ndarray, is_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's placement values of one score vector.

    ``V10_i = (#neg < x_i + #neg = x_i / 2) / n_neg`` for each positive and
    ``V01_j = (#pos > y_j + #pos = y_j / 2) / n_pos`` for each negative (DeLong et al. 1988,
    §2; ties count 1/2 as in pROC's ``delongPlacements``), from mid-ranks: ``V10_i =
    (R_all(x_i) - R_pos(x_i)) / n_neg`` and ``V01_j = 1 - (R_all(y_j) - R_neg(y_j)) / n_pos``
    (Sun & Xu 2014).
    """
    pos, neg = score[is_pos], score[~is_pos]
    m, n = pos.size, neg.size
    r_all = _midranks(score)
    v10 = (r_all[is_pos] - _midranks(pos)) / n
    v01 = 1.0 - (r_all[~is_pos] - _midranks(neg)) / m
    return v10, v01


def delong_components(y_true: Any, scores: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AUCs and DeLong's structural-component covariances of several scores on one example set.

    Args:
        y_true: binary labels (``n``,).
        scores: array ``(r, n)`` (or ``(n,)``) of ``r`` runs' scores on the same examples;
            higher means more likely positive.

    Returns:
        ``(auc, s10, s01)``: AUCs ``(r,)``, the covariance ``(r, r)`` of the positives'
        placement values ``V10`` and that of the negatives' ``V01`` (ddof 1). The covariance of
        the AUC estimates is ``s10 / n_pos + s01 / n_neg`` (DeLong et al. 1988, eq. 2-4).

    Raises:
        InsufficientDataError: fewer than 2 positives or 2 negatives (no sample variance).
    """
    y = as_1d_array(y_true, "y_true")
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    is_pos = binarize_labels(y, name="y_true")
    if s.shape[1] != is_pos.size:
        raise ValueError(
            f"scores hold {s.shape[1]} values per run but y_true has {is_pos.size} labels"
        )
    m, n = int(is_pos.sum()), int((~is_pos).sum())
    if m < 2 or n < 2:
        few, word = (n, "negative") if n < 2 else (m, "positive")
        raise InsufficientDataError(
            f"{few} {word}{'' if few == 1 else 's'} (of {m} positive{'' if m == 1 else 's'} and "
            f"{n} negative{'' if n == 1 else 's'}): DeLong's variance needs at least 2 positives "
            "and 2 negatives"
        )
    v10 = np.empty((s.shape[0], m))
    v01 = np.empty((s.shape[0], n))
    for r in range(s.shape[0]):
        if not np.all(np.isfinite(s[r])):
            raise ValueError("scores must be finite (no NaN or inf)")
        v10[r], v01[r] = _placements(s[r], is_pos)
    auc = v10.mean(axis=1)
    s10 = np.atleast_2d(np.cov(v10, ddof=1))
    s01 = np.atleast_2d(np.cov(v01, ddof=1))
    return auc, s10, s01


def delong_test(
    y_true: Any, score_a: Any, score_b: Any, *, confidence: float = 0.95
) -> ComparisonTest:
    """Paired DeLong test of ROC-AUC: two runs scored on the same examples.

    DeLong, DeLong & Clarke-Pearson (1988): with the placement values of both runs, the AUC
    difference has variance ``(S10_aa + S10_bb - 2 S10_ab) / n_pos + (S01_aa + S01_bb - 2
    S01_ab) / n_neg``; ``z = (AUC_a - AUC_b) / se`` is compared with the standard normal
    (two-sided). This is pROC's ``roc.test(roc_a, roc_b, paired=TRUE, method="delong")``: same
    placement values (ties 1/2), same variance, same ``z`` and ``p``, and its interval of the
    difference ``diff +- z_{(1+conf)/2} se``. Scores are oriented "higher = more positive" (pROC's
    ``direction="<"``). Cost O(n log n).

    Args:
        y_true: binary labels of the shared examples.
        score_a: run A's scores on them.
        score_b: run B's scores on the same examples, in the same order.
        confidence: level of the interval of the difference.

    Returns:
        :class:`ComparisonTest` (``.z``, ``.p_value``, ``.difference`` = AUC_a - AUC_b,
        ``.auc_a``, ``.auc_b``, ``.low``, ``.high``, ``.method``).
    """
    conf = _check_confidence(confidence)
    y = as_1d_array(y_true, "y_true")
    sa = check_scores(score_a, "score_a")
    sb = check_scores(score_b, "score_b")
    check_same_length([y, sa, sb], ["y_true", "score_a", "score_b"])
    auc, s10, s01 = delong_components(y, np.vstack([sa, sb]))
    is_pos = binarize_labels(y, name="y_true")
    m, n = float(is_pos.sum()), float((~is_pos).sum())
    var = (s10[0, 0] + s10[1, 1] - 2 * s10[0, 1]) / m + (s01[0, 0] + s01[1, 1] - 2 * s01[0, 1]) / n
    se = math.sqrt(max(float(var), 0.0))
    method = (
        f"paired DeLong test (DeLong et al. 1988; pROC roc.test paired), two-sided normal, "
        f"{conf:.0%} interval of the difference"
    )
    return _normal_result(float(auc[0] - auc[1]), se, auc[0], auc[1], conf, method, True, "roc_auc")


def _delong_from_counts(c: RocCounts) -> tuple[float, float]:
    """ROC-AUC and DeLong's variance from counts (:func:`.auc.delong_variance`), checked.

    Raises:
        InsufficientDataError: weighted counts, or fewer than 2 positives or 2 negatives.
    """
    _check_bootstrappable(c)
    _require_class_sizes(c, 2, "DeLong's variance")
    return delong_variance(c)


def delong_test_unpaired(
    counts_a: RocCounts, counts_b: RocCounts, *, confidence: float = 0.95
) -> ComparisonTest:
    """DeLong test of ROC-AUC for two runs evaluated on independent test sets, from counts.

    Each run's AUC variance is DeLong's ``S10 / n_pos + S01 / n_neg``, computed exactly from its
    counts (the placement value of an example depends only on its threshold's cumulative
    counts); the difference of independent estimates has variance ``var_a + var_b`` and ``z =
    (AUC_a - AUC_b) / sqrt(var_a + var_b)`` is compared with the standard normal. (pROC's
    unpaired DeLong uses the same statistic with a Welch-Satterthwaite t reference; at the
    sample sizes this package is for the two agree to the 3rd digit.)

    Args:
        counts_a: unweighted counts of run A.
        counts_b: unweighted counts of run B (another test set).
        confidence: level of the interval of the difference.

    Returns:
        :class:`ComparisonTest` with the same fields as :func:`delong_test`.
    """
    conf = _check_confidence(confidence)
    auc_a, var_a = _delong_from_counts(counts_a)
    auc_b, var_b = _delong_from_counts(counts_b)
    se = math.sqrt(max(var_a + var_b, 0.0))
    method = (
        f"unpaired DeLong test (independent test sets; variances from the counts), two-sided "
        f"normal, {conf:.0%} interval of the difference"
    )
    return _normal_result(auc_a - auc_b, se, auc_a, auc_b, conf, method, False, "roc_auc")


# ---------------------------------------------------------------------------- bootstrap tests
def _partial_auc_statistic(counts: RocCounts, max_fpr: float, standardized: bool) -> Statistic:
    """Partial AUC over FPR in [0, max_fpr] of count replicates, shape (b, 1)."""
    n_pos, n_neg = float(counts.n_pos), float(counts.n_neg)
    mx = float(max_fpr)

    def fn(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        b = tp.shape[0]
        t = np.concatenate([np.zeros((b, 1)), tp / n_pos, np.ones((b, 1))], axis=1)
        f = np.concatenate([np.zeros((b, 1)), fp / n_neg, np.ones((b, 1))], axis=1)
        f0, f1, t0, t1 = f[:, :-1], f[:, 1:], t[:, :-1], t[:, 1:]
        right = np.minimum(f1, mx)
        w = f1 - f0
        with np.errstate(invalid="ignore", divide="ignore"):
            tr = np.where(w > 0, t0 + (t1 - t0) * (right - f0) / np.where(w > 0, w, 1), t1)
        area = np.sum(np.where(f0 < mx, (right - f0) * (t0 + tr) * 0.5, 0.0), axis=1)
        if standardized and mx < 1.0:
            lo = 0.5 * mx * mx
            area = 0.5 * (1.0 + (area - lo) / (mx - lo))
        return area[:, None]

    return Statistic("partial_auc", np.zeros(1), "none", fn)


def _statistic(
    counts: RocCounts,
    metric: str,
    eta: float | None,
    cost_fp: float,
    cost_fn: float,
    max_fpr: float,
    standardized: bool,
) -> Statistic:
    if metric == "partial_auc":
        return _partial_auc_statistic(counts, max_fpr, standardized)
    if metric == "min_cost":
        return min_cost_statistic(counts, np.array([eta]), cost_fp, cost_fn)
    return metric_statistic(counts, metric, np.array([eta]), grid_step=None)


def _shared_count_replicates(
    y_true: Any, scores: Sequence[Any], n_boot: int, rng: np.random.Generator, names: Sequence[str]
) -> tuple[list[RocCounts], Iterator[list[tuple[np.ndarray, np.ndarray]]]]:
    """Stratified bootstrap of shared examples: every run's ``(tp, fp)`` from the same resample.

    Returns each run's (compressed) counts and a lazy iterator over chunks of replicates, a
    list with one ``(tp, fp)`` pair of ``(b, K_run)`` cumulative counts per run. Each replicate
    resamples the examples of each class once, with replacement and class sizes fixed (n
    uniform draws of example indices per class), and forms every run's counts from them, so
    the runs' correlation is kept in every comparison between them. Each example is binned
    into its run's compressed threshold cells (the first threshold at or below its score),
    which gives the compressed counts exactly: the metrics are the same as on all distinct
    scores, at O(K) instead of O(n) per replicate. Cost O(B * n) per run.
    """
    y = as_1d_array(y_true, "y_true")
    checked = [check_scores(s, n) for s, n in zip(scores, names, strict=True)]
    check_same_length([y, *checked], ["y_true", *names])
    is_pos = binarize_labels(y, name="y_true")
    runs = []
    for s in checked:
        c = RocCounts.from_scores(is_pos, s)
        idx = np.searchsorted(-c.thresholds, -s, side="left")
        runs.append((c, idx[is_pos], idx[~is_pos]))
    n_pos, n_neg = int(is_pos.sum()), int((~is_pos).sum())

    def chunks() -> Iterator[list[tuple[np.ndarray, np.ndarray]]]:
        # lazily, one chunk of replicates at a time: memory stays O(chunk * (n + thresholds))
        chunk = max(1, int(2_000_000 // (n_pos + n_neg)))
        done = 0
        while done < n_boot:
            b = min(chunk, n_boot - done)
            # the resampled examples of each class (n draws with replacement): their counts
            # per example are Multinomial(n, 1/n); drawn as indices and binned straight into
            # the count cells this is ~1.6x faster than rng.multinomial at 25,000 examples
            dp = rng.integers(0, n_pos, size=(b, n_pos))
            dn = rng.integers(0, n_neg, size=(b, n_neg))
            out: list[tuple[np.ndarray, np.ndarray]] = []
            for c, ip, ineg in runs:
                k = c.n_thresholds
                rows = np.arange(b)[:, None] * k
                tp, fp = (
                    np.bincount((rows + idx[d]).ravel(), minlength=b * k)
                    .reshape(b, k)
                    .cumsum(1, dtype=np.float64)
                    for idx, d in ((ip, dp), (ineg, dn))
                )
                out.append((tp, fp))
            yield out
            done += b

    return [r[0] for r in runs], chunks()


def _paired_count_replicates(
    y_true: Any, score_a: Any, score_b: Any, n_boot: int, rng: np.random.Generator
) -> tuple[RocCounts, RocCounts, Iterator[tuple[np.ndarray, ...]]]:
    """Stratified paired bootstrap: per chunk ``(tp_a, fp_a, tp_b, fp_b)`` from the same weights.

    :func:`_shared_count_replicates` for two runs (shared by :func:`paired_metric_test` and
    the flip significance test).
    """
    (ca, cb), chunks = _shared_count_replicates(
        y_true, (score_a, score_b), n_boot, rng, ("score_a", "score_b")
    )
    return ca, cb, ((*a, *b) for a, b in chunks)


def _boot_difference(
    counts_a: RocCounts | None,
    counts_b: RocCounts | None,
    y_true: Any,
    score_a: Any,
    score_b: Any,
    metric: str,
    eta: float | None,
    cost_fp: float,
    cost_fn: float,
    max_fpr: float,
    standardized: bool,
    n_boot: int,
    seed: Any,
) -> tuple[float, float, np.ndarray, np.ndarray, bool, RocCounts, RocCounts, np.random.Generator]:
    """Estimates, bootstrap replicates (paired when scores are given), counts and generator.

    The generator is returned for draws made after the replicates (they stay as before).
    """
    rng = _rng(seed)
    paired = y_true is not None or score_a is not None or score_b is not None
    if paired:
        if y_true is None or score_a is None or score_b is None:
            raise ValueError("paired mode needs all of y_true, score_a and score_b")
        ca, cb, chunks = _paired_count_replicates(y_true, score_a, score_b, n_boot, rng)
        sa = _statistic(ca, metric, eta, cost_fp, cost_fn, max_fpr, standardized)
        sb = _statistic(cb, metric, eta, cost_fp, cost_fn, max_fpr, standardized)
        pairs = [(sa(tpa, fpa)[:, 0], sb(tpb, fpb)[:, 0]) for tpa, fpa, tpb, fpb in chunks]
        ra = np.concatenate([p[0] for p in pairs])
        rb = np.concatenate([p[1] for p in pairs])
    else:
        if counts_a is None or counts_b is None:
            raise ValueError("give counts_a and counts_b, or y_true, score_a and score_b")
        ca, cb = counts_a, counts_b
        ga, gb = rng.spawn(2)
        sa = _statistic(ca, metric, eta, cost_fp, cost_fn, max_fpr, standardized)
        sb = _statistic(cb, metric, eta, cost_fp, cost_fn, max_fpr, standardized)
        ra = np.concatenate([sa(tp, fp)[:, 0] for tp, fp in bootstrap_counts(ca, n_boot, ga)])
        rb = np.concatenate([sb(tp, fp)[:, 0] for tp, fp in bootstrap_counts(cb, n_boot, gb)])
    est_a = float(sa.estimate(ca)[0])
    est_b = float(sb.estimate(cb)[0])
    return est_a, est_b, ra, rb, paired, ca, cb, rng


def _draws_variance(
    counts: RocCounts,
    statistic_of: Callable[[RocCounts], Statistic],
    n_boot: int,
    rng: np.random.Generator,
) -> float:
    """Variance of the statistic over the run's Bayesian count-bootstrap draws.

    The draws of :mod:`mlflow_imbalance.stats.posterior` (Jeffreys pseudo-negative above the
    top score), on counts thinned as the report's (``thin_for_bootstrap``): they can hold false
    positives above the top score that the test set did not show, which no resample of the
    examples can; at eta = 1e-4 a run with no negative above its top scores has a small
    replicate variance and a long lower tail in the draws.
    """
    thin = thin_for_bootstrap(counts).counts
    draws = bayesian_statistics(thin, {"m": statistic_of(thin)}, n_boot, rng)["m"][:, 0]
    return float(np.var(draws, ddof=1))


def _check_n_boot(n_boot: Any) -> int:
    if int(n_boot) != n_boot or n_boot < 10:
        raise ValueError(f"n_boot must be an integer >= 10, got {n_boot!r}")
    return int(n_boot)


def paired_metric_test(
    counts_a: RocCounts | None = None,
    counts_b: RocCounts | None = None,
    metric: str = "ap",
    prevalence: float | None = None,
    *,
    y_true: Any = None,
    score_a: Any = None,
    score_b: Any = None,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    max_fpr: float = 0.1,
    standardized: bool = False,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: Any = 0,
    floor: bool = True,
) -> ComparisonTest:
    """Bootstrap test of ``M_A - M_B`` for AP, PR-AUC, max-F1, lowest expected cost or pAUC.

    Paired (both runs' scores on the same examples: ``y_true, score_a, score_b``): every
    replicate resamples the examples within each class once and evaluates both runs on that
    resample, so the correlation between the runs is kept. Otherwise (counts only: different
    test sets, or no raw scores) the two runs are bootstrapped independently with the count
    bootstrap, which is right for independent test sets and conservative for positively
    correlated runs on the same examples.

    The test is pROC's bootstrap test (``roc.test(method="bootstrap")``): ``z = (M_A - M_B) /
    sd*`` with ``sd*`` the standard deviation of the replicate differences, two-sided normal p;
    the interval is ``diff +- z_{(1+conf)/2} sd*`` (so it excludes 0 exactly when ``p < 1 -
    conf``). With ``floor`` (default) ``sd*`` is at least ``sqrt(v_A + v_B - 2 cov)``: each
    run's variance the larger of its replicates' and its Bayesian count-bootstrap draws'
    (``n_boot`` draws), ``cov`` the replicates' covariance (0 unpaired). At low prevalence a
    run with no negative above its top scores has replicates with too little spread (no
    resample can add a false positive there) and the plain test rejects too often; the draws
    keep that tail. It is the report's test (verdict and tables). Measured false-alarm rates
    at level 0.05 (``benchmarks/bench_band_coverage.py --verdict-paired``; two runs of one
    model, 200 / 20,000, AP and lowest expected cost at eta = 1e-4 and 1e-3): see
    docs/statistics.md, "Comparing two runs".

    Args:
        counts_a: counts of run A (unpaired mode).
        counts_b: counts of run B (unpaired mode).
        metric: ``"ap"``, ``"pr_auc"``, ``"max_f1"``, ``"min_cost"`` (lowest expected cost per
            example over thresholds at ``prevalence``, with ``cost_fp``/``cost_fn``) or
            ``"partial_auc"`` (FPR in ``[0, max_fpr]``, no prevalence).
        prevalence: eta for the prevalence-dependent metrics.
        y_true: labels of the shared examples (paired mode).
        score_a: run A's scores on them.
        score_b: run B's scores on them.
        cost_fp: cost of a false positive (``min_cost``).
        cost_fn: cost of a false negative (``min_cost``).
        max_fpr: FPR limit (``partial_auc``).
        standardized: McClish-standardised partial AUC (as scikit-learn's ``max_fpr``).
        n_boot: replicates (>= 10; 2000 as pROC).
        confidence: level of the interval of the difference.
        seed: seed.
        floor: floor the s.d. by the runs' Bayesian-draw variances (see above); False gives
            pROC's plain bootstrap test.

    Returns:
        :class:`ComparisonTest`; for ``min_cost`` a negative difference means A is cheaper.
    """
    conf = _check_confidence(confidence)
    if metric not in COMPARE_METRICS:
        raise ValueError(f"metric must be one of {COMPARE_METRICS}, got {metric!r}")
    nb = _check_n_boot(n_boot)
    eta: float | None = None
    if metric != "partial_auc":
        if prevalence is None:
            raise ValueError(f"metric {metric!r} needs a prevalence")
        eta = float(check_prevalence(prevalence, "prevalence"))
    mx = check_max_fpr(max_fpr) if metric == "partial_auc" else 1.0
    est_a, est_b, ra, rb, paired, ca, cb, rng = _boot_difference(
        counts_a, counts_b, y_true, score_a, score_b, metric, eta,
        float(cost_fp), float(cost_fn), mx, bool(standardized), nb, seed,
    )  # fmt: skip
    se = float(np.std(ra - rb, ddof=1))
    floored = ""
    if floor:
        cfp, cfn, std = float(cost_fp), float(cost_fn), bool(standardized)

        def statistic_of(c: RocCounts) -> Statistic:
            return _statistic(c, metric, eta, cfp, cfn, mx, std)

        ga, gb = rng.spawn(2)
        va = max(float(np.var(ra, ddof=1)), _draws_variance(ca, statistic_of, nb, ga))
        vb = max(float(np.var(rb, ddof=1)), _draws_variance(cb, statistic_of, nb, gb))
        cov = float(np.cov(ra, rb, ddof=1)[0, 1]) if paired else 0.0
        se = math.sqrt(max(se * se, va + vb - 2.0 * cov, 0.0))
        floored = (
            "; the s.d. at least sqrt(var_A + var_B - 2 cov), each run's variance the larger "
            "of its replicates' and its Bayesian count-bootstrap draws'"
        )
    how = (
        "paired stratified bootstrap of the shared examples"
        if paired
        else "independent count bootstraps of the two runs (unpaired)"
    )
    what = metric if eta is None else f"{metric} at prevalence {eta:.3g}"
    method = (
        f"{what}: {how}, {nb} replicates; z = difference / bootstrap SD, two-sided normal "
        f"(pROC's bootstrap test){floored}, {conf:.0%} interval of the difference"
    )
    return _normal_result(est_a - est_b, se, est_a, est_b, conf, method, paired, metric, eta)


def cost_difference_test(
    counts_a: RocCounts | None = None,
    counts_b: RocCounts | None = None,
    prevalence: float | None = None,
    *,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    **kwargs: Any,
) -> ComparisonTest:
    """Test of the difference in lowest expected cost at ``prevalence`` (A minus B).

    :func:`paired_metric_test` with ``metric="min_cost"``; a negative difference means run A
    is cheaper at its own cost-optimal threshold. Keyword arguments as there.
    """
    return paired_metric_test(
        counts_a, counts_b, "min_cost", prevalence, cost_fp=cost_fp, cost_fn=cost_fn, **kwargs
    )


def partial_auc_test(
    counts_a: RocCounts | None = None,
    counts_b: RocCounts | None = None,
    max_fpr: float = 0.1,
    **kwargs: Any,
) -> ComparisonTest:
    """Bootstrap test of the partial-AUC difference over FPR in ``[0, max_fpr]`` (A minus B).

    pROC tests partial AUC by bootstrap only (DeLong's variance is for the full area); this is
    :func:`paired_metric_test` with ``metric="partial_auc"`` (paired when ``y_true, score_a,
    score_b`` are given). Keyword arguments as there.
    """
    return paired_metric_test(counts_a, counts_b, "partial_auc", max_fpr=max_fpr, **kwargs)


@dataclass(frozen=True)
class PartialAucInterval:
    """Partial AUC with its bootstrap interval.

    Attributes:
        estimate: the exact partial AUC of the counts.
        low: lower limit.
        high: upper limit.
        confidence: level.
        max_fpr: FPR limit.
        standardized: McClish-standardised or raw area.
        method: how the interval was made.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    max_fpr: float
    standardized: bool
    method: str


def partial_auc_interval(
    counts: RocCounts,
    max_fpr: float = 0.1,
    *,
    standardized: bool = False,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: Any = 0,
) -> PartialAucInterval:
    """Interval for the partial AUC over FPR in ``[0, max_fpr]`` by the count bootstrap.

    pROC's ``ci.auc`` for a partial AUC is a stratified percentile bootstrap; this is the same
    on the counts (which equals resampling examples within each class).

    Args:
        counts: unweighted counts.
        max_fpr: FPR limit in (0, 1].
        standardized: McClish-standardised area (as scikit-learn's ``roc_auc_score(max_fpr)``).
        confidence: level.
        n_boot: replicates.
        seed: seed.

    Returns:
        :class:`PartialAucInterval`.
    """
    conf = _check_confidence(confidence)
    mx = check_max_fpr(max_fpr)
    nb = _check_n_boot(n_boot)
    _check_bootstrappable(counts)
    st = _partial_auc_statistic(counts, mx, bool(standardized))
    reps = np.concatenate([st(tp, fp)[:, 0] for tp, fp in bootstrap_counts(counts, nb, seed)])
    a = (1.0 - conf) / 2.0
    lo, hi = np.quantile(reps, [a, 1.0 - a])
    est = float(partial_auc(counts, mx, standardized=bool(standardized)))
    method = (
        f"stratified percentile count bootstrap ({nb} replicates; pROC ci.auc for partial AUC), "
        f"{conf:.0%}"
    )
    return PartialAucInterval(est, float(lo), float(hi), conf, mx, bool(standardized), method)
