"""Spark integration: real Spark in local mode (local[2]); one SparkSession for the whole test
session (conftest's ``spark``, shared with test_production.py)."""

from __future__ import annotations

import itertools
import os
import shutil
import sys

import numpy as np
import pytest

pyspark = pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip(
        "Spark tests need Java (java not on PATH, JAVA_HOME unset)", allow_module_level=True
    )

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.metrics import roc_curve  # noqa: E402

from mlflow_imbalance import RocCounts  # noqa: E402
from mlflow_imbalance.integrations.spark import (  # noqa: E402
    _assemble,
    _bucket_partitions,
    _combine_partition_buckets,
    _counts_from_buckets,
    _cumulate_partitions,
    _roc_counts_from_spark,
    log_scores_from_spark,
    roc_counts_from_spark,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def _frame(spark, n_partitions=3, **columns):
    return spark.createDataFrame(pd.DataFrame(columns)).repartition(n_partitions)


def _skewed(seed=0, n=6000):
    """Rounded scores (many ties), 40% of the rows on one score, prevalence rising with score."""
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=n), 2)
    s[rng.random(n) < 0.4] = 0.25
    y = rng.random(n) < np.where(s > 0.5, 0.4, 0.05)
    return y, s


def _assert_matches_sklearn(c, y, s, w=None):
    """Independent reference: scikit-learn's full ROC curve at our thresholds.

    scikit-learn drops zero-weight rows, so with weights a threshold of ours may be missing
    there; the rates at threshold t are then those of the lowest sklearn threshold >= t.
    """
    fpr, tpr, thr = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    idx = np.searchsorted(-thr, -c.thresholds, side="right") - 1
    if w is None:
        np.testing.assert_array_equal(thr[idx], c.thresholds)
    np.testing.assert_allclose(c.tpr, tpr[idx], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(c.fpr, fpr[idx], rtol=1e-12, atol=1e-15)


def _assert_kept_points_and_true_error(
    c: RocCounts, full: RocCounts, *, rtol: float = 0.0, err_abs: float
) -> None:
    """Bounded counts ``c`` against the uncompressed ``full`` ones of the same data.

    Kept thresholds are real scores with the exact counts at them (equal when ``rtol`` is 0),
    and the recorded error is the true largest error when each threshold is represented by the
    next lower kept one (RocCounts.reduce's convention), computed here independently.
    """
    pos = np.searchsorted(-full.thresholds, -c.thresholds)
    np.testing.assert_array_equal(full.thresholds[pos], c.thresholds)
    np.testing.assert_allclose(full.tp[pos], c.tp, rtol=rtol, atol=0)
    np.testing.assert_allclose(full.fp[pos], c.fp, rtol=rtol, atol=0)
    rep = np.searchsorted(-c.thresholds, -full.thresholds, side="left")
    assert c.max_tpr_error == pytest.approx(max(0.0, np.max(c.tpr[rep] - full.tpr)), abs=err_abs)
    assert c.max_fpr_error == pytest.approx(max(0.0, np.max(c.fpr[rep] - full.fpr)), abs=err_abs)


# ---------------------------------------------------------------------------- exactness
def test_ties_skew_several_partitions_equal_from_scores(spark):
    y, s = _skewed()
    df = _frame(spark, y=y, s=s)
    c, info = _roc_counts_from_spark(df, "y", "s", num_partitions=4)
    ref = RocCounts.from_scores(y, s)
    assert c == ref
    assert c.compressed and not c.weighted
    assert info["partitions"] == 4  # four disjoint score ranges were cumulated separately
    # The driver got the compressed counts plus at most two rows per partition,
    # far fewer than the distinct scores (let alone the rows).
    assert info["rows_received"] <= ref.n_thresholds + 2 * info["partitions"]
    assert info["rows_received"] < np.unique(s).size
    _assert_matches_sklearn(c, y, s)


def test_default_partitioning_equal(spark):
    y, s = _skewed(seed=1, n=3000)
    df = _frame(spark, y=y.astype(np.int64), s=s)
    assert roc_counts_from_spark(df, "y", "s") == RocCounts.from_scores(y.astype(np.int64), s)


def test_dyadic_weights_exact_and_float_weights_close(spark):
    y, s = _skewed(seed=2, n=4000)
    rng = np.random.default_rng(2)
    w_dyadic = rng.integers(0, 9, y.size) / 4.0  # sums exact in float64, zero weights included
    w_float = rng.random(y.size) * 3
    df = _frame(spark, y=y, s=s, wd=w_dyadic, wf=w_float)
    c = roc_counts_from_spark(df, "y", "s", weight_col="wd", num_partitions=4)
    assert c.weighted
    assert c == RocCounts.from_scores(y, s, sample_weight=w_dyadic)
    _assert_matches_sklearn(c, y, s, w_dyadic)
    cf = roc_counts_from_spark(df, "y", "s", weight_col="wf", num_partitions=4)
    ref = RocCounts.from_scores(y, s, sample_weight=w_float)
    np.testing.assert_array_equal(cf.thresholds, ref.thresholds)
    np.testing.assert_allclose(cf.tp, ref.tp, rtol=1e-12)
    np.testing.assert_allclose(cf.fp, ref.fp, rtol=1e-12)
    assert cf.n_pos == pytest.approx(ref.n_pos, rel=1e-12)


def test_string_int_float_labels_and_pos_label(spark):
    y, s = _skewed(seed=3, n=2000)
    lab = np.where(y, "fraud", "ok")
    ints = np.where(y, 1, -1)
    df = _frame(spark, lab=lab, ints=ints, b=y, s=s.astype(np.float32))
    s32 = s.astype(np.float32)  # a float column: compared exactly as float64
    ref = RocCounts.from_scores(y, s32)
    assert roc_counts_from_spark(df, "lab", "s", pos_label="fraud") == ref
    assert roc_counts_from_spark(df, "ints", "s") == ref
    # pos_label selects the other class: the counts of the negated labels.
    flipped = roc_counts_from_spark(df, "b", "s", pos_label=False)
    assert flipped == RocCounts.from_scores(~y, s32)
    assert flipped == RocCounts.from_scores(lab, s32, pos_label="ok")


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 400),
    levels=st.integers(1, 30),
    parts=st.integers(1, 5),
    weighted=st.booleans(),
    label_kind=st.sampled_from(["bool", "float", "int"]),
)
def test_property_equal_from_scores(spark, seed, n, levels, parts, weighted, label_kind):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, levels, n).astype(np.float64) / levels
    y = rng.random(n) < 0.3
    y[0], y[-1] = True, False  # both classes present
    labels = {"bool": y, "float": y.astype(np.float64), "int": y.astype(np.int64)}[label_kind]
    w = rng.integers(0, 5, n).astype(np.float64) / 2
    w[0] = w[-1] = 1.0
    df = _frame(spark, n_partitions=parts, y=labels, s=s, w=w)
    got = roc_counts_from_spark(
        df, "y", "s", weight_col="w" if weighted else None, num_partitions=parts
    )
    assert got == RocCounts.from_scores(labels, s, sample_weight=w if weighted else None)


