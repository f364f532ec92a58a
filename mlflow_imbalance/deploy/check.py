"""``check_decision``: does the registered decision still hold on the latest production batch?

For each production batch logged to the winning run after the decision
(:func:`~mlflow_imbalance.log_production_scores`; order greater than the record's
``batch_order_at``) the batch's logged estimate of η and its interval ``[low, high]`` are read
(never re-estimated: the numbers the run's metrics and card show), and, with the compared runs'
ROC counts and the registered costs (:mod:`mlflow_imbalance.stats.robust`):

- **holds**: the prior-shift check passed and the registered decision's worst-case regret over
  ``[low, high]`` is at most τ;
- **retune**: it is not, but another threshold of the same run keeps it within τ (given);
- **reconsider**: no threshold of that run does, but another decision does (named: another
  compared run at a threshold, or flagging nothing / everything);
- **unknown**: η is not pinned down (even the least worst-case regret over the interval
  exceeds τ), the prior-shift check failed (the estimate is then not to be trusted), the batch
  has no estimate, no batch was logged since the decision, or the decision has no costs.

The result (:class:`DecisionCheck`) is what the CLI prints, the version tags hold
(``mlflow_imbalance.check.*``) and the report shows (``checks/<batch>.json`` in the decision
run; metric history ``imb/check_regret`` etc. on it, step = batch order): never recomputed.
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mlflow_imbalance.deploy import _registry
from mlflow_imbalance.deploy.record import (
    CHECK_PREFIX,
    CHECKS_DIR,
    DecisionRecord,
    clip_tag,
    now_iso,
)
from mlflow_imbalance.stats.robust import best_cost, decision_cost, minimax_regret, worst_regret
from mlflow_imbalance.tracking._store import bounded_store
from mlflow_imbalance.tracking.load import _no_mlflow_progress_bar

logger = logging.getLogger(__name__)

__all__ = ["EXIT_CODES", "STATUSES", "DecisionCheck", "check_decision", "check_history"]

#: Statuses and their exit codes (the CLI's; 1-2 are errors).
EXIT_CODES = {"holds": 0, "retune": 3, "reconsider": 4, "unknown": 5}
STATUSES = tuple(EXIT_CODES)
#: Metrics on the decision run, one step per batch (step = batch order).
METRICS = {
    "regret": "imb/check_regret",
    "status": "imb/check_status",
    "eta_low": "imb/check_eta_low",
    "eta_high": "imb/check_eta_high",
}


def _audit_settles(
    record: DecisionRecord,
    batch: Mapping[str, Any],
    counts: Mapping[str, Any] | None = None,
    winner: str | None = None,
    tol: float | None = None,
) -> tuple[int | None, str]:
    """Labels that would settle an unknown check: ``(budget or None, one line)``.

    With costs and a tolerance: the widest η interval around the batch's estimate over which
    the best decision's worst-case regret is at most ``tol`` (bisection on its half-width; regret
    grows with the range), and the labels :func:`mlflow_imbalance.plan_audit`'s design needs for
    that half-width (:func:`mlflow_imbalance.stats.audit.audit_budget`, from the design's expected
    variance). Without them, or when the batch's scores cannot be read: None and what to do.
    """
    how = (
        "label a sample of the batch (mlflow_imbalance.plan_audit, then log_audit_labels): "
        "labels bound η whatever drifted"
    )
    est = batch.get("estimate") or {}
    eta = est.get("value")
    if counts is None or winner is None or tol is None or eta is None or not record.has_costs:
        return None, how
    try:
        from mlflow_imbalance.stats.robust import labels_to_settle
        from mlflow_imbalance.tracking.production import load_production_counts

        sc = load_production_counts(record.run_id, record.counts_name)[str(batch["batch"])]
        cfp, cfn = float(record.cost_fp), float(record.cost_fn)  # type: ignore[arg-type]
        got = labels_to_settle(counts, winner, sc, record.threshold, float(eta), tol, cfp, cfn)
    except Exception as exc:  # the budget is advice; the check stands without it
        logger.info("no audit budget for batch %r: %s", batch.get("batch"), exc)
        return None, how
    if got.labels is None:
        return None, how
    return got.labels, got.text


@dataclass(frozen=True)
class DecisionCheck:
    """One check of a registered decision against a production batch.

    Attributes:
        status: ``"holds"``, ``"retune"``, ``"reconsider"`` or ``"unknown"``.
        reason: one plain sentence.
        model: the model version, ``"fraud/3"``.
        batch: the production batch checked (None: none since the decision).
        order: its order (the metrics' step).
        n: its size.
        eta: its estimated η, with ``eta_low`` / ``eta_high`` (the logged interval).
        prior_shift_p: the batch's prior-shift p-value (None: not run).
        check_passed: whether that check passed.
        threshold: the registered threshold.
        regret: the registered decision's worst-case regret over the interval, per case.
        tolerance: τ, per case.
        best_regret: the least worst-case regret any decision has over the interval.
        suggested: what to do instead (a decision's label: "gbm at 0.41"; "" for holds).
        suggested_run: the run of a retune / reconsider (None for flagging nothing/everything).
        suggested_run_id: its run id.
        suggested_threshold: its threshold (None for flagging nothing / everything).
        suggested_regret: its worst-case regret over the interval.
        audit_budget: labels that would settle an unknown check (None: not known).
        checked_at: UTC ISO time.
        history: the earlier batches since the decision, each a dict of the fields above.
    """

    status: str
    reason: str
    model: str
    batch: str | None = None
    order: int | None = None
    n: int | None = None
    eta: float | None = None
    eta_low: float | None = None
    eta_high: float | None = None
    prior_shift_p: float | None = None
    check_passed: bool | None = None
    threshold: float | None = None
    regret: float | None = None
    tolerance: float | None = None
    best_regret: float | None = None
    suggested: str = ""
    suggested_run: str | None = None
    suggested_run_id: str | None = None
    suggested_threshold: float | None = None
    suggested_regret: float | None = None
    audit_budget: int | None = None
    checked_at: str = ""
    history: tuple[dict[str, Any], ...] = field(default=())

    @property
    def exit_code(self) -> int:
        """0 holds, 3 retune, 4 reconsider, 5 unknown."""
        return EXIT_CODES[self.status]

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly (``checks/<batch>.json``)."""
        out = asdict(self)
        out["history"] = [dict(h) for h in self.history]
        return out

    @property
    def text(self) -> str:
        """The result as a few plain lines (the CLI's output; escape before printing)."""
        lines = [f"{self.model}: {self.status.upper()} - {self.reason}"]
        if self.batch is not None and self.eta is not None:
            lines.append(
                f"  batch {self.batch} (order {self.order}, n = {self.n}): η = {self.eta:.4g} "
                f"[{self.eta_low:.4g}, {self.eta_high:.4g}]"
                + (
                    ""
                    if self.prior_shift_p is None
                    else f", prior-shift p = {self.prior_shift_p:.3g}"
                )
            )
        if self.regret is not None:
            lines.append(
                f"  registered threshold {self.threshold!r}: worst-case regret {self.regret:.4g} "
                f"per case (τ = {self.tolerance:.4g})"
            )
        if self.suggested:
            lines.append(
                f"  instead: {self.suggested} (worst-case regret {self.suggested_regret:.4g})"
                + (
                    f", threshold {self.suggested_threshold!r}"
                    if self.suggested_threshold is not None
                    else ""
                )
            )
        return "\n".join(lines)


def _prior_shift_level(est: Mapping[str, Any]) -> float:
    """The prior-shift check's level: the package's one level where it exists.

    ``stats.prevalence.PRIOR_SHIFT_LEVEL`` (being unified by issue 37's follow-up); until then
    the level the batch was logged with (``check_alpha``), else 0.01 (``estimate_prevalence``'s
    default).
    """
    from mlflow_imbalance.stats import prevalence

    level = getattr(prevalence, "PRIOR_SHIFT_LEVEL", None)
    if level is None:
        level = est.get("check_alpha") or 0.01
    return float(level)


def _rates(counts: Any, threshold: float) -> tuple[float, float]:
    from mlflow_imbalance.deploy.register import decision_rates

    return decision_rates(counts, threshold)


def _best_threshold(
    counts: Any, everything: Mapping[str, Any], lo: float, hi: float, cfp: float, cfn: float
) -> tuple[float, float]:
    """``(threshold, worst-case regret)`` of the run's best threshold over ``[lo, hi]``."""
    ends = np.array([lo, hi])
    best = best_cost(everything, ends, cfp, cfn)
    thr, tpr, fpr = (
        np.asarray(a, dtype=float) for a in (counts.thresholds, counts.tpr, counts.fpr)
    )
    reg = decision_cost(tpr[:, None], fpr[:, None], ends[None, :], cfp, cfn) - best
    worst = np.maximum(reg.max(axis=1), 0.0)
    m = float(worst.min())
    cand = np.flatnonzero(worst == m)
    return float(thr[cand[np.argmin(fpr[cand])]]), m


def _judge(
    rec: DecisionRecord,
    tol: float | None,
    batch: Mapping[str, Any],
    counts: Mapping[str, Any],
    ids: Mapping[str, str | None],
    model: str,
    winner: str,
    audit: Any = None,
) -> DecisionCheck:
    """The check of one batch record (``list_production_batches``'s).

    With ``audit`` (the batch's :class:`~mlflow_imbalance.stats.audit.AuditEstimate`) the η
    interval is the audited one and the check is its ROC-shift test.
    """
    est = batch.get("estimate") or {}
    base = {
        "model": model,
        "batch": batch["batch"],
        "order": int(batch["order"]),
        "n": int(batch["n"]),
        "threshold": rec.threshold,
        "tolerance": tol,
        "checked_at": now_iso(),
    }
    value, interval = est.get("value"), est.get("interval") or [None, None]
    if audit is not None:  # labels settle η whatever drifted (issue 39): the audited interval
        value = float(audit.prevalence.estimate)
        interval = [float(audit.prevalence.low), float(audit.prevalence.high)]
    if value is None or None in interval:
        note = batch.get("estimate_note") or "no prevalence estimate was logged"
        return DecisionCheck(
            "unknown", f"batch {batch['batch']} has no η estimate ({note})", **base
        )
    p = est.get("prior_shift_p")
    passed = p is None or not float(p) < _prior_shift_level(est)
    if audit is not None:  # with labels, the check is the audit's ROC-shift test
        p, passed = float(audit.roc_shift_p), not audit.roc_shifted
    base.update(
        eta=float(value),
        eta_low=float(interval[0]),
        eta_high=float(interval[1]),
        prior_shift_p=None if p is None else float(p),
        check_passed=passed,
    )
    if not rec.has_costs or tol is None:
        return DecisionCheck(
            "unknown",
            f"decided by {rec.criterion or 'a metric'} without costs: regret needs C_FP and "
            "C_FN (register with costs= to have it checked)",
            **base,
        )
    lo, hi = base["eta_low"], base["eta_high"]
    cfp, cfn = float(rec.cost_fp), float(rec.cost_fn)  # type: ignore[arg-type]
    tpr, fpr = _rates(counts[winner], rec.threshold)
    regret = worst_regret(tpr, fpr, counts, lo, hi, cfp, cfn)
    choice = minimax_regret(counts, lo, hi, cfp, cfn)
    base.update(regret=regret, best_regret=float(choice.regret))
    if not passed:
        budget, how = _audit_settles(rec, batch, counts, winner, tol)
        why = (
            f"the audit ({audit.n_labels} labels) shows production's TPR and FPR at the threshold "
            f"differ from the test set's (p = {p:.3g}): the test ROC no longer describes "
            "production, so its regret cannot be trusted; retrain or re-test on recent data"
            if audit is not None
            else f"the prior-shift check failed (p = {p:.3g}): production differs from the test "
            f"data in more than the class balance, so the η estimate is not to be trusted; {how}"
        )
        return DecisionCheck(
            "unknown",
            why,
            audit_budget=budget,
            **base,
        )
    if regret <= tol:
        return DecisionCheck(
            "holds",
            f"over η in [{lo:.4g}, {hi:.4g}] the registered decision loses at most "
            f"{regret:.4g} per case against the best decision (τ = {tol:.4g})",
            **base,
        )
    if choice.regret > tol:
        budget, how = _audit_settles(rec, batch, counts, winner, tol)
        return DecisionCheck(
            "unknown",
            f"η is not pinned down: over [{lo:.4g}, {hi:.4g}] even the best decision "
            f"({choice.option.label}) can lose {choice.regret:.4g} per case, above τ = {tol:.4g} "
            f"(the registered one {regret:.4g}); {how}",
            audit_budget=budget,
            suggested=choice.option.label,
            suggested_run=choice.option.run,
            suggested_run_id=ids.get(choice.option.run or ""),
            suggested_threshold=_finite(choice.option.threshold),
            suggested_regret=float(choice.regret),
            **base,
        )
    t_new, r_new = _best_threshold(counts[winner], counts, lo, hi, cfp, cfn)
    if r_new <= tol:
        return DecisionCheck(
            "retune",
            f"η moved to [{lo:.4g}, {hi:.4g}]: the registered threshold loses up to {regret:.4g} "
            f"per case (τ = {tol:.4g}); threshold {t_new:.6g} of the same run loses at most "
            f"{r_new:.4g}",
            suggested=f"{winner} at {t_new:.6g}",
            suggested_run=winner,
            suggested_run_id=rec.run_id,
            suggested_threshold=t_new,
            suggested_regret=r_new,
            **base,
        )
    opt = choice.option
    return DecisionCheck(
        "reconsider",
        f"η moved to [{lo:.4g}, {hi:.4g}]: no threshold of {winner} stays within τ = {tol:.4g} "
        f"(best {r_new:.4g} per case); {opt.label} loses at most {choice.regret:.4g}",
        suggested=opt.label,
        suggested_run=opt.run,
        suggested_run_id=ids.get(opt.run or ""),
        suggested_threshold=_finite(opt.threshold),
        suggested_regret=float(choice.regret),
        **base,
    )


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def check_decision(
    model_uri: str,
    *,
    tolerance: float | None = None,
    tracking_uri: str | None = None,
    record: bool = True,
) -> DecisionCheck:
    """Check a registered decision against the production batches logged since it was made.

    Args:
        model_uri: the model version, ``"models:/fraud@champion"`` (also ``"fraud@champion"``,
            ``"models:/fraud/3"``, ``"fraud/3"``).
        tolerance: τ per case (default: the registered one).
        tracking_uri: the tracking and registry URI (default: MLflow's current one).
        record: write the result as version tags (``mlflow_imbalance.check.status``,
            ``.reason``, ``.time``, ...), ``checks/<batch>.json`` and the metric history on the
            decision run.

    Returns:
        :class:`DecisionCheck` of the latest batch (``.history``: every batch since).

    Raises:
        ValueError: an unusable tracking URI, an unknown model or alias, a version without a
            decision (each named).
        TrackingServerUnreachable: the store did not answer within the time budget.
    """
    if tolerance is not None and (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, int | float)
        or not (math.isfinite(tolerance) and tolerance >= 0)
    ):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r:.80}")
    uri = _registry.usable_uri(tracking_uri, must_exist=True)
    with bounded_store(uri, "; nothing was checked"), _no_mlflow_progress_bar():
        c = _registry.client(uri)
        mv = _registry.model_version(c, model_uri)
        rec = _registry.read_record(c, mv)
        result = _check(c, uri, mv, rec, tolerance)
        if record:
            _write(c, mv, rec, result)
    return result


