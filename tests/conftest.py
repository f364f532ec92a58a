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
    (its whole process group). Tests using it should be marked ``@pytest.mark.server``. It is
    started in the background as soon as collection shows a test needs it, so its start-up
    overlaps the tests before that one.

``killable_server``
    A fresh real ``mlflow server`` (from the migrated template database) for a test that kills
    it; stopped after the test if it is still alive. A module's servers are started one ahead
    of the test that takes them (``killable_servers``), so a server starts while the previous
    test runs.

Every ``mlflow server`` started here runs with ``MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false``:
MLflow 3's job runner (a GenAI feature this package never uses) otherwise starts eight more
Python processes per server (a job runner and seven huey consumers, each importing MLflow),
which cost ~25 s of CPU per start and keep polling while the server lives.

``spark``
    One local ``SparkSession`` (local[2]) for the whole session, shared by test_spark.py and
    test_production.py; created when a Spark test first runs, skipped without pyspark, pyarrow,
    pandas or Java.

``browser``
    One headless Chromium (``test_browser.Chromium``) per module; tests set their viewport
    with ``browser.at(width, height)`` and load their page with ``open``.

``quickstart_run``, ``digits_run``
    ``examples/quickstart.py`` and ``examples/digits.py`` run as a user runs them: a fresh
    process in an empty directory with its own SQLite store (``MLFLOW_TRACKING_URI``). Started
    in the background as soon as collection shows a test needs one (the script runs while the
    tests before it do, on the core they leave idle); the fixture waits for it to end.
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
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

# One OpenMP / BLAS thread per process (unless the caller set a number): the suite runs on two
# cores beside its own servers, browser and JVM, where OpenMP's spinning threads slow down
# rather than speed up (scikit-learn's HistGradientBoosting in the quick start: 4.6 s with the
# default two threads on a busy machine, 0.34 s with one; the same model either way). Set
# before any numerical library starts its thread pool; inherited by every subprocess.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


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


#: The environment of every ``mlflow server`` the tests start: no job runner (see above).
SERVER_ENV = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


def server_env() -> dict[str, str]:
    """``os.environ`` with :data:`SERVER_ENV` (for ``mlflow server`` subprocesses)."""
    return {**os.environ, **SERVER_ENV}


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
        time.sleep(0.1)
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


class MlflowServer:
    """A real ``mlflow server`` subprocess (SQLite backend, ``--serve-artifacts``) on a free
    port of 127.0.0.1, in its own process group; started by the constructor without waiting.

    ``root`` holds its database (``mlflow.db``, copied from ``template_db`` when given: an
    already migrated database starts faster; its default experiment's artifacts then go through
    the server's proxy, ``mlflow-artifacts:/0``, as a fresh server's do), ``artifacts/`` and
    ``server.log``.
    """

    def __init__(self, root: Path, template_db: Path | None = None) -> None:
        self.root = root
        if template_db is not None:
            db = root / "mlflow.db"
            shutil.copyfile(template_db, db)
            with contextlib.closing(sqlite3.connect(db)) as con, con:
                con.execute(
                    "UPDATE experiments SET artifact_location = 'mlflow-artifacts:/0'"
                    " WHERE experiment_id = 0"
                )
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = root / "server.log"
        cmd = [
            sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
            "--workers", "1", "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
            "--artifacts-destination", str(root / "artifacts"), "--serve-artifacts",
        ]  # fmt: skip
        with open(self.log, "wb") as fh:
            self.proc = subprocess.Popen(
                cmd,
                stdout=fh,
                stderr=subprocess.STDOUT,
                cwd=root,
                env=server_env(),
                start_new_session=True,
            )
        self._healthy = False

    def wait(self) -> MlflowServer:
        """Block until ``/health`` answers (or raise with the log's tail)."""
        if not self._healthy:
            try:
                _wait_for_health(self.url, self.proc, self.log)
            except BaseException:
                self.kill()
                raise
            self._healthy = True
        return self

    def kill(self) -> None:
        """SIGKILL the whole process group at once (the server and its workers)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        _stop(self.proc)


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


class ExampleRun:
    """``python examples/<script>`` in the empty directory ``root`` with
    ``MLFLOW_TRACKING_URI=sqlite:///<root>/mlflow.db``, started by the constructor without
    waiting (output to files, so a full pipe never stalls it)."""

    def __init__(self, script: str, root: Path) -> None:
        self.script, self.dir = script, root
        root.mkdir(parents=True, exist_ok=True)
        self.tracking_uri = f"sqlite:///{root / 'mlflow.db'}"
        logs = root.parent / f"{root.name}-output"
        logs.mkdir()
        self._out, self._err = logs / "stdout.txt", logs / "stderr.txt"
        env = {**os.environ, "MLFLOW_TRACKING_URI": self.tracking_uri}
        with open(self._out, "wb") as out, open(self._err, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(EXAMPLES / script)],
                cwd=root,
                env=env,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )

    def result(self, timeout: float) -> subprocess.CompletedProcess[str]:
        """Wait for the script (killed after ``timeout`` s in all); its exit code and output."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        return subprocess.CompletedProcess(
            self.proc.args,
            self.proc.returncode,
            self._out.read_text(encoding="utf-8", errors="replace"),
            self._err.read_text(encoding="utf-8", errors="replace"),
        )

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


