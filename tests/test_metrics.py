"""Tests of mlflow_imbalance.metrics against paper values, scikit-learn and brute force."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.spatial import ConvexHull
from sklearn.metrics import (
    average_precision_score,
    f1_score,
    precision_recall_curve,
    roc_auc_score,
)
from sklearn.metrics import roc_curve as sk_roc_curve

from mlflow_imbalance import RocCounts, merge_counts
from mlflow_imbalance import metrics as m

ETAS = [1e-6, 1e-4, 1e-2, 0.1, 0.5, 0.9]


# ---------------------------------------------------------------------------- fixtures / helpers
def _data(seed: int, n: int = 300, prev: float = 0.2, decimals: int = 1):
    """Random scores with many ties (rounded), positives shifted up."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prev
    y[0], y[1] = True, False
    s = np.round(rng.normal(size=n) + 1.2 * y, decimals)
    return y, s


@pytest.fixture(params=[0, 1, 2])
def data(request):
    return _data(request.param)


def _single_point(tp: int, fp: int, n_pos: int, n_neg: int) -> RocCounts:
    """Counts with one operating point (threshold 1) plus the final point (threshold 0)."""
    return RocCounts([1.0, 0.0], [tp, n_pos], [fp, n_neg], n_pos, n_neg)


def _weights(y: np.ndarray, eta: float) -> np.ndarray:
    n_pos, n_neg = y.sum(), (~y).sum()
    return np.where(y, eta / (1 - eta) * n_neg / n_pos, 1.0)


def _brute_pr_auc(fpr: np.ndarray, tpr: np.ndarray, eta: float) -> float:
    """Davis–Goadrich area by adaptive numerical integration along each ROC segment.

    Independent of the closed form: each segment between consecutive ROC points (origin
    included) is sampled by scipy's adaptive quadrature in its own parameter t, precision at
    each sample point being eq. (8) of the linearly interpolated (FPR, TPR).
    """
    x = np.concatenate(([0.0], fpr))
    y = np.concatenate(([0.0], tpr))
    total = 0.0
    for i in range(x.size - 1):
        dy = y[i + 1] - y[i]
        if dy <= 0:
            continue
        dx = x[i + 1] - x[i]

        def prec(t, i=i, dx=dx, dy=dy):
            r = y[i] + t * dy
            return eta * r / (eta * r + (1 - eta) * (x[i] + t * dx))

        total += dy * quad(prec, 0.0, 1.0, epsabs=0.0, epsrel=1e-13, limit=200)[0]
    return total


# ---------------------------------------------------------------------------- paper values
def test_cardenas_baras_ppv():
    # p = 1e-5, P_D = 1, P_FA = 0.01 gives PPV = 100/100099 (Cárdenas & Baras, §"base-rate").
    expected = 100 / 100099
    assert m.p3_curve(1.0, 0.01, 1e-5) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(9.990110e-4, rel=1e-6)
    c = _single_point(tp=7, fp=1, n_pos=7, n_neg=100)  # TPR = 1, FPR = 0.01
    assert m.precision(c, 1e-5)[0] == pytest.approx(expected, rel=1e-12)
    bfa, det = m.broc_curve(c, 1e-5)
    # the hull vertex (0.01, 1) appears on the B-ROC at B_FA = 1 − PPV
    k = int(np.flatnonzero(det == 1.0)[0])
    assert bfa[k] == pytest.approx(1 - expected, rel=1e-12)


def test_cardenas_baras_npv_eq2():
    p, pd, pfa = Fraction(1, 1000), Fraction(3, 5), Fraction(1, 100)
    expected = (1 - p) * (1 - pfa) / (p * (1 - pd) + (1 - p) * (1 - pfa))
    c = _single_point(tp=60, fp=10, n_pos=100, n_neg=1000)
    assert m.npv(c, 0.001)[0] == pytest.approx(float(expected), rel=1e-12)


def test_slides_precision_example():
    c = RocCounts([1.0, 0.0], [100, 110], [10, 10000], 110, 10000)
    assert m.tpr(c)[0] == pytest.approx(10 / 11, rel=1e-15)
    assert m.fpr(c)[0] == pytest.approx(0.001, rel=1e-15)
    assert m.precision(c)[0] == pytest.approx(10 / 11, rel=1e-12)
    c2 = RocCounts([1.0, 0.0], [100, 110], [100, 10000], 110, 10000)
    assert m.precision(c2)[0] == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("eta", ["1e-6", "1e-4", "0.001", "0.01", "0.1", "0.5", "0.9"])
def test_brabec_eq8(eta):
    e = Fraction(eta)
    t, f = Fraction(3, 5), Fraction(1, 1000)
    expected = float(t * e / (t * e + f * (1 - e)))
    c = _single_point(tp=600, fp=1, n_pos=1000, n_neg=1000)  # TPR = 0.6, FPR = 0.001
    assert m.precision(c, float(e))[0] == pytest.approx(expected, rel=1e-12)
    assert m.p3_curve(0.6, 0.001, float(e)) == pytest.approx(expected, rel=1e-12)


