"""Issue 33: ScoreCounts and estimate_prevalence against independent implementations.

ScoreCounts is checked against ``np.unique`` counting (hypothesis, with ties), the estimators
against implementations written here (ACC and the median sweep from scikit-learn's
``roc_curve``; the mixture likelihood maximised by ``scipy.optimize.minimize_scalar`` on
per-score densities from ``np.unique``), the interval by a small coverage run, the prior-shift
check on a covariate shift and a pure prior shift, and bad input by its messages.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from sklearn.metrics import roc_curve

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.production import ScoreCounts, merge_score_counts
from mlflow_imbalance.stats import InsufficientDataError
from mlflow_imbalance.stats.prevalence import (
    INTERVALS,
    PRIOR_SHIFT_LEVEL,
    PrevalenceEstimate,
    estimate_prevalence,
)

# ----------------------------------------------------------------------------- ScoreCounts
tied_scores = st.lists(
    st.sampled_from([-2.5, -1.0, -0.0, 0.0, 0.25, 0.5, 1e-300, 3.0, 7.5]) | st.floats(-5, 5),
    min_size=1,
    max_size=200,
)


def _unique_counts(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u, c = np.unique(np.asarray(s, dtype=np.float64), return_counts=True)
    return u[::-1], np.cumsum(c[::-1])


@settings(max_examples=150, deadline=None)
@given(tied_scores, st.integers(0, 200))
def test_score_counts_exact_and_mergeable(values: list[float], cut: int) -> None:
    s = np.asarray(values)
    sc = ScoreCounts.from_scores(s)
    thr, n_above = _unique_counts(s)
    assert np.array_equal(sc.thresholds, thr)
    assert np.array_equal(sc.n_above, n_above)
    assert sc.n == s.size == sc.n_above[-1]
    assert len(sc) == sc.n_thresholds == thr.size
    cut = min(cut, s.size - 1)
    parts = [ScoreCounts.from_scores(s[: cut + 1])]
    if cut + 1 < s.size:
        parts.append(ScoreCounts.from_scores(s[cut + 1 :]))
    assert merge_score_counts(parts) == sc
    t = np.r_[s, s + 0.1, -10.0, 10.0]
    assert np.array_equal(sc.share_at_or_above(t), (s[None, :] >= t[:, None]).mean(axis=1))


def test_score_counts_float32_int_and_round_trip(tmp_path) -> None:
    rng = np.random.default_rng(0)
    s32 = rng.random(1000).astype(np.float32)
    sc = ScoreCounts.from_scores(s32)
    thr, n_above = _unique_counts(s32)
    assert np.array_equal(sc.thresholds, thr) and np.array_equal(sc.n_above, n_above)
    assert ScoreCounts.from_scores(rng.integers(0, 5, 100)).n_thresholds <= 5
    np.savez(tmp_path / "c.npz", **sc.to_arrays())
    with np.load(tmp_path / "c.npz") as z:
        assert ScoreCounts.from_arrays(**z) == sc
    assert sc.share_at_or_above(2.0) == 0.0 and sc.share_at_or_above(-1.0) == 1.0
    with pytest.raises(AttributeError):
        sc.n = 3  # frozen


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"thresholds": [1.0, 1.0], "n_above": [1, 2], "n": 2}, "strictly descending"),
        ({"thresholds": [2.0, 1.0], "n_above": [2, 1], "n": 2}, "non-decreasing"),
        ({"thresholds": [2.0, 1.0], "n_above": [1, 3], "n": 2}, "exceeds n=2"),
        ({"thresholds": [2.0, 1.0], "n_above": [1, 2], "n": 0}, "n must be a positive"),
        ({"thresholds": [2.0, np.nan], "n_above": [1, 2], "n": 2}, "finite"),
        ({"thresholds": [2.0], "n_above": [1, 2], "n": 2}, "same length"),
        ({"thresholds": [2.0, 1.0], "n_above": [0.5, 2], "n": 2}, "integer"),
    ],
)
def test_from_arrays_validates(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ScoreCounts.from_arrays(**kwargs)


@pytest.mark.parametrize(
    ("scores", "match"),
    [
        ([], r"scores is empty"),
        ([0.1, np.nan, 0.3], r"scores must be finite: found 1 NaN"),
        (np.zeros((4, 2)), r"scores\[:, 1\]"),
    ],
)
def test_from_scores_bad_input(scores, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ScoreCounts.from_scores(scores)


# ----------------------------------------------------------------------------- data
def _tied_test(rng, n_pos=400, n_neg=4000, levels=12):
    """Scores on ``levels`` values, every value held by both classes (no compression)."""
    pos = np.clip(np.round(rng.normal(levels * 0.65, levels * 0.2, n_pos)), 0, levels - 1)
    neg = np.clip(np.round(rng.normal(levels * 0.35, levels * 0.2, n_neg)), 0, levels - 1)
    pos[:levels], neg[:levels] = np.arange(levels), np.arange(levels)
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    return y, np.r_[pos, neg] / levels


def _tied_production(rng, n, eta, levels=12):
    k = rng.binomial(n, eta)
    pos = np.clip(np.round(rng.normal(levels * 0.65, levels * 0.2, k)), 0, levels - 1)
    neg = np.clip(np.round(rng.normal(levels * 0.35, levels * 0.2, n - k)), 0, levels - 1)
    return np.r_[pos, neg] / levels


def _binormal(rng, n_pos, n_neg, mu=2.0, shift=0.0):
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    return y, np.r_[rng.normal(mu, 1, n_pos), rng.normal(0, 1, n_neg)] + shift


# ----------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("eta", [0.02, 0.3])
def test_estimators_equal_independent_implementations(eta: float) -> None:
    rng = np.random.default_rng(7)
    y, s = _tied_test(rng)
    prod = _tied_production(rng, 20_000, eta)
    counts = RocCounts.from_scores(y, s)
    assert not counts.compressed or counts.n_thresholds == np.unique(s).size
    e = estimate_prevalence(counts, prod, min_bin_count=1, n_boot=50, n_check=50)

    # ACC at T50 (Forman 2005) from scikit-learn's ROC curve
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    i = int(np.argmax(tpr >= 0.5))
    q = np.mean(prod >= thr[i])
    acc = np.clip((q - fpr[i]) / (tpr[i] - fpr[i]), 0, 1)
    assert e.estimates["acc"] == pytest.approx(acc, rel=1e-12, abs=1e-15)

    # median sweep (Forman 2008): thresholds with TPR - FPR > 1/4 (the lowest excluded)
    keep = np.flatnonzero((tpr - fpr > 0.25) & np.isfinite(thr) & (thr > s.min()))
    qs = (prod[None, :] >= thr[keep, None]).mean(axis=1)
    ms = np.clip(np.median((qs - fpr[keep]) / (tpr[keep] - fpr[keep])), 0, 1)
    assert e.estimates["median_sweep"] == pytest.approx(ms, rel=1e-12, abs=1e-15)

    # maximum likelihood (Saerens et al. 2002, count form) on per-score densities
    levels, inv = np.unique(s, return_inverse=True)
    a = np.bincount(inv[y], minlength=levels.size) / y.sum()
    b = np.bincount(inv[~y], minlength=levels.size) / (~y).sum()
    m = np.array([(prod == v).sum() for v in levels], dtype=float)
    assert m.sum() == prod.size

    def nll(x: float) -> float:
        return -float(np.sum(m * np.log(x * a + (1 - x) * b)))

    opt = minimize_scalar(nll, bounds=(0, 1), method="bounded", options={"xatol": 1e-12})
    assert e.method == "mle" and e.n_bins == levels.size
    assert e.estimate == pytest.approx(opt.x, rel=1e-6)
    assert e.low <= e.estimate <= e.high
    assert isinstance(e, PrevalenceEstimate) and e.confidence == 0.95


def test_production_as_score_counts_equals_scores() -> None:
    rng = np.random.default_rng(3)
    y, s = _binormal(rng, 300, 3000)
    counts = RocCounts.from_scores(y, s)
    _, p = _binormal(rng, 50, 5000)
    a = estimate_prevalence(counts, p, n_boot=100, n_check=100, seed=1)
    b = estimate_prevalence(counts, ScoreCounts.from_scores(p), n_boot=100, n_check=100, seed=1)
    assert a == b


def test_mle_at_zero_and_one() -> None:
    rng = np.random.default_rng(4)
    y, s = _binormal(rng, 300, 3000, mu=3.0)
    counts = RocCounts.from_scores(y, s)
    e0 = estimate_prevalence(counts, rng.normal(-0.5, 1, 5000), n_boot=100, n_check=0)
    assert e0.estimate == 0.0 and e0.at_zero and e0.low == 0.0
    assert "consistent with no positives" in e0.text and np.isnan(e0.prior_shift_p)
    e1 = estimate_prevalence(counts, rng.normal(3.5, 1, 5000), n_boot=100, n_check=0)
    assert e1.estimate == 1.0 and e1.high == 1.0


# ----------------------------------------------------------------------------- interval
def test_coverage_smoke() -> None:
    """60 replicates: fresh test set and production batch each; lenient bound."""
    rng = np.random.default_rng(11)
    eta, hits, widths = 0.02, 0, []
    for _ in range(60):
        counts = RocCounts.from_scores(*_binormal(rng, 200, 5000))
        k = rng.binomial(20_000, eta)
        prod = np.r_[rng.normal(2, 1, k), rng.normal(0, 1, 20_000 - k)]
        e = estimate_prevalence(counts, prod, n_boot=200, n_check=0, seed=rng)
        hits += e.low <= eta <= e.high
        widths.append(e.high - e.low)
    assert hits >= 50  # >= 83 % of 60 (nominal 95 %)
    assert 0.005 < np.mean(widths) < 0.05


def test_interval_constructions() -> None:
    """Each ``interval=`` option on the same replicates (same seed: the interval is computed
    after the bootstrap), checked against the percentile interval's width."""
    rng = np.random.default_rng(3)
    counts = RocCounts.from_scores(*_binormal(rng, 400, 20_000))
    k = rng.binomial(50_000, 0.3)
    prod = np.r_[rng.normal(2, 1, k), rng.normal(0, 1, 50_000 - k)]
    got = {
        how: estimate_prevalence(counts, prod, n_boot=400, n_check=0, interval=how, seed=4)
        for how in INTERVALS
    }
    est = got["auto"].estimate
    assert all(g.estimate == est and g.low <= est <= g.high for g in got.values())
    # at eta = 0.3 the logit-scale s.e. is small: "auto" is the logit interval
    assert (got["auto"].low, got["auto"].high) == (got["logit"].low, got["logit"].high)
    lo, hi = (np.log(x / (1 - x)) for x in (got["logit"].low, got["logit"].high))
    p_lo, p_hi = got["percentile"].low, got["percentile"].high
    # symmetric on the logit scale, about as wide as the percentile interval (sd-based)
    assert (hi - lo) * est * (1 - est) == pytest.approx(p_hi - p_lo, rel=0.1)
    # "shifted" and "basic" have the percentile interval's width (before clipping)
    for how in ("shifted", "basic"):
        assert got[how].high - got[how].low == pytest.approx(p_hi - p_lo, rel=1e-9)


