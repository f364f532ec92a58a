"""What a report is made of: run records, skipped runs, validated options, the Report."""

from __future__ import annotations

import html as _html
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlflow_imbalance.core.counts import RocCounts

logger = logging.getLogger(__name__)


ProgressFn = Callable[[str, int, int], None]


# ---------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class RunData:
    """One run as the report sees it: loaded counts plus what is shown about the run.

    Attributes:
        name: display name (run name, file name or mapping key); escaped when rendered.
        counts: the run's ROC counts.
        run_id: MLflow run id, when the counts came from a run.
        summary: the run's ``summary.json`` (may be empty).
        params: run params shown in the runs table.
        tags: user tags shown in the runs table.
        digest: digest of the test labels (runs with equal digests share a test set).
        scores: optional ``(y_true, y_score)`` of the test set, for paired comparisons.
        source: where the counts came from (for the runs table).
        experiment_id: MLflow experiment id of the run (links into the MLflow UI).
        counts_name: the counts set read from the run (``imbalance/<counts_name>/``); differs
            from the report's name when the run held only a set of another name (the report
            notes it). None when the counts did not come from a run.
    """

    name: str
    counts: RocCounts
    run_id: str | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    tags: Mapping[str, Any] = field(default_factory=dict)
    digest: str | None = None
    scores: tuple[Any, Any] | None = None
    source: str = ""
    experiment_id: str | None = None
    counts_name: str | None = None
    #: unlabeled production batches of the run's model: ``{batch label: ScoreCounts}``, in
    #: batch order (:func:`mlflow_imbalance.log_production_scores`)
    production: Mapping[str, Any] = field(default_factory=dict)
    #: audit estimates of those batches from production labels: ``{batch label:
    #: AuditEstimate}`` (:func:`mlflow_imbalance.log_audit_labels`; batches without labels absent)
    audits: Mapping[str, Any] = field(default_factory=dict)

    @property
    def synthesized(self) -> bool:
        """True when the run's positives were synthesised from negatives (Cataltepe et al.)."""
        pos = self.summary.get("positives") if isinstance(self.summary, Mapping) else None
        return str(pos).lower() in {"synthesized", "synthesised", "synthetic"}


@dataclass(frozen=True)
class SkippedRun:
    """A run left out of the report, with the reason shown to the reader.

    Attributes:
        name: the run's name (or the file / mapping key it came from).
        reason: why it was left out, one line.
        run_id: the MLflow run id, when it was a run.
    """

    name: str
    reason: str
    run_id: str | None = None


@dataclass(frozen=True)
class ReportOptions:
    """Validated options of one report (see :func:`build_report` for their meaning)."""

    prevalences: tuple[float, ...] = ()
    prevalence_range: tuple[float, float] | None = None
    name: str = "test"
    cost_fp: float = 1.0
    cost_fn: float = 1.0
    costs_given: bool = False
    primary_metric: str = "ap"
    confidence: float = 0.95
    n_bootstrap: int = 1000
    seed: int = 0
    title: str | None = None
    n_grid: int = 200
    #: Where the prevalences / costs came from: "argument", "runs" or "" (none).
    prevalences_source: str = ""
    costs_source: str = ""
    #: the production batch the verdict is given at (None: the latest); False: ignore the
    #: runs' production batches
    batch: str | None = None
    use_production: bool = True
    #: prevalences logged with the runs beyond the report's cap (not evaluated)
    prevalences_dropped: tuple[float, ...] = ()
    #: ``(low, high)``: one verdict decided over this range of η (``decide_over``)
    decide_over: tuple[float, float] | None = None
    #: η -> DecideRange: the verdicts decided over a range (set by the analysis)
    decide_ranges: Mapping[float, Any] = field(default_factory=dict)


#: What a verdict decides (:attr:`Verdict.decision`).
DECISIONS = ("run", "nothing", "everything", "none_judged")


