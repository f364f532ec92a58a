"""Tests for mlflow_imbalance.uncertainty: intervals, Brabec Delta, sample size, bootstrap, bands.

Reference values come from scipy's own binomial tests, closed forms derived in the test, an
independent numerical constrained MLE, scikit-learn with sample weights, and simulation from a
binormal model whose TPR, FPR and precision(eta) are known exactly.
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from sklearn.metrics import average_precision_score, roc_auc_score

from mlflow_imbalance import RocCounts, metrics
from mlflow_imbalance import uncertainty as u
from mlflow_imbalance.stats import _batch, bands
from mlflow_imbalance.stats.sample_size import _cp_cv

# ---------------------------------------------------------------------------- rate intervals


@pytest.mark.parametrize("n", [1, 10, 10**4, 10**6, 10**9])
@pytest.mark.parametrize("conf", [0.9, 0.95, 0.99])
def test_zero_successes_upper_limit_closed_form(n, conf):
    lo, hi = u.rate_interval(0, n, conf)
    alpha = 1 - conf
    assert lo == 0.0
    assert hi == pytest.approx(-math.expm1(math.log(alpha / 2) / n), rel=1e-9)
    assert hi > 0  # never a zero-width interval


def test_clopper_pearson_and_wilson_match_scipy_binomtest():
    for k, n in [(0, 7), (3, 10**6), (17, 40), (40, 40), (512, 1000)]:
        ref = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        lo, hi = u.rate_interval(k, n)
        assert lo == pytest.approx(ref.low, abs=1e-12)
        assert hi == pytest.approx(ref.high, rel=1e-9)
        ref_w = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        lo_w, hi_w = u.rate_interval(k, n, method="wilson")
        assert lo_w == pytest.approx(ref_w.low, abs=1e-12)
        assert hi_w == pytest.approx(ref_w.high, abs=1e-12)


def test_jeffreys_is_equal_tailed_beta_posterior():
    k, n = 4, 50
    lo, hi = u.rate_interval(k, n, method="jeffreys")
    post = stats.beta(k + 0.5, n - k + 0.5)
    assert post.cdf(lo) == pytest.approx(0.025, rel=1e-9)
    assert post.sf(hi) == pytest.approx(0.025, rel=1e-9)
    assert u.rate_interval(0, n, method="jeffreys").low == 0.0
    assert u.rate_interval(n, n, method="jeffreys").high == 1.0


def test_rate_interval_vectorised_and_carries_method():
    k = np.array([0, 1, 5, 100])
    n = np.array([100, 100, 10**6, 100])
    iv = u.rate_interval(k, n, 0.9, "clopper-pearson")
    assert iv.low.shape == (4,) and iv.high.shape == (4,)
    assert iv.method == "clopper-pearson" and iv.confidence == 0.9
    for i in range(4):
        lo, hi = u.rate_interval(int(k[i]), int(n[i]), 0.9)
        assert iv.low[i] == lo and iv.high[i] == hi
    lo, hi = iv  # unpacks as a pair
    again = pickle.loads(pickle.dumps(iv))
    assert again.method == iv.method and np.array_equal(again.high, hi)


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"k": 5, "n": 3}, "k exceeds n"),
        ({"k": -1, "n": 3}, "k must be non-negative"),
        ({"k": 1, "n": 0}, "n must be positive"),
        ({"k": 1, "n": 3, "confidence": 1.0}, "confidence"),
        ({"k": 1, "n": 3, "method": "wald"}, "method"),
        ({"k": float("nan"), "n": 3}, "k must be finite"),
    ],
)
def test_rate_interval_rejects_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        u.rate_interval(**kwargs)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 10**7),
    frac=st.floats(0, 1),
    method=st.sampled_from(u.RATE_METHODS),
    conf=st.floats(0.5, 0.999),
)
def test_rate_interval_contains_estimate(n, frac, method, conf):
    k = round(frac * n)
    lo, hi = u.rate_interval(k, n, conf, method)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert hi > lo


# ---------------------------------------------------------------------------- Koopman / LR


def _pearson_constrained(theta, x1, n1, x2, n2):
    """Independent check: constrained MLE by numerical maximisation, then Pearson chi-square."""

    def nll(p2):
        p1 = theta * p2
        ll = x2 * np.log(p2) + (n2 - x2) * np.log1p(-p2)
        ll += x1 * np.log(p1) + (n1 - x1) * np.log1p(-p1)
        return -ll

    hi = min(1.0, 1.0 / theta) * (1 - 1e-15)
    res = optimize.minimize_scalar(
        nll, bounds=(1e-300, hi), method="bounded", options={"xatol": 1e-16}
    )
    p2 = res.x
    p1 = theta * p2
    return (x1 - n1 * p1) ** 2 / (n1 * p1 * (1 - p1)) + (x2 - n2 * p2) ** 2 / (n2 * p2 * (1 - p2))


@pytest.mark.parametrize(("x1", "n1", "x2", "n2"), [(36, 40, 16, 80), (600, 1000, 120, 10**5)])
def test_koopman_limits_solve_the_score_equation(x1, n1, x2, n2):
    lo, hi = u.likelihood_ratio_interval(x1, x2, n1, n2, method="koopman")
    crit = stats.chi2.ppf(0.95, 1)
    assert _pearson_constrained(lo, x1, n1, x2, n2) == pytest.approx(crit, rel=2e-3)
    assert _pearson_constrained(hi, x1, n1, x2, n2) == pytest.approx(crit, rel=2e-3)
    est = (x1 / n1) / (x2 / n2)
    assert lo < est < hi
    # just inside / outside
    assert _pearson_constrained(lo * 1.01, x1, n1, x2, n2) < crit
    assert _pearson_constrained(lo * 0.99, x1, n1, x2, n2) > crit


def test_koopman_zero_false_positives_finite_lower_limit():
    lo, hi = u.likelihood_ratio_interval(900, 0, 1000, 10**6)
    assert math.isinf(hi)
    assert 0 < lo < 0.9 * 10**6 * 10  # finite, positive
    # precision at any eta then runs up to exactly 1, from a finite lower limit
    plo, phi = u.precision_interval(900, 0, 1000, 10**6, [1e-4, 0.5])
    assert np.all(phi == 1.0) and np.all((plo > 0) & (plo < 1))
    # zero true positives: lower limit 0, finite upper
    lo0, hi0 = u.likelihood_ratio_interval(0, 5, 1000, 10**6)
    assert lo0 == 0.0 and math.isfinite(hi0) and hi0 > 0
    # both zero: nothing is known
    assert tuple(u.likelihood_ratio_interval(0, 0, 10, 10)) == (0.0, math.inf)


def _exact_lr_coverage(method, n_pos, n_neg, tprs, efps, conf=0.95):
    """Exact coverage of the LR interval by enumeration: sum over every (tp, fp) of
    Bin(tp; P, TPR) * Bin(fp; N, FPR) * [LR in interval]."""
    x_max = int(max(efps) + 12 * np.sqrt(max(efps)) + 20)
    x1 = np.arange(n_pos + 1)[:, None]
    x2 = np.arange(x_max + 1)[None, :]
    lo, hi = u.likelihood_ratio_interval(
        np.broadcast_to(x1, (n_pos + 1, x_max + 1)), np.broadcast_to(x2, (n_pos + 1, x_max + 1)),
        n_pos, n_neg, conf, method,
    )  # fmt: skip
    lo, hi = np.asarray(lo), np.asarray(hi)
    out = np.empty((len(tprs), len(efps)))
    for j, e in enumerate(efps):
        fpr = e / n_neg
        p2 = stats.binom.pmf(np.arange(x_max + 1), n_neg, fpr)
        for i, t in enumerate(tprs):
            p1 = stats.binom.pmf(np.arange(n_pos + 1), n_pos, t)
            lr = t / fpr
            out[i, j] = p1 @ ((lo <= lr) & (lr <= hi)) @ p2
    return out


def test_default_lr_interval_covers_for_small_false_positive_counts():
    """Exact enumeration over TPR 0.05-0.95 x E[FP] 0.05-500 (P = 100, N = 10^6): the default
    (small-FP corrected Koopman) covers >= 0.93 everywhere; plain Koopman does not (0.854 at
    E[FP] ~ 0.16, the eta = 1e-4 regime); the box is valid but wider."""
    tprs = np.linspace(0.05, 0.95, 10)
    efps = np.geomspace(0.05, 500, 25)
    cov = _exact_lr_coverage("koopman-cp", 100, 10**6, tprs, efps)
    assert cov.min() >= 0.93, cov.min()
    plain = _exact_lr_coverage("koopman", 100, 10**6, tprs, efps)
    assert plain.min() < 0.9  # the documented failure the correction removes
    assert np.all(plain[:, efps >= 2] >= 0.93)  # and where Koopman was already fine ...
    # ... the correction changes nothing
    for tp, fp in ((50, 20), (90, 300)):
        a = u.likelihood_ratio_interval(tp, fp, 100, 10**6)
        b = u.likelihood_ratio_interval(tp, fp, 100, 10**6, method="koopman")
        assert tuple(a) == tuple(b)
    # narrower than the box where it matters (1-3 false positives)
    for fp in (1, 2, 3):
        a = u.likelihood_ratio_interval(50, fp, 100, 10**6)
        b = u.likelihood_ratio_interval(50, fp, 100, 10**6, method="box")
        assert np.log(a.high / a.low) < np.log(b.high / b.low)
    assert "small-FP" in u.likelihood_ratio_interval(50, 1, 100, 10**6).method


def test_box_lr_interval_is_ratio_of_sqrt_level_clopper_pearson():
    iv = u.likelihood_ratio_interval(90, 3, 100, 10**5, method="box")
    t = stats.binomtest(90, 100).proportion_ci(math.sqrt(0.95), method="exact")
    f = stats.binomtest(3, 10**5).proportion_ci(math.sqrt(0.95), method="exact")
    assert iv.low == pytest.approx(t.low / f.high, rel=1e-9)
    assert iv.high == pytest.approx(t.high / f.low, rel=1e-6)  # scipy root-finds (tol)
    assert "box" in iv.method and iv.confidence == 0.95


@settings(max_examples=40, deadline=None)
@given(
    tp=st.integers(1, 500),
    fp=st.integers(1, 500),
    eta=st.floats(1e-7, 0.9),
    method=st.sampled_from(u.RATIO_METHODS),
)
def test_precision_interval_contains_estimate(tp, fp, eta, method):
    n_pos, n_neg = 500, 10**5
    lo, hi = u.precision_interval(tp, fp, n_pos, n_neg, eta, method=method)
    o = eta / (1 - eta)
    lr = (tp / n_pos) / (fp / n_neg)
    est = lr * o / (1 + lr * o)
    assert lo <= est * (1 + 1e-9) and est <= hi * (1 + 1e-9)
    assert 0 <= lo <= hi <= 1


def test_precision_interval_matches_metrics_precision_at_test_point():
    c = RocCounts([2.0, 1.0, 0.0], [30, 80, 100], [2, 40, 10**4], 100, 10**4)
    eta = np.array([1e-4, 1e-2, 0.3])
    est = metrics.precision(c, eta)[:, 1]
    lo, hi = u.precision_interval(80, 40, 100, 10**4, eta)
    assert np.all(lo < est) and np.all(est < hi)
    with pytest.raises(ValueError, match="prevalence"):
        u.precision_interval(80, 40, 100, 10**4, 1.5)
    with pytest.raises(ValueError, match="fp exceeds n_neg"):
        u.precision_interval(80, 4e4, 100, 10**4, 0.1)


# ---------------------------------------------------------------------------- Brabec Delta


def _box_band_width_on_grid(t, f, ct, cf, eta):
    def prec(tt, ff):
        return eta * tt / (eta * tt + (1 - eta) * ff)

    return prec(t * (1 + ct), f * (1 - cf)) - prec(t * (1 - ct), f * (1 + cf))


@pytest.mark.parametrize(
    ("ct", "cf"), [(0.1, 0.1), (0.1, 0.5), (0.02, 0.3), (0.6, 0.05), (0.9, 0.9)]
)
def test_exact_box_width_and_location_against_dense_grid(ct, cf):
    t, f = 0.6, 1e-3
    # dense grid in log-odds around the peak: +-12 e-folds at 1e-5 resolution
    log_odds = np.linspace(-12, 12, 2_400_001) - math.log(t / f)
    eta = 1 / (1 + np.exp(-log_odds))
    w = _box_band_width_on_grid(t, f, ct, cf, eta)
    i = int(np.argmax(w))
    width, eta_star = u.box_band_max_width(ct, cf, t / f)
    assert width == pytest.approx(w[i], abs=1e-9)
    assert math.log(eta_star / (1 - eta_star)) == pytest.approx(log_odds[i], abs=2e-5)
    # Brabec Theorem 1: never above max(CV), equal iff the CVs are equal
    delta = u.brabec_delta(ct, cf)
    assert width <= delta + 1e-15
    assert (abs(width - delta) < 1e-12) == (ct == cf)


def test_brabec_paper_example_section5():
    # TPR 0.6 +- 0.06, FPR 1e-3 +- 1e-4: CV 0.1 each, Delta = 0.1 (Brabec et al. 2020, §5)
    assert u.brabec_delta(0.06 / 0.6, 1e-4 / 1e-3) == pytest.approx(0.1)
    w, _ = u.box_band_max_width(0.1, 0.1, 600)
    assert w == pytest.approx(0.1)
    # sigma_FPR = 5e-4: the bound says 0.5, the exact largest width is smaller
    w2, _ = u.box_band_max_width(0.1, 0.5, 600)
    assert u.brabec_delta(0.1, 0.5) == pytest.approx(0.5)
    assert w2 == pytest.approx(math.tanh((math.atanh(0.1) + math.atanh(0.5)) / 2))
    assert 0.3 < w2 < 0.5


def test_precision_uncertainty_reports_both_and_box_width_is_exact():
    pu = u.precision_uncertainty(600, 100, 1000, 10**5)
    assert pu.delta_bound == max(pu.cv_tpr, pu.cv_fpr)
    assert pu.max_width <= pu.delta_bound
    assert pu.method and pu.confidence == 0.95
    assert pu.tpr_interval.confidence == pytest.approx(math.sqrt(0.95))
    # the asymmetric CP box's largest width, checked on a dense grid
    eta = np.logspace(-8, -1e-9, 400_001)
    t_lo, t_hi = pu.tpr_interval
    f_lo, f_hi = pu.fpr_interval
    ub = eta * t_hi / (eta * t_hi + (1 - eta) * f_lo)
    lb = eta * t_lo / (eta * t_lo + (1 - eta) * f_hi)
    i = int(np.argmax(ub - lb))
    assert pu.box_max_width == pytest.approx((ub - lb)[i], abs=1e-8)
    assert pu.eta_at_box_max_width == pytest.approx(eta[i], rel=1e-3)


# ---------------------------------------------------------------------------- sample size


def test_required_sample_size_is_minimal():
    need = u.required_sample_size(0.6, 1e-3, max_width=0.1)
    level = math.sqrt(0.95)
    assert _cp_cv(need.n_neg, 1e-3, level) <= 0.1 < _cp_cv(need.n_neg - 1, 1e-3, level)
    assert _cp_cv(need.n_pos, 0.6, level) <= 0.1 < _cp_cv(need.n_pos - 1, 0.6, level)
    # Poisson intuition: CV ~ z/sqrt(expected FP), z at level sqrt(.95) ~ 2.24 -> ~500 FP
    assert 350 < need.expected_fp < 700
    # fixing the positives trades their precision against the negatives
    few = u.required_sample_size(0.6, 1e-3, 0.1, n_pos=400)
    many = u.required_sample_size(0.6, 1e-3, 0.1, n_pos=10**5)
    assert many.n_neg < few.n_neg
    w, _ = u.box_band_max_width(few.cv_tpr, few.cv_fpr)
    assert w == pytest.approx(0.1, abs=2e-3)
    # positives alone over budget: no number of negatives helps
    assert math.isinf(u.required_sample_size(0.6, 1e-3, 0.1, n_pos=20).n_neg)


@settings(max_examples=60, deadline=None)
@given(
    rate=st.floats(1e-8, 1.0),
    width=st.floats(0.005, 0.9),
    conf=st.sampled_from([0.9, 0.95, 0.99]),
)
def test_required_sample_size_is_minimal_everywhere(rate, width, conf):
    """The search's answer is, by definition, the smallest n with CV(n) <= the target: checked
    with the public Clopper-Pearson CV, whatever the rate (down to 1e-8) and target."""
    fpr = min(rate, 0.999)
    need = u.required_sample_size(0.5, fpr, max_width=width, confidence=conf)
    level = math.sqrt(conf)
    n = need.n_neg
    if math.isinf(n):
        assert _cp_cv(1e18, fpr, level) > width
    else:
        assert n == int(n) >= 1
        assert _cp_cv(n, fpr, level) <= width
        assert n == 1 or _cp_cv(n - 1, fpr, level) > width


def test_check_sample_size_warns_for_brabec_example():
    # "FPR = 1e-3 on a dataset having only 10,000 negative samples" (Brabec et al. §5)
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(2000, bool), np.zeros(10_000, bool)]
    s = rng.normal(size=y.size) + 3.0 * y
    c = RocCounts.from_scores(y, s)
    with pytest.warns(u.SmallTestSetWarning, match="10000 negatives"):
        res = u.check_sample_size(c, 1e-3)
    assert not res.adequate and res.achieved_width > 0.1 and res.message
    big = RocCounts(c.thresholds, c.tp, c.fp * 100, c.n_pos, c.n_neg * 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = u.check_sample_size(big, 1e-2)
    assert ok.adequate and ok.message is None and ok.achieved_width <= 0.1


# ---------------------------------------------------------------------------- count bootstrap


@pytest.fixture(scope="module")
def small_counts():
    rng = np.random.default_rng(3)
    n_pos, n_neg = 60, 3000
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    s = np.round(rng.normal(size=y.size) + 2.0 * y, 2)
    return y, s, RocCounts.from_scores(y, s)


def test_bootstrap_counts_reproducible_and_totals_fixed(small_counts):
    _, _, c = small_counts
    a = list(u.bootstrap_counts(c, 50, seed=7, chunk_size=20))
    b = list(u.bootstrap_counts(c, 50, seed=7, chunk_size=20))
    assert [x[0].shape[0] for x in a] == [20, 20, 10]
    for (tp1, fp1), (tp2, fp2) in zip(a, b, strict=True):
        assert np.array_equal(tp1, tp2) and np.array_equal(fp1, fp2)
        assert np.all(tp1[:, -1] == c.n_pos) and np.all(fp1[:, -1] == c.n_neg)
        assert np.all(np.diff(tp1, axis=1) >= 0)
    other = next(u.bootstrap_counts(c, 20, seed=8))
    assert not np.array_equal(other[1], a[0][1])


def test_bootstrap_marginals_are_binomial(small_counts):
    _, _, c = small_counts
    j = int(np.searchsorted(c.fpr, 0.05))
    fp = np.concatenate([f[:, j] for _, f in u.bootstrap_counts(c, 4000, seed=1)])
    p = c.fp[j] / c.n_neg
    mean, var = c.n_neg * p, c.n_neg * p * (1 - p)
    assert abs(fp.mean() - mean) < 4 * math.sqrt(var / fp.size)
    assert fp.var(ddof=1) / var == pytest.approx(1.0, abs=0.1)


def test_count_bootstrap_equals_raw_resampling_in_distribution(small_counts):
    y, s, c = small_counts
    eta = np.array([1e-3])
    rng = np.random.default_rng(11)
    pos, neg = s[y], s[~y]
    raw = []
    for _ in range(1000):
        ps = rng.choice(pos, pos.size)
        ns = rng.choice(neg, neg.size)
        cc = RocCounts.from_scores(np.r_[np.ones(ps.size), np.zeros(ns.size)], np.r_[ps, ns])
        raw.append(metrics.average_precision(cc, 1e-3))
    cols = _batch._positive_columns(c)
    cnt = u.bootstrap_statistic(
        c, lambda tp, fp: _batch._ap_batch(tp, fp, c.n_pos, c.n_neg, eta, cols), 1000, seed=5
    )[:, 0]
    assert stats.ks_2samp(raw, cnt).pvalue > 1e-3
    assert np.std(cnt) == pytest.approx(np.std(raw), rel=0.12)
    assert np.mean(cnt) == pytest.approx(np.mean(raw), abs=4 * np.std(raw) / math.sqrt(500))


def test_compressed_and_uncompressed_bootstrap_agree_in_distribution(small_counts):
    y, s, c = small_counts
    full = RocCounts.from_scores(y, s, compress=False)
    assert full.n_thresholds > c.n_thresholds
    eta = np.array([1e-2])
    a = u.prevalence_band(c, "ap", eta, n_boot=400, seed=1)
    b = u.prevalence_band(full, "ap", eta, n_boot=400, seed=2)
    assert a.estimate[0] == pytest.approx(b.estimate[0], abs=1e-15)
    assert a.extra["se"][0] == pytest.approx(b.extra["se"][0], rel=0.2)


def test_weighted_counts_rejected():
    c = RocCounts.from_scores([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.3], sample_weight=[1, 2, 1, 1])
    with pytest.raises(ValueError, match="weighted"):
        next(u.bootstrap_counts(c, 10))


# ---------------------------------------------------------------------------- batched metrics


def test_batched_metrics_match_metrics_module_and_sklearn(small_counts):
    y, s, c = small_counts
    eta = np.logspace(-5, -0.4, 9)
    for name, fn in [
        ("ap", metrics.average_precision),
        ("pr_auc", metrics.pr_auc),
        ("max_f1", metrics.max_f1),
    ]:
        np.testing.assert_allclose(u.metric_values(c, name, eta), fn(c, eta), atol=1e-12)
    # AP at eta = scikit-learn AP with the negatives re-weighted to prevalence eta
    for e in (1e-4, 0.2):
        w = np.where(y, 1.0, y.sum() * (1 - e) / (e * (~y).sum()))
        ref = average_precision_score(y, s, sample_weight=w)
        assert u.metric_values(c, "ap", [e])[0] == pytest.approx(ref, rel=1e-10)


def test_binned_ap_within_stated_error_bound():
    rng = np.random.default_rng(5)
    y = np.r_[np.ones(500, bool), np.zeros(50_000, bool)]
    s = rng.normal(size=y.size) + 2.5 * y
    c = RocCounts.from_scores(y, s)
    eta = u.default_prevalence_grid(50)
    exact = u.metric_values(c, "ap", eta)
    for h in (0.01, 0.05):
        approx = u.metric_values(c, "ap", eta, grid_step=h)
        bound = h * h * _batch._LOGISTIC_MAX_CURVATURE / 8
        err = np.max(np.abs(approx - exact))
        assert err <= bound
        assert err > 0  # it is an approximation
    assert np.max(np.abs(approx - exact)) > 1e-3 * bound  # the bound is not absurdly loose


# ---------------------------------------------------------------------------- bands


def test_prevalence_band_sup_t_vs_pointwise(small_counts):
    _, _, c = small_counts
    eta = np.logspace(-4, -0.5, 25)
    kw = {"construction": "bootstrap"}  # the earlier sup-t band, kept as an option
    sim = u.prevalence_band(c, "ap", eta, n_boot=300, seed=0, **kw)
    pw = u.prevalence_band(c, "ap", eta, n_boot=300, seed=0, simultaneous=False, **kw)
    assert sim.simultaneous and not pw.simultaneous
    assert "simultaneous" in sim.label and "pointwise" in pw.label
    assert sim.confidence == 0.95 and "sup-t" in sim.method and sim.n_boot == 300
    assert np.all(sim.low <= sim.estimate) and np.all(sim.estimate <= sim.high)
    assert np.all((sim.low >= 0) & (sim.high <= 1))
    assert np.mean(sim.high - sim.low) > np.mean(pw.high - pw.low)
    assert sim.extra["critical_value"] > stats.norm.isf(0.025)
    again = u.prevalence_band(c, "ap", eta, n_boot=300, seed=0, **kw)
    assert np.array_equal(again.low, sim.low)
    np.testing.assert_allclose(sim.estimate, metrics.average_precision(c, eta), atol=1e-12)


@pytest.mark.parametrize("metric", ["pr_auc", "max_f1", "f1"])
def test_prevalence_band_other_metrics(small_counts, metric):
    _, _, c = small_counts
    eta = np.logspace(-3, -0.5, 8)
    thr = float(c.thresholds[c.n_thresholds // 4]) if metric == "f1" else None
    band = u.prevalence_band(c, metric, eta, threshold=thr, n_boot=100, seed=1)
    assert np.all(band.low <= band.estimate + 1e-12) and np.all(band.estimate <= band.high)
    assert band.metric == metric


def test_roc_and_pr_bands(small_counts):
    _, _, c = small_counts
    roc = u.roc_band(c, n_boot=200, seed=0)
    fpr, tpr, _ = metrics.roc_curve(c)
    np.testing.assert_allclose(roc.estimate, np.interp(roc.grid, fpr, tpr), atol=1e-12)
    assert np.all(roc.low <= roc.estimate) and np.all(roc.estimate <= roc.high)
    assert roc.grid_name == "fpr" and roc.simultaneous
    pr = u.pr_band(c, 0.01, n_boot=200, seed=0)
    assert pr.grid_name == "recall" and pr.extra["prevalence"] == 0.01
    assert np.all(pr.low <= pr.estimate) and np.all(pr.estimate <= pr.high)
    # the PR band's estimate is the Davis-Goadrich interpolated curve: its area matches pr_auc
    r = np.linspace(1e-6, 1, 20001)
    prec = u.pr_band(c, 0.01, r, n_boot=2, seed=0).estimate
    assert np.trapezoid(prec, r) == pytest.approx(metrics.pr_auc(c, 0.01), abs=2e-3)


def test_p3_and_f1_bands_simultaneous_over_eta(small_counts):
    _, _, c = small_counts
    band = u.p3_band(40, 30, 60, 3000)
    lo, hi = u.precision_interval(40, 30, 60, 3000, band.grid)
    assert (
        np.array_equal(band.low, lo)
        and np.array_equal(band.high, hi)
        and band.simultaneous
        and "koopman" in band.method
    )
    np.testing.assert_allclose(band.estimate, metrics.p3_curve(40 / 60, 30 / 3000, band.grid))
    thr = float(c.thresholds[c.n_thresholds // 3])
    fb = u.f1_band(c, thr)
    j = int(np.flatnonzero(c.thresholds == thr)[0])
    np.testing.assert_allclose(fb.estimate, metrics.f1(c, fb.grid)[:, j], rtol=1e-12)
    assert np.all(fb.low <= fb.estimate) and np.all(fb.estimate <= fb.high)


# ---------------------------------------------------------------------------- coverage


def _binormal(mu, t):
    return stats.norm.sf(t - mu), stats.norm.sf(t)


@pytest.mark.parametrize(
    ("n_pos", "n_neg", "fpr_target", "mu"),
    [
        (200, 10**5, 5e-5, 3.5),  # ~5 expected false positives
        (300, 10**5, 1e-3, 3.0),  # ~100 expected false positives
    ],
)
def test_coverage_binormal(n_pos, n_neg, fpr_target, mu):
    """Nominal 95% intervals cover >= 93% at several eta, including eta = 1e-4 (binormal model:
    negatives N(0,1), positives N(mu,1), threshold t -- TPR, FPR and precision(eta) exact).
    Counts at a fixed threshold are drawn directly from their binomials, which is exactly the
    distribution of counting simulated scores above t."""
    t = stats.norm.isf(fpr_target)
    tpr, fpr = _binormal(mu, t)
    rng = np.random.default_rng(2024)
    reps = 3000
    tp = rng.binomial(n_pos, tpr, reps)
    fp = rng.binomial(n_neg, fpr, reps)
    lo, hi = u.rate_interval(tp, n_pos)
    assert np.mean((lo <= tpr) & (tpr <= hi)) >= 0.93
    lo, hi = u.rate_interval(fp, n_neg)
    assert np.mean((lo <= fpr) & (fpr <= hi)) >= 0.93
    etas = np.array([1e-4, 1e-2, 0.1, 0.5])
    true_prec = etas * tpr / (etas * tpr + (1 - etas) * fpr)
    for method in u.RATIO_METHODS:
        lo, hi = u.precision_interval(tp[:, None], fp[:, None], n_pos, n_neg, etas, method=method)
        cover = np.mean((lo <= true_prec) & (true_prec <= hi), axis=0)
        assert np.all(cover >= 0.93), (method, cover)
    # F1 box band: simultaneous over the whole eta grid
    grid = u.default_prevalence_grid(50)
    o = grid / (1 - grid)
    t_lo, t_hi = u.rate_interval(tp, n_pos, math.sqrt(0.95))
    f_lo, f_hi = u.rate_interval(fp, n_neg, math.sqrt(0.95))

    def f1(tt, ff):
        return 2 * o * tt / (o + o * tt + ff)

    true_f1 = f1(tpr, fpr)
    inside = (f1(t_lo[:, None], f_hi[:, None]) <= true_f1) & (
        true_f1 <= f1(t_hi[:, None], f_lo[:, None])
    )
    assert np.mean(inside.all(axis=1)) >= 0.95


# ---------------------------------------------------------------------------- shared replicates
def _binormal_counts(n=40_000, seed=2):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.05
    s = np.round(rng.normal(size=n) + 1.3 * y, 3)
    return RocCounts.from_scores(y, s)


def test_fast_pr_auc_and_max_f1_kernels_within_stated_bounds():
    c = _binormal_counts()
    cols = _batch._positive_columns(c)
    eta = np.logspace(-6, math.log10(0.5), 40)
    tp, fp = next(iter(u.bootstrap_counts(c, 20, seed=1)))
    tp, fp = tp.astype(float), fp.astype(float)
    exact = _batch._pr_auc_batch(tp, fp, c.n_pos, c.n_neg, eta, cols)
    fast = _batch._pr_auc_deposit(tp, fp, c.n_pos, c.n_neg, eta, cols, 0.01)
    assert np.max(np.abs(fast - exact)) <= _batch._pr_auc_error_bound(0.01)
    # independent reference for one row: the metrics module's exact PR-AUC
    one = _batch._pr_auc_deposit(
        c.tp[None].astype(float), c.fp[None].astype(float), c.n_pos, c.n_neg, eta, cols, 0.01
    )[0]
    np.testing.assert_allclose(one, metrics.pr_auc(c, eta), atol=_batch._pr_auc_error_bound(0.01))
    mf = _batch._max_f1_fast(tp, fp, c.n_pos, c.n_neg, eta, cols)
    np.testing.assert_allclose(
        mf, _batch._max_f1_batch(tp, fp, c.n_pos, c.n_neg, eta, cols), rtol=1e-12
    )


def test_bootstrap_statistics_share_one_replicate_set():
    c = _binormal_counts(8000)
    eta = np.logspace(-4, -1, 7)
    stats = {
        "ap": u.metric_statistic(c, "ap", eta),
        "max_f1": u.metric_statistic(c, "max_f1", eta),
        "roc": u.roc_statistic(c),
        "auc": u.roc_auc_statistic(c),
    }
    reps = u.bootstrap_statistics(c, stats, 200, seed=3)
    assert {k: v.shape for k, v in reps.items()} == {
        "ap": (200, 7),
        "max_f1": (200, 7),
        "roc": (200, 100),
        "auc": (200, 1),
    }
    # same seed, one statistic at a time -> identical replicates (the draw is shared, not redone)
    alone = u.bootstrap_statistic(c, stats["max_f1"], 200, seed=3)
    np.testing.assert_array_equal(reps["max_f1"], alone)
    np.testing.assert_allclose(stats["auc"].estimate(c)[0], metrics.roc_auc(c), atol=1e-12)
    band = u.band_from_replicates(stats["ap"].estimate(c), reps["ap"], eta, metric="ap")
    assert band.simultaneous and band.n_boot == 200 and np.all(band.low <= band.high)
    with pytest.raises(ValueError, match="replicates"):
        u.band_from_replicates(np.zeros(3), np.zeros((10, 4)), np.arange(3))


@pytest.mark.parametrize(
    ("costs", "match"),
    [
        ((1,), r"costs must be None, \(cost_fp, cost_fn\) or .*, got \(1,\)"),
        ((0, 1), r"costs\[0\] \(cost_fp\) must be positive and finite, got 0"),
        ((1, float("inf")), r"costs\[1\] \(cost_fn\) must be positive and finite, got inf"),
        ((True, 1), r"costs\[0\] \(cost_fp\) must be positive and finite, got True"),
        ({"fp": 1, "fn": -2}, r"costs\['fn'\] must be positive and finite, got -2"),
        ({"fp": 1}, r"costs must have exactly the keys 'fp' and 'fn'"),
        ("ab", r"got 'ab'"),
    ],
)
def test_headline_cost_interval_rejects_bad_costs_by_name(costs, match):
    c = _binormal_counts(2000)
    with pytest.raises(ValueError, match=match):
        u.headline_intervals(c, [1e-2], n_boot=50, costs=costs)


def test_chosen_cost_holds_the_first_samples_threshold_and_is_capped_by_trivial_costs():
    """``chosen_cost_statistic``: the threshold of the lowest cost is chosen on the counts it
    is built from (scikit-learn's ROC points plus flag-nothing as the reference), and a second
    sample's counts at the same thresholds are costed at that threshold -- no new minimum --
    then capped at the trivial classifiers' costs eta C_FN and (1 - eta) C_FP."""
    from sklearn.metrics import roc_curve

    from mlflow_imbalance.stats.bootstrap import chosen_cost_statistic, min_cost_statistic

    rng = np.random.default_rng(8)
    y = np.r_[np.ones(60, bool), np.zeros(3000, bool)]
    s1 = np.round(rng.normal(size=y.size) + 2.0 * y, 2)
    s2 = np.round(rng.normal(size=y.size) + 1.0 * y, 2)  # a weaker second sample
    c = RocCounts.from_scores(y, s1)
    etas, cfp, cfn = np.array([1e-4, 1e-2, 0.1, 0.3]), 1.0, 40.0
    st = chosen_cost_statistic(c, etas, cfp, cfn)
    # on its own counts: the lowest cost (as min_cost_statistic)
    np.testing.assert_allclose(
        st.estimate(c), min_cost_statistic(c, etas, cfp, cfn).estimate(c), rtol=1e-12
    )
    fpr, tpr, thr = roc_curve(y, s1, drop_intermediate=False)  # thr[0] = inf: flag nothing
    tp2 = np.array([np.sum(y & (s2 >= t)) for t in c.thresholds], float)
    fp2 = np.array([np.sum(~y & (s2 >= t)) for t in c.thresholds], float)
    got = st(tp2[None], fp2[None])[0]
    for j, e in enumerate(etas):
        i = int(np.argmin((1 - e) * cfp * fpr + e * cfn * (1 - tpr)))  # the first sample's pick
        t2 = np.sum(y & (s2 >= thr[i])) / y.sum()
        f2 = np.sum(~y & (s2 >= thr[i])) / (~y).sum()
        ref = min((1 - e) * cfp * f2 + e * cfn * (1 - t2), e * cfn, (1 - e) * cfp)
        assert got[j] == pytest.approx(ref, rel=1e-12, abs=1e-15), (e, got[j], ref)
    # never below the second sample's own lowest cost (no new minimum is taken) and above it
    # somewhere; the cap binds somewhere (a weaker sample at the first one's threshold)
    own = min_cost_statistic(c, etas, cfp, cfn)(tp2[None], fp2[None])[0]
    assert np.all(got >= own - 1e-15) and np.any(got > own + 1e-12)
    assert np.any(got == np.minimum(etas * cfn, (1 - etas) * cfp))


# ---------------------------------------------------------------------------- band helpers
def test_band_from_replicates_rate_n_equals_roc_band():
    """``rate_n=n_pos`` plus the low-FPR floor (``roc_low_fpr_floor``) gives exactly roc_band
    (same replicates): the binomial floor is applied."""
    rng = np.random.default_rng(11)
    y = rng.random(3000) < 0.05
    c = RocCounts.from_scores(y, rng.normal(size=3000) + 3.0 * y)
    ref = u.roc_band(c, n_boot=80, seed=4)
    stat = u.roc_statistic(c)
    reps = u.bootstrap_statistic(c, stat, 80, 4)
    low_fpr = u.roc_low_fpr_floor(c, stat.grid, 80, 4)
    b = u.band_from_replicates(
        stat.estimate(c), reps, stat.grid, grid_name="fpr", rate_n=c.n_pos,
        min_scale=(low_fpr, 0.0),
    )  # fmt: skip
    np.testing.assert_array_equal(b.low, ref.low)
    np.testing.assert_array_equal(b.high, ref.high)
    plain = u.band_from_replicates(stat.estimate(c), reps, stat.grid, grid_name="fpr")
    ones = stat.estimate(c) == 1.0
    assert ones.any() and np.all(plain.low[ones] == 1.0)  # collapsed without the floor
    assert np.all(b.low[ones] < 0.999)
    # an explicit min_scale works the same way, and rate_n is validated
    floors = bands._rate_min_scales(stat.estimate(c), c.n_pos)
    floors = (np.maximum(floors[0], low_fpr), floors[1])
    b2 = u.band_from_replicates(stat.estimate(c), reps, stat.grid, min_scale=floors)
    np.testing.assert_array_equal(b2.low, ref.low)
    with pytest.raises(ValueError, match="rate_n must be a positive"):
        u.band_from_replicates(stat.estimate(c), reps, stat.grid, rate_n=0)
    with pytest.raises(ValueError, match="rate_n needs scale='arcsine'"):
        u.band_from_replicates(stat.estimate(c), reps, stat.grid, rate_n=5, scale="identity")


def test_sup_t_critical_value_not_inflated_by_one_lumpy_point():
    """A grid point where > 84% of replicates equal the estimate but a few deviate (precision 1
    before the first negative) used to be studentised by ~0 (critical value ~3000, the whole
    band blown up: the quick-start PR band). The one-sided RMS floor bounds its weight."""
    rng = np.random.default_rng(0)
    b, g = 400, 30
    est = np.full(g, 0.5)
    reps = 0.5 + 0.02 * rng.standard_normal((b, g))
    est[0] = 1.0
    reps[:, 0] = 1.0
    reps[:12, 0] = 0.985  # 3% of replicates deviate
    band = u.band_from_replicates(est, reps, np.arange(g, dtype=float))
    crit = band.extra["critical_value"]
    assert 1.96 <= crit < 4.0, crit
    # the regular points get the usual sup-t width (about crit * 0.02 either side)
    assert np.all(band.high[1:] - band.low[1:] < 2 * 4.0 * 0.021)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5),
    st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5),
    st.lists(st.floats(0.0, 1.0), min_size=8, max_size=8),
    st.floats(1e-5, 0.5),
)
def test_pr_band_from_roc_contains_every_curve_inside_the_roc_band(lo_raw, w_raw, u_raw, eta):
    """Property: any monotone ROC curve inside the ROC band at the grid FPRs has its PR curve
    (Davis-Goadrich: precision at recall r on the interpolated curve) inside the mapped band."""
    f = np.array([0.001, 0.01, 0.05, 0.2, 0.6])
    lo = np.maximum.accumulate(np.sort(lo_raw)) * 0.9
    hi = np.minimum(1.0, lo + np.asarray(w_raw) * 0.5 + 0.01)
    hi = np.maximum.accumulate(hi)
    est = (lo + hi) / 2
    roc = u.Band(f, "fpr", est, lo, hi, "test band", 0.95, True, "roc")
    # a random monotone curve through the band at the grid points, free in between
    t_grid = lo + (hi - lo) * np.asarray(u_raw[:5])
    t_grid = np.maximum.accumulate(t_grid)
    t_grid = np.minimum(t_grid, hi)
    ff = np.r_[0.0, 0.0005, f, 1.0]
    first = t_grid[0] * u_raw[5]
    tt = np.r_[0.0, first, t_grid, 1.0]
    rgrid = np.linspace(0.01, 1.0, 100)
    pr = u.pr_band_from_roc(roc, eta, rgrid)
    fq = np.interp(rgrid, tt, ff)  # FPR where the curve first reaches r (tt non-decreasing)
    for k in range(rgrid.size):  # exact first-reach for flat parts
        fq[k] = ff[np.argmax(tt >= rgrid[k])] if np.any(tt == rgrid[k]) else fq[k]
    o = eta / (1 - eta)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(fq > 0, o * rgrid / (o * rgrid + fq), 1.0)
    assert np.all(pr.low <= p + 1e-12) and np.all(p <= pr.high + 1e-12)
    assert np.all(pr.low <= pr.estimate) and np.all(pr.estimate <= pr.high)


