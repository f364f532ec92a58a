"""Tests of mlflow_imbalance.synthetic (Cataltepe et al., ROC without positive examples)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_curve

from mlflow_imbalance import metrics
from mlflow_imbalance.synthetic import evaluate_without_positives, synthesize_positives


# ----------------------------------------------------------------------------- references
def brute_force(X, d, reference=None, m=1, signs_allowed=None):
    """The paper's triple loop (§III), literally, generalised to m features at once."""
    X = np.asarray(X, dtype=float)
    R = X if reference is None else np.asarray(reference, dtype=float)
    k = X.shape[1]
    allowed = signs_allowed or [(1, -1)] * k
    kept = set()
    for fs in itertools.combinations(range(k), m):
        for sg in itertools.product(*(allowed[f] for f in fs)):
            for j in range(X.shape[0]):
                u = X[j].copy()
                for f, s in zip(fs, sg, strict=True):
                    u[f] = u[f] + s * d[f]
                include_ok = True
                for r in R:
                    if all(abs(u[c] - r[c]) < d[c] for c in range(k)):
                        include_ok = False
                if include_ok:
                    kept.add((j, fs, sg))
    return kept


def as_set(res):
    m = res.n_faulty_features
    f = res.feature.reshape(len(res), m)
    g = res.direction.reshape(len(res), m)
    return {
        (int(s), tuple(int(v) for v in ff), tuple(int(v) for v in gg))
        for s, ff, gg in zip(res.source, f, g, strict=True)
    }


def kept_pairs(res):
    triples = zip(res.source, res.feature, res.direction, strict=True)
    return {(int(s), int(f), int(g)) for s, f, g in triples}


# ----------------------------------------------------------------------------- exclusion rule
def test_hand_checked_exclusion_and_boundary():
    # d = 1 on both coordinates; rows (0, 0) and (1.5, 0).
    X = np.array([[0.0, 0.0], [1.5, 0.0]])
    res = synthesize_positives(X, [1.0, 1.0])
    # Row 0 + D_0 = (1, 0) lies within (0.5, 0) of row 1 -> dropped.
    # Row 1 - D_0 = (0.5, 0) lies within (0.5, 0) of row 0 -> dropped.
    # Row 1 + D_0 = (2.5, 0) is exactly d = 1 from row 1 on coordinate 0 -> kept (strict <).
    # (0, ±1), (1.5, ±1): exactly 1 from their own source on coordinate 1 -> kept.
    expected = {(0, 0, -1), (0, 1, 1), (0, 1, -1), (1, 0, 1), (1, 1, 1), (1, 1, -1)}
    assert kept_pairs(res) == expected
    assert res.n_candidates == 8 and res.n_excluded == 2
    pos = {tuple(p) for p in res.positives}
    assert pos == {(-1.0, 0.0), (0.0, 1.0), (0.0, -1.0), (2.5, 0.0), (1.5, 1.0), (1.5, -1.0)}


def test_outside_on_a_single_coordinate_keeps_the_candidate():
    X = np.array([[0.0, 0.0]])
    # Candidate (1, 0): the reference (0.5, 1.0) is within d on coordinate 0 but exactly d away
    # on coordinate 1 -> not excluded; (0.5, 0.9) is within d on both -> excluded.
    on_boundary = synthesize_positives(X, [1.0, 1.0], directions="up", reference=[[0.5, 1.0]])
    assert (0, 0, 1) in kept_pairs(on_boundary)
    inside = synthesize_positives(X, [1.0, 1.0], directions="up", reference=[[0.5, 0.9]])
    assert (0, 0, 1) not in kept_pairs(inside)
    # far away on one coordinate only (2.0 on coordinate 1) -> kept
    far = synthesize_positives(X, [1.0, 1.0], directions="up", reference=[[1.0, 2.0]])
    assert kept_pairs(far) == {(0, 0, 1), (0, 1, 1)}


def test_own_source_never_excludes_and_duplicates_do_not_either():
    X = np.array([[0.25, -3.0], [0.25, -3.0]])
    res = synthesize_positives(X, [0.5, 2.0])
    assert len(res) == 8  # 2 rows x 2 features x 2 directions, none dropped


