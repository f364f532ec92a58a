"""Comparing two runs: DeLong's paired and unpaired tests, partial AUC, AP and cost tests.

References, all independent of the package:

* DeLong's structural components from the full P x N comparison matrix (``_delong_bruteforce``,
  O(P*N), no ranks, no counts);
* pROC's published numbers on its ``aSAH`` data set (Turck et al. 2010: 113 patients, 41 with a
  poor outcome; predictors s100b, wfns (5-level ordinal, heavy ties) and ndka). The values of
  ``y``/s100b/wfns/ndka below are the data set as shipped with pROC, transcribed; they are
  checked by reproducing pROC's documented AUCs (``?roc`` / ``?roc.test``: s100b 0.7314, wfns
  0.8237) before anything else. The z and p values are those asserted in pROC's own test suite
  (``tests/testthat/test-roc.test.R``: ``roc.test(r.wfns, r.s100b)`` Z = 2.20898359144091,
  p = 0.0271757822291882; ``roc.test(r.wfns, r.ndka)`` Z = 2.79777591868904,
  p = 0.00514557970691098) and in the ``?roc.test`` example (Z = -2.209, p = 0.02718 for
  s100b vs wfns).
* scikit-learn (``roc_auc_score`` with ``max_fpr``, ``average_precision_score`` with sample
  weights) for the estimates, and example-level bootstraps written here for the bootstrap tests.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, roc_auc_score

from mlflow_imbalance import RocCounts, metrics
from mlflow_imbalance import uncertainty as u
from mlflow_imbalance.stats.compare import delong_components

# ---------------------------------------------------------------------------- pROC's aSAH
ASAH_Y = np.array([
    0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0,
    0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0,
    0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0,
    0,
])  # fmt: skip
ASAH_S100B = np.array([
    0.13, 0.14, 0.1, 0.04, 0.13, 0.1, 0.47, 0.16, 0.18, 0.1, 0.12, 0.1, 0.44, 0.71,
    0.04, 0.08, 0.49, 0.04, 0.07, 0.33, 0.09, 0.09, 0.07, 0.11, 0.07, 0.17, 0.07, 0.11,
    0.13, 0.19, 0.05, 0.16, 0.41, 0.14, 0.34, 0.35, 0.48, 0.09, 0.96, 0.25, 0.5, 0.46,
    0.16, 0.07, 0.43, 0.45, 0.11, 0.08, 0.09, 0.86, 0.52, 0.08, 0.06, 0.13, 2.07, 0.1,
    0.14, 0.15, 0.07, 0.06, 0.77, 0.05, 0.09, 0.3, 0.03, 0.09, 0.04, 0.23, 0.7, 0.09,
    0.27, 0.71, 0.08, 0.26, 0.08, 0.16, 0.09, 0.13, 0.1, 0.08, 0.11, 0.33, 0.11, 0.28,
    0.07, 0.1, 0.32, 0.22, 0.07, 0.05, 0.24, 0.38, 0.1, 0.15, 0.08, 0.14, 0.1, 0.07,
    0.04, 0.19, 0.56, 0.14, 0.58, 0.32, 0.82, 0.74, 0.15, 0.47, 0.17, 0.44, 0.15, 0.5,
    0.48,
])  # fmt: skip
ASAH_WFNS = np.array([
    1, 1, 1, 1, 3, 2, 5, 4, 1, 2, 5, 2, 5, 5, 1, 2, 5, 2, 2, 5, 2, 1, 1, 1, 1, 2, 1, 2,
    1, 1, 3, 4, 2, 1, 4, 5, 4, 1, 4, 2, 5, 5, 1, 1, 2, 4, 1, 1, 2, 5, 5, 2, 1, 2, 5, 1,
    2, 2, 2, 1, 5, 1, 1, 2, 5, 2, 1, 4, 5, 2, 4, 4, 1, 4, 1, 2, 1, 4, 2, 1, 2, 3, 2, 4,
    2, 1, 4, 5, 1, 1, 5, 4, 2, 2, 1, 1, 1, 3, 1, 2, 5, 2, 2, 5, 5, 5, 2, 4, 4, 5, 1, 1,
    1,
], dtype=float)  # fmt: skip
ASAH_NDKA = np.array([
    3.01, 8.54, 8.09, 10.42, 17.4, 12.75, 6.0, 13.2, 15.54, 6.01, 15.96, 17.86, 5.18,
    8.9, 13.41, 20.75, 11.6, 16.11, 32.37, 54.82, 32.41, 49.94, 40.34, 9.47, 6.29,
    12.53, 6.54, 6.3, 80.3, 12.8, 9.8, 9.81, 9.85, 18.21, 5.03, 14.04, 21.93, 8.02,
    7.42, 8.38, 6.59, 9.63, 13.12, 7.96, 14.34, 41.43, 7.63, 7.06, 12.59, 13.56, 3.87,
    9.44, 7.66, 12.98, 419.19, 27.19, 22.27, 9.95, 21.22, 11.73, 10.4, 58.83, 6.39,
    11.09, 12.22, 13.67, 17.21, 22.63, 12.9, 9.7, 21.57, 8.23, 72.57, 15.54, 10.51,
    10.6, 14.57, 5.19, 9.63, 4.61, 21.48, 17.3, 12.71, 9.44, 11.07, 19.46, 10.83, 5.37,
    11.97, 7.75, 9.83, 10.55, 28.49, 8.53, 12.57, 12.9, 46.83, 11.68, 12.67, 9.01, 9.57,
    34.06, 11.72, 14.26, 47.61, 11.67, 24.58, 10.33, 13.87, 15.89, 22.43, 6.79, 13.45,
])  # fmt: skip


def _delong_bruteforce(y, scores):
    """DeLong et al. (1988) from the P x N kernel psi = 1 (x > y), 1/2 (tie), 0: no ranks."""
    scores = np.atleast_2d(scores)
    pos, neg = scores[:, y == 1], scores[:, y == 0]
    v10, v01 = [], []
    for a, b in zip(pos, neg, strict=True):
        psi = (a[:, None] > b[None, :]) + 0.5 * (a[:, None] == b[None, :])
        v10.append(psi.mean(axis=1))
        v01.append(psi.mean(axis=0))
    v10, v01 = np.array(v10), np.array(v01)
    auc = v10.mean(axis=1)
    cov = np.cov(v10) / pos.shape[1] + np.cov(v01) / neg.shape[1]
    return auc, np.atleast_2d(cov)


def _paired_z(y, a, b):
    auc, cov = _delong_bruteforce(y, np.vstack([a, b]))
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    z = (auc[0] - auc[1]) / np.sqrt(var)
    return auc, z, 2 * stats.norm.sf(abs(z)), np.sqrt(var)


# ---------------------------------------------------------------------------- paired DeLong
def test_asah_data_reproduces_procs_documented_aucs():
    assert ASAH_Y.size == 113 and ASAH_Y.sum() == 41
    assert roc_auc_score(ASAH_Y, ASAH_S100B) == pytest.approx(0.7314, abs=5e-5)
    assert roc_auc_score(ASAH_Y, ASAH_WFNS) == pytest.approx(0.8237, abs=5e-5)


@pytest.mark.parametrize(
    ("a", "b", "z_ref", "p_ref"),
    [
        (ASAH_WFNS, ASAH_S100B, 2.20898359144091, 0.0271757822291882),
        (ASAH_WFNS, ASAH_NDKA, 2.79777591868904, 0.00514557970691098),
        (ASAH_S100B, ASAH_WFNS, -2.20898359144091, 0.0271757822291882),
    ],
)
def test_paired_delong_matches_proc_roc_test(a, b, z_ref, p_ref):
    t = u.delong_test(ASAH_Y, a, b)
    assert t.z == pytest.approx(z_ref, rel=1e-12)
    assert t.p_value == pytest.approx(p_ref, rel=1e-10)
    assert t.paired and t.metric == "roc_auc"
    assert t.difference == pytest.approx(t.auc_a - t.auc_b, abs=1e-15)
    assert t.auc_a == pytest.approx(roc_auc_score(ASAH_Y, a), abs=1e-14)
    # pROC's documented example rounds: Z = -2.209, p-value = 0.02718
    if z_ref < 0:
        assert round(t.z, 3) == -2.209 and round(t.p_value, 5) == 0.02718
    # the interval of the difference is diff -+ 1.96 se and agrees with the test
    se = t.difference / t.z
    q = stats.norm.ppf(0.975)
    assert t.low == pytest.approx(t.difference - q * se, abs=1e-14)
    assert t.high == pytest.approx(t.difference + q * se, abs=1e-14)
    assert (t.low > 0 or t.high < 0) == (t.p_value < 0.05)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_paired_delong_equals_the_bruteforce_components(seed):
    rng = np.random.default_rng(seed)
    n = 400
    y = (rng.random(n) < 0.3).astype(int)
    a = np.round(rng.normal(size=n) + 1.0 * y, 1)  # rounded: ties within and across classes
    b = np.round(0.6 * a + rng.normal(size=n) * 0.8 + 0.4 * y, 1)
    if seed == 3:
        b = np.round(rng.normal(size=n), 0)  # very coarse
    auc, z, p, se = _paired_z(y, a, b)
    t = u.delong_test(y, a, b, confidence=0.9)
    assert abs(t.z - z) <= 1e-10 * max(1.0, abs(z))
    assert abs(t.p_value - p) <= 1e-10
    assert abs(t.se - se) <= 1e-12
    assert t.auc_a == pytest.approx(auc[0], abs=1e-14) and t.auc_b == pytest.approx(auc[1])
    assert t.confidence == 0.9 and "90%" in t.method
    # the components themselves (all three runs at once)
    c3 = np.vstack([a, b, -a])
    got_auc, s10, s01 = delong_components(y, c3)
    ref_auc, ref_cov = _delong_bruteforce(y, c3)
    np.testing.assert_allclose(got_auc, ref_auc, atol=1e-14)
    np.testing.assert_allclose(
        s10 / y.sum() + s01 / (y.size - y.sum()), ref_cov, rtol=1e-10, atol=1e-16
    )


def test_paired_delong_identical_runs_and_bad_input():
    t = u.delong_test(ASAH_Y, ASAH_NDKA, ASAH_NDKA.copy())
    assert t.z == 0.0 and t.p_value == 1.0 and t.difference == 0.0 and t.se == 0.0
    with pytest.raises(ValueError):
        u.delong_test(ASAH_Y, ASAH_NDKA, ASAH_NDKA[:-1])
    with pytest.raises(ValueError, match="2 positives"):
        u.delong_test([1, 0, 0], [0.3, 0.2, 0.1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="confidence"):
        u.delong_test(ASAH_Y, ASAH_NDKA, ASAH_WFNS, confidence=1.5)


def test_paired_delong_size_and_power_smoke():
    """Same-distribution runs are rejected at about 5%; a real difference on the same examples
    (AUC about 0.90 vs 0.86, correlated scores) almost always."""
    rng = np.random.default_rng(5)
    rej0 = rej1 = 0
    r = 300
    for _ in range(r):
        n_pos, n_neg = 200, 2000
        y = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)]
        common = rng.normal(size=y.size)
        a = common + 0.45 * rng.normal(size=y.size) + 2.0 * y
        b = common + 0.45 * rng.normal(size=y.size) + 2.0 * y
        rej0 += u.delong_test(y, a, b).p_value < 0.05
        b2 = common + 0.45 * rng.normal(size=y.size) + 1.65 * y
        rej1 += u.delong_test(y, a, b2).p_value < 0.05
    # Monte-Carlo s.d. of a 5% rate at R = 300 is 0.0126
    assert rej0 / r <= 0.05 + 3 * 0.0126
    assert rej1 / r >= 0.9


# ---------------------------------------------------------------------------- unpaired DeLong
def test_unpaired_delong_equals_bruteforce_on_independent_sets():
    rng = np.random.default_rng(7)
    ya = (rng.random(500) < 0.2).astype(int)
    yb = (rng.random(700) < 0.1).astype(int)
    sa = np.round(rng.normal(size=500) + 1.2 * ya, 1)
    sb = np.round(rng.normal(size=700) + 0.9 * yb, 2)
    auc_a, var_a = _delong_bruteforce(ya, sa)
    auc_b, var_b = _delong_bruteforce(yb, sb)
    z = (auc_a[0] - auc_b[0]) / np.sqrt(var_a[0, 0] + var_b[0, 0])
    t = u.delong_test_unpaired(RocCounts.from_scores(ya, sa), RocCounts.from_scores(yb, sb))
    assert abs(t.z - z) <= 1e-10 * max(1, abs(z))
    assert abs(t.p_value - 2 * stats.norm.sf(abs(z))) <= 1e-10
    assert not t.paired and t.difference == pytest.approx(auc_a[0] - auc_b[0], abs=1e-14)
    # uncompressed counts give the same answer (placement values shared within a threshold)
    t2 = u.delong_test_unpaired(
        RocCounts.from_scores(ya, sa, compress=False), RocCounts.from_scores(yb, sb)
    )
    assert t2.z == pytest.approx(t.z, rel=1e-12)
    # and the same variance as roc_auc_interval
    se_a = u.roc_auc_interval(RocCounts.from_scores(ya, sa)).se
    se_b = u.roc_auc_interval(RocCounts.from_scores(yb, sb)).se
    assert t.se == pytest.approx(np.hypot(se_a, se_b), rel=1e-12)


def test_unpaired_delong_on_proc_data_as_two_sets():
    """Counts of two predictors on the aSAH examples, treated as independent sets: the
    statistic is (AUC_a - AUC_b) / sqrt(var_a + var_b) with pROC's DeLong variances."""
    ca = RocCounts.from_scores(ASAH_Y, ASAH_WFNS)
    cb = RocCounts.from_scores(ASAH_Y, ASAH_S100B)
    auc, cov = _delong_bruteforce(ASAH_Y, np.vstack([ASAH_WFNS, ASAH_S100B]))
    t = u.delong_test_unpaired(ca, cb)
    assert t.z == pytest.approx((auc[0] - auc[1]) / np.sqrt(cov[0, 0] + cov[1, 1]), rel=1e-12)
    # ignoring the positive correlation makes it weaker than the paired test
    assert t.p_value > u.delong_test(ASAH_Y, ASAH_WFNS, ASAH_S100B).p_value