def test_pr_band_from_roc_validation_and_metadata():
    rng = np.random.default_rng(2)
    y = rng.random(2000) < 0.1
    c = RocCounts.from_scores(y, rng.normal(size=2000) + 2 * y)
    rb = u.roc_band(c, n_boot=60, seed=0)
    pb = u.pr_band_from_roc(rb, 0.01)
    assert pb.grid_name == "recall" and pb.metric == "pr" and pb.simultaneous
    assert pb.extra["prevalence"] == 0.01 and "eq. 8" in pb.method
    assert np.all((pb.low <= pb.estimate) & (pb.estimate <= pb.high))
    # at recall 1 the FPR bound is exactly the grid FPR where the lower edge reaches 1, or 1
    assert pb.low[-1] >= 0.01 / (0.01 + 0.99)
    with pytest.raises(ValueError, match="roc must be a Band over an FPR grid"):
        u.pr_band_from_roc(pb, 0.01)
    with pytest.raises(ValueError, match="recall_grid"):
        u.pr_band_from_roc(rb, 0.01, [0.0, 0.5])
    with pytest.raises(ValueError, match="prevalence"):
        u.pr_band_from_roc(rb, 1.5)
    with pytest.raises(ValueError, match="estimate must have shape"):
        u.pr_band_from_roc(rb, 0.01, estimate=np.ones(3))