def test_reference_replaces_the_validation_set():
    X = np.array([[0.0], [10.0]])
    none_left = synthesize_positives(X, [1.0], reference=[[1.0], [-1.0], [9.0], [11.0]])
    # every candidate coincides with a reference point (distance 0 < 1)
    assert len(none_left) == 0 and none_left.n_candidates == 4
    assert none_left.positives.shape == (0, 1)
    empty_ref = synthesize_positives(X, [1.0], reference=np.zeros((0, 1)))
    assert len(empty_ref) == 4


# ----------------------------------------------------------------------------- counts, fields
def test_counts_and_reconstruction_when_nothing_is_excluded():
    rng = np.random.default_rng(0)
    X = rng.permutation(np.arange(60.0)).reshape(20, 3) * 10  # spacing 10 >> d
    d = np.array([1.0, 2.0, 0.5])
    res = synthesize_positives(X, d)
    assert len(res) == 20 * 3 * 2
    assert res.counts_per_feature() == {"x0": 40, "x1": 40, "x2": 40}
    moved = X[res.source].copy()
    moved[np.arange(len(res)), res.feature] += res.direction * d[res.feature]
    np.testing.assert_array_equal(res.positives, moved)
    # order: feature ascending, + before -, then source row
    key = res.feature * 2 + (res.direction < 0)
    assert np.all(np.diff(key) >= 0)
    np.testing.assert_array_equal(res.source[:20], np.arange(20))


def test_directions_one_sided_and_per_feature():
    X = np.arange(12.0).reshape(4, 3) * 100
    up = synthesize_positives(X, 1.0, directions="up")
    assert len(up) == 12 and set(up.direction.tolist()) == {1}
    down = synthesize_positives(X, 1.0, directions="down")
    assert len(down) == 12 and set(down.direction.tolist()) == {-1}
    mixed = synthesize_positives(X, 1.0, directions=["up", "down", "both"])
    assert mixed.counts_per_feature() == {"x0": 4, "x1": 4, "x2": 8}
    assert set(mixed.direction[mixed.feature == 0].tolist()) == {1}
    assert set(mixed.direction[mixed.feature == 1].tolist()) == {-1}
    assert set(mixed.direction[mixed.feature == 2].tolist()) == {1, -1}


def test_dataframe_keeps_column_names_and_index():
    X = pd.DataFrame(
        {"temp": [20.0, 80.0, 20.0], "pressure": [1.0, 5.0, 9.0]}, index=["a", "b", "c"]
    )
    res = synthesize_positives(X, {"pressure": 0.5, "temp": 2.0})
    assert isinstance(res.positives, pd.DataFrame)
    assert list(res.positives.columns) == ["temp", "pressure"]
    np.testing.assert_array_equal(res.thresholds, [2.0, 0.5])
    assert res.feature_names == ("temp", "pressure")
    assert set(res.feature_name.tolist()) == {"temp", "pressure"}
    assert set(res.source_index.tolist()) == {"a", "b", "c"}
    row = res.positives.iloc[0]
    assert res.feature_name[0] == "temp" and row["temp"] == X["temp"].iloc[res.source[0]] + 2.0
    assert res.involves("pressure").sum() == res.counts_per_feature()["pressure"]


# ----------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("m", [1, 2])
def test_matches_brute_force_on_tiny_random_data(m):
    rng = np.random.default_rng(42)
    for trial in range(25):
        n, k = int(rng.integers(1, 12)), int(rng.integers(max(m, 1), 4))
        # half the trials on a coarse grid, so exact boundary ties are common
        if trial % 2:
            X = rng.integers(-3, 4, size=(n, k)) / 2
        else:
            X = rng.normal(size=(n, k))
        d = rng.choice([0.5, 1.0, 0.75], size=k)
        res = synthesize_positives(X, d, n_faulty_features=m, chunk_size=int(rng.integers(1, 9)))
        assert as_set(res) == brute_force(X, d, m=m)


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), min_size=1, max_size=10),
    ref=st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), max_size=6),
    d=st.tuples(st.sampled_from([0.5, 1.0, 1.5, 2.0]), st.sampled_from([0.5, 1.0, 3.0])),
    use_ref=st.booleans(),
    dirs=st.sampled_from(["both", "up", "down"]),
)
def test_property_equals_paper_loop(data, ref, d, use_ref, dirs):
    X = np.array(data, dtype=float) / 2
    R = (np.array(ref, dtype=float).reshape(-1, 2) / 2) if use_ref else None
    d = np.array(d)
    res = synthesize_positives(X, d, reference=R, directions=dirs, chunk_size=3)
    signs = {"both": (1, -1), "up": (1,), "down": (-1,)}[dirs]
    assert as_set(res) == brute_force(X, d, reference=R, signs_allowed=[signs] * 2)
    # invariant: no positive lies strictly within d of any reference example on every coordinate
    Rr = X if R is None else R
    if len(res) and len(Rr):
        inside = np.all(np.abs(res.positives[:, None, :] - Rr[None]) < d, axis=2)
        assert not inside.any()