# ------------------------------------------- partition functions without Spark (many cases)
def _batches(rng, columns, names):
    """Split equal-length arrays into Arrow batches of random sizes (some empty)."""
    import pyarrow as pa

    n = columns[0].size
    cuts = np.sort(rng.integers(0, n + 1, rng.integers(0, 6)))
    bounds = [0, *cuts.tolist(), n]
    return [
        pa.RecordBatch.from_arrays([pa.array(c[a:b]) for c in columns], names=names)
        for a, b in itertools.pairwise(bounds)
    ]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 300),
    levels=st.integers(1, 40),
    parts=st.integers(1, 6),
    weighted=st.booleans(),
)
def test_cumulate_and_assemble_equal_from_scores(seed, n, levels, parts, weighted):
    """Steps 4-5 on simulated range partitions split into random Arrow batches."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    s = rng.integers(0, levels, n) / levels
    y = rng.random(n) < rng.random()
    y[0], y[-1] = True, False
    w = rng.integers(0, 4, n) / 2.0 if weighted else np.ones(n)
    w[0] = w[-1] = 1.0
    # The per-distinct-score table, descending, as groupBy(score) would give it.
    thr, inv = np.unique(s, return_inverse=True)
    dt = np.float64 if weighted else np.int64
    pos = np.bincount(inv, weights=w * y, minlength=thr.size)[::-1].astype(dt)
    neg = np.bincount(inv, weights=w * ~y, minlength=thr.size)[::-1].astype(dt)
    thr = thr[::-1]
    edges = np.sort(rng.integers(0, thr.size + 1, parts - 1))
    bounds = [0, *edges.tolist(), thr.size]
    out = []
    for a, b in itertools.pairwise(bounds):  # empty partitions included
        cols = [thr[a:b], pos[a:b], neg[a:b]]
        out += list(_cumulate_partitions(weighted)(iter(_batches(rng, cols, ["s", "p", "n"]))))
    rng.shuffle(out)  # the driver must not rely on the order partitions arrive in
    got, info = _assemble(pa.Table.from_batches(out), weighted)
    ref = RocCounts.from_scores(y, s, sample_weight=w if weighted else None)
    assert got == ref
    assert info["rows_received"] <= ref.n_thresholds + 2 * info["partitions"]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 300),
    levels=st.integers(1, 60),
    n_cuts=st.integers(1, 12),
    parts=st.integers(1, 4),
    weighted=st.booleans(),
)
def test_bucket_summaries_and_error_bound(seed, n, levels, n_cuts, parts, weighted):
    """Bounded mode on random partitions and cuts: exact counts at kept thresholds, true error."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    s = rng.integers(0, levels, n) / levels
    y = rng.random(n) < 0.4
    y[0], y[-1] = True, False
    w = rng.integers(1, 4, n) / 2.0 if weighted else np.ones(n)
    dt = np.float64 if weighted else np.int64
    cols = [s, (w * y).astype(dt), (w * ~y).astype(dt)]
    cuts = np.unique(rng.choice(s, n_cuts))
    part_of = rng.integers(0, parts, n)  # raw rows in arbitrary partitions
    batches = []
    for k in range(parts):
        sel = part_of == k
        pcols = [c[sel] for c in cols]
        batches += list(
            _bucket_partitions(cuts, weighted)(iter(_batches(rng, pcols, ["s", "p", "n"])))
        )
    table = pa.Table.from_batches(batches) if batches else None
    acc = _combine_partition_buckets(table, cuts.size + 1, weighted)
    c = _counts_from_buckets(acc, weighted)
    full = RocCounts.from_scores(y, s, sample_weight=w if weighted else None, compress=False)
    _assert_kept_points_and_true_error(c, full, rtol=1e-12, err_abs=1e-12)
    assert c.n_thresholds <= cuts.size + 1


