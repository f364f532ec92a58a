"""The ``mlflow-imbalance`` CLI against a real temporary SQLite tracking store (no mocks)."""

from __future__ import annotations

import mlflow
import numpy as np
import pytest
from click.testing import CliRunner

from mlflow_imbalance import metrics, tracking
from mlflow_imbalance.report.cli import main
from mlflow_imbalance.report.render import _fmt


def _scores(sep: float, seed: int, n: int = 4000, prev: float = 0.05):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prev
    return y, rng.normal(size=n) + sep * y


@pytest.fixture
def store(tracking_uri):
    mlflow.set_experiment("cli-exp")
    ids = {}
    for name, sep, seed in (("lr", 1.0, 1), ("gbm", 1.6, 2)):
        with mlflow.start_run(run_name=name) as run:
            mlflow.log_param("model", name)
            y, s = _scores(sep, seed)
            tracking.log_scores(y, s, name="test")
            ids[name] = run.info.run_id
    with mlflow.start_run(run_name="no-counts") as run:
        mlflow.log_param("model", "none")
        ids["no-counts"] = run.info.run_id
    return tracking_uri, ids


def test_help_documents_every_option():
    res = CliRunner().invoke(main, ["report", "--help"])
    assert res.exit_code == 0
    for opt in (
        "--experiment",
        "--run-id",
        "--filter",
        "--name",
        "--prevalence",
        "--prevalence-range",
        "--cost-fp",
        "--cost-fn",
        "--confidence",
        "--tracking-uri",
        "--output",
        "--log-to-run",
        "--bootstrap",
        "--seed",
        "--quiet",
    ):
        assert opt in res.output, opt
    assert "Examples:" in res.output and "e.g." in res.output


def test_report_from_experiment(store, tmp_path):
    uri, ids = store
    out = tmp_path / "report.html"
    res = CliRunner().invoke(
        main,
        [
            "report",
            "--experiment",
            "cli-exp",
            "--tracking-uri",
            uri,
            "--prevalence",
            "1e-3",
            "--bootstrap",
            "0",
            "-o",
            str(out),
            "--log-to-run",
            ids["gbm"],
        ],
    )
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert "cli-exp" in html and "lr" in html and "gbm" in html
    # the run without counts is listed as skipped, with the reason, and the report renders
    assert "no-counts" in html and "Skipped runs" in html
    assert "skipped no-counts" in res.output
    # numbers equal metrics on the counts loaded back
    c = tracking.load_counts(ids["gbm"], name="test")
    assert _fmt(metrics.average_precision(c, 1e-3)) in html
    # the report was logged to the run
    arts = [a.path for a in mlflow.MlflowClient().list_artifacts(ids["gbm"], "imbalance")]
    assert "imbalance/report.html" in arts


def test_report_run_ids_and_filter(store, tmp_path):
    uri, ids = store
    out = tmp_path / "r.html"
    res = CliRunner().invoke(
        main,
        [
            "report",
            "--tracking-uri",
            uri,
            "--experiment",
            "cli-exp",
            "--filter",
            "params.model = 'gbm'",
            "--bootstrap",
            "0",
            "-q",
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert ">gbm<" in html.replace('"></span>', ">") or "gbm" in html
    assert "no-counts" not in html and res.output == ""
    res = CliRunner().invoke(
        main,
        [
            "report",
            "--tracking-uri",
            uri,
            "--run-id",
            ids["lr"],
            "--bootstrap",
            "0",
            "-q",
            "-o",
            str(tmp_path / "r2.html"),
        ],
    )
    assert res.exit_code == 0, res.output


def test_list_command(store):
    uri, ids = store
    res = CliRunner().invoke(main, ["list", "--experiment", "cli-exp", "--tracking-uri", uri])
    assert res.exit_code == 0, res.output
    lines = {line.split("\t")[0]: line for line in res.output.strip().splitlines()}
    assert lines[ids["gbm"]].endswith("test")
    assert lines[ids["no-counts"]].endswith("-")


def test_errors(store, tmp_path):
    uri, ids = store
    runner = CliRunner()
    res = runner.invoke(main, ["report", "--experiment", "nope", "--tracking-uri", uri])
    assert res.exit_code == 1 and "experiment 'nope' not found" in res.output
    res = runner.invoke(main, ["report", "--tracking-uri", uri])
    assert res.exit_code == 2 and "--experiment" in res.output
    res = runner.invoke(
        main,
        [
            "report",
            "--run-id",
            ids["no-counts"],
            "--tracking-uri",
            uri,
            "-o",
            str(tmp_path / "x.html"),
        ],
    )
    assert res.exit_code == 1 and "no run with valid counts" in res.output
    assert not (tmp_path / "x.html").exists()
    res = runner.invoke(
        main,
        ["report", "--experiment", "cli-exp", "--tracking-uri", uri, "--prevalence", "2"],
    )
    assert res.exit_code == 1 and "prevalences" in res.output
    mlflow.set_experiment("empty-exp")
    res = runner.invoke(main, ["report", "--experiment", "empty-exp", "--tracking-uri", uri])
    assert res.exit_code == 1 and "no runs found" in res.output
