"""Property tests: every counts kernel equals scikit-learn's roc_curve and the uncompressed path.

``roc_curve(..., drop_intermediate=False)`` is an independent computation of every threshold
with its counts; the uncompressed path (``compress=False``: sort, merge, per-threshold sums) is
the simple one the compressed kernels must agree with after lossless compression. Data cover
ties within and across the classes, weights, float32 scores, integer scores (beyond 2**53
included) and blocks small enough that tie runs cross block boundaries.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_curve
from test_counts import _FORCE_KERNEL, _patch_kernels  # one definition of kernel forcing

from mlflow_imbalance import CountsAccumulator, RocCounts
from mlflow_imbalance.core import _kernels as kernels
from mlflow_imbalance.core._kernels import _keep_mask

_KINDS = ["float64", "rounded", "float32", "float32_ties", "int64", "int64_wide", "signed_zeros"]


def _scores(rng: np.random.Generator, y: np.ndarray, kind: str, scale: float) -> np.ndarray:
    n = y.size
    s = (rng.normal(size=n) + 1.5 * y) * scale
    if kind == "rounded":
        return np.round(s, 1)
    if kind == "float32":
        return s.astype(np.float32)
    if kind == "float32_ties":
        return (np.round(s * 4) / 4).astype(np.float32)
    if kind == "int64":
        return np.round(s * 3).astype(np.int64)
    if kind == "int64_wide":
        # Distinct integers beyond 2**53 that float64 still keeps apart (spacing 2**12 > ulp).
        return (2**62 + np.round(s * 5).astype(np.int64) * 2**12).astype(np.int64)
    if kind == "signed_zeros":
        return np.where(rng.random(n) < 0.3, 0.0, np.round(s, 2)) * np.where(y, 1.0, -1.0)
    return s


def _sklearn_counts(y, s, w=None):
    fpr, tpr, thr = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    n_pos = y.sum() if w is None else w[y].sum()
    n_neg = (~y).sum() if w is None else w[~y].sum()
    return thr[1:].astype(np.float64), tpr[1:] * n_pos, fpr[1:] * n_neg


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 600),
    prevalence=st.floats(0.01, 0.99),
    kind=st.sampled_from(_KINDS),
    kernel=st.sampled_from(sorted(_FORCE_KERNEL)),
    block=st.sampled_from([1, 2, 7, 1 << 16]),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
)
def test_unweighted_kernels_equal_sklearn(seed, n, prevalence, kind, kernel, block, scale):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    s = _scores(rng, y, kind, scale)
    with pytest.MonkeyPatch.context() as mp:
        for name, value in _FORCE_KERNEL[kernel].items():
            _patch_kernels(mp, name, value)
        _patch_kernels(mp, "_BLOCK", block)
        _patch_kernels(mp, "_SCAN_BLOCK", block)
        _patch_kernels(mp, "_GRID_CHUNK", 3 * block)
        c = RocCounts.from_scores(y, s)
        full = RocCounts.from_scores(y, s, compress=False)
    thr, tp, fp = _sklearn_counts(y, s)
    # The uncompressed counts are sklearn's curve, point for point.
    np.testing.assert_array_equal(full.thresholds, thr)
    np.testing.assert_array_equal(full.tp, np.rint(tp).astype(np.int64))
    np.testing.assert_array_equal(full.fp, np.rint(fp).astype(np.int64))
    # The compressed counts are exactly its lossless compression.
    keep = _keep_mask(np.rint(tp))
    np.testing.assert_array_equal(c.thresholds, thr[keep])
    np.testing.assert_array_equal(c.tp, np.rint(tp[keep]).astype(np.int64))
    np.testing.assert_array_equal(c.fp, np.rint(fp[keep]).astype(np.int64))
    assert c == full.compress()
    assert (c.n_pos, c.n_neg) == (int(y.sum()), int((~y).sum()))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 400),
    prevalence=st.floats(0.02, 0.98),
    kind=st.sampled_from(["float64", "rounded", "float32", "float32_ties", "int64"]),
    zero_weights=st.booleans(),
)
def test_weighted_counts_equal_sklearn(seed, n, prevalence, kind, zero_weights):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    s = _scores(rng, y, kind, 1.0)
    w = rng.exponential(size=n)
    if zero_weights:
        w[rng.random(n) < 0.2] = 0.0
        w[:2] = 1.0
    full = RocCounts.from_scores(y, s, sample_weight=w, compress=False)
    c = RocCounts.from_scores(y, s, sample_weight=w)
    if not zero_weights:  # sklearn drops zero-weight examples (and their thresholds)
        thr, tp, fp = _sklearn_counts(y, s, w)
        np.testing.assert_array_equal(full.thresholds, thr)
        np.testing.assert_allclose(full.tp, tp, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(full.fp, fp, rtol=1e-9, atol=1e-9)
    # Every stored point, checked by brute force: the weight scoring at or above it.
    at_or_above = s[None, :] >= full.thresholds[:, None]
    np.testing.assert_allclose(full.tp, (at_or_above * (w * y)).sum(axis=1), rtol=1e-9)
    np.testing.assert_allclose(full.fp, (at_or_above * (w * ~y)).sum(axis=1), rtol=1e-9)
    np.testing.assert_array_equal(np.unique(s).astype(np.float64)[::-1], full.thresholds)
    # Compressed weighted counts: exactly a subset of the uncompressed points.
    idx = np.searchsorted(-full.thresholds, -c.thresholds)
    np.testing.assert_array_equal(full.thresholds[idx], c.thresholds)
    np.testing.assert_allclose(c.tp, full.tp[idx], rtol=1e-12)
    np.testing.assert_allclose(c.fp, full.fp[idx], rtol=1e-12)


def test_float32_scores_stay_float32_and_exact():
    rng = np.random.default_rng(0)
    y = rng.random(20_000) < 0.3
    s = rng.normal(size=y.size).astype(np.float32) + y
    seen = []
    real = kernels._float_keys

    def spy(scores, *args):
        made = real(scores, *args)
        seen.append((scores.dtype, made[0].dtype))
        return made

    for kernel in ("grid", "split", "merged"):
        with pytest.MonkeyPatch.context() as mp:
            for name, value in _FORCE_KERNEL[kernel].items():
                _patch_kernels(mp, name, value)
            mp.setattr(kernels, "_float_keys", spy)
            c = RocCounts.from_scores(y, s)
        assert c == RocCounts.from_scores(y, s.astype(np.float64))
    # The merged kernel sorted 32-bit keys made from the float32 scores.
    assert seen == [(np.dtype(np.float32), np.dtype(np.int32))]


def test_integer_scores_beyond_2_53_stay_distinct():
    y = np.array([True, False, True, False, False, True])
    s = np.array([2**60 + 2**8, 2**60, 2**60 + 2**9, -(2**61), 2**60 + 2**8, 5], dtype=np.int64)
    c = RocCounts.from_scores(y, s, compress=False)
    thr, tp, fp = _sklearn_counts(y, s)
    np.testing.assert_array_equal(c.thresholds, thr)
    np.testing.assert_array_equal(c.tp, np.rint(tp))
    np.testing.assert_array_equal(c.fp, np.rint(fp))
    assert c.n_thresholds == np.unique(s).size
    assert RocCounts.from_scores(y, s) == c.compress()
    big = np.array([2**64 - 1, 2**63, 7, 2**63 + 4096], dtype=np.uint64)
    d = RocCounts.from_scores([True, False, True, False], big, compress=False)
    assert d.n_thresholds == 4


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_integer_scores_float64_would_merge_are_rejected(dtype):
    y = np.array([True, False, True, False])
    s = np.array([2**53, 2**53 + 1, 3, 4], dtype=dtype)  # 2**53 + 1 rounds to 2**53
    with pytest.raises(ValueError, match=r"y_score holds integer scores beyond 2\*\*53"):
        RocCounts.from_scores(y, s)
    with pytest.raises(ValueError, match=r"y_score holds integer scores beyond 2\*\*53"):
        RocCounts.from_scores(y, s, compress=False)
    acc = CountsAccumulator()
    with pytest.raises(ValueError, match=r"y_score holds integer scores beyond 2\*\*53"):
        acc.update(y, s)
    assert acc.n_seen == 0


def test_non_finite_float32_scores_name_the_argument():
    s = np.array([0.1, np.nan, 0.3, np.inf], dtype=np.float32)
    with pytest.raises(ValueError, match=r"y_score must be finite: found 1 NaN and 1 infinite"):
        RocCounts.from_scores([True, False, True, False], s)


def test_small_integer_and_bool_scores():
    rng = np.random.default_rng(2)
    y = rng.random(3000) < 0.4
    for s in (
        rng.integers(-5, 6, size=y.size).astype(np.int8),
        rng.integers(0, 2**31, size=y.size).astype(np.int32),
        rng.random(y.size) < 0.5,
    ):
        c = RocCounts.from_scores(y, s, compress=False)
        thr, tp, fp = _sklearn_counts(y, s.astype(np.float64))
        np.testing.assert_array_equal(c.thresholds, thr)
        np.testing.assert_array_equal(c.tp, np.rint(tp))
        np.testing.assert_array_equal(c.fp, np.rint(fp))
        assert RocCounts.from_scores(y, s) == c.compress()


def _bucket_scores(rng: np.random.Generator, y: np.ndarray, kind: str) -> np.ndarray:
    s = rng.normal(size=y.size) + 2.0 * y
    if kind.startswith("round"):  # tree-model-like ties: rounded to 1-4 decimals
        s = np.round(s, int(kind[-1]))
    elif kind == "int":
        s = np.round(s * 50).astype(np.int64)
    elif kind == "float32":
        s = s.astype(np.float32)
    elif kind == "float32_round":
        s = np.round(s.astype(np.float32), 2)
    elif kind == "leaves":  # few arbitrary (non-decimal) values, as sums of tree leaves
        s = (
            rng.normal(size=37)[rng.integers(0, 37, y.size)]
            + y * rng.normal(size=37)[rng.integers(0, 37, y.size)]
        )
    # Negatives tied with positive scores: they belong to that positive's threshold.
    pos = np.flatnonzero(y)
    neg = np.flatnonzero(~y)
    k = min(neg.size, 3 * pos.size)
    if k and pos.size:
        s[rng.choice(neg, k, replace=False)] = s[rng.choice(pos, k)]
    return s


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 3000),
    prevalence=st.sampled_from([1e-3, 0.01, 0.05, 0.3]),
    kind=st.sampled_from(
        [
            "float64",
            "float32",
            "round1",
            "round2",
            "round3",
            "round4",
            "int",
            "float32_round",
            "leaves",
        ]
    ),
    block=st.sampled_from([1, 5, 64, 1 << 14]),
    sample=st.sampled_from([1, 16, 1 << 16]),
    sparse=st.sampled_from([0.0, 24.0, 1e9]),  # 0: second pass for corners; 1e9: copy all
    cells_per_positive=st.sampled_from([1, 8]),  # 1: cells holding several positive scores
)
def test_bucket_kernel_equals_previous_kernels_and_sklearn(
    seed, n, prevalence, kind, block, sample, sparse, cells_per_positive
):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    s = _bucket_scores(rng, y, kind)
    with pytest.MonkeyPatch.context() as mp:
        for name, value in _FORCE_KERNEL["buckets"].items():
            _patch_kernels(mp, name, value)
        _patch_kernels(mp, "_BUCKET_BLOCK", block)
        _patch_kernels(mp, "_BUCKET_SAMPLE", sample)
        _patch_kernels(mp, "_BUCKET_SPARSE", sparse)
        _patch_kernels(mp, "_BUCKET_CELLS_PER_POSITIVE", cells_per_positive)
        _patch_kernels(mp, "_BUCKET_SCORES_PER_CELL", 1 << 40)
        c = RocCounts.from_scores(y, s)
    with pytest.MonkeyPatch.context() as mp:
        _patch_kernels(mp, "_BUCKETS", False)  # the kernels before the bucket kernel
        before = RocCounts.from_scores(y, s)
    assert c == before
    thr, tp, fp = _sklearn_counts(y, s)
    keep = _keep_mask(np.rint(tp))
    np.testing.assert_array_equal(c.thresholds, thr[keep])
    np.testing.assert_array_equal(c.tp, np.rint(tp[keep]).astype(np.int64))
    np.testing.assert_array_equal(c.fp, np.rint(fp[keep]).astype(np.int64))


def test_bucket_kernel_at_scale_tied_and_untied():
    # Large enough for the default settings: sampled spikes, lattice cells, sparse cells.
    rng = np.random.default_rng(11)
    n = 400_000
    y = rng.random(n) < 2e-3
    base = rng.normal(size=n) + 2.0 * y
    calls = []
    real = kernels._compressed_buckets

    def spy(*args):
        calls.append(1)
        return real(*args)

    for s in (
        base,
        base.astype(np.float32),
        np.round(base, 2),
        np.round(base, 3),
        np.round(base, 4),
        np.round(base * 1000).astype(np.int64),
        (rng.normal(size=500).astype(np.float32))[rng.integers(0, 500, n)] + y,
    ):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(kernels, "_compressed_buckets", spy)
            c = RocCounts.from_scores(y, s)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(kernels, "_BUCKETS", False)
            assert c == RocCounts.from_scores(y, s)
        assert c == RocCounts.from_scores(y, s, compress=False).compress()
    assert len(calls) == 7  # every kind took the bucket kernel
