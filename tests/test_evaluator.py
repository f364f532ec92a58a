"""The 'imbalance' evaluator plugin through the real mlflow.models.evaluate."""

from __future__ import annotations

from importlib.metadata import entry_points

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

import mlflow_imbalance as mi
from mlflow_imbalance.tracking.evaluator import ImbalanceEvaluator
from mlflow_imbalance.tracking.keys import metric_key


def _frame(n=600, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n) if classes > 2 else (rng.random(n) < 0.15).astype(int)
    X = pd.DataFrame({"a": y + rng.normal(size=n), "b": rng.normal(size=n)})
    return X, y


@pytest.fixture(scope="module")
def binary_model_data():
    X, y = _frame()
    model = LogisticRegression().fit(X, y)
    return model, X.assign(label=y)


def _log_model(model, X):
    return mlflow.sklearn.log_model(model, name="model", input_example=X.head(3)).model_uri


def test_entry_point_is_registered():
    eps = {ep.name: ep for ep in entry_points(group="mlflow.model_evaluator")}
    assert eps["imbalance"].value == "mlflow_imbalance.tracking.evaluator:ImbalanceEvaluator"
    assert eps["imbalance"].load() is ImbalanceEvaluator
    from mlflow_imbalance.evaluator import ImbalanceEvaluator as OldPath

    assert OldPath is ImbalanceEvaluator  # the old import path keeps working
    from mlflow.models.evaluation.evaluator_registry import _model_evaluation_registry

    assert "imbalance" in _model_evaluation_registry._registry


def test_explicit_default_and_imbalance(tracking_uri, binary_model_data):
    model, data = binary_model_data
    with mlflow.start_run() as run:
        uri = _log_model(model, data.drop(columns="label"))
        result = mlflow.models.evaluate(
            uri,
            data,
            targets="label",
            model_type="classifier",
            evaluators=["default", "imbalance"],
            evaluator_config={"imbalance": {"prevalences": [1e-3], "log_figures": False}},
        )
    proba = model.predict_proba(data.drop(columns="label"))[:, 1]
    expected = roc_auc_score(data["label"], proba)
    assert result.metrics[metric_key("test", "roc_auc")] == pytest.approx(expected, rel=1e-12)
    assert result.metrics["roc_auc"] == pytest.approx(expected, rel=1e-9)  # default still there
    run_metrics = MlflowClient().get_run(run.info.run_id).data.metrics
    assert metric_key("test", "ap", 1e-3) in run_metrics
    counts = mi.load_counts(run.info.run_id)
    ref = mi.RocCounts.from_scores(data["label"], proba)
    np.testing.assert_array_equal(counts.tp, ref.tp)
    np.testing.assert_array_equal(counts.fp, ref.fp)


def test_implicit_run_on_static_predictions(tracking_uri):
    X, y = _frame(seed=1)
    scores = X["a"].to_numpy()
    data = pd.DataFrame({"label": y, "pred": (scores > 1).astype(int), "score": scores})
    with mlflow.start_run() as run:
        result = mlflow.models.evaluate(
            data=data,
            targets="label",
            predictions="pred",
            model_type="classifier",
            evaluator_config={"score_column": "score", "log_figures": False},
        )
    assert result.metrics[metric_key("test", "roc_auc")] == pytest.approx(roc_auc_score(y, scores))
    assert "accuracy_score" in result.metrics
    summary = mi.list_counts(run.info.run_id)["test"]
    assert summary["n_pos"] == int(y.sum())


def test_default_name_and_old_config_spellings(tracking_uri):
    X, y = _frame(seed=6)
    scores = X["a"].to_numpy()
    data = pd.DataFrame({"label": y, "pred": (scores > 1).astype(int), "score": scores})
    config = {"score_column": "score", "log_figures": False, "n_bootstrap": 0}
    with mlflow.start_run() as run:
        with pytest.warns(FutureWarning, match=r"cost_fp=\.\.\., cost_fn=\.\.\.\) is deprecated"):
            result = mlflow.models.evaluate(
                data=data, targets="label", predictions="pred", model_type="classifier",
                evaluators=["imbalance"],
                evaluator_config={
                    "imbalance": {**config, "cost_fp": 1, "cost_fn": 10, "prevalences": [1e-3]}
                },
            )  # fmt: skip
    assert list(mi.list_counts(run.info.run_id)) == ["test"]  # every entry point's default
    assert mi.load_summary(run.info.run_id)["costs"] == {"fp": 1.0, "fn": 10.0}
    assert metric_key("test", "min_cost_per_10k", 1e-3) in result.metrics


def test_implicit_multiclass_skips_without_breaking_default(tracking_uri):
    X, y = _frame(classes=3, seed=2)
    model = LogisticRegression().fit(X, y)
    with mlflow.start_run() as run:
        uri = _log_model(model, X)
        with pytest.warns(UserWarning, match="3 classes"):
            result = mlflow.models.evaluate(
                uri, X.assign(label=y), targets="label", model_type="classifier"
            )
    assert "accuracy_score" in result.metrics  # the default evaluator ran
    assert not any(k.startswith(("imbalance/", "imb/")) for k in result.metrics)
    assert mi.list_counts(run.info.run_id) == {}


