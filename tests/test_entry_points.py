"""Every entry point's runs in one report (issue 29), against a real SQLite tracking store.

``log_scores``, ``autolog()`` and the XGBoost and LightGBM callbacks score the SAME test set in
one experiment; ``mlflow-imbalance report --experiment`` compares all of them, paired on the
shared examples. Runs logged under another counts name than ``"test"`` (callbacks and autolog
before they all logged under ``"test"``) are read from their only set, with a note; the
assertions hold whichever name each entry point uses.
"""

from __future__ import annotations

import logging

import mlflow
import numpy as np
import pytest
import sklearn.metrics
from click.testing import CliRunner
from sklearn.linear_model import LogisticRegression

import mlflow_imbalance as mi
from mlflow_imbalance.report.build import build_report
from mlflow_imbalance.report.cli import main
from mlflow_imbalance.tracking import autologging

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


def _split(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.12).astype(int)
    X = np.c_[y + rng.normal(size=n), 0.5 * y + rng.normal(size=n), rng.normal(size=n)]
    h = n // 2
    return X[:h], y[:h], X[h:], y[h:]


@pytest.fixture
def autolog_off():
    yield
    mi.autolog(disable=True)
    autologging._captures.clear()
    autologging._warned_once.clear()


def _log_every_entry_point() -> dict[str, str]:
    from mlflow_imbalance.integrations.lightgbm import ImbalanceCallback as LgbCallback
    from mlflow_imbalance.integrations.xgboost import ImbalanceCallback as XgbCallback

    X, y, Xt, yt = _split()
    ids = {}
    with mlflow.start_run(run_name="hook") as run:
        model = LogisticRegression(C=0.01).fit(X[:, 1:], y)
        mi.log_scores(yt, model.predict_proba(Xt[:, 1:])[:, 1], log_figures=False)
        ids["hook"] = run.info.run_id
    mi.autolog(log_figures=False)
    with mlflow.start_run(run_name="autologged") as run:
        model = LogisticRegression().fit(X, y)
        sklearn.metrics.roc_auc_score(yt, model.predict_proba(Xt)[:, 1])  # captured
        ids["autologged"] = run.info.run_id
    mi.autolog(disable=True)
    with mlflow.start_run(run_name="xgboost") as run:
        cb = XgbCallback(Xt, yt, log_figures=False)
        params = {"objective": "binary:logistic", "max_depth": 2, "nthread": 1}
        xgb.train(params, xgb.DMatrix(X, label=y), num_boost_round=6, callbacks=[cb])
        ids["xgboost"] = run.info.run_id
    with mlflow.start_run(run_name="lightgbm") as run:
        cb = LgbCallback(Xt, yt, log_figures=False)
        params = {"objective": "binary", "num_leaves": 4, "verbose": -1, "num_threads": 1}
        lgb.train(params, lgb.Dataset(X, y), num_boost_round=6, callbacks=[cb])
        ids["lightgbm"] = run.info.run_id
    return ids


