"""The decision carried into deployment (issue 40): register, serve, check -- on real stores.

Real parts only: a SQLite tracking store (``tracking_uri``), a real ``mlflow server``
(``mlflow_server``) and a real ``mlflow models serve`` process. Reference decisions are computed
directly from the fitted estimator (``predict_proba(X)[:, 1] >= t``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import mlflow_imbalance as mi

ETA_TEST = 0.1
COSTS = (1.0, 10.0)


def _data(rng: np.random.Generator, n: int, eta: float) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < eta).astype(int)
    X = rng.normal(size=(n, 4))
    X[y == 1] += np.array([1.2, 0.8, 0.5, 0.0])
    return X, y


def _train_and_log(experiment: str) -> dict:
    """Two scikit-learn models trained, logged (model + scores) to two runs; the report."""
    import mlflow
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    rng = np.random.default_rng(0)
    X_tr, y_tr = _data(rng, 4000, 0.3)
    X_te, y_te = _data(rng, 6000, ETA_TEST)
    mlflow.set_experiment(experiment)
    out: dict = {"X_te": X_te, "models": {}, "runs": {}}
    for name, est in (("logreg", LogisticRegression()), ("nb_one", GaussianNB())):
        cols = [0, 1, 2, 3] if name == "logreg" else [0, 1]
        Xf = X_tr.copy()
        Xf[:, [c for c in range(4) if c not in cols]] = 0.0
        est.fit(Xf, y_tr)
        with mlflow.start_run(run_name=name) as run:
            mlflow.sklearn.log_model(est, name="model", input_example=X_te[:3])
            mi.log_scores(y_te, est.predict_proba(X_te)[:, 1], costs=COSTS)
        out["models"][name] = est
        out["runs"][name] = run.info.run_id
    out["report"] = mi.build_report(
        list(out["runs"].values()),
        prevalences=[ETA_TEST],
        costs=COSTS,
        n_bootstrap=50,
        progress=False,
    )
    return out


def _batch(est, n: int, eta: float, seed: int) -> np.ndarray:
    X, _ = _data(np.random.default_rng(seed), n, eta)
    return est.predict_proba(X)[:, 1]


def _cli(*args: str, uri: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mlflow_imbalance.report.cli", *args, "--tracking-uri", uri],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _serve(model: str, uri: str, log: Path):
    port = _free_port()
    env = {
        **os.environ,
        "MLFLOW_TRACKING_URI": uri,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    cmd = [
        sys.executable,
        "-m",
        "mlflow",
        "models",
        "serve",
        "-m",
        model,
        "--env-manager",
        "local",
        "-h",
        "127.0.0.1",
        "-p",
        str(port),
    ]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
            try:
                with urllib.request.urlopen(f"{url}/ping", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise AssertionError("model server not up:\n" + log.read_text(errors="replace"))
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _post(url: str, X: np.ndarray, params: dict | None = None) -> np.ndarray:
    body = {"inputs": X.tolist(), **({"params": params} if params else {})}
    req = urllib.request.Request(
        f"{url}/invocations",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return np.asarray(json.loads(r.read())["predictions"], dtype=float).ravel()


# ------------------------------------------------------------------------ the whole loop
@pytest.mark.server
def test_the_loop_on_a_real_server(mlflow_server, tmp_path, monkeypatch):
    import mlflow
    from mlflow.tracking import MlflowClient

    uri = mlflow_server
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
    w = _train_and_log("deploy-loop")
    v = w["report"].verdict[0]
    assert v.decision == "run" and v.run in w["runs"]
    mv = mi.register_decision(v, name="fraud", alias="champion", report=w["report"])
    t = float(mv.tags["mlflow_imbalance.decision.threshold"])
    assert t == v.threshold  # full precision
    winner = w["models"][v.run]
    X = w["X_te"][:400]
    if v.run == "nb_one":
        X = X.copy()
        X[:, 2:] = 0.0
    expected = (winner.predict_proba(X)[:, 1] >= t).astype(int)

    # loaded through the registry: 0/1 at the threshold, scores on request
    m = mlflow.pyfunc.load_model("models:/fraud@champion")
    got = np.asarray(m.predict(X)).ravel()
    assert set(np.unique(got)) <= {0, 1}
    np.testing.assert_array_equal(got, expected)
    assert 0 < expected.sum() < len(expected)
    scores = np.asarray(m.predict(X, params={"output": "score"})).ravel()
    np.testing.assert_array_equal(scores, winner.predict_proba(X)[:, 1])
    # exactly at the threshold counts as positive (>=, as the counts)
    at = np.flatnonzero(winner.predict_proba(w["X_te"])[:, 1] == t)
    if at.size:
        assert m.predict(w["X_te"][at[:1]])[0] == 1

    # again: the same version
    again = mi.register_decision(v, name="fraud", alias="champion", report=w["report"])
    assert again.version == mv.version

    # served by `mlflow models serve`
    with _serve("models:/fraud@champion", uri, tmp_path / "serve.log") as url:
        np.testing.assert_array_equal(_post(url, X).astype(int), expected)
        np.testing.assert_allclose(
            _post(url, X, {"output": "score"}), winner.predict_proba(X)[:, 1], rtol=0, atol=1e-12
        )

    # no batch yet: unknown, exit 5
    r = _cli("check", "--model", "fraud@champion", uri=uri)
    assert r.returncode == 5, r.stdout + r.stderr
    # a batch near the decided η: holds, exit 0
    mi.log_production_scores(
        _batch(winner, 40000, ETA_TEST, 1), batch="near", run_id=w["runs"][v.run]
    )
    r = _cli("check", "--model", "fraud@champion", uri=uri)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "HOLDS" in r.stdout
    # far from it: retune / reconsider / unknown with what to do
    mi.log_production_scores(_batch(winner, 40000, 0.5, 2), batch="far", run_id=w["runs"][v.run])
    res = mi.check_decision("models:/fraud@champion")
    assert res.status in ("retune", "reconsider"), res.text
    assert res.suggested and res.suggested_regret <= res.tolerance < res.regret
    if res.status == "retune":
        assert res.suggested_threshold is not None and res.suggested_threshold != t
    r = _cli("check", "--model", "fraud@champion", uri=uri)
    assert r.returncode == {"retune": 3, "reconsider": 4}[res.status], r.stdout + r.stderr

    tags = MlflowClient(uri).get_model_version("fraud", mv.version).tags
    assert tags["mlflow_imbalance.check.status"] == res.status
    assert tags["mlflow_imbalance.check.batch"] == "far"
    assert tags["mlflow_imbalance.check.reason"] == res.reason
    dec_run = tags["mlflow_imbalance.decision.decision_run_id"]
    assert dec_run not in w["runs"].values()
    hist = MlflowClient(uri).get_metric_history(dec_run, "imb/check_regret")
    assert sorted({h.step for h in hist}) == [0, 1]

    out = tmp_path / "r.html"
    r = _cli(
        "report", "--model", "fraud@champion", "-o", str(out), "-q", "--bootstrap", "0", uri=uri
    )
    assert r.returncode == 0, r.stdout + r.stderr
    html = out.read_text()
    assert 'id="registered-decision"' in html and repr(t) in html
    assert html.index('id="registered-decision"') < html.index('id="verdict"')
