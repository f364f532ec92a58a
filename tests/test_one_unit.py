"""One number, one unit (issue 29): every entry point logs under one name, and the threshold, the
expected cost and the precision at a deployment prevalence read the same in ``summary.json``,
the MLflow metrics, the run card, the report (its HTML and ``report.verdict``) and the CLI.

Reference values are computed here from scikit-learn, never taken from our own output: the
lowest expected cost C_FP·FPR·(1−η) + C_FN·(1−TPR)·η over the points of ``roc_curve``, times the
cases it is quoted per (10,000 when η ≥ 1e-3, else 1,000,000), and precision at η as
``precision_score`` with the negatives re-weighted to η. Everything runs on a real SQLite
tracking store (the ``tracking_uri`` fixture); nothing is mocked.
"""

from __future__ import annotations

import html
import math
import re
import warnings
from pathlib import Path

import mlflow
import numpy as np
import pytest
from click.testing import CliRunner
from mlflow.tracking import MlflowClient
from sklearn import metrics as skm  # through the module: autolog() finds no stale names

import mlflow_imbalance as mi
from mlflow_imbalance import tracking
from mlflow_imbalance.report.cli import main

COSTS = {"fp": 1, "fn": 100}
ETAS = (1e-4, 1e-3)
#: the η of each deployment prevalence as the card's and the report's sentences write it (one way)
ETA_CARD = ETA_REPORT = {1e-4: "1e-4", 1e-3: "0.001", 2e-3: "0.002"}
NUMBER = r"-?[\d,]*\.?\d+(?:e-?\d+)?"


def _data(seed: int = 0, n: int = 20_000, prevalence: float = 0.05):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(int)
    y[:2] = [0, 1]
    return y, rng.normal(size=n) + 2.0 * y


def _per(eta: float) -> int:
    """Cases a cost is quoted per, written out here: 10,000 when η ≥ 1e-3, else 10⁶."""
    return 10_000 if eta >= 1e-3 else 1_000_000


def _weights(y: np.ndarray, eta: float) -> np.ndarray:
    """Sample weights that move the test set to prevalence η (negatives re-weighted)."""
    n_pos, n_neg = y.sum(), (1 - y).sum()
    return np.where(y == 1, 1.0, n_pos * (1 - eta) / (eta * n_neg))


def _reference(y: np.ndarray, s: np.ndarray, eta: float) -> dict[str, float]:
    """The cost-optimal point at η from scikit-learn: threshold, cost per N cases, precision."""
    fpr, tpr, thr = skm.roc_curve(y, s, drop_intermediate=False)
    cost = COSTS["fp"] * fpr * (1 - eta) + COSTS["fn"] * (1 - tpr) * eta
    k = int(np.flatnonzero(cost == cost.min())[0])  # the lowest FPR on ties
    assert np.isfinite(thr[k]), "the data must make some threshold cheaper than flagging nothing"
    w = _weights(y, eta)
    return {
        "threshold": float(thr[k]),
        "cost": float(cost[k]) * _per(eta),
        "precision": float(skm.precision_score(y, s >= thr[k], sample_weight=w)),
    }


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _agrees(shown: str, value: float) -> bool:
    """Whether ``shown`` (e.g. ``"6,426"``, ``"0.0424"``, ``"3.1e-5"``) is ``value`` rounded."""
    text = shown.replace(",", "")
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2]) - (int(exponent) if exponent else 0)
    return abs(float(text) - value) <= 0.5 * 10.0**-decimals * (1 + 1e-9)


