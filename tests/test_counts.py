"""RocCounts: exactness against scikit-learn, input handling, compression, reduction, merging."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_curve

from mlflow_imbalance import CountsAccumulator, RocCounts, merge_counts
from mlflow_imbalance.core import _grid as grid_mod
from mlflow_imbalance.core import _kernels as counts_mod
from mlflow_imbalance.core.counts import MAX_STORED_THRESHOLDS
from mlflow_imbalance.core.format import MAX_ARCHIVE_BYTES


def _data(rng: np.random.Generator, n: int, prevalence: float, decimals: int | None = 1):
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    s = rng.normal(size=n) + 1.5 * y
    if decimals is not None:
        s = np.round(s, decimals)  # plenty of ties, also across the classes
    return y, s


def _sk_points(y, s, w=None):
    """sklearn's full curve as (thresholds, tp, fp), origin dropped, counts (or weights)."""
    fpr, tpr, thr = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    n_pos = np.sum(w[y]) if w is not None else np.sum(y)
    n_neg = np.sum(w[~y]) if w is not None else np.sum(~y)
    return thr[1:], tpr[1:] * n_pos, fpr[1:] * n_neg


@pytest.mark.parametrize("prevalence", [0.01, 0.3])
@pytest.mark.parametrize("decimals", [0, 1, None])
def test_uncompressed_equals_sklearn(prevalence, decimals):
    rng = np.random.default_rng(0)
    y, s = _data(rng, 3000, prevalence, decimals)
    c = RocCounts.from_scores(y, s, compress=False)
    thr, tp, fp = _sk_points(y, s)
    np.testing.assert_array_equal(c.thresholds, thr)
    np.testing.assert_array_equal(c.tp, np.rint(tp).astype(np.int64))
    np.testing.assert_array_equal(c.fp, np.rint(fp).astype(np.int64))
    assert c.tp.dtype == np.int64 and not c.weighted
    assert (c.n_pos, c.n_neg) == (int(y.sum()), int((~y).sum()))
    assert c.prevalence == pytest.approx(y.mean())


@pytest.mark.parametrize("prevalence", [0.005, 0.4])
def test_weighted_equals_sklearn(prevalence):
    rng = np.random.default_rng(1)
    y, s = _data(rng, 5000, prevalence, 1)
    w = rng.exponential(size=y.size)
    c = RocCounts.from_scores(y, s, sample_weight=w, compress=False)
    thr, tp, fp = _sk_points(y, s, w)
    np.testing.assert_array_equal(c.thresholds, thr)
    np.testing.assert_allclose(c.tp, tp, rtol=1e-10)
    np.testing.assert_allclose(c.fp, fp, rtol=1e-10)
    assert c.weighted and c.tp.dtype == np.float64
    # The compressed weighted counts are exactly a subset of the uncompressed points.
    k = RocCounts.from_scores(y, s, sample_weight=w)
    idx = np.searchsorted(-c.thresholds, -k.thresholds)
    np.testing.assert_array_equal(c.thresholds[idx], k.thresholds)
    np.testing.assert_allclose(k.tp, c.tp[idx], rtol=1e-12)
    np.testing.assert_allclose(k.fp, c.fp[idx], rtol=1e-12)


def test_grid_and_sorted_kernels_agree_with_sklearn_at_scale():
    # Large enough (>= 4096 negatives, few positives) for the sort-free grid kernel; scores
    # clustered near 1 so many grid cells are crowded and the exact fallbacks run.
    rng = np.random.default_rng(2)
    n = 60_000
    y = rng.random(n) < 0.002
    s = np.where(rng.random(n) < 0.5, 1 - 10.0 ** -rng.integers(1, 12, n), rng.normal(size=n))
    s = np.where(y & (rng.random(n) < 0.3), np.round(s, 2), s)
    s[~y][:50] = np.round(s[~y][:50], 2)
    for compress in (True, False):
        c = RocCounts.from_scores(y, s, compress=compress)
        thr, tp, fp = _sk_points(y, s)
        idx = np.searchsorted(-thr, -c.thresholds)
        np.testing.assert_array_equal(thr[idx], c.thresholds)
        np.testing.assert_array_equal(np.rint(tp[idx]), c.tp)
        np.testing.assert_array_equal(np.rint(fp[idx]), c.fp)