def test_chunked_equals_unchunked_including_sampling():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    d = np.array([0.3, 0.5, 0.2, 0.4])
    kw = {"feature_weights": [1.0, 0.5, 0.25, 0.8], "rng": 11}
    for m in (1, 2):
        full = synthesize_positives(X, d, n_faulty_features=m, chunk_size=10**7, **kw)
        for chunk in (1, 17, 1000):
            part = synthesize_positives(X, d, n_faulty_features=m, chunk_size=chunk, **kw)
            np.testing.assert_array_equal(part.source, full.source)
            np.testing.assert_array_equal(part.feature, full.feature)
            np.testing.assert_array_equal(part.direction, full.direction)
            np.testing.assert_array_equal(part.positives, full.positives)


def test_single_fault_fast_path_agrees_with_general_join():
    # the multi-feature code path, run with m = 1 through the private general join
    from mlflow_imbalance.synthetic import generate as S

    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(400, 5)) * 4) / 4  # ties on a grid
    d = np.array([0.25, 0.5, 0.75, 0.25, 1.0])
    res = synthesize_positives(X, d)
    ref = S._Reference(X, X, d)
    expected = set()
    for i in range(5):
        for s in (1, -1):
            U = X.copy()
            U[:, i] = U[:, i] + s * d[i]
            keep = ~S._exclusion_general(U, ref, d, 97)
            expected |= {(int(j), i, s) for j in np.flatnonzero(keep)}
    assert kept_pairs(res) == expected


# ----------------------------------------------------------------------------- extensions
def test_multi_feature_faults_move_every_feature_of_the_set():
    X = np.arange(9.0).reshape(3, 3) * 100
    res = synthesize_positives(X, [1.0, 2.0, 3.0], n_faulty_features=2)
    assert res.feature.shape == (len(res), 2)
    assert len(res) == 3 * 3 * 4  # C(3,2) sets x 4 sign patterns x 3 rows, nothing excluded
    diff = res.positives - X[res.source]
    for row, feats, dirs in zip(diff, res.feature, res.direction, strict=True):
        expect = np.zeros(3)
        expect[feats] = dirs * np.array([1.0, 2.0, 3.0])[feats]
        np.testing.assert_array_equal(row, expect)
    assert res.counts_per_feature() == {"x0": 24, "x1": 24, "x2": 24}
    sampled = synthesize_positives(X, 1.0, n_faulty_features=2, n_fault_sets=2, rng=0)
    assert len({tuple(f) for f in sampled.feature.tolist()}) == 2
    again = synthesize_positives(X, 1.0, n_faulty_features=2, n_fault_sets=2, rng=0)
    np.testing.assert_array_equal(sampled.feature, again.feature)