# ---------------------------------------------------------------------------- bounded mode
def test_bounded_mode_exact_counts_and_true_error(spark):
    rng = np.random.default_rng(4)
    n = 20000
    s = rng.random(n)
    s[:5000] = 0.5  # a heavy tie
    y = rng.random(n) < 0.05 + 0.3 * s
    df = _frame(spark, y=y, s=s)
    max_points = 41
    c, info = _roc_counts_from_spark(df, "y", "s", max_points=max_points)
    assert info["mode"] == 1  # many more distinct scores than max_points: quantile buckets
    assert c.n_thresholds <= max_points
    full = RocCounts.from_scores(y, s, compress=False)
    _assert_kept_points_and_true_error(c, full, err_abs=1e-15)
    assert 0 < c.max_tpr_error < 4.0 / max_points
    assert 0 < c.max_fpr_error < 4.0 / max_points
    # Weighted (dyadic weights, zero weights included): same guarantees with weighted counts.
    w = rng.integers(0, 5, n) / 4.0
    dfw = _frame(spark, y=y, s=s, w=w)
    cw = roc_counts_from_spark(dfw, "y", "s", weight_col="w", max_points=max_points)
    fw = RocCounts.from_scores(y, s, sample_weight=w, compress=False)
    assert cw.weighted and cw.n_thresholds <= max_points
    _assert_kept_points_and_true_error(cw, fw, err_abs=1e-12)


def test_bounded_mode_few_distinct_is_exact(spark):
    y, s = _skewed(seed=5, n=2000)
    s = np.round(s, 1)  # ~60 distinct scores <= max_points: the exact path, no error
    df = _frame(spark, y=y, s=s)
    c, info = _roc_counts_from_spark(df, "y", "s", max_points=100)
    assert info["mode"] == 0
    assert c == RocCounts.from_scores(y, s)
    assert c.is_exact


# ---------------------------------------------------------------------------- validation
@pytest.fixture(scope="module")
def bad_df(spark):
    return spark.createDataFrame(
        [
            (1, "a", 0.9, 1.0, None, 1, float("nan")),
            (0, "b", 0.1, 2.0, 0.5, 1, 0.2),
            (1, "c", 0.8, -1.0, 0.3, 1, 0.3),
            (None, "a", 0.3, 1.0, float("inf"), 1, 0.4),
        ],
        "y int, three string, s double, w double, sbad double, one int, snan double",
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"label_col": "nope", "score_col": "s"}, r"label_col='nope' is not a column"),
        ({"label_col": "y", "score_col": "missing"}, r"score_col='missing' is not a column"),
        ({"label_col": "three", "score_col": "s"}, r"label_col='three' must be binary: found 3"),
        ({"label_col": "y", "score_col": "s"}, r"label_col='y' contains 1 null label"),
        ({"label_col": "one", "score_col": "sbad"}, r"score_col='sbad'.*1 null, 0 NaN and 1 inf"),
        ({"label_col": "one", "score_col": "snan"}, r"score_col='snan'.*0 null, 1 NaN"),
        ({"label_col": "one", "score_col": "s"}, r"label_col='one' holds only one class"),
        ({"label_col": "one", "score_col": "three"}, r"score_col='three' must hold numeric"),
        (
            {"label_col": "one", "score_col": "s", "weight_col": "w"},
            r"weight_col='w' must be non-negative: 1 negative.*-1.0",
        ),
    ],
)
def test_bad_input_names_the_column(bad_df, kwargs, match):
    with pytest.raises(ValueError, match=match):
        roc_counts_from_spark(bad_df, **kwargs)