def _check(c: Any, uri: str, mv: Any, rec: DecisionRecord, tolerance: float | None) -> Any:
    from mlflow_imbalance.tracking.load import load_counts
    from mlflow_imbalance.tracking.production import list_production_batches

    model = _registry.version_label(mv)
    tol = rec.tolerance if tolerance is None else float(tolerance)
    batches = [
        b
        for b in list_production_batches(rec.run_id, rec.counts_name, tracking_uri=uri).values()
        if int(b["order"]) > rec.batch_order_at
    ]
    if not batches:
        return DecisionCheck(
            "unknown",
            f"no production batch was logged to run {rec.run_id} since the decision "
            f"({rec.created_at}); log one with mlflow_imbalance.log_production_scores",
            model=model,
            threshold=rec.threshold,
            tolerance=tol,
            checked_at=now_iso(),
        )
    counts: dict[str, Any] = {}
    ids: dict[str, str | None] = {}
    items = [*rec.compared]
    if not any(i.get("run_id") == rec.run_id for i in items):
        items.append({"name": rec.run, "run_id": rec.run_id})
    for item in items:
        rid = item.get("run_id")
        if not rid or rid in ids.values():
            continue
        key = str(item.get("name") or rid)
        if key in counts:  # two runs of one name: tell them apart
            key = f"{key} ({str(rid)[:8]})"
        counts[key] = load_counts(rid, rec.counts_name, tracking_uri=uri)
        ids[key] = rid
    winner = next(k for k, i in ids.items() if i == rec.run_id)
    results = [
        _judge(rec, tol, b, counts, ids, model, winner, _audit_of(rec, b["batch"], uri))
        for b in batches
    ]
    history = tuple({k: v for k, v in r.as_dict().items() if k != "history"} for r in results[:-1])
    latest = results[-1]
    return DecisionCheck(**{**latest.as_dict(), "history": history})