def test_feature_weights_sample_candidates_with_their_probability():
    X = np.arange(20000.0).reshape(-1, 2) * 10  # 10000 rows, nothing excluded
    res = synthesize_positives(X, 1.0, feature_weights=[1.0, 0.25], directions="up", rng=7)
    counts = res.counts_per_feature()
    assert counts["x0"] == 10000  # the most likely feature keeps every candidate
    # x1: Binomial(10000, 0.25): mean 2500, sd ~43; 6 sd bounds
    assert abs(counts["x1"] - 2500) < 6 * math.sqrt(10000 * 0.25 * 0.75)
    assert res.n_candidates == 10000 + counts["x1"]
    same = synthesize_positives(X, 1.0, feature_weights=[1.0, 0.25], directions="up", rng=7)
    np.testing.assert_array_equal(same.source, res.source)
    other = synthesize_positives(X, 1.0, feature_weights=[1.0, 0.25], directions="up", rng=8)
    assert not np.array_equal(other.source, res.source)
    never = synthesize_positives(X[:10], 1.0, feature_weights={"x0": 0.0, "x1": 2.0}, rng=1)
    assert never.counts_per_feature() == {"x0": 0, "x1": 20}


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("thresholds", "match"),
    [
        ([1.0, 0.0], r"thresholds.*'x1'.*0\.0"),
        ([1.0, -2.0], r"thresholds.*-2\.0"),
        ([np.nan, 1.0], r"thresholds.*nan"),
        ([1.0, np.inf], r"thresholds.*inf"),
        ([1.0, 1.0, 1.0], r"thresholds must have one value per feature \(2\), got 3"),
        ([1.0], r"thresholds must have one value per feature \(2\), got 1"),
        (["a", 1.0], r"thresholds must be numbers"),
        ({"x0": 1.0}, r"thresholds has no value for feature\(s\) \['x1'\]"),
        ({"x0": 1.0, "x1": 1.0, "zz": 2.0}, r"thresholds names unknown feature"),
    ],
)
def test_invalid_thresholds(thresholds, match):
    with pytest.raises(ValueError, match=match):
        synthesize_positives(np.zeros((3, 2)), thresholds)


@pytest.mark.parametrize(
    ("X", "match"),
    [
        (np.zeros(3), r"X_negative must be two-dimensional.*\(3,\)"),
        (np.zeros((2, 2, 2)), r"X_negative must be two-dimensional"),
        (np.zeros((0, 2)), r"X_negative is empty: shape \(0, 2\)"),
        (np.zeros((3, 0)), r"X_negative is empty: shape \(3, 0\)"),
        (np.array([[0.0, np.nan], [1.0, 2.0]]), r"X_negative must be finite: 1 NaN.*row 0, col"),
        (np.array([[0.0, 1.0], [np.inf, 2.0]]), r"1 infinite.*row 1, column 0"),
        (np.array([["a", "b"]]), r"X_negative must be numeric"),
        (None, r"X_negative is required"),
    ],
)
def test_invalid_data(X, match):
    with pytest.raises(ValueError, match=match):
        synthesize_positives(X, 1.0)


def test_invalid_options():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"directions.*'x1' has 'sideways'"):
        synthesize_positives(X, 1.0, directions=["up", "sideways"])
    with pytest.raises(ValueError, match=r"reference has 3 features but X_negative has 2"):
        synthesize_positives(X, 1.0, reference=np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"reference must be finite"):
        synthesize_positives(X, 1.0, reference=[[np.nan, 0.0]])
    with pytest.raises(ValueError, match=r"n_faulty_features must be at least 1 and at most 2"):
        synthesize_positives(X, 1.0, n_faulty_features=3)
    with pytest.raises(ValueError, match=r"n_faulty_features must be at least 1.*got 0"):
        synthesize_positives(X, 1.0, n_faulty_features=0)
    with pytest.raises(ValueError, match=r"chunk_size must be at least 1"):
        synthesize_positives(X, 1.0, chunk_size=0)
    with pytest.raises(ValueError, match=r"feature_weights must be non-negative.*-1\.0"):
        synthesize_positives(X, 1.0, feature_weights=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"feature_weights are all zero"):
        synthesize_positives(X, 1.0, feature_weights=[0.0, 0.0])
    with pytest.raises(ValueError, match=r"duplicate column names \['a'\]"):
        synthesize_positives(pd.DataFrame(np.zeros((2, 2)), columns=["a", "a"]), 1.0)
    with pytest.raises(ValueError, match=r"would test about .* candidates"):
        synthesize_positives(np.zeros((20000, 30)), 1.0, n_faulty_features=4)


# ----------------------------------------------------------------------------- evaluation
def _box_score(center, d):
    """A detector: largest deviation from the centre in units of the thresholds."""
    return lambda Z: np.max(np.abs(np.asarray(Z, dtype=float) - center) / d, axis=1)


def _brute_cost(neg, pos, feats, k, c_n, c_p, max_fpr):
    """min over thresholds (and +inf) of the feature-averaged cost, by direct counting."""
    best = math.inf
    present = [i for i in range(k) if np.any(feats == i)]
    for t in np.concatenate(([np.inf], np.unique(np.concatenate((neg, pos))))):
        fpr = np.mean(neg >= t)
        if fpr > max_fpr:
            continue
        tprs = [np.mean(pos[feats == i] >= t) for i in present]
        best = min(best, float(np.mean([c_n * (1 - tp) + c_p * fpr for tp in tprs])))
    return best


