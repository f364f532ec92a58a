"""Issue 32: the report loads runs from a tracking server concurrently, with the same result.

Against a real ``mlflow server`` (artifact proxy): loading with a pool of threads gives exactly
what loading one run after another gives (same RunData, order, skipped runs and reasons,
experiment), progress is reported once per run and rises by one, and a server that dies while
loading fails the load once, within seconds.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import mlflow
import numpy as np
import pytest
from mlflow.tracking import MlflowClient

import mlflow_imbalance as mi
from mlflow_imbalance.report.load import WORKERS_ENV, load_runs, load_workers, tracking_uri_set
from mlflow_imbalance.tracking._store import TrackingServerUnreachable

pytestmark = pytest.mark.server


def _scores(seed: int, n: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    y[:2] = [0, 1]
    return y, np.round(rng.normal(size=n) + (0.8 + 0.1 * seed) * y, 3)


def _log_runs(uri: str, experiment: str, n_good: int) -> list[str]:
    """``n_good`` runs with counts (one also with a production batch), one without counts,
    one under another counts name, one whose roc_counts.npz was deleted, and an unknown id."""
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    client = MlflowClient(tracking_uri=uri)
    exp_id = client.create_experiment(experiment)
    ids = []
    with tracking_uri_set(uri):
        for i in range(n_good):
            y, s = _scores(i)
            with mlflow.start_run(experiment_id=exp_id, run_name=f"model-{i}") as run:
                mlflow.log_param("depth", i)
                mlflow.set_tag("team", "a" if i % 2 else "b")
                mi.log_scores(y, s, prevalences=[1e-3], log_figures=False, keep_scores=i != 1)
                if i == 2:
                    mi.log_production_scores(s[:500], batch="2026-01")
            ids.append(run.info.run_id)
        with mlflow.start_run(experiment_id=exp_id, run_name="no-counts") as run:
            mlflow.log_param("depth", 99)
        ids.insert(2, run.info.run_id)
        y, s = _scores(7)
        with mlflow.start_run(experiment_id=exp_id, run_name="validation-only") as run:
            mi.log_scores(y, s, name="validation", log_figures=False)
        ids.insert(4, run.info.run_id)
        with mlflow.start_run(experiment_id=exp_id, run_name="deleted-counts") as run:
            mi.log_scores(y, s, log_figures=False)
        repo = get_artifact_repository(client.get_run(run.info.run_id).info.artifact_uri)
        repo.delete_artifacts("imbalance/test/roc_counts.npz")
        ids.insert(1, run.info.run_id)
    ids.insert(5, "0" * 32)  # no such run
    return ids


def _same(a: Any, b: Any, where: str = "") -> None:
    """Deep equality, arrays compared element by element."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif hasattr(a, "__dict__") and not isinstance(a, type):
        assert type(a) is type(b), where
        _same(vars(a), vars(b), where)
    elif hasattr(a, "__slots__"):
        assert type(a) is type(b), where
        for k in a.__slots__:
            _same(getattr(a, k), getattr(b, k), f"{where}.{k}")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def test_concurrent_load_equals_sequential(mlflow_server):
    ids = _log_runs(mlflow_server, "load-concurrent", n_good=6)
    with tracking_uri_set(mlflow_server):
        seq_progress: list[tuple[str, int, int]] = []
        seq = load_runs(ids, workers=1, progress=lambda *a: seq_progress.append(a))
        for workers in (8, 3):
            calls: list[tuple[str, int, int]] = []
            got = load_runs(ids, workers=workers, progress=lambda *a, c=calls: c.append(a))
            _same(got, seq, f"workers={workers}")
            assert calls == [("load", i, len(ids)) for i in range(1, len(ids) + 1)]
        # Run objects instead of ids: the same again
        runs = [MlflowClient().get_run(i) for i in ids if i != "0" * 32]
        _same(load_runs(runs, workers=4), load_runs(runs, workers=1), "Run objects")
    assert seq_progress == [("load", i, len(ids)) for i in range(1, len(ids) + 1)]

    loaded, skipped, experiment = seq
    assert experiment == "load-concurrent"
    assert [r.name for r in loaded] == [
        "model-0", "model-1", "model-2", "validation-only", "model-3", "model-4", "model-5",
    ]  # fmt: skip
    assert loaded[3].counts_name == "validation" and loaded[2].counts_name == "test"
    assert loaded[1].scores is None and loaded[0].scores is not None
    assert list(loaded[2].production) == ["2026-01"] and not loaded[3].production
    assert [s.name for s in skipped] == ["deleted-counts", "no-counts", "0" * 32]
    assert "roc_counts.npz is missing" in skipped[0].reason
    assert "no counts named 'test'" in skipped[1].reason
    assert "not found in the tracking store" in skipped[2].reason


def test_workers_from_argument_or_environment(monkeypatch):
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert load_workers() == 8
    assert load_workers(3) == 3
    monkeypatch.setenv(WORKERS_ENV, "2")
    assert load_workers() == 2
    assert load_workers(5) == 5
    for bad in ("0", "many", "1.5"):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(ValueError, match=WORKERS_ENV):
            load_workers()
    with pytest.raises(ValueError, match="workers"):
        load_workers(0)


def test_dead_server_fails_once_within_seconds(unreachable_tracking_uri):
    with tracking_uri_set(unreachable_tracking_uri):
        t0 = time.monotonic()
        with pytest.raises(TrackingServerUnreachable, match="unreachable"):
            load_runs(["a" * 32] * 20, workers=8)
    assert time.monotonic() - t0 < 10


@pytest.mark.parametrize("workers", [4, 1])
def test_server_dying_while_loading_fails_once(killable_server, monkeypatch, workers):
    """The server is killed after the first run is loaded: one TrackingServerUnreachable, in
    seconds (not one wait per thread or per run), and no run reported skipped for it. Each
    case has a fresh real server of its own (conftest's ``killable_server``)."""
    monkeypatch.delenv("MLFLOW_IMBALANCE_STORE_TIMEOUT", raising=False)
    url = killable_server.url
    ids = _log_runs(url, "dying", n_good=3)
    ids = [i for i in ids if i != "0" * 32] * 15  # 90 loads: most are left when it dies

    def kill_after_first(stage: str, done: int, total: int) -> None:
        if done == 1:  # the whole server (its workers too) gone at once
            killable_server.kill()

    with tracking_uri_set(url):
        t0 = time.monotonic()
        with pytest.raises(TrackingServerUnreachable) as info:
            load_runs(ids, workers=workers, progress=kill_after_first)
        elapsed = time.monotonic() - t0
    assert "while loading runs" in str(info.value)
    assert elapsed < 30, elapsed
