"""Tests for mlflow_imbalance.ranking: flip points from first principles, ranking, significance."""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize

from mlflow_imbalance import RocCounts, metrics, ranking
from mlflow_imbalance.stats import ranking as stats_ranking

P, N = 1000, 10**6


@pytest.fixture(scope="module")
def ref_runs():
    # Run A: top bin 900 positives + 1000 negatives; B: 500 positives + 100 negatives; the
    # rest of each class in one lower bin.
    a = RocCounts([1.0, 0.0], [900, P], [1000, N], P, N)
    b = RocCounts([1.0, 0.0], [500, P], [100, N], P, N)
    return a, b


def _poly_mul(p, q):
    out = [Fr(0)] * (len(p) + len(q) - 1)
    for i, x in enumerate(p):
        for j, y in enumerate(q):
            out[i + j] += x * y
    return out


def _poly_add(*ps):
    n = max(len(p) for p in ps)
    return [sum((p[i] if i < len(p) else Fr(0)) for p in ps) for i in range(n)]


def _scale(p, c):
    return [c * x for x in p]


def test_reference_ap_flip_from_first_principles(ref_runs):
    """AP in odds o = eta/(1-eta): the top bin has LR 900 (A) or 5000 (B) so its precision is
    LR*o/(LR*o+1); the all-positive point has precision eta = o/(1+o). Hence
    AP_A = 9/10 * 900o/(900o+1) + 1/10 * o/(1+o), AP_B = 1/2 * 5000o/(5000o+1) + 1/2 * o/(1+o).
    Clearing denominators (and a factor o) leaves an exact quadratic in o."""
    a, b = ref_runs
    lin = lambda c0, c1: [Fr(c0), Fr(c1)]  # noqa: E731  c0 + c1*o
    da, db, d1 = lin(1, 900), lin(1, 5000), lin(1, 1)
    terms = [
        _scale(_poly_mul([Fr(900)], _poly_mul(db, d1)), Fr(9, 10)),
        _scale(_poly_mul(da, db), Fr(1, 10)),
        _scale(_poly_mul([Fr(5000)], _poly_mul(da, d1)), Fr(-1, 2)),
        _scale(_poly_mul(da, db), Fr(-1, 2)),
    ]
    c0, c1, c2 = _poly_add(*terms)
    # the o^2 terms cancel (900*5000*(9/10 + 1/10 - 1/2 - 1/2) = 0): a linear equation
    assert c2 == 0
    o_star = -c0 / c1
    assert o_star > 0
    eta_star = float(o_star / (1 + o_star))
    flips = ranking.flip_points(a, b, "ap")
    assert list(flips) == pytest.approx([eta_star], rel=1e-9)
    assert flips.winners[0][2] == "b" and flips.winners[-1][2] == "a"
    # cross-check against the metrics module on both sides
    for e, sign in ((eta_star * 0.9, -1), (eta_star * 1.1, 1)):
        d = metrics.average_precision(a, e) - metrics.average_precision(b, e)
        assert np.sign(d) == sign


def test_reference_f1_and_max_f1_flip_exact(ref_runs):
    a, b = ref_runs
    # k* = (T_B - T_A)/(T_A F_B - T_B F_A) with T_A=9/10, F_A=1/1000, T_B=1/2, F_B=1/10^4
    ta, fa, tb, fb = Fr(9, 10), Fr(1, 1000), Fr(1, 2), Fr(1, 10**4)
    k = (tb - ta) / (ta * fb - tb * fa)
    eta_star = 1 / (1 + k)
    assert eta_star == Fr(41, 40041)

    # independently: F1 = 2PR/(P+R) with P from Bayes, evaluated exactly at eta*
    def f1(t, f, e):
        p = e * t / (e * t + (1 - e) * f)
        return 2 * p * t / (p + t)

    assert f1(ta, fa, eta_star) == f1(tb, fb, eta_star)
    fl = ranking.flip_points(a, b, "f1", thresholds=(1.0, 1.0))
    assert fl.method == "closed form"
    assert list(fl) == pytest.approx([float(eta_star)], rel=1e-12)
    # max-F1: at eta* the all-positive point (F1 = 2 eta/(1+eta)) is far below both top bins,
    # so max-F1 flips at the same eta
    assert 2 * eta_star / (1 + eta_star) < min(f1(ta, fa, eta_star), f1(tb, fb, eta_star))
    mf = ranking.flip_points(a, b, "max_f1")
    assert list(mf) == pytest.approx([float(eta_star)], rel=1e-9)


