"""Real data, four entry points, one report: "8 vs rest" on scikit-learn's digits.

Loads scikit-learn's handwritten digits (``load_digits``, bundled with scikit-learn, no
download) and turns them into an imbalanced binary task: is the digit an 8 (about 10 % of the
images)? One fixed, seeded, stratified train/test split; four models are trained on the same
training rows and score the SAME test rows in the same order, each logged to its own MLflow run
through a different entry point of mlflow-imbalance:

1. ``log_scores`` -- a logistic regression, logged by hand;
2. ``autolog()`` -- a random forest, captured when ``sklearn.metrics.roc_auc_score`` is called
   on its test scores;
3. the LightGBM callback (``mlflow_imbalance.integrations.lightgbm``), test set as its data;
4. the XGBoost callback (``mlflow_imbalance.integrations.xgboost``), test set as its data.

Every run logs the deployment prevalences 1e-3 and 1e-4 and the costs of one false positive
(1) and one missed 8 (100), so the report picks the run with the lowest expected cost at each
prevalence. Because all four runs scored the same test set, the report pairs them. A fifth of
the images is held back as production: two unlabeled batches are scored by every model and
logged with ``log_production_scores``, and the report also decides over what the latest
batch's estimates allow about the share of 8s. It writes ``digits-report.html`` and prints the
verdict, how many runs were compared and any run skipped.

Tracking store: ``sqlite:///mlflow.db`` (MLflow's embedded default) unless
``MLFLOW_TRACKING_URI`` is set; experiment ``mlflow-imbalance-digits``.

Needs LightGBM and XGBoost besides the quick start's packages (the ``test`` extra has them):
``.venv/bin/pip install -e ".[examples]" lightgbm xgboost``.

Run:  .venv/bin/python examples/digits.py
"""

from __future__ import annotations

import os
import time

import lightgbm as lgb
import mlflow
import sklearn.metrics
import xgboost as xgb
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import mlflow_imbalance as mi
from mlflow_imbalance.integrations.lightgbm import ImbalanceCallback as LightGBMCallback
from mlflow_imbalance.integrations.xgboost import ImbalanceCallback as XGBoostCallback
from mlflow_imbalance.tracking import runs_view_url

EXPERIMENT = "mlflow-imbalance-digits"
REPORT = "digits-report.html"
DEPLOYMENT = [1e-3, 1e-4]  # the share of 8s the model will really meet
COSTS = {"fp": 1, "fn": 100}  # a missed 8 costs 100 times a false alarm
SEED = 0


def say(text: str) -> None:
    print(text, flush=True)


def _production_batches(X_pool, y_pool) -> dict:
    """Two unlabeled batches from the held-back images: ``{label: (X, true share of 8s)}``.

    Week 47 keeps every held-back image (8s as common as in the test set); week 48 keeps all
    the other digits but only 3 of the 8s, a prevalence near 1 %, so the share of 8s is known
    only as a wide range from ~300 unlabeled images.
    """
    import numpy as np

    rng = np.random.default_rng(SEED)
    neg, pos = np.flatnonzero(y_pool == 0), np.flatnonzero(y_pool == 1)
    few = np.concatenate([neg, rng.choice(pos, 3, replace=False)])
    return {
        "2026-w47": (X_pool, float(y_pool.mean())),
        "2026-w48": (X_pool[few], 3 / few.size),
    }