def test_grid_slots_exact_on_extreme_values():
    rng = np.random.default_rng(3)
    for up in (
        np.unique(rng.normal(size=40) * 1e300),  # float64 grid (outside float32 range)
        np.array([5e-324, 1e-323]),  # subnormal span
        np.array([0.5]),
        np.unique(np.round(rng.random(300), 3)),
    ):
        x = np.concatenate([rng.normal(size=5000) * 1e300, rng.random(5000), up, [0.0, 1e308]])
        left = np.searchsorted(up, x, side="left")
        expected = 2 * left + (np.append(up, np.inf)[left] == x)
        np.testing.assert_array_equal(grid_mod._grid_slots(up, x), expected)


@pytest.mark.parametrize(
    ("labels", "pos_label"),
    [
        ([False, True, True, False, True], None),
        ([0, 1, 1, 0, 1], None),
        ([-1, 1, 1, -1, 1], None),
        (["spam", "ham", "ham", "spam", "ham"], "ham"),
        ([0.0, 1.0, 1.0, 0.0, 1.0], None),
        ([True, False, False, True, False], False),
        ([2, 7, 7, 2, 7], 7),
    ],
)
@pytest.mark.parametrize("container", [list, np.asarray, pd.Series])
def test_label_kinds_and_containers(labels, pos_label, container):
    s = [0.1, 0.8, 0.4, 0.4, 0.9]
    c = RocCounts.from_scores(container(labels), container(s), pos_label=pos_label)
    ref = RocCounts.from_scores(np.array([0, 1, 1, 0, 1]), np.array(s))
    assert c == ref
    np.testing.assert_array_equal(c.thresholds, [0.9, 0.8, 0.4, 0.1])
    np.testing.assert_array_equal(c.tp, [1, 2, 3, 3])
    np.testing.assert_array_equal(c.fp, [0, 0, 1, 2])


def test_pos_label_required_for_strings():
    with pytest.raises(ValueError, match=r"pass pos_label.*'ham'.*'spam'|pass pos_label"):
        RocCounts.from_scores(["spam", "ham", "ham"], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="pos_label='eggs' is not one of the labels"):
        RocCounts.from_scores(["spam", "ham"], [0.1, 0.2], pos_label="eggs")


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"y_score": [0.1, np.nan, 0.3]}, r"y_score must be finite: found 1 NaN and 0 infinite"),
        ({"y_score": [0.1, np.inf, -np.inf]}, r"y_score must be finite: found 0 NaN and 2 inf"),
        ({"y_true": [0, 1, 2]}, r"y_true must be binary: found 3 distinct labels"),
        ({"y_true": [1, 1, 1]}, r"y_true holds only one class \(3 labels, no negative"),
        ({"y_true": [0, 0, 0]}, r"y_true holds only one class \(3 labels, no positive"),
        ({"y_true": [], "y_score": []}, r"y_true is empty"),
        ({"y_true": [0, 1]}, r"length mismatch: y_true has 2, y_score has 3"),
        ({"sample_weight": [1.0, -2.0, 1.0]}, r"sample_weight must be non-negative: 1 negative"),
        ({"sample_weight": [1.0, np.nan, 1.0]}, r"sample_weight must be finite: 1 NaN"),
        ({"sample_weight": [1.0, 1.0]}, r"sample_weight has 2 entries but y_true has 3"),
        ({"sample_weight": [0.0, 1.0, 1.0]}, r"total weight of zero"),
        ({"y_score": ["a", "b", "c"]}, r"y_score must be numeric"),
    ],
)
def test_bad_input_raises_naming_argument(kwargs, pattern):
    args = {"y_true": [0, 1, 1], "y_score": [0.1, 0.2, 0.3], **kwargs}
    with pytest.raises(ValueError, match=pattern):
        RocCounts.from_scores(args.pop("y_true"), args.pop("y_score"), **args)