def test_reference_pr_auc_flip_by_numerical_integration(ref_runs):
    """PR-AUC with the Davis-Goadrich interpolation: along a straight ROC segment precision is
    eta*T/(eta*T + (1-eta)*F); integrate over recall with quad, independently of the package."""
    a, b = ref_runs

    def area(t1, f1, eta):
        def seg(t0, f0, t_end, f_end):
            def prec(t):
                f = f0 + (f_end - f0) * (t - t0) / (t_end - t0)
                return eta * t / (eta * t + (1 - eta) * f)

            return integrate.quad(prec, t0, t_end, epsabs=1e-13, epsrel=1e-12)[0]

        return seg(1e-300, 1e-300 * f1 / t1, t1, f1) + seg(t1, f1, 1.0, 1.0)

    def d(log_eta):
        e = math.exp(log_eta)
        return area(0.9, 1e-3, e) - area(0.5, 1e-4, e)

    root = math.exp(optimize.brentq(d, math.log(1e-4), math.log(1e-2), xtol=1e-14))
    fl = ranking.flip_points(a, b, "pr_auc")
    assert list(fl) == pytest.approx([root], rel=1e-7)
    assert area(0.9, 1e-3, 0.01) == pytest.approx(metrics.pr_auc(a, 0.01), rel=1e-9)


def test_reference_never_flip_and_roc_auc(ref_runs):
    a, b = ref_runs
    for m in ("precision", "recall", "tpr", "fpr"):
        fl = ranking.flip_points(a, b, m)
        assert len(fl) == 0 and fl.reason and "cannot flip" in fl.reason
    # ROC-AUC (trapezoid, exact): A = 0.9495, B = 0.74995 -> A first
    assert stats_ranking._roc_auc(a) == pytest.approx(0.9495, abs=1e-12)
    assert stats_ranking._roc_auc(b) == pytest.approx(0.74995, abs=1e-12)
    assert metrics.roc_auc(a) == pytest.approx(0.9495, abs=1e-12)
    dis = ranking.roc_auc_disagreements(a, b, "pr_auc")
    eta_pr = ranking.flip_points(a, b, "pr_auc")[0]
    assert dis == [(1e-6, pytest.approx(eta_pr), "b")]


def test_rank_runs_orders_and_flips(ref_runs):
    a, b = ref_runs
    # a third run dominated by A everywhere (same top bin, more negatives)
    c = RocCounts([1.0, 0.0], [900, P], [2000, N], P, N)
    r = ranking.rank_runs({"A": a, "B": b, "C": c}, "ap", np.logspace(-6, math.log10(0.5), 50))
    assert list(r.order[0]) == ["B", "A", "C"]
    assert list(r.order[-1]) == ["A", "C", "B"]
    assert len(r.flips[("A", "C")]) == 0
    assert len(r.flips[("A", "B")]) == 1
    assert r.roc_auc["A"] > r.roc_auc["C"] > r.roc_auc["B"]
    assert r.roc_auc_disagreements[("A", "B")][0][2] == "b"
    np.testing.assert_allclose(r.values[1], metrics.average_precision(b, r.prevalences))
    with pytest.raises(ValueError, match="thresholds"):
        ranking.rank_runs({"A": a, "B": b}, "f1")
    with pytest.raises(ValueError, match="metric"):
        ranking.flip_points(a, b, "roc_auc")
    with pytest.raises(ValueError, match="prevalence_range"):
        ranking.flip_points(a, b, "ap", (0.5, 1e-3))