def test_unpaired_delong_rejects_weighted_counts():
    w = RocCounts.from_scores([1, 0, 1, 0], [0.9, 0.1, 0.8, 0.3], sample_weight=[1, 2, 1, 1.5])
    with pytest.raises(ValueError, match="weighted"):
        u.delong_test_unpaired(w, w)


# ---------------------------------------------------------------------------- bootstrap tests
def _scored(seed, n=2000, prev=0.1):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prev).astype(int)
    y[:2] = [1, 0]
    common = rng.normal(size=n)
    a = common + 0.6 * rng.normal(size=n) + 1.6 * y
    b = common + 0.6 * rng.normal(size=n) + 1.3 * y
    return y, a, b


def test_paired_ap_test_matches_a_direct_paired_bootstrap():
    """SE of the AP difference: the counts' paired bootstrap vs resampling examples directly
    and scoring with scikit-learn (negatives re-weighted to eta)."""
    y, a, b = _scored(11)
    eta = 0.01
    t = u.paired_metric_test(metric="ap", prevalence=eta, y_true=y, score_a=a, score_b=b,
                             n_boot=1500, seed=1)  # fmt: skip
    ca, cb = RocCounts.from_scores(y, a), RocCounts.from_scores(y, b)
    assert t.estimate_a == pytest.approx(metrics.average_precision(ca, eta), abs=1e-12)
    assert t.estimate_b == pytest.approx(metrics.average_precision(cb, eta), abs=1e-12)
    rng = np.random.default_rng(2)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    diffs = []
    for _ in range(600):
        idx = np.r_[rng.choice(pos, pos.size), rng.choice(neg, neg.size)]
        yy = y[idx]
        w = np.where(yy == 1, 1.0, pos.size * (1 - eta) / (eta * neg.size))
        diffs.append(
            average_precision_score(yy, a[idx], sample_weight=w)
            - average_precision_score(yy, b[idx], sample_weight=w)
        )
    # s.d. of a bootstrap SD estimate from 600 replicates is about 3%
    assert t.se == pytest.approx(np.std(diffs, ddof=1), rel=0.15)
    assert t.paired and "paired" in t.method
    # unpaired: independent bootstraps of the two runs' counts; wider for correlated runs
    tu = u.paired_metric_test(ca, cb, "ap", eta, n_boot=1500, seed=1)
    assert not tu.paired and tu.difference == pytest.approx(t.difference, abs=1e-12)
    assert tu.se > t.se


