"""``register_decision``: the report's verdict as a registered model version.

A new run in the winning run's experiment (never the finished training run) holds the decision
model (:mod:`mlflow_imbalance.deploy.served`: 0/1 at the threshold, scores on request), the
record ``decision/decision.json`` (with the compared runs) and the report when given; the model
is registered as a new version of ``name`` carrying the decision's tags and description
(:mod:`mlflow_imbalance.deploy.record`), and ``alias`` is set to it. Registering the same
decision again returns the version already holding it.

Failures leave nothing half-registered: a failure after the decision run was created deletes
the model version (if any), the logged model and the run, and the error says so.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from mlflow_imbalance.core.validation import check_cost, check_prevalence
from mlflow_imbalance.deploy import _registry
from mlflow_imbalance.deploy.record import (
    DECISION_JSON,
    PREFIX,
    REPORT_HTML,
    DecisionRecord,
    now_iso,
)
from mlflow_imbalance.deploy.wrap import SERVED, build_decision_model, find_source_model
from mlflow_imbalance.stats.robust import AUDIT_TOLERANCE_SHARE, decision_cost, worst_regret
from mlflow_imbalance.tracking._store import bounded_store
from mlflow_imbalance.tracking.load import _no_mlflow_progress_bar

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_TOLERANCE_SHARE", "decision_rates", "register_decision"]

#: Default τ: this share of the decision's own expected cost per case at its η (at least the
#: regret it was accepted with); the audit advice's share, one constant.
DEFAULT_TOLERANCE_SHARE = AUDIT_TOLERANCE_SHARE
_ALIAS_RE = re.compile(r"[A-Za-z0-9_\-]{1,255}")
_NAME_RE = re.compile(r"[^/@:\x00-\x1f]{1,256}")


def decision_rates(counts: Any, threshold: float) -> tuple[float, float]:
    """``(TPR, FPR)`` of predicting positive when ``score >= threshold`` on ``counts``."""
    thr = np.asarray(counts.thresholds, dtype=float)
    k = int(np.count_nonzero(thr >= threshold))  # thresholds are descending
    if k == 0:
        return 0.0, 0.0
    return float(np.asarray(counts.tpr)[k - 1]), float(np.asarray(counts.fpr)[k - 1])


def _check_args(name: Any, alias: Any, tolerance: Any) -> float | None:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name) or name != name.strip():
        raise ValueError(
            f"name must be a registered model name (no '/', '@', ':' or control characters), "
            f"got {name!r:.120}"
        )
    if not isinstance(alias, str) or not _ALIAS_RE.fullmatch(alias) or alias.lower() == "latest":
        raise ValueError(
            f"alias must be 1-255 characters from [A-Za-z0-9_-] (not 'latest'), got {alias!r:.80}"
        )
    if tolerance is None:
        return None
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float):
        raise ValueError(f"tolerance must be a number >= 0 (cost per case), got {tolerance!r:.80}")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    return float(tolerance)


def _costs(costs: Any) -> tuple[float, float] | None:
    if costs is None:
        return None
    if isinstance(costs, Mapping):
        if set(costs) != {"fp", "fn"}:
            raise ValueError(f"costs must be (cost_fp, cost_fn) or {{'fp', 'fn'}}, got {costs!r}")
        costs = (costs["fp"], costs["fn"])
    if not isinstance(costs, Sequence) or isinstance(costs, str) or len(costs) != 2:
        raise ValueError(f"costs must be (cost_fp, cost_fn), got {costs!r:.80}")
    return float(check_cost(costs[0], "cost_fp")), float(check_cost(costs[1], "cost_fn"))


def _prevalence(prevalence: Any) -> tuple[float, float, float]:
    """``(η, low, high)`` of a number, ``(low, high)`` or ``(η, low, high)``."""
    if isinstance(prevalence, Sequence) and not isinstance(prevalence, str):
        vals = [float(check_prevalence(p, "prevalence", scalar=True)) for p in prevalence]
        if len(vals) == 2:
            vals = [(vals[0] + vals[1]) / 2, *vals]
        if len(vals) != 3 or not vals[1] <= vals[0] <= vals[2]:
            raise ValueError(
                f"prevalence must be η, (low, high) or (η, low, high) with low <= η <= high, "
                f"got {prevalence!r:.80}"
            )
        return vals[0], vals[1], vals[2]
    if prevalence is None:
        raise ValueError("prevalence must be given with run_id and threshold, got None")
    p = float(check_prevalence(prevalence, "prevalence", scalar=True))
    return p, p, p


def _from_report(report: Any, run: str | None) -> tuple[str | None, list[dict[str, Any]]]:
    """(the run id of ``run``, the compared runs) from a Report's runs table (fallback)."""
    rows = list((getattr(report, "context", None) or {}).get("runs", ()))
    compared = [{"name": str(r.get("name")), "run_id": r.get("run_id")} for r in rows]
    rid = next((c["run_id"] for c in compared if c["name"] == run), None)
    return rid, compared


