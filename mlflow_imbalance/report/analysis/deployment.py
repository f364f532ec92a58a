"""Where will it be deployed? The prevalence estimated from production scores, for the report.

A run that logged unlabeled production batches (:func:`mlflow_imbalance.log_production_scores`)
lets the report estimate the deployment prevalence η of each batch from that run's own ROC
counts and production counts (:func:`mlflow_imbalance.stats.prevalence.estimate_prevalence`).
η is a property of the population, not of the model, so one range serves every run's
verdict: the report decides over the chosen batch's (the latest by default) audited η interval
where it has audit labels, else over the interval of the estimate whose interval is narrowest
(:func:`deciding_range`), with its numbers at that estimate; a failing prior-shift check, runs
whose estimates disagree (Cochran's Q) or an audit's ROC-shift test are said first in the
verdict (a sign of drift, or of a bug upstream).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["BatchEstimate", "Deployment", "deciding_range", "estimate_batches", "pick"]


@dataclass(frozen=True)
class BatchEstimate:
    """One run's estimate of one production batch's prevalence."""

    run: str
    batch: str
    order: int
    n: int
    result: Any  # PrevalenceEstimate
    #: the batch's audit estimate from production labels (AuditEstimate), if any
    audit: Any = None

    @property
    def ok(self) -> bool:
        """False when the prior-shift check failed (the estimate is not to be trusted).

        The estimate's own rule (:attr:`~mlflow_imbalance.stats.prevalence.PrevalenceEstimate.
        check_passed`, at :data:`~mlflow_imbalance.stats.prevalence.PRIOR_SHIFT_LEVEL`): the
        badge, the verdict, the card and the batch JSON say the same.
        """
        return bool(getattr(self.result, "check_passed", True))


@dataclass(frozen=True)
class Deployment:
    """The estimates of every run and batch, and the one the report decides at."""

    estimates: list[BatchEstimate]
    chosen: BatchEstimate | None
    disagree: list[str]
    failed: list[str]
    #: the estimate as the verdict uses it (3 significant digits), once chosen
    eta_shown: float | None = None
    #: the range the verdict is decided over: the union of the judged runs' intervals
    low: float | None = None
    high: float | None = None
    #: one line when the batch has drifted (a failing check) or its estimates disagree
    drift: str = ""
    #: the runs whose estimates of the batch estimated it (judged runs only)
    n_runs: int = 0
    #: True when the range is the union of the runs' intervals (a sign of drift)
    union: bool = False
    #: the audit the range comes from (a BatchEstimate whose ``audit`` is set), if any
    audited: BatchEstimate | None = None

    @property
    def eta(self) -> float | None:
        """The prevalence the verdict is given at (None without production batches)."""
        return None if self.chosen is None else float(self.chosen.result.estimate)


def estimate_batches(
    runs: Sequence[Any], confidence: float, costs: tuple[float, float] | None = None
) -> tuple[list[BatchEstimate], list]:
    """Every run's estimate of each of its production batches; failures one line each.

    With the report's ``costs`` each estimate carries its audit advice where it is wide or its
    check fails (:func:`mlflow_imbalance.stats.robust.with_audit_advice`), as the batch's own
    record does at the run's logged costs: equal costs, equal sentences.
    """
    from mlflow_imbalance.stats.prevalence import estimate_prevalence
    from mlflow_imbalance.stats.robust import with_audit_advice

    out: list[BatchEstimate] = []
    failed: list[str] = []
    for r in runs:
        for order, (batch, sc) in enumerate((getattr(r, "production", None) or {}).items()):
            if r.counts.weighted:
                failed.append(f"{r.name}, batch {batch}: weighted test counts (no estimate)")
                continue
            try:
                est = with_audit_advice(
                    estimate_prevalence(r.counts, sc, confidence=confidence), r.counts, sc, costs
                )
            except Exception as exc:  # one run's batch cannot sink the report
                logger.warning("no prevalence estimate for %r batch %r", r.name, batch, exc_info=1)
                failed.append(f"{r.name}, batch {batch}: {type(exc).__name__}: {exc}")
                continue
            audit = (getattr(r, "audits", None) or {}).get(str(batch))
            out.append(BatchEstimate(r.name, str(batch), order, int(sc.n), est, audit))
    return out, failed


def pick(estimates: Sequence[BatchEstimate], batch: str | None, failed: list) -> Deployment:
    """The estimate the report decides at: ``batch`` (default: the latest), narrowest interval.

    Runs whose intervals for that batch do not overlap the chosen one's are listed in
    ``disagree``; estimates whose prior-shift check failed are not chosen while another is.
    """
    if not estimates:
        return Deployment([], None, [], failed)
    if batch is None:
        batch = max(estimates, key=lambda e: e.order).batch
    same = [e for e in estimates if e.batch == batch]
    if not same:
        known = sorted({e.batch for e in estimates})
        raise ValueError(f"batch must be one of the logged batches {known}, got {batch!r}")
    trusted = [e for e in same if e.ok] or same
    chosen = min(trusted, key=lambda e: float(e.result.high) - float(e.result.low))
    lo, hi = float(chosen.result.low), float(chosen.result.high)
    disagree = [
        e.run
        for e in same
        if e is not chosen and (float(e.result.high) < lo or float(e.result.low) > hi)
    ]
    return Deployment(list(estimates), chosen, disagree, failed)


def deciding_range(
    dep: Deployment, judged: Sequence[str], confidence: float, feta: Callable[[float], str]
) -> Deployment:
    """The chosen batch's deciding range, point and drift line (issue 37).

    The batch is one population whichever run scored it, so every judged run's estimate counts
    as evidence: a failing prior-shift check on any run, or estimates that disagree, mean the
    batch has drifted, and the verdict says so first. The range is the chosen (narrowest
    trusted) estimate's interval: the union of the runs' intervals was measured to decide worse
    (``benchmarks/bench_decision.py``), and is used only when no judged run made the chosen
    estimate. An audit of the batch replaces both (:func:`_audited_range`). The point is the
    chosen estimate (narrowest trusted interval), else the estimates' weighted common value,
    else the range's middle. A failing prior-shift check on any run means the batch has drifted;
    Cochran's Q test of one common η names the runs whose estimates disagree
    (:func:`mlflow_imbalance.stats.robust.common_prevalence_test`).
    """
    from mlflow_imbalance.stats.robust import common_prevalence_test

    if dep.chosen is None:
        return dep
    same = [e for e in dep.estimates if e.batch == dep.chosen.batch and e.run in set(judged)]
    if not same:
        return dep
    lo = min(float(e.result.low) for e in same)
    hi = max(float(e.result.high) for e in same)
    if not hi > 0:
        return dep
    common = common_prevalence_test(
        [(float(e.result.estimate), float(e.result.low), float(e.result.high)) for e in same],
        confidence,
        level=1 - confidence,
    )
    point = float(dep.chosen.result.estimate) if dep.chosen in same else 0.0
    if not point > 0:
        point = float(common.estimate or 0.0)
    if not point > 0 or not lo <= point <= hi:
        point = (lo + hi) / 2
    failing = [e for e in same if not e.ok]
    audited = [e for e in same if e.audit is not None]
    if audited:  # labels settle it: the design-based interval holds whatever drifted (issue 39)
        return _audited_range(dep, same, audited, common)
    union = dep.chosen not in same
    if not union:
        # the chosen (narrowest trusted) interval, drift or not: over the union of the runs'
        # intervals the decision cost more at η = 1e-3, under drift more than flagging nothing
        # (bench_decision.py, docs/statistics.md "Deciding over a range of η")
        lo, hi = float(dep.chosen.result.low), float(dep.chosen.result.high)
    parts = []
    if failing:
        ps = ", ".join(f"{e.run} ({getattr(e.result, 'check_text', 'FAILS')})" for e in failing)
        parts.append(
            f"Batch {dep.chosen.batch} has drifted: the prior-shift check fails for {ps}, so its "
            "η estimates are a best effort; audit labels would settle it."
        )
    if common.disagree:
        names = ", ".join(same[i].run for i in common.disagree)
        parts.append(
            f"The runs' estimates of batch {dep.chosen.batch} disagree (one common η: "
            f"p = {common.p_value:.2g}; {names} differ), a further sign of drift."
        )
    disagree = [same[i].run for i in common.disagree]
    return replace(
        dep, low=lo, high=hi, eta_shown=shown_eta(point), drift=" ".join(parts),
        n_runs=len(same), disagree=disagree, union=union,
    )  # fmt: skip


def _audited_range(
    dep: Deployment, same: Sequence[BatchEstimate], audited: Sequence[BatchEstimate], common: Any
) -> Deployment:
    """The range from the batch's audit: the chosen run's, else the one with the most labels."""
    e = dep.chosen if dep.chosen in audited else max(audited, key=lambda x: x.audit.n_labels)
    a = e.audit
    lo, hi = float(a.prevalence.low), float(a.prevalence.high)
    point = float(a.prevalence.estimate)
    if not (point > 0 and lo <= point <= hi):
        point = (lo + hi) / 2
    parts = []
    if a.roc_shifted:
        parts.append(
            f"The audit of batch {e.batch} ({a.n_labels} labels) shows production's TPR and FPR "
            f"at {e.run}'s threshold {float(a.threshold):.4g} differ from the test set's "
            f"(p = {float(a.roc_shift_p):.2g}): the test ROC no longer describes production."
        )
    return replace(
        dep, low=lo, high=hi, eta_shown=shown_eta(point) if hi > 0 else None,
        drift=" ".join(parts), n_runs=len(same), disagree=[same[i].run for i in common.disagree],
        union=False, audited=e,
    )  # fmt: skip


def shown_eta(x: float) -> float:
    """An estimated prevalence as the verdict and the page's control use it.

    3 significant digits: the estimate is known far less precisely, and the printed verdict,
    the control and the live verdict then share one η exactly.
    """
    return float(f"{x:.3g}")


def _labels_of(b: Any) -> int | None:
    return None if b is None or b.labels is None else int(b.labels)


def _hint_of(b: Any, fint: Callable[..., str]) -> str:
    """``"about 788 audit labels would settle this run's decision"`` ("" when not needed)."""
    n = _labels_of(b)
    return "" if n is None else f"about {fint(n)} audit labels would settle this run's decision"


def header_rows(
    dep: Deployment, feta: Callable[[float], str], fint: Callable[..., str]
) -> list[dict[str, Any]]:
    """One row per run and batch for the page: estimate, interval, method, check."""
    rows = []
    for e in sorted(dep.estimates, key=lambda e: (e.order, e.run)):
        r = e.result
        rows.append(
            {
                "run": e.run,
                "batch": e.batch,
                "n": fint(e.n),
                "eta": feta(float(r.estimate)) if float(r.estimate) > 0 else "0",
                "ci": f"[{feta(float(r.low)) if float(r.low) > 0 else '0'}, {feta(float(r.high))}]",
                "method": str(r.method),
                "check": "passes" if e.ok else "FAILS",
                "check_text": str(getattr(r, "check_text", "passes" if e.ok else "FAILS")),
                "p": getattr(r, "prior_shift_p", None),
                "text": getattr(r, "text", ""),
                "audit_labels": _labels_of(getattr(r, "audit", None)),
                # once audited, the labels are in: the audit table below says what they show
                "audit_hint": (
                    f"audited with {fint(e.audit.n_labels)} labels (below)"
                    if e.audit is not None
                    else _hint_of(getattr(r, "audit", None), fint)
                ),
                "chosen": e is dep.chosen,
                "low": float(r.low),
                "high": float(r.high),
                "estimate": float(r.estimate),
                # where the page's control jumps: the estimate as the verdict rounds it
                "jump": shown_eta(float(r.estimate) if float(r.estimate) > 0 else float(r.high)),
                "audit": _audit_row(e.audit, feta, fint) if e.audit is not None else None,
            }
        )
    return rows


def _audit_row(a: Any, feta: Callable[[float], str], fint: Callable[..., str]) -> dict[str, Any]:
    """An audit beside the label-free estimate, for the page's audit table.

    Audited η, precision and recall at the threshold with what the test set predicted there,
    and whether they disagree (the test set's number outside the audited interval, or the
    ROC-shift test rejecting).
    """

    def iv(x: Any, f: Callable[[float], str]) -> str:
        lo = f(float(x.low)) if float(x.low) > 0 else "0"
        return (
            f"{f(float(x.estimate)) if float(x.estimate) > 0 else '0'} [{lo}, {f(float(x.high))}]"
        )

    def f3(x: float) -> str:
        return f"{x:.3g}"

    pred_p, test_r = float(a.predicted_precision), float(a.test_tpr)
    outside_p = not float(a.precision.low) <= pred_p <= float(a.precision.high)
    outside_r = not float(a.recall.low) <= test_r <= float(a.recall.high)
    return {
        "labels": f"{fint(a.n_labels)} of {fint(a.n_planned)}",
        "eta": iv(a.prevalence, feta),
        "threshold": f"{float(a.threshold):.4g}",
        "precision": iv(a.precision, f3),
        "predicted_precision": f3(pred_p) if math.isfinite(pred_p) else "–",
        "recall": iv(a.recall, f3),
        "test_recall": f3(test_r) if math.isfinite(test_r) else "–",
        "disagree": bool(outside_p or outside_r or a.roc_shifted),
        "roc_shift": f"p = {float(a.roc_shift_p):.2g}",
        "text": str(getattr(a, "text", "")),
    }


def deployment_note(dep: Deployment, feta: Callable[[float], str]) -> dict[str, str] | None:
    """The callout for an estimate the verdict cannot be decided over (None otherwise).

    When the batch gives a range, the verdict itself says what was decided over it, the drift
    and the disagreement (:func:`deciding_range`); only an estimate at 0 whose intervals give
    no range, or one no judged run made, needs a callout of its own.
    """
    if dep.chosen is None or dep.high is not None:
        return None
    e, r = dep.chosen, dep.chosen.result
    if float(r.estimate) <= 0:
        return {
            "level": "warning",
            "title": "No positives detected in production:",
            "text": f"batch {e.batch}'s estimate ({e.run}'s scores) sits at 0, with an upper "
            f"bound of η = {feta(float(r.high))}; the verdict is not given at it. "
            + str(getattr(r, "text", "")),
        }
    low = feta(float(r.low)) if float(r.low) > 0 else "0"
    return {
        "level": "warning",
        "title": "Estimated by a run that cannot be judged:",
        "text": f"η = {feta(float(r.estimate))} [{low}, {feta(float(r.high))}] (batch "
        f"{e.batch}, {e.run}'s scores); the verdict is given at the estimate alone.",
    }


def runs_with_production(runs: Sequence[Any]) -> Mapping[str, int]:
    """Run name -> number of production batches it holds."""
    return {r.name: len(r.production) for r in runs if getattr(r, "production", None)}


def drift_spec(lead: Sequence[str], colors: Mapping[str, str]) -> dict[str, Any]:
    """Vega-Lite spec: the estimated prevalence per batch with its interval, per run.

    Data ``deployment`` (rows of :func:`header_rows`' numbers) and ``cur`` (the live η) come
    from the page's script, as for the other charts.
    """
    from mlflow_imbalance.report.analysis.charts import _PARAMS, _base, _color

    y = {"field": "plot_estimate", "type": "quantitative", "title": "estimated η (log)",
         "scale": {"type": "log"}}  # fmt: skip
    x = {"field": "batch", "type": "ordinal", "title": "production batch", "sort": None}
    color = _color(lead, colors)
    spec = _base(
        "Estimated prevalence per production batch",
        "bars: the estimate's interval (a 0 at the bottom edge); dashed: the control's η",
    )
    spec["params"] = _PARAMS
    spec["layer"] = [
        {
            "data": {"name": "deployment"},
            "mark": {"type": "rule", "strokeWidth": 2},
            "encoding": {"x": x, "y": {**y, "field": "plot_low"}, "y2": {"field": "high"},
                         "color": color, "xOffset": {"field": "run"}},
        },
        {
            "data": {"name": "deployment"},
            "mark": {"type": "point", "filled": True, "size": 70},
            "encoding": {
                "x": x, "y": y, "color": color, "xOffset": {"field": "run"},
                "tooltip": [
                    {"field": "run", "type": "nominal"},
                    {"field": "batch", "type": "ordinal"},
                    {"field": "estimate", "type": "quantitative", "format": ".3~e"},
                    {"field": "low", "type": "quantitative", "format": ".3~e"},
                    {"field": "high", "type": "quantitative", "format": ".3~e"},
                ],
            },
        },
        {
            "data": {"name": "cur"},
            "mark": {"type": "rule", "color": "#1b1f24", "strokeDash": [4, 3]},
            "encoding": {"y": {"field": "eta", "type": "quantitative", "scale": {"type": "log"}}},
        },
    ]  # fmt: skip
    return spec
