"""Shared pytest fixtures: real MLflow tracking stores (no mocks).

``tracking_uri``
    A fresh SQLite tracking store in the test's ``tmp_path`` (artifacts under
    ``tmp_path/mlruns``); ``mlflow.set_tracking_uri`` is set for the test and restored after,
    and any run left active is ended. Yields the URI. A migrated template database is built once
    per session and copied, so each test pays a file copy instead of a schema migration.

``unreachable_tracking_uri``
    ``http://127.0.0.1:PORT`` of a closed local port, with MLflow's HTTP retries off and a short
    timeout (environment restored after), so logging to it fails fast.

``mlflow_server``
    A real ``mlflow server`` subprocess on 127.0.0.1 and a free port, with its own SQLite backend
    and ``--serve-artifacts`` (artifacts proxied to a directory under tmp). Session scoped;
    waits for ``/health``; yields the base URL (``http://127.0.0.1:PORT``); stopped at the end
    (its whole process group). Tests using it should be marked ``@pytest.mark.server``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """With MI_REQUIRE_ALL=1 (set by .ci/run when every optional tool is installed), a skipped
    test is a failure: CI must never pass by silently skipping the browser, Spark or framework
    tests."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("MI_REQUIRE_ALL") == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped, but MI_REQUIRE_ALL=1 requires every test to run: {reason}"


SERVER_START_TIMEOUT = 90.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def _template_tracking_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty MLflow SQLite database, created once per session."""
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("mlflow_template")
    db = root / "mlflow.db"
    uri = f"sqlite:///{db}"
    old_cwd = os.getcwd()
    os.chdir(root)
    try:
        MlflowClient(tracking_uri=uri).search_experiments()
    finally:
        os.chdir(old_cwd)
    # the store engine for this URI stays cached by MLflow; the file itself is what we copy
    assert db.exists(), "MLflow did not create the template SQLite database"
    return db


@pytest.fixture
def tracking_uri(tmp_path: Path, _template_tracking_db: Path) -> Iterator[str]:
    """A temporary SQLite tracking store; sets and restores the global tracking URI."""
    import mlflow
    from mlflow.tracking import MlflowClient

    store_dir = tmp_path / "mlflow_store"
    store_dir.mkdir()
    db = store_dir / "mlflow.db"
    shutil.copyfile(_template_tracking_db, db)
    artifacts = store_dir / "mlruns"
    with contextlib.closing(sqlite3.connect(db)) as con, con:
        con.execute(
            "UPDATE experiments SET artifact_location = ? WHERE experiment_id = 0",
            (str(artifacts / "0"),),
        )
    uri = f"sqlite:///{db}"
    # Instantiate (and let MLflow cache) the store with the cwd inside the test directory, so
    # experiments created later also get their default artifact root under tmp_path.
    old_cwd = os.getcwd()
    os.chdir(store_dir)
    try:
        MlflowClient(tracking_uri=uri).search_experiments()
    finally:
        os.chdir(old_cwd)

    from mlflow.tracking import _tracking_service

    previous_uri = _tracking_service.utils._tracking_uri
    saved_env = {k: os.environ.get(k) for k in ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_ID")}
    os.environ.pop("MLFLOW_EXPERIMENT_ID", None)
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(uri)
    try:
        yield uri
    finally:
        while mlflow.active_run() is not None:
            mlflow.end_run()
        mlflow.set_tracking_uri(previous_uri)
        # forget the experiment chosen inside the test (it lived in the deleted store)
        mlflow.tracking.fluent._active_experiment_id = None
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def unreachable_tracking_uri(monkeypatch: pytest.MonkeyPatch) -> str:
    """A tracking URI nobody listens on; MLflow fails fast against it (no retries)."""
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "0")
    return f"http://127.0.0.1:{_free_port()}"


def _wait_for_health(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"mlflow server exited with code {proc.returncode}:\n"
                + log.read_text(errors="replace")[-3000:]
            )
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError) as exc:
            last = exc
        time.sleep(0.25)
    raise RuntimeError(
        f"mlflow server at {url} not healthy after {SERVER_START_TIMEOUT}s ({last!r}):\n"
        + log.read_text(errors="replace")[-3000:]
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``mlflow server`` on 127.0.0.1 with ``--serve-artifacts``; yields its URL."""
    root = tmp_path_factory.mktemp("mlflow_server")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "mlflow",
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
        "--backend-store-uri",
        f"sqlite:///{root / 'mlflow.db'}",
        "--artifacts-destination",
        str(root / "artifacts"),
        "--serve-artifacts",
    ]
    log = root / "server.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=root, start_new_session=True
        )
    try:
        _wait_for_health(url, proc, log)
        yield url
    finally:
        _stop(proc)


# ------------------------------------------------------ figures (test_plots, test_displays)
@pytest.fixture
def ax():
    """Axes of a plain Agg figure, outside pyplot."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure()
    FigureCanvasAgg(fig)
    return fig.add_subplot()


@pytest.fixture
def no_global_state():
    """No pyplot figure is created and rcParams are unchanged (``usefixtures`` per module)."""
    import matplotlib
    import matplotlib.pyplot as plt

    before_figs = plt.get_fignums()
    before_rc = dict(matplotlib.rcParams)
    yield
    assert plt.get_fignums() == before_figs
    after_rc = dict(matplotlib.rcParams)
    changed = {k for k in before_rc if before_rc[k] != after_rc.get(k)}
    assert not changed, f"rcParams changed: {sorted(changed)}"
