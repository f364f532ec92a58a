"""Bad input is refused up front, naming the argument, and nothing is logged or written.

A table of every bad-input case of the issue (``log_scores``, ``build_report``; the CLI's are in
test_cli.py), each checked against a real SQLite tracking store: the error names the argument,
the run holds no artifact and no metric afterwards, no run is created. Plus the hints that are
not errors: hard labels as scores, swapped arguments, a short ``LoggedCounts`` repr; thread-safe
figure styling; the Content-Security-Policy of the card.
"""

from __future__ import annotations

import re
import threading
import warnings
from pathlib import Path

import mlflow
import numpy as np
import pytest
from mlflow.tracking import MlflowClient

import mlflow_imbalance as mi
from mlflow_imbalance.core import curves
from mlflow_imbalance.tracking import log_scores

Y = np.array([0, 1, 0, 1, 1, 0, 0, 1, 0, 0])
S = np.array([0.1, 0.9, 0.35, 0.8, 0.4, 0.3, 0.2, 0.7, 0.6, 0.05])


def _nothing_logged(run_id: str) -> None:
    client = MlflowClient()
    assert client.list_artifacts(run_id) == []
    assert client.get_run(run_id).data.metrics == {}


LOG_SCORES_CASES = [
    ({"name": "a\n"}, r"name must be 1-100 characters .*'a\\n'"),
    ({"name": "../x"}, r"name must be"),
    ({"name": ""}, r"name must be"),
    ({"name": "x" * 101}, r"name must be"),
    ({"log_figures": "no"}, r"log_figures must be True or False, got 'no'"),
    ({"log_figures": 1}, r"log_figures must be True or False"),
    ({"seed": -1}, r"seed must be a non-negative integer"),
    ({"seed": 1.5}, r"seed must be a non-negative integer"),
    ({"n_bootstrap": 10}, r"n_bootstrap must be 0 .* or >= 50"),
    ({"prevalences": "0.01"}, r"prevalences must be a number or a sequence of numbers"),
    ({"prevalences": [0.01, "0.1"]}, r"prevalences must be a number or a sequence"),
    ({"prevalences": [2.0]}, r"prevalences"),
    ({"prevalences": [0.0]}, r"prevalences"),
    ({"costs": (1, -2)}, r"costs\[1\] \(cost_fn\) must be positive"),
    ({"costs": {"fp": 1, "fn": 0}}, r"costs\['fn'\] must be positive"),
    ({"costs": (True, 2)}, r"costs\[0\] \(cost_fp\) must be positive and finite, got True"),
    ({"costs": {"fp": 1}}, r"costs must have exactly the keys"),
    ({"costs": "1,2"}, r"costs must be None"),
    ({"keep_scores": "yes"}, r"keep_scores must be"),
    ({"extra_summary": {"x": object()}}, r"extra_summary must be JSON-serialisable"),
    ({"extra_summary": {1: 2}}, r"extra_summary must be a mapping with string keys"),
    ({"run_id": ""}, r"run_id must be a non-empty string"),
    ({"run_id": 5}, r"run_id must be a non-empty string"),
    ({"y_score": [0.1, np.nan, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}, r"y_score"),
    ({"y_score": S[:5]}, r"same length|y_true.*y_score"),
    ({"y_true": [0, "1", 0, 1, 1, 0, 0, 1, 0, 0]}, r"y_true"),
    ({"y_true": [0, 1, 2, 1, 1, 0, 0, 1, 0, 0]}, r"y_true must be binary"),
    ({"y_true": np.zeros(10)}, r"y_true|one class|positive"),
    ({"sample_weight": -np.ones(10)}, r"sample_weight"),
    ({"sample_weight": np.ones(3)}, r"sample_weight"),
    ({"pos_label": 7}, r"pos_label"),
]


@pytest.mark.parametrize(("kwargs", "pattern"), LOG_SCORES_CASES)
def test_log_scores_bad_input_logs_nothing(tracking_uri, kwargs, pattern):
    args = {"y_true": Y, "y_score": S, "log_figures": False, **kwargs}
    y, s = args.pop("y_true"), args.pop("y_score")
    with mlflow.start_run() as run:
        with pytest.raises(ValueError, match=pattern):
            log_scores(y, s, **args)
    _nothing_logged(run.info.run_id)


def test_tracking_uri_without_run_opens_no_orphan_run(tracking_uri, tmp_path):
    other = f"sqlite:///{tmp_path / 'other.db'}"
    before = MlflowClient(tracking_uri).search_runs(["0"])
    with pytest.raises(ValueError, match=r"tracking_uri=.* without run_id and no run is active"):
        log_scores(Y, S, tracking_uri=other, log_figures=False)
    assert mlflow.active_run() is None
    assert MlflowClient(tracking_uri).search_runs(["0"]) == before
    assert not (tmp_path / "other.db").exists()  # not even created


def test_valid_edge_values_are_accepted(tracking_uri):
    with mlflow.start_run() as run:
        log_scores(Y, S, log_figures=False, costs=(np.float32(2), np.int64(3)), seed=np.int64(4),
                   prevalences=np.float32(0.01), n_bootstrap=0)  # fmt: skip
    assert mi.load_counts(run.info.run_id).n_pos == 4


# ------------------------------------------------------------------------- build_report
def _counts():
    return mi.RocCounts.from_scores(Y, S)


BUILD_REPORT_CASES = [
    ({"seed": -1}, r"seed must be a non-negative integer"),
    ({"prevalences": "0.01"}, r"prevalences must be a number or a sequence"),
    ({"costs": {"fp": "2", "fn": 1}}, r"costs\['fp'\]"),
    ({"costs": (1, -1.0)}, r"costs\[1\] \(cost_fn\)"),
    ({"confidence": 1.5}, r"confidence"),
    ({"n_bootstrap": 10}, r"n_bootstrap must be 0 \(off\) or at least 50"),
    ({"prevalence_range": "1e-2:1e-5"}, r"prevalence_range"),
    ({"output": "/proc/x/r.html"}, r"output '/proc/x/r.html' cannot be written"),
    # issue 31: these escaped as bare int()/hash errors, or were accepted
    ({"n_bootstrap": "x"}, r"n_bootstrap must be a non-negative integer .*got 'x'"),
    ({"n_bootstrap": None}, r"n_bootstrap must be a non-negative integer .*got None"),
    ({"n_bootstrap": True}, r"n_bootstrap must be a non-negative integer"),
    ({"seed": None}, r"seed must be a non-negative integer .*got None"),
    ({"seed": "x"}, r"seed must be a non-negative integer .*got 'x'"),
    ({"seed": True}, r"seed must be a non-negative integer"),
    ({"primary_metric": ["ap"]}, r"primary_metric must be one of .*got \['ap'\]"),
    ({"primary_metric": None}, r"primary_metric must be one of"),
    ({"confidence": "0.9"}, r"confidence must lie in .*got '0.9'"),
    ({"confidence": None}, r"confidence must lie in"),
    ({"title": 3}, r"title must be a string or None, got int"),
    ({"name": ["test"]}, r"name must be a non-empty string"),
]


@pytest.mark.parametrize(("kwargs", "pattern"), BUILD_REPORT_CASES)
def test_build_report_bad_options(kwargs, pattern):
    from mlflow_imbalance.report.build import build_report

    with pytest.raises(ValueError, match=pattern):
        build_report({"a": _counts()}, **kwargs)


def test_build_report_bad_options_refused_before_any_work(tracking_uri, monkeypatch):
    """A run id to load and a bad option: the option is refused before the store is read."""
    from mlflow_imbalance.report import build

    calls = []
    original = build._collect
    monkeypatch.setattr(build, "_collect", lambda *a, **k: calls.append(a) or original(*a, **k))
    for kwargs in ({"n_bootstrap": "x"}, {"seed": None}, {"primary_metric": ["ap"]}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            build.build_report(["0" * 32], **kwargs)
    assert calls == []


@pytest.mark.parametrize("bad", [123, None, "", " abc", "a/b", "../x", 1.5, b"abc"])
@pytest.mark.parametrize("loader", ["load_counts", "load_summary", "load_scores", "list_counts"])
def test_loaders_refuse_a_bad_run_id_naming_it(loader, bad):
    with pytest.raises(ValueError, match=r"run_id must be an MLflow run id"):
        getattr(mi, loader)(bad)


def test_unknown_run_id_names_the_run_and_the_store(tracking_uri):
    from mlflow.exceptions import MlflowException

    from mlflow_imbalance.report.build import build_report

    expected = f"run 'abc' not found in the tracking store {tracking_uri}"
    for call in (
        lambda: mi.load_counts("abc"),
        lambda: mi.load_summary("abc"),
        lambda: mi.load_scores("abc"),
        lambda: mi.list_counts("abc"),
        lambda: mi.log_scores(Y, S, run_id="abc", log_figures=False, n_bootstrap=0),
    ):
        with pytest.raises(MlflowException) as info:
            call()
        assert info.value.message == expected
    with pytest.raises(ValueError) as info:
        build_report(["abc"], n_bootstrap=0)
    assert expected in str(info.value) and "SQL" not in str(info.value)


def test_build_report_output_directory_refused_before_work(tmp_path):
    from mlflow_imbalance.report.build import build_report

    with pytest.raises(ValueError, match=r"output .* is a directory"):
        build_report({"a": _counts()}, output=tmp_path, n_bootstrap=0)
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind
    assert list(tmp_path.parent.glob(f".{tmp_path.name}*")) == []


def test_build_report_accepts_numpy_scalars(tmp_path):
    from mlflow_imbalance.report.build import build_report

    report = build_report({"a": _counts()}, costs=(np.float32(2), np.int64(5)),
                          seed=np.int64(1), n_bootstrap=0)  # fmt: skip
    assert report.context["runs"]


# ------------------------------------------------------------------------- hints, not errors
def test_hard_labels_warn(tracking_uri):
    with mlflow.start_run(), pytest.warns(UserWarning, match="hard labels") as rec:
        log_scores(Y, (S > 0.5).astype(int), log_figures=False, n_bootstrap=0)
    assert sum("hard labels" in str(w.message) for w in rec) == 1


def test_swapped_arguments_hint(tracking_uri):
    rng = np.random.default_rng(0)
    y = (rng.random(3000) < 0.3).astype(int)
    s = rng.normal(size=3000)
    with mlflow.start_run() as run:
        with pytest.raises(ValueError, match=r"distinct labels.*wrong order.*log_scores\(y_true"):
            log_scores(s, y, log_figures=False)
    _nothing_logged(run.info.run_id)


def test_logged_counts_repr_is_short(tracking_uri):
    rng = np.random.default_rng(1)
    y = rng.random(20000) < 0.1
    with mlflow.start_run() as run:
        logged = log_scores(y, rng.normal(size=y.size) + y, log_figures=False, n_bootstrap=0)
    text = repr(logged)
    assert len(text) < 300 and "\n" not in text
    assert run.info.run_id in text and "n_pos=" in text and "'test'" in text


# ------------------------------------------------------------------------- threads, CSP
def test_logging_from_four_threads_leaves_rcparams_unchanged(tracking_uri):
    import matplotlib

    before = {k: v for k, v in matplotlib.rcParams.items() if k != "backend"}
    run_id = MlflowClient().create_run("0").info.run_id
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(i: int) -> None:
        try:
            rng = np.random.default_rng(i)
            y = rng.random(3000) < 0.1
            start.wait()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                log_scores(y, rng.normal(size=y.size) + y, name=f"t{i}", run_id=run_id,
                           n_bootstrap=0)  # fmt: skip
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    after = {k: v for k, v in matplotlib.rcParams.items() if k != "backend"}
    changed = sorted(k for k in before if before[k] != after[k])
    assert changed == []
    assert sorted(mi.list_counts(run_id)) == ["t0", "t1", "t2", "t3"]


def test_card_and_constant_carry_the_csp(tracking_uri, tmp_path):
    from mlflow_imbalance._csp import CONTENT_SECURITY_POLICY, csp_meta_tag

    csp = {d.split()[0]: d.split()[1:] for d in CONTENT_SECURITY_POLICY.split(";") if d.strip()}
    assert csp["default-src"] == ["'none'"]
    assert csp["script-src"] == ["'unsafe-inline'"]  # no eval, no URL
    assert csp["style-src"] == ["'unsafe-inline'"]
    assert csp["img-src"] == ["data:"]
    assert csp["connect-src"] == ["'none'"]
    assert all("http" not in " ".join(v) for v in csp.values())
    template = (Path(__file__).parents[1] / "templates" / "run_card.html.j2").read_text()
    assert csp_meta_tag() in template
    with mlflow.start_run() as run:
        log_scores(Y, S, n_bootstrap=0)
    card = MlflowClient().download_artifacts(
        run.info.run_id, "imbalance/test/card.html", str(tmp_path)
    )
    html = Path(card).read_text(encoding="utf-8")
    head = html[: html.index("</head>")]
    assert csp_meta_tag() in head
    assert re.search(r"<meta http-equiv=\"Content-Security-Policy\"", head).start() < head.index(
        "<style"
    )


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda c: curves.p3_curve("x", 0.1, [0.1]), "tpr"),
        (lambda c: curves.p3_curve(0.5, [None, "y"], [0.1]), "fpr"),
        (lambda c: c.reduce("a"), "max_points"),
        (lambda c: c.reduce(None), "max_points"),
        (lambda c: c.reduce(float("nan")), "max_points"),
        (lambda c: c.reduce([3]), "max_points"),
    ],
)
def test_p3_curve_and_reduce_name_the_bad_argument(call, argument):
    c = mi.RocCounts.from_scores([0, 1, 0, 1, 0], [0.1, 0.9, 0.3, 0.6, 0.2])
    with pytest.raises(ValueError, match=rf"^{argument} must be"):
        call(c)


def test_run_without_summary_is_skipped_naming_the_file(tracking_uri):
    import os

    rng = np.random.default_rng(0)
    y = rng.random(2000) < 0.1
    ids = []
    for name in ("kept", "broken"):
        with mlflow.start_run(run_name=name) as run:
            mi.log_scores(y, rng.normal(size=y.size) + y, log_figures=False)
        ids.append(run.info.run_id)
    store = Path(mlflow.get_run(ids[1]).info.artifact_uri.removeprefix("file://"))
    os.remove(store / "imbalance" / "test" / "summary.json")
    report = mi.build_report(ids, n_bootstrap=0, progress=False)
    (skipped,) = report.skipped
    assert skipped.run_id == ids[1] and "imbalance/test/summary.json" in skipped.reason
