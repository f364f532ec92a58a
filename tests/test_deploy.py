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
#: given, so MLflow does not infer them (a subprocess loading the model: ~10 s per model here)
REQS = ["mlflow", "numpy", "pandas", "scikit-learn"]


def _data(rng: np.random.Generator, n: int, eta: float) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < eta).astype(int)
    X = rng.normal(size=(n, 4))
    X[y == 1] += np.array([1.2, 0.8, 0.5, 0.0])
    return X, y


def _sig(X: np.ndarray):
    """The model's signature (an input example would cost a model load per log: ~3 s)."""
    from mlflow.models import infer_signature

    return infer_signature(X[:3])


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
            mlflow.sklearn.log_model(est, name="model", signature=_sig(X_te), pip_requirements=REQS)
            mi.log_scores(
                y_te, est.predict_proba(X_te)[:, 1], costs=COSTS, log_figures=False, n_bootstrap=0
            )
        out["models"][name] = est
        out["runs"][name] = run.info.run_id
    out["report"] = mi.build_report(
        list(out["runs"].values()),
        prevalences=[ETA_TEST],
        costs=COSTS,
        n_bootstrap=0,
        progress=False,
    )
    return out


def _batch(est, n: int, eta: float, seed: int) -> np.ndarray:
    X, _ = _data(np.random.default_rng(seed), n, eta)
    return est.predict_proba(X)[:, 1]


class _Result:
    def __init__(self, res) -> None:
        self.returncode, self.stdout, self.stderr = res.exit_code, res.stdout, res.stderr