@dataclass(frozen=True)
class Verdict:
    """The report's answer at one prevalence: which run to ship, at which threshold, how sure.

    Attributes:
        prevalence: the deployment prevalence η (the test prevalence when none was chosen; for
            a verdict decided over a range, the point estimate or the range's middle: where
            precision, alerts and caught cases are given).
        run: name of the recommended run; None unless ``decision == "run"``.
        criterion: ``"expected cost"`` or the primary metric's label (``"AP"``, ...).
        criterion_key: ``"cost"``, ``"ap"``, ``"pr_auc"``, ``"max_f1"`` or ``"roc_auc"``.
        value: the recommended run's value of the criterion at η (expected cost per case; the
            text and the page show it per ``per`` cases), with ``value_low`` /
            ``value_high``: its interval in the tables (None without one: weighted counts,
            no bootstrap, or ROC-AUC's when that is the criterion and untabled).
        threshold: score threshold to deploy (predict positive when ``score >= threshold``):
            the cost-optimal threshold under the cost criterion, else the max-F1 threshold.
        precision: precision at η at that threshold, with ``precision_low``/``precision_high``.
        recall: recall (TPR) at that threshold, with ``recall_low``/``recall_high``.
        per: cases the counts below refer to (10,000 or 1,000,000).
        alerts: expected alerts (predicted positives) per ``per`` cases at η.
        caught: expected caught positives per ``per`` cases at η.
        missed: expected missed positives per ``per`` cases at η.
        runner_up: the second run by the criterion (None with a single run).
        runner_up_value: its criterion value, with ``runner_up_low`` / ``runner_up_high``.
        difference: criterion difference (recommended minus runner-up).
        p_value: two-sided p-value of that difference (None when not tested).
        significant: True / False, or None when not tested.
        intervals_apart: True when ``significant`` rests on the two runs' criterion intervals
            not overlapping while the z-test alone gave ``p_value`` ≥ α (heavy-tailed
            replicates at small η).
        test: how the difference was tested.
        more_data: what more data would separate a tie ("" otherwise).
        disagree: metrics that pick another run at η, one line.
        chance: ``"all"`` when the threshold flags every case, ``"interval"`` when the
            precision interval reaches η (not shown to beat flagging at random), else "".
        text: the verdict in one plain sentence.
        decision: ``"run"`` (ship ``run`` at ``threshold``), ``"nothing"`` (flag no case: no
            run is shown to beat it), ``"everything"`` (flag every case) or ``"none_judged"``
            (no run has enough test cases to be judged; ``MIN_TEST_CLASS``).
        prevalence_low: lower end of the range of η the decision was made over (equal to
            ``prevalence`` for a typed η; for an estimated one, the batch's audited interval
            or the chosen estimate's interval; ``decide_over`` gives it directly).
        prevalence_high: its upper end.
        regret: the most the decision can lose, per case like ``value``, against the best
            decision (any run at any threshold, or flagging nothing or everything) at any η of
            ``[prevalence_low, prevalence_high]``; 0 where one decision is best throughout;
            None without costs. It takes the test ROC counts as exact (their sampling error is
            in the intervals and the "beats flagging nothing" check, not here).
        at_estimate: for a verdict decided over a range, the verdict at ``prevalence`` alone
            (as if η were known); None otherwise.
        at_low: precision, alerts, caught and missed cases of the decision at
            ``prevalence_low`` (a dict; None for a typed η).
        at_high: the same at ``prevalence_high``.
        source: ``"typed"`` (a prevalence given or logged), ``"estimated"`` (a production
            batch's estimate) or ``"range"`` (``decide_over``).
        batch: the production batch an estimated verdict is about ("" otherwise).
        run_id: the MLflow run id of ``run`` (None for counts not from a run).
        cost_fp: C_FP the verdict was decided with (None without costs).
        cost_fn: C_FN likewise.
        compared: the runs the decision was chosen among (judged runs), by name.
        compared_ids: their MLflow run ids (None where a run has none), in that order.
        not_judged: one line per run too small to be judged ("name: 3 positives, 1 negative").
        drift: one line when a production batch's prior-shift check fails or the runs'
            estimates of it disagree ("" otherwise).
        audit_labels: for a verdict over a batch's label-free range that can lose more than
            the tolerance (10 % of the decision's cost at the estimate) or that drifted: the
            labels drawn by ``plan_audit`` that would pin η down enough (None otherwise), with
            ``audit_text`` saying so in one sentence and ``audit_threshold`` the threshold to
            plan them at (the decision's; ``plan_audit`` defaults to the run's at its logged
            prevalence).
    """

    prevalence: float
    run: str | None
    criterion: str
    criterion_key: str
    value: float
    threshold: float
    precision: float
    precision_low: float | None
    precision_high: float | None
    recall: float
    recall_low: float | None
    recall_high: float | None
    per: int
    alerts: float
    caught: float
    missed: float
    runner_up: str | None = None
    runner_up_value: float | None = None
    difference: float | None = None
    p_value: float | None = None
    significant: bool | None = None
    intervals_apart: bool = False
    test: str = ""
    more_data: str = ""
    disagree: str = ""
    chance: str = ""
    text: str = ""
    value_low: float | None = None
    value_high: float | None = None
    runner_up_low: float | None = None
    runner_up_high: float | None = None
    decision: str = "run"
    prevalence_low: float | None = None
    prevalence_high: float | None = None
    regret: float | None = None
    at_estimate: Verdict | None = None
    at_low: Mapping[str, float] | None = None
    at_high: Mapping[str, float] | None = None
    source: str = "typed"
    batch: str = ""
    run_id: str | None = None
    cost_fp: float | None = None
    cost_fn: float | None = None
    compared: tuple[str, ...] = ()
    compared_ids: tuple[str | None, ...] = ()
    not_judged: tuple[str, ...] = ()
    drift: str = ""
    audit_labels: int | None = None
    audit_text: str = ""
    audit_threshold: float | None = None

    def __post_init__(self) -> None:
        if self.decision not in DECISIONS:
            raise ValueError(f"decision must be one of {DECISIONS}, got {self.decision!r}")
        if (self.run is None) != (self.decision != "run"):
            raise ValueError(f"run must be given exactly when decision is 'run', got {self.run!r}")
        if self.prevalence_low is None:
            object.__setattr__(self, "prevalence_low", self.prevalence)
        if self.prevalence_high is None:
            object.__setattr__(self, "prevalence_high", self.prevalence)

    def as_dict(self) -> dict[str, Any]:
        """The verdict as a plain dict (JSON-friendly; ``at_estimate`` a dict too)."""
        out = dict(self.__dict__)
        if self.at_estimate is not None:
            out["at_estimate"] = self.at_estimate.as_dict()
        for k in ("at_low", "at_high"):
            if out[k] is not None:
                out[k] = dict(out[k])
        out["compared"], out["compared_ids"] = list(self.compared), list(self.compared_ids)
        out["not_judged"] = list(self.not_judged)
        return out