@settings(max_examples=60, deadline=None)
@given(
    ta=st.floats(0.05, 1.0),
    tb=st.floats(0.05, 1.0),
    fa=st.floats(1e-6, 0.5),
    fb=st.floats(1e-6, 0.5),
)
def test_f1_closed_form_flip_is_a_sign_change(ta, fa, tb, fb):
    def f1(t, f, e):
        return 2 * e * t / (e + e * t + (1 - e) * f)

    eta = ranking.f1_flip_point(ta, fa, tb, fb)
    grid = np.logspace(-9, math.log10(0.999), 2000)
    d = f1(ta, fa, grid) - f1(tb, fb, grid)
    if eta is None:
        # no crossing: one run is never worse (up to rounding)
        assert np.all(d >= -1e-12) or np.all(d <= 1e-12)
    else:
        assert 0 < eta < 1
        assert f1(ta, fa, eta) == pytest.approx(f1(tb, fb, eta), abs=1e-12)
        lo, hi = eta * 0.99, min(eta * 1.01, (1 + eta) / 2)
        assert (f1(ta, fa, lo) - f1(tb, fb, lo)) * (f1(ta, fa, hi) - f1(tb, fb, hi)) <= 1e-24


# ---------------------------------------------------------------------------- significance


def _paired_reference(p, n, a_pos, a_neg, b_pos, b_neg):
    """Same examples, two runs, nested top bins (positively correlated runs)."""
    y = np.r_[np.ones(p, bool), np.zeros(n, bool)]
    sa, sb = np.zeros(p + n), np.zeros(p + n)
    sa[:a_pos], sb[:b_pos] = 1.0, 1.0
    sa[p : p + a_neg], sb[p : p + b_neg] = 1.0, 1.0
    return y, sa, sb


GRID = np.logspace(-6, math.log10(0.5), 60)


def test_paired_flip_significant_for_reference_structure():
    y, sa, sb = _paired_reference(1000, 10**5, 900, 100, 500, 10)
    res = ranking.flip_significance(
        metric="ap", prevalences=GRID, y_true=y, score_a=sa, score_b=sb, n_boot=200, seed=0
    )
    assert res.paired and "paired" in res.method and res.confidence == 0.95
    assert len(res.flips) == 1 and res.significant == [True]
    lo, hi = res.flip_intervals[0]
    assert lo < res.flips[0] < hi and 1e-4 < lo and hi < 1e-2
    assert res.prob_a_better[0] < 0.05 and res.prob_a_better[-1] > 0.95
    assert np.all(res.low <= res.difference + 1e-15) and np.all(res.difference <= res.high)
    # the estimate is exactly the difference of the two runs' AP
    ca, cb = RocCounts.from_scores(y, sa), RocCounts.from_scores(y, sb)
    np.testing.assert_allclose(
        res.difference,
        metrics.average_precision(ca, GRID) - metrics.average_precision(cb, GRID),
        atol=1e-14,
    )


def test_small_test_set_flip_not_significant():
    y, sa, sb = _paired_reference(20, 2000, 12, 3, 10, 2)
    res = ranking.flip_significance(
        metric="ap", prevalences=GRID, y_true=y, score_a=sa, score_b=sb, n_boot=200, seed=0
    )
    assert len(res.flips) == 1 and res.significant == [False]


