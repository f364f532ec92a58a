"""Limits (issue 31): crafted counts files in bounded memory, capped sizes, bad inputs named.

Every limit tested here is listed in docs/format.md, "Limits".
"""

from __future__ import annotations

import io
import math
import tracemalloc
import zipfile

import numpy as np
import pytest

import mlflow_imbalance as mi
from mlflow_imbalance import metrics, uncertainty
from mlflow_imbalance.core import curves
from mlflow_imbalance.core.format import MAX_ARCHIVE_BYTES, MAX_THRESHOLDS_RATIO, encode
from mlflow_imbalance.core.validation import (
    MAX_GRID_POINTS,
    MAX_POINTS_PER_SEGMENT,
    MAX_PREVALENCES,
)

MiB = 1 << 20


def _counts() -> mi.RocCounts:
    return mi.RocCounts.from_scores([0, 1, 1, 0, 1, 0], [0.1, 0.8, 0.4, 0.35, 0.9, 0.2])


def _npy_header(dtype: str, shape: tuple[int, ...]) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()


def _crafted(vectors: dict[str, int]) -> bytes:
    """A counts archive whose vectors named in ``vectors`` declare that many zero-filled values.

    Consistent: each member's zip entry declares exactly header + values x 8 bytes, and the
    zero bytes are really there (deflated ~1000:1), so only the budget checks can refuse it.
    """
    honest = np.load(io.BytesIO(encode(_counts())), allow_pickle=False)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for key in honest.files:
            if key not in vectors:
                b = io.BytesIO()
                np.lib.format.write_array(b, honest[key], allow_pickle=False)
                zf.writestr(f"{key}.npy", b.getvalue())
                continue
            dtype = "<f8" if key == "thresholds" else honest[key].dtype.str
            n = vectors[key]
            with zf.open(f"{key}.npy", "w", force_zip64=True) as fh:
                fh.write(_npy_header(dtype, (n,)))
                zeros = bytes(MiB)
                left = n * 8
                while left:
                    k = min(left, MiB)
                    fh.write(zeros[:k])
                    left -= k
    return out.getvalue()


def _peak_mib(fn) -> tuple[BaseException | None, float]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    err = None
    try:
        fn()
    except BaseException as exc:
        err = exc
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return err, peak / MiB