# ---------------------------------------------------------------------------- headline intervals
# (moved from tests/test_tracking.py with the code: tracking only calls these now)


def _scored(n: int = 3000, prevalence: float = 0.05, seed: int = 0, ties: bool = False):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    s = rng.normal(size=n) + 1.5 * y
    if ties:
        s = np.round(s, 1)
    return y.astype(int), s


def _delong_reference(y: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    """DeLong et al. (1988) from the pairwise comparison matrix (independent of the counts)."""
    pos, neg = s[y == 1], s[y == 0]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    var = v10.var(ddof=1) / pos.size + v01.var(ddof=1) / neg.size
    return float(psi.mean()), float(np.sqrt(var))


@pytest.mark.parametrize("compress", [True, False])
def test_roc_auc_delong_from_counts_matches_pairwise_reference(compress):
    from scipy.stats import norm

    y, s = _scored(n=700, prevalence=0.15, seed=21, ties=True)  # ties: round(s, 1)
    c = RocCounts.from_scores(y, s, compress=compress)
    iv = u.roc_auc_interval(c)
    auc, (lo, hi), method, se = iv.estimate, iv, iv.method, iv.se
    ref_auc, ref_se = _delong_reference(y, s)
    assert auc == pytest.approx(roc_auc_score(y, s), rel=1e-12)
    assert auc == pytest.approx(ref_auc, rel=1e-12)
    assert se == pytest.approx(ref_se, rel=1e-10)
    # logit-scale Wald interval from the reference standard error
    z = norm.ppf(0.975)
    half = z * ref_se / (ref_auc * (1 - ref_auc))
    logit = np.log(ref_auc / (1 - ref_auc))
    assert lo == pytest.approx(1 / (1 + np.exp(-(logit - half))), rel=1e-9)
    assert hi == pytest.approx(1 / (1 + np.exp(-(logit + half))), rel=1e-9)
    assert "DeLong" in method and "logit" in method


def test_roc_auc_interval_coverage_binormal():
    """Nominal 95%: coverage over 300 binormal test sets (true AUC = Phi(d / sqrt 2))."""
    from scipy.stats import norm

    rng = np.random.default_rng(5)
    d, n_pos, n_neg, sims = 1.0, 40, 400, 300
    truth = norm.cdf(d / np.sqrt(2))
    hits = 0
    for _ in range(sims):
        y = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)]
        s = np.round(np.r_[rng.normal(d, 1, n_pos), rng.normal(0, 1, n_neg)], 2)
        lo, hi = u.roc_auc_interval(RocCounts.from_scores(y, s))
        hits += lo <= truth <= hi
    # binomial sd of the coverage estimate at 0.95 is 0.0126: 0.91..0.99 is > 3 sd wide
    assert 0.91 <= hits / sims <= 0.99