def test_unpaired_is_wider_for_positively_correlated_scores():
    rng = np.random.default_rng(1)
    p, n = 300, 20_000
    y = np.r_[np.ones(p, bool), np.zeros(n, bool)]
    z = rng.normal(size=p + n) + 2.0 * y
    sa = z + 0.3 * rng.normal(size=z.size)
    sb = z + 0.3 * rng.normal(size=z.size)
    grid = np.logspace(-4, math.log10(0.5), 30)
    paired = ranking.flip_significance(
        metric="ap", prevalences=grid, y_true=y, score_a=sa, score_b=sb, n_boot=150, seed=0
    )
    ca, cb = RocCounts.from_scores(y, sa), RocCounts.from_scores(y, sb)
    unpaired = ranking.flip_significance(ca, cb, "ap", grid, n_boot=150, seed=0)
    assert not unpaired.paired and "conservative" in unpaired.note
    assert np.mean(unpaired.high - unpaired.low) > 1.3 * np.mean(paired.high - paired.low)
    np.testing.assert_allclose(paired.difference, unpaired.difference, atol=1e-14)


def test_flip_significance_validation(ref_runs):
    a, b = ref_runs
    with pytest.raises(ValueError, match="paired mode needs"):
        ranking.flip_significance(metric="ap", y_true=[0, 1], score_a=[0.1, 0.2])
    with pytest.raises(ValueError, match="counts_a"):
        ranking.flip_significance(metric="ap")
    with pytest.raises(ValueError, match="thresholds"):
        ranking.flip_significance(a, b, "f1")


def test_flip_table_matches_pairwise_flip_points(ref_runs):
    a, b = ref_runs
    c = RocCounts([1.0, 0.0], [900, P], [2000, N], P, N)
    runs = {"A": a, "B": b, "C": c}
    t = ranking.flip_table(runs, prevalence_range=(1e-6, 0.5))
    for x, y in (("A", "B"), ("A", "C"), ("B", "C")):
        for m in ("ap", "pr_auc", "max_f1"):
            assert list(t[x, y, m]) == list(ranking.flip_points(runs[x], runs[y], m))
    assert len(t["A", "B", "ap"]) == 1 and t["B", "A", "ap"].winners[0][2] == "a"
    assert [f[:3] for f in t.all_flips()].count(("A", "B", "ap")) == 1
    np.testing.assert_allclose(t.curves["B"]["ap"], metrics.average_precision(b, t.prevalences))


def test_flip_significance_from_replicates_matches_flip_significance():
    y, sa, sb = _paired_reference(1000, 10**5, 900, 100, 500, 10)
    res = ranking.flip_significance(
        metric="ap", prevalences=GRID, y_true=y, score_a=sa, score_b=sb, n_boot=100, seed=0
    )
    noise = np.random.default_rng(0).normal(size=(300, GRID.size))
    tight = ranking.flip_significance_from_replicates(
        res.difference, res.difference + 1e-6 * noise, GRID, res.flips
    )
    loose = ranking.flip_significance_from_replicates(
        res.difference, res.difference + 1.0 * noise, GRID, res.flips
    )
    assert list(tight.flips) == list(res.flips) and tight.n_boot == 300
    # replicates hugging D: the band excludes 0 on both sides; replicates of spread 1: it cannot
    assert tight.significant == [True] and loose.significant == [False]
    with pytest.raises(ValueError, match="replicates"):
        ranking.flip_significance_from_replicates(res.difference, noise[:, :5], GRID, res.flips)


@pytest.mark.parametrize("metric", ["ap", "pr_auc", "max_f1"])
def test_prepared_metric_function_equals_metric_values_bit_for_bit(metric):
    """The flip root finding evaluates prepared functions: the same numbers as metric_values
    (so the eta* it finds are those of the exact curves), for continuous and tied scores."""
    from mlflow_imbalance.stats._batch import metric_function, metric_values

    rng = np.random.default_rng(5)
    for rounded in (False, True):
        y = rng.random(5000) < 0.03
        s = rng.normal(size=y.size) + 1.4 * y
        c = RocCounts.from_scores(y, np.round(s, 1) if rounded else s)
        fn = metric_function(c, metric)
        for eta in (1e-5, 3e-4, 0.01, 0.2, 0.5):
            np.testing.assert_array_equal(fn(eta), metric_values(c, metric, eta))
        np.testing.assert_array_equal(fn([1e-4, 0.3]), metric_values(c, metric, [1e-4, 0.3]))
