"""Production scores (issue 33): per-batch score counts logged to a real SQLite store.

Exact round trips against an independent ``np.unique`` count, batch order and per-batch metric
steps, bad input refused with nothing written, crafted archives refused, the dead-server budget,
and Spark's ``score_counts_from_spark`` against ``ScoreCounts.from_scores`` (conftest's one
SparkSession for the test session, created only when a Spark test runs).
"""

from __future__ import annotations

import io
import time
import tracemalloc
import zipfile
from pathlib import Path

import mlflow
import numpy as np
import pytest
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

import mlflow_imbalance as mi
from mlflow_imbalance.core import format as fmt
from mlflow_imbalance.core.production import ScoreCounts
from mlflow_imbalance.tracking import production as prod
from mlflow_imbalance.tracking import production_metric_keys
from mlflow_imbalance.tracking._store import TrackingServerUnreachable

MiB = 1 << 20


# ---------------------------------------------------------------------------- helpers
def _test_set(seed: int = 0, n: int = 6000) -> tuple[np.ndarray, np.ndarray]:
    """Labeled test scores with many ties (rounded), 10 % positives."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.1
    return y, np.round(rng.normal(size=n) + 2.0 * y, 2)


def _batch(seed: int, n: int, eta: float) -> np.ndarray:
    """Production scores from the same class-conditional distributions at prevalence eta."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < eta
    return np.round(rng.normal(size=n) + 2.0 * y, 2)