#: Example runs by fixture name.
_EXAMPLE_FIXTURES = {"quickstart_run": "quickstart.py", "digits_run": "digits.py"}
# what collection showed the session will need: its server and example runs, started at once
_STARTED: dict[str, object] = {}


def _scratch(prefix: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"mi-{prefix}-"))
    _STARTED.setdefault("dirs", []).append(root)  # type: ignore[union-attr]
    return root


def _example_run(name: str) -> ExampleRun:
    run = _STARTED.get(name)
    if not isinstance(run, ExampleRun):  # e.g. requested through getfixturevalue
        run = ExampleRun(_EXAMPLE_FIXTURES[name], _scratch(name) / "run")
        _STARTED[name] = run
    return run


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    needed = set()
    for item in session.items:
        needed.update(getattr(item, "fixturenames", ()))
    if "mlflow_server" in needed:
        _STARTED["mlflow_server"] = MlflowServer(_scratch("mlflow-server"))
    for name in sorted(_EXAMPLE_FIXTURES.keys() & needed):
        _STARTED[name] = ExampleRun(_EXAMPLE_FIXTURES[name], _scratch(name) / "run")


def pytest_sessionfinish(session: pytest.Session) -> None:
    for started in list(_STARTED.values()):
        if isinstance(started, MlflowServer):
            started.stop()
        elif isinstance(started, ExampleRun):
            started.kill()
    for root in _STARTED.pop("dirs", []):  # type: ignore[union-attr]
        shutil.rmtree(root, ignore_errors=True)
    _STARTED.clear()


@pytest.fixture(scope="session")
def quickstart_run() -> ExampleRun:
    """``examples/quickstart.py``, run as a user runs it (started at collection)."""
    return _example_run("quickstart_run")


@pytest.fixture(scope="session")
def digits_run() -> ExampleRun:
    """``examples/digits.py``, run as a user runs it (started at collection)."""
    return _example_run("digits_run")


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``mlflow server`` on 127.0.0.1 with ``--serve-artifacts``; yields its URL."""
    server = _STARTED.get("mlflow_server")
    if not isinstance(server, MlflowServer):  # e.g. requested through getfixturevalue
        server = MlflowServer(tmp_path_factory.mktemp("mlflow_server"))
        _STARTED["mlflow_server"] = server
    try:
        yield server.wait().url
    finally:
        server.stop()


class _ServerPool:
    """Fresh killable servers for one module, each started while the test before it runs."""

    def __init__(self, factory: pytest.TempPathFactory, template: Path, needed: int) -> None:
        self.factory, self.template, self.left = factory, template, needed
        self.ready: list[MlflowServer] = []
        self._start(min(2, needed))  # the first test's server and the next one

    def _start(self, n: int) -> None:
        for _ in range(n):
            self.ready.append(MlflowServer(self.factory.mktemp("server"), self.template))
            self.left -= 1

    def take(self) -> MlflowServer:
        if not self.ready:
            self._start(1)
        server = self.ready.pop(0)
        if self.left > 0 and len(self.ready) < 1:
            self._start(1)
        return server.wait()

    def close(self) -> None:
        for server in self.ready:
            server.kill()


@pytest.fixture(scope="module")
def killable_servers(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    _template_tracking_db: Path,
) -> Iterator[_ServerPool]:
    needed = sum(
        1
        for item in request.session.items
        if getattr(item, "module", None) is request.module
        and "killable_server" in getattr(item, "fixturenames", ())
    )
    pool = _ServerPool(tmp_path_factory, _template_tracking_db, max(needed, 1))
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module", autouse=True)
def _start_killable_servers(request: pytest.FixtureRequest) -> None:
    """In a module with tests that take a ``killable_server``, start the first ones with the
    module's first test (they come up while the tests before theirs run)."""
    if any(
        getattr(item, "module", None) is request.module
        and "killable_server" in getattr(item, "fixturenames", ())
        for item in request.session.items
    ):
        request.getfixturevalue("killable_servers")


@pytest.fixture
def killable_server(killable_servers: _ServerPool) -> Iterator[MlflowServer]:
    """A fresh real ``mlflow server`` of this test's own, to kill (stopped after it if alive)."""
    server = killable_servers.take()
    try:
        yield server
    finally:
        server.kill()


# ------------------------------------------------------------------------ Spark, Chromium
@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the session (test_spark.py and test_production.py)."""
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark tests need Java (java not on PATH, JAVA_HOME unset)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("mlflow-imbalance-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "500")  # several batches a task
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    """One headless Chromium for the module (``test_browser.Chromium``, 1280 x 900 at first)."""
    from test_browser import Chromium

    with Chromium(tmp_path_factory.mktemp("chromium"), width=1280, height=900) as page:
        yield page


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