def test_p3_curve_vectorised_and_monotone():
    grid = m.default_prevalence_grid(50)
    p = m.p3_curve(0.6, 0.001, grid)
    assert p.shape == (50,)
    assert np.all(np.diff(p) > 0)
    both = m.p3_curve(np.array([0.6, 0.3]), np.array([0.001, 0.01]), grid)
    assert both.shape == (50, 2)
    np.testing.assert_allclose(both[:, 0], p, rtol=1e-14)


def _slides_classifiers():
    # (FNR, FPR) = (0.6, 0.3), (0.3, 0.5), (0.4, 0.2) with 10 positives and 10 negatives.
    return [
        _single_point(tp=4, fp=3, n_pos=10, n_neg=10),
        _single_point(tp=7, fp=5, n_pos=10, n_neg=10),
        _single_point(tp=6, fp=2, n_pos=10, n_neg=10),
    ]


def test_slides_cost_curves():
    c1, c2, c3 = _slides_classifiers()
    grid = np.linspace(0.001, 0.999, 999)  # π+, every multiple of 0.001
    cost = {
        k: m.normalized_expected_cost(c, grid, cost_fp=1, cost_fn=2)[:, 0]
        for k, c in (("1", c1), ("2", c2), ("3", c3))
    }
    assert np.all(cost["3"] < cost["1"])
    cheaper = cost["2"] < cost["3"] - 1e-12
    equal = np.abs(cost["2"] - cost["3"]) <= 1e-12
    assert np.all(cheaper | equal == (grid >= 0.6 - 1e-9))
    assert np.all(cheaper == (grid > 0.6 + 1e-9))
    at = m.normalized_expected_cost(c2, 0.6, 1, 2)[0]
    assert at == pytest.approx(m.normalized_expected_cost(c3, 0.6, 1, 2)[0], abs=1e-15)
    # the slides' formula, by hand, at π+ = 0.6
    assert at == pytest.approx((0.5 * 0.4 * 1 + 0.3 * 0.6 * 2) / (0.4 * 1 + 0.6 * 2), rel=1e-14)
    # the same crossing in Drummond–Holte space: PC(+) = 0.6·2/(0.6·2 + 0.4·1) = 0.75
    pc = m.probability_cost(0.6, cost_fp=1, cost_fn=2)
    assert pc == pytest.approx(0.75, rel=1e-15)
    assert m.prevalence_from_probability_cost(0.75, 1, 2) == pytest.approx(0.6, rel=1e-15)
    cc2 = m.cost_curve(c2, 1, 2, prevalences=[0.6])
    cc3 = m.cost_curve(c3, 1, 2, prevalences=[0.6])
    # hull vertex lines include the classifier's own point: FNR·PC + FPR·(1−PC) = 0.35
    assert np.any(np.isclose(cc2.costs[:, 0], 0.35, rtol=1e-14))
    assert np.any(np.isclose(cc3.costs[:, 0], 0.35, rtol=1e-14))


