"""Quick start: three classifiers whose ranking flips between test and deployment prevalence.

Trains scikit-learn classifiers on an imbalanced synthetic data set (``make_classification``,
no download), logs each test set's ROC counts to its own MLflow run with
``mlflow_imbalance.log_scores`` (tracking store: ``sqlite:///mlflow.db``, MLflow's embedded
default, unless ``MLFLOW_TRACKING_URI`` is set), checks with ``ranking.flip_points`` that the
average-precision ranking really flips between the test prevalence and the deployment
prevalence, logs one batch of unlabeled "production" scores per model whose true prevalence
(0.002, known here because the script made the data) differs from the test set's, and writes
``report.html``, whose verdict it prints (which model to ship at each deployment prevalence and
at the prevalence estimated from the production batch, at which threshold, and how sure). It
says what it is doing as it goes.

Run:  python examples/quickstart.py
"""

from __future__ import annotations

import os
import time

import mlflow
import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline

import mlflow_imbalance as mi
from mlflow_imbalance import metrics, ranking
from mlflow_imbalance.tracking import runs_view_url

EXPERIMENT = "mlflow-imbalance-quickstart"
DEPLOYMENT = [1e-3, 1e-4]  # the prevalence the model will really meet in production
TRUE_PRODUCTION_ETA = 0.002  # the production batch's prevalence: the report estimates it


def say(text: str) -> None:
    print(text, flush=True)


def main() -> None:
    t0 = time.perf_counter()
    uri = os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///mlflow.db")
    say(f"Tracking store: {uri}; experiment {EXPERIMENT!r}")
    mlflow.set_tracking_uri(uri)
    experiment = mlflow.set_experiment(EXPERIMENT)
    say("Making an imbalanced data set (90,000 rows, 7 % positives) ...")
    # A hard, noisy problem that scikit-learn makes, plus a "signature" feature that a small
    # share of the positives carry very clearly (like a known attack pattern): a model that only
    # knows the signature is rarely wrong when it fires, one that models the rest has better
    # recall. Which one is "better" depends on the prevalence.
    X, y = make_classification(
        n_samples=90_000,
        n_features=12,
        n_informative=5,
        n_redundant=2,
        weights=[0.93, 0.07],
        flip_y=0.01,
        class_sep=0.9,
        random_state=7,
    )
    rng = np.random.default_rng(7)
    signature = rng.normal(size=y.size)
    carriers = (y == 1) & (rng.random(y.size) < 0.25)
    signature[carriers] += 4.5
    X = np.column_stack([X, signature])
    # a third of the rows stands in for production: cases scored later, labels unknown
    X, X_pool, y, y_pool = train_test_split(X, y, test_size=1 / 3, stratify=y, random_state=1)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    # the production batch: all of the pool's negatives and as many positives as make its
    # prevalence TRUE_PRODUCTION_ETA (prior shift: each class's cases are as in the test set)
    neg, pos = np.flatnonzero(y_pool == 0), np.flatnonzero(y_pool == 1)
    n_pos = round(TRUE_PRODUCTION_ETA / (1 - TRUE_PRODUCTION_ETA) * neg.size)
    X_prod = X_pool[np.concatenate([neg, rng.choice(pos, n_pos, replace=False)])]
    sig_only = ColumnTransformer([("sig", "passthrough", [X.shape[1] - 1])])
    no_sig = ColumnTransformer([("rest", "passthrough", list(range(X.shape[1] - 1)))])
    models = {
        "signature-rule": make_pipeline(sig_only, LogisticRegression()),
        "gradient-boosting": make_pipeline(
            no_sig, HistGradientBoostingClassifier(max_iter=150, random_state=0)
        ),
        "naive-bayes": make_pipeline(no_sig, GaussianNB()),
    }
    counts, run_ids = {}, []
    for name, model in models.items():
        say(f"Training {name} and logging its ROC counts to a new MLflow run ...")
        with mlflow.start_run(run_name=name) as run:
            model.fit(X_tr, y_tr)
            score = model.predict_proba(X_te)[:, 1]
            mlflow.log_param("model", type(model[-1]).__name__)
            mi.log_scores(
                y_te, score, name="test", prevalences=DEPLOYMENT, costs={"fp": 1, "fn": 100}
            )
            counts[name] = mi.RocCounts.from_scores(y_te, score)
            run_ids.append(run.info.run_id)
    say(f"Logging a production batch ({len(X_prod):,} unlabeled cases) for each model ...")
    for name, run_id in zip(models, run_ids, strict=True):
        prod = mi.log_production_scores(
            models[name].predict_proba(X_prod)[:, 1], batch="2026-w48", run_id=run_id
        )
        e = prod.estimate
        say(
            f"  {name:20s} estimated η {e.brief} (true {TRUE_PRODUCTION_ETA}); "
            f"prior-shift check {e.check_text}"
        )
    test_eta = float(np.mean(y_te))
    print(f"test prevalence {test_eta:.3f}; deployment prevalences {DEPLOYMENT}")
    for name, c in counts.items():
        print(
            f"  {name:20s} ROC-AUC {metrics.roc_auc(c):.4f}  AP@test "
            f"{metrics.average_precision(c):.4f}  AP@1e-4 {metrics.average_precision(c, 1e-4):.5f}"
        )
    names = list(counts)
    flips = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for eta in ranking.flip_points(
                counts[a], counts[b], metric="ap", prevalence_range=(min(DEPLOYMENT), test_eta)
            ):
                flips.append((a, b, eta))
                print(f"  AP ranking flip: {a} vs {b} at eta* = {eta:.3g}")
    if not flips:
        raise SystemExit("expected an AP ranking flip between test and deployment prevalence")
    say("Building the report (prevalences and costs as logged with the runs) ...")
    t_report = time.perf_counter()
    report = mi.build_report(
        run_ids,
        n_bootstrap=300,
        output="report.html",
        title=f"Quick start: which model? (production η is truly {TRUE_PRODUCTION_ETA})",
    )
    now = time.perf_counter()
    mb, secs, total = len(report.html) / 1e6, now - t_report, now - t0
    say(
        f"\nWrote report.html ({mb:.1f} MB): the report took {secs:.1f} s to build "
        f"(this whole script, training included, {total:.0f} s)"
    )
    say("Verdict:")
    for v in report.verdict:
        say(f"  {v.text}")
    say("\nOpen it:     python -m webbrowser -t report.html   (or open report.html in a browser)")
    say("For a review: mlflow-imbalance report --experiment " + EXPERIMENT + " --pdf report.pdf")
    say(f"MLflow UI:   mlflow ui --backend-store-uri {uri}")
    say(f"             then {runs_view_url(uri, experiment.experiment_id)}")


if __name__ == "__main__":
    main()