def test_cost_and_partial_auc_tests_and_interval():
    y, a, b = _scored(12)
    ca, cb = RocCounts.from_scores(y, a), RocCounts.from_scores(y, b)
    t = u.cost_difference_test(ca, cb, 0.01, cost_fn=50.0, n_boot=400, seed=0)
    assert t.metric == "min_cost" and t.prevalence == 0.01
    # exact lowest expected cost per example (stored points plus the trivial classifiers)
    for c, est in ((ca, t.estimate_a), (cb, t.estimate_b)):
        f = np.r_[0.0, c.fpr, 1.0]
        r = np.r_[0.0, c.tpr, 1.0]
        assert est == pytest.approx(np.min(f * 0.99 + (1 - r) * 0.01 * 50.0), abs=1e-12)
    p = u.partial_auc_test(y_true=y, score_a=a, score_b=b, max_fpr=0.1, standardized=True,
                           n_boot=400, seed=0)  # fmt: skip
    assert p.estimate_a == pytest.approx(roc_auc_score(y, a, max_fpr=0.1), abs=1e-12)
    assert p.estimate_b == pytest.approx(roc_auc_score(y, b, max_fpr=0.1), abs=1e-12)
    iv = u.partial_auc_interval(ca, 0.1, standardized=True, n_boot=1000, seed=0)
    assert iv.estimate == pytest.approx(roc_auc_score(y, a, max_fpr=0.1), abs=1e-12)
    assert iv.low < iv.estimate < iv.high
    # against a direct stratified bootstrap of examples scored by scikit-learn
    rng = np.random.default_rng(3)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    reps = []
    for _ in range(500):
        idx = np.r_[rng.choice(pos, pos.size), rng.choice(neg, neg.size)]
        reps.append(roc_auc_score(y[idx], a[idx], max_fpr=0.1))
    ref = np.percentile(reps, [2.5, 97.5])
    np.testing.assert_allclose([iv.low, iv.high], ref, atol=0.12 * (ref[1] - ref[0]))
    with pytest.raises(ValueError, match="prevalence"):
        u.paired_metric_test(ca, cb, "ap")
    with pytest.raises(ValueError, match="metric"):
        u.paired_metric_test(ca, cb, "roc", 0.1)
    with pytest.raises(ValueError, match="paired mode"):
        u.paired_metric_test(metric="ap", prevalence=0.1, y_true=y, score_a=a)