def test_label_rules_and_weights_errors(spark):
    df = spark.createDataFrame(
        [("x", 0.9, 0.0, None), ("y", 0.1, 1.0, 1.0), ("x", 0.5, 0.0, 2.0)],
        "lab string, s double, w double, wnull double",
    )
    with pytest.raises(
        ValueError, match=r"label_col='lab' has labels \['x', 'y'\]: pass pos_label"
    ):
        roc_counts_from_spark(df, "lab", "s")
    with pytest.raises(ValueError, match=r"pos_label='z' is not one of the labels"):
        roc_counts_from_spark(df, "lab", "s", pos_label="z")
    with pytest.raises(ValueError, match=r"weight_col='w' gives the positives a total weight"):
        roc_counts_from_spark(df, "lab", "s", pos_label="x", weight_col="w")
    with pytest.raises(ValueError, match=r"weight_col='wnull' must hold finite weights: found 1"):
        roc_counts_from_spark(df, "lab", "s", pos_label="x", weight_col="wnull")
    with pytest.raises(ValueError, match="df is empty"):
        roc_counts_from_spark(df.limit(0), "lab", "s", pos_label="x")
    with pytest.raises(ValueError, match="max_points must be an integer >= 2"):
        roc_counts_from_spark(df, "lab", "s", pos_label="x", max_points=1)
    with pytest.raises(ValueError, match=r"max_points must be an integer >= 2 or None, got 2\.5$"):
        roc_counts_from_spark(df, "lab", "s", pos_label="x", max_points=np.float64(2.5))
    with pytest.raises(ValueError, match=r"num_partitions must be .* got 0$"):
        _roc_counts_from_spark(df, "lab", "s", pos_label="x", num_partitions=np.int64(0))


# ---------------------------------------------------------------------------- MLflow
def test_log_scores_from_spark_round_trip(spark, tracking_uri):
    import mlflow

    from mlflow_imbalance.tracking import load_counts

    y, s = _skewed(seed=6, n=1500)
    df = _frame(spark, y=y, s=s)
    with mlflow.start_run() as run:
        logged = log_scores_from_spark(df, "y", "s", name="spark_eval", log_figures=False)
    assert logged.run_id == run.info.run_id
    assert logged.summary["extra"]["counts_source"] == "spark"
    assert load_counts(run.info.run_id, name="spark_eval") == RocCounts.from_scores(y, s)


_MISMATCH_SCRIPT = """
import os, sys
from pyspark.sql import SparkSession
from mlflow_imbalance.integrations.spark import roc_counts_from_spark
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
spark.sparkContext.setLogLevel("OFF")
df = spark.createDataFrame([(0, 0.1), (1, 0.9), (0, 0.4), (1, 0.3)], ["y", "s"])
try:
    roc_counts_from_spark(df, "y", "s")
except RuntimeError as exc:
    print("ERROR:", exc)
else:
    print("NO ERROR")
spark.stop()
"""


@pytest.fixture(scope="module", autouse=True)
def mismatch_run(request, tmp_path_factory):
    """The mismatch script of the test below, started with the module's first test (its own
    Spark application comes up while the other tests run; the test waits for it). Yields
    ``(proc, other interpreter, stdout file, stderr file)``, a reason to skip, or None when the
    test is not collected."""
    import subprocess
    from pathlib import Path

    wanted = any(
        item.module is request.module
        and item.name == "test_worker_interpreter_mismatch_is_one_clear_error"
        for item in request.session.items
    )
    if not wanted:
        yield None
        return
    other = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if not other.exists() or Path(sys.prefix) == Path(sys.base_prefix):  # not in a venv
        yield "no interpreter outside this environment to start the workers with"
        return
    has_arrow = subprocess.run([str(other), "-c", "import pyarrow"], capture_output=True)
    if has_arrow.returncode == 0:
        yield f"{other} has pyarrow: no mismatch to provoke"
        return
    root = tmp_path_factory.mktemp("mismatch")
    env = {**os.environ, "PYSPARK_PYTHON": str(other), "PYSPARK_DRIVER_PYTHON": sys.executable}
    out, err = root / "stdout.txt", root / "stderr.txt"
    with open(out, "wb") as fo, open(err, "wb") as fe:
        proc = subprocess.Popen(
            [sys.executable, "-c", _MISMATCH_SCRIPT],
            stdout=fo, stderr=fe, env=env, cwd=root, start_new_session=True,
        )  # fmt: skip
    try:
        yield proc, other, out, err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=30)