def _text(markup: str) -> str:
    """The visible text of HTML (tags dropped, entities decoded, spaces collapsed)."""
    markup = re.sub(r"<(script|style)\b.*?</\1>", " ", markup, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", markup)))


def _sentence(text: str, eta: float, card: bool) -> dict[str, str]:
    """Threshold, cost, its unit and precision as the first verdict at η in ``text`` shows them.

    The sentence (report.verdict, the CLI, the card, the report's live verdict) reads "At η =
    1e-4: ship A at threshold 0.8637 (lowest expected cost, 6,426 [...] per 1,000,000 cases
    with C_FP = 1, C_FN = 100). Per 1,000,000 cases: ... precision 0.0424 ..."; the report's
    printed verdict lays the same numbers out as "... at threshold 0.8637 Expected cost: 6,426
    [...] per 1,000,000 cases. ... Precision 0.0424".
    """
    eta_shown = ETA_CARD[eta] if card else ETA_REPORT[eta]
    start = re.search(rf"At η = {eta_shown}(?: \(deployment\))? ?:", text)
    assert start is not None, f"no verdict at η = {eta} in {text[:2000]!r}"
    part = text[start.end() :]
    part = part[: part.find("At η =")] if "At η =" in part else part
    found = {
        "threshold": re.search(rf"threshold ({NUMBER})", part),
        "cost": re.search(rf"(?:lowest expected cost, |Expected cost: )({NUMBER})", part),
        "per": re.search(r"per ([\d,]+) cases(?: with C_FP = 1, C_FN = 100\))?", part),
        "precision": re.search(rf"[Pp]recision ({NUMBER})", part),
    }
    assert all(found.values()), (eta, found, part[:600])
    assert "C_FP = 1, C_FN = 100" in part or not card, part[:600]
    return {k: m.group(1) for k, m in found.items()}


@pytest.fixture
def logged(tracking_uri):
    y, s = _data()
    with mlflow.start_run(run_name="one-unit") as run:
        res = mi.log_scores(y, s, prevalences=list(ETAS), costs=COSTS, n_bootstrap=50)
    return {"run_id": run.info.run_id, "y": y, "s": s, "summary": res.summary, "uri": tracking_uri}


def test_threshold_cost_and_precision_agree_everywhere(logged, tmp_path: Path):
    run_id, y, s = logged["run_id"], logged["y"], logged["s"]
    client = MlflowClient()
    metrics = client.get_run(run_id).data.metrics
    summary = mi.load_summary(run_id)
    rows = {r["prevalence"]: r for r in summary["headline"]["at_prevalence"]}
    local = client.download_artifacts(run_id, "imbalance/test/card.html", str(tmp_path))
    card = _text(Path(local).read_text(encoding="utf-8"))

    report = mi.build_report([run_id], n_bootstrap=200, output=tmp_path / "report.html")
    report_html = _text((tmp_path / "report.html").read_text(encoding="utf-8"))
    verdicts = {v.prevalence: v for v in report.verdict}

    out = tmp_path / "cli.html"
    res = CliRunner().invoke(
        main,
        ["report", "--run-id", run_id, "--tracking-uri", logged["uri"], "--bootstrap", "200",
         "-o", str(out), "--quiet"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    # --quiet drops the summary line and the verdict: print it as the CLI does
    res = CliRunner().invoke(
        main,
        ["report", "--run-id", run_id, "--tracking-uri", logged["uri"], "--bootstrap", "200",
         "-o", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    cli = res.output

    for eta in ETAS:
        ref = _reference(y, s, eta)
        label = tracking.eta_label(eta)
        unit = {10_000: "10k", 1_000_000: "1m"}[_per(eta)]
        mc = rows[eta]["min_cost"]
        # summary.json: full numbers, and the per-N value labelled with its N
        assert mc["threshold"] == ref["threshold"]
        assert mc["per_cases"] == _per(eta)
        assert mc["expected_cost_per_cases"] == pytest.approx(ref["cost"], rel=1e-12)
        assert mc["expected_cost"] * _per(eta) == pytest.approx(ref["cost"], rel=1e-12)
        assert mc["precision"]["value"] == pytest.approx(ref["precision"], rel=1e-12)
        # MLflow: the same numbers, under keys that say what they are and in which unit
        assert metrics[f"imb/cost_threshold {label} test"] == ref["threshold"]
        assert metrics[f"imb/min_cost_per_{unit} {label} test"] == pytest.approx(
            ref["cost"], rel=1e-12
        )
        assert metrics[f"imb/prec_cost {label} test"] == pytest.approx(ref["precision"], rel=1e-12)
        assert not any(k.startswith("imb/min_cost ") for k in metrics)  # no unit-less cost key
        # the report's verdict object and its sentences: HTML, card, CLI
        v = verdicts[eta]
        assert v.criterion_key == "cost" and v.per == _per(eta)
        # issue 37: where the run's lowest-cost interval reaches flagging nothing's cost
        # (η·C_FN, computed here), every surface says "flag nothing" instead of a threshold
        upper = mc["expected_cost_interval"][1]
        if upper >= eta * COSTS["fn"]:
            assert v.decision == "nothing" and v.run is None and v.threshold == math.inf
            assert (
                v.runner_up == "one-unit"
                and v.runner_up_high * v.per >= eta * COSTS["fn"] * v.per * 0.999
            )
            for where, text in (("report.verdict", v.text), ("CLI", cli), ("card", card)):
                assert re.search(
                    r"At η = [^:]*: flag nothing \(no (run|threshold) is shown", text
                ), where
            continue
        assert v.decision == "run"
        assert v.threshold == ref["threshold"]
        assert v.value * v.per == pytest.approx(ref["cost"], rel=1e-12)
        assert v.precision == pytest.approx(ref["precision"], rel=1e-12)
        shown = {
            "report.verdict": _sentence(v.text, eta, card=False),
            "report HTML": _sentence(report_html, eta, card=False),
            "CLI": _sentence(cli, eta, card=False),
            "card": _sentence(card, eta, card=True),
        }
        for where, got in shown.items():
            assert _number(got["per"]) == _per(eta), where
            for what in ("threshold", "cost", "precision"):
                assert _agrees(got[what], ref[what]), (where, what, got[what], ref[what])
        # and to the character: one formatter's output, wherever it is shown
        assert len({tuple(sorted(got.items())) for got in shown.values()}) == 1, shown
        # the card's table: the verdict's threshold, labelled, and the cost in the same unit
        cell = rf"{ETA_REPORT[eta] if eta == 1e-3 else '1e-4'} .*?"
        assert re.search(
            cell
            + re.escape(f" {shown['card']['threshold']} {shown['card']['cost']} [")
            + rf"[^\]]*\] per {_per(eta):,} cases",
            card,
        ), card[:3000]
    assert " cost threshold " in card


def test_card_threshold_is_the_max_f1_one_without_costs(tracking_uri, tmp_path: Path):
    y, s = _data(seed=3, n=8000)
    with mlflow.start_run() as run:
        mi.log_scores(y, s, prevalences=[1e-3], n_bootstrap=0)
    metrics = MlflowClient().get_run(run.info.run_id).data.metrics
    local = MlflowClient().download_artifacts(
        run.info.run_id, "imbalance/test/card.html", str(tmp_path)
    )
    card = _text(Path(local).read_text(encoding="utf-8"))
    p, r, thr = skm.precision_recall_curve(y, s, sample_weight=_weights(y, 1e-3))
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(p[:-1] + r[:-1] > 0, 2 * p[:-1] * r[:-1] / (p[:-1] + r[:-1]), 0.0)
    best = float(thr[np.flatnonzero(f1 == f1.max())].max())
    assert metrics["imb/max_f1_threshold 1e-3 test"] == best
    assert not any("cost" in k for k in metrics)
    sentence = re.search(rf"At η = 0.001 \(deployment\): threshold ({NUMBER}) \(highest F1", card)
    assert sentence is not None and _agrees(sentence.group(1), best)
    table = card[card.index("max-F1 threshold") :]
    row = re.search(r"0\.001 (?:\S+(?: \[[^\]]*\])? ){5}(" + NUMBER + r")", table)  # 6th cell
    assert row is not None and row.group(1) == sentence.group(1), card[:3000]


def test_every_entry_point_logs_under_test_by_default(tracking_uri):
    from mlflow_imbalance.tracking import autologging

    y, s = _data(seed=1, n=1200)
    X = np.c_[s, np.random.default_rng(1).normal(size=y.size)]
    kw = {"log_figures": False, "n_bootstrap": 0, "prevalences": []}
    names = {}
    with mlflow.start_run() as run:
        names["log_scores"] = mi.log_scores(y, s, **kw).name
    mi.autolog(log_figures=False, prevalences=[])
    try:
        with mlflow.start_run() as run:
            skm.roc_auc_score(y, s)
        names["autolog"] = list(mi.list_counts(run.info.run_id))
    finally:
        mi.autolog(disable=True)
        autologging._captures.clear()
    xgb = pytest.importorskip("xgboost")
    from mlflow_imbalance.integrations.xgboost import ImbalanceCallback as XGBCallback

    with mlflow.start_run() as run:
        xgb.train(
            {"objective": "binary:logistic", "nthread": 1, "max_depth": 2},
            xgb.DMatrix(X, label=y),
            num_boost_round=2,
            callbacks=[XGBCallback(X, y, **kw)],
        )
    names["xgboost"] = list(mi.list_counts(run.info.run_id))
    lgb = pytest.importorskip("lightgbm")
    from mlflow_imbalance.integrations.lightgbm import ImbalanceCallback as LGBCallback

    with mlflow.start_run() as run:
        lgb.train(
            {"objective": "binary", "verbose": -1, "num_threads": 1, "num_leaves": 4},
            lgb.Dataset(X, y),
            num_boost_round=2,
            callbacks=[LGBCallback(X, y, **kw)],
        )
    names["lightgbm"] = list(mi.list_counts(run.info.run_id))
    assert names == {
        "log_scores": "test",
        "autolog": ["test"],
        "xgboost": ["test"],
        "lightgbm": ["test"],
    }


def test_sweep_has_no_repeated_final_step(logged):
    client = MlflowClient()
    run_id = logged["run_id"]
    x = sorted(client.get_metric_history(run_id, "imb/log10_eta test"), key=lambda p: p.step)
    etas = 10 ** np.array([p.value for p in x])
    assert [p.step for p in x] == list(range(tracking.SWEEP_POINTS))
    assert np.all(np.diff(etas) > 0) and etas[-1] == pytest.approx(0.5)
    for stem in ("ap", "pr_auc", "max_f1", "prec_f1", "precision_op", "f1_op"):
        h = client.get_metric_history(run_id, f"imb/{stem}_sweep test")
        assert sorted(p.step for p in h) == list(range(tracking.SWEEP_POINTS)), stem
    # the test-prevalence value is a single value of the plain key
    for stem in ("ap", "pr_auc", "max_f1", "prec_f1"):
        assert len(client.get_metric_history(run_id, f"imb/{stem} test")) == 1, stem


def test_two_column_predict_proba_suggests_the_positive_column(tracking_uri):
    y, s = _data(seed=2, n=50)
    proba = np.c_[1 - s, s]
    with pytest.raises(ValueError, match=r"y_score must be one-dimensional.*y_score\[:, 1\]"):
        mi.log_scores(y, proba)
    with pytest.raises(ValueError, match=r"y_score\[:, 1\]"):
        mi.RocCounts.from_scores(y, proba)


def test_old_argument_spellings_warn_and_keep_working(tracking_uri):
    lgb = pytest.importorskip("lightgbm")
    from mlflow_imbalance.integrations.lightgbm import ImbalanceCallback

    y, s = _data(seed=4, n=1000)
    kw = {"log_figures": False, "n_bootstrap": 0}
    with mlflow.start_run() as run:
        with pytest.warns(FutureWarning, match=r"log_scores\(prevalence=\.\.\.\).*prevalences="):
            mi.log_scores(y, s, prevalence=1e-3, **kw)
        with pytest.warns(FutureWarning, match=r"use costs=\{'fp': 2, 'fn': 50\}"):
            mi.log_scores(y, s, name="b", cost_fp=2, cost_fn=50, **kw)
        with pytest.warns(FutureWarning, match=r"ImbalanceCallback\(cost_fp=.*use costs="):
            cb = ImbalanceCallback(s[:, None], y, name="c", cost_fn=20, **kw)
        lgb.train(
            {"objective": "binary", "verbose": -1, "num_threads": 1},
            lgb.Dataset(s[:, None], y),
            num_boost_round=2,
            callbacks=[cb],
        )
    held = mi.list_counts(run.info.run_id)
    assert held["test"]["prevalences"] == [1e-3]
    assert held["b"]["costs"] == {"fp": 2.0, "fn": 50.0}
    assert held["c"]["costs"] == {"fp": 1.0, "fn": 20.0}  # a missing one counts 1
    with pytest.warns(FutureWarning, match=r"autolog\(prevalence=\.\.\.\)"):
        mi.autolog(prevalence=1e-3, log_figures=False)
    mi.autolog(disable=True)
    with pytest.raises(ValueError, match="give prevalences= only"):
        mi.log_scores(y, s, prevalence=1e-3, prevalences=[1e-2])
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['costz'\]"):
        mi.log_scores(y, s, costz=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spellings do not warn
        ImbalanceCallback(s[:, None], y, prevalences=[1e-3], costs=COSTS)


# ---------------------------------------------------------------------------- one interval
#: an interval as printed: "[2,097, 2,693]" (the thousands separator is part of the number)
INTERVAL = r"\[-?[\d,]*\.?\d+(?:e-?\d+)?, -?[\d,]*\.?\d+(?:e-?\d+)?\]"


def _printed(lo: float, hi: float) -> str:
    """An interval as the card, the report's verdict and its tables print it (3 digits)."""
    from mlflow_imbalance._numbers import fmt_number

    return f"[{fmt_number(lo, 3)}, {fmt_number(hi, 3)}]"


def _shown_intervals(text: str, eta: float, card: bool) -> dict[str, str]:
    """The cost and precision intervals printed in the first verdict at η of ``text``."""
    start = re.search(
        rf"At η = {(ETA_CARD if card else ETA_REPORT)[eta]}(?: \(deployment\))? ?:", text
    )
    assert start is not None, f"no verdict at η = {eta} in {text[:2000]!r}"
    part = text[start.end() :]
    part = part[: part.find("At η =")] if "At η =" in part else part
    cost = re.search(rf"(?:lowest expected cost, |Expected cost: ){NUMBER} ({INTERVAL})", part)
    prec = re.search(rf"[Pp]recision {NUMBER} ({INTERVAL})", part)
    if re.match(r"\s*flag nothing", part):  # issue 37: the run's interval, and no precision
        assert cost, (eta, part[:600])
        return {"cost": cost.group(1)}
    assert cost and prec, (eta, part[:600])
    return {"cost": cost.group(1), "precision": prec.group(1)}


def _run_cells(report: mi.Report, run: str, eta: float) -> dict[str, str]:
    """A run's printed intervals in the report's table at η: ``{column key: "[lo, hi]"}``."""
    table = next(t for t in report.context["tables"] if t.get("eta_value") == repr(eta))
    row = next(r for r in table["rows"] if r["name"] == run)
    keys = [c["key"] for c in table["columns"]]
    return dict(zip(keys, (cell["ci"] for cell in row["cells"]), strict=True))


def _log(name: str, mu: float, seed: int, prevalences, n: int = 20_000) -> tuple[str, dict]:
    """A run logged with the hook's defaults (n_bootstrap, seed, confidence): its id, summary."""
    y, s = _data(seed=seed, n=n)
    s = s + (mu - 2.0) * y  # _data separates the classes by 2 SD; move them to mu
    with mlflow.start_run(run_name=name) as run:
        mi.log_scores(y, s, prevalences=list(prevalences), costs=COSTS)
    return run.info.run_id, mi.load_summary(run.info.run_id)


def _settings(summary: dict) -> dict:
    """The report's arguments that equal the logged bootstrap settings (read from the run)."""
    b = summary["headline"]["bootstrap"]
    return {"n_bootstrap": b["n_boot"], "seed": b["seed"], "confidence": b["confidence"],
            "costs": COSTS}  # fmt: skip


def test_cost_and_precision_intervals_are_one_interval_everywhere(tracking_uri, tmp_path: Path):
    """Issue 37: the report's cost and precision intervals of a run at a logged η are the card's
    and summary.json's, to the character, when the report's replicates, seed, confidence and
    costs are the logged ones; and a run's intervals do not change when another run is added.
    """
    ids, summaries = {}, {}
    for name, mu, seed in (("strong", 2.0, 0), ("weak", 1.0, 5)):
        ids[name], summaries[name] = _log(name, mu, seed, ETAS)
    settings = _settings(summaries["strong"])
    assert settings == _settings(summaries["weak"])
    alone = mi.build_report([ids["strong"]], output=tmp_path / "alone.html", **settings)
    both = mi.build_report([ids["strong"], ids["weak"]], output=tmp_path / "both.html", **settings)
    html_alone = _text((tmp_path / "alone.html").read_text(encoding="utf-8"))
    html_both = _text((tmp_path / "both.html").read_text(encoding="utf-8"))
    client = MlflowClient()
    cards, metrics = {}, {}
    for name, run_id in ids.items():
        (tmp_path / name).mkdir()
        local = client.download_artifacts(run_id, "imbalance/test/card.html", str(tmp_path / name))
        cards[name] = _text(Path(local).read_text(encoding="utf-8"))
        metrics[name] = client.get_run(run_id).data.metrics

    for eta in ETAS:
        rows = {
            name: next(r for r in s["headline"]["at_prevalence"] if r["prevalence"] == eta)
            for name, s in summaries.items()
        }
        mc = rows["strong"]["min_cost"]
        # issue 37: where the run's interval reaches flagging nothing's cost, every surface
        # says "flag nothing" and prints the run's cost interval as the reason, no precision
        nothing = mc["expected_cost_interval"][1] >= eta * COSTS["fn"]
        from_summary = {"cost": _printed(*mc["expected_cost_per_cases_interval"])}
        if not nothing:
            from_summary["precision"] = _printed(*mc["precision"]["interval"])
        # the value behind the interval is the MLflow metric (the interval itself is not logged)
        unit = {10_000: "10k", 1_000_000: "1m"}[_per(eta)]
        key = f"imb/min_cost_per_{unit} {tracking.eta_label(eta)} test"
        assert metrics["strong"][key] == mc["expected_cost_per_cases"]
        shown = {"summary.json": from_summary, "card": _shown_intervals(cards["strong"], eta, True)}
        for label, report, text in (("alone", alone, html_alone), ("both", both, html_both)):
            v = next(v for v in report.verdict if v.prevalence == eta)
            if nothing:
                assert v.decision == "nothing" and v.runner_up == "strong", (label, eta, v.text)
                shown[f"report.verdict ({label})"] = {
                    "cost": _printed(v.runner_up_low * v.per, v.runner_up_high * v.per)
                }
            else:
                assert v.run == "strong", (label, eta, v.text)
                shown[f"report.verdict ({label})"] = {
                    "cost": _printed(v.value_low * v.per, v.value_high * v.per),
                    "precision": _printed(v.precision_low, v.precision_high),
                }
            shown[f"report HTML ({label})"] = _shown_intervals(text, eta, False)
            cells = _run_cells(report, "strong", eta)
            shown[f"report table ({label})"] = {k: cells[k] for k in from_summary}
        assert len({tuple(sorted(s.items())) for s in shown.values()}) == 1, (eta, shown)
        # AP, PR-AUC and max-F1 too: summary.json and the report's tables, for both runs, and a
        # run's table intervals are the same whether or not the other run is in the report
        for name in ids:
            row = rows[name]
            logged = {k: _printed(*row[k]["interval"]) for k in ("ap", "pr_auc", "max_f1")}
            logged["cost"] = _printed(*row["min_cost"]["expected_cost_per_cases_interval"])
            in_both = _run_cells(both, name, eta)
            assert {k: in_both[k] for k in logged} == logged, (name, eta)
            if name == "strong":
                assert _run_cells(alone, name, eta) == in_both


def test_lowest_cost_interval_never_exceeds_flagging_nothing(tracking_uri, tmp_path: Path):
    """Issue 37: the lowest expected cost is a minimum over thresholds that include flagging
    nothing (η·C_FN per case) and flagging everything ((1−η)·C_FP), so its upper limit is capped
    there. A weak model (classes 0.7 SD apart) at η = 1e-3 and 2e-3, where its best threshold
    barely beats flagging nothing: without the cap its upper limits came out 1.003 and 1.0033
    times η·C_FN (the shifts onto the exact cost and for the minimum's selection bias push them
    over). The cap is computed here from η and the costs alone; summary.json, the card, the
    report's verdict and its table print the same interval, whose upper limit is the cap.
    """
    etas = (1e-3, 2e-3)
    run_id, summary = _log("weak", 0.7, 3, etas, n=5000)
    report = mi.build_report([run_id], output=tmp_path / "r.html", **_settings(summary))
    text = _text((tmp_path / "r.html").read_text(encoding="utf-8"))
    local = MlflowClient().download_artifacts(run_id, "imbalance/test/card.html", str(tmp_path))
    card = _text(Path(local).read_text(encoding="utf-8"))
    for eta in etas:
        per = _per(eta)
        cap = min(eta * COSTS["fn"], (1 - eta) * COSTS["fp"]) * per  # flag nothing: η·C_FN
        row = next(r for r in summary["headline"]["at_prevalence"] if r["prevalence"] == eta)
        mc = row["min_cost"]
        lo, hi = mc["expected_cost_per_cases_interval"]
        assert np.isfinite(mc["threshold"]) and mc["expected_cost_per_cases"] < cap
        assert lo <= mc["expected_cost_per_cases"] <= hi
        assert hi == pytest.approx(cap, rel=1e-12), (eta, hi, cap)  # binding, and not above
        v = next(v for v in report.verdict if v.prevalence == eta)
        # an interval that reaches flagging nothing's cost: the verdict is to flag nothing
        # (issue 37), and the run's interval is the one it names as not beating it
        assert v.decision == "nothing" and v.runner_up == "weak"
        assert v.runner_up_high * v.per == pytest.approx(cap, rel=1e-12)
        printed = {
            "summary.json": _printed(lo, hi),
            "card": _shown_intervals(card, eta, True)["cost"],
            "report HTML": _shown_intervals(text, eta, False)["cost"],
            "report table": _run_cells(report, "weak", eta)["cost"],
        }
        assert set(printed.values()) == {_printed(lo, cap)}, printed