def test_roc_auc_interval_degenerate_and_tiny():
    y = np.r_[np.ones(30, int), np.zeros(50, int)]
    s = np.r_[np.linspace(2, 3, 30), np.linspace(0, 1, 50)]  # perfect separation
    iv = u.roc_auc_interval(RocCounts.from_scores(y, s))
    auc, (lo, hi), method, se = iv.estimate, iv, iv.method, iv.se
    assert auc == 1.0 and se == 0.0 and hi == 1.0
    assert lo == pytest.approx(0.025 ** (1 / 30), rel=1e-9)  # Clopper-Pearson, 30 of 30 pairs
    assert "Clopper-Pearson" in method
    one = RocCounts.from_scores([1, 0, 0, 0], [0.9, 0.1, 0.95, 0.2])
    res = u.roc_auc_interval(one)
    auc, method = res.estimate, res.method
    iv = tuple(res) if res.available else None
    assert auc == pytest.approx(2 / 3) and iv is None and "needs >= 2 positives" in method


#: Reference bootstraps already computed, by their arguments: the parametrised tests below ask
#: for the same one (same data, draws and seed) once per case.
_REFERENCES: dict[tuple, dict] = {}


def _reference(fn, y, s, etas, n_boot, seed) -> dict:
    """``fn(y, s, etas, n_boot, seed)``, computed once per distinct arguments (a copy)."""
    key = (fn.__name__, y.tobytes(), s.tobytes(), np.asarray(etas).tobytes(), n_boot, seed)
    if key not in _REFERENCES:
        _REFERENCES[key] = fn(y, s, etas, n_boot, seed)
    return {k: v.copy() for k, v in _REFERENCES[key].items()}


