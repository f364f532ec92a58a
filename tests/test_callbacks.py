"""Training callbacks with the real frameworks (XGBoost, LightGBM; Keras/Lightning if installed)."""

from __future__ import annotations

import importlib.util
import os

import mlflow
import numpy as np
import pytest

import mlflow_imbalance as mi


def _split(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    X = np.c_[y + rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)]
    h = n // 2
    return X[:h], y[:h], X[h:], y[h:]


def _same(counts, y, scores):
    ref = mi.RocCounts.from_scores(y, scores)
    np.testing.assert_array_equal(counts.thresholds, ref.thresholds)
    np.testing.assert_array_equal(counts.tp, ref.tp)
    np.testing.assert_array_equal(counts.fp, ref.fp)


# ------------------------------------------------------------------------------ XGBoost
xgb = pytest.importorskip("xgboost")


def test_xgboost_train_logs_validation_counts(tracking_uri):
    from mlflow_imbalance.integrations.xgboost import ImbalanceCallback

    X, y, Xv, yv = _split()
    cb = ImbalanceCallback(Xv, yv, log_figures=False, prevalences=[1e-3])
    params = {"objective": "binary:logistic", "max_depth": 2, "nthread": 1}
    with mlflow.start_run() as run:
        booster = xgb.train(params, xgb.DMatrix(X, label=y), num_boost_round=5, callbacks=[cb])
    assert cb.logged is not None and cb.logged.run_id == run.info.run_id
    _same(mi.load_counts(run.info.run_id, "test"), yv, booster.predict(xgb.DMatrix(Xv)))


def test_xgboost_early_stopping_uses_best_iteration(tracking_uri):
    from mlflow_imbalance.integrations.xgboost import ImbalanceCallback

    X, y, Xv, yv = _split(seed=1)
    cb = ImbalanceCallback(Xv, yv, log_figures=False, keep_scores=False)
    with mlflow.start_run() as run:
        clf = xgb.XGBClassifier(
            n_estimators=40, max_depth=2, n_jobs=1, early_stopping_rounds=3, callbacks=[cb]
        )
        clf.fit(X, y, eval_set=[(Xv, yv)], verbose=False)
    best = clf.get_booster().best_iteration
    expected = clf.get_booster().predict(xgb.DMatrix(Xv), iteration_range=(0, best + 1))
    _same(mi.load_counts(run.info.run_id, "test"), yv, expected)


def test_xgboost_unreachable_server_warns_and_training_finishes(unreachable_tracking_uri):
    from mlflow_imbalance.integrations.xgboost import ImbalanceCallback

    X, y, Xv, yv = _split(n=300)
    cb = ImbalanceCallback(
        Xv, yv, run_id="0" * 32, tracking_uri=unreachable_tracking_uri, log_figures=False
    )
    with pytest.warns(UserWarning, match="XGBoost callback: could not log"):
        booster = xgb.train(
            {"objective": "binary:logistic", "nthread": 1},
            xgb.DMatrix(X, label=y),
            num_boost_round=3,
            callbacks=[cb],
        )
    assert booster.num_boosted_rounds() == 3
    assert cb.logged is None


def test_xgboost_old_spellings_warn_and_still_work(tracking_uri):
    from mlflow_imbalance.integrations.xgboost import ImbalanceCallback

    X, y, Xv, yv = _split(n=400, seed=4)
    with pytest.warns(
        FutureWarning, match=r"cost_fp=\.\.\., cost_fn=\.\.\.\) is deprecated; use costs="
    ):
        cb = ImbalanceCallback(Xv, yv, log_figures=False, n_bootstrap=0, cost_fp=1, cost_fn=40)
    with pytest.warns(FutureWarning, match=r"prevalence=\.\.\.\) is deprecated; use prevalences="):
        cb2 = ImbalanceCallback(Xv, yv, name="b", log_figures=False, prevalence=1e-3)
    params = {"objective": "binary:logistic", "max_depth": 2, "nthread": 1}
    with mlflow.start_run() as run:
        xgb.train(params, xgb.DMatrix(X, label=y), num_boost_round=3, callbacks=[cb, cb2])
    held = mi.list_counts(run.info.run_id)
    assert held["test"]["costs"] == {"fp": 1.0, "fn": 40.0}
    assert held["b"]["prevalences"] == [1e-3]


# ------------------------------------------------------------------------------ LightGBM