def test_bootstrap_test_false_alarm_smoke():
    """Two runs drawn from the same model on the same examples: p < 0.05 about 5% of the time
    (paired AP test at eta = 0.01)."""
    rng = np.random.default_rng(9)
    r, rej = 120, 0
    for i in range(r):
        n = 1500
        y = (rng.random(n) < 0.1).astype(int)
        common = rng.normal(size=n)
        a = common + 0.6 * rng.normal(size=n) + 1.5 * y
        b = common + 0.6 * rng.normal(size=n) + 1.5 * y
        t = u.paired_metric_test(metric="ap", prevalence=0.01, y_true=y, score_a=a,
                                 score_b=b, n_boot=200, seed=i)  # fmt: skip
        rej += t.p_value < 0.05
    # s.d. 0.02 at R = 120; the bootstrap test is close to nominal, not conservative to 0
    assert rej / r <= 0.05 + 3 * 0.02


def test_floor_keeps_the_draws_lower_tail_where_no_negative_tops_the_run():
    """At eta = 1e-4 two runs that each put some positives above every negative have paired
    replicates with too little spread: no resample of the examples adds a false positive
    above the top scores. The default test floors the s.d. by each run's Bayesian-draw
    variance (which can), the report's test; floor=False is pROC's plain test on the same
    replicates: the same difference, a smaller s.d. The floor never lowers the s.d., and at a
    moderate prevalence, where the replicates are fine, it changes the plain test little."""
    rng = np.random.default_rng(4)
    n_pos, n_neg = 200, 20_000
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    common = rng.normal(size=y.size)
    runs = []
    for _ in range(2):
        s = common + 0.7 * rng.normal(size=y.size) + 1.5 * y
        s[:n_pos][rng.random(n_pos) < 0.1] = 50 + rng.random()  # above every negative
        runs.append(s)
    kw = {"y_true": y, "score_a": runs[0], "score_b": runs[1], "n_boot": 300, "seed": 3}
    for eta, binding in ((1e-4, True), (0.05, False)):
        floored = u.paired_metric_test(metric="ap", prevalence=eta, **kw)
        plain = u.paired_metric_test(metric="ap", prevalence=eta, floor=False, **kw)
        assert floored.difference == plain.difference and floored.paired
        assert floored.se >= plain.se
        assert (floored.se > 1.2 * plain.se) == binding, (eta, floored.se, plain.se)
        assert ("Bayesian count-bootstrap draws" in floored.method) and (
            "Bayesian" not in plain.method
        )
