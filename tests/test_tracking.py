"""log_scores / log_counts / loaders against a real temporary SQLite tracking store."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from pathlib import Path

import mlflow
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

import mlflow_imbalance as mi
from mlflow_imbalance import tracking
from mlflow_imbalance.tracking._checks import _check_prevalences
from mlflow_imbalance.tracking.card import _fmt
from mlflow_imbalance.tracking.summary import labels_digest, summary_from_json, validate_summary

# MLflow's metric-name rule (design.md): [/\w.\- :]
METRIC_NAME = re.compile(r"^[/\w.\- :]+$")


def _data(n: int = 3000, prevalence: float = 0.05, seed: int = 0, ties: bool = False):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    s = rng.normal(size=n) + 1.5 * y
    if ties:
        s = np.round(s, 1)
    return y.astype(int), s


def _artifacts(client: MlflowClient, run_id: str, path: str = "") -> list[str]:
    out = []
    for f in client.list_artifacts(run_id, path or None):
        out.extend(_artifacts(client, run_id, f.path) if f.is_dir else [f.path])
    return out


def files_of(paths: set[str], name: str = "test") -> set[str]:
    return {p for p in paths if p.startswith(f"imbalance/{name}/")}


def test_round_trip_counts_summary_scores(tracking_uri):
    y, s = _data(ties=True)
    with mlflow.start_run() as run:
        res = mi.log_scores(y, s, prevalences=[1e-3, 1e-2], costs={"fp": 1, "fn": 20})
    run_id = run.info.run_id
    assert res.run_id == run_id and res.artifact_path == "imbalance/test"
    expected = mi.RocCounts.from_scores(y, s)
    got = mi.load_counts(run_id)
    np.testing.assert_array_equal(got.thresholds, expected.thresholds)
    np.testing.assert_array_equal(got.tp, expected.tp)
    np.testing.assert_array_equal(got.fp, expected.fp)
    assert (got.n_pos, got.n_neg) == (int(y.sum()), int((1 - y).sum()))

    summary = tracking.load_summary(run_id)
    assert summary["n_pos"] == int(y.sum()) and summary["n_neg"] == int((1 - y).sum())
    assert summary["test_prevalence"] == pytest.approx(y.mean())
    assert summary["prevalences"] == [1e-2, 1e-3]
    assert summary["package_version"] == mi.__version__
    assert summary["costs"] == {"fp": 1.0, "fn": 20.0}
    # digest: an independent sha256 over the same documented byte layout
    h = hashlib.sha256(b"mlflow-imbalance/labels/v1\0")
    h.update(np.int64(y.size).tobytes())
    h.update(np.packbits(y.astype(bool)).tobytes())
    assert summary["y_true_digest"] == "sha256:" + h.hexdigest()

    everything = set(_artifacts(MlflowClient(), run_id))
    # the card's copy at the artifact root (issue 38) is outside the set and its manifest
    assert everything - {"imbalance_card_test.html"} == files_of(everything)
    files = files_of(everything)
    for f in ["roc_counts.npz", "summary.json", "scores.npz", "card.html", "roc.png", "pr.png"]:
        assert f"imbalance/test/{f}" in files
    assert set(summary["files"]) == {p.rsplit("/", 1)[1] for p in files} - {"summary.json"}

    kept = tracking.load_scores(run_id)
    np.testing.assert_array_equal(kept.y_true, y.astype(bool))
    np.testing.assert_array_equal(kept.y_score, s)
    assert kept.sample_weight is None
    assert list(mi.list_counts(run_id)) == ["test"]


def test_metrics_match_sklearn_and_names_are_valid(tracking_uri):
    y, s = _data(n=4000, seed=1)
    eta = 1e-3
    with mlflow.start_run() as run:
        mi.log_scores(y, s, prevalences=[eta], log_figures=False, keep_scores=False)
    m = MlflowClient().get_run(run.info.run_id).data.metrics
    assert all(METRIC_NAME.match(k) for k in m), [k for k in m if not METRIC_NAME.match(k)]
    assert m["imb/roc_auc test"] == pytest.approx(roc_auc_score(y, s), rel=1e-12)
    assert m["imb/ap test"] == pytest.approx(average_precision_score(y, s), rel=1e-9)
    # AP at prevalence eta = sklearn AP with negatives re-weighted to that prevalence
    n_pos, n_neg = y.sum(), (1 - y).sum()
    w = np.where(y == 1, 1.0, n_pos * (1 - eta) / (eta * n_neg))
    assert m["imb/ap 1e-3 test"] == pytest.approx(
        average_precision_score(y, s, sample_weight=w), rel=1e-9
    )
    tags = MlflowClient().get_run(run.info.run_id).data.tags
    assert int(tags["imb/n_pos test"]) == n_pos and "imb/n_pos test" not in m
    # 3880 negatives: FPR budgets 1e-2 and 1e-3 are estimable, 1e-4 is not
    assert "imb/tpr_at_fpr_1e-3 test" in m
    assert "imb/tpr_at_fpr_1e-4 test" not in m
    order = np.argsort(-s, kind="stable")
    k_fp = np.cumsum(1 - y[order])
    allowed = k_fp <= 1e-3 * n_neg
    assert m["imb/tpr_at_fpr_1e-3 test"] <= y[order][allowed].sum() / n_pos + 1e-12


def test_prevalence_step_series(tracking_uri):
    y, s = _data(n=2000, seed=2)
    with mlflow.start_run() as run:
        mi.log_scores(y, s, prevalences=[], log_figures=False)
    client = MlflowClient()
    prev = client.get_metric_history(run.info.run_id, "imb/log10_eta test")
    f1 = client.get_metric_history(run.info.run_id, "imb/max_f1_sweep test")
    # the grid (ascending), nothing appended: no hook on MLflow's default step axis
    assert [p.step for p in sorted(prev, key=lambda p: p.step)] == list(
        range(tracking.SWEEP_POINTS)
    )
    assert sorted(p.step for p in f1) == list(range(tracking.SWEEP_POINTS))
    etas = 10 ** np.array([p.value for p in sorted(prev, key=lambda p: p.step)])
    assert np.all(np.diff(etas) > 0) and etas[-1] == pytest.approx(0.5)
    # the test-prevalence value is the plain key's single value
    plain = client.get_metric_history(run.info.run_id, "imb/max_f1 test")
    assert len(plain) == 1
    # F1 at step j, independently: best over thresholds of 2PR/(P+R) with precision at eta
    j = 20
    f1_j = {p.step: p.value for p in f1}[j]
    order = np.argsort(-s)
    tp = np.cumsum(y[order]) / y.sum()
    fp = np.cumsum(1 - y[order]) / (1 - y).sum()
    distinct = np.r_[np.diff(s[order]) != 0, True]
    tp, fp = tp[distinct], fp[distinct]
    prec = etas[j] * tp / (etas[j] * tp + (1 - etas[j]) * fp)
    assert f1_j == pytest.approx(np.max(2 * prec * tp / (prec + tp)), rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y_score": [0.1, np.nan, 0.3, 0.4]}, "y_score must be finite"),
        ({"y_score": [0.1, 0.2, 0.3]}, "length mismatch"),
        ({"y_true": [1, 1, 1, 1]}, "only one class"),
        ({"prevalences": [0.0]}, "prevalences must lie strictly between 0 and 1"),
        ({"name": "../evil"}, "name must be"),
        ({"name": "a/b"}, "name must be"),
        ({"costs": {"fp": -1, "fn": 1}}, r"costs\['fp'\] must be positive"),
        ({"keep_scores": "sometimes"}, "keep_scores must be"),
        ({"sample_weight": [1, 1, -1, 1]}, "sample_weight must be non-negative"),
        ({"extra_summary": {"x": object()}}, "extra_summary must be JSON"),
    ],
)
def test_bad_input_raises_and_logs_nothing(tracking_uri, kwargs, match):
    args = {"y_true": [0, 1, 0, 1], "y_score": [0.1, 0.2, 0.3, 0.4], **kwargs}
    with mlflow.start_run() as run:
        with pytest.raises(ValueError, match=match):
            mi.log_scores(args.pop("y_true"), args.pop("y_score"), **args)
    client = MlflowClient()
    assert _artifacts(client, run.info.run_id) == []
    assert client.get_run(run.info.run_id).data.metrics == {}


def test_unknown_and_deleted_runs_are_rejected(tracking_uri):
    y, s = _data(n=200)
    with pytest.raises(MlflowException):
        mi.log_scores(y, s, run_id="0" * 32, log_figures=False)
    client = MlflowClient()
    run = client.create_run("0")
    client.delete_run(run.info.run_id)
    with pytest.raises(MlflowException, match="deleted"):
        mi.log_scores(y, s, run_id=run.info.run_id, log_figures=False)
    assert _artifacts(client, run.info.run_id) == []


def test_finished_run_by_id_and_no_active_run(tracking_uri):
    y, s = _data(n=300)
    with mlflow.start_run() as run:
        pass
    res = mi.log_scores(y, s, run_id=run.info.run_id, log_figures=False)
    assert mi.load_counts(run.info.run_id).n_pos == int(y.sum())
    assert MlflowClient().get_run(res.run_id).info.status == "FINISHED"
    # no active run and no run_id: a run is started, as mlflow.log_metric does
    assert mlflow.active_run() is None
    res2 = mi.log_scores(y, s, log_figures=False)
    assert mlflow.active_run() is not None and mlflow.active_run().info.run_id == res2.run_id
    mlflow.end_run()


def test_relog_replaces_and_stale_files_are_ignored(tracking_uri):
    y1, s1 = _data(n=500, seed=3)
    y2, s2 = _data(n=800, seed=4)
    with mlflow.start_run() as run:
        mi.log_scores(y1, s1, keep_scores=True, log_figures=True)
        mi.log_scores(y2, s2, keep_scores=False, log_figures=False)
    run_id = run.info.run_id
    # the first log's figures stay listed (no artifact delete) but leave the manifest
    assert "imbalance/test/roc.png" in _artifacts(MlflowClient(), run_id)
    summary = tracking.load_summary(run_id)
    assert summary["figures"] == {} and "roc.png" not in summary["files"]
    got = mi.load_counts(run_id)
    assert (got.n_pos, got.n_neg) == (int(y2.sum()), int((1 - y2).sum()))
    # the first log's scores.npz is still stored but not in the new manifest: ignored
    assert "imbalance/test/scores.npz" in _artifacts(MlflowClient(), run_id)
    assert tracking.load_scores(run_id) is None
    assert tracking.load_summary(run_id)["y_true_digest"] == labels_digest(y2.astype(bool))


def test_tampered_or_uncommitted_sets_are_detected(tracking_uri, tmp_path: Path):
    y, s = _data(n=400, seed=5)
    client = MlflowClient()
    with mlflow.start_run() as run:
        mi.log_scores(y, s, log_figures=False)
        other = mi.RocCounts.from_scores(*_data(n=100, seed=6))
        other.save(tmp_path / "roc_counts.npz")
        # replace the committed counts behind the manifest's back
        mlflow.log_artifact(str(tmp_path / "roc_counts.npz"), "imbalance/test")
        # an interrupted first upload: data, no summary.json
        mlflow.log_artifact(str(tmp_path / "roc_counts.npz"), "imbalance/partial")
    with pytest.raises(ValueError, match=r"does not match its summary\.json manifest"):
        mi.load_counts(run.info.run_id)
    assert list(mi.list_counts(run.info.run_id)) == ["test"]
    with pytest.raises(MlflowException, match=r"no committed counts named 'partial'.*\['test'\]"):
        mi.load_counts(run.info.run_id, name="partial")
    assert client.get_run(run.info.run_id).data.metrics  # the first log's metrics are there


def test_log_counts_extra_summary_and_weights(tracking_uri):
    y, s = _data(n=600, seed=7)
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    c = mi.RocCounts.from_scores(y, s, sample_weight=w)
    with mlflow.start_run() as run:
        tracking.log_counts(
            c,
            name="synthetic",
            extra_summary={"positives": "synthesized", "n_pos": "must not override"},
            log_figures=False,
        )
        mi.log_scores(y, s, name="weighted", sample_weight=w, log_figures=False)
    summary = tracking.load_summary(run.info.run_id, "synthetic")
    assert summary["positives"] == "synthesized"
    assert summary["extra"] == {"positives": "synthesized", "n_pos": "must not override"}
    assert summary["n_pos"] == pytest.approx(w[y == 1].sum())
    assert summary["y_true_digest"] is None and summary["scores"] is None
    weighted = tracking.load_summary(run.info.run_id, "weighted")
    assert weighted["weighted"] is True
    row = weighted["headline"]["at_prevalence"][0]
    # no intervals for weighted counts, and the summary says so instead of a silent null
    for point in (
        row["precision_at_max_f1"],
        row["recall_at_max_f1"],
        row["ap"],
        row["pr_auc"],
        row["max_f1"],
        weighted["headline"]["roc_auc"],
    ):
        assert point["interval"] is None
        assert point["method"] == "point estimate only (weighted)"
    assert weighted["headline"]["bootstrap"] is None
    assert "point estimate only (weighted)" in weighted["headline"]["intervals"]
    kept = tracking.load_scores(run.info.run_id, "weighted")
    np.testing.assert_array_equal(kept.sample_weight, w)
    loaded = mi.load_counts(run.info.run_id, "weighted")
    assert loaded.weighted and loaded.n_pos == pytest.approx(w[y == 1].sum())


def test_keep_scores_policy(tracking_uri):
    y, s = _data(n=300, seed=8)
    with mlflow.start_run() as run:
        mi.log_scores(y, s, name="auto", log_figures=False)
        mi.log_scores(y, s, name="never", keep_scores=False, log_figures=False)
        mi.log_scores(y, s, name="small", keep_scores=100, log_figures=False)
    kept = {k: v["scores"] is not None for k, v in mi.list_counts(run.info.run_id).items()}
    assert kept == {"auto": True, "never": False, "small": False}


def test_intervals_contain_point_values(tracking_uri):
    y, s = _data(n=3000, seed=9)
    with mlflow.start_run():
        res = mi.log_scores(y, s, prevalences=[1e-3], log_figures=False)
    for row in res.summary["headline"]["at_prevalence"]:
        p = row["precision_at_max_f1"]
        assert p["interval"] is not None, "uncertainty module should provide intervals"
        assert p["interval"][0] <= p["value"] <= p["interval"][1]
    for b in res.summary["headline"]["tpr_at_fpr"]:
        assert b["tpr"]["interval"][0] <= b["tpr"]["value"] <= b["tpr"]["interval"][1]
    h = res.summary["headline"]
    lo, hi = h["roc_auc"]["interval"]
    assert lo < h["roc_auc"]["value"] < hi and "DeLong" in h["roc_auc"]["method"]
    for row in h["at_prevalence"]:
        for key in ("ap", "pr_auc", "max_f1"):
            lo, hi = row[key]["interval"]
            assert lo <= row[key]["value"] <= hi and lo < hi, (key, row["prevalence"])
            assert "count bootstrap" in row[key]["method"] and "seed 0" in row[key]["method"]
    assert h["bootstrap"]["seed"] == 0 and h["bootstrap"]["n_boot"] == 200


def test_card_and_figures(tracking_uri, tmp_path: Path):
    y, s = _data(n=1500, seed=10)
    with mlflow.start_run(run_name="card <check>") as run:
        res = mi.log_scores(
            y,
            s,
            prevalences=[1e-3],
            costs=(1, 20),
            extra_summary={"note": "<script>alert(1)</script>"},
        )
        no_costs = mi.log_scores(y, s, name="no_costs", prevalences=[1e-3], n_bootstrap=0)
    assert set(res.summary["figures"]) == {"pr", "roc", "cost"}
    assert set(no_costs.summary["figures"]) == {"pr", "roc"}  # no cost curve without costs
    local = MlflowClient().download_artifacts(run.info.run_id, "imbalance/test", str(tmp_path))
    card = (Path(local) / "card.html").read_text()
    assert "<script" not in card.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in card
    assert card.count('src="data:image/png;base64,') == 3
    assert "<title>card &lt;check&gt; · imbalance card (test)</title>" in card
    assert "docs/" not in card and ".md" not in card  # self-contained: no local doc paths
    assert "http://" not in card and "https://" not in card
    h = res.summary["headline"]
    # the card shows every headline interval and names its method
    lo, hi = h["roc_auc"]["interval"]
    assert f"[{_fmt(lo)}, {_fmt(hi)}]" in card
    for point in (r[k] for r in h["at_prevalence"] for k in ("ap", "pr_auc", "max_f1")):
        lo, hi = point["interval"]
        assert f"[{_fmt(lo, 3)}, {_fmt(hi, 3)}]" in card
    assert "DeLong" in card and "count bootstrap" in card and "seed 0" in card
    assert _fmt(h["operating_point"]["threshold"]) in card
    assert ">cost threshold</th>" in card and "normalised cost" not in card
    # the methods table names each interval's own method (TPR at a budget is not max-F1's)
    assert h["methods"]["tpr_at_fpr"] == "clopper-pearson 95%"
    assert all(b["tpr"]["method"] == "clopper-pearson 95%" for b in h["tpr_at_fpr"])
    assert "(max-F1)" in h["methods"]["precision_at_max_f1, recall_at_max_f1"]
    assert "(lowest expected cost)" in h["methods"]["min_cost precision, recall"]
    assert "minimum over thresholds" in h["methods"]["min_cost expected_cost"]
    assert "B = 200, seed 0" in h["methods"]["min_cost expected_cost"]
    # at the lowest-cost threshold: precision and recall with bounds valid after the choice,
    # in the summary and in the card's sentence; the point itself from scikit-learn's ROC
    for row in h["at_prevalence"]:
        eta, mc = row["prevalence"], row["min_cost"]
        fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
        cost = (1 - eta) * 1 * fpr + eta * 20 * (1 - tpr)
        i = int(np.flatnonzero(cost == cost.min())[0])
        assert mc["threshold"] == pytest.approx(thr[i]) and mc["recall"]["value"] == tpr[i]
        prec = eta * tpr[i] / (eta * tpr[i] + (1 - eta) * fpr[i])
        assert mc["precision"]["value"] == pytest.approx(prec, rel=1e-12)
        for key in ("precision", "recall"):
            lo, hi = mc[key]["interval"]
            assert lo <= mc[key]["value"] <= hi and "lowest expected cost" in mc[key]["method"]
        # the lowest expected cost has its interval too (the report's construction,
        # min_cost_interval on the hook's draws): around scikit-learn's minimum (the flag-
        # nothing cap eta * C_FN included), per case, normalised and per per_cases(eta)
        # cases, the last in the card's sentence and table, in the report's words
        worst = (1 - eta) * 1 + eta * 20
        sk_cost = min(float(cost.min()), eta * 20, 1 - eta)
        assert mc["expected_cost"] == pytest.approx(sk_cost, rel=1e-12)
        lo, hi = mc["expected_cost_interval"]
        assert 0 <= lo <= sk_cost <= hi and hi > lo
        assert mc["normalized_expected_cost_interval"] == pytest.approx([lo / worst, hi / worst])
        per = 10_000 if eta >= 1e-3 else 1_000_000
        assert mc["per_cases"] == per
        assert mc["expected_cost_per_cases"] == pytest.approx(sk_cost * per, rel=1e-12)
        assert mc["expected_cost_per_cases_interval"] == pytest.approx([lo * per, hi * per])
        plo, phi = mc["expected_cost_per_cases_interval"]
        shown = f"{_fmt(mc['expected_cost_per_cases'])} [{_fmt(plo, 3)}, {_fmt(phi, 3)}]"
        assert f"lowest expected cost, {shown} per {per:,} cases with C_FP = 1, C_FN = 20" in card
        unit = f'<span class="unit">per {per:,} cases'
        assert f"[{_fmt(plo, 3)}, {_fmt(phi, 3)}]</span>{unit}" in card
        # the table's threshold column is the sentence's threshold (lowest cost here)
        assert f"<td>{_fmt(mc['threshold'], 4)}</td>" in card
        p, r = mc["precision"], mc["recall"]
        if phi / per >= min(eta * 20, 1 - eta):  # issue 37: not shown to beat flagging nothing
            assert "flag nothing (no threshold is shown to beat flagging nothing" in card
            continue
        assert (
            f"precision {_fmt(p['value'], 3)} [{_fmt(p['interval'][0], 3)}, "
            f"{_fmt(p['interval'][1], 3)}], recall {_fmt(r['value'], 3)} "
            f"[{_fmt(r['interval'][0], 3)}, {_fmt(r['interval'][1], 3)}]."
        ) in card
    for key in res.summary["figures"].values():
        assert (Path(local) / key).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((Path(local) / "summary.json").read_text())
    assert validate_summary(summary)["card"] == "card.html"


def test_card_says_when_the_operating_point_is_not_shown_to_beat_chance(tracking_uri, tmp_path):
    """Scores independent of the labels (precision η at every threshold, so a valid interval
    holds η): the card's sentence says its alerts are not shown to be more precise than random,
    with that interval; constant scores flag every case; a real model gets neither."""
    rng = np.random.default_rng(4)
    y = (rng.random(8000) < 0.03).astype(int)
    cases = {
        "noise": (rng.normal(size=y.size), None),
        "constant": (np.zeros(y.size), (1, 200)),  # the lowest-cost point
        "constant-f1": (np.zeros(y.size), None),  # the max-F1 point
        "real": (rng.normal(size=y.size) + 2.5 * y, None),
    }
    for name, (s, costs) in cases.items():
        hard = pytest.warns(UserWarning, match="at most two distinct values")
        constant = name.startswith("constant")
        with mlflow.start_run(run_name=name) as run, hard if constant else contextlib.nullcontext():
            res = mi.log_scores(y, s, prevalences=[0.01], costs=costs)
        local = MlflowClient().download_artifacts(
            run.info.run_id, "imbalance/test", str(tmp_path / name)
        )
        card = (Path(local) / "card.html").read_text()
        rows = res.summary["headline"]["at_prevalence"]
        if name == "noise":
            for r in rows:
                lo, hi = r["precision_at_max_f1"]["interval"]
                assert lo <= r["prevalence"] <= hi
                assert (
                    "its alerts are not shown to be more precise than flagging as many cases at "
                    f"random: precision [{_fmt(lo, 3)}, {_fmt(hi, 3)}] reaches η = "
                ) in card
        elif constant and costs:  # issue 37: flagging everything is the decision itself
            assert card.count(": flag everything (no threshold is shown to beat") == len(rows)
        elif constant:
            assert card.count("Its threshold flags every case: no model is needed") == len(rows)
        else:
            assert all(r["precision_at_max_f1"]["interval"][0] > r["prevalence"] for r in rows)
            assert "at random" not in card and "flags every case" not in card


def test_summary_validation_rejects_foreign_and_newer():
    with pytest.raises(ValueError, match="not an mlflow-imbalance summary"):
        summary_from_json('{"schema": "x"}')
    with pytest.raises(ValueError, match="upgrade"):
        summary_from_json('{"schema": "mlflow-imbalance/summary", "schema_version": 99}')
    with pytest.raises(ValueError, match="lacks required key"):
        summary_from_json('{"schema": "mlflow-imbalance/summary", "schema_version": 1}')


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-12, max_value=0.999999, allow_nan=False))
def test_eta_label_is_a_valid_metric_component(eta):
    key = tracking.metric_key("test", "ap", eta)
    assert METRIC_NAME.match(key)
    mantissa, exponent = tracking.eta_label(eta).split("e")
    assert float(f"{mantissa}e{exponent}") == pytest.approx(eta, rel=5e-4)


def test_close_prevalences_are_rejected():
    with pytest.raises(ValueError, match="share a metric name"):
        _check_prevalences([1e-3, 1.00001e-3])


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.tuples(st.booleans(), st.integers(min_value=-5, max_value=5)), min_size=2, max_size=60
    ).filter(lambda rows: len({r[0] for r in rows}) == 2)
)
def test_round_trip_property(tracking_uri, rows):
    # ties (few distinct integer scores) and tiny sets: what is loaded is what was logged
    y = np.array([r[0] for r in rows])
    s = np.array([r[1] for r in rows], dtype=float)
    res = mi.log_scores(y, s, prevalences=[], log_figures=False)
    got = mi.load_counts(res.run_id)
    fpr_sk, tpr_sk, _ = roc_curve(y, s, drop_intermediate=False)
    full = np.c_[np.r_[0.0, got.fpr], np.r_[0.0, got.tpr]]
    # every stored point is a point of scikit-learn's exact ROC, and the curve ends at (1, 1)
    sk = set(zip(fpr_sk.round(12), tpr_sk.round(12), strict=True))
    assert all((round(a, 12), round(b, 12)) in sk for a, b in full)
    assert got.tp[-1] == y.sum() and got.fp[-1] == (~y).sum()
    assert res.summary["y_true_digest"] == labels_digest(y)


def test_unreachable_store_raises_before_logging(unreachable_tracking_uri):
    y, s = _data(n=200)
    with pytest.raises(MlflowException):
        mi.log_scores(y, s, run_id="0" * 32, tracking_uri=unreachable_tracking_uri)


# ------------------------------------------------------------------ headline intervals


def test_bootstrap_seed_is_recorded_and_reproducible(tracking_uri):
    y, s = _data(n=800, seed=24)
    kw = {"prevalences": [1e-2], "log_figures": False, "keep_scores": False}
    with mlflow.start_run():
        a = mi.log_scores(y, s, name="a", seed=7, **kw).summary["headline"]
        b = mi.log_scores(y, s, name="b", seed=7, **kw).summary["headline"]
        c = mi.log_scores(y, s, name="c", seed=8, **kw).summary["headline"]
        d = mi.log_scores(y, s, name="d", seed=None, **kw).summary["headline"]
        e = mi.log_scores(y, s, name="e", n_bootstrap=0, **kw).summary["headline"]
    ivs = [
        [r[k]["interval"] for r in h["at_prevalence"] for k in ("ap", "max_f1")] for h in (a, b, c)
    ]
    assert ivs[0] == ivs[1] and ivs[0] != ivs[2]
    assert a["bootstrap"]["seed"] == 7 and c["bootstrap"]["seed"] == 8
    assert isinstance(d["bootstrap"]["seed"], int) and d["bootstrap"]["seed"] >= 0
    assert f"seed {d['bootstrap']['seed']}" in d["at_prevalence"][0]["ap"]["method"]
    assert e["bootstrap"] is None and e["at_prevalence"][0]["ap"]["interval"] is None
    assert e["at_prevalence"][0]["ap"]["method"] == "no interval (n_bootstrap=0)"
    assert e["roc_auc"]["interval"] is not None  # DeLong needs no bootstrap


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_bootstrap": 10}, "n_bootstrap must be 0"),
        ({"n_bootstrap": 2.5}, "n_bootstrap must be an integer"),
        ({"seed": -1}, "seed must be a non-negative integer"),
    ],
)
def test_bad_bootstrap_options_raise_before_logging(tracking_uri, kwargs, match):
    y, s = _data(n=200, seed=25)
    with mlflow.start_run() as run:
        with pytest.raises(ValueError, match=match):
            mi.log_scores(y, s, log_figures=False, **kwargs)
    assert not MlflowClient().list_artifacts(run.info.run_id)
    assert not MlflowClient().get_run(run.info.run_id).data.metrics


def test_sweep_precision_and_f1_at_the_fixed_operating_point(tracking_uri):
    from sklearn.metrics import f1_score, precision_recall_curve, precision_score

    y, s = _data(n=2500, seed=26, ties=True)
    with mlflow.start_run() as run:
        res = mi.log_scores(y, s, prevalences=[1e-3], log_figures=False)
    client = MlflowClient()
    rid = run.info.run_id

    def history(key):
        points = client.get_metric_history(rid, f"imb/{key} test")
        return np.array([p.value for p in sorted(points, key=lambda p: p.step)])

    etas = 10 ** history("log10_eta")
    prec, f1 = history("precision_op_sweep"), history("f1_op_sweep")
    assert prec.size == f1.size == etas.size == tracking.SWEEP_POINTS  # the grid only
    # the operating point: scikit-learn's max-F1 threshold at the test prevalence
    p, r, thr = precision_recall_curve(y, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1_curve = np.where(p[:-1] + r[:-1] > 0, 2 * p[:-1] * r[:-1] / (p[:-1] + r[:-1]), 0)
    best = thr[np.flatnonzero(f1_curve == f1_curve.max())].max()  # highest on ties
    data = client.get_run(rid).data
    threshold = data.metrics["imb/max_f1_threshold test"]
    assert threshold == best == res.summary["headline"]["operating_point"]["threshold"]
    assert not any("operating_threshold" in k for k in (*data.tags, *data.metrics))
    n_pos, n_neg = y.sum(), (1 - y).sum()
    pred = s >= threshold
    for j in (0, 15, 30, tracking.SWEEP_POINTS - 1):
        w = np.where(y == 1, 1.0, n_pos * (1 - etas[j]) / (etas[j] * n_neg))
        assert prec[j] == pytest.approx(precision_score(y, pred, sample_weight=w), rel=1e-9)
        assert f1[j] == pytest.approx(f1_score(y, pred, sample_weight=w), rel=1e-9)
    assert np.all(np.diff(prec) > 0)  # fixed TPR, FPR: precision rises with prevalence


def test_scores_file_deflates_only_members_that_shrink(tmp_path):
    import zipfile

    from mlflow_imbalance.tracking import Scores
    from mlflow_imbalance.tracking.log import _write_scores

    rng = np.random.default_rng(3)
    n = 200_000
    y = rng.random(n) < 0.01
    continuous = rng.normal(size=n)  # float64 mantissas: deflate cannot save 10 %
    rounded = np.round(rng.random(n), 2)  # 101 distinct values: compresses well
    for name, s, score_method in (
        ("c.npz", continuous, zipfile.ZIP_STORED),
        ("r.npz", rounded, zipfile.ZIP_DEFLATED),
    ):
        path = tmp_path / name
        _write_scores(path, Scores(y, s, None))
        with zipfile.ZipFile(path) as zf:
            methods = {i.filename: i.compress_type for i in zf.infolist()}
            sizes = {i.filename: (i.compress_size, i.file_size) for i in zf.infolist()}
        assert methods["y_true.npy"] == zipfile.ZIP_DEFLATED
        assert methods["y_score.npy"] == score_method
        if score_method == zipfile.ZIP_DEFLATED:
            stored, raw = sizes["y_score.npy"]
            assert stored < 0.9 * raw
        with np.load(path, allow_pickle=False) as npz:  # plain numpy reads it, exactly
            np.testing.assert_array_equal(npz["y_true"], y)
            np.testing.assert_array_equal(npz["y_score"], s)


def test_log_scores_keeps_large_int64_and_float32_scores_exact(tracking_uri):
    """int64 scores above 2**53 stay distinct thresholds and float32 scores keep their values
    through log_scores and load_counts (reference: scikit-learn's roc_curve on the same data)."""
    import mlflow
    from sklearn.metrics import roc_curve

    rng = np.random.default_rng(11)
    n = 4000
    y = (rng.random(n) < 0.1).astype(int)
    base = 2**60
    s_int = base + 1024 * rng.integers(0, 300, size=n, dtype=np.int64)  # exact in float64
    s32 = rng.normal(size=n).astype(np.float32)
    for name, s in (("big_int", s_int), ("f32", s32)):
        with mlflow.start_run():
            logged = mi.log_scores(y, s, name=name, n_bootstrap=0, log_figures=False)
        c = mi.load_counts(logged.run_id, name=name)
        _, _, thr = roc_curve(y, s, drop_intermediate=False)
        assert c.n_pos == int(y.sum()) and c.n_neg == int(n - y.sum())
        # every threshold where a positive scores is kept by the lossless compression
        pos_thr = np.unique(s[y == 1])
        kept = np.isin(pos_thr.astype(np.float64), c.thresholds)
        assert kept.all()
        # cumulative counts at each stored threshold, counted directly on the original values
        sv = s.astype(np.float64)
        tp_ref = (sv[y == 1][:, None] >= c.thresholds[None, :]).sum(axis=0)
        fp_ref = (sv[y == 0][:, None] >= c.thresholds[None, :]).sum(axis=0)
        np.testing.assert_array_equal(c.tp, tp_ref)
        np.testing.assert_array_equal(c.fp, fp_ref)
        # and scikit-learn sees as many distinct thresholds where positives score
        assert np.isin(c.thresholds, thr.astype(np.float64)).all()
    colliding = np.array([2**60, 2**60 + 1] * 10, dtype=np.int64)
    with mlflow.start_run(), pytest.raises(ValueError, match="y_score"):
        mi.log_scores(np.tile([0, 1], 10), colliding, n_bootstrap=0)