def test_evaluate_counts_match_sklearn_and_cost_matches_brute_force():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(150, 3))
    d = np.array([0.8, 0.5, 1.2])
    score = _box_score(np.zeros(3), np.array([1.0, 2.0, 0.5]))
    for c_n, c_p, max_fpr in [(1.0, 1.0, 1.0), (5.0, 1.0, 0.1), (1.0, 3.0, 0.5)]:
        ev = evaluate_without_positives(score, X, d, cost_fn=c_n, cost_fp=c_p, max_fpr=max_fpr)
        syn = ev.synthesis
        assert ev.overall.n_neg == 150 and ev.overall.n_pos == len(syn)
        np.testing.assert_array_equal(ev.negative_scores, score(X))
        np.testing.assert_allclose(ev.positive_scores, score(syn.positives))
        fpr, tpr, _ = roc_curve(
            np.r_[np.zeros(150), np.ones(len(syn))],
            np.r_[ev.negative_scores, ev.positive_scores],
            drop_intermediate=False,
        )
        c = ev.overall
        # every stored point of the compressed counts is a point of sklearn's curve
        got = set(zip(np.round(c.fpr, 12), np.round(c.tpr, 12), strict=True))
        assert got <= set(zip(np.round(fpr, 12), np.round(tpr, 12), strict=True))
        assert metrics.roc_auc(c) == pytest.approx(np.trapezoid(tpr, fpr), abs=1e-12)
        for i, name in enumerate(syn.feature_names):
            ci = ev.per_feature[name]
            mask = syn.feature == i
            assert ci.n_pos == mask.sum() and ci.n_neg == 150
            f_i, t_i, _ = roc_curve(
                np.r_[np.zeros(150), np.ones(mask.sum())],
                np.r_[ev.negative_scores, ev.positive_scores[mask]],
                drop_intermediate=False,
            )
            pts = set(zip(np.round(ci.fpr, 12), np.round(ci.tpr, 12), strict=True))
            assert pts <= set(zip(np.round(f_i, 12), np.round(t_i, 12), strict=True))
            own = _brute_cost(
                ev.negative_scores,
                ev.positive_scores[mask],
                np.zeros(mask.sum()),
                1,
                c_n,
                c_p,
                max_fpr,
            )
            assert ev.feature_min_cost[name] == pytest.approx(own, abs=1e-12)
        expect = _brute_cost(
            ev.negative_scores, ev.positive_scores, syn.feature, 3, c_n, c_p, max_fpr
        )
        assert ev.cost == pytest.approx(expect, abs=1e-12)
        assert ev.cost_fpr <= max_fpr
        assert np.mean(list(ev.feature_cost.values())) == pytest.approx(ev.cost, abs=1e-12)
        assert ev.mean_feature_min_cost <= ev.cost + 1e-12


def test_evaluate_ranks_a_good_detector_above_a_useless_one():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.uniform(0, 1, size=(200, 2)), columns=["s1", "s2"])
    d = {"s1": 0.3, "s2": 0.3}
    good = evaluate_without_positives(
        lambda Z: np.max(np.abs(Z.to_numpy() - 0.5), axis=1), X, d, rng=0
    )
    noise = np.random.default_rng(2)
    bad = evaluate_without_positives(lambda Z: noise.normal(size=len(Z)), X, d)
    assert set(good.per_feature) == {"s1", "s2"}
    assert good.cost < bad.cost
    # positives are at least 0.3 outside [0, 1] or ... the good detector nearly separates them
    assert good.cost < 0.3 and bad.cost > 0.6