def _direct_bootstrap(y, s, etas, n_boot, seed):
    """Stratified bootstrap of (score, label) pairs with scikit-learn metrics, independent of
    the count bootstrap: AP and max-F1 at each prevalence via negatives re-weighted to it."""
    from sklearn.metrics import precision_recall_curve

    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    out = {"ap": [], "max_f1": []}
    for _ in range(n_boot):
        idx = np.r_[rng.choice(pos, pos.size), rng.choice(neg, neg.size)]
        yb, sb = y[idx], s[idx]
        ap_row, f1_row = [], []
        for eta in etas:
            w = np.where(yb == 1, 1.0, pos.size * (1 - eta) / (eta * neg.size))
            ap_row.append(average_precision_score(yb, sb, sample_weight=w))
            p, r, _ = precision_recall_curve(yb, sb, sample_weight=w)
            with np.errstate(invalid="ignore", divide="ignore"):
                f1 = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
            f1_row.append(f1.max())
        out["ap"].append(ap_row)
        out["max_f1"].append(f1_row)
    return {k: np.percentile(np.asarray(v), [2.5, 97.5], axis=0).T for k, v in out.items()}


@pytest.mark.parametrize("points", [200, 25])  # 25: the counts are thinned for the bootstrap
def test_bootstrap_intervals_match_a_direct_bootstrap(points):
    from mlflow_imbalance import metrics

    y, s = _scored(n=1500, prevalence=0.1, seed=22)
    c = RocCounts.from_scores(y, s)
    etas = np.array([c.prevalence, 0.02])
    exact = {
        "ap": metrics.average_precision(c, etas),
        "pr_auc": metrics.pr_auc(c, etas),
        "max_f1": metrics.max_f1(c, etas),
    }
    h = u.headline_intervals(
        c, etas, exact=exact, n_boot=2000, seed=3, points=points, construction="bootstrap"
    )
    got, info = h.intervals, h.info
    ref = _reference(_direct_bootstrap, y, s, etas, n_boot=800, seed=4)
    for key in ("ap", "max_f1"):
        width = ref[key][:, 1] - ref[key][:, 0]
        # Monte-Carlo sd of a 2.5% quantile is ~0.03 of the width here; thinning adds a little
        np.testing.assert_allclose(got[key], ref[key], atol=float(0.12 * width.max()))
    assert info["seed"] == 3 and info["n_boot"] == 2000
    if points == 25:
        assert info["thinned_to"] < info["n_thresholds"] == c.n_thresholds
        # by construction: a dropped point shares a TPR bin (width 1/points) and a TPR+FPR bin
        # (width 2/points) with its kept representative
        assert 0 < info["max_tpr_error"] < 1 / points and 0 < info["max_fpr_error"] < 2 / points
        thin = u.thin_for_bootstrap(c, points).counts
        shift = max(
            np.max(np.abs(metrics.average_precision(thin, etas) - exact["ap"])),
            np.max(np.abs(metrics.pr_auc(thin, etas) - exact["pr_auc"])),
            np.max(np.abs(metrics.max_f1(thin, etas) - exact["max_f1"])),
        )
        assert info["max_estimate_shift"] == pytest.approx(shift, rel=1e-6, abs=1e-12)
    else:
        assert info["thinned_to"] == c.n_thresholds and info["max_estimate_shift"] < 1e-12


