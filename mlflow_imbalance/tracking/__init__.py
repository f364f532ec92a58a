r"""Log ROC counts to MLflow runs and load them back; ``autolog()`` for scikit-learn metrics.

What :func:`log_scores` / :func:`log_counts` put into a run, under ``imbalance/<name>/``:

- ``roc_counts.npz``: the lossless counts (format: :mod:`mlflow_imbalance.core.format`);
- ``scores.npz`` (optional, see ``keep_scores``): labels, scores (and weights) in example order,
  compressed, so the report can pair runs on the same examples;
- ``pr.png``, ``roc.png`` and, with ``costs``, ``cost.png``: figures for MLflow's preview pane
  from :func:`mlflow_imbalance.plots.preview_figures`;
- ``card.html``: a one-run, self-contained HTML card titled with the run's name (a verdict per
  prevalence, inline CSS, figures as data-URI PNG, no script) that the MLflow UI previews;
- ``summary.json``: written **last**, the commit marker. Its ``files`` manifest holds the sha256
  of every other file; :func:`load_counts` verifies it, so a half-written or stale set is never
  read silently (schema: :mod:`mlflow_imbalance.tracking.summary`).

Metrics, tags and their keys (``imb/<metric> [<η>] <name>``, the distinguishing part first; no
η = the test prevalence; each key's value in the unit the report, the CLI, the card and
``summary.json`` show; see :mod:`~mlflow_imbalance.tracking.keys`):

- ``imb/roc_auc <name>``; ``imb/{ap,pr_auc,max_f1,prec_f1,max_f1_threshold} [<η>] <name>`` at
  the test prevalence and per prevalence of interest; with ``costs``
  ``imb/min_cost_per_10k [<η>] <name>`` (η ≥ 1e-3) or ``imb/min_cost_per_1m <η> <name>`` (the
  lowest expected cost per that many cases) and ``imb/cost_threshold [<η>] <name>`` (its
  threshold, the one the report's verdict names); ``imb/tpr_at_fpr_<α> <name>`` for α in 1e-2,
  1e-3, 1e-4 when ``n_neg >= 1/α``;
- ``imb/{ap,pr_auc,max_f1,prec_f1,precision_op,f1_op}_sweep <name>``: a series over a
  log-spaced prevalence grid, steps in ascending η (nothing appended), with
  ``imb/log10_eta <name>`` at the same steps as its x axis. ``precision_op`` / ``f1_op`` hold
  one operating point fixed (the max-F1 threshold at the test prevalence,
  ``imb/max_f1_threshold <name>``);
- tags ``imb/{n_pos,n_neg,test_prevalence} <name>``.

Headline intervals (``summary.json`` ``headline``; every number is ``{value, interval, method}``):
ROC-AUC by DeLong's variance from the counts
(:func:`mlflow_imbalance.uncertainty.roc_auc_interval`); AP, PR-AUC and max-F1 by one seeded
count bootstrap (:func:`mlflow_imbalance.uncertainty.headline_intervals`, ``n_bootstrap``/``seed``
recorded in ``headline.bootstrap``); precision by Koopman, rates by Clopper-Pearson. Weighted
counts: "point estimate only (weighted)". This package only calls them: every number comes from
:mod:`mlflow_imbalance.core` and :mod:`mlflow_imbalance.uncertainty`.

Atomicity: all input is validated and every file computed and rendered in a temporary directory
before the store is touched; bad input raises before anything is logged. Data files go up first,
then the metrics, then ``summary.json``. A failure in between leaves no (new) ``summary.json``:
a first-time set is then invisible to :func:`list_counts`, and a re-logged set whose upload broke
half-way fails the manifest check with a clear error instead of mixing old and new files.
Re-logging a name replaces its files; stale files not in the new manifest are ignored. MLflow
cannot delete metrics: re-logged metrics append a newer value (the latest is what the UI shows).

Modules (imports point down this list; none imports mlflow at import time except
``evaluator``, which MLflow loads through its entry point):

- :mod:`~mlflow_imbalance.tracking.summary`: the ``summary.json`` schema, digests, validation;
- :mod:`~mlflow_imbalance.tracking.keys`: metric and tag keys, the runs-view URL;
- :mod:`~mlflow_imbalance.tracking._checks`: artifact names, argument checks;
- :mod:`~mlflow_imbalance.tracking._timing`: the timer of a logging call (``last_timings``);
- :mod:`~mlflow_imbalance.tracking.headline`: the summary's numbers and metrics from the counts;
- :mod:`~mlflow_imbalance.tracking.card`: per-run figures and the HTML run card;
- :mod:`~mlflow_imbalance.tracking.log`: :func:`log_scores`, :func:`log_counts`;
- :mod:`~mlflow_imbalance.tracking.load`: :func:`load_summary`, :func:`load_counts`,
  :func:`load_scores`, :func:`list_counts`;
- :mod:`~mlflow_imbalance.tracking.production`: :func:`log_production_scores` (unlabeled
  production scores per batch, ``imbalance/<name>/production/<batch>.npz`` + ``.json``, the
  prevalence estimate as ``imb/eta_est <name>`` and friends at step = batch order),
  :func:`load_production_counts`, :func:`list_production_batches`;
- :mod:`~mlflow_imbalance.tracking.audit`: :func:`plan_audit`, :func:`log_audit_labels`,
  :func:`load_audit`, :func:`load_audit_plan` (audits of a production batch, stored under
  ``imbalance/<name>/audit/<batch>/`` by :mod:`~mlflow_imbalance.tracking._audit_store`);
- :mod:`~mlflow_imbalance.tracking._worker`: the background logging thread of autolog and the
  callbacks (:func:`flush` waits for it);
- :mod:`~mlflow_imbalance.tracking.autologging`: :func:`autolog`;
- :mod:`~mlflow_imbalance.tracking.evaluator`: the ``imbalance`` MLflow evaluator plugin.
"""

