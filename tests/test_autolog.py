"""mlflow_imbalance.autolog() with real scikit-learn and a real SQLite tracking store."""

from __future__ import annotations

import warnings

import mlflow
import numpy as np
import pytest
import sklearn.metrics
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import PrecisionRecallDisplay, RocCurveDisplay

import mlflow_imbalance as mi
from mlflow_imbalance.tracking import autologging

ORIGINALS = {
    name: getattr(sklearn.metrics, name)
    for name in ("roc_auc_score", "average_precision_score", "roc_curve", "det_curve")
}


@pytest.fixture
def autolog_off():
    yield
    mi.autolog(disable=True)
    mlflow.sklearn.autolog(disable=True)
    autologging._captures.clear()
    autologging._warned_once.clear()


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.2).astype(int)
    y[:2] = [0, 1]
    return y, rng.normal(size=n) + y


def test_captures_once_per_distinct_data(tracking_uri, autolog_off):
    y, s = _data()
    y2, s2 = _data(seed=1)
    mi.autolog(log_figures=False)
    with mlflow.start_run() as run:
        auc = sklearn.metrics.roc_auc_score(y, s)
        sklearn.metrics.roc_curve(y, s)  # same data: not logged again
        sklearn.metrics.average_precision_score(y2, s2)  # new data: test_2
    assert auc == ORIGINALS["roc_auc_score"](y, s)
    held = mi.list_counts(run.info.run_id)
    assert sorted(held) == ["test", "test_2"]  # the default name of every entry point
    assert held["test"]["captured_from"] == "sklearn.metrics.roc_auc_score"
    assert held["test"]["source"] == "autolog"
    got = mi.load_counts(run.info.run_id, "test_2")
    expected = mi.RocCounts.from_scores(y2, s2)
    np.testing.assert_array_equal(got.tp, expected.tp)
    np.testing.assert_array_equal(got.thresholds, expected.thresholds)


def test_outside_run_multiclass_and_disable(tracking_uri, autolog_off):
    mi.autolog(log_figures=False)
    y, s = _data()
    sklearn.metrics.roc_auc_score(y, s)  # no active run: nothing, no run started
    assert mlflow.active_run() is None
    rng = np.random.default_rng(0)
    y3 = np.arange(90) % 3
    p3 = rng.dirichlet(np.ones(3), 90)
    with mlflow.start_run() as run, warnings.catch_warnings():
        warnings.simplefilter("error")  # a skipped multiclass call must not warn
        sklearn.metrics.roc_auc_score(y3, p3, multi_class="ovr")
    assert mi.list_counts(run.info.run_id) == {}
    mi.autolog(disable=True)
    for name, fn in ORIGINALS.items():
        assert getattr(sklearn.metrics, name) is fn
    assert "__wrapped__" not in RocCurveDisplay.from_predictions.__func__.__dict__
    with mlflow.start_run() as run:
        sklearn.metrics.roc_auc_score(y, s)
    assert mi.list_counts(run.info.run_id) == {}


def test_displays_from_estimator_captured_once(tracking_uri, autolog_off):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    y, _ = _data(300)
    X = np.c_[y + np.random.default_rng(2).normal(size=y.size), np.ones(y.size)]
    model = LogisticRegression().fit(X, y)
    mi.autolog(log_figures=False)
    with mlflow.start_run() as run:
        RocCurveDisplay.from_estimator(model, X, y)  # from_estimator -> from_predictions
        # "auto" response of LogisticRegression = predict_proba: the same scores again
        PrecisionRecallDisplay.from_predictions(y, model.predict_proba(X)[:, 1])
    held = mi.list_counts(run.info.run_id)
    # both calls score the same examples with the same function values: one capture
    assert list(held) == ["test"]
    assert held["test"]["captured_from"] == "RocCurveDisplay.from_estimator"
    import matplotlib.pyplot as plt

    plt.close("all")


def test_names_imported_before_autolog_are_not_patched(tracking_uri, autolog_off):
    # documented limitation: a name bound before autolog() keeps the original function
    from sklearn.metrics import roc_auc_score as early

    with pytest.warns(UserWarning, match=r"early \(in test_names_imported.*NOT be captured"):
        mi.autolog(log_figures=False)
    y, s = _data()
    with mlflow.start_run() as run:
        early(y, s)
    assert mi.list_counts(run.info.run_id) == {}
    from sklearn.metrics import roc_auc_score as late

    with mlflow.start_run() as run:
        late(y, s)
    assert list(mi.list_counts(run.info.run_id)) == ["test"]


