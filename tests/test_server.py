"""Logging through a real `mlflow server` (artifact proxy, HTTP, concurrency)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import urllib.parse
import urllib.request

import mlflow
import numpy as np
import pytest
from mlflow.tracking import MlflowClient

import mlflow_imbalance as mi
from mlflow_imbalance import tracking

pytestmark = pytest.mark.server


def _data(seed: int, n: int = 3000):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.07).astype(int)
    y[:2] = [0, 1]
    return y, np.round(rng.normal(size=n) + 1.2 * y, 2)


@pytest.fixture
def server_uri(mlflow_server):
    from mlflow.tracking import _tracking_service

    previous = _tracking_service.utils._tracking_uri
    mlflow.set_tracking_uri(mlflow_server)
    try:
        yield mlflow_server
    finally:
        while mlflow.active_run() is not None:
            mlflow.end_run()
        mlflow.set_tracking_uri(previous)


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert resp.status == 200
        return resp.read()


def test_round_trip_through_artifact_proxy(server_uri):
    y, s = _data(0)
    with mlflow.start_run() as run:
        res = mi.log_scores(y, s, prevalences=[1e-3])
    run_id = run.info.run_id
    assert MlflowClient().get_run(run_id).info.artifact_uri.startswith("mlflow-artifacts:")
    got = mi.load_counts(run_id)
    ref = mi.RocCounts.from_scores(y, s)
    np.testing.assert_array_equal(got.thresholds, ref.thresholds)
    np.testing.assert_array_equal(got.tp, ref.tp)
    np.testing.assert_array_equal(got.fp, ref.fp)
    np.testing.assert_array_equal(tracking.load_scores(run_id).y_score, s)

    # artifacts listed by the server
    listed = {f.path for f in MlflowClient().list_artifacts(run_id, "imbalance/test")}
    assert {"imbalance/test/summary.json", "imbalance/test/roc_counts.npz"} <= listed
    assert {f"imbalance/test/{f}" for f in res.summary["files"]} <= listed

    # ... and served over plain HTTP (the UI's endpoint), byte-identical to the manifest
    summary = json.loads(
        _get(
            f"{server_uri}/get-artifact?"
            + urllib.parse.urlencode({"path": "imbalance/test/summary.json", "run_uuid": run_id})
        )
    )
    for fname in ("roc_counts.npz", "card.html", "roc.png"):
        body = _get(
            f"{server_uri}/get-artifact?"
            + urllib.parse.urlencode({"path": f"imbalance/test/{fname}", "run_uuid": run_id})
        )
        assert hashlib.sha256(body).hexdigest() == summary["files"][fname]["sha256"]

    # metrics readable with a client bound to the server
    data = MlflowClient(tracking_uri=server_uri).get_run(run_id).data
    metrics = data.metrics
    assert int(data.tags[tracking.keys.tag_key("test", "n_pos")]) == y.sum()
    auc_key = tracking.metric_key("test", "roc_auc")
    assert metrics[auc_key] == pytest.approx(res.metrics[auc_key])
    history = MlflowClient().get_metric_history(run_id, tracking.metric_key("test", "log10_eta"))
    assert len(history) == tracking.SWEEP_POINTS  # the grid only: no test-prevalence step


def test_bad_input_logs_nothing_on_server(server_uri):
    with mlflow.start_run() as run:
        with pytest.raises(ValueError, match="y_true must be binary"):
            mi.log_scores([0, 1, 2, 1], [0.1, 0.2, 0.3, 0.4])
    client = MlflowClient()
    assert client.list_artifacts(run.info.run_id) == []
    assert client.get_run(run.info.run_id).data.metrics == {}


_WORKER = textwrap.dedent(
    """
    import sys
    import mlflow
    import numpy as np
    import mlflow_imbalance as mi

    url, experiment_id, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mlflow.set_tracking_uri(url)
    rng = np.random.default_rng(seed)
    n = 4000
    y = (rng.random(n) < 0.07).astype(int)
    y[:2] = [0, 1]
    s = np.round(rng.normal(size=n) + 1.2 * y, 2)
    with mlflow.start_run(experiment_id=experiment_id) as run:
        mi.log_scores(y, s, prevalences=[1e-3], log_figures=False, keep_scores=False)
    print(run.info.run_id)
    """
)


def test_eight_processes_log_concurrently(mlflow_server):
    client = MlflowClient(tracking_uri=mlflow_server)
    experiment_id = client.create_experiment("eight-writers")
    seeds = list(range(100, 108))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, mlflow_server, experiment_id, str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in seeds
    ]
    run_ids = {}
    for seed, proc in zip(seeds, procs, strict=True):
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err[-2000:]
        run_ids[seed] = out.strip().splitlines()[-1]
    assert len(set(run_ids.values())) == 8
    for seed, run_id in run_ids.items():
        rng = np.random.default_rng(seed)
        y = (rng.random(4000) < 0.07).astype(int)
        y[:2] = [0, 1]
        s = np.round(rng.normal(size=4000) + 1.2 * y, 2)
        got = mi.load_counts(run_id, tracking_uri=mlflow_server)
        ref = mi.RocCounts.from_scores(y, s)
        np.testing.assert_array_equal(got.thresholds, ref.thresholds)
        np.testing.assert_array_equal(got.tp, ref.tp)
        np.testing.assert_array_equal(got.fp, ref.fp)
        assert list(mi.list_counts(run_id, tracking_uri=mlflow_server)) == ["test"]