def test_pr_auc_interval_matches_a_direct_bootstrap():
    """PR-AUC (Davis-Goadrich) has no scikit-learn twin: resample examples directly and
    recount, so only the resampling scheme is under test."""
    from mlflow_imbalance import metrics

    y, s = _scored(n=800, prevalence=0.1, seed=23)
    c = RocCounts.from_scores(y, s)
    etas = np.array([0.05])
    exact = {
        k: f(c, etas)
        for k, f in (
            ("ap", metrics.average_precision),
            ("pr_auc", metrics.pr_auc),
            ("max_f1", metrics.max_f1),
        )
    }
    got = u.headline_intervals(
        c, etas, exact=exact, n_boot=2000, seed=1, construction="bootstrap"
    ).intervals
    rng = np.random.default_rng(2)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    reps = []
    for _ in range(800):
        idx = np.r_[rng.choice(pos, pos.size), rng.choice(neg, neg.size)]
        reps.append(metrics.pr_auc(RocCounts.from_scores(y[idx], s[idx]), 0.05))
    ref = np.percentile(reps, [2.5, 97.5])
    np.testing.assert_allclose(got["pr_auc"][0], ref, atol=0.12 * (ref[1] - ref[0]))


def _direct_bayesian_bootstrap(y, s, etas, n_boot, seed):
    """Rubin's Bayesian bootstrap of (score, label) pairs with scikit-learn metrics, plus one
    pseudo-negative of Gamma(1/2) weight scoring above every example and one pseudo-positive of
    Gamma(1/2) weight tied with the lowest score (the construction of ``stats.posterior``,
    built here independently of the counts): each example gets a Gamma(1) weight, each class is
    normalised to eta / 1 - eta, and AP, max-F1 and PR-AUC are the weighted metrics of that
    population."""
    from sklearn.metrics import precision_recall_curve

    rng = np.random.default_rng(seed)
    yy = np.r_[y, 0, 1]
    ss = np.r_[s, s.max() + 1.0, s.min()]
    is_pos = yy == 1
    out = {"ap": [], "max_f1": [], "pr_auc": [], "max_f1_base": []}

    def max_f1(w):
        p, r, _ = precision_recall_curve(yy, ss, sample_weight=w)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(p + r > 0, 2 * p * r / (p + r), 0.0).max()

    for _ in range(n_boot):
        g = rng.standard_gamma(1.0, size=yy.size)
        g[-2:] = rng.standard_gamma(0.5, size=2)
        g0 = g.copy()
        g0[-2] = 0.0  # the same draw without the pseudo-negative
        rows = {k: [] for k in out}
        for eta in etas:
            w = np.where(is_pos, eta * g / g[is_pos].sum(), (1 - eta) * g / g[~is_pos].sum())
            w0 = np.where(is_pos, eta * g0 / g0[is_pos].sum(), (1 - eta) * g0 / g0[~is_pos].sum())
            rows["ap"].append(average_precision_score(yy, ss, sample_weight=w))
            rows["max_f1"].append(max_f1(w))
            rows["max_f1_base"].append(max_f1(w0))
            cw = RocCounts.from_scores(yy, ss, sample_weight=w)
            rows["pr_auc"].append(float(metrics.pr_auc(cw, eta)))
        for k in out:
            out[k].append(rows[k])
    arr = {k: np.asarray(v) for k, v in out.items()}
    # max-F1: the draws minus the selection bias (median of the draws without the
    # pseudo-negative minus the estimate), as stats.posterior.recentre_max documents
    est = np.asarray(metrics.max_f1(RocCounts.from_scores(y, s), etas), dtype=float)
    arr["max_f1"] = arr["max_f1"] - (np.median(arr.pop("max_f1_base"), axis=0) - est)
    return {k: np.percentile(v, [2.5, 97.5], axis=0).T for k, v in arr.items()}


@pytest.mark.parametrize("points", [200, 25])
def test_headline_intervals_match_a_direct_bayesian_bootstrap(points):
    """The default headline intervals equal an example-level Bayesian bootstrap with the
    Jeffreys pseudo-negative (scikit-learn metrics, no counts), within Monte-Carlo error."""
    y, s = _scored(n=1500, prevalence=0.1, seed=22)
    c = RocCounts.from_scores(y, s)
    etas = np.array([c.prevalence, 0.02, 1e-3])
    h = u.headline_intervals(c, etas, n_boot=2000, seed=3, points=points)
    assert h.info["valid_everywhere"] and h.info["min_support"] == 0
    assert "Bayesian" in h.method and "Jeffreys" in h.method
    ref = _reference(_direct_bayesian_bootstrap, y, s, etas, n_boot=600, seed=4)
    exact = {
        "ap": metrics.average_precision(c, etas),
        "pr_auc": metrics.pr_auc(c, etas),
        "max_f1": metrics.max_f1(c, etas),
    }
    for key in ("ap", "max_f1", "pr_auc"):
        width = ref[key][:, 1] - ref[key][:, 0]
        lo = np.minimum(ref[key][:, 0], exact[key])  # the intervals contain the estimate
        hi = np.maximum(ref[key][:, 1], exact[key])
        np.testing.assert_allclose(
            h.intervals[key], np.column_stack([lo, hi]), atol=float(0.12 * width.max())
        )


def test_headline_intervals_extra_statistics_share_its_draws():
    """``extra`` statistics are evaluated on the intervals' own draws (the report's bands,
    ROC floor and live cost limits): the intervals do not change, and the extra draws are a
    direct Bayesian count bootstrap of the thinned counts with the same seed."""
    from mlflow_imbalance.stats.bootstrap import (
        bayesian_statistics,
        metric_statistic,
        min_cost_statistic,
        roc_statistic,
    )

    y, s = _scored(n=3000, prevalence=0.05, seed=8)
    c = RocCounts.from_scores(y, s)
    etas = np.array([c.prevalence, 1e-3])
    kw = {"n_boot": 150, "seed": 5, "points": 30, "costs": (1.0, 40.0)}
    plain = u.headline_intervals(c, etas, **kw)
    thin = u.thin_for_bootstrap(c, 30).counts
    assert thin.n_thresholds < c.n_thresholds  # thinned: the extra statistics are on `thin`
    extra = {
        "band:max_f1": metric_statistic(thin, "max_f1", np.geomspace(1e-4, 0.3, 7)),
        "roc": roc_statistic(thin),
        "live:cost": min_cost_statistic(thin, [1e-4, 1e-2], 1.0, 40.0),
    }
    base = ("band:max_f1", "live:cost")
    more = u.headline_intervals(c, etas, **kw, extra=extra, extra_base_for=base)
    assert more.info == plain.info
    for key, iv in plain.intervals.items():
        np.testing.assert_array_equal(more.intervals[key], iv)
    for key, draws in plain.draws.items():  # the intervals' own draws, unchanged
        np.testing.assert_array_equal(more.draws[key], draws)
    ref = bayesian_statistics(thin, extra, 150, np.random.default_rng(5), base_for=base)
    assert set(ref) <= set(more.draws)
    for key, draws in ref.items():
        np.testing.assert_array_equal(more.draws[key], draws)
    with pytest.raises(ValueError, match="extra"):
        u.headline_intervals(c, etas, **kw, extra={"ap": extra["roc"]})
    with pytest.raises(ValueError, match="extra_base_for"):
        u.headline_intervals(c, etas, **kw, extra=extra, extra_base_for=("nope",))