def _audit_of(rec: DecisionRecord, batch: Any, uri: str) -> Any:
    """The batch's audit estimate from production labels (None: not audited or unreadable)."""
    try:
        from mlflow_imbalance.tracking.audit import load_audit

        return load_audit(rec.run_id, batch, name=rec.counts_name, tracking_uri=uri)
    except Exception as exc:  # optional evidence: the label-free estimate still stands
        logger.info("no audit for batch %r: %s", batch, exc)
        return None


def _write(c: Any, mv: Any, rec: DecisionRecord, result: DecisionCheck) -> None:
    """Version tags, ``checks/<batch>.json`` and the metric history of ``result``."""
    from mlflow.entities import Metric

    tags = {
        "status": result.status,
        "reason": result.reason,
        "time": result.checked_at,
        "batch": result.batch or "",
        "regret": "" if result.regret is None else repr(result.regret),
        "tolerance": "" if result.tolerance is None else repr(result.tolerance),
        "eta": "" if result.eta is None else repr(result.eta),
        "eta_interval": ""
        if result.eta_low is None
        else f"[{result.eta_low!r}, {result.eta_high!r}]",
        "suggested": result.suggested,
        "suggested_threshold": ""
        if result.suggested_threshold is None
        else repr(result.suggested_threshold),
    }
    for key, value in tags.items():
        c.set_model_version_tag(mv.name, mv.version, CHECK_PREFIX + key, clip_tag(value))
    if not rec.decision_run_id or result.batch is None:
        return
    rows = [*result.history, {k: v for k, v in result.as_dict().items() if k != "history"}]
    done = {
        e.path.rsplit("/", 1)[-1].removesuffix(".json")
        for e in c.list_artifacts(rec.decision_run_id, CHECKS_DIR)
    }
    # the metric history: one point per batch (earlier batches once; the latest each time)
    fresh = [r for r in rows[:-1] if r["batch"] not in done] + rows[-1:]
    stamp = int(time.time() * 1000)
    metrics = []
    for r in fresh:
        step = int(r["order"])
        values = {
            "regret": r.get("regret"),
            "status": EXIT_CODES[r["status"]],
            "eta_low": r.get("eta_low"),
            "eta_high": r.get("eta_high"),
        }
        metrics += [
            Metric(METRICS[k], float(v), stamp, step) for k, v in values.items() if v is not None
        ]
    if metrics:
        c.log_batch(rec.decision_run_id, metrics=metrics)
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        for r in rows:
            path = Path(tmp) / f"{r['batch']}.json"
            path.write_text(json.dumps(r, indent=1, default=str), encoding="utf-8")
        c.log_artifacts(rec.decision_run_id, tmp, CHECKS_DIR)