@pytest.fixture(scope="module")
def bomb_1000mib() -> bytes:
    """The issue's file: a consistent zero-filled 1000 MiB ``thresholds`` (zip64), ~1 MB."""
    data = _crafted({"thresholds": 1000 * MiB // 8})
    assert len(data) < 2 * MiB
    return data


def test_zero_filled_thresholds_of_1000_mib_is_refused_before_inflating(bomb_1000mib, tmp_path):
    path = tmp_path / "roc_counts.npz"
    path.write_bytes(bomb_1000mib)
    err, peak = _peak_mib(lambda: mi.RocCounts.load(path))
    assert isinstance(err, ValueError), err
    assert "thresholds" in str(err) and "same length" in str(err)
    assert peak < 100, f"peak {peak:.0f} MiB"


def test_consistent_zero_filled_vectors_refused_by_the_ratio_bound():
    k = 40 * MiB // 8  # three 40 MiB members of the same declared length
    data = _crafted({"thresholds": k, "tp": k, "fp": k})
    err, peak = _peak_mib(lambda: mi.RocCounts.from_bytes(data))
    assert isinstance(err, ValueError), err
    assert "thresholds" in str(err) and f"{MAX_THRESHOLDS_RATIO}:1" in str(err)
    assert "refused without inflating" in str(err)
    assert peak < 20, f"peak {peak:.0f} MiB"


def test_honest_large_counts_still_load():
    rng = np.random.default_rng(0)
    n = 300_000
    y = rng.random(n) < 0.3
    s = np.round(rng.normal(y * 1.0, 1.0), 5)  # ties, many thresholds (MiB-sized members)
    c = mi.RocCounts.from_scores(y, s, compress=False)
    back = mi.RocCounts.from_bytes(encode(c))
    assert np.array_equal(back.thresholds, c.thresholds) and np.array_equal(back.fp, c.fp)
    assert not back.thresholds.flags.writeable
    assert MAX_ARCHIVE_BYTES == 1 << 30


# ------------------------------------------------------------------------------------ sizes
@pytest.mark.parametrize(
    ("call", "name", "limit"),
    [
        (lambda: curves.cost_curve(_counts(), num=10**9), "num", MAX_GRID_POINTS),
        (lambda: curves.default_prevalence_grid(num=10**10), "num", MAX_GRID_POINTS),
        (
            lambda: metrics.pr_curve(_counts(), 0.1, points_per_segment=10**8),
            "points_per_segment",
            MAX_POINTS_PER_SEGMENT,
        ),
        (
            lambda: curves.broc_curve(_counts(), 0.1, points_per_segment=10**8),
            "points_per_segment",
            MAX_POINTS_PER_SEGMENT,
        ),
        (
            lambda: metrics.average_precision(_counts(), np.full(MAX_PREVALENCES + 1, 0.1)),
            "prevalence",
            MAX_PREVALENCES,
        ),
        (
            lambda: metrics.precision(_counts(), [0.1] * (MAX_PREVALENCES + 1)),
            "prevalence",
            MAX_PREVALENCES,
        ),
    ],
)
def test_sizes_are_capped_with_the_argument_and_the_limit(call, name, limit):
    err, peak = _peak_mib(call)
    assert isinstance(err, ValueError), err
    assert name in str(err) and str(limit) in str(err)
    assert peak < 10


def test_sizes_at_the_limit_still_work():
    assert curves.default_prevalence_grid(num=MAX_GRID_POINTS).size == MAX_GRID_POINTS
    assert metrics.average_precision(_counts(), np.full(MAX_PREVALENCES, 0.1)).shape == (
        MAX_PREVALENCES,
    )


# ------------------------------------------------------------------------------- bad inputs
def _c() -> mi.RocCounts:
    return _counts()


BAD = [
    # prevalence strings in the metric functions and choose_threshold
    ("precision", lambda: metrics.precision(_c(), "abc"), "prevalence"),
    ("average_precision", lambda: metrics.average_precision(_c(), "0.1"), "prevalence"),
    ("pr_auc", lambda: metrics.pr_auc(_c(), ["0.1", "x"]), "prevalence"),
    ("max_f1", lambda: metrics.max_f1(_c(), b"0.1"), "prevalence"),
    ("f1", lambda: metrics.f1(_c(), True), "prevalence"),
    ("expected_cost eta", lambda: metrics.expected_cost(_c(), "0.1"), "prevalence"),
    (
        "choose_threshold eta",
        lambda: uncertainty.choose_threshold(_c(), "abc", min_recall=0.5),
        "prevalence",
    ),
    (
        "choose_threshold list eta",
        lambda: uncertainty.choose_threshold(_c(), [0.1, 0.2], min_recall=0.5),
        "prevalence",
    ),
    (
        "choose_threshold 1-list eta",
        lambda: uncertainty.choose_threshold(_c(), [0.1], min_recall=0.5),
        "prevalence",
    ),
    # boolean costs
    ("expected_cost", lambda: metrics.expected_cost(_c(), 0.1, cost_fp=True), "cost_fp"),
    (
        "optimal_operating_point",
        lambda: metrics.optimal_operating_point(_c(), 0.1, cost_fn=False),
        "cost_fn",
    ),
    (
        "normalized_expected_cost",
        lambda: metrics.normalized_expected_cost(_c(), 0.1, cost_fp=np.True_),
        "cost_fp",
    ),
    ("cost_curve", lambda: metrics.cost_curve(_c(), cost_fn=True), "cost_fn"),
    ("iso_performance_slope", lambda: metrics.iso_performance_slope(0.1, True, 2.0), "cost_fp"),
    ("cost string", lambda: metrics.expected_cost(_c(), 0.1, cost_fp="2"), "cost_fp"),
    ("cost list", lambda: metrics.expected_cost(_c(), 0.1, cost_fn=[1.0]), "cost_fn"),
    # choose_threshold's requirements
    (
        "min_precision str",
        lambda: uncertainty.choose_threshold(_c(), 0.1, min_precision="abc"),
        "min_precision",
    ),
    (
        "min_precision list",
        lambda: uncertainty.choose_threshold(_c(), 0.1, min_precision=[0.5]),
        "min_precision",
    ),
    (
        "min_recall bool",
        lambda: uncertainty.choose_threshold(_c(), 0.1, min_recall=True),
        "min_recall",
    ),
    (
        "min_recall nan",
        lambda: uncertainty.choose_threshold(_c(), 0.1, min_recall=math.nan),
        "min_recall",
    ),
    (
        "max_alerts_per inf",
        lambda: uncertainty.choose_threshold(_c(), 0.1, max_alerts_per=(10, math.inf)),
        "max_alerts_per",
    ),
    (
        "max_alerts_per bool",
        lambda: uncertainty.choose_threshold(_c(), 0.1, max_alerts_per=(True, 100)),
        "max_alerts_per",
    ),
    (
        "max_alerts_per str",
        lambda: uncertainty.choose_threshold(_c(), 0.1, max_alerts_per="10 per 100"),
        "max_alerts_per",
    ),
    # weights whose cumulative sums overflow
    (
        "sample_weight 1e308",
        lambda: mi.RocCounts.from_scores(
            [1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], sample_weight=[1e308] * 4
        ),
        "sample_weight",
    ),
    (
        "accumulator 1e308",
        lambda: mi.CountsAccumulator().update(
            [1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], sample_weight=[1e308] * 4
        ),
        "sample_weight",
    ),
    # sizes given as the wrong kind of thing
    ("num bool", lambda: curves.default_prevalence_grid(num=True), "num"),
    ("num str", lambda: curves.cost_curve(_c(), num="201"), "num"),
    ("low list", lambda: curves.default_prevalence_grid(low=[1e-6]), "low"),
]


@pytest.mark.parametrize(("label", "call", "name"), BAD, ids=[b[0] for b in BAD])
def test_bad_inputs_are_refused_naming_the_argument(label, call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    message = str(info.value)
    assert name in message, message
    # a clear message, not a bare conversion error from deep inside
    assert "could not convert" not in message
    assert "must be finite" not in message or name == "sample_weight"


def test_good_inputs_are_unchanged():
    c = _c()
    assert metrics.expected_cost(c, 0.1, cost_fp=np.float32(2), cost_fn=np.int64(3)).shape == (
        c.n_thresholds,
    )
    assert metrics.precision(c, np.float64(0.1)).shape == (c.n_thresholds,)
    assert metrics.average_precision(c, [0.1, 0.2]).shape == (2,)
    choice = uncertainty.choose_threshold(
        c, np.float64(0.3), min_precision=np.float32(0.1), max_alerts_per=(np.int64(10), 100)
    )
    assert choice is not None
    w = mi.RocCounts.from_scores([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], sample_weight=[1e300] * 4)
    assert w.n_pos == 2e300


# ------------------------------------------------------- logging and report limits (issue 31)
def _ys(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    y = np.arange(n) % 2
    return y, np.linspace(0, 1, n) + 0.3 * y


def test_log_scores_caps_the_logged_prevalences(tracking_uri):
    import mlflow

    from mlflow_imbalance.tracking._checks import MAX_LOGGED_PREVALENCES

    assert MAX_LOGGED_PREVALENCES == 32
    y, s = _ys()
    for bad in (np.linspace(0.001, 0.5, 1000), list(np.linspace(0.001, 0.5, 33))):
        with pytest.raises(ValueError, match=r"prevalences holds \d+ values; at most 32"):
            mi.log_scores(y, s, prevalences=bad, log_figures=False, n_bootstrap=0)
    assert mlflow.active_run() is None  # refused before a run was started
    with mlflow.start_run():
        logged = mi.log_scores(
            y, s, prevalences=np.geomspace(1e-4, 0.3, 32), log_figures=False, n_bootstrap=0
        )
    assert len(logged.summary["prevalences"]) == 32


def _nested(depth: int) -> dict:
    root: dict = {}
    node = root
    for _ in range(depth - 1):
        node["a"] = {}
        node = node["a"]
    return root


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [
        (_nested(100_000), r"extra_summary is nested more than 32 levels"),
        ({"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}, r"32 levels"),
        ({"blob": "x" * (17 << 20)}, r"extra_summary is \d+ bytes as JSON, above .* 1048576"),
    ],
    ids=["100000 deep", "33 deep", "17 MB"],
)
def test_extra_summary_is_bounded_before_any_computation(tracking_uri, extra, pattern):
    import time

    # y_true is invalid too: extra_summary must be refused first, before the data are read
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=pattern):
        mi.log_scores(["a", "b", "c"], [0.1, 0.2, 0.3], extra_summary=extra, log_figures=False)
    assert time.perf_counter() - t0 < 5
    with pytest.raises(ValueError, match=pattern):
        mi.log_counts(_counts(), extra_summary=extra, log_figures=False)


def test_extra_summary_within_the_limits_is_kept(tracking_uri):
    import mlflow

    y, s = _ys()
    extra = {"deep": _nested(31), "blob": "x" * 500_000, "self": "ok"}
    with mlflow.start_run():
        logged = mi.log_scores(y, s, extra_summary=extra, log_figures=False, n_bootstrap=0)
    assert logged.summary["extra"]["blob"] == extra["blob"]


def test_check_nesting_is_iterative_and_stops_on_cycles():
    from mlflow_imbalance.core.validation import check_nesting

    assert check_nesting({"a": [1, (2, {"b": np.zeros((2, 3))})]}, "x", max_depth=32) == 6  # 2-d: 2
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="x is nested more than 8"):
        check_nesting(loop, "x", max_depth=8)


def test_report_defaults_from_the_runs_are_capped(caplog):
    import logging

    from mlflow_imbalance.report.options import MAX_REPORT_PREVALENCES, _options, with_run_defaults

    assert MAX_REPORT_PREVALENCES == 32
    opts = _options(None, None, "test", None, None, 0.95, 0, 0, None)
    many = [float(v) for v in np.geomspace(1e-6, 0.4, 3000)]
    summaries = [{"prevalences": many}, *[{"prevalences": [1e-3, 0.05]}] * 2]
    with caplog.at_level(logging.WARNING, logger="mlflow_imbalance.report.options"):
        out = with_run_defaults(opts, summaries)
    assert len(out.prevalences) == MAX_REPORT_PREVALENCES
    assert 1e-3 in out.prevalences and 0.05 in out.prevalences  # logged by the most runs
    assert min(out.prevalences) == 1e-6 and max(out.prevalences) == many[-1]  # range kept
    (record,) = [r for r in caplog.records if "prevalences" in r.getMessage()]
    message = record.getMessage()
    assert "3002 prevalences" in message and "dropped 2970" in message
    assert "at most 32" in message and ": 1.00431e-06, " in message  # the dropped, listed
    assert len(out.prevalences_dropped) == 2970  # and kept for the report's notes
    # a handful is left alone, silently
    caplog.clear()
    small = with_run_defaults(opts, [{"prevalences": [1e-2, 1e-3]}])
    assert small.prevalences == (1e-3, 1e-2) and not caplog.records


def test_report_explicit_prevalences_are_capped():
    from mlflow_imbalance.report.build import build_report

    with pytest.raises(ValueError, match=r"prevalences holds 33 values; a report evaluates at"):
        build_report({"a": _counts()}, prevalences=np.geomspace(1e-4, 0.3, 33), n_bootstrap=0)


def test_n_bootstrap_is_capped():
    from mlflow_imbalance.report.build import build_report

    with pytest.raises(ValueError, match="n_bootstrap must be at most 100000"):
        build_report({"a": _counts()}, n_bootstrap=10**9)
    with pytest.raises(ValueError, match="n_bootstrap must be at most 100000"):
        mi.log_counts(_counts(), n_bootstrap=10**9, log_figures=False)


# ------------------------------------------------------------- sets too small to be tested
@pytest.mark.parametrize(
    ("y", "s", "counts"),
    [
        ([0, 1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5], "4 positives and 1 negative"),
        ([1, 0, 0, 0], [0.3, 0.2, 0.1, 0.5], "1 positive and 3 negatives"),
        ([0, 1, 0, 1], [0.5] * 4, "2 positives and 2 negatives"),
        (np.arange(40) % 8 == 0, np.linspace(0, 1, 40), "5 positives (n_pos=5, n_neg=35)"),
    ],
    ids=["one negative", "one positive", "all one score", "5 positives"],
)
def test_small_sets_log_fine_with_one_warning(tracking_uri, y, s, counts):
    import warnings

    import mlflow

    with warnings.catch_warnings(record=True) as records, mlflow.start_run() as run:
        warnings.simplefilter("always")
        logged = mi.log_scores(y, s, log_figures=False, n_bootstrap=0)
    ours = [str(w.message) for w in records if "report will not test" in str(w.message)]
    assert len(ours) == 1, ours
    assert counts in ours[0] and "at least 10 positives and 10 negatives" in ours[0]
    assert [w.category for w in records if "report will not test" in str(w.message)] == [
        UserWarning
    ]
    assert mi.load_counts(run.info.run_id).n_pos == logged.summary["n_pos"]


def test_large_enough_sets_and_weighted_sets_do_not_warn(tracking_uri):
    import warnings

    import mlflow

    y, s = _ys(40)  # 20 and 20
    with warnings.catch_warnings(), mlflow.start_run():
        warnings.filterwarnings("error", message=".*report will not test.*")
        mi.log_scores(y, s, log_figures=False, n_bootstrap=0)
        mi.log_scores(
            [0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], sample_weight=[1, 2, 3, 4], name="w",
            log_figures=False, n_bootstrap=0,
        )  # fmt: skip


def test_min_test_class_agrees_with_the_report():
    from mlflow_imbalance.report.analysis._common import MIN_TEST_CLASS as REPORT
    from mlflow_imbalance.tracking._checks import MIN_TEST_CLASS

    assert MIN_TEST_CLASS == REPORT


def test_extreme_weights_and_scores_raise_no_numpy_warning(tmp_path):
    """Weights near 1e300 (or 1e-300) and scores beyond float32's range are valid: the hull's
    orientation tests overflowed on such counts ("overflow in multiply"), and storing the scores
    tried a float32 cast ("overflow in cast"). Uniform weights leave the rates, hence the hull,
    those of the unweighted counts."""
    import warnings

    from mlflow_imbalance.tracking._checks import Scores
    from mlflow_imbalance.tracking.log import _write_scores

    rng = np.random.default_rng(5)
    y = rng.random(3000) < 0.05
    s = rng.normal(size=y.size) + 1.5 * y
    plain = curves.convex_hull(mi.RocCounts.from_scores(y, s))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for w in (1e300, 1e-300):
            hull = curves.convex_hull(
                mi.RocCounts.from_scores(y, s, sample_weight=np.full(y.size, w))
            )
            np.testing.assert_allclose(hull.fpr, plain.fpr, rtol=1e-12)
            np.testing.assert_allclose(hull.tpr, plain.tpr, rtol=1e-12)
        big = s * 1e300
        _write_scores(tmp_path / "scores.npz", Scores(y, big, None))
    with np.load(tmp_path / "scores.npz") as z:
        np.testing.assert_array_equal(z["y_score"], big)