def test_every_entry_point_in_one_paired_report(tracking_uri, autolog_off, tmp_path):
    mlflow.set_experiment("entry-points")
    ids = _log_every_entry_point()
    held = {run: sorted(mi.list_counts(rid)) for run, rid in ids.items()}
    assert all(len(names) == 1 for names in held.values()), held  # one set per run
    out = tmp_path / "report.html"
    res = CliRunner().invoke(main, ["report", "--experiment", "entry-points", "--tracking-uri",
                                    tracking_uri, "--prevalence", "1e-2", "--bootstrap", "50",
                                    "-o", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "left out" not in res.output and "(4 runs)" in res.output
    html = out.read_text(encoding="utf-8")
    assert "Skipped runs" not in html
    for run, rid in ids.items():
        assert f">{run}<" in html or f"{run}</" in html, run
        assert rid in html
        if held[run] != ["test"]:  # logged under another name: used, and said so
            note = f"no counts named 'test'; used its only set '{held[run][0]}'"
            assert f"Note: run '{run}' ({rid[:8]}): {note}" in res.output
            assert note in html

    rep = build_report(list(ids.values()), prevalences=[1e-2], n_bootstrap=50, progress=False)
    assert sorted(r["name"] for r in rep.context["runs"]) == sorted(ids)
    assert rep.skipped == []
    expected = {run for run, names in held.items() if names != ["test"]}
    assert len(rep.notes) == len(expected)
    assert all(any(f"run '{run}'" in n for n in rep.notes) for run in expected)
    # the same test set everywhere: every run kept its scores and shares one labels digest, so
    # the report pairs them (report/analysis/paired.py groups runs by digest and labels)
    groups = rep.context["shared_replicates"].group
    assert set(groups) == set(ids) and len(set(groups.values())) == 1
    (verdict,) = rep.verdict
    assert "paired" in verdict.test and "unpaired" not in verdict.test, verdict.test


def _log(name: str, seed: int, n: int = 500) -> None:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.1
    mi.log_scores(y, rng.normal(size=n) + y, name=name, log_figures=False, n_bootstrap=0)


def test_counts_names_fallback_several_sets_and_explicit_name(tracking_uri, tmp_path, caplog):
    mlflow.set_experiment("names")
    ids = {}
    for run, names in (("plain", ["test"]), ("old-callback", ["validation"]),
                       ("two-sets", ["validation", "autolog"])):  # fmt: skip
        with mlflow.start_run(run_name=run) as r:
            for i, name in enumerate(names):
                _log(name, seed=len(ids) * 10 + i)
            ids[run] = r.info.run_id
    with caplog.at_level(logging.WARNING, logger="mlflow_imbalance.report.build"):
        rep = build_report(list(ids.values()), n_bootstrap=0, progress=False)
    assert [r["name"] for r in rep.context["runs"]] == ["plain", "old-callback"]
    assert rep.notes == [
        f"run 'old-callback' ({ids['old-callback'][:8]}): no counts named 'test'; used its "
        "only set 'validation'"
    ]
    assert "used its only set" in rep.html
    (skip,) = rep.skipped
    assert skip.run_id == ids["two-sets"] and skip.name == "two-sets"
    assert "'autolog', 'validation'" in skip.reason and "--name" in skip.reason
    assert any(ids["two-sets"] in r.getMessage() for r in caplog.records)
    # an explicit name is taken literally: runs without that set are left out, listing theirs
    rep = build_report(list(ids.values()), name="validation", n_bootstrap=0, progress=False)
    assert [r["name"] for r in rep.context["runs"]] == ["old-callback", "two-sets"]
    assert rep.notes == []
    (skip,) = rep.skipped
    assert skip.run_id == ids["plain"] and "no counts named 'validation'; it holds 'test'" in (
        skip.reason
    )
    # the CLI: --name chooses; a --run-id whose run cannot be used is an error, exit 2
    base = [
        "report",
        "--tracking-uri",
        tracking_uri,
        "--bootstrap",
        "0",
        "-o",
        str(tmp_path / "r.html"),
    ]
    res = CliRunner().invoke(
        main, [*base, "--run-id", ids["plain"], "--run-id", ids["two-sets"][:8]]
    )
    assert res.exit_code == 2 and f"--run-id {ids['two-sets']} (two-sets) cannot be" in res.output
    assert not (tmp_path / "r.html").exists()
    res = CliRunner().invoke(main, [*base, "--run-id", ids["two-sets"], "--name", "autolog"])
    assert res.exit_code == 0, res.output


# ------------------------------------------------------------------------------ costs
def _counts():
    rng = np.random.default_rng(3)
    out = {}
    for name, sep in (("a", 1.0), ("b", 1.5)):
        y = rng.random(3000) < 0.05
        out[name] = mi.RocCounts.from_scores(y, rng.normal(size=3000) + sep * y)
    return out


def test_costs_spelled_as_in_log_scores_and_the_old_keywords_deprecated():
    counts = _counts()
    kw = {"prevalences": [1e-2], "n_bootstrap": 0, "progress": False}
    new = build_report(counts, costs={"fp": 1, "fn": 100}, **kw)
    assert new.verdict[0].criterion_key == "cost"
    pair = build_report(counts, costs=(1, 100), **kw)
    with pytest.warns(FutureWarning, match=r"costs=\{'fp': 1, 'fn': 100\}"):
        old = build_report(counts, cost_fp=1, cost_fn=100, **kw)
    for rep in (pair, old):
        assert rep.verdict[0].as_dict() == new.verdict[0].as_dict()
    with pytest.warns(FutureWarning, match="cost_fn=100"):  # the one left out is 1, as before
        only_fn = build_report(counts, cost_fn=100, **kw)
    assert only_fn.verdict[0].as_dict() == new.verdict[0].as_dict()
    with pytest.raises(ValueError, match="not both"):
        build_report(counts, costs=(1, 100), cost_fn=100, **kw)
    with pytest.raises(ValueError, match=r"costs\[1\] \(cost_fn\)"):
        build_report(counts, costs=(1, -5), **kw)
    with pytest.raises(ValueError, match=r"exactly the keys 'fp' and 'fn'"):
        build_report(counts, costs={"fp": 1}, **kw)