def test_lightgbm_last_iteration_and_early_stopping_logs_best_iteration(tracking_uri):
    lgb = pytest.importorskip("lightgbm")
    from mlflow_imbalance.integrations.lightgbm import ImbalanceCallback

    X, y, Xv, yv = _split(seed=2)
    params = {"objective": "binary", "num_leaves": 4, "verbose": -1, "num_threads": 1}
    cb = ImbalanceCallback(Xv, yv, log_figures=False)
    with mlflow.start_run() as run:
        booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=8, callbacks=[cb])
    _same(mi.load_counts(run.info.run_id, "test"), yv, booster.predict(Xv))

    cb2 = ImbalanceCallback(Xv, yv, name="early", log_figures=False)
    with mlflow.start_run() as run:
        booster = lgb.train(
            params,
            lgb.Dataset(X, y),
            num_boost_round=200,
            valid_sets=[lgb.Dataset(Xv, yv)],
            callbacks=[lgb.early_stopping(2, verbose=False), cb2],
        )
    # early stopping fired before round 200: the callback logged the best iteration by itself
    assert 0 < booster.best_iteration < 200 and booster.current_iteration() < 200
    assert cb2.logged is not None and cb2.logged.run_id == run.info.run_id
    expected = booster.predict(Xv, num_iteration=booster.best_iteration)
    _same(mi.load_counts(run.info.run_id, "early"), yv, expected)


def test_lightgbm_sklearn_api_unreachable_warns(unreachable_tracking_uri):
    lgb = pytest.importorskip("lightgbm")
    from mlflow_imbalance.integrations.lightgbm import ImbalanceCallback

    X, y, Xv, yv = _split(n=300, seed=3)
    cb = ImbalanceCallback(
        Xv, yv, run_id="0" * 32, tracking_uri=unreachable_tracking_uri, log_figures=False
    )
    with pytest.warns(UserWarning, match="LightGBM callback: could not log"):
        clf = lgb.LGBMClassifier(n_estimators=4, num_leaves=4, verbose=-1, n_jobs=1)
        clf.fit(X, y, callbacks=[cb])
    assert clf.n_estimators_ == 4


# ------------------------------------------------------------------------------ Keras / Lightning


def _keras_usable() -> bool:
    """Keras 3 needs a backend; pick an installed one unless the user chose already."""
    if importlib.util.find_spec("keras") is None:
        return False
    if "KERAS_BACKEND" in os.environ:
        return True
    for backend in ("tensorflow", "torch", "jax"):
        if importlib.util.find_spec(backend) is not None:
            os.environ["KERAS_BACKEND"] = backend
            return True
    return False


@pytest.mark.skipif(not _keras_usable(), reason="keras or a keras backend not installed")
def test_keras_on_train_end(tracking_uri):
    import keras

    from mlflow_imbalance.integrations.keras import ImbalanceCallback

    X, y, Xv, yv = _split(n=400, seed=4)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    cb = ImbalanceCallback(Xv, yv, log_figures=False)
    with mlflow.start_run() as run:
        model.fit(X, y, epochs=1, verbose=0, callbacks=[cb])
    _same(mi.load_counts(run.info.run_id, "test"), yv, model.predict(Xv, verbose=0)[:, 0])


@pytest.mark.skipif(
    importlib.util.find_spec("lightning") is None
    and importlib.util.find_spec("pytorch_lightning") is None,
    reason="lightning not installed",
)
def test_lightning_on_fit_end(tracking_uri):
    import torch

    try:
        import lightning.pytorch as pl
    except ImportError:
        import pytorch_lightning as pl

    from mlflow_imbalance.integrations.lightning import ImbalanceCallback

    X, y, Xv, yv = _split(n=400, seed=5)

    class Net(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 1)

        def forward(self, x):
            return torch.sigmoid(self.lin(x))

        def training_step(self, batch, _):
            xb, yb = batch
            return torch.nn.functional.binary_cross_entropy(self(xb)[:, 0], yb)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    ds = torch.utils.data.TensorDataset(
        torch.tensor(X, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    )
    xv = torch.tensor(Xv, dtype=torch.float32)
    cb = ImbalanceCallback(xv, yv, log_figures=False)
    net = Net()
    trainer = pl.Trainer(
        max_epochs=1,
        callbacks=[cb],
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        accelerator="cpu",
    )
    with mlflow.start_run() as run:
        trainer.fit(net, torch.utils.data.DataLoader(ds, batch_size=64))
    with torch.no_grad():
        expected = net(xv)[:, 0].numpy()
    _same(mi.load_counts(run.info.run_id, "test"), yv, expected)