class Report:
    """A rendered report: the HTML string plus what it was built from.

    Attributes:
        html: the complete, self-contained HTML document.
        context: the template context (numbers, flips, figures) for programmatic use.
        timings: wall seconds per stage (load, metrics, bootstrap, ranking, figures, render).
        cpu_timings: CPU seconds (``time.process_time``, all threads) per stage.
        skipped: runs that could not be included, with reasons (each also logged as a
            warning by :func:`~mlflow_imbalance.report.build.build_report`).
        notes: one line per run read from counts of another name than the report's (the
            run held no set of that name and exactly one other), also shown in the report.
        verdict: one :class:`Verdict` per chosen prevalence (the test prevalence when none
            was chosen): the run to ship, its threshold and how sure the choice is.
    """

    def __init__(
        self,
        html: str,
        context: Mapping[str, Any],
        timings: Mapping[str, float],
        skipped: Sequence[SkippedRun] = (),
        path: Path | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        self.html = html
        self.context = dict(context)
        self.timings = dict(timings)
        self.cpu_timings: dict[str, float] = {}
        self.skipped = list(skipped)
        self.notes = list(notes)
        self.path = path
        self.verdict: list[Verdict] = list(self.context.get("verdict_data", ()))

    def verdict_text(self) -> str:
        """The verdict as plain text lines (what the command line prints)."""
        return "\n".join(v.text for v in self.verdict)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the HTML to ``path`` (UTF-8, atomically) and return the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        tmp.write_text(self.html, encoding="utf-8")
        os.replace(tmp, target)
        self.path = target
        return target

    def _repr_html_(self) -> str:
        """Notebook display: the report in a sandboxed iframe (scripts only, as in MLflow)."""
        doc = _html.escape(self.html, quote=True)
        return (
            f'<iframe srcdoc="{doc}" sandbox="allow-scripts" '
            'style="width:100%;height:900px;border:1px solid '
            '#d0d7de;border-radius:6px" title="mlflow-imbalance report"></iframe>'
        )

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        runs = len(self.context.get("runs", ()))
        return f"Report(runs={runs}, skipped={len(self.skipped)}, bytes={len(self.html)}{where})"