def _record_from_verdict(verdict: Any, report: Any, run_id: str | None) -> dict[str, Any]:
    decision = getattr(verdict, "decision", "run")
    if decision != "run" or getattr(verdict, "run", None) is None:
        raise ValueError(
            f"verdict decides {decision!r} (no run to ship): there is no model to register; "
            "a decision to flag nothing needs no model"
        )
    rid = run_id or getattr(verdict, "run_id", None)
    compared = [
        {"name": str(n), "run_id": i}
        for n, i in zip(
            getattr(verdict, "compared", ()) or (),
            getattr(verdict, "compared_ids", ()) or (),
            strict=False,
        )
    ]
    if report is not None and (rid is None or not compared):
        rid2, compared2 = _from_report(report, verdict.run)
        rid, compared = rid or rid2, compared or compared2
    if not rid:
        raise ValueError(
            f"verdict for run {verdict.run!r:.80} has no run_id: the report was built from counts "
            "alone, not from logged MLflow runs; build it from run ids, or pass run_id= "
            "(and model_uri=)"
        )
    costs = None
    if getattr(verdict, "criterion_key", "") == "cost":
        fp, fn = getattr(verdict, "cost_fp", None), getattr(verdict, "cost_fn", None)
        if (fp is None or fn is None) and report is not None:  # the header's shown costs
            fp, fn = (
                _shown_number(report.context.get("cost_fp")),
                _shown_number(report.context.get("cost_fn")),
            )
        if fp is None or fn is None:
            raise ValueError(
                "verdict was decided by expected cost but carries no cost_fp / cost_fn; "
                "pass costs=(cost_fp, cost_fn)"
            )
        costs = _costs((fp, fn))
    return {
        "run_id": str(rid),
        "run": str(verdict.run),
        "threshold": float(verdict.threshold),
        "prevalence": float(verdict.prevalence),
        "prevalence_low": float(verdict.prevalence_low),
        "prevalence_high": float(verdict.prevalence_high),
        "source": str(getattr(verdict, "source", "typed")),
        "batch": str(getattr(verdict, "batch", "") or ""),
        "criterion": str(getattr(verdict, "criterion_key", "") or ""),
        "costs": costs,
        "regret": getattr(verdict, "regret", None),
        "compared": compared,
    }


def _shown_number(text: Any) -> float | None:
    """A number as the report's header shows it ("1,000" -> 1000.0), or None."""
    try:
        return float(str(text).replace(",", "").replace("\u202f", ""))
    except ValueError:
        return None


@contextlib.contextmanager
def _decision_run(experiment_id: str, run_name: str) -> Iterator[str]:
    """A new run, active (fluent) for the block, ended FINISHED; FAILED and deleted on error."""
    import mlflow

    nested = mlflow.active_run() is not None
    with mlflow.start_run(experiment_id=experiment_id, run_name=run_name, nested=nested) as run:
        rid = run.info.run_id
        if nested:  # the user's active run is not this decision's parent
            mlflow.MlflowClient().delete_tag(rid, "mlflow.parentRunId")
        yield rid