def _cli(*args: str, uri: str) -> _Result:
    """The ``mlflow-imbalance`` command, in process (click's runner; stdout and stderr apart)."""
    from click.testing import CliRunner

    from mlflow_imbalance.report.cli import main

    return _Result(CliRunner().invoke(main, [*args, "--tracking-uri", uri]))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _ModelServer:
    """``mlflow models serve`` of ``model`` on a free port, started by the constructor without
    waiting (the test goes on while it boots); :meth:`wait` returns its URL once ``/ping``
    answers; :meth:`stop` ends its process group."""

    def __init__(self, model: str, uri: str, log: Path) -> None:
        self.log = log
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            "MLFLOW_TRACKING_URI": uri,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        cmd = [
            sys.executable, "-m", "mlflow", "models", "serve", "-m", model,
            "--env-manager", "local", "-h", "127.0.0.1", "-p", str(port),
        ]  # fmt: skip
        with open(log, "wb") as fh:
            self.proc = subprocess.Popen(
                cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text(errors="replace")[-2000:]
            try:
                with urllib.request.urlopen(f"{self.url}/ping", timeout=2) as r:
                    if r.status == 200:
                        return self.url
            except OSError:
                time.sleep(0.3)
        raise AssertionError("model server not up:\n" + self.log.read_text(errors="replace"))

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


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
    assert v.run_id == w["runs"][v.run]  # the verdict's own run id (issue 37's fields)
    tags0 = mv.tags
    assert tags0["mlflow_imbalance.decision.run_id"] == v.run_id
    assert tags0["mlflow_imbalance.decision.response"] == "predict_proba[:, 1]"
    assert float(tags0["mlflow_imbalance.decision.cost_fn"]) == COSTS[1]
    assert float(tags0["mlflow_imbalance.decision.prevalence"]) == ETA_TEST
    # a typed η: the verdict's threshold is the best there, so its regret over [η, η] is 0
    assert float(tags0["mlflow_imbalance.decision.regret"]) == pytest.approx(0.0, abs=1e-12)
    assert all(len(x.encode()) <= 5000 for x in tags0.values())
    assert repr(t) in mv.description
    dec_run0 = tags0["mlflow_imbalance.decision.decision_run_id"]
    rec = mlflow.artifacts.load_dict(f"runs:/{dec_run0}/decision/decision.json")
    assert sorted(c["run_id"] for c in rec["compared"]) == sorted(w["runs"].values())
    assert MlflowClient(uri).get_run(v.run_id).info.status == "FINISHED"
    winner = w["models"][v.run]
    X = w["X_te"][:400]
    if v.run == "nb_one":
        X = X.copy()
        X[:, 2:] = 0.0
    expected = (winner.predict_proba(X)[:, 1] >= t).astype(int)
    # `mlflow models serve` boots while the checks below run; it is asked at the end
    served = _ModelServer("models:/fraud@champion", uri, tmp_path / "serve.log")
    try:
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

        # no batch yet: unknown, exit 5
        r = _cli("check", "--model", "fraud@champion", uri=uri)
        assert r.returncode == 5, r.stdout + r.stderr
        # a batch near the decided η: holds, exit 0
        mi.log_production_scores(
            _batch(winner, 20000, ETA_TEST, 1), batch="near", run_id=w["runs"][v.run]
        )
        r = _cli("check", "--model", "fraud@champion", uri=uri)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "HOLDS" in r.stdout
        # far from it: retune / reconsider / unknown with what to do
        mi.log_production_scores(
            _batch(winner, 20000, 0.5, 2), batch="far", run_id=w["runs"][v.run]
        )
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

        # served by `mlflow models serve`: the registered version, 0/1 and scores on request
        url = served.wait()
        np.testing.assert_array_equal(_post(url, X).astype(int), expected)
        np.testing.assert_allclose(
            _post(url, X, {"output": "score"}), winner.predict_proba(X)[:, 1], rtol=0, atol=1e-12
        )
    finally:
        served.stop()


# ------------------------------------------------------------------ wrong input, wrong stores
def test_a_uri_mlflow_cannot_use_is_named(tracking_uri):
    with pytest.raises(ValueError, match=r"bogus://x.*cannot be used"):
        mi.check_decision("models:/fraud@champion", tracking_uri="bogus://x")
    r = _cli("check", "--model", "fraud@champion", uri="bogus://x")
    assert r.returncode == 1 and "bogus://x" in r.stderr, r.stderr


def test_model_names_and_versions_without_a_decision(tracking_uri):
    import mlflow
    from mlflow.tracking import MlflowClient

    with pytest.raises(ValueError, match=r"model must name a registered model version"):
        mi.check_decision("not a model/")
    with pytest.raises(ValueError, match=r"'nosuch'.*has no alias 'champion'"):
        mi.check_decision("models:/nosuch@champion")
    # a version registered by hand: no decision on it
    from sklearn.linear_model import LogisticRegression

    X, y = _data(np.random.default_rng(1), 300, 0.3)
    with mlflow.start_run():
        info = mlflow.sklearn.log_model(
            LogisticRegression().fit(X, y), name="m", pip_requirements=REQS
        )
    mv = mlflow.register_model(info.model_uri, "plain")
    MlflowClient().set_registered_model_alias("plain", "prod", mv.version)
    with pytest.raises(ValueError, match=r"model version plain/1 carries no mlflow-imbalance"):
        mi.check_decision("plain@prod")
    r = _cli("check", "--model", "plain/1", uri=tracking_uri)
    assert r.returncode == 1 and "plain/1 carries no" in r.stderr


def test_verdicts_that_cannot_be_registered(tracking_uri):
    from mlflow_imbalance.core.counts import RocCounts

    rng = np.random.default_rng(2)
    y = (rng.random(2000) < 0.2).astype(int)
    s = rng.normal(size=2000) + y
    rep = mi.build_report({"a": RocCounts.from_scores(y, s)}, prevalences=[0.2], costs=COSTS,
                          n_bootstrap=0, progress=False)  # fmt: skip
    v = rep.verdict[0]
    with pytest.raises(ValueError, match=r"no run_id: the report was built from counts alone"):
        mi.register_decision(v, name="fraud")
    with pytest.raises(ValueError, match=r"name must be a registered model name"):
        mi.register_decision(v, name="a/b")
    with pytest.raises(ValueError, match=r"tolerance must be a finite number >= 0, got -1"):
        mi.register_decision(v, name="fraud", tolerance=-1.0)
    from dataclasses import replace

    nothing = replace(v, run=None, decision="nothing")
    with pytest.raises(ValueError, match=r"decides 'nothing'.*no model to register"):
        mi.register_decision(nothing, name="fraud")
    from mlflow.tracking import MlflowClient

    assert MlflowClient().search_registered_models() == []


def test_a_run_without_a_model_asks_for_model_uri_and_leaves_nothing(tracking_uri):
    import mlflow
    from mlflow.tracking import MlflowClient

    rng = np.random.default_rng(3)
    y = (rng.random(1000) < 0.2).astype(int)
    with mlflow.start_run() as run:
        mi.log_scores(y, rng.normal(size=1000) + y, log_figures=False, n_bootstrap=0)
    n_runs = len(MlflowClient().search_runs([run.info.experiment_id]))
    with pytest.raises(ValueError, match=r"logged no model.*pass model_uri="):
        mi.register_decision(run_id=run.info.run_id, threshold=0.5, prevalence=0.2,
                             costs=COSTS, name="fraud")  # fmt: skip
    assert len(MlflowClient().search_runs([run.info.experiment_id])) == n_runs
    assert MlflowClient().search_registered_models() == []


def test_a_generic_pyfunc_model_is_wrapped(tracking_uri):
    """A model that is not scikit-learn: its pyfunc output's column 1 is thresholded."""
    import mlflow
    import pandas as pd

    class Proba(mlflow.pyfunc.PythonModel):
        def predict(self, context, model_input, params=None):
            x = np.asarray(model_input, dtype=float)[:, 0]
            p = 1 / (1 + np.exp(-x))
            return pd.DataFrame({"p0": 1 - p, "p1": p})

    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 2))
    y = (rng.random(3000) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    score = 1 / (1 + np.exp(-X[:, 0]))
    with mlflow.start_run() as run:
        mlflow.pyfunc.log_model(
            name="m", python_model=Proba(), input_example=X[:3], pip_requirements=REQS
        )
        mi.log_scores(y, score, log_figures=False, n_bootstrap=0)
    t = float(np.quantile(score, 0.7))
    mv = mi.register_decision(run_id=run.info.run_id, threshold=t, prevalence=(0.3, 0.5),
                              costs=COSTS, name="generic", alias="prod")  # fmt: skip
    assert mv.tags["mlflow_imbalance.decision.response"] == "output[:, 1]"
    assert mv.tags["mlflow_imbalance.decision.threshold"] == repr(t)
    assert all(len(v.encode()) <= 5000 for v in mv.tags.values())
    m = mlflow.pyfunc.load_model("models:/generic@prod")
    np.testing.assert_array_equal(np.asarray(m.predict(X)).ravel(), (score >= t).astype(int))
    res = mi.check_decision("generic@prod")
    assert res.status == "unknown" and "no production batch" in res.reason


def test_the_report_section_escapes_what_users_named(tracking_uri):
    """``report --model``'s section renders the record's strings autoescaped."""
    from mlflow_imbalance.core.counts import RocCounts

    rng = np.random.default_rng(5)
    y = (rng.random(1500) < 0.2).astype(int)
    evil = "<script>alert(1)</script>"
    decision = {
        "model": "fraud/1",
        "asked": "fraud@champion",
        "run": evil,
        "run_id": "abc",
        "threshold_text": "0.5",
        "response": "predict_proba[:, 1]",
        "eta_text": "0.1",
        "source": "typed",
        "batch": "",
        "costs_text": "C_FP = 1, C_FN = 10",
        "regret": None,
        "regret_text": "n/a",
        "tolerance": 0.1,
        "tolerance_text": "0.1",
        "created_at": "now",
        "compared": [{"name": evil, "run_id": "abc"}],
        "checks": [],
        "latest": None,
    }
    rep = mi.build_report({"a": RocCounts.from_scores(y, rng.normal(size=1500) + y)},
                          n_bootstrap=0, progress=False, decision=decision)  # fmt: skip
    assert 'id="registered-decision"' in rep.html
    assert evil not in rep.html and "&lt;script&gt;alert(1)&lt;/script&gt;" in rep.html
    assert rep.html.index('id="registered-decision"') < rep.html.index('id="verdict"')


def _one_model_decision(threshold_quantile: float = 0.9) -> tuple:
    """One logistic regression logged and registered directly (no report): (est, run id, t)."""
    import mlflow
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(6)
    X_tr, y_tr = _data(rng, 3000, 0.3)
    X_te, y_te = _data(rng, 5000, ETA_TEST)
    est = LogisticRegression().fit(X_tr, y_tr)
    s = est.predict_proba(X_te)[:, 1]
    with mlflow.start_run(run_name="lr") as run:
        mlflow.sklearn.log_model(est, name="model", signature=_sig(X_te), pip_requirements=REQS)
        mi.log_scores(y_te, s, log_figures=False, n_bootstrap=0)
    t = float(np.quantile(s, threshold_quantile))
    mi.register_decision(run_id=run.info.run_id, threshold=t, prevalence=ETA_TEST, costs=COSTS,
                         name="direct", alias="prod")  # fmt: skip
    return est, run.info.run_id, t


def test_a_drifted_batch_is_unknown_not_a_verdict(tracking_uri):
    """Negatives' scores shifted (not prior shift): the check fails, the status is unknown."""
    est, run_id, _ = _one_model_decision()
    X, y = _data(np.random.default_rng(7), 20000, ETA_TEST)
    X[y == 0, 0] += 0.6  # the negatives drift towards the positives
    mi.log_production_scores(est.predict_proba(X)[:, 1], batch="drift", run_id=run_id)
    rec = mi.list_production_batches(run_id)["drift"]
    assert rec["estimate"]["check_passed"] is False  # the premise, from the logged record
    res = mi.check_decision("direct@prod")
    assert res.status == "unknown" and res.exit_code == 5
    assert "prior-shift check failed" in res.reason and res.check_passed is False
    r = _cli("check", "--model", "models:/direct@prod", uri=tracking_uri)
    assert r.returncode == 5 and "UNKNOWN" in r.stdout
    # issue 39: the answer says how many labels would settle it, and labels drawn by the plan
    # replace the label-free interval by the audited one (read back here from the audit)
    assert res.audit_budget is not None and res.audit_budget > 0, res
    assert "plan_audit" in res.reason
    scores = est.predict_proba(X)[:, 1]
    plan = mi.plan_audit(scores, budget=300, batch="drift", run_id=run_id, seed=0)
    mi.log_audit_labels(y[plan.indices], batch="drift", run_id=run_id)
    audit = mi.load_audit(run_id, "drift")
    res = mi.check_decision("direct@prod")
    assert (res.eta_low, res.eta_high) == (audit.prevalence.low, audit.prevalence.high)
    assert res.check_passed == (not audit.roc_shifted)
    assert res.status != "unknown" or "audit" in res.reason


def test_a_dead_server_is_named_within_the_budget(unreachable_tracking_uri):
    from mlflow_imbalance.tracking._store import TrackingServerUnreachable

    t0 = time.monotonic()
    with pytest.raises(TrackingServerUnreachable, match=unreachable_tracking_uri):
        mi.check_decision("fraud@champion", tracking_uri=unreachable_tracking_uri)
    assert time.monotonic() - t0 < 10
    r = _cli("check", "--model", "fraud@champion", uri=unreachable_tracking_uri)
    assert r.returncode == 1 and unreachable_tracking_uri in r.stderr


def test_a_failed_registration_deletes_what_it_created(tracking_uri):
    import mlflow
    from mlflow.tracking import MlflowClient

    from mlflow_imbalance.deploy.register import _clean_up

    with mlflow.start_run() as run:
        pass
    left = _clean_up(MlflowClient(), "fraud", None, None, run.info.run_id)
    assert f"deleted decision run {run.info.run_id}" in left
    assert MlflowClient().get_run(run.info.run_id).info.lifecycle_stage == "deleted"