def test_perfect_detector_has_zero_cost_and_never_alarming_costs_c_n():
    X = np.linspace(0, 1, 21)[:, None]
    ev = evaluate_without_positives(
        lambda Z: np.abs(np.asarray(Z)[:, 0] - 0.5), X, [2.0], cost_fn=4.0, cost_fp=1.0
    )
    assert ev.cost == 0.0 and ev.cost_tpr == 1.0 and ev.cost_fpr == 0.0
    # scoring everything alike: the best is never to alarm (cost C_n) or always (C_p)
    flat = evaluate_without_positives(lambda Z: np.zeros(len(Z)), X, [2.0], cost_fn=4.0)
    assert flat.cost == 1.0 and flat.cost_fpr == 1.0
    flat2 = evaluate_without_positives(lambda Z: np.zeros(len(Z)), X, [2.0], cost_fn=0.5)
    assert flat2.cost == 0.5 and math.isinf(flat2.cost_threshold)


def test_evaluate_errors():
    X = np.linspace(0, 1, 5)[:, None]
    with pytest.raises(ValueError, match=r"score_fn must return one score per row"):
        evaluate_without_positives(lambda Z: np.zeros(3), X, [1.0])
    with pytest.raises(ValueError, match=r"score_fn returned 5 NaN"):
        evaluate_without_positives(lambda Z: np.full(len(Z), np.nan), X, [1.0])
    with pytest.raises(ValueError, match=r"every one of the 10 candidate positives was excluded"):
        evaluate_without_positives(
            lambda Z: np.zeros(len(Z)), X, [1.0], reference=np.linspace(-3, 3, 61)[:, None]
        )
    with pytest.raises(ValueError, match=r"max_fpr must be in \(0, 1\], got 0"):
        evaluate_without_positives(lambda Z: np.zeros(len(Z)), X, [1.0], max_fpr=0)
    with pytest.raises(ValueError, match=r"cost_fn must be a non-negative finite number"):
        evaluate_without_positives(lambda Z: np.zeros(len(Z)), X, [1.0], cost_fn=-1)
    with pytest.raises(ValueError, match=r"score_fn must be callable"):
        evaluate_without_positives("nope", X, [1.0])


def test_log_marks_the_sets_as_synthesized(tracking_uri):
    import mlflow

    from mlflow_imbalance import tracking

    X = pd.DataFrame(np.random.default_rng(0).normal(size=(60, 2)), columns=["temp", "rpm/s"])
    ev = evaluate_without_positives(lambda Z: np.max(np.abs(Z.to_numpy()), axis=1), X, [0.5, 0.5])
    with mlflow.start_run() as run:
        logged = ev.log(log_figures=False, prevalences=[0.01])
    assert set(logged) == {"synthetic_all", "synthetic_temp", "synthetic_rpm_s"}
    run_id = run.info.run_id
    assert tracking.load_counts(run_id, "synthetic_all") == ev.overall
    assert tracking.load_counts(run_id, "synthetic_rpm_s") == ev.per_feature["rpm/s"]
    summary = tracking.load_summary(run_id, "synthetic_temp")
    assert summary["positives"] == "synthesized"
    assert summary["extra"]["synthetic_feature"] == "temp"
    metrics = mlflow.get_run(run_id).data.metrics
    assert metrics[tracking.metric_key("synthetic_all", "synthetic_cost")] == pytest.approx(ev.cost)


def test_cost_checks_shared_with_metrics_and_plain_numbers_in_messages():
    X = np.linspace(0, 1, 5)[:, None]
    flat = evaluate_without_positives(lambda Z: np.zeros(len(Z)), X, [2.0], cost_fp=0.0)
    assert flat.cost == 0.0  # a zero cost is allowed here (rates only), unlike in metrics
    with pytest.raises(
        ValueError, match=r"cost_fp must be a non-negative finite number, got -2\.0$"
    ):
        evaluate_without_positives(lambda Z: np.zeros(len(Z)), X, [1.0], cost_fp=np.float64(-2))
    with pytest.raises(ValueError, match=r"max_fpr must be in \(0, 1\], got 1\.5$"):
        evaluate_without_positives(lambda Z: np.zeros(len(Z)), X, [1.0], max_fpr=np.float64(1.5))
    with pytest.raises(ValueError, match=r"batch_size must be at least 1, got 0$"):
        evaluate_without_positives(lambda Z: np.zeros(len(Z)), X, [1.0], batch_size=np.int64(0))
    bad = X.copy()
    bad[2, 0] = np.nan
    with pytest.raises(ValueError, match=r"the first at row 2, column 0 \(nan\)$"):
        evaluate_without_positives(lambda Z: np.zeros(len(Z)), bad, [1.0])