def register_decision(
    verdict: Any = None,
    name: str = "",
    alias: str = "champion",
    model_uri: str | None = None,
    tolerance: float | None = None,
    *,
    run_id: str | None = None,
    threshold: float | None = None,
    prevalence: Any = None,
    costs: Any = None,
    response: str | None = None,
    report: Any = None,
    counts_name: str = "test",
    compared: Sequence[str] | None = None,
) -> Any:
    """Register a decision -- a run's model at a threshold -- as a new model version.

    Args:
        verdict: a :class:`~mlflow_imbalance.report.model.Verdict` of a report built from
            logged runs, whose decision is a run (``report.verdict[0]``); or None and
            ``run_id``, ``threshold``, ``prevalence`` (and ``costs``) given directly.
        name: the registered model's name (created if needed).
        alias: the alias set to the new version.
        model_uri: the model that produced the run's scores (default: the one model the
            winning run logged; none or several is an error asking for this argument).
        tolerance: τ, the regret per case a check accepts (default: 10 % of the decision's own
            expected cost per case at its η, at least the regret it was decided with; None
            without costs).
        run_id: the winning run (overrides the verdict's).
        threshold: predict positive when ``score >= threshold`` (without a verdict).
        prevalence: η, ``(low, high)`` or ``(η, low, high)`` (without a verdict).
        costs: ``(cost_fp, cost_fn)`` or ``{"fp", "fn"}`` (without a verdict; overrides its).
        response: the score the threshold applies to: ``"predict_proba"`` (column 1, the
            default) or ``"decision_function"`` for scikit-learn; ``"output"`` or
            ``"output[:, COLUMN]"`` for other models (default: column 1 of a 2-column output).
        report: the :class:`~mlflow_imbalance.report.model.Report` the verdict came from:
            logged with the decision (``decision/report.html``).
        counts_name: the runs' counts set (``imbalance/<name>/``).
        compared: run ids the decision was chosen among (without a verdict; default: the run).

    Returns:
        The ``ModelVersion`` (tags ``mlflow_imbalance.decision.*``; schema in docs/format.md).

    Raises:
        ValueError: a verdict without a run or without a run id, bad arguments (named), no or
            several models for the run, a tracking URI MLflow cannot use.
        TrackingServerUnreachable: the store did not answer within the time budget.
    """
    tol = _check_args(name, alias, tolerance)
    uri = _registry.usable_uri(None)
    if verdict is not None:
        fields = _record_from_verdict(verdict, report, run_id)
        if costs is not None:
            fields["costs"] = _costs(costs)
    else:
        if run_id is None or threshold is None:
            raise ValueError("register_decision needs a verdict, or run_id and threshold given")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValueError(f"threshold must be a number, got {threshold!r:.80}")
        eta, lo, hi = _prevalence(prevalence)
        fields = {
            "run_id": str(run_id),
            "run": "",
            "threshold": float(threshold),
            "prevalence": eta,
            "prevalence_low": lo,
            "prevalence_high": hi,
            "source": "given",
            "batch": "",
            "criterion": "cost" if costs else "",
            "costs": _costs(costs),
            "regret": None,
            "compared": [{"name": "", "run_id": str(r)} for r in (compared or [run_id])],
        }
    with bounded_store(uri, "; nothing was registered"), _no_mlflow_progress_bar():
        return _register(fields, name, alias, model_uri, tol, response, report, counts_name, uri)