def main() -> None:
    t0 = time.perf_counter()
    uri = os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///mlflow.db")
    say(f"Tracking store: {uri}; experiment {EXPERIMENT!r}")
    mlflow.set_tracking_uri(uri)
    experiment = mlflow.set_experiment(EXPERIMENT)

    X, digit = load_digits(return_X_y=True)
    y = (digit == 8).astype(int)
    # a fifth of the images stands in for production: scored later, labels unknown
    X, X_pool, y, y_pool = train_test_split(X, y, test_size=0.2, stratify=y, random_state=SEED)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=SEED
    )
    say(
        f"Digits: {len(y) + len(y_pool)} images, {y.mean():.1%} are 8s; train {len(y_train)}, "
        f"test {len(y_test)} ({int(y_test.sum())} 8s), the same test rows for every model; "
        f"{len(y_pool)} held back as production"
    )
    batches = _production_batches(X_pool, y_pool)
    run_ids, models = [], []

    say("1/4 logistic regression, logged with mi.log_scores ...")
    with mlflow.start_run(run_name="logistic-regression (log_scores)") as run:
        model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))
        model.fit(X_train, y_train)
        mi.log_scores(
            y_test, model.predict_proba(X_test)[:, 1], prevalences=DEPLOYMENT, costs=COSTS
        )
        run_ids.append(run.info.run_id)
        models.append(lambda X, m=model: m.predict_proba(X)[:, 1])

    say("2/4 random forest, captured by mi.autolog() from sklearn.metrics.roc_auc_score ...")
    mi.autolog(prevalences=DEPLOYMENT, costs=COSTS)
    try:
        with mlflow.start_run(run_name="random-forest (autolog)") as run:
            model = RandomForestClassifier(n_estimators=200, random_state=SEED, n_jobs=1)
            model.fit(X_train, y_train)
            # called through the module, so the patched function sees it (see autolog's docs)
            auc = sklearn.metrics.roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])
            say(f"    (scikit-learn's own ROC-AUC, returned unchanged: {auc:.4f})")
            run_ids.append(run.info.run_id)
            models.append(lambda X, m=model: m.predict_proba(X)[:, 1])
    finally:
        mi.autolog(disable=True)

    say("3/4 LightGBM, logged by its callback at the end of training ...")
    with mlflow.start_run(run_name="lightgbm (callback)") as run:
        callback = LightGBMCallback(X_test, y_test, prevalences=DEPLOYMENT, costs=COSTS)
        params = {
            "objective": "binary",
            "num_leaves": 15,
            "learning_rate": 0.1,
            "verbose": -1,
            "num_threads": 2,
            "seed": SEED,
        }
        booster = lgb.train(
            params, lgb.Dataset(X_train, y_train), num_boost_round=150, callbacks=[callback]
        )
        run_ids.append(run.info.run_id)
        models.append(lambda X, b=booster: b.predict(X))

    say("4/4 XGBoost, logged by its callback at the end of training ...")
    with mlflow.start_run(run_name="xgboost (callback)") as run:
        callback = XGBoostCallback(X_test, y_test, prevalences=DEPLOYMENT, costs=COSTS)
        params = {
            "objective": "binary:logistic",
            "max_depth": 3,
            "eta": 0.1,
            "nthread": 2,
            "seed": SEED,
        }
        dtrain = xgb.DMatrix(X_train, label=y_train)
        booster = xgb.train(params, dtrain, num_boost_round=150, callbacks=[callback])
        run_ids.append(run.info.run_id)
        models.append(lambda X, b=booster: b.predict(xgb.DMatrix(X)))

    mi.flush()  # the callbacks finish logging in the background; wait for them
    for label, (X_batch, truth) in batches.items():
        say(f"Production batch {label}: {len(X_batch)} unlabeled images (truly {truth:.2%} 8s)")
        for run_id, score in zip(run_ids, models, strict=True):
            prod = mi.log_production_scores(score(X_batch), batch=label, run_id=run_id)
            say(f"    estimated share of 8s {prod.estimate.brief}")
    say("Building the report (prevalences and costs as logged with the runs) ...")
    t_report = time.perf_counter()
    report = mi.build_report(
        run_ids,
        n_bootstrap=300,
        output=REPORT,
        title="Digits, 8 vs rest: which model at a prevalence of 1e-3 or 1e-4?",
    )
    compared = [r["name"] for r in report.context["runs"]]
    now = time.perf_counter()
    say(
        f"\nWrote {REPORT}: the report took {now - t_report:.1f} s to build (this whole script, "
        f"training included, {now - t0:.0f} s)"
    )
    say(f"Compared {len(compared)} runs: {', '.join(compared)}")
    say(f"Skipped runs: {len(report.skipped)}")
    for skip in report.skipped:
        say(f"  {skip.name} ({skip.run_id}): {skip.reason}")
    say(f"Notes: {len(report.notes)}")
    for note in report.notes:
        say(f"  {note}")
    say("Verdict:")
    for verdict in report.verdict:
        say(f"  {verdict.text}")
    say(f"\nOpen it:     python -m webbrowser -t {REPORT}   (or open {REPORT} in a browser)")
    say(f"MLflow UI:   mlflow ui --backend-store-uri {uri}")
    say(f"             then {runs_view_url(uri, experiment.experiment_id)}")


if __name__ == "__main__":
    main()