def _points(c: RocCounts) -> set[tuple[float, float, float]]:
    return set(zip(c.thresholds.tolist(), c.tp.tolist(), c.fp.tolist(), strict=True))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 400),
    st.floats(0.01, 0.9),
    st.sampled_from([0, 1, 2, None]),
    st.booleans(),
)
def test_compression_lossless_property(seed, n, prevalence, decimals, weighted):
    rng = np.random.default_rng(seed)
    y, s = _data(rng, n, prevalence, decimals)
    w = rng.exponential(size=n) * (rng.random(n) < 0.9) if weighted else None
    if w is not None and (w[y].sum() == 0 or w[~y].sum() == 0):
        w[:2] = 1.0
    full = RocCounts.from_scores(y, s, sample_weight=w, compress=False)
    comp = RocCounts.from_scores(y, s, sample_weight=w)
    assert comp.compressed and not full.compressed
    # Kept points are exactly points of the full curve ...
    idx = np.searchsorted(-full.thresholds, -comp.thresholds)
    np.testing.assert_array_equal(full.thresholds[idx], comp.thresholds)
    np.testing.assert_allclose(full.tp[idx], comp.tp, rtol=1e-12)
    np.testing.assert_allclose(full.fp[idx], comp.fp, rtol=1e-12)
    # ... every threshold where a positive scores is kept, and the final point ...
    has_pos = np.diff(full.tp, prepend=0) > 0
    assert set(full.thresholds[has_pos].tolist()) <= set(comp.thresholds.tolist())
    assert comp.thresholds[-1] == full.thresholds[-1]
    # ... and every dropped point lies on a horizontal segment ending at a kept corner: same
    # tp as the next kept (lower) threshold, fp no larger.
    rep = idx[np.searchsorted(idx, np.arange(full.n_thresholds))]
    np.testing.assert_allclose(full.tp, full.tp[rep], rtol=1e-12)
    assert np.all(full.fp <= full.fp[rep] * (1 + 1e-12))
    n_pos_thresholds = int(has_pos.sum())
    assert comp.n_thresholds <= 2 * n_pos_thresholds + 1
    assert comp.compress() == comp
    again = full.compress()
    np.testing.assert_array_equal(again.thresholds, comp.thresholds)
    if weighted:  # float sums in a different order: equal to rounding
        np.testing.assert_allclose(again.tp, comp.tp, rtol=1e-12)
        np.testing.assert_allclose(again.fp, comp.fp, rtol=1e-12)
    else:
        assert again == comp


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(20, 600), st.integers(2, 30), st.booleans())
def test_reduce_error_is_a_true_bound(seed, n, max_points, from_full):
    rng = np.random.default_rng(seed)
    y, s = _data(rng, n, 0.3, None)
    full = RocCounts.from_scores(y, s, compress=False)
    base = full if from_full else full.compress()
    red = base.reduce(max_points)
    assert red.n_thresholds <= max_points
    if red is base:
        assert red.is_exact
        return
    assert red.compressed and red.thresholds[-1] == base.thresholds[-1]
    # Each threshold of the curve reduced is represented by the first kept threshold at or
    # below it; its ROC point moves by at most the recorded errors.
    kept = np.searchsorted(-base.thresholds, -red.thresholds)
    np.testing.assert_array_equal(base.thresholds[kept], red.thresholds)
    rep = np.searchsorted(-red.thresholds, -base.thresholds, side="left")
    d_tpr = red.tpr[rep] - base.tpr
    d_fpr = red.fpr[rep] - base.fpr
    assert np.all(d_tpr >= 0) and np.all(d_fpr >= 0)
    assert d_tpr.max() <= red.max_tpr_error + 1e-15
    assert d_fpr.max() <= red.max_fpr_error + 1e-15
    assert max(d_tpr.max(), d_fpr.max()) > 0  # something was really dropped
    assert red.max_tpr_error <= 2 / (max_points - 1) + 1e-12
    assert red.max_fpr_error <= 2 / (max_points - 1) + 1e-12