def _register(
    f: dict[str, Any],
    name: str,
    alias: str,
    model_uri: str | None,
    tol: float | None,
    response: str | None,
    report: Any,
    counts_name: str,
    uri: str,
) -> Any:
    import mlflow

    from mlflow_imbalance.tracking.load import load_counts
    from mlflow_imbalance.tracking.production import list_production_batches

    c = _registry.client(uri)
    run = c.get_run(f["run_id"])
    f["run"] = f["run"] or run.info.run_name or f["run_id"]
    for item in f["compared"]:
        if not item["name"] and item["run_id"]:
            item["name"] = c.get_run(item["run_id"]).info.run_name or item["run_id"]
    counts = load_counts(f["run_id"], counts_name, tracking_uri=uri)
    costs = f["costs"]
    regret = f["regret"]
    if regret is None and costs is not None:  # e.g. a typed η: the regret over [η, η]
        by_id = {f["run_id"]: counts}
        for item in f["compared"]:
            rid = item.get("run_id")
            if rid and rid not in by_id:
                by_id[rid] = load_counts(rid, counts_name, tracking_uri=uri)
        tpr, fpr = decision_rates(counts, f["threshold"])
        regret = worst_regret(tpr, fpr, by_id, f["prevalence_low"], f["prevalence_high"], *costs)
    if tol is None and costs is not None:
        tpr, fpr = decision_rates(counts, f["threshold"])
        own = float(decision_cost(tpr, fpr, f["prevalence"], *costs))
        tol = max(float(regret or 0.0), DEFAULT_TOLERANCE_SHARE * own)
    batches = list_production_batches(f["run_id"], counts_name, tracking_uri=uri)
    source_uri = model_uri or find_source_model(c, run)
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        dm = build_decision_model(source_uri, f["threshold"], response, Path(tmp))
        rec = DecisionRecord(
            run_id=f["run_id"],
            run=f["run"],
            threshold=f["threshold"],
            response=dm.response,
            prevalence=f["prevalence"],
            prevalence_low=f["prevalence_low"],
            prevalence_high=f["prevalence_high"],
            source=f["source"],
            batch=f["batch"],
            criterion=f["criterion"] or ("cost" if costs else ""),
            cost_fp=None if costs is None else costs[0],
            cost_fn=None if costs is None else costs[1],
            regret=None if regret is None else float(regret),
            tolerance=tol,
            counts_name=counts_name,
            compared=tuple(f["compared"]),
            batch_order_at=max((int(r["order"]) for r in batches.values()), default=-1),
            source_model_uri=source_uri,
        )
        rec = replace(rec, hash=rec.digest())
        existing = _existing(c, name, rec.hash)
        if existing is not None:
            c.set_registered_model_alias(name, alias, existing.version)
            logger.info("decision already registered as %s/%s", name, existing.version)
            return c.get_model_version(name, existing.version)
        return _log_and_register(c, mlflow, rec, dm, run.info.experiment_id, name, alias, report)


def _existing(c: Any, name: str, digest: str) -> Any:
    """The version of ``name`` already holding the decision ``digest``, or None."""
    try:
        versions = c.search_model_versions(f"name = '{name}'")
    except Exception:  # no such registered model yet
        return None
    for mv in versions:
        if (mv.tags or {}).get(PREFIX + "hash") == digest:
            return mv
    return None


def _log_and_register(
    c: Any,
    mlflow: Any,
    rec: DecisionRecord,
    dm: Any,
    exp_id: str,
    name: str,
    alias: str,
    report: Any,
) -> Any:
    run_id = model_id = version = None
    try:
        with _decision_run(exp_id, f"decision-{name}") as run_id:
            info = mlflow.pyfunc.log_model(
                name="decision_model",
                python_model=str(SERVED),
                artifacts=dm.artifacts,
                model_config=dm.model_config,
                signature=dm.signature,
                pip_requirements=dm.pip_requirements,
            )
            model_id = getattr(info, "model_id", None)
            rec = replace(rec, decision_run_id=run_id, created_at=now_iso())
            mlflow.log_dict(rec.as_dict(), DECISION_JSON)
            html = getattr(report, "html", None)
            if isinstance(html, str):
                mlflow.log_text(html, REPORT_HTML)
            mlflow.set_tags(rec.tags())
        mv = mlflow.register_model(info.model_uri, name, tags=rec.tags())
        version = mv.version
        c.update_model_version(name, version, description=rec.description())
        c.set_registered_model_alias(name, alias, version)
        return c.get_model_version(name, version)
    except BaseException as exc:
        left = _clean_up(c, name, version, model_id, run_id)
        if isinstance(exc, ValueError):
            raise ValueError(f"{exc} (registration failed; {left})") from exc
        raise


def _clean_up(c: Any, name: str, version: Any, model_id: Any, run_id: Any) -> str:
    """Delete what a failed registration created; one line saying what remains."""
    gone, left = [], []
    for what, fn in (
        (f"model version {name}/{version}", lambda: c.delete_model_version(name, version)),
        (f"logged model {model_id}", lambda: c.delete_logged_model(model_id)),
        (f"decision run {run_id}", lambda: c.delete_run(run_id)),
    ):
        if what.endswith(" None"):
            continue
        try:
            fn()
            gone.append(what)
        except Exception as exc:
            left.append(f"{what} ({type(exc).__name__})")
    logger.warning("registration failed: deleted %s; left %s", gone or "nothing", left or "none")
    return (f"deleted {', '.join(gone)}" if gone else "nothing was created") + (
        f"; could not delete {', '.join(left)}" if left else ""
    )