def test_interval_at_zero_is_one_sided() -> None:
    """No positives in production: estimate 0, every default interval starts at 0."""
    rng = np.random.default_rng(8)
    counts = RocCounts.from_scores(*_binormal(rng, 200, 20_000))
    prod = rng.normal(0, 1, 20_000)
    for how in ("auto", "logit", "shifted", "percentile"):
        e = estimate_prevalence(counts, prod, n_boot=300, n_check=0, interval=how)
        assert e.at_zero and e.low == 0.0 and e.high > 0.0


def test_limited_by_test_set() -> None:
    rng = np.random.default_rng(5)
    counts = RocCounts.from_scores(*_binormal(rng, 200, 20_000))
    k = rng.binomial(10**6, 1e-3)
    prod = np.r_[rng.normal(2, 1, k), rng.normal(0, 1, 10**6 - k)]
    e = estimate_prevalence(counts, prod, n_boot=300, n_check=0)
    assert e.limited_by_test and e.test_share > 0.5
    assert "negatives" in e.text


# ----------------------------------------------------------------------------- the check
def test_check_flags_covariate_shift_and_passes_prior_shift() -> None:
    rng = np.random.default_rng(21)
    counts = RocCounts.from_scores(*_binormal(rng, 500, 20_000))
    k = rng.binomial(100_000, 0.01)
    prior = np.r_[rng.normal(2, 1, k), rng.normal(0, 1, 100_000 - k)]
    ok = estimate_prevalence(counts, prior, n_boot=200, n_check=500)
    assert ok.prior_shift_p > 0.05 and ok.check_passed
    assert "the prior-shift check passes" in ok.text
    shifted = prior + 0.3
    bad = estimate_prevalence(counts, shifted, n_boot=200, n_check=500)
    assert bad.prior_shift_p < 0.01 and not bad.check_passed
    assert "FAILS" in bad.text and "do not trust" in bad.text
    assert bad.misfit is not None and abs(bad.misfit.z) > 3
    assert bad.misfit.text in bad.text