def test_reduce_rejects_bad_max_points():
    c = RocCounts.from_scores([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4])
    for bad in (1, 0, 2.5):
        with pytest.raises(ValueError, match=f"max_points must be an integer >= 2, got {bad!r}"):
            c.reduce(bad)


def test_bounded_is_lossless_up_to_the_bound_then_reduces():
    rng = np.random.default_rng(11)
    y, s = _data(rng, 5000, 0.5, None)
    c = RocCounts.from_scores(y, s)
    assert c.bounded() is c and c.bounded(c.n_thresholds) is c
    small = c.bounded(100)
    assert small.n_thresholds <= 100 and not small.is_exact
    assert small == c.reduce(100)
    assert 0 < small.max_tpr_error < 2 / 99 and 0 < small.max_fpr_error < 2 / 99
    for bad in (1, 0, 2.5):
        with pytest.raises(
            ValueError, match=f"max_thresholds must be an integer >= 2, got {bad!r}"
        ):
            c.bounded(bad)
    # What the default bound lets through always loads: 24 bytes a threshold, uncompressed.
    assert MAX_STORED_THRESHOLDS * 3 * 8 + 4096 < MAX_ARCHIVE_BYTES


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(4, 300),
    st.integers(1, 6),
    st.booleans(),
    st.sampled_from([0, 1, None]),
)
def test_merge_and_accumulator_equal_concatenation(seed, n, n_parts, weighted, decimals):
    rng = np.random.default_rng(seed)
    y, s = _data(rng, n, 0.3, decimals)
    w = rng.exponential(size=n) if weighted else None
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(n_parts, n - 1) - 1, replace=False))
    pieces = np.split(np.arange(n), cuts)
    expected = RocCounts.from_scores(y, s, sample_weight=w)
    expected_full = RocCounts.from_scores(y, s, sample_weight=w, compress=False)

    def close(a: RocCounts, b: RocCounts) -> None:
        np.testing.assert_array_equal(a.thresholds, b.thresholds)
        np.testing.assert_allclose(a.tp, b.tp, rtol=1e-12)
        np.testing.assert_allclose(a.fp, b.fp, rtol=1e-12)
        assert a.n_pos == pytest.approx(b.n_pos) and a.n_neg == pytest.approx(b.n_neg)

    acc = CountsAccumulator()
    for idx in pieces:  # batches may hold one class only
        acc.update(y[idx], s[idx], None if w is None else w[idx])
    close(acc.result(), expected)
    close(acc.result(compress=False), expected_full)
    two = [i for i in pieces if y[i].any() and (~y[i]).any()]
    if len(two) == len(pieces):
        parts = [
            RocCounts.from_scores(
                y[i], s[i], sample_weight=None if w is None else w[i], compress=False
            )
            for i in pieces
        ]
        close(merge_counts(parts), expected)
        close(parts[0].merge(*parts[1:], compress=False), expected_full)


def test_merging_compressed_counts_is_refused():
    a = RocCounts.from_scores([0, 1, 0], [0.1, 0.5, 0.3])
    b = RocCounts.from_scores([0, 1, 0], [0.2, 0.4, 0.6], compress=False)
    with pytest.raises(ValueError, match=r"counts\[0\] is compressed and cannot be merged"):
        merge_counts([a, b])
    with pytest.raises(ValueError, match="counts is empty"):
        merge_counts([])


