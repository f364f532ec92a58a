"""A tracking server that dies mid-training: bounded overhead, exactly one warning, clear errors.

Each training test gets its own real ``mlflow server`` (SQLite backend, proxied artifacts;
conftest's ``killable_server``, started while the previous test runs), logs one capture while
it is alive, then SIGKILLs its whole process group and lets training go on with MLflow's
*default* HTTP retry settings (which alone would retry for minutes).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import warnings

import mlflow
import numpy as np
import pytest

import mlflow_imbalance as mi

pytestmark = pytest.mark.server

_HTTP_KNOBS = (
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES",
    "MLFLOW_HTTP_REQUEST_TIMEOUT",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR",
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(killable_server, monkeypatch):
    """A live server as the global tracking URI; MLflow's own HTTP defaults are in force."""
    for key in _HTTP_KNOBS:
        monkeypatch.delenv(key, raising=False)
    while mlflow.active_run() is not None:
        mlflow.end_run()
    previous = mlflow.get_tracking_uri()
    srv = killable_server
    mlflow.set_tracking_uri(srv.url)
    try:
        yield srv
    finally:
        srv.kill()
        # the run can no longer be terminated on the dead server: fail fast, forget it
        monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
        monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
        while mlflow.active_run() is not None:
            with contextlib.suppress(Exception):
                mlflow.end_run()
        mlflow.set_tracking_uri(previous)


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    X = np.c_[y + rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)]
    return X, y


def _ours(records) -> list[str]:
    return [str(w.message) for w in records if "mlflow-imbalance" in str(w.message)]


def test_autolog_server_killed_mid_training(server):
    import sklearn.metrics
    from sklearn.linear_model import LogisticRegression

    X, y = _data()
    mi.autolog(log_figures=False)
    try:
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            run = mlflow.start_run()
            model = LogisticRegression().fit(X[:1500], y[:1500])
            sklearn.metrics.roc_auc_score(y[1500:], model.predict_proba(X[1500:])[:, 1])
            assert mi.load_counts(run.info.run_id, "test").n_pos == int(y[1500:].sum())
            assert _ours(records) == []

            server.kill()
            t0 = time.monotonic()
            for epoch in range(6):  # the rest of the training loop, evaluating each epoch
                model = LogisticRegression(C=1.0 / (epoch + 1)).fit(X[:1500], y[:1500])
                s = model.predict_proba(X[1500:])[:, 1]
                sklearn.metrics.roc_auc_score(y[1500:], s)
                sklearn.metrics.average_precision_score(y[1500:], s + epoch)
                sklearn.metrics.RocCurveDisplay.from_predictions(y[1500:], s * 0.5)
            overhead = time.monotonic() - t0
    finally:
        mi.autolog(disable=True)
    print(f"overhead after the kill: {overhead:.2f} s")
    assert overhead < 10, f"training after the server died took {overhead:.1f} s"
    ours = _ours(records)
    assert len(ours) == 1, ours
    assert server.url in ours[0] and "unreachable" in ours[0]