def check_history(model: str, *, tracking_uri: str | None = None) -> list[dict[str, Any]]:
    """The recorded checks of a registered decision, one per batch in batch order.

    The ``checks/<batch>.json`` files of its decision run; empty when never checked.
    """
    uri = _registry.usable_uri(tracking_uri, must_exist=True)
    with bounded_store(uri), _no_mlflow_progress_bar():
        c = _registry.client(uri)
        rec = _registry.read_record(c, _registry.model_version(c, model))
        return read_checks(c, rec)


def read_checks(c: Any, rec: DecisionRecord) -> list[dict[str, Any]]:
    """The ``checks/<batch>.json`` of ``rec``'s decision run, in batch order."""
    if not rec.decision_run_id:
        return []
    out = []
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        for entry in c.list_artifacts(rec.decision_run_id, CHECKS_DIR):
            if entry.is_dir or not entry.path.endswith(".json"):
                continue
            try:
                path = c.download_artifacts(rec.decision_run_id, entry.path, tmp)
                data = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                logger.warning("ignoring check record %s: %s", entry.path, exc)
                continue
            if isinstance(data, dict) and data.get("status") in EXIT_CODES:
                out.append(data)
    out.sort(key=lambda d: (int(d.get("order") or 0), str(d.get("batch"))))
    return out