def test_prevalence_band_default_is_the_bayesian_credible_band(small_counts):
    _, _, c = small_counts
    eta = np.logspace(-4, -0.5, 25)
    sim = u.prevalence_band(c, "ap", eta, n_boot=400, seed=0)
    pw = u.prevalence_band(c, "ap", eta, n_boot=400, seed=0, simultaneous=False)
    assert sim.simultaneous and not pw.simultaneous and "Bayesian" in sim.method
    assert sim.extra["supported"].all() and sim.extra["pointwise_level"] >= 0.95
    assert np.all(sim.low <= sim.estimate) and np.all(sim.estimate <= sim.high)
    assert np.all((sim.low >= 0) & (sim.high <= 1))
    assert np.all(sim.high - sim.low >= pw.high - pw.low - 1e-12)
    # simultaneous by construction: >= 95% of the draws lie inside the band everywhere
    from mlflow_imbalance.stats.bootstrap import bayesian_statistics, metric_statistic

    st = metric_statistic(c, "ap", eta)
    draws = bayesian_statistics(c, {"ap": st}, 400, 0)["ap"]
    inside = np.all((draws >= sim.low - 1e-12) & (draws <= sim.high + 1e-12), axis=1)
    assert inside.mean() >= 0.95
    again = u.prevalence_band(c, "ap", eta, n_boot=400, seed=0)
    assert np.array_equal(again.low, sim.low) and np.array_equal(again.high, sim.high)
    np.testing.assert_allclose(sim.estimate, metrics.average_precision(c, eta), atol=1e-12)
    with pytest.raises(ValueError, match="construction"):
        u.prevalence_band(c, "ap", eta, construction="nope")


def test_bayesian_counts_marginal_is_the_jeffreys_lower_tail():
    """FPR at a threshold with F false positives of N is Beta(F + 1/2, N - F) in the draws;
    TPR at a threshold with T of P positives above it is Beta(T, P - T + 1/2) (the
    pseudo-positive sits at the lowest threshold)."""
    c = RocCounts([3.0, 2.0, 1.0], [5, 8, 10], [0, 2, 50], 10, 50)
    from mlflow_imbalance.stats.bootstrap import bayesian_counts

    fp = np.concatenate([f for _, f in bayesian_counts(c, 20000, seed=1)])
    for j, f_obs in enumerate((0, 2)):
        x = fp[:, j] / 50
        ks = stats.kstest(x, stats.beta(f_obs + 0.5, 50 - f_obs).cdf)
        assert ks.pvalue > 1e-3
    tp = np.concatenate([t for t, _ in bayesian_counts(c, 20000, seed=2)])
    ks = stats.kstest(tp[:, 0] / 10, stats.beta(5, 5.5).cdf)
    assert ks.pvalue > 1e-3


def test_roc_auc_interval_is_an_interval_that_pickles():
    y, s = _scored(n=400, prevalence=0.2, seed=30)
    iv = u.roc_auc_interval(RocCounts.from_scores(y, s), confidence=0.9)
    assert isinstance(iv, u.Interval) and iv.confidence == 0.9 and "90%" in iv.method
    assert iv.low < iv.estimate < iv.high and iv.available
    again = pickle.loads(pickle.dumps(iv))
    assert tuple(again) == tuple(iv) and again.se == iv.se and again.estimate == iv.estimate
    w = RocCounts.from_scores(y, s, sample_weight=np.full(y.size, 0.5))
    wi = u.roc_auc_interval(w)
    assert not wi.available and "weighted" in wi.method
    assert wi.estimate == pytest.approx(roc_auc_score(y, s), rel=1e-12)


def test_thin_for_bootstrap_bounds_and_passthrough():
    y, s = _scored(n=6000, prevalence=0.2, seed=31)
    c = RocCounts.from_scores(y, s, compress=False)
    same = u.thin_for_bootstrap(c, points=c.n_thresholds)
    assert same.counts is c and same.max_tpr_error == 0 and same.max_fpr_error == 0
    for points in (10, 40):
        th = u.thin_for_bootstrap(c, points)
        assert th.counts.n_thresholds <= 3 * points + 1 < c.n_thresholds
        # every kept threshold carries the original cumulative counts
        k = np.searchsorted(-c.thresholds, -th.counts.thresholds)
        np.testing.assert_array_equal(th.counts.tp, c.tp[k])
        np.testing.assert_array_equal(th.counts.fp, c.fp[k])
        # measured error = largest move of a dropped point to the next lower kept threshold,
        # recomputed here by brute force
        rep = np.array([k[np.searchsorted(k, i)] for i in range(c.n_thresholds)])
        assert th.max_tpr_error == pytest.approx(np.max(c.tpr[rep] - c.tpr))
        assert th.max_fpr_error == pytest.approx(np.max(c.fpr[rep] - c.fpr))
        assert th.max_tpr_error < 1 / points and th.max_fpr_error < 2 / points
    w = RocCounts.from_scores(y, s, sample_weight=np.full(y.size, 2.0), compress=False)
    assert u.thin_for_bootstrap(w, 10).counts.weighted
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="points must be an integer"):
            u.thin_for_bootstrap(c, bad)


def test_recentre_shifts_on_the_logit_scale_and_keeps_limits_at_0_and_1():
    from scipy.special import expit, logit

    from mlflow_imbalance.stats.headline import recentre

    grid = np.array([1e-4, 1e-3, 1e-2, 0.1])
    band = bands.Band(
        grid, "prevalence",
        estimate=np.array([0.02, 0.1, 0.3, 0.6]),
        low=np.array([0.0, 0.05, 0.2, 0.5]),
        high=np.array([0.3, 0.2, 1.0, 0.7]),
        method="test", confidence=0.95, simultaneous=True, metric="max_f1",
    )  # fmt: skip
    exact = np.array([0.03, 0.12, 0.25, 0.62])
    low, high = recentre(band, exact)
    # a limit at 0 or 1 stays exactly there (it was 1e-12 / 1 - 1e-12 after the logit clip)
    assert low[0] == 0.0 and high[2] == 1.0
    shift = logit(exact) - logit(band.estimate)
    inner = [1, 2, 3]
    np.testing.assert_allclose(low[inner], expit(logit(band.low[inner]) + shift[inner]))
    np.testing.assert_allclose(
        high[[0, 1, 3]], expit(logit(band.high[[0, 1, 3]]) + shift[[0, 1, 3]])
    )
    assert np.all(low <= exact) and np.all(high >= exact)


def test_report_and_logging_hook_share_the_thinning():
    """The report's bootstrap and drawing thinning is uncertainty.thin_for_bootstrap."""
    from mlflow_imbalance.report.analysis._common import DRAW_POINTS, draw_counts
    from mlflow_imbalance.report.analysis.intervals import BOOT_POINTS
    from mlflow_imbalance.stats import headline as stats_headline
    from mlflow_imbalance.tracking import BOOTSTRAP_POINTS

    y, s = _scored(n=20000, prevalence=0.3, seed=32)
    c = RocCounts.from_scores(y, s, compress=False)
    assert BOOT_POINTS == BOOTSTRAP_POINTS == stats_headline.BOOTSTRAP_POINTS
    # the default of thin_for_bootstrap and headline_intervals is that one constant
    assert u.thin_for_bootstrap(c).counts.n_thresholds == (
        u.thin_for_bootstrap(c, BOOTSTRAP_POINTS).counts.n_thresholds
    )
    for pts in (BOOT_POINTS, DRAW_POINTS):
        a, b = draw_counts(c, pts), u.thin_for_bootstrap(c, pts).counts
        np.testing.assert_array_equal(a.thresholds, b.thresholds)
        np.testing.assert_array_equal(a.tp, b.tp)


@pytest.mark.parametrize(
    ("k", "n", "word"),
    [(1.5, 10, "k must be a whole number"), (3, 10.5, "n must be a whole number")],
)
def test_rate_interval_rejects_non_integer_counts(k, n, word):
    with pytest.raises(ValueError, match=word):
        u.rate_interval(k, n)
    with pytest.raises(ValueError, match=word):
        u.rate_interval(np.array([1.0, k]), np.float64(n))


def test_error_messages_print_plain_numbers():
    cases = [
        (lambda: u.rate_interval(np.float64(11.0), np.float64(10.0)), "k=11 > n=10"),
        (lambda: u.rate_interval(np.array([2.0, 1.5]), 10), "k=1.5"),
        (lambda: u.rate_interval(1, np.float64(-2.0)), "n=-2"),
        (lambda: u.rate_interval(1, 3, np.float64(1.5)), "got 1.5"),
        (lambda: u.required_sample_size(0.5, np.float64(2.0), 0.1), "got 2.0"),
        (lambda: u.thin_for_bootstrap(RocCounts([1.0], [1], [1], 1, 1), np.float64(0.5)), "0.5"),
    ]
    for fn, text in cases:
        with pytest.raises(ValueError) as exc:
            fn()
        assert text in str(exc.value) and "np." not in str(exc.value), str(exc.value)