@pytest.mark.parametrize("ours_first", [True, False])
def test_coexists_with_mlflow_sklearn_autolog(tracking_uri, autolog_off, ours_first):
    y, _ = _data(300)
    X_test = np.c_[y + np.random.default_rng(3).normal(size=y.size), np.ones(y.size)]
    if ours_first:
        mi.autolog(log_figures=False)
        mlflow.sklearn.autolog(log_models=False, log_datasets=False, silent=True)
    else:
        mlflow.sklearn.autolog(log_models=False, log_datasets=False, silent=True)
        mi.autolog(log_figures=False)
    with mlflow.start_run() as run:
        model = LogisticRegression().fit(X_test, y)
        y_pred = model.predict(X_test)
        auc = sklearn.metrics.roc_auc_score(y, y_pred)
    assert auc == ORIGINALS["roc_auc_score"](y, y_pred)
    data = MlflowClient().get_run(run.info.run_id).data
    assert "roc_auc_score_X_test" in data.metrics  # mlflow.sklearn's post-training metric
    assert "training_score" in data.metrics
    assert list(mi.list_counts(run.info.run_id)) == ["test"]  # and our capture
    mi.autolog(disable=True)
    mlflow.sklearn.autolog(disable=True)
    with mlflow.start_run() as run:
        sklearn.metrics.roc_auc_score(y, y_pred)
    assert mi.list_counts(run.info.run_id) == {}


def test_unreachable_server_warns_and_user_code_continues(
    tracking_uri, unreachable_tracking_uri, autolog_off
):
    y, s = _data()
    mi.autolog(log_figures=False)
    with mlflow.start_run() as run:
        mlflow.set_tracking_uri(unreachable_tracking_uri)
        try:
            with pytest.warns(UserWarning, match="could not log scores"):
                auc = sklearn.metrics.roc_auc_score(y, s)
        finally:
            mlflow.set_tracking_uri(tracking_uri)
    assert auc == ORIGINALS["roc_auc_score"](y, s)
    assert mi.list_counts(run.info.run_id) == {}


def test_silent_suppresses_warnings(tracking_uri, unreachable_tracking_uri, autolog_off):
    y, s = _data()
    mi.autolog(silent=True, log_figures=False)
    with mlflow.start_run():
        mlflow.set_tracking_uri(unreachable_tracking_uri)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                sklearn.metrics.average_precision_score(y, s)
        finally:
            mlflow.set_tracking_uri(tracking_uri)


def test_bad_autolog_options_fail_early(autolog_off):
    with pytest.raises(ValueError, match="prevalences"):
        mi.autolog(prevalences=[2.0])
    assert sklearn.metrics.roc_auc_score is ORIGINALS["roc_auc_score"]


def test_module_level_import_before_autolog_warns_once_naming_it(tracking_uri, autolog_off):
    import sys
    import types

    user = types.ModuleType("a_user_training_script")  # sorts first among the names shown
    exec("from sklearn.metrics import average_precision_score as ap", user.__dict__)
    sys.modules[user.__name__] = user
    try:
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            mi.autolog(log_figures=False)
        ours = [str(w.message) for w in records if "mlflow-imbalance" in str(w.message)]
        assert len(ours) == 1 and "a_user_training_script.ap" in ours[0], ours
        assert "mi.autolog() before" in ours[0]  # says what to do
    finally:
        del sys.modules[user.__name__]


def test_metric_after_mlflow_sklearn_run_ended_warns_once(tracking_uri, autolog_off):
    y, _ = _data(300)
    X = np.c_[y + np.random.default_rng(4).normal(size=y.size), np.ones(y.size)]
    mlflow.sklearn.autolog(log_models=False, log_datasets=False, silent=True)
    mi.autolog(log_figures=False)
    model = LogisticRegression().fit(X, y)  # mlflow.sklearn starts a run and ends it here
    assert mlflow.active_run() is None
    s = model.predict_proba(X)[:, 1]
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        sklearn.metrics.roc_auc_score(y, s)
        sklearn.metrics.average_precision_score(y, s)  # the same situation: no second warning
    ours = [str(w.message) for w in records if "mlflow-imbalance" in str(w.message)]
    assert len(ours) == 1, ours
    assert "outside an active MLflow run" in ours[0] and "mlflow.start_run" in ours[0]
    run_id = mlflow.last_active_run().info.run_id
    with mlflow.start_run(run_id=run_id):  # what the warning suggests: it now captures
        sklearn.metrics.roc_auc_score(y, s)
    assert list(mi.list_counts(run_id)) == ["test"]


def test_capture_limit_warns_once_per_run(tracking_uri, autolog_off):
    mi.autolog(log_figures=False, max_captures_per_run=1)
    with mlflow.start_run() as run, warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        for seed in range(4):
            sklearn.metrics.roc_auc_score(*_data(seed=seed))
    ours = [str(w.message) for w in records if "mlflow-imbalance" in str(w.message)]
    assert len(ours) == 1 and "max_captures_per_run" in ours[0], ours
    assert list(mi.list_counts(run.info.run_id)) == ["test"]


def test_capture_names_follow_name_and_skip_sets_logged_explicitly(tracking_uri, autolog_off):
    y, s = _data()
    y2, s2 = _data(seed=5)
    mi.autolog(log_figures=False, name="holdout")
    with mlflow.start_run() as run:
        mi.log_scores(y, s, name="holdout", prevalences=[], log_figures=False, n_bootstrap=0)
        sklearn.metrics.roc_auc_score(y2, s2)  # "holdout" is taken by the explicit call
    held = mi.list_counts(run.info.run_id)
    assert sorted(held) == ["holdout", "holdout_2"]
    assert held["holdout_2"]["source"] == "autolog" and "source" not in held["holdout"]
    with pytest.raises(ValueError, match="name must be"):
        mi.autolog(name="a/b")