from __future__ import annotations

from mlflow_imbalance.tracking._checks import (
    ARTIFACT_ROOT,
    CARD_FILENAME,
    DEFAULT_PREVALENCES,
    KEEP_SCORES_AUTO_LIMIT,
    SCORES_FILENAME,
    Scores,
)
from mlflow_imbalance.tracking._checks import (
    _client as _client,  # private, used by mlflow_imbalance.synthetic
)
from mlflow_imbalance.tracking._timing import last_timings
from mlflow_imbalance.tracking._worker import flush
from mlflow_imbalance.tracking.audit import (
    AuditPlan,
    audit_metric_keys,
    load_audit,
    load_audit_plan,
    log_audit_labels,
    plan_audit,
)
from mlflow_imbalance.tracking.autologging import (
    _log_safely as _log_safely,  # private, used by mlflow_imbalance.integrations
)
from mlflow_imbalance.tracking.autologging import autolog
from mlflow_imbalance.tracking.card import FIGURE_DPI
from mlflow_imbalance.tracking.headline import (
    BOOTSTRAP_POINTS,
    CONFIDENCE,
    DEFAULT_N_BOOTSTRAP,
    FPR_BUDGETS,
    MIN_N_BOOTSTRAP,
    SWEEP_POINTS,
    WEIGHTED_METHOD,
)
from mlflow_imbalance.tracking.keys import eta_label, metric_key, runs_view_url
from mlflow_imbalance.tracking.load import list_counts, load_counts, load_scores, load_summary
from mlflow_imbalance.tracking.log import LoggedCounts, PendingLog, log_counts, log_scores
from mlflow_imbalance.tracking.production import (
    LoggedProduction,
    list_production_batches,
    load_production_counts,
    log_production_scores,
    production_metric_keys,
)
from mlflow_imbalance.tracking.summary import SUMMARY_FILENAME

__all__ = [
    "ARTIFACT_ROOT",
    "BOOTSTRAP_POINTS",
    "CARD_FILENAME",
    "CONFIDENCE",
    "DEFAULT_N_BOOTSTRAP",
    "DEFAULT_PREVALENCES",
    "FIGURE_DPI",
    "FPR_BUDGETS",
    "KEEP_SCORES_AUTO_LIMIT",
    "MIN_N_BOOTSTRAP",
    "SCORES_FILENAME",
    "SUMMARY_FILENAME",
    "SWEEP_POINTS",
    "WEIGHTED_METHOD",
    "AuditPlan",
    "LoggedCounts",
    "LoggedProduction",
    "PendingLog",
    "Scores",
    "audit_metric_keys",
    "autolog",
    "eta_label",
    "flush",
    "last_timings",
    "list_counts",
    "list_production_batches",
    "load_audit",
    "load_audit_plan",
    "load_counts",
    "load_production_counts",
    "load_scores",
    "load_summary",
    "log_audit_labels",
    "log_counts",
    "log_production_scores",
    "log_scores",
    "metric_key",
    "plan_audit",
    "production_metric_keys",
    "runs_view_url",
]
