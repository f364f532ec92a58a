"""Audit plans and labels of a logged production batch: ``plan_audit``, ``log_audit_labels``.

:func:`plan_audit` designs a stratified sample of a batch already logged with
:func:`~mlflow_imbalance.tracking.production.log_production_scores`
(:func:`mlflow_imbalance.stats.audit.design_audit`) and stores the plan with the batch, so labels
can come back days later from another process; :func:`log_audit_labels` takes labels (a mapping
index -> label, or a sequence in the order of ``plan.indices``), adds them to those already in,
and stores and returns the :class:`~mlflow_imbalance.stats.audit.AuditEstimate`.
:func:`load_audit` and :func:`load_audit_plan` read them back (the report calls
:func:`load_audit`). Storage: :mod:`mlflow_imbalance.tracking._audit_store`, docs/format.md.

Metrics, at step = the batch's order (as the production metrics): ``imb/audit_eta <name>``,
``imb/audit_precision <name>``, ``imb/audit_recall <name>``, ``imb/audit_cost <name>``, each
with ``_low`` / ``_high``, and ``imb/audit_roc_shift_p <name>``, ``imb/audit_n_labels <name>``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
import math
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mlflow_imbalance._version import __version__
from mlflow_imbalance.core.production import ScoreCounts
from mlflow_imbalance.stats.audit import (
    FOCUSES,
    AuditDesign,
    AuditEstimate,
    design_audit,
    estimate_audit,
)
from mlflow_imbalance.tracking import _audit_store as store
from mlflow_imbalance.tracking import _worker, keys
from mlflow_imbalance.tracking._checks import _check_name, _check_run_target, _client
from mlflow_imbalance.tracking._store import check_reachable
from mlflow_imbalance.tracking.load import _load_summary, load_counts
from mlflow_imbalance.tracking.production import (
    _as_score_counts,
    _batch_records,
    _check_batch,
    _load_batch,
    _production_run,
    _refresh_card,
)

logger = logging.getLogger(__name__)

__all__ = [
    "AUDIT_METRICS",
    "AuditPlan",
    "audit_metric_keys",
    "load_audit",
    "load_audit_plan",
    "log_audit_labels",
    "plan_audit",
]

#: Metric stem -> (quantity, field) of the :class:`AuditEstimate`.
AUDIT_METRICS: dict[str, tuple[str, str]] = {
    **{
        f"audit_{stem}{suffix}": (q, f)
        for stem, q in (
            ("eta", "prevalence"),
            ("precision", "precision"),
            ("recall", "recall"),
            ("cost", "cost"),
        )
        for suffix, f in (("", "estimate"), ("_low", "low"), ("_high", "high"))
    },
    "audit_roc_shift_p": ("roc_shift_p", ""),
    "audit_n_labels": ("n_labels", ""),
}


def audit_metric_keys(name: str) -> dict[str, str]:
    """Metric stem -> MLflow key (``imb/audit_eta <name>``, ...)."""
    return {stem: keys.metric_key(name, stem) for stem in AUDIT_METRICS}


@dataclasses.dataclass(frozen=True, repr=False)
class AuditPlan:
    """Which cases of a production batch to label.

    Attributes:
        run_id, name, batch: the logged batch the plan belongs to.
        design: the :class:`~mlflow_imbalance.stats.audit.AuditDesign` (strata, sizes,
            allocation, inclusion probabilities, threshold).
        indices: the cases to label: positions in the batch's ``scores`` (int64), or the ids of
            ``id_col`` for a Spark plan.
        strata: the stratum of each case in ``indices``.
        seed: the sampling seed (recorded, so the plan can be redrawn).
        sampling: ``"fixed-size"`` (simple random sampling within strata) or ``"bernoulli"``
            (Spark: realised sizes; the design's allocation then holds them).
        threshold_rule: how the threshold was chosen.
    """

    run_id: str
    name: str
    batch: str
    design: AuditDesign
    indices: np.ndarray
    strata: np.ndarray
    seed: int
    sampling: str = "fixed-size"
    threshold_rule: str = "given"

    @property
    def threshold(self) -> float:
        """The decision threshold the audit estimates at."""
        return self.design.threshold

    @property
    def budget(self) -> int:
        """Cases to label."""
        return len(self.indices)

    def __len__(self) -> int:
        return self.budget

    def __repr__(self) -> str:
        return (
            f"AuditPlan(batch={self.batch!r}, run_id={self.run_id!r}, name={self.name!r}, "
            f"budget={self.budget}, strata={self.design.n_strata}, threshold="
            f"{self.threshold:.4g}, focus={self.design.focus!r}, seed={self.seed})"
        )


# ---------------------------------------------------------------------------- helpers
def _default_threshold(summary: dict[str, Any]) -> tuple[float, str]:
    """The run's cost-optimal threshold at its costs and first prevalence of interest.

    Without costs (or when flagging nothing is cheapest there), the max-F1 threshold at that
    prevalence. The row is the card's verdict's: the first prevalence of interest, else the
    test prevalence.
    """
    rows = summary["headline"]["at_prevalence"]
    row = next((r for r in rows if not r.get("is_test_prevalence")), rows[0])
    eta = float(row["prevalence"])
    mc = row.get("min_cost") or {}
    thr = mc.get("threshold")
    if summary.get("costs") and thr is not None and math.isfinite(float(thr)):
        return float(thr), f"the run's lowest-expected-cost threshold at η = {eta:.3g}"
    return float(row["max_f1_threshold"]), f"the run's max-F1 threshold at η = {eta:.3g}"


def _check_seed(seed: Any) -> int:
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r:.80}")
    return int(seed)


def _require_batch(batch: Any) -> str:
    label = _check_batch(batch)
    if label is None:
        raise ValueError("batch must name a batch logged with mi.log_production_scores, got None")
    return label


def _prepare(
    sc: ScoreCounts,
    budget: Any,
    batch: Any,
    run_id: str | None,
    name: str,
    threshold: Any,
    tracking_uri: str | None,
    focus: Any = "balanced",
) -> dict[str, Any]:
    """Every check of a plan, and its design; nothing is written."""
    if focus not in FOCUSES:
        raise ValueError(f"focus must be one of {FOCUSES}, got {focus!r:.80}")
    name = _check_name(name)
    label = _require_batch(batch)
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 4:
        raise ValueError(f"budget must be an integer >= 4, got {budget!r:.80}")
    _check_run_target(run_id, tracking_uri)
    check_reachable(tracking_uri)
    _worker.flush()
    client = _client(tracking_uri)
    run_id = _production_run(client, run_id)
    records = _batch_records(client, run_id, name)
    if label not in records:
        known = ", ".join(map(repr, records)) or "none"
        raise ValueError(
            f"batch={label!r} is not logged to run {run_id} under name={name!r} (logged: "
            f"{known}); log it first with mi.log_production_scores(scores, batch=...)"
        )
    record = records[label]
    if store.has_plan(client, run_id, name, label):
        raise ValueError(
            f"batch={label!r} of run {run_id} already has an audit plan: load it with "
            "mi.tracking.load_audit_plan and label its cases"
        )
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        logged, share_error = _load_batch(client, run_id, name, record, tmp)
    same = sc.n == logged.n and (
        sc == logged
        if share_error == 0
        else bool(np.array_equal(sc.count_at_or_above(logged.thresholds), logged.n_above))
    )
    if not same:
        raise ValueError(
            f"scores do not match batch={label!r} as logged (n={sc.n:,} against the logged "
            f"n={logged.n:,}, or other values): pass the same scores that were logged"
        )
    if budget > sc.n:
        raise ValueError(f"budget={int(budget)} exceeds the {sc.n:,} cases of batch={label!r}")
    summary = _load_summary(client, run_id, name)
    if threshold is None:
        thr, rule = _default_threshold(summary)
    else:
        thr, rule = threshold, "given"
    counts = load_counts(run_id, name, tracking_uri=tracking_uri)
    est = record.get("estimate") or {}
    guess = est.get("value")
    if guess is not None and guess <= 0:
        guess = (est.get("interval") or [None, None])[1]
    guess = None if guess is None or not 0 < guess < 1 else max(float(guess), 10.0 / sc.n)
    design = design_audit(counts, sc, int(budget), thr, prevalence=guess, focus=focus)
    return dict(client=client, run_id=run_id, name=name, batch=label, record=record,
                design=design, rule=rule, costs=summary.get("costs"))  # fmt: skip


def _store_plan(
    ctx: dict[str, Any], design: AuditDesign, indices: list[Any], strata: Any, seed: int,
    sampling: str,
) -> AuditPlan:  # fmt: skip
    """Write ``plan.json`` (one upload: the plan exists whole or not at all)."""
    record = {
        "schema": store.PLAN_SCHEMA,
        "schema_version": store.SCHEMA_VERSION,
        "run_id": ctx["run_id"],
        "name": ctx["name"],
        "batch": ctx["batch"],
        "batch_n": int(ctx["record"]["n"]),
        "batch_sha256": ctx["record"]["files"][f"{ctx['batch']}.npz"]["sha256"],
        "design": design.to_dict(),
        "threshold_rule": ctx["rule"],
        "costs": ctx["costs"],
        "seed": int(seed),
        "sampling": sampling,
        "indices": list(indices),
        "strata": [int(v) for v in strata],
        "package_version": __version__,
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    text = store.dumps(record)
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        path = Path(tmp) / store.PLAN_FILENAME
        path.write_text(text, encoding="utf-8")
        prefix = store.audit_prefix(ctx["name"], ctx["batch"])
        ctx["client"].log_artifact(ctx["run_id"], str(path), prefix)
        _refresh_card(ctx["client"], ctx["run_id"], ctx["name"], Path(tmp) / "card")
    logger.info("audit plan of batch %r stored in run %s", ctx["batch"], ctx["run_id"])
    return _plan_from_record(record)


def _plan_from_record(record: dict[str, Any]) -> AuditPlan:
    idx = record["indices"]
    return AuditPlan(
        run_id=record["run_id"],
        name=record["name"],
        batch=record["batch"],
        design=AuditDesign.from_dict(record["design"]),
        indices=np.asarray(idx, dtype=np.int64 if record["sampling"] == "fixed-size" else None),
        strata=np.asarray(record["strata"], dtype=np.int64),
        seed=int(record["seed"]),
        sampling=record["sampling"],
        threshold_rule=record.get("threshold_rule", "given"),
    )


# ---------------------------------------------------------------------------- public API
def plan_audit(
    scores: Any,
    budget: int = 300,
    *,
    batch: Any,
    run_id: str | None = None,
    name: str = "test",
    threshold: float | None = None,
    seed: int | None = 0,
    focus: str = "balanced",
    tracking_uri: str | None = None,
) -> AuditPlan:
    """Plan which cases of a logged production batch to label, and store the plan with it.

    The design is stratified over the score, with the threshold as a stratum boundary and the
    run's test ROC as the guess of where the positives are
    (:func:`~mlflow_imbalance.stats.audit.design_audit`); within a stratum the cases are a
    simple random sample. After this the batch can no longer be merged into.

    Args:
        scores: the batch's scores, the same array that was logged (checked against the logged
            counts); ``plan.indices`` are positions in it.
        budget: cases to label (4 to the batch's size).
        batch: the batch label given to ``log_production_scores``.
        run_id: the run; None = the active run.
        name: the run's counts set (default ``"test"``).
        threshold: the decision threshold; None = the run's lowest-expected-cost threshold at
            its logged costs and first prevalence of interest (the card's verdict's), or
            without costs the max-F1 threshold there (``plan.threshold_rule`` says which).
        seed: the sampling seed (None: fresh entropy, recorded in the plan).
        focus: ``"balanced"`` (default) plans for η, precision and recall together;
            ``"precision"`` first gives the flagged strata the labels for precision ±0.05
            (expected), keeping a quarter of the budget (at least 40 labels) below the
            threshold. Measured in ``benchmarks/bench_audit.py`` (docs/statistics.md, "Audits";
            300 labels, thresholds flagging >= 1 %): precision's half-width 0.052-0.107
            balanced, 0.027-0.057 precision-first; η's variance against simple random
            sampling's with a strong model 0.18-0.51x balanced, 0.21-1.39x precision-first.
        tracking_uri: tracking store; None = MLflow's current one.

    Returns:
        The stored :class:`AuditPlan`.

    Raises:
        ValueError: an unknown batch, scores that do not match it, a batch already planned, a
            budget out of range, a threshold that flags none or all of the batch (each naming
            the argument and value); nothing is written.
    """
    sc = _as_score_counts(scores)
    if isinstance(scores, ScoreCounts):
        raise ValueError("scores must be the batch's raw scores (plan.indices index them)")
    seed_v = _check_seed(seed)
    ctx = _prepare(sc, budget, batch, run_id, name, threshold, tracking_uri, focus)
    from mlflow_imbalance.stats.audit import sample_audit

    idx, strata = sample_audit(ctx["design"], scores, seed=seed_v)
    return _store_plan(ctx, ctx["design"], idx.tolist(), strata, seed_v, "fixed-size")


def load_audit_plan(
    run_id: str, batch: Any, *, name: str = "test", tracking_uri: str | None = None
) -> AuditPlan | None:
    """The stored plan of a batch, or None when it has none."""
    name, label = _check_name(name), _require_batch(batch)
    _worker.flush()
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        record = store.read_plan(_client(tracking_uri), run_id, name, label, tmp)
    return None if record is None else _plan_from_record(record)


def load_audit(
    run_id: str, batch: Any, *, name: str = "test", tracking_uri: str | None = None
) -> AuditEstimate | None:
    """The newest audit estimate of a batch (from every label so far), or None without labels.

    This is what the report calls per production batch: ``None`` means "not audited".
    """
    name, label = _check_name(name), _require_batch(batch)
    _worker.flush()
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        labels = store.read_labels(_client(tracking_uri), run_id, name, label, tmp)
    return AuditEstimate.from_dict(labels[-1]["estimate"]) if labels else None


def _label_value(v: Any, where: str) -> int | None:
    """0/1 from a label; None for "not labelled yet" (None or NaN)."""
    if v is None or (isinstance(v, float | np.floating) and math.isnan(v)):
        return None
    if isinstance(v, bool | np.bool_):
        return int(v)
    if isinstance(v, int | np.integer | float | np.floating) and v in (0, 1):
        return int(v)
    raise ValueError(
        f"labels{where} must be 0/1 or True/False (None: not labelled yet), got {v!r:.80}"
    )


def _parse_labels(labels: Any, plan: AuditPlan) -> dict[Any, int]:
    keys_ = plan.indices.tolist()
    pos = {k: i for i, k in enumerate(keys_)}
    out: dict[Any, int] = {}
    if isinstance(labels, Mapping):
        for k, v in labels.items():
            key = k.item() if isinstance(k, np.generic) else k
            if key not in pos:
                raise ValueError(
                    f"labels has index {k!r:.80}, which is not in the plan of batch "
                    f"{plan.batch!r} (its {plan.budget} indices: plan.indices)"
                )
            lab = _label_value(v, f"[{k!r}]")
            if lab is not None:
                out[key] = lab
        return out
    if isinstance(labels, str | bytes) or not hasattr(labels, "__len__"):
        raise ValueError(
            f"labels must be a mapping index -> label or a sequence in the order of "
            f"plan.indices, got {type(labels).__name__}"
        )
    seq = list(np.asarray(labels, dtype=object).reshape(-1)) if np.ndim(labels) else []
    if np.ndim(labels) != 1 or len(seq) != plan.budget:
        raise ValueError(
            f"labels as a sequence must hold one label per planned case in the order of "
            f"plan.indices ({plan.budget}), got shape {np.shape(labels)}"
        )
    for i, v in enumerate(seq):
        lab = _label_value(v, f"[{i}]")
        if lab is not None:
            out[keys_[i]] = lab
    return out


def log_audit_labels(
    labels: Any,
    *,
    batch: Any,
    run_id: str | None = None,
    name: str = "test",
    confidence: float = 0.95,
    tracking_uri: str | None = None,
) -> AuditEstimate:
    """Add audit labels of a planned batch; store, log and return the estimate from all so far.

    Calls add up: each stores the labels it adds (one file); a label given twice for one index
    is an error. Labels not in yet are taken as missing at random within their stratum, and the
    estimate says how many are in.
    The 95 % intervals covered 0.936-1.000 in ``benchmarks/bench_audit.py`` (R = 1,000, 72 cells,
    prior shift and drifts; docs/statistics.md, "Audits").

    Args:
        labels: a mapping plan index -> label (0/1, True/False), or a sequence in the order of
            ``plan.indices`` (None or NaN: not labelled yet).
        batch: the planned batch.
        run_id: the run; None = the active run.
        name: the run's counts set.
        confidence: the intervals' level.
        tracking_uri: tracking store; None = MLflow's current one.

    Returns:
        The :class:`~mlflow_imbalance.stats.audit.AuditEstimate` from every label so far.

    Raises:
        ValueError: no plan for the batch, labels of the wrong length, type or values, indices
            outside the plan, a label given before, no new label; nothing is stored.
    """
    name, label = _check_name(name), _require_batch(batch)
    _check_run_target(run_id, tracking_uri)
    check_reachable(tracking_uri)
    _worker.flush()
    client = _client(tracking_uri)
    run_id = _production_run(client, run_id)
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        plan_record = store.read_plan(client, run_id, name, label, tmp)
        if plan_record is None:
            raise ValueError(
                f"batch={label!r} of run {run_id} (name={name!r}) has no audit plan: "
                "plan it first with mi.plan_audit(scores, batch=...)"
            )
        plan = _plan_from_record(plan_record)
        earlier = store.read_labels(client, run_id, name, label, tmp)
    new = _parse_labels(labels, plan)
    if not new:
        raise ValueError("labels holds no label (all None/NaN): nothing to add")
    done: dict[Any, int] = {}
    for rec in earlier:
        done.update(zip(rec["indices"], rec["labels"], strict=True))
    again = [k for k in new if k in done]
    if again:
        raise ValueError(
            f"labels gives {len(again)} index(es) already labelled in an earlier call "
            f"(e.g. {again[0]!r:.80}); a label is given once"
        )
    done.update(new)
    stratum = dict(zip(plan.indices.tolist(), plan.strata.tolist(), strict=True))
    ks = list(done)
    counts = load_counts(run_id, name, tracking_uri=tracking_uri)
    est = estimate_audit(
        plan.design, [stratum[k] for k in ks], [done[k] for k in ks], counts=counts,
        costs=plan_record.get("costs"), confidence=confidence, seed=plan.seed,
    )  # fmt: skip
    batch_order = int(_batch_records(client, run_id, name)[label]["order"])
    record = {
        "schema": store.LABELS_SCHEMA,
        "schema_version": store.SCHEMA_VERSION,
        "run_id": run_id,
        "name": name,
        "batch": label,
        "seq": len(earlier) + 1,
        "indices": list(new),
        "labels": list(new.values()),
        "estimate": est.to_dict(),
        "package_version": __version__,
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    text = store.dumps(record)
    json.loads(text)  # never commit a file that does not read back
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        path = Path(tmp) / store.labels_filename(record["seq"])
        path.write_text(text, encoding="utf-8")
        client.log_artifact(run_id, str(path), store.audit_prefix(name, label))
        _log_metrics(client, run_id, name, est, batch_order)
        _refresh_card(client, run_id, name, Path(tmp) / "card")
    logger.info("audit of batch %r: %s", label, est.text)
    return est


def _log_metrics(client: Any, run_id: str, name: str, est: AuditEstimate, step: int) -> None:
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    metrics = []
    for stem, key in audit_metric_keys(name).items():
        q, f = AUDIT_METRICS[stem]
        v = getattr(est, q)
        v = float(getattr(v, f) if f else v)
        if math.isfinite(v):
            metrics.append(Metric(key, v, now, step))
    client.log_batch(run_id, metrics=metrics)