def test_accumulator_errors():
    acc = CountsAccumulator()
    with pytest.raises(ValueError, match="no data"):
        acc.result()
    acc.update([1, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="no negative example"):
        acc.result()
    with pytest.raises(ValueError, match="sample_weight must be given for every batch"):
        acc.update([0, 1], [0.2, 0.3], sample_weight=[1.0, 1.0])
    str_acc = CountsAccumulator(pos_label="b")
    str_acc.update(["a", "b"], [0.1, 0.9])
    str_acc.update(["a"], [0.95])
    np.testing.assert_array_equal(str_acc.result().fp, [1, 1, 2])


def test_constructor_validates():
    with pytest.raises(ValueError, match="strictly descending"):
        RocCounts([0.1, 0.2], [1, 2], [0, 1], 2, 1)
    with pytest.raises(ValueError, match=r"fp must be cumulative"):
        RocCounts([0.2, 0.1], [1, 2], [1, 0], 2, 1)
    with pytest.raises(ValueError, match=r"tp\[-1\]=3 exceeds n_pos=2"):
        RocCounts([0.2, 0.1], [1, 3], [0, 1], 2, 1)


#: Settings that send every input to one construction kernel (small data included).
def _patch_kernels(mp: pytest.MonkeyPatch, name: str, value) -> None:
    """Set a kernel setting in every kernel module that has it (``_BLOCK`` is in both)."""
    mods = [m for m in (counts_mod, grid_mod) if hasattr(m, name)]
    assert mods, f"no kernel module has {name}"
    for m in mods:
        mp.setattr(m, name, value)


_FORCE_KERNEL = {
    "buckets": {  # the bucket kernel (few distinct positive scores, any ties)
        "_FEW_POSITIVES": 1 << 62,
        "_BUCKET_MIN_NEGATIVES": 0,
        "_BUCKET_MAX_POSITIVES": 1 << 62,
        "_SPLIT_MAX_POSITIVE_FRACTION": float(1 << 62),
    },
    "grid": {
        "_BUCKETS": False,
        "_FEW_POSITIVES": 1 << 62,
        "_GRID_MIN_NEGATIVES": 0,
        "_GRID_MAX_POSITIVES": 1 << 62,
        "_GRID_ONLY_UNTIED_FLOAT64": False,
        "_SPLIT_MAX_POSITIVE_FRACTION": float(1 << 62),
    },
    "split": {  # sorting all the scores
        "_BUCKETS": False,
        "_FEW_POSITIVES": 0,
        "_TIED_FRACTION": -1.0,
        "_GRID_MAX_POSITIVES": -1,
        "_SPLIT_MAX_POSITIVE_FRACTION": float(1 << 62),
        "_SORT_ALL_MAX_POSITIVE_FRACTION": float(1 << 62),
    },
    "split_negatives": {  # sorting a copy of the negatives
        "_BUCKETS": False,
        "_FEW_POSITIVES": 0,
        "_TIED_FRACTION": -1.0,
        "_GRID_MAX_POSITIVES": -1,
        "_SPLIT_MAX_POSITIVE_FRACTION": float(1 << 62),
        "_SORT_ALL_MAX_POSITIVE_FRACTION": -1.0,
    },
    "merged": {
        "_BUCKETS": False,
        "_FEW_POSITIVES": 0,
        "_TIED_FRACTION": -1.0,
        "_GRID_MAX_POSITIVES": -1,
        "_SPLIT_MAX_POSITIVE_FRACTION": -1.0,
    },
}


def _kernel_cases(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    n = 4000
    y = rng.random(n) < 0.45
    normal = rng.normal(size=n) + y
    heavy = np.where(rng.random(n) < 0.01, rng.normal(size=n) * 1e300, normal)
    clustered = np.where(rng.random(n) < 0.5, 1 - 10.0 ** -rng.integers(1, 15, n), normal)
    tiny = rng.integers(0, 5, n) * 5e-324  # subnormal values, span below any grid step
    near_zero = np.where(rng.random(n) < 0.05, 1e-300, normal * 10)  # merged keys collide
    return [
        (y, normal),
        (y, np.round(normal, 1)),  # ties within and across the classes
        (y, heavy),
        (y, clustered),
        (y, tiny),
        (y, near_zero),
        (y, np.where(rng.random(n) < 0.3, 0.0, normal) * np.where(y, 1.0, -1.0)),  # +-0
        (y, np.full(n, 0.25)),  # one value
        (y, np.sort(normal)),  # already sorted input
        (np.sort(y), normal),
        (y, np.where(y, 1e308, -1e308)),  # span overflows float64
        (y, normal.astype(np.float32).astype(np.float64)),  # float32 values: float32 kernel
        (y, normal.astype(np.float32)),  # float32 scores stay float32
        (y, (np.round(normal * 8) / 8).astype(np.float32)),  # float32 with ties
        (y, np.round(normal, 1).repeat(1)[np.argsort(rng.random(n))]),  # long tie runs
    ]


@pytest.mark.parametrize("kernel", ["buckets", "grid", "split", "split_negatives", "merged", None])
@pytest.mark.parametrize("block", [3, 64, None])
def test_each_kernel_equals_sklearn(kernel, block):
    # Tiny blocks make every blockwise loop cross block boundaries inside tie runs.
    rng = np.random.default_rng(5)
    for y, s in _kernel_cases(rng):
        with pytest.MonkeyPatch.context() as mp:
            for name, value in _FORCE_KERNEL.get(kernel, {}).items():
                _patch_kernels(mp, name, value)
            if block is not None:
                _patch_kernels(mp, "_BLOCK", block)
                _patch_kernels(mp, "_SCAN_BLOCK", block)
                _patch_kernels(mp, "_GRID_CHUNK", 2 * block)
                _patch_kernels(mp, "_BUCKET_BLOCK", block)
            c = RocCounts.from_scores(y, s)
        thr, tp, fp = _sk_points(y, s)
        idx = np.searchsorted(-thr, -c.thresholds)
        np.testing.assert_array_equal(thr[idx], c.thresholds)
        np.testing.assert_array_equal(np.rint(tp[idx]), c.tp)
        np.testing.assert_array_equal(np.rint(fp[idx]), c.fp)
        assert c == RocCounts.from_scores(y, s, compress=False).compress()


def test_float_keys_sort_like_scores_then_labels():
    rng = np.random.default_rng(6)
    for y, s in _kernel_cases(rng):
        if s.dtype == np.float64:
            s = counts_mod._float32_if_exact(s)
        made = counts_mod._float_keys(s, y, float(s.min()), float(s.max()))
        if made is None:  # only when a non-zero score is too close to zero for the shift
            small = np.abs(s[s != 0]).min()
            assert small < 2.0**-60
            continue
        z, c = made
        order = np.lexsort((y, s))  # by score, then negatives first
        np.testing.assert_array_equal(np.argsort(z, kind="stable"), order)
        back = np.empty(z.size)
        counts_mod._decode_keys(z, c, s.dtype.type, back)
        np.testing.assert_array_equal(back, s.astype(np.float64) + 0.0)  # -0.0 decodes as 0.0
        assert np.array_equal(z & 1, y)


def test_merged_kernel_at_scale_equals_sklearn():
    rng = np.random.default_rng(6)
    n = 1 << 17  # several scan blocks
    for decimals in (None, 3):
        y, s = _data(rng, n, 0.4, decimals)
        for scores in (s, s.astype(np.float32)):
            c = RocCounts.from_scores(y, scores)
            thr, tp, fp = _sk_points(y, scores)
            idx = np.searchsorted(-thr, -c.thresholds)
            np.testing.assert_array_equal(thr[idx], c.thresholds)
            np.testing.assert_array_equal(np.rint(tp[idx]), c.tp)
            np.testing.assert_array_equal(np.rint(fp[idx]), c.fp)
            assert c == RocCounts.from_scores(y, scores, compress=False).compress()


def test_float32_if_exact():
    rng = np.random.default_rng(7)
    x32 = rng.normal(size=10_000).astype(np.float32).astype(np.float64)
    assert counts_mod._float32_if_exact(x32).dtype == np.float32
    for bad in (
        rng.normal(size=10_000),  # float64 values: rejected by the probe
        np.where(np.arange(10_000) == 4321, 0.1, x32),  # one value off the probe's stride
        np.where(np.arange(10_000) == 4321, 1e300, x32),  # overflows float32
        np.where(np.arange(10_000) == 4321, 1e-46, x32),  # underflows float32
    ):
        out = counts_mod._float32_if_exact(bad)
        assert out is bad and out.dtype == np.float64


@pytest.mark.parametrize(
    ("batches", "pos_label", "pattern"),
    [
        # -1 and 0 would both count as negatives: from_scores rejects the concatenation
        ([[-1, -1], [0, 1]], None, r"y_true must be binary across batches.*\[0, 1\].*\[-1\]"),
        ([[0, 1], [-1, 1]], None, r"y_true must be binary across batches.*\[-1, 1\].*\[0, 1\]"),
        ([[-1, -1], [0, 0]], None, r"y_true: .*\[0\].*\[-1\].*ambiguous: pass pos_label"),
        ([["a", "a"], ["b", "c"]], "b", r"y_true must be binary across batches.*'c'"),
        ([["a"], ["b"]], "c", r"pos_label='c' is not one of the labels in y_true.*'a', 'b'"),
        ([np.array([-1, -1], np.int64), np.array([0, 0], np.int64)], None, r"\[0\].*\[-1\]"),
    ],
)
def test_accumulator_checks_labels_across_batches(batches, pos_label, pattern):
    scores = [[0.1, 0.2], [0.3, 0.4]]
    concatenated = np.concatenate([np.asarray(b) for b in batches])
    with pytest.raises(ValueError):  # the same data in one piece is refused too
        RocCounts.from_scores(
            concatenated, np.concatenate(scores)[: concatenated.size], pos_label=pos_label
        )
    acc = CountsAccumulator(pos_label=pos_label)
    acc.update(batches[0], scores[0][: len(batches[0])])
    before = (acc.n_seen, list(acc._labels))
    with pytest.raises(ValueError, match=pattern) as err:
        acc.update(batches[1], scores[1][: len(batches[1])])
    assert "np.int64" not in str(err.value) and "np.str_" not in str(err.value)
    assert (acc.n_seen, acc._labels) == before  # the rejected batch changed nothing


@pytest.mark.parametrize(
    ("batches", "pos_label"),
    [
        ([[-1, -1], [1], [-1, 1]], None),
        ([[1, 1], [0]], None),
        ([[True], [0, 1]], None),  # True == 1: one label set {0, 1}
        ([[0.0], [1, 0]], None),
        (["b", "a", "a"], "b"),
        ([["x"], ["x"]], "y"),  # pos_label never seen yet: allowed until a second label comes
    ],
)
def test_accumulator_accepts_what_concatenation_accepts(batches, pos_label):
    acc = CountsAccumulator(pos_label=pos_label)
    rng = np.random.default_rng(1)
    all_s = []
    for b in batches:
        b = [b] if isinstance(b, str) else b
        s = rng.random(len(b))
        all_s.append(s)
        acc.update(b, s)
    labels = np.concatenate([np.asarray([b] if isinstance(b, str) else b) for b in batches])
    is_pos = labels == (1 if pos_label is None else pos_label)
    if is_pos.all() or not is_pos.any():
        with pytest.raises(ValueError, match=r"no (positive|negative) example"):
            acc.result()
    else:
        assert acc.result() == RocCounts.from_scores(is_pos, np.concatenate(all_s))


def test_error_messages_show_numpy_scalars_as_plain_numbers():
    with pytest.raises(ValueError, match=r"n_pos and n_neg must be integers, got 2\.5 and 1\b"):
        RocCounts([0.5], [1], [1], np.float64(2.5), np.int64(1))
    with pytest.raises(ValueError, match=r"max_points must be an integer >= 2, got 2\.5$"):
        RocCounts.from_scores([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4]).reduce(np.float64(2.5))
    with pytest.raises(ValueError, match=r"pos_label=5 is not one of the labels in y_true"):
        RocCounts.from_scores([0, 1], [0.1, 0.2], pos_label=np.int64(5))