def test_one_level_and_one_rule_for_the_check() -> None:
    """Issue 37: one level (PRIOR_SHIFT_LEVEL) is the default, and pass/fail is one property,
    which the text follows; a p-value near the level is printed on its own side of it."""
    import dataclasses
    import inspect

    default = inspect.signature(estimate_prevalence).parameters["check_alpha"].default
    assert default == PRIOR_SHIFT_LEVEL
    rng = np.random.default_rng(5)
    counts = RocCounts.from_scores(*_binormal(rng, 300, 20_000))
    k = rng.binomial(50_000, 0.01)
    prod = np.r_[rng.normal(2, 1, k), rng.normal(0, 1, 50_000 - k)]
    e = estimate_prevalence(counts, prod, n_boot=50, n_check=200)
    assert e.check_alpha == PRIOR_SHIFT_LEVEL
    assert e.check_passed == (not e.prior_shift_p < PRIOR_SHIFT_LEVEL)
    assert ("the prior-shift check passes" in e.text) == e.check_passed
    assert e.check_text.startswith("passes (p = " if e.check_passed else "FAILS (p = ")
    # at a level of 0.05, 0.0496 fails and 0.0504 passes: never "p = 0.05" beside either
    for p, alpha, want in (
        (0.0496, 0.05, "FAILS (p = 0.0496)"),
        (0.0504, 0.05, "passes (p = 0.0504)"),
        (0.017, 0.05, "FAILS (p = 0.017)"),
        (0.017, 0.01, "passes (p = 0.017)"),
        (0.0004, 0.01, "FAILS (p < 0.001)"),
        (float("nan"), 0.01, "not run"),
    ):
        r = dataclasses.replace(e, prior_shift_p=p, check_alpha=alpha)
        assert r.check_text == want, (p, alpha, r.check_text)
        assert r.check_passed == (want.startswith("passes") or want == "not run")