def test_worker_interpreter_mismatch_is_one_clear_error(mismatch_run):
    """Workers started with another Python (no pyarrow) fail up front naming PYSPARK_PYTHON."""
    if isinstance(mismatch_run, str):
        pytest.skip(mismatch_run)
    proc, other, out, err = mismatch_run
    proc.wait(timeout=240)
    stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
    lines = [ln for ln in stdout.splitlines() if ln.startswith(("ERROR:", "NO ERROR"))]
    assert len(lines) == 1, stdout + stderr[-3000:]
    message = lines[0]
    assert "PYSPARK_PYTHON" in message and "pyarrow" in message and str(other) in message
    assert "ModuleNotFoundError" not in message


def test_spark_plan_round_trip(spark, tracking_uri):
    """plan_audit_spark (issue 39): a plan over a Spark DataFrame keyed by an id column,
    Bernoulli sampling, labels keyed by id, the same stored plan as the in-memory path (this
    module's Spark session, a real SQLite store)."""
    import mlflow

    import mlflow_imbalance as mi
    from mlflow_imbalance.integrations.spark import score_counts_from_spark
    from mlflow_imbalance.integrations.spark_audit import plan_audit_spark
    from mlflow_imbalance.tracking import audit as tr_audit

    rng = np.random.default_rng(0)
    y_t = np.r_[np.ones(200), np.zeros(5000)]
    s_t = np.r_[rng.normal(2.5, 1, 200), rng.normal(0, 1, 5000)]
    with mlflow.start_run() as run:
        mi.log_scores(y_t, s_t, log_figures=False, n_bootstrap=0)
    n = 4000
    y = (rng.random(n) < 0.05).astype(int)
    s = np.where(y == 1, rng.normal(2.5, 1, n), rng.normal(0, 1, n))
    ids = [f"case-{i}" for i in range(n)]
    df = spark.createDataFrame(
        [(ids[i], float(s[i])) for i in range(n)], "case_id string, score double"
    )
    mi.log_production_scores(
        score_counts_from_spark(df, "score"), batch="b1", run_id=run.info.run_id
    )
    with pytest.raises(ValueError, match="id_col='nope' is not a column"):
        plan_audit_spark(df, "score", "nope", batch="b1", run_id=run.info.run_id)
    dup = df.union(df.limit(1))
    with pytest.raises(ValueError, match="non-null, unique key"):
        plan_audit_spark(dup, "score", "case_id", batch="b1", run_id=run.info.run_id)
    with pytest.raises(ValueError, match="focus must be one of"):
        plan_audit_spark(df, "score", "case_id", batch="b1", run_id=run.info.run_id, focus="eta")
    plan = plan_audit_spark(df, "score", "case_id", 200, batch="b1", run_id=run.info.run_id,
                            threshold=1.5, seed=4, focus="precision")  # fmt: skip
    assert plan.sampling == "bernoulli" and 120 < plan.budget < 280
    assert plan.design.focus == "precision"
    assert len(set(plan.indices.tolist())) == plan.budget
    assert np.array_equal(np.bincount(plan.strata, minlength=plan.design.n_strata),
                          plan.design.allocation)  # fmt: skip
    pos = {k: i for i, k in enumerate(ids)}
    # every planned id sits in the stratum the design gives its score
    got = plan.design.stratum_of(s[[pos[k] for k in plan.indices]])
    assert np.array_equal(got, plan.strata)
    again = tr_audit.load_audit_plan(run.info.run_id, "b1")
    assert again.indices.tolist() == plan.indices.tolist()
    labels = {k: int(y[pos[k]]) for k in plan.indices.tolist()}
    a = mi.log_audit_labels(labels, batch="b1", run_id=run.info.run_id)
    # Horvitz-Thompson for the realised sample: weight N_h / m_h
    w = plan.design.n_cases[plan.strata] / plan.design.allocation[plan.strata]
    yl = np.asarray([labels[k] for k in plan.indices.tolist()])
    assert a.prevalence.estimate == pytest.approx(np.sum(w * yl) / n, rel=1e-12)
    assert a.n_labels == plan.budget
