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
    # ... and on stderr, with its id and reason; the exit status stays 0 (it was not asked for)
    assert f"Warning: run no-counts ({ids['no-counts']}) left out: no counts named 'test'" in (
        res.output
    )
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
    out = res.output.strip().splitlines()
    assert out[0] == "run_id\trun_name\tcounts"  # a header line
    lines = {line.split("\t")[0]: line for line in out[1:]}
    assert set(lines) == set(ids.values())
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
    assert res.exit_code == 2, res.output
    line = _error_line(res)
    assert f"--run-id {ids['no-counts']} (no-counts) cannot be used: no counts named" in line
    assert "no report written" in line
    assert not (tmp_path / "x.html").exists()
    res = runner.invoke(
        main,
        ["report", "--experiment", "cli-exp", "--tracking-uri", uri, "--prevalence", "2"],
    )
    assert res.exit_code == 1 and "--prevalence must lie" in res.output  # the option's name
    assert "prevalences" not in res.output
    mlflow.set_experiment("empty-exp")
    res = runner.invoke(main, ["report", "--experiment", "empty-exp", "--tracking-uri", uri])
    assert res.exit_code == 1 and "no runs found" in res.output


def _one_error_line(res) -> str:
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert "Traceback" not in res.output
    return lines[0]


def _error_line(res) -> str:
    """The one error line (progress lines of the loading may come before it)."""
    errors = [line for line in res.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "Traceback" not in res.output, res.output
    return errors[0]


def test_errors_use_option_names_and_one_line(store, tmp_path):
    uri, ids = store
    runner = CliRunner()
    base = [
        "report",
        "--experiment",
        "cli-exp",
        "--tracking-uri",
        uri,
        "-o",
        str(tmp_path / "r.html"),
    ]
    for extra, expected in (
        (["--bootstrap", "10"], "--bootstrap must be 0 (off) or at least 50"),
        (["--confidence", "1.5"], "--confidence must lie in"),
        (["--cost-fp", "-1"], "--cost-fp"),
        (["--prevalence-range", "1e-2:1e-5"], "--prevalence-range"),
    ):
        res = runner.invoke(main, base + extra)
        assert res.exit_code == 1, res.output
        line = _one_error_line(res)
        assert expected in line, line
        for python_name in ("n_bootstrap", "runs_or_counts", "cost_fp", "prevalence_range"):
            assert python_name not in line
    assert not (tmp_path / "r.html").exists()
    res = runner.invoke(main, ["report", "--run-id", ids["lr"], "--tracking-uri", uri, "-o",
                               str(tmp_path)])  # fmt: skip
    assert res.exit_code == 2 and "--output" in res.output and "directory" in res.output
    res = runner.invoke(main, ["report", "--run-id", ids["lr"], "--tracking-uri", uri, "-o",
                               "/proc/x/r.html"])  # fmt: skip
    assert res.exit_code == 2 and "/proc/x" in res.output and "does not exist" in res.output
    res = runner.invoke(main, ["list", "--experiment", "x", "--tracking-uri", "bogus-scheme://x"])
    line = _one_error_line(res)
    assert "--tracking-uri 'bogus-scheme://x'" in line and "registry" not in line


def test_experiment_and_run_of_another_experiment(store, tmp_path):
    uri, _ = store
    mlflow.set_experiment("other-exp")
    with mlflow.start_run() as run:
        tracking.log_scores(*_scores(1.0, 5), log_figures=False)
    res = CliRunner().invoke(main, ["report", "--experiment", "cli-exp", "--run-id",
                                    run.info.run_id, "--tracking-uri", uri, "-o",
                                    str(tmp_path / "r.html")])  # fmt: skip
    line = _one_error_line(res)
    assert "belongs to experiment 'other-exp'" in line and res.exit_code == 2
    assert not (tmp_path / "r.html").exists()


def test_read_commands_never_create_a_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    import mlflow.tracking._tracking_service.utils as tsu

    monkeypatch.setattr(tsu, "_tracking_uri", None)
    for args in (["list", "--experiment", "x"], ["report", "--experiment", "x"]):
        res = CliRunner().invoke(main, args)
        line = _one_error_line(res)
        assert res.exit_code == 1 and "no MLflow tracking store" in line and "mlflow.db" in line
    res = CliRunner().invoke(main, ["list", "--experiment", "x", "--tracking-uri",
                                    f"sqlite:///{tmp_path / 'nope.db'}"])  # fmt: skip
    assert "does not exist" in _one_error_line(res)
    assert list(tmp_path.iterdir()) == []


def test_debug_shows_the_traceback(store):
    uri, _ = store
    res = CliRunner().invoke(main, ["--debug", "report", "--experiment", "nope",
                                    "--tracking-uri", uri])  # fmt: skip
    assert res.exit_code != 0 and res.exception is not None
    assert "not found" in str(res.exception)


def test_log_to_run_uses_the_documented_name_and_says_so(store, tmp_path):
    uri, ids = store
    out = tmp_path / "fraud-q3.html"
    res = CliRunner().invoke(main, ["report", "--run-id", ids["lr"], "--run-id", ids["gbm"],
                                    "--tracking-uri", uri, "--bootstrap", "0", "-o", str(out),
                                    "--log-to-run", ids["lr"]])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert f"Logged the report to run {ids['lr']} as imbalance/report.html" in res.output
    from mlflow.tracking import MlflowClient

    names = [f.path for f in MlflowClient(uri).list_artifacts(ids["lr"], "imbalance")]
    assert "imbalance/report.html" in names and "imbalance/fraud-q3.html" not in names
    local = MlflowClient(uri).download_artifacts(ids["lr"], "imbalance/report.html", str(tmp_path))
    assert open(local, encoding="utf-8").read() == out.read_text(encoding="utf-8")


# ------------------------------------------------------- --run-id: prefixes, errors (issue 29)
def _report_args(uri, out, *run_ids):
    args = ["report", "--tracking-uri", uri, "--bootstrap", "0", "-o", str(out)]
    for rid in run_ids:
        args += ["--run-id", rid]
    return args


def _give_ids(uri, renames):
    """Give runs chosen ids, in the real SQLite store (MLflow draws uuid4 ids: two runs sharing
    an 8-character prefix never happen by chance in a test)."""
    import contextlib
    import sqlite3

    db = uri.removeprefix("sqlite:///")
    with contextlib.closing(sqlite3.connect(db)) as con, con:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for old, new in renames.items():
            for table in tables:
                cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
                if "run_uuid" in cols:
                    con.execute(f"UPDATE {table} SET run_uuid = ? WHERE run_uuid = ?", (new, old))


def test_run_id_prefix_resolves_and_errors_name_the_id(store, tmp_path):
    uri, ids = store
    runner = CliRunner()
    out = tmp_path / "r.html"
    # the 8 characters the report's Run id column shows resolve, without --experiment too
    res = runner.invoke(main, _report_args(uri, out, ids["gbm"][:8], ids["lr"][:10]))
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert ids["gbm"] in html and ids["lr"] in html and "Skipped runs" not in html
    # ... and within --experiment
    res = runner.invoke(main, [*_report_args(uri, out, ids["gbm"][:8]), "-e", "cli-exp"])
    assert res.exit_code == 0, res.output
    # an id that matches no run: exit 2 naming it, nothing written
    out.unlink()
    for missing in ("0123abcd", "0123abcd" * 4):
        res = runner.invoke(main, _report_args(uri, out, ids["gbm"], missing))
        assert res.exit_code == 2, res.output
        assert f"--run-id '{missing}': no run" in _one_error_line(res)
        assert not out.exists()
    # too short a prefix: says how long it must be
    res = runner.invoke(main, _report_args(uri, out, ids["gbm"][:7]))
    line = _one_error_line(res)
    assert res.exit_code == 2 and f"--run-id '{ids['gbm'][:7]}' is too short" in line
    assert "at least 8 characters" in line
    res = runner.invoke(main, _report_args(uri, out, "b1ea36fd'; --"))
    assert res.exit_code == 2 and "is not a run id" in _one_error_line(res)


def test_ambiguous_run_id_prefix_lists_the_candidates(tracking_uri, tmp_path):
    mlflow.set_experiment("ambiguous")
    made = []
    for name in ("first", "second"):
        with mlflow.start_run(run_name=name) as run:
            made.append(run.info.run_id)
    a, b = "b1ea36fd" + "0" * 23 + "1", "b1ea36fd" + "0" * 23 + "2"
    _give_ids(tracking_uri, {made[0]: a, made[1]: b})
    runner = CliRunner()
    for extra in ([], ["-e", "ambiguous"]):
        res = runner.invoke(main, [*_report_args(tracking_uri, tmp_path / "r.html", "b1ea36fd"),
                                   *extra])  # fmt: skip
        line = _one_error_line(res)
        assert res.exit_code == 2 and "--run-id 'b1ea36fd' is ambiguous" in line
        assert f"{a} (first)" in line and f"{b} (second)" in line
    # the full id picks one (that run has no counts: that is the error now)
    res = runner.invoke(main, _report_args(tracking_uri, tmp_path / "r.html", b[:-1] + "2"))
    assert res.exit_code == 2 and f"--run-id {b} (second) cannot be used" in res.output


def test_build_report_warns_for_every_skipped_run(store, caplog):
    from mlflow_imbalance.report.build import build_report

    _, ids = store
    with caplog.at_level("WARNING", logger="mlflow_imbalance.report.build"):
        rep = build_report(
            [ids["lr"], ids["no-counts"], "f" * 32, ids["gbm"]], n_bootstrap=0, progress=False
        )
    assert [r["name"] for r in rep.context["runs"]] == ["lr", "gbm"]
    skipped = {s.run_id: s for s in rep.skipped}
    assert set(skipped) == {ids["no-counts"], "f" * 32}
    assert skipped[ids["no-counts"]].name == "no-counts"
    assert "no counts named 'test'" in skipped[ids["no-counts"]].reason
    assert "f" * 32 in skipped["f" * 32].reason  # MLflow's own "run not found" message
    logged = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(logged) == 2, logged
    assert any(ids["no-counts"] in m and "no counts named 'test'" in m for m in logged)
    assert any("f" * 32 in m and "left out" in m for m in logged)
    assert rep.notes == []


def test_terminal_control_characters_are_escaped(tracking_uri, tmp_path):
    mlflow.set_experiment("escapes")
    evil = "gbm\x1b]0;pwned\x07\x1b[2J\nfake line\t\u202e"
    with mlflow.start_run(run_name=evil) as run:
        tracking.log_scores(*_scores(1.6, 2, n=600), log_figures=False, n_bootstrap=0)
    with mlflow.start_run(run_name="bad\x1b[31m"):
        pass
    res = CliRunner().invoke(main, ["list", "-e", "escapes", "--tracking-uri", tracking_uri])
    assert res.exit_code == 0 and "\x1b" not in res.output and "\u202e" not in res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 3  # the newline in the name did not forge a line
    row = next(line for line in lines if line.startswith(run.info.run_id))
    assert row.split("\t")[1] == r"gbm\x1b]0;pwned\x07\x1b[2J\nfake line\t\u202e"
    args = ["report", "-e", "escapes", "--tracking-uri", tracking_uri, "--bootstrap", "0"]
    res = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\u202e" not in res.output
    assert r"Warning: run bad\x1b[31m (" in res.output  # the skipped line
    assert r"gbm\x1b]0;pwned" in res.output  # the verdict names the run, escaped


def test_store_errors_escape_terminal_controls_in_the_uri(tmp_path):
    """The URI comes from --tracking-uri or MLFLOW_TRACKING_URI: its errors are escaped too."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    evil = "\x1b]0;pwned\x07\x1b[2J\u202e"
    for uri in (
        f"http://127.0.0.1:{port}/{evil}",  # unreachable server
        f"sqlite:///{tmp_path}/{evil}/mlflow.db",  # no store there
    ):
        for args in (["list", "-e", "x"], ["report", "-e", "x", "-o", str(tmp_path / "r.html")]):
            res = CliRunner().invoke(main, [*args, "--tracking-uri", uri])
            assert res.exit_code != 0
            assert "\x1b" not in res.output and "\u202e" not in res.output, repr(res.output)
            assert r"\x1b]0;pwned\x07\x1b[2J\u202e" in res.output, res.output


def test_report_at_the_production_estimate_and_batch_options(tracking_uri, tmp_path):
    """Issue 33: the CLI gives the verdict at the latest production batch's estimate (and
    says so), --batch picks another batch, --no-production ignores them, and an unknown batch
    is an error naming it."""
    import mlflow_imbalance as mi
    from mlflow_imbalance.report.render import _fmt_eta

    rng = np.random.default_rng(4)
    y = rng.random(20_000) < 0.05
    s = rng.normal(size=y.size) + 2 * y
    with mlflow.start_run(run_name="model") as run:
        mi.log_scores(y, s, n_bootstrap=0, costs={"fp": 1, "fn": 50})
    for label, eta in (("w1", 0.01), ("w2", 0.002)):
        pos = rng.random(100_000) < eta
        mi.log_production_scores(rng.normal(size=pos.size) + 2 * pos, batch=label,
                                 run_id=run.info.run_id)  # fmt: skip
    est = {b: r["estimate"] for b, r in mi.list_production_batches(run.info.run_id).items()}
    base = ["report", "--run-id", run.info.run_id, "--bootstrap", "0", "-o"]
    res = CliRunner().invoke(main, [*base, str(tmp_path / "a.html")])
    assert res.exit_code == 0, res.output
    assert "is estimated from production batch w2" in res.output
    shown = _fmt_eta(float(f"{est['w2']['value']:.3g}"))
    # the verdict over the latest estimate's interval (issue 37), its numbers at the estimate
    lo, hi = est["w2"]["interval"]
    over = f"Over η between {_fmt_eta(lo) if lo > 0 else '0'} and {_fmt_eta(hi)}"
    assert over in res.output and f"at η = {shown}, " in res.output, res.output
    assert "ship model at threshold" in res.output
    res = CliRunner().invoke(main, [*base, str(tmp_path / "b.html"), "--batch", "w1"])
    assert res.exit_code == 0 and "production batch w1" in res.output, res.output
    res = CliRunner().invoke(main, [*base, str(tmp_path / "c.html"), "--no-production"])
    assert res.exit_code == 0 and "production batch" not in res.output, res.output
    res = CliRunner().invoke(main, [*base, str(tmp_path / "d.html"), "--batch", "w9"])
    assert res.exit_code != 0 and "w9" in res.output