def test_expected_cost_matches_raw_confusion_counts(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    ec = m.expected_cost(c, None, cost_fp=1.5, cost_fn=7.0)
    for k in [0, c.n_thresholds // 2, c.n_thresholds - 1]:
        pred = s >= c.thresholds[k]
        fp = np.sum(pred & ~y)
        fn = np.sum(~pred & y)
        assert ec[k] == pytest.approx((1.5 * fp + 7.0 * fn) / y.size, rel=1e-12)


def test_iso_slope_and_range_maxion_roberts():
    # §4: FP twice as expensive as FN at equal prevalence -> slope 2; prevalence alone: N/S.
    assert m.iso_performance_slope(0.5, cost_fp=2, cost_fn=1) == pytest.approx(2.0)
    assert m.iso_performance_slope(0.01) == pytest.approx(99.0)
    assert m.slope_range((0.01, 0.1), cost_fp=(1, 2)) == pytest.approx((9.0, 198.0))
    np.testing.assert_allclose(m.iso_performance_slope([0.5, 0.25], 1, 3), [1 / 3, 1.0])


def test_optimal_operating_point_is_brute_force_minimum(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    for eta, cfp, cfn in [(0.01, 1, 1), (0.2, 1, 5), (0.5, 3, 1), (1e-4, 1, 100)]:
        op = m.optimal_operating_point(c, eta, cfp, cfn)
        # brute force over every threshold of the raw data and the trivial classifiers
        thr = np.concatenate(([np.inf], np.unique(s), [-np.inf]))
        pred = s[None, :] >= thr[:, None]
        tpr_ = (pred & y).sum(1) / y.sum()
        fpr_ = (pred & ~y).sum(1) / (~y).sum()
        cost = fpr_ * (1 - eta) * cfp + (1 - tpr_) * eta * cfn
        assert op.cost == pytest.approx(cost.min(), rel=1e-12, abs=1e-15)
        pred_op = s >= op.threshold
        assert np.mean(pred_op[y]) == pytest.approx(op.tpr, rel=1e-12)
        assert np.mean(pred_op[~y]) == pytest.approx(op.fpr, rel=1e-12)
        # the iso-performance line touches the hull at that vertex
        h = m.convex_hull(c)
        slope = m.iso_performance_slope(eta, cfp, cfn)
        j = int(np.flatnonzero((h.fpr == op.fpr) & (h.tpr == op.tpr))[0])
        with np.errstate(divide="ignore"):
            seg = np.diff(h.tpr) / np.diff(h.fpr)  # inf for a vertical first segment
        assert np.all(seg[:j] >= slope * (1 - 1e-12))
        assert np.all(seg[j:] <= slope * (1 + 1e-12))
    ops = m.optimal_operating_point(c, [0.01, 0.2], 1, 5)
    assert ops.cost.shape == (2,)
    assert ops.cost[1] == pytest.approx(m.optimal_operating_point(c, 0.2, 1, 5).cost)


def test_cost_curve_envelope_equals_min_over_all_points(data):
    y, s = data
    c = RocCounts.from_scores(y, s, compress=False)
    cc = m.cost_curve(c, num=101)
    f, t, _ = m.roc_curve(c)
    lines = (1 - t)[:, None] * cc.pc + f[:, None] * (1 - cc.pc)
    np.testing.assert_allclose(cc.envelope, lines.min(axis=0), rtol=0, atol=1e-14)
    assert cc.costs.shape == (m.convex_hull(c).fpr.size, 101)
    assert cc.envelope[0] == 0.0 and cc.envelope[-1] == 0.0  # trivial classifiers
    assert np.all(cc.envelope <= np.minimum(cc.pc, 1 - cc.pc) + 1e-15)


# ---------------------------------------------------------------------------- scikit-learn
def test_roc_curve_matches_sklearn(data):
    y, s = data
    c = RocCounts.from_scores(y, s, compress=False)
    f, t, thr = m.roc_curve(c)
    sf, st_, sthr = sk_roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(f, sf, rtol=1e-15)
    np.testing.assert_allclose(t, st_, rtol=1e-15)
    assert thr[0] == np.inf
    np.testing.assert_array_equal(thr[1:], sthr[1:])


def test_roc_and_partial_auc_match_sklearn(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    assert m.roc_auc(c) == pytest.approx(roc_auc_score(y, s), rel=1e-13)
    for max_fpr in [0.01, 0.05, 0.1, 0.33, 0.5, 0.999, 1.0]:
        ref = roc_auc_score(y, s, max_fpr=max_fpr)
        assert m.partial_auc(c, max_fpr, standardized=True) == pytest.approx(ref, rel=1e-12)
        # raw area recovered from the McClish transform of sklearn's value
        lo, hi = 0.5 * max_fpr**2, max_fpr
        raw = lo + (2 * ref - 1) * (hi - lo) if max_fpr < 1 else ref
        assert m.partial_auc(c, max_fpr) == pytest.approx(raw, rel=1e-11, abs=1e-15)


def test_weighted_counts_match_sklearn(data):
    y, s = data
    w = np.random.default_rng(5).uniform(0.1, 3.0, size=y.size)
    c = RocCounts.from_scores(y, s, sample_weight=w)
    assert m.roc_auc(c) == pytest.approx(roc_auc_score(y, s, sample_weight=w), rel=1e-12)
    # positive weights η/(1−η)·N/P with N, P the weighted totals
    eta = 0.01
    ww = np.where(y, w * eta / (1 - eta) * c.n_neg / c.n_pos, w)
    ref = average_precision_score(y, s, sample_weight=ww)
    assert m.average_precision(c, eta) == pytest.approx(ref, rel=1e-11)


@pytest.mark.parametrize("eta", ETAS)
def test_average_precision_matches_sklearn_weighted(data, eta):
    y, s = data
    c = RocCounts.from_scores(y, s)
    ref = average_precision_score(y, s, sample_weight=_weights(y, eta))
    assert m.average_precision(c, eta) == pytest.approx(ref, rel=1e-11)


def test_precision_per_threshold_matches_sklearn_weighted(data):
    y, s = data
    c = RocCounts.from_scores(y, s, compress=False)
    eta = 0.003
    prec, rec, thr = precision_recall_curve(y, s, sample_weight=_weights(y, eta))
    # sklearn: ascending thresholds, last point (recall 0, precision 1) is not a threshold
    ours = dict(zip(c.thresholds.tolist(), m.precision(c, eta).tolist(), strict=True))
    recall = dict(zip(c.thresholds.tolist(), m.tpr(c).tolist(), strict=True))
    for t_, p_, r_ in zip(thr, prec[:-1], rec[:-1], strict=True):
        assert ours[float(t_)] == pytest.approx(p_, rel=1e-12)
        assert recall[float(t_)] == pytest.approx(r_, rel=1e-12)


def test_f1_and_max_f1_match_sklearn_weighted(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    for eta in [0.001, 0.05, 0.5]:
        w = _weights(y, eta)
        f1s = m.f1(c, eta)
        for k in [0, c.n_thresholds // 3, c.n_thresholds - 1]:
            ref = f1_score(y, s >= c.thresholds[k], sample_weight=w)
            assert f1s[k] == pytest.approx(ref, rel=1e-12)
        value, thr = m.max_f1_point(c, eta)
        thrs = np.unique(s)
        refs = [f1_score(y, s >= t_, sample_weight=w) for t_ in thrs]
        assert value == pytest.approx(max(refs), rel=1e-12)
        assert f1_score(y, s >= thr, sample_weight=w) == pytest.approx(value, rel=1e-12)


def test_npv_matches_raw_counts(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    v = m.npv(c)
    for k in [0, c.n_thresholds // 2]:
        neg_pred = s < c.thresholds[k]
        assert v[k] == pytest.approx(np.mean(~y[neg_pred]), rel=1e-12)
    assert v[-1] == 0.0  # nothing predicted negative: the 0/0 convention


# ---------------------------------------------------------------------------- PR-AUC
def test_pr_auc_hand_example():
    # ROC points (0, 1/2) and (1, 1). At η = 1/2 precision is 1 up to recall 1/2, then along
    # FPR = 2r − 1 it is r/(3r − 1): area 1/2 + [r/3 + ln(3r − 1)/9] from 1/2 to 1.
    c = RocCounts([1.0, 0.0], [1, 2], [0, 2], 2, 2)
    expected = 0.5 + 1 / 6 + math.log(4) / 9
    assert m.pr_auc(c, 0.5) == pytest.approx(expected, rel=1e-14)
    # not the linear-in-PR-space trapezoid (which would be 0.5 + 0.5·(1 + 0.5)/2)
    assert abs(m.pr_auc(c, 0.5) - 0.875) > 0.05


@pytest.mark.parametrize("eta", [1e-8, *ETAS])
def test_pr_auc_matches_brute_force_interpolation(eta):
    y, s = _data(3, n=120, prev=0.3)
    c = RocCounts.from_scores(y, s)
    ref = _brute_pr_auc(c.fpr, c.tpr, eta)
    assert m.pr_auc(c, eta) == pytest.approx(ref, rel=2e-7)


def test_pr_auc_degenerate_segments():
    # first point has TP = 0 (a horizontal segment from the origin), then vertical, diagonal
    c = RocCounts([3.0, 2.0, 1.0, 0.0], [0, 3, 4, 5], [2, 2, 6, 10], 5, 10)
    for eta in [1e-7, 0.01, 0.5, 0.99]:
        assert m.pr_auc(c, eta) == pytest.approx(_brute_pr_auc(c.fpr, c.tpr, eta), rel=1e-7)
    # a segment whose line passes through the origin (B = 0): precision constant on it
    c = RocCounts([2.0, 1.0, 0.0], [1, 2, 4], [1, 2, 4], 4, 4)
    assert m.pr_auc(c, 0.3) == pytest.approx(0.3, rel=1e-14)


def test_pr_curve_interpolated_area_and_shape(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    rec, prec = m.pr_curve(c, 0.01, points_per_segment=400)
    assert rec[0] == 0.0 and prec[0] == pytest.approx(m.precision(c, 0.01)[0])
    area = np.sum(np.diff(rec) * (prec[1:] + prec[:-1]) / 2)
    assert area == pytest.approx(m.pr_auc(c, 0.01), rel=1e-5)
    rec2, prec2 = m.pr_curve(c, [0.01, 0.1], points_per_segment=5)
    assert prec2.shape == (2, rec2.size)
    r0, p0 = m.pr_curve(c, 0.1, interpolate=False)
    np.testing.assert_array_equal(r0, c.tpr)
    np.testing.assert_allclose(p0, m.precision(c, 0.1))


# ---------------------------------------------------------------------------- hull, NP point
def _scipy_upper_hull(f: np.ndarray, t: np.ndarray) -> set[tuple[float, float]]:
    pts = np.unique(np.column_stack([np.append(f, 1.0), np.append(t, 0.0)]), axis=0)
    hull = ConvexHull(pts)
    verts = {tuple(p) for p in pts[hull.vertices].tolist()}
    verts.discard((1.0, 0.0))
    return verts


def test_convex_hull_matches_scipy(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    h = m.convex_hull(c)
    f, t, _ = m.roc_curve(c)
    assert {tuple(p) for p in np.column_stack([h.fpr, h.tpr]).tolist()} == _scipy_upper_hull(f, t)
    assert h.thresholds[0] == np.inf and h.fpr[0] == 0 and h.tpr[-1] == 1
    # vertices are ROC points with their own thresholds
    for fv, tv, thv in zip(h.fpr[1:], h.tpr[1:], h.thresholds[1:], strict=True):
        assert np.mean(s[y] >= thv) == pytest.approx(tv) and np.mean(s[~y] >= thv) == pytest.approx(
            fv
        )
    with np.errstate(divide="ignore"):
        slopes = np.diff(h.tpr) / np.diff(h.fpr)
    assert np.all(slopes[1:] < slopes[:-1])


def test_convex_hull_sequential_case():
    # a concave arc whose last point lies below the chord to a final high point: vertices
    # must be removed one by one from the end (exercises the monotone-chain finish)
    k = 300
    x = np.linspace(0.01, 0.5, k)
    yv = 0.5 * np.sqrt(x / 0.5) * 0.9
    fp = np.round(x * 100000).astype(np.int64)
    tp = np.round(yv * 100000).astype(np.int64)
    tp = np.maximum.accumulate(tp)
    fp = np.append(fp, 100000)
    tp = np.append(tp, 100000)
    c = RocCounts(np.arange(fp.size, 0, -1).astype(float), tp, fp, 100000, 100000)
    h = m.convex_hull(c)
    f, t, _ = m.roc_curve(c)
    assert {tuple(p) for p in np.column_stack([h.fpr, h.tpr]).tolist()} == _scipy_upper_hull(f, t)


def test_tpr_at_fpr_empirical_and_hull(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    sf, st_, _ = sk_roc_curve(y, s, drop_intermediate=False)
    for max_fpr in [0.01, 0.05, 0.2, 0.5, 1.0]:
        op = m.tpr_at_fpr(c, max_fpr)
        assert op.tpr == pytest.approx(st_[sf <= max_fpr].max(), rel=1e-15)
        assert op.fpr <= max_fpr
        pred = s >= op.threshold
        assert np.mean(pred[y]) == pytest.approx(op.tpr) and np.mean(pred[~y]) == pytest.approx(
            op.fpr
        )
        hop = m.tpr_at_fpr(c, max_fpr, hull=True)
        h = m.convex_hull(c)
        assert hop.tpr == pytest.approx(np.interp(max_fpr, h.fpr, h.tpr), rel=1e-12)
        assert hop.tpr >= op.tpr - 1e-15
        # randomising between the two thresholds realises the point exactly
        p = hop.p_alt
        pa = s >= hop.threshold
        pb = s >= hop.threshold_alt if p > 0 else pa
        assert (1 - p) * np.mean(pa[y]) + p * np.mean(pb[y]) == pytest.approx(hop.tpr, rel=1e-12)
        assert (1 - p) * np.mean(pa[~y]) + p * np.mean(pb[~y]) == pytest.approx(max_fpr, rel=1e-12)


# ---------------------------------------------------------------------------- dominance
def test_dominance_full_partial_none():
    a = RocCounts([1.0, 0.5, 0.0], [5, 10, 10], [0, 5, 10], 10, 10)  # (0,.5),(.5,1)
    b = RocCounts([1.0, 0.0], [5, 10], [5, 10], 10, 10)  # (.5,.5)
    d = m.dominance(a, b)
    assert (d.kind, d.which) == ("full", "a")
    assert d.ranges["a"] == [(0.0, 1.0)] and d.ranges["b"] == []
    assert m.dominance(b, a).which == "b"
    assert m.dominance(a, a).kind == "none"

    # a: TPR = 0.6 + 0.4·FPR; b: (0.2, 0.9) then to (1, 1). They cross at FPR = 6/41.
    a = RocCounts([1.0, 0.0], [6, 10], [0, 10], 10, 10)
    b = RocCounts([1.0, 0.0], [9, 10], [1, 5], 10, 5)
    d = m.dominance(a, b)
    assert d.kind == "partial" and d.which is None
    ((lo_a, hi_a),) = d.ranges["a"]
    ((lo_b, hi_b),) = d.ranges["b"]
    assert lo_a == 0.0 and hi_a == pytest.approx(6 / 41, rel=1e-14)
    assert lo_b == pytest.approx(6 / 41, rel=1e-14) and hi_b == 1.0
    assert d.crossings == [pytest.approx(6 / 41, rel=1e-14)]


def test_dominance_ranges_agree_with_dense_grid(data):
    y, s = data
    rng = np.random.default_rng(9)
    a = RocCounts.from_scores(y, s)
    b = RocCounts.from_scores(y, s + np.round(rng.normal(size=s.size), 1))
    d = m.dominance(a, b)
    fa, ta, _ = m.roc_curve(a)
    fb, tb, _ = m.roc_curve(b)
    for key, sign in (("a", 1), ("b", -1)):
        for lo, hi in d.ranges[key]:
            xs = np.linspace(lo, hi, 7)[1:-1]
            # np.interp on strictly-increasing-in-FPR pieces: use midpoints away from jumps
            diff = np.interp(xs, fa, ta) - np.interp(xs, fb, tb)
            jumps = np.isin(xs, np.concatenate((fa, fb)))
            assert np.all(sign * diff[~jumps] > -1e-12)
    covered = sum(hi - lo for r in d.ranges.values() for lo, hi in r)
    assert 0 < covered <= 1 + 1e-12


# ---------------------------------------------------------------------------- B-ROC
def test_broc_origin_limit_and_ends(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    h = m.convex_hull(c)
    # a negative tied with the top score: every ROC point has FPR > 0, so f'(0+) is finite
    y, s = np.append(y, False), np.append(s, s.max())
    c = RocCounts.from_scores(y, s)
    h = m.convex_hull(c)
    assert h.fpr[1] > 0
    for p in [1e-4, 0.01, 0.3]:
        slope = (h.tpr[1] - h.tpr[0]) / (h.fpr[1] - h.fpr[0])
        lim = m.broc_origin_limit(c, p)
        assert lim == pytest.approx((1 - p) / (p * (slope - 1) + 1), rel=1e-12)
        # B_FA at a small false-alarm rate α on the first hull segment, by the paper's
        # expression α(1−p)/(p·f(α) + α(1−p)), tends to the limit
        alpha = h.fpr[1] * 1e-9
        f_alpha = h.tpr[1] * 1e-9
        bfa_small = alpha * (1 - p) / (p * f_alpha + alpha * (1 - p))
        assert lim == pytest.approx(bfa_small, rel=1e-9)
        bfa, det = m.broc_curve(c, p, points_per_segment=10)
        assert (bfa[0], det[0]) == (pytest.approx(lim), 0.0)
        assert det[-1] == 1.0 and bfa[-1] == pytest.approx(1 - p, rel=1e-12)
    # a vertical first hull segment (perfect detections at FPR 0) maps to B_FA = 0
    perfect_start = RocCounts([2.0, 1.0, 0.0], [3, 4, 5], [0, 5, 10], 5, 10)
    assert m.broc_origin_limit(perfect_start, 0.001) == 0.0
    bfa, det = m.broc_curve(perfect_start, [0.001, 0.1])
    assert bfa.shape == (2, det.size)


# ---------------------------------------------------------------------------- vectorisation
def test_array_prevalence_matches_scalar_calls(data):
    y, s = data
    c = RocCounts.from_scores(y, s)
    etas = np.array([1e-5, 0.01, 0.3])
    for fn in (m.precision, m.npv, m.f1, m.expected_cost, m.normalized_expected_cost):
        out = fn(c, etas)
        assert out.shape == (3, c.n_thresholds)
        for i, e in enumerate(etas):
            np.testing.assert_allclose(out[i], fn(c, float(e)), rtol=1e-14)
    for fn in (m.average_precision, m.pr_auc, m.max_f1, m.broc_origin_limit):
        out = fn(c, etas)
        assert out.shape == (3,)
        for i, e in enumerate(etas):
            assert out[i] == pytest.approx(fn(c, float(e)), rel=1e-13)


def test_prevalence_sweep(data, monkeypatch):
    y, s = data
    c = RocCounts.from_scores(y, s)
    grid = m.default_prevalence_grid()
    assert grid.size == 200 and grid[0] == pytest.approx(1e-6) and grid[-1] == pytest.approx(0.5)
    assert np.allclose(np.diff(np.log(grid)), np.log(0.5 / 1e-6) / 199)
    from mlflow_imbalance.core import metrics as core_metrics

    monkeypatch.setattr(core_metrics, "_CHUNK_ELEMENTS", 64)  # force many chunks
    sw = m.prevalence_sweep(c)
    assert set(sw) >= {"prevalence", "ap", "pr_auc", "max_f1", "max_f1_threshold"}
    for i in [0, 57, 199]:
        e = float(grid[i])
        w = _weights(y, e)
        assert sw["ap"][i] == pytest.approx(average_precision_score(y, s, sample_weight=w))
        assert sw["pr_auc"][i] == pytest.approx(_brute_pr_auc(c.fpr, c.tpr, e), rel=1e-6)
        assert sw["max_f1"][i] == pytest.approx(m.max_f1(c, e), rel=1e-14)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan"), [0.1, 1.0]])
def test_bad_prevalence(bad):
    c = _single_point(3, 1, 5, 10)
    for fn in (m.precision, m.average_precision, m.pr_auc, m.max_f1, m.npv, m.broc_curve):
        with pytest.raises(ValueError, match="prevalence"):
            fn(c, bad)
    with pytest.raises(ValueError, match="prevalence"):
        m.iso_performance_slope(bad)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_bad_costs(bad):
    c = _single_point(3, 1, 5, 10)
    with pytest.raises(ValueError, match=r"cost_fp.*" + str(bad).replace("inf", "inf")):
        m.expected_cost(c, 0.1, cost_fp=bad)
    with pytest.raises(ValueError, match="cost_fn"):
        m.optimal_operating_point(c, 0.1, cost_fn=bad)
    with pytest.raises(ValueError, match="cost_fn"):
        m.iso_performance_slope(0.1, cost_fn=bad)


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.01, float("nan")])
def test_bad_max_fpr(bad):
    c = _single_point(3, 1, 5, 10)
    with pytest.raises(ValueError, match="max_fpr"):
        m.partial_auc(c, bad)
    with pytest.raises(ValueError, match="max_fpr"):
        m.tpr_at_fpr(c, bad)


def test_error_message_names_value():
    c = _single_point(3, 1, 5, 10)
    with pytest.raises(ValueError, match=r"prevalence.*1\.5"):
        m.precision(c, 1.5)
    with pytest.raises(ValueError, match=r"max_fpr.*1\.2"):
        m.partial_auc(c, 1.2)
    with pytest.raises(TypeError, match="RocCounts"):
        m.roc_auc([1, 2, 3])


# ---------------------------------------------------------------------------- properties
@st.composite
def tied_data(draw, min_size=2, max_size=60):
    n = draw(st.integers(min_size, max_size))
    y = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    assume(y.any() and not y.all())
    s = np.array(draw(st.lists(st.integers(-6, 6), min_size=n, max_size=n)), dtype=float)
    return y, s


def _summary(c: RocCounts) -> list[float]:
    out = [m.roc_auc(c), m.partial_auc(c, 0.3, standardized=True), m.partial_auc(c, 0.07)]
    for eta in (1e-5, 0.03, 0.5):
        out += [m.average_precision(c, eta), m.pr_auc(c, eta), m.max_f1(c, eta)]
        out.append(m.optimal_operating_point(c, eta, 1, 3).cost)
        out.append(m.broc_origin_limit(c, eta))
    out += [m.tpr_at_fpr(c, 0.2).tpr, m.tpr_at_fpr(c, 0.2, hull=True).tpr]
    out += list(m.cost_curve(c, num=11).envelope)
    h = m.convex_hull(c)
    out += [*h.fpr, *h.tpr]
    return out


PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(tied_data())
def test_compression_is_lossless(d):
    y, s = d
    full = RocCounts.from_scores(y, s, compress=False)
    comp = RocCounts.from_scores(y, s)
    np.testing.assert_allclose(_summary(comp), _summary(full), rtol=1e-12, atol=1e-15)
    assert m.dominance(full, comp).kind == "none"
    # the max-F1 threshold of the compressed counts also exists, with the same F1, uncompressed
    v, thr = m.max_f1_point(comp, 0.01)
    k = int(np.flatnonzero(full.thresholds == thr)[0])
    assert m.f1(full, 0.01)[k] == pytest.approx(v, rel=1e-13)


@PROPS
@given(tied_data())
def test_invariant_under_increasing_transforms(d):
    y, s = d
    base = _summary(RocCounts.from_scores(y, s))
    for t in (np.exp(s / 3.0), 2.5 * s + 7.0, np.arctan(s)):
        np.testing.assert_allclose(_summary(RocCounts.from_scores(y, t)), base, rtol=1e-12)


@PROPS
@given(tied_data())
def test_ap_and_pr_auc_non_decreasing_in_prevalence(d):
    y, s = d
    c = RocCounts.from_scores(y, s)
    grid = m.default_prevalence_grid(60, 1e-7, 0.999)
    for fn in (m.average_precision, m.pr_auc, m.max_f1):
        v = fn(c, grid)
        assert np.all(np.diff(v) >= -1e-12 * v[1:])


@PROPS
@given(tied_data(min_size=4), st.integers(1, 1000))
def test_merge_equals_concatenation(d, seed):
    y, s = d
    rng = np.random.default_rng(seed)
    part = rng.random(y.size) < 0.5
    for mask in (part, ~part):
        assume(y[mask].any() and (~y[mask]).any())
    a = RocCounts.from_scores(y[part], s[part], compress=False)
    b = RocCounts.from_scores(y[~part], s[~part], compress=False)
    merged = merge_counts([a, b], compress=False)
    assert merged == RocCounts.from_scores(y, s, compress=False)
    np.testing.assert_allclose(
        _summary(merge_counts([a, b])), _summary(RocCounts.from_scores(y, s)), rtol=1e-13
    )


@PROPS
@given(tied_data(), st.floats(1e-6, 0.99))
def test_broc_of_hull_non_decreasing(d, p):
    y, s = d
    c = RocCounts.from_scores(y, s)
    bfa, det = m.broc_curve(c, p, points_per_segment=7)
    assert np.all(np.diff(det) >= 0)
    assert np.all(np.diff(bfa) >= -1e-12)
    assert np.all((bfa >= 0) & (bfa <= 1))


@PROPS
@given(tied_data(max_size=80))
def test_hull_is_exact_upper_hull(d):
    # exact integer orientation tests, independent of the implementation
    y, s = d
    c = RocCounts.from_scores(y, s, compress=False)
    h = m.convex_hull(c)
    hx = np.round(h.fpr * c.n_neg).astype(np.int64).tolist()
    hy = np.round(h.tpr * c.n_pos).astype(np.int64).tolist()
    assert (hx[0], hy[0], hx[-1], hy[-1]) == (0, 0, c.n_neg, c.n_pos)
    for i in range(1, len(hx) - 1):  # strictly convex: no collinear or reflex vertex
        cross = (hx[i] - hx[i - 1]) * (hy[i + 1] - hy[i - 1]) - (hy[i] - hy[i - 1]) * (
            hx[i + 1] - hx[i - 1]
        )
        assert cross < 0
    for px, py in zip([0, *c.fp.tolist()], [0, *c.tp.tolist()], strict=True):
        j = min(int(np.searchsorted(hx, px, side="right")) - 1, len(hx) - 2)
        cross = (hx[j + 1] - hx[j]) * (py - hy[j]) - (hy[j + 1] - hy[j]) * (px - hx[j])
        assert cross <= 0  # every ROC point on or below the hull
    vert = set(zip(hx, hy, strict=True))
    assert vert <= set(zip([0, *c.fp.tolist()], [0, *c.tp.tolist()], strict=True))


@settings(max_examples=25, deadline=None)
@given(tied_data(max_size=40), st.sampled_from([1e-6, 1e-3, 0.05, 0.5, 0.95]))
def test_pr_auc_equals_numerical_integration(d, eta):
    y, s = d
    c = RocCounts.from_scores(y, s)
    assert m.pr_auc(c, eta) == pytest.approx(_brute_pr_auc(c.fpr, c.tpr, eta), rel=1e-9)


def test_zero_weight_examples_change_nothing():
    # zero-weight examples above every score create a stored point with TP = FP = 0
    y, s = _data(4, n=150)
    w = np.ones(y.size)
    y2 = np.concatenate(([True, False], y))
    s2 = np.concatenate(([s.max() + 2, s.max() + 1], s))
    w2 = np.concatenate(([0.0, 0.0], w))
    a = RocCounts.from_scores(y, s, sample_weight=w)
    b = RocCounts.from_scores(y2, s2, sample_weight=w2)
    assert b.tp[0] == 0 and b.fp[0] == 0
    assert m.precision(b, 0.1)[0] == 0.0  # the documented 0/0 convention
    for eta in (1e-4, 0.1, 0.7):
        assert m.average_precision(b, eta) == pytest.approx(m.average_precision(a, eta), rel=1e-13)
        assert m.pr_auc(b, eta) == pytest.approx(m.pr_auc(a, eta), rel=1e-13)
        assert m.max_f1(b, eta) == pytest.approx(m.max_f1(a, eta), rel=1e-13)
    assert m.roc_auc(b) == pytest.approx(m.roc_auc(a), rel=1e-13)
    np.testing.assert_allclose(m.convex_hull(b).tpr, m.convex_hull(a).tpr, rtol=1e-13)


def test_shared_argument_checks_and_plain_numbers_in_messages():
    c = RocCounts.from_scores([0, 1, 0, 1], [0.1, 0.4, 0.35, 0.8])
    with pytest.raises(ValueError, match=r"cost_fp must be positive and finite, got -1\.0$"):
        m.expected_cost(c, 0.1, cost_fp=np.float64(-1))
    with pytest.raises(ValueError, match=r"cost_fn must be positive and finite, got 0$"):
        m.normalized_expected_cost(c, 0.1, cost_fn=0)  # zero cost: PC(+) undefined
    with pytest.raises(ValueError, match=r"max_fpr must be in \(0, 1\], got 1\.5$"):
        m.partial_auc(c, np.float64(1.5))
    with pytest.raises(ValueError, match=r"got low=0\.3 and high=0\.1$"):
        m.default_prevalence_grid(low=np.float64(0.3), high=np.float64(0.1))
    with pytest.raises(ValueError, match=r"num must be an integer >= 1, got 1\.5$"):
        m.default_prevalence_grid(num=np.float64(1.5))
