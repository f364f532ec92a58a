"""Logging through a real `mlflow server` (artifact proxy, HTTP, concurrency)."""

from __future__ import annotations

import hashlib
import json
import os
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


_WORKERS = textwrap.dedent(
    """
    import os
    import sys
    import traceback

    import mlflow
    import numpy as np
    import mlflow_imbalance as mi

    url, experiment_id, seeds = sys.argv[1], sys.argv[2], [int(a) for a in sys.argv[3:]]
    mlflow.set_tracking_uri(url)


    def work(seed):
        rng = np.random.default_rng(seed)
        n = 4000
        y = (rng.random(n) < 0.07).astype(int)
        y[:2] = [0, 1]
        s = np.round(rng.normal(size=n) + 1.2 * y, 2)
        with mlflow.start_run(experiment_id=experiment_id) as run:
            mi.log_scores(y, s, prevalences=[1e-3], log_figures=False, keep_scores=False)
        return run.info.run_id


    # one process per seed, forked once the imports are done (nothing has touched the server
    # yet): each has its own HTTP connections and all log at once
    children = {}
    for seed in seeds:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            code = 1
            try:
                os.write(write, work(seed).encode())
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        os.close(write)
        children[seed] = (pid, read)
    for seed, (pid, read) in children.items():
        with os.fdopen(read, "rb") as fh:
            run_id = fh.read().decode()
        _, status = os.waitpid(pid, 0)
        print("WORKER", seed, pid, os.waitstatus_to_exitcode(status), run_id or "-")
    """
)


def test_eight_processes_log_concurrently(mlflow_server):
    """Eight processes log a run each to the server at once (forked from one interpreter after
    its imports, so the test pays one MLflow import instead of eight)."""
    client = MlflowClient(tracking_uri=mlflow_server)
    experiment_id = client.create_experiment("eight-writers")
    seeds = list(range(100, 108))
    done = subprocess.run(
        [sys.executable, "-c", _WORKERS, mlflow_server, experiment_id, *map(str, seeds)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [ln.split()[1:] for ln in done.stdout.splitlines() if ln.startswith("WORKER ")]
    assert [int(r[0]) for r in rows] == seeds, done.stdout
    assert len({r[1] for r in rows} | {str(os.getpid())}) == 9  # eight processes of their own
    run_ids = {}
    for seed, _, code, run_id in rows:
        assert code == "0", done.stderr[-2000:]
        run_ids[int(seed)] = run_id
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