def _independent_counts(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Thresholds (descending) and cases at or above each, by np.unique (no package code)."""
    values, per = np.unique(np.asarray(scores, dtype=np.float64), return_counts=True)
    return values[::-1], np.cumsum(per[::-1]), int(per.sum())


def _logged_run(**kw) -> str:
    y, s = _test_set()
    with mlflow.start_run() as run:
        mi.log_scores(y, s, log_figures=False, n_bootstrap=0, **kw)
    return run.info.run_id


def _all_artifacts(client: MlflowClient, run_id: str, path: str | None = None) -> list[str]:
    out = []
    for entry in client.list_artifacts(run_id, path):
        out += _all_artifacts(client, run_id, entry.path) if entry.is_dir else [entry.path]
    return sorted(out)


def _snapshot(run_id: str) -> tuple[list[str], dict[str, float]]:
    client = MlflowClient()
    return _all_artifacts(client, run_id), dict(client.get_run(run_id).data.metrics)


# ---------------------------------------------------------------------------- round trips
def test_round_trip_exact_and_ordered(tracking_uri):
    run_id = _logged_run()
    batches = {
        "2026-11-03": _batch(1, 3000, 0.02),
        "2026-11-01": _batch(2, 2000, 0.05),
        None: np.concatenate([_batch(3, 1000, 0.01), [7, 7, 7, -5]]),  # out-of-range ties
    }
    logged = [
        mi.log_production_scores(s, batch=b, run_id=run_id, estimate=False)
        for b, s in batches.items()
    ]
    assert [r.batch for r in logged] == ["2026-11-03", "2026-11-01", "2"]
    assert [r.order for r in logged] == [0, 1, 2]
    loaded = mi.load_production_counts(run_id)
    assert list(loaded) == ["2026-11-03", "2026-11-01", "2"]  # logging order, not sorted
    for (_, scores), (label, sc) in zip(batches.items(), loaded.items(), strict=True):
        thr, n_above, n = _independent_counts(scores)
        assert isinstance(sc, ScoreCounts), label
        np.testing.assert_array_equal(sc.thresholds, thr)
        np.testing.assert_array_equal(sc.n_above, n_above)
        assert sc.n == n == scores.size
    listed = mi.list_production_batches(run_id, "test")
    assert list(listed) == list(loaded)
    assert [r["n"] for r in listed.values()] == [3000, 2000, 1004]
    assert all(r["estimate"] is None for r in listed.values())
    files = _all_artifacts(MlflowClient(), run_id, "imbalance/test/production")
    assert files == sorted(
        f"imbalance/test/production/{b}.{ext}" for b in loaded for ext in ("npz", "json")
    )


def test_metrics_per_batch_with_steps(tracking_uri):
    run_id = _logged_run()
    etas = [0.02, 0.08, 0.04]
    results = [
        mi.log_production_scores(_batch(10 + i, 4000, eta), batch=f"week-{i + 1}", run_id=run_id)
        for i, eta in enumerate(etas)
    ]
    client = MlflowClient()
    key = production_metric_keys("test")
    assert key["eta_est"] == "imb/eta_est test"
    assert set(key.values()) == {
        "imb/eta_est test",
        "imb/eta_est_low test",
        "imb/eta_est_high test",
        "imb/prior_shift_p test",
        "imb/prod_n test",
    }
    counts = mi.load_counts(run_id)
    from mlflow_imbalance.stats.prevalence import estimate_prevalence

    for stem, field in [("eta_est", "estimate"), ("eta_est_low", "low"), ("eta_est_high", "high")]:
        history = sorted(client.get_metric_history(run_id, key[stem]), key=lambda m: m.step)
        assert [m.step for m in history] == [0, 1, 2]
        assert [m.value for m in history] == [getattr(r.estimate, field) for r in results]
    n_hist = sorted(client.get_metric_history(run_id, key["prod_n"]), key=lambda m: m.step)
    assert [(m.step, m.value) for m in n_hist] == [(0, 4000.0), (1, 4000.0), (2, 4000.0)]
    for i, (r, eta) in enumerate(zip(results, etas, strict=True)):
        direct = estimate_prevalence(counts, _batch(10 + i, 4000, eta))
        assert r.estimate.estimate == direct.estimate
        assert r.estimate.low <= eta <= r.estimate.high  # the truth, at these sizes
        record = r.record["estimate"]
        assert record["value"] == direct.estimate
        assert record["interval"] == [direct.low, direct.high]
        assert record["method"] == direct.method and record["text"] == direct.text
        assert record["prior_shift_p"] == direct.prior_shift_p
    # the committed json is what list_production_batches returns
    listed = mi.list_production_batches(run_id)
    assert [b["estimate"]["value"] for b in listed.values()] == [
        r.estimate.estimate for r in results
    ]
    assert [b["order"] for b in listed.values()] == [0, 1, 2]


def test_same_batch_refused_or_merged(tracking_uri):
    run_id = _logged_run()
    a, b = _batch(20, 1500, 0.05), _batch(21, 700, 0.05)
    mi.log_production_scores(a, batch="site_A", run_id=run_id, estimate=False)
    mi.log_production_scores(a[:10], batch="site_B", run_id=run_id, estimate=False)
    before = _snapshot(run_id)
    with pytest.raises(ValueError, match=r"batch='site_A' is already logged.*merge=True"):
        mi.log_production_scores(b, batch="site_A", run_id=run_id, estimate=False)
    with pytest.raises(ValueError, match=r"batch='SITE_A' differs .* only in case"):
        mi.log_production_scores(b, batch="SITE_A", run_id=run_id, estimate=False)
    assert _snapshot(run_id) == before
    merged = mi.log_production_scores(b, batch="site_A", run_id=run_id, merge=True)
    assert (merged.order, merged.n, merged.record["parts"]) == (0, 2200, 2)
    loaded = mi.load_production_counts(run_id)
    assert list(loaded) == ["site_A", "site_B"]
    assert loaded["site_A"] == ScoreCounts.from_scores(np.concatenate([a, b]))
    history = MlflowClient().get_metric_history(run_id, "imb/prod_n test")
    assert sorted((m.step, m.value) for m in history) == [(0, 1500.0), (0, 2200.0), (1, 10.0)]


def test_score_counts_input_and_default_labels(tracking_uri):
    run_id = _logged_run()
    s = _batch(30, 500, 0.1)
    mi.log_production_scores(s, batch=1, run_id=run_id, estimate=False)  # label "1", order 0
    r = mi.log_production_scores(ScoreCounts.from_scores(s), run_id=run_id, estimate=False)
    assert (r.batch, r.order) == ("2", 1)  # "1" is taken: the next free integer
    import datetime as dt

    r = mi.log_production_scores(s, batch=dt.date(2026, 11, 27), run_id=run_id, estimate=False)
    assert r.batch == "2026-11-27"
    assert mi.load_production_counts(run_id)["2"] == ScoreCounts.from_scores(s)
    inexact = ScoreCounts(np.array([0.5, 0.1]), np.array([1, 1]), 3)
    with pytest.raises(ValueError, match="scores is a ScoreCounts that is not exact"):
        mi.log_production_scores(inexact, run_id=run_id)


def test_active_run_and_other_name(tracking_uri):
    y, s = _test_set()
    with mlflow.start_run() as run:
        mi.log_scores(y, s, name="holdout", log_figures=False, n_bootstrap=0)
        r = mi.log_production_scores(_batch(40, 800, 0.1), name="holdout", batch="b0")
    assert r.run_id == run.info.run_id and r.artifact_path == "imbalance/holdout/production"
    assert list(mi.load_production_counts(run.info.run_id, "holdout")) == ["b0"]
    assert mi.load_production_counts(run.info.run_id, "test") == {}
    assert "imb/eta_est holdout" in MlflowClient().get_run(r.run_id).data.metrics


def test_weighted_counts_log_without_estimate(tracking_uri):
    y, s = _test_set()
    w = np.where(y, 2.0, 1.0)
    with mlflow.start_run() as run:
        mi.log_scores(y, s, sample_weight=w, log_figures=False, n_bootstrap=0)
    with pytest.warns(UserWarning, match="no prevalence estimate"):
        r = mi.log_production_scores(_batch(41, 500, 0.1), run_id=run.info.run_id)
    assert r.estimate is None and "weighted" in r.record["estimate_note"]
    metrics = MlflowClient().get_run(run.info.run_id).data.metrics
    assert "imb/prod_n test" in metrics and "imb/eta_est test" not in metrics


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"scores": [0.1, np.nan, 0.3]}, ValueError, r"scores.*(NaN|finite)"),
        ({"scores": []}, ValueError, r"scores is empty"),
        ({"batch": "../x"}, ValueError, r"batch must be a safe file-name component.*'\.\./x'"),
        ({"batch": "a/b"}, ValueError, r"batch must be a safe file-name component"),
        ({"batch": "x y"}, ValueError, r"batch must be a safe file-name component"),
        ({"batch": True}, ValueError, r"batch must be a label"),
        ({"batch": -1}, ValueError, r"batch must be an integer in \[0, 1e100\)"),
        ({"name": "../t"}, ValueError, r"name must be"),
        ({"name": "missing"}, MlflowException, r"run_id='[0-9a-f]+', name='missing'.*no committed"),
        ({"estimate": "yes"}, ValueError, r"estimate must be True or False"),
        ({"confidence": 1.5}, ValueError, r"confidence must be a number in \(0, 1\)"),
        ({"method": "magic"}, ValueError, r"method must be 'auto' or one of"),
        ({"scores": [50.0, 60.0, 70.0] * 100}, ValueError, r"(range|scale).*estimate=False stores"),
    ],
)
def test_bad_input_writes_nothing(tracking_uri, kwargs, error, match):
    run_id = _logged_run()
    mi.log_production_scores(_batch(50, 300, 0.1), batch="first", run_id=run_id)
    before = _snapshot(run_id)
    args = {"scores": _batch(51, 300, 0.1), "batch": "next", "run_id": run_id, **kwargs}
    with pytest.raises(error, match=match):
        mi.log_production_scores(args.pop("scores"), **args)
    assert _snapshot(run_id) == before
    assert list(mi.list_production_batches(run_id)) == ["first"]


def test_run_without_counts_writes_nothing(tracking_uri):
    with mlflow.start_run() as run:
        mlflow.log_param("model", "x")
    before = _snapshot(run.info.run_id)
    with pytest.raises(MlflowException, match=r"run_id='[0-9a-f]+', name='test'.*log them first"):
        mi.log_production_scores(_batch(60, 100, 0.1), run_id=run.info.run_id, batch="b")
    assert _snapshot(run.info.run_id) == before == ([], {})
    with pytest.raises(ValueError, match="no run is active"):  # no run is started for it
        mi.log_production_scores(_batch(60, 100, 0.1))
    assert mlflow.active_run() is None


def test_dead_server_fails_fast(unreachable_tracking_uri):
    t0 = time.monotonic()
    with pytest.raises(TrackingServerUnreachable, match="unreachable"):
        mi.log_production_scores([0.1, 0.2], run_id="0" * 32, tracking_uri=unreachable_tracking_uri)
    assert time.monotonic() - t0 < 10


# ---------------------------------------------------------------------------- the archive
def test_archive_round_trip_and_meta(tmp_path):
    s = _batch(70, 5000, 0.1)
    sc = ScoreCounts.from_scores(s)
    path = fmt.save_score_counts(tmp_path / "b.npz", sc, batch="2026-11-27", meta={"k": "v"})
    fields = fmt.load_score_counts(path)
    assert (fields["batch"], fields["meta"], fields["max_share_error"]) == (
        "2026-11-27",
        {"k": "v"},
        0.0,
    )
    assert ScoreCounts.from_arrays(fields["thresholds"], fields["n_above"], fields["n"]) == sc
    with np.load(path, allow_pickle=False) as f:  # numpy alone reads it
        assert str(f["format"]) == "mlflow-imbalance/score-counts" and int(f["format_version"]) == 1


def _rewritten(data: bytes, **replace: np.ndarray) -> bytes:
    """The archive ``data`` with members replaced (or added), consistently zipped."""
    with np.load(io.BytesIO(data), allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    arrays.update(replace)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("replace", "match"),
    [
        ({"n": np.array(999, dtype="<i8")}, r"n_above\[-1\]=\d+ must equal n=999"),
        ({"n_above": np.array([1, 1, 3], dtype="<i8")}, r"n_above must be strictly increasing"),
        ({"thresholds": np.array([0.1, 0.5, 0.9])}, r"thresholds must be strictly descending"),
        ({"thresholds": np.array([0.9, np.nan, 0.1])}, r"thresholds must be finite"),
        ({"n_above": np.array([1, 2], dtype="<i8")}, r"thresholds and n_above must have the same"),
        ({"n_above": np.array([1.0, 2.0, 3.0])}, r"n_above must be numeric \('<i8'\)"),
        ({"format_version": np.array(2, dtype="<i8")}, r"format_version 2.*upgrade"),
        ({"format": np.array("mlflow-imbalance/roc-counts")}, r"has format"),
        ({"max_share_error": np.array(1.5)}, r"max_share_error must lie in \[0, 1\]"),
        ({"meta": np.frombuffer(b"[1]", dtype=np.uint8)}, r"meta must be a JSON object"),
        ({"extra": np.array(1)}, r"unexpected \['extra.npy'\]"),
    ],
)
def test_archive_refuses_crafted_files(replace, match):
    honest = fmt.encode_score_counts(ScoreCounts.from_scores([0.9, 0.5, 0.1]), batch="b", meta={})
    with pytest.raises(ValueError, match=match):
        fmt.decode_score_counts(_rewritten(honest, **replace), source="crafted.npz")


def test_archive_refuses_a_zero_filled_bomb_in_bounded_memory():
    """A ~1 MB file declaring 1000 MiB of thresholds (and as many n_above) is refused unread."""
    honest = fmt.encode_score_counts(ScoreCounts.from_scores([0.9, 0.5, 0.1]), batch="b")
    with np.load(io.BytesIO(honest), allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    n = 1000 * MiB // 8
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for key, arr in arrays.items():
            if key not in ("thresholds", "n_above"):
                b = io.BytesIO()
                np.lib.format.write_array(b, arr, allow_pickle=False)
                zf.writestr(f"{key}.npy", b.getvalue())
                continue
            with zf.open(f"{key}.npy", "w", force_zip64=True) as fh:
                head = io.BytesIO()
                np.lib.format.write_array_header_1_0(
                    head, {"descr": arr.dtype.str, "fortran_order": False, "shape": (n,)}
                )
                fh.write(head.getvalue())
                zeros = bytes(MiB)
                for _ in range(1000):
                    fh.write(zeros)
    data = out.getvalue()
    assert len(data) < 5 * MiB
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"(zip bomb|inflate to)"):
            fmt.decode_score_counts(data, source="bomb.npz")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * MiB


def test_tampered_batch_file_is_refused(tracking_uri):
    run_id = _logged_run()
    mi.log_production_scores(_batch(80, 400, 0.1), batch="b", run_id=run_id, estimate=False)
    root = Path(MlflowClient().get_run(run_id).info.artifact_uri.removeprefix("file://"))
    target = root / "imbalance/test/production/b.npz"
    other = fmt.encode_score_counts(ScoreCounts.from_scores([0.3, 0.2]), batch="b")
    target.write_bytes(other)
    with pytest.raises(ValueError, match=r"b.npz does not match the manifest of b.json"):
        mi.load_production_counts(run_id)
    # an upload that never reached its .json is not a batch
    (root / "imbalance/test/production/orphan.npz").write_bytes(other)
    assert list(mi.list_production_batches(run_id)) == ["b"]


def test_thinned_beyond_the_size_bound(tracking_uri, monkeypatch):
    """Beyond MAX_STORED_THRESHOLDS the batch is thinned with its error recorded; no merge."""
    run_id = _logged_run()
    s = np.round(np.random.default_rng(90).normal(size=5000), 3)  # ~2000 scores, tied
    monkeypatch.setattr(prod, "MAX_STORED_THRESHOLDS", 64)
    r = mi.log_production_scores(s, batch="big", run_id=run_id, estimate=False)
    err = r.record["max_share_error"]
    assert r.record["n_thresholds"] <= 64 and 0 < err <= 2 / 64
    stored = mi.load_production_counts(run_id)["big"]
    exact = ScoreCounts.from_scores(s)
    assert stored.n == exact.n and stored.min_score == exact.min_score
    np.testing.assert_array_equal(
        stored.n_above, exact.count_at_or_above(stored.thresholds)
    )  # exact at every kept threshold
    worst = np.max(
        np.abs(
            stored.share_at_or_above(exact.thresholds) - exact.share_at_or_above(exact.thresholds)
        )
    )
    assert worst == pytest.approx(err)  # the recorded error is the realised one
    with pytest.raises(ValueError, match=r"stored thinned .* cannot be merged"):
        mi.log_production_scores(s[:5], batch="big", run_id=run_id, merge=True, estimate=False)


def test_lazy_exports():
    import mlflow_imbalance.uncertainty as unc

    assert mi.ScoreCounts is ScoreCounts
    assert mi.estimate_prevalence is unc.estimate_prevalence
    assert unc.PrevalenceEstimate.__name__ == "PrevalenceEstimate"
    for name in ("log_production_scores", "load_production_counts", "list_production_batches"):
        assert name in dir(mi) and callable(getattr(mi, name))


# ---------------------------------------------------------------------------- Spark
@pytest.mark.spark
@pytest.mark.timeout(300)
def test_spark_score_counts_equal_from_scores_on_ties(spark):
    import pandas as pd

    from mlflow_imbalance.integrations.spark import score_counts_from_spark

    rng = np.random.default_rng(100)
    s = np.round(rng.normal(size=6000), 2)
    s[rng.random(6000) < 0.4] = 0.25  # one score holds 40 % of the rows
    df = spark.createDataFrame(pd.DataFrame({"score": s, "i": np.arange(6000)})).repartition(3)
    for parts in (None, 1, 7):
        got = score_counts_from_spark(df, "score", num_partitions=parts)
        assert got == ScoreCounts.from_scores(s), parts
        thr, n_above, _ = _independent_counts(s)
        np.testing.assert_array_equal(got.thresholds, thr)
        np.testing.assert_array_equal(got.n_above, n_above)
    ints = spark.createDataFrame(pd.DataFrame({"s": np.array([3, 1, 3, 2, 3], dtype=np.int32)}))
    assert score_counts_from_spark(ints, "s") == ScoreCounts.from_scores([3, 1, 3, 2, 3])
    with pytest.raises(ValueError, match=r"'score' must hold finite scores: found 1 null"):
        score_counts_from_spark(
            spark.createDataFrame(pd.DataFrame({"score": [0.1, np.nan]})), "score"
        )
    with pytest.raises(ValueError, match=r"score_col='nope' is not a column"):
        score_counts_from_spark(df, "nope")
    with pytest.raises(ValueError, match=r"df is empty"):
        score_counts_from_spark(df.limit(0), "score")


# ---------------------------------------------------------------------------- real server
@pytest.mark.server
def test_through_a_real_server(mlflow_server):
    """Batches through `mlflow server` (HTTP, artifact proxy): exact, ordered, metrics by step."""
    client = MlflowClient(tracking_uri=mlflow_server)
    exp = client.create_experiment(f"production-{time.time_ns()}")
    run_id = client.create_run(exp).info.run_id
    y, s = _test_set()
    mi.log_scores(y, s, run_id=run_id, tracking_uri=mlflow_server, log_figures=False, n_bootstrap=0)
    batches = {"b": _batch(200, 2000, 0.05), "a": _batch(201, 1000, 0.1)}
    for label, scores in batches.items():
        mi.log_production_scores(scores, batch=label, run_id=run_id, tracking_uri=mlflow_server)
    loaded = mi.load_production_counts(run_id, tracking_uri=mlflow_server)
    assert list(loaded) == ["b", "a"]
    for label, scores in batches.items():
        thr, n_above, _ = _independent_counts(scores)
        np.testing.assert_array_equal(loaded[label].thresholds, thr)
        np.testing.assert_array_equal(loaded[label].n_above, n_above)
    history = client.get_metric_history(run_id, "imb/eta_est test")
    listed = mi.list_production_batches(run_id, tracking_uri=mlflow_server)
    assert sorted((m.step, m.value) for m in history) == [
        (r["order"], r["estimate"]["value"]) for r in listed.values()
    ]


def test_the_run_card_gains_each_batch_sentence(tracking_uri, tmp_path):
    """Issue 33: the run card says what the report says of each batch (the estimator's own
    sentence), and the card's manifest entry in summary.json stays true to the rewritten card."""
    import hashlib
    import html
    import json

    y, s = _test_set()
    with mlflow.start_run() as run:
        mi.log_scores(y, s, n_bootstrap=0, costs=(1, 50))
    run_id = run.info.run_id
    first = mi.log_production_scores(_batch(31, 5000, 0.03), batch="w1", run_id=run_id)
    second = mi.log_production_scores(_batch(32, 5000, 0.06), batch="w2", run_id=run_id)
    # issue 39: a batch too small to decide on says, at the run's logged costs, how many audit
    # labels would settle it -- in its record, its sentence and so the card
    third = mi.log_production_scores(_batch(33, 300, 0.02), batch="w3", run_id=run_id)
    local = Path(MlflowClient().download_artifacts(run_id, "imbalance/test", str(tmp_path)))
    card = (local / "card.html").read_text(encoding="utf-8")
    for r in (first, second, third):
        n = f"{r.n:,}"
        assert f"<b>batch {r.batch}</b> ({n} cases): {html.escape(r.estimate.text)}" in card
    budget = third.record["estimate"]["audit_budget"]
    assert third.estimate.audit is not None and budget["labels"] == third.estimate.audit.labels
    assert f"About {budget['labels']:,} labels drawn by plan_audit" in third.estimate.text
    assert third.estimate.text.startswith(
        mi.estimate_prevalence(mi.load_counts(run_id), _batch(33, 300, 0.02)).text
    )
    assert card.count("Deployment prevalence from production") == 1  # replaced, not appended
    files = json.loads((local / "summary.json").read_text(encoding="utf-8"))["files"]
    assert (
        files["card.html"]["sha256"]
        == hashlib.sha256((local / "card.html").read_bytes()).hexdigest()
    )
    assert mi.load_counts(run_id).n_pos == int(y.sum())  # the set still loads, verified