def test_expected_rate_cv_matches_rate_interval_at_integer_counts():
    n = np.array([100.0, 1000.0, 10000.0])
    p = 0.03
    k = p * n
    lo, hi = u.rate_interval(k, n)
    ref = np.maximum(np.asarray(hi) - p, p - np.asarray(lo)) / p
    np.testing.assert_allclose(u.expected_rate_cv(p, n), ref, rtol=1e-12)
    # fractional expected counts are allowed here (planning), and the CV falls with n
    cv = u.expected_rate_cv(np.geomspace(1e-4, 0.5, 30), 2345)
    assert np.all(np.diff(cv) < 0)
    with pytest.raises(ValueError, match="rate must lie in"):
        u.expected_rate_cv(0.0, 10)


def test_one_default_prevalence_grid_and_shared_metric_checks(small_counts):
    assert u.default_prevalence_grid is metrics.default_prevalence_grid
    _, _, c = small_counts
    for fn in (u.prevalence_band, u.metric_statistic):
        with pytest.raises(ValueError, match="metric must be one of"):
            fn(c, "auc", [0.1])
        with pytest.raises(ValueError, match="needs threshold"):
            fn(c, "f1", [0.1])
        with pytest.raises(ValueError, match="prevalences"):
            fn(c, "ap", [1.5])
    np.testing.assert_array_equal(
        u.metric_statistic(c, "ap").grid, metrics.default_prevalence_grid()
    )


def test_pr_band_default_is_the_roc_band_mapped_through_eq8(small_counts):
    _, _, c = small_counts
    rgrid = np.linspace(0.05, 1.0, 40)
    band = u.pr_band(c, 1e-3, rgrid, n_boot=150, seed=4)
    rb = u.roc_band(c, n_boot=150, seed=4)
    est = u.pr_statistic(c, 1e-3, rgrid).estimate(c)
    ref = u.pr_band_from_roc(rb, 1e-3, rgrid, estimate=est)
    np.testing.assert_allclose(band.low, ref.low)
    np.testing.assert_allclose(band.high, ref.high)
    np.testing.assert_allclose(band.estimate, est)
    assert "mapped to PR through eq. 8" in band.label and band.simultaneous
    assert band.extra["supported"].all() and band.extra["prevalence"] == 1e-3
    sup_t = u.pr_band(c, 1e-3, rgrid, n_boot=150, seed=4, construction="sup-t")
    assert "valid only where" in sup_t.method and "this prevalence only" in sup_t.method
    np.testing.assert_allclose(sup_t.estimate, est)
    with pytest.raises(ValueError, match="construction must be one of"):
        u.pr_band(c, 0.01, construction="bootstrap")
    with pytest.raises(ValueError, match="simultaneous=False needs construction='sup-t'"):
        u.pr_band(c, 0.01, simultaneous=False)
    pointwise = u.pr_band(c, 0.01, n_boot=50, simultaneous=False, construction="sup-t")
    assert not pointwise.simultaneous


# ---------------------------------------------------------------- metric bands from the ROC band
def _max_tpr_at(c: RocCounts, f: np.ndarray) -> np.ndarray:
    """Largest TPR the interpolated ROC curve of ``c`` reaches at FPR <= f (independent)."""
    fz, tz = np.r_[0.0, c.fpr], np.r_[0.0, c.tpr]
    j = np.searchsorted(fz, f, side="right") - 1
    j1 = np.minimum(j + 1, fz.size - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(fz[j1] > fz[j], (f - fz[j]) / (fz[j1] - fz[j]), 0.0)
    return tz[j] + lam * (tz[j1] - tz[j])


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(1, 40),
    g=st.integers(1, 30),
    slack=st.floats(0.0, 0.3),
    ends_at_one=st.booleans(),
)
def test_prevalence_band_from_roc_contains_every_curve_inside_the_roc_band(
    seed, k, g, slack, ends_at_one
):
    """Any ROC curve (random counts, ties and vertical/horizontal steps included) that lies in
    a ROC band at the band's grid FPRs has AP, PR-AUC and max-F1 inside the mapped band at
    every prevalence (metrics computed by ``metrics``, not by the band code)."""
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, 6, k) * (rng.random(k) < 0.8)
    neg = rng.integers(0, 6, k) * (rng.random(k) < 0.8)
    pos[0] += 1
    neg[-1] += 1
    c = RocCounts(np.arange(k, 0, -1.0), np.cumsum(pos), np.cumsum(neg), pos.sum(), neg.sum())
    grid = np.unique(np.r_[rng.random(g), [1.0] if ends_at_one else []])
    grid = grid[grid > 0]
    t = _max_tpr_at(c, grid)
    low = np.clip(t - slack * rng.random(grid.size), 0, 1)
    high = np.clip(t + slack * rng.random(grid.size), 0, 1)
    roc = u.Band(grid, "fpr", t, low, high, "test band", 0.95, True, "roc")
    eta = np.logspace(-5, np.log10(0.9), 25)
    truth = {
        "ap": metrics.average_precision(c, eta),
        "pr_auc": metrics.pr_auc(c, eta),
        "max_f1": metrics.max_f1(c, eta),
    }
    for key, val in truth.items():
        band = u.prevalence_band_from_roc(roc, eta, key)
        lo, hi = band.extra["envelope_low"], band.extra["envelope_high"]
        assert np.all(lo <= val + 1e-9), (key, lo - val)
        assert np.all(val <= hi + 1e-9), (key, val - hi)
        assert np.all(band.low <= lo) and np.all(band.high >= hi)
        assert np.all((lo >= -1e-12) & (hi <= 1 + 1e-12))


def test_prevalence_band_from_roc_tight_band_is_tight_and_exact():
    """A zero-width band on a staircase curve: PR-AUC and max-F1 bounds are that curve's
    values (closed form), so the construction adds nothing beyond the band's width."""
    f = np.array([0.01, 0.1, 1.0])
    t = np.array([0.5, 0.8, 1.0])
    roc = u.Band(f, "fpr", t, t, t, "exact", 0.95, True, "roc")
    eta = np.array([0.01, 0.3])
    o = eta / (1 - eta)
    # lower envelope: vertical steps at 0.01 (0 -> 0.5), 0.1 (0.5 -> 0.8), 1 (0.8 -> 1)

    def seg(a, b, x):
        return np.array([integrate_quad(lambda r, oo=oo: oo * r / (oo * r + x), a, b) for oo in o])

    pr_lo = seg(0, 0.5, 0.01) + seg(0.5, 0.8, 0.1) + seg(0.8, 1.0, 1.0)
    pr_hi = 0.5 + seg(0.5, 0.8, 0.01) + seg(0.8, 1.0, 0.1)  # upper: steps at 0, 0.01, 0.1
    band = u.prevalence_band_from_roc(roc, eta, "pr_auc")
    np.testing.assert_allclose(band.extra["envelope_low"], pr_lo, rtol=1e-9)
    np.testing.assert_allclose(band.extra["envelope_high"], pr_hi, rtol=1e-9)
    f1 = u.prevalence_band_from_roc(roc, eta, "max_f1").extra
    ref_lo = np.max(2 * o[:, None] * t / (o[:, None] + o[:, None] * t + f), axis=1)
    ref_hi = np.max(2 * o[:, None] * t / (o[:, None] + o[:, None] * t + np.r_[0, f[:-1]]), axis=1)
    np.testing.assert_allclose(f1["envelope_low"], ref_lo)
    np.testing.assert_allclose(f1["envelope_high"], ref_hi)


def integrate_quad(fun, a, b):
    from scipy import integrate

    return integrate.quad(fun, a, b, epsabs=1e-13, epsrel=1e-12)[0]


def test_prevalence_band_from_roc_label_and_validation(small_counts):
    c = small_counts[2]
    rb = u.roc_band(c, n_boot=50, seed=0)
    band = u.prevalence_band_from_roc(rb, [1e-3, 0.1], "pr_auc")
    assert band.simultaneous and band.grid_name == "prevalence" and band.metric == "pr_auc"
    assert "ROC band mapped (simultaneous over η; conservative)" in band.label
    assert band.extra["supported"].all() and band.n_boot == 50
    assert np.all(band.low <= band.estimate) and np.all(band.estimate <= band.high)
    with pytest.raises(ValueError, match="metric"):
        u.prevalence_band_from_roc(rb, [0.1], "f1")
    with pytest.raises(ValueError, match="prevalences"):
        u.prevalence_band_from_roc(rb, [1.5], "ap")
    with pytest.raises(ValueError, match="estimate"):
        u.prevalence_band_from_roc(rb, [0.1, 0.2], "ap", estimate=[0.5])
    with pytest.raises(ValueError, match="roc"):
        u.prevalence_band_from_roc(u.prevalence_band(c, n_boot=5), [0.1], "ap")
    pointwise = u.roc_band(c, n_boot=20, seed=0, simultaneous=False)
    with pytest.raises(ValueError, match="simultaneous"):
        u.prevalence_band_from_roc(pointwise, [0.1], "ap")


def test_prevalence_band_stays_inside_the_unit_interval():
    """AP / PR-AUC / max-F1 bands never leave [0, 1] (max-F1's re-centring could, at low eta)."""
    rng = np.random.default_rng(5)
    y = (rng.random(20_000) < 0.01).astype(int)
    c = RocCounts.from_scores(y, rng.normal(size=y.size) + 1.2 * y)
    grid = np.geomspace(1e-5, 0.5, 25)
    for metric in ("ap", "pr_auc", "max_f1"):
        band = u.prevalence_band(c, metric, grid, n_boot=200, seed=1)
        assert np.all(band.low >= 0.0) and np.all(band.high <= 1.0), metric
        assert np.all(band.low <= band.estimate + 1e-12)
        assert np.all(band.estimate <= band.high + 1e-12)
