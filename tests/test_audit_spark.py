"""plan_audit_spark: a plan over a Spark DataFrame keyed by an id column, Bernoulli sampling,
labels keyed by id, the same stored plan as the in-memory path (real Spark, real SQLite store)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import mlflow_imbalance as mi
from mlflow_imbalance.tracking import audit as tr_audit

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[1]")
        .appName("mlflow-imbalance-audit-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_plan_round_trip(spark, tracking_uri):
    import mlflow

    from mlflow_imbalance.integrations.spark import score_counts_from_spark
    from mlflow_imbalance.integrations.spark_audit import plan_audit_spark

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
    plan = plan_audit_spark(df, "score", "case_id", 200, batch="b1", run_id=run.info.run_id,
                            threshold=1.5, seed=4)  # fmt: skip
    assert plan.sampling == "bernoulli" and 120 < plan.budget < 280
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