def test_implicit_never_raises_but_strict_does(tracking_uri):
    X, y = _frame(seed=3)
    data = pd.DataFrame({"label": y, "pred": (X["a"] > 1).astype(int), "score": X["a"]})
    with mlflow.start_run() as run:
        with pytest.warns(UserWarning, match="mlflow-imbalance evaluator skipped"):
            result = mlflow.models.evaluate(
                data=data,
                targets="label",
                predictions="pred",
                model_type="classifier",
                evaluator_config={"score_column": "score", "prevalences": [7.0]},
            )
        assert "accuracy_score" in result.metrics  # the default evaluator is untouched
        assert mi.list_counts(run.info.run_id) == {}
        with pytest.raises(ValueError, match="prevalences"):
            mlflow.models.evaluate(
                data=data,
                targets="label",
                predictions="pred",
                model_type="classifier",
                evaluators=["imbalance"],
                evaluator_config={
                    "imbalance": {"score_column": "score", "prevalences": [7.0], "strict": True}
                },
            )


def test_can_evaluate_only_classifiers():
    assert ImbalanceEvaluator.can_evaluate(model_type="classifier", evaluator_config={})
    assert not ImbalanceEvaluator.can_evaluate(model_type="regressor", evaluator_config={})


def test_n_bootstrap_and_seed_reach_log_scores(tracking_uri):
    """``n_bootstrap`` and ``seed`` from the evaluator config are the ones recorded, and a bad
    ``n_bootstrap`` is rejected by log_scores (strict) rather than silently ignored."""
    X, y = _frame(seed=4)
    data = pd.DataFrame({"label": y, "pred": (X["a"] > 1).astype(int), "score": X["a"]})
    cfg = {"score_column": "score", "log_figures": False, "prevalences": [1e-2]}
    with mlflow.start_run() as run:
        mlflow.models.evaluate(
            data=data,
            targets="label",
            predictions="pred",
            model_type="classifier",
            evaluators=["imbalance"],
            evaluator_config={"imbalance": {**cfg, "n_bootstrap": 60, "seed": 11}},
        )
        boot = mi.list_counts(run.info.run_id)["test"]["headline"]["bootstrap"]
        assert boot["n_boot"] == 60 and boot["seed"] == 11
        mlflow.models.evaluate(
            data=data,
            targets="label",
            predictions="pred",
            model_type="classifier",
            evaluators=["imbalance"],
            evaluator_config={"imbalance": {**cfg, "name": "off", "n_bootstrap": 0}},
        )
        off = mi.list_counts(run.info.run_id)["off"]["headline"]
        assert off["bootstrap"] is None and off["at_prevalence"][0]["ap"]["interval"] is None
        with pytest.raises(ValueError, match="n_bootstrap"):
            mlflow.models.evaluate(
                data=data,
                targets="label",
                predictions="pred",
                model_type="classifier",
                evaluators=["imbalance"],
                evaluator_config={"imbalance": {**cfg, "n_bootstrap": 3, "strict": True}},
            )


def _imbalance_messages(records) -> list[str]:
    return [str(w.message) for w in records if "mlflow-imbalance" in str(w.message)]


def test_multiclass_skip_is_one_short_message(tracking_uri, caplog):
    import logging
    import warnings

    X, y = _frame(classes=3, seed=5)
    data = pd.DataFrame({"label": y, "pred": y, "score": X["a"]})
    with mlflow.start_run(), warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        caplog.set_level(logging.INFO, logger="mlflow_imbalance")
        mlflow.models.evaluate(
            data=data, targets="label", predictions="pred", model_type="classifier"
        )
    messages = _imbalance_messages(records)
    assert len(messages) == 1 and "3 classes" in messages[0] and len(messages[0]) < 200
    ours = [r for r in caplog.records if r.name.startswith("mlflow_imbalance")]
    assert all(r.levelno < logging.WARNING for r in ours)  # not printed a second time


def test_hard_labels_skipped_unless_named(tracking_uri):
    import warnings

    X, y = _frame(seed=6)
    hard = (X["a"] > 0.5).astype(int)
    data = pd.DataFrame({"label": y, "pred": hard})
    with mlflow.start_run() as run, warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        mlflow.models.evaluate(
            data=data,
            targets="label",
            predictions="pred",
            model_type="classifier",
            evaluator_config={"log_figures": False},
        )
    messages = _imbalance_messages(records)
    assert len(messages) == 1 and "hard labels" in messages[0], messages
    assert mi.list_counts(run.info.run_id) == {}
    with mlflow.start_run() as run, warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        mlflow.models.evaluate(
            data=data,
            targets="label",
            predictions="pred",
            model_type="classifier",
            evaluators=["default", "imbalance"],
            evaluator_config={"imbalance": {"log_figures": False}},
        )
    messages = _imbalance_messages(records)
    assert len(messages) == 1 and "at most two distinct values" in messages[0], messages
    counts = mi.load_counts(run.info.run_id)
    assert counts.n_thresholds <= 2 and counts.n_pos == int(y.sum())