def test_check_sees_a_small_shift_of_the_negatives_bulk() -> None:
    """A shift of both classes' production scores by 0.05 SD at eta = 0.01 moves the estimate
    by about +60 % (benchmark), yet leaves the fit's coarse bins (>= 14 test positives each, so
    wide where negatives dominate) nearly as expected: the Pearson statistic alone flagged 63 %
    of such batches at N = 10^5 (bench_prevalence, R = 200). The cumulative statistic on finer
    bins sees the bulk move: at least 8 of 10 batches must fail here (96-98 % measured; P(<= 7
    of 10) < 0.002 at that power), and at most 2 of 10 prior-shift batches (level 5 %: 5.1 % of
    4,000 measured; P(>= 3 of 10) = 0.012 at that level)."""
    rng = np.random.default_rng(33)
    n = 100_000
    flagged = {0.0: 0, 0.05: 0}
    for _ in range(10):
        counts = RocCounts.from_scores(*_binormal(rng, 200, 20_000))
        k = rng.binomial(n, 0.01)
        latent = np.r_[rng.normal(2, 1, k), rng.normal(0, 1, n - k)]
        for delta in flagged:
            e = estimate_prevalence(counts, latent + delta, n_boot=1, n_check=300, seed=rng)
            flagged[delta] += not e.check_passed
    assert flagged[0.05] >= 8 and flagged[0.0] <= 2, flagged


# ----------------------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def prob_counts() -> RocCounts:
    rng = np.random.default_rng(0)
    y, s = _binormal(rng, 200, 2000)
    return RocCounts.from_scores(y, 1 / (1 + np.exp(-s)))


@pytest.mark.parametrize(
    ("production", "match"),
    [
        ([0.2, np.nan, 0.4], r"production must be finite: found 1 NaN"),
        ([], r"production is empty"),
        (np.full((10, 2), 0.5), r"production\[:, 1\]"),
        (np.linspace(-8, 8, 1000), r"production .*\[-8, 8\].*test scores \[0\.0"),
        (np.linspace(5, 9, 1000), r"production .*probabilities against logits"),
    ],
)
def test_bad_production(prob_counts: RocCounts, production, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        estimate_prevalence(prob_counts, production, n_boot=10, n_check=0)


def test_few_outside_range_warns(prob_counts: RocCounts) -> None:
    rng = np.random.default_rng(1)
    p = np.r_[rng.uniform(0.2, 0.8, 1000), np.full(150, 1.5)]
    with pytest.warns(UserWarning, match="outside the test range"):
        e = estimate_prevalence(prob_counts, p, n_boot=10, n_check=0)
    assert e.out_of_range and "outside the test range" in e.text


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"method": "em"}, ValueError, "method must be"),
        ({"confidence": 1.5}, ValueError, "confidence"),
        ({"n_boot": 0}, ValueError, "n_boot"),
        ({"interval": "bca"}, ValueError, "interval must be"),
        ({"min_bin_count": 0}, ValueError, "min_bin_count"),
    ],
)
def test_bad_options(prob_counts: RocCounts, kwargs: dict, err, match: str) -> None:
    with pytest.raises(err, match=match):
        estimate_prevalence(prob_counts, [0.5, 0.6], **kwargs)


def test_bad_counts() -> None:
    with pytest.raises(TypeError, match="counts must be a RocCounts"):
        estimate_prevalence(np.array([0.1, 0.2]), [0.5])
    w = RocCounts.from_scores([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], sample_weight=[1, 2, 1, 1])
    with pytest.raises(InsufficientDataError, match="weighted"):
        estimate_prevalence(w, [0.5])
    flat = RocCounts.from_scores([0, 1, 0, 1], [0.1, 0.1, 0.2, 0.2])
    with pytest.raises(InsufficientDataError, match="diagonal"):
        estimate_prevalence(flat, [0.1, 0.2])