def test_xgboost_callback_server_killed_mid_training(server):
    xgb = pytest.importorskip("xgboost")
    from mlflow_imbalance.integrations.xgboost import ImbalanceCallback

    X, y = _data(seed=1)

    class KillAt(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            if epoch == 2:
                server.kill()
                self.t0 = time.monotonic()
            return False

    killer = KillAt()
    cb = ImbalanceCallback(X[1500:], y[1500:], log_figures=False)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        mlflow.start_run()
        booster = xgb.train(
            {"objective": "binary:logistic", "max_depth": 2, "nthread": 1},
            xgb.DMatrix(X[:1500], label=y[:1500]),
            num_boost_round=6,
            callbacks=[killer, cb],
        )
        overhead = time.monotonic() - killer.t0
    assert booster.num_boosted_rounds() == 6 and cb.logged is None
    print(f"overhead after the kill: {overhead:.2f} s")
    assert overhead < 10, f"training after the server died took {overhead:.1f} s"
    ours = _ours(records)
    assert len(ours) == 1, ours
    assert server.url in ours[0] and "unreachable" in ours[0]


def test_lightgbm_callback_server_killed_mid_training(server):
    lgb = pytest.importorskip("lightgbm")
    from mlflow_imbalance.integrations.lightgbm import ImbalanceCallback

    X, y = _data(seed=2)
    state = {}

    def kill_at_3(env):
        if env.iteration == 3:
            server.kill()
            state["t0"] = time.monotonic()

    kill_at_3.order = 10  # LightGBM sorts callbacks by this attribute
    cb = ImbalanceCallback(X[1500:], y[1500:], log_figures=False)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        mlflow.start_run()
        booster = lgb.train(
            {"objective": "binary", "num_leaves": 4, "verbose": -1, "num_threads": 1},
            lgb.Dataset(X[:1500], y[:1500]),
            num_boost_round=200,
            valid_sets=[lgb.Dataset(X[1500:], y[1500:])],
            callbacks=[kill_at_3, lgb.early_stopping(3, verbose=False), cb],
        )
        overhead = time.monotonic() - state["t0"]
    assert booster.current_iteration() > 3 and cb.logged is None
    print(f"overhead after the kill: {overhead:.2f} s")
    assert overhead < 10, f"training after the server died took {overhead:.1f} s"
    ours = _ours(records)
    assert len(ours) == 1, ours
    assert server.url in ours[0] and "unreachable" in ours[0]


def test_explicit_log_scores_raises_promptly_with_one_line(monkeypatch):
    for key in _HTTP_KNOBS:  # MLflow's defaults: minutes of retries without the probe
        monkeypatch.delenv(key, raising=False)
    url = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    for kwargs in ({"run_id": "0" * 32, "tracking_uri": url}, {}):
        previous = mlflow.get_tracking_uri()
        mlflow.set_tracking_uri(url)
        t0 = time.monotonic()
        try:
            with pytest.raises(mlflow.exceptions.MlflowException) as info:
                mi.log_scores([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], **kwargs)
        finally:
            mlflow.set_tracking_uri(previous)
        assert time.monotonic() - t0 < 10
        assert mlflow.active_run() is None  # no run was started
        message = info.value.message
        assert "\n" not in message and url in message and "mlflow server" in message


def test_cli_closed_port_one_line_within_15s(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}"
    env = {k: v for k, v in os.environ.items() if k not in _HTTP_KNOBS}
    for args in (
        ["list", "--experiment", "x", "--tracking-uri", url],
        ["report", "--experiment", "x", "--tracking-uri", url, "-o", str(tmp_path / "r.html")],
    ):
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "mlflow_imbalance.report.cli", *args],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env=env,
        )
        elapsed = time.monotonic() - t0
        assert elapsed < 15, elapsed
        assert proc.returncode != 0
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert url in lines[0] and "mlflow server" in lines[0] and "Traceback" not in proc.stderr
        assert list(tmp_path.iterdir()) == []  # no store, no report created


def test_explicit_log_scores_server_killed_mid_upload(server, tmp_path, monkeypatch):
    """The server dies as ``log_scores`` starts uploading (MLflow's default retries would wait
    ~4 minutes): one clear error naming the URI within seconds, and nothing committed.

    The kill is triggered by the staged commit marker appearing in the call's own temporary
    directory: it is written just before the first upload, after the reachability probe.
    """
    import tempfile
    import threading

    import mlflow_imbalance.tracking._store as store

    assert store.TIMEOUT_ENV == "MLFLOW_IMBALANCE_STORE_TIMEOUT"
    rng = np.random.default_rng(5)
    n = 1_000_000
    y = rng.random(n) < 0.01
    s = rng.normal(size=n) + y
    artifacts = server.root / "artifacts"  # the server's artifact store
    staging = tmp_path / "staging"
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))
    run = mlflow.start_run()
    killed = threading.Event()
    stop = threading.Event()

    def kill_at_first_upload() -> None:
        while not stop.is_set():
            if any(staging.glob("mlflow-imbalance-*/commit/summary.json")):
                server.kill()
                killed.set()
                return
            time.sleep(0.001)

    watcher = threading.Thread(target=kill_at_first_upload, daemon=True)
    watcher.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(mlflow.exceptions.MlflowException) as info:
            mi.log_scores(y, s, run_id=run.info.run_id, log_figures=False, n_bootstrap=0)
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        watcher.join(timeout=5)
    assert killed.is_set(), "the server was not killed during the upload"
    print(f"log_scores returned {elapsed:.2f} s after it started: {info.value.message}")
    assert elapsed < 30, f"log_scores took {elapsed:.1f} s after the server died"
    message = info.value.message
    assert "\n" not in message and server.url in message and "unreachable" in message
    assert f"nothing was committed to run {run.info.run_id}" in message
    assert not list(artifacts.rglob("summary.json"))  # the commit marker was never written


def test_store_timeout_is_configurable(monkeypatch):
    import mlflow_imbalance.tracking._store as store

    for key in _HTTP_KNOBS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv(store.TIMEOUT_ENV, "2.5")
    with store.fail_fast_http():
        assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "3"  # MLflow reads whole seconds
        assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "1"
    assert "MLFLOW_HTTP_REQUEST_TIMEOUT" not in os.environ
    monkeypatch.setenv(store.TIMEOUT_ENV, "off")
    with store.fail_fast_http():
        assert "MLFLOW_HTTP_REQUEST_TIMEOUT" not in os.environ  # MLflow's own settings
    monkeypatch.setenv(store.TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match="MLFLOW_IMBALANCE_STORE_TIMEOUT must be"):
        mi.log_scores(["a", "b"], [0.1, 0.8])  # refused before the data are read
    assert mlflow.active_run() is None
