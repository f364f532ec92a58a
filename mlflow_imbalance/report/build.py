"""``build_report``: load → analyse → render, each stage timed."""

from __future__ import annotations

import datetime as _dt
import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mlflow_imbalance.report.inputs import (
    _collect,
    _unique_names,
    check_output_path,
)
from mlflow_imbalance.report.model import (
    ProgressFn,
    Report,
    RunData,
    SkippedRun,
)
from mlflow_imbalance.report.options import (
    DEFAULT_NAME,
    _options,
    check_decide_over,
    resolve_costs,
    with_run_defaults,
)
from mlflow_imbalance.report.progress import progress_callback
from mlflow_imbalance.report.render import (
    PALETTE,
    _fmt,
    _fmt_ci,
    _fmt_eta,
    _fmt_int,
    _stable_seed,
    render_html,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------- entry point
def build_report(
    runs_or_counts: Any,
    *,
    prevalences: float | Sequence[float] | None = None,
    prevalence_range: tuple[float, float] | str | None = None,
    name: str | None = None,
    costs: Any = None,
    primary_metric: str = "ap",
    confidence: float = 0.95,
    n_bootstrap: int = 1000,
    seed: int = 0,
    output: str | os.PathLike[str] | None = None,
    title: str | None = None,
    experiment: str | None = None,
    progress: bool | ProgressFn | None = None,
    skipped: Sequence[SkippedRun] = (),
    cost_fp: float | None = None,
    cost_fn: float | None = None,
    production: Any = None,
    batch: str | None = None,
    decide_over: tuple[float, float] | str | None = None,
    pdf: str | os.PathLike[str] | None = None,
    paper: str = "letter",
    decision: Mapping[str, Any] | None = None,
) -> Report:
    """Build the HTML report comparing runs across prevalences.

    No run is left out silently: every run that cannot be used (no counts, corrupt files, an
    unknown run id) is logged as a warning (``logging``, logger
    ``mlflow_imbalance.report.build``) with its reason, listed in :attr:`Report.skipped` and
    under "Skipped runs" in the page; a run read from counts of another name is noted in
    :attr:`Report.notes` and in the page.

    Args:
        runs_or_counts: MLflow run ids or ``mlflow.entities.Run`` objects (loaded through
            :mod:`mlflow_imbalance.tracking`, needs a tracking store), a mapping
            ``name -> RocCounts``, :class:`RunData` records, or paths to ``roc_counts.npz``
            files / directories holding one (no tracking server at all).
        prevalences: deployment prevalence(s) η of interest; each gets its verdict and its
            own table. None: the prevalences logged with the runs (their union; the header
            says so), else the test prevalence only.
        prevalence_range: ``(low, high)`` or ``"low:high"``: the η range searched for ranking
            flips and drawn on the η axes. Default: spans the test and chosen prevalences with a
            decade of margin each side, within [1e-6, 0.5].
        name: the counts name of the MLflow runs (``imbalance/<name>/``). None (default):
            ``"test"``, the name every entry point logs under; a run with no set of that name
            but exactly one other (``"validation"``, ``"autolog"`` from older versions) is
            read from that one, with a note; a run with several other sets is skipped, its
            reason listing them. A name given explicitly is used as given for every run.
        costs: ``(cost_fp, cost_fn)`` or ``{"fp": cost_fp, "fn": cost_fn}``, as in
            :func:`~mlflow_imbalance.log_scores`: the costs of one false positive and one
            false negative. Giving costs (here or logged with the runs, used when None) makes
            the lowest expected cost the report's criterion.
        primary_metric: the criterion when no costs are given: ``"ap"`` (default),
            ``"pr_auc"``, ``"max_f1"`` or ``"roc_auc"``.
        confidence: level of every interval and band.
        n_bootstrap: count-bootstrap replicates for metric intervals and bands (0 disables them;
            analytic rate and precision intervals remain).
        seed: seed of the bootstrap; the report is deterministic given inputs and seed.
        output: when given, the HTML is also written there.
        title: the report's title (default: from the experiment name).
        experiment: experiment name shown in the header (the loader fills it for run ids).
        progress: None (default): tqdm bars when stderr is a terminal or in a notebook,
            plain lines on stderr otherwise; True: bars; False: silent; or a callback
            ``(stage, done, total)``.
        skipped: runs already known to be skipped (e.g. by the CLI's search), listed as such
            (the caller reports them; they are not logged again).
        cost_fp: deprecated (:class:`FutureWarning`), use ``costs=(cost_fp, cost_fn)``.
        cost_fn: deprecated (:class:`FutureWarning`), use ``costs=(cost_fp, cost_fn)``.
        production: unlabeled production scores to estimate the deployment prevalence from
            (:func:`~mlflow_imbalance.stats.prevalence.estimate_prevalence`):
            ``{run name: scores | ScoreCounts | {batch: scores | ScoreCounts}}``. None
            (default): the batches logged with the runs
            (:func:`~mlflow_imbalance.log_production_scores`); False: ignore them. With
            batches, the verdict is also decided over what the estimates of ``batch`` allow
            about η.
        batch: the production batch the verdict is given at (default: the latest). Its
            verdict is decided over the batch's audited η interval where it has audit labels,
            else over the chosen (narrowest trusted) estimate's interval; a failing check or
            disagreeing estimates are said first
            (:class:`~mlflow_imbalance.report.model.Verdict` ``prevalence_low`` /
            ``prevalence_high``, ``regret``, ``at_estimate``).
        decide_over: ``(low, high)`` or ``"low:high"``: add one verdict decided over this
            range of η (least worst-case regret with costs), given first; its numbers are at
            the range's geometric middle (half its upper end when ``low`` is 0).
            ``prevalence_range`` keeps its meaning (the flip search and the axes).
        pdf: when given, the report is also printed to this PDF file by headless Chromium
            (:func:`mlflow_imbalance.report.pdf.print_pdf`: after its charts are drawn, every
            collapsed section open, no browser header or footer), from ``output`` (or a
            temporary copy of the HTML when ``output`` is None).
        paper: the PDF's paper size, ``"letter"`` (default) or ``"a4"``.
        decision: a registered decision to show first
            (:func:`mlflow_imbalance.deploy.read_decision`; ``mlflow-imbalance report --model``).

    Returns:
        The :class:`Report` (``.html``, ``.verdict``, ``.skipped``, ``.notes``,
        ``.save(path)``, ``_repr_html_`` for notebooks).

    Raises:
        ValueError: bad options (named), ``costs`` together with ``cost_fp`` / ``cost_fn``,
            or no run with valid counts at all.
        ChromiumNotFound: ``pdf`` given and no Chromium-based browser found (checked before
            any work; the message says how to install one or print from a browser).
    """
    from mlflow_imbalance.report import pdf as _pdf

    check_output_path(output)  # before any work: a directory or a missing folder is refused
    paper = _pdf.check_paper(paper)
    if pdf is not None:
        check_output_path(pdf, "pdf")
        _pdf.require_chromium()
    fp, fn = resolve_costs(costs, cost_fp, cost_fn)
    opts = _options(
        prevalences, prevalence_range, DEFAULT_NAME if name is None else name, fp, fn,
        confidence, n_bootstrap, seed, title, primary_metric, costs_checked=costs is not None,
    )  # fmt: skip
    prod = _production_input(production)
    over = check_decide_over(decide_over)
    if over is not None:
        opts = replace(opts, decide_over=over)
    if batch is not None or production is False:
        opts = replace(opts, batch=None if batch is None else str(batch),
                       use_production=production is not False)  # fmt: skip
    notify = progress_callback(progress)
    try:
        report = _build(
            runs_or_counts, opts, output, experiment, notify, skipped, name, prod, decision
        )
    finally:
        notify.close()
    if pdf is not None:
        _print(report, output, pdf, paper)
    return report


def _print(report: Report, output: Any, pdf: Any, paper: str) -> None:
    """Print the report to ``pdf`` from its HTML file (a temporary one without ``output``)."""
    import tempfile

    from mlflow_imbalance.report.pdf import print_pdf

    t0 = time.perf_counter()
    if output is not None:
        print_pdf(output, pdf, paper=paper)
    else:
        with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
            html = Path(tmp) / "report.html"
            html.write_text(report.html, encoding="utf-8")
            print_pdf(html, pdf, paper=paper)
    report.timings["pdf"] = time.perf_counter() - t0


def _build(
    runs_or_counts: Any,
    opts: Any,
    output: Any,
    experiment: str | None,
    progress: Any,
    skipped: Sequence[SkippedRun],
    name: str | None,
    production: Mapping[str, Mapping[str, Any]] | None = None,
    decision: Mapping[str, Any] | None = None,
) -> Report:
    timings: dict[str, float] = {}
    cpu: dict[str, float] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    runs, skipped_now, exp_loaded = _collect(runs_or_counts, name, progress)
    timings["load"] = time.perf_counter() - t0
    cpu["load"] = time.process_time() - c0
    for s in skipped_now:
        logger.warning(
            "run %r%s left out of the report: %s",
            s.name,
            f" ({s.run_id})" if s.run_id and s.run_id != s.name else "",
            s.reason,
        )
    all_skipped = [*skipped, *skipped_now]
    if not runs:
        reasons = "; ".join(f"{s.name}: {s.reason}" for s in all_skipped[:5]) or "no input"
        raise ValueError(f"runs_or_counts holds no run with valid counts ({reasons})")
    runs = _unique_names(runs)
    if production:
        runs = _with_production(runs, production)
    notes = _name_notes(runs, opts.name)
    opts = with_run_defaults(opts, [r.summary for r in runs])
    dropped_note = ""
    if opts.prevalences_dropped:
        shown = ", ".join(f"{v:g}" for v in opts.prevalences_dropped[:10])
        dropped_note = (
            f"{len(opts.prevalences_dropped)} prevalence(s) logged with the runs were not "
            f"evaluated (the report takes at most {len(opts.prevalences)} of them): {shown}"
            + (" …" if len(opts.prevalences_dropped) > 10 else "")
            + "; pass prevalences= (--prevalence) to choose"
        )
    from mlflow_imbalance.core.validation import validated
    from mlflow_imbalance.report.analysis._common import hull_cache
    from mlflow_imbalance.report.analysis.context import build_context, one_blas_thread

    # one BLAS thread: the analysis is many small products and dots, for which OpenBLAS's
    # threads only add CPU time (and wait for each other on a busy machine); each run's ROC
    # hull computed once for every stage
    with validated(), one_blas_thread(), hull_cache():  # options checked once, by _options
        context = build_context(
            runs,
            all_skipped,
            opts,
            experiment=experiment or exp_loaded,
            progress=progress,
            timings=timings,
            palette=PALETTE,
            formatters={"fmt": _fmt, "eta": _fmt_eta, "int": _fmt_int, "ci": _fmt_ci},
            seed_for=_stable_seed,
            cpu_timings=cpu,
            links=_run_links(runs),
        )
    if dropped_note:
        context.setdefault("warnings", []).append(
            {"level": "info", "title": "Logged prevalences left out.", "text": dropped_note}
        )
    if notes:
        context.setdefault("warnings", []).append(
            {
                "level": "info",
                "title": f"{len(notes)} run(s) read from counts of another name.",
                "text": "; ".join(notes[:8])
                + (f"; and {len(notes) - 8} more" if len(notes) > 8 else "")
                + ". Pass name= (--name) to choose the set explicitly.",
            }
        )
    context["registered_decision"] = dict(decision) if decision else None
    context["generated_at"] = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    t0, c0 = time.perf_counter(), time.process_time()
    html = render_html(context)
    timings["render"] = time.perf_counter() - t0
    cpu["render"] = time.process_time() - c0
    notes = [*notes, *([dropped_note] if dropped_note else [])]
    context["notes"] = notes
    report = Report(html, context, timings, context.get("skipped_runs", all_skipped), notes=notes)
    report.cpu_timings = cpu
    if output is not None:
        report.save(output)
    return report


def _production_input(production: Any) -> dict[str, dict[str, Any]] | None:
    """``production=`` validated: ``{run: {batch: ScoreCounts}}`` (None / False: none given)."""
    from mlflow_imbalance.core.production import ScoreCounts

    if production is None or production is False:
        return None
    if not isinstance(production, Mapping):
        raise ValueError(
            "production must map run names to scores, ScoreCounts or {batch: scores}, got "
            f"{type(production).__name__}"
        )

    def counts(v: Any, where: str) -> ScoreCounts:
        if isinstance(v, ScoreCounts):
            return v
        try:
            return ScoreCounts.from_scores(v)
        except ValueError as exc:
            raise ValueError(f"production[{where}]: {exc}") from None

    out: dict[str, dict[str, Any]] = {}
    for run, value in production.items():
        if isinstance(value, Mapping):
            out[str(run)] = {str(b): counts(v, f"{run!r}][{b!r}") for b, v in value.items()}
        else:
            out[str(run)] = {"1": counts(value, repr(run))}
    return out


def _with_production(
    runs: Sequence[RunData], production: Mapping[str, Mapping[str, Any]]
) -> list[RunData]:
    """The runs with the given production batches attached (by run name or run id)."""
    known = {r.name for r in runs} | {r.run_id for r in runs if r.run_id}
    unknown = [k for k in production if k not in known]
    if unknown:
        raise ValueError(f"production names runs that are not in the report: {unknown}")
    return [
        replace(r, production=production.get(r.name) or production.get(r.run_id or "", {}))
        if (r.name in production or r.run_id in production) else r
        for r in runs
    ]  # fmt: skip


def _name_notes(runs: Sequence[RunData], name: str) -> list[str]:
    """One line per run read from counts of another name than ``name`` (logged at info)."""
    notes = []
    for r in runs:
        if r.counts_name is not None and r.counts_name != name:
            who = f"run {r.name!r}" + (f" ({r.run_id[:8]})" if r.run_id else "")
            notes.append(f"{who}: no counts named {name!r}; used its only set {r.counts_name!r}")
            logger.info("%s", notes[-1])
    return notes


def _run_links(runs: Sequence[RunData]) -> dict[str, str]:
    """Run name -> its page in the MLflow UI, when the tracking URI is http(s)."""
    if "mlflow" not in sys.modules or not any(r.run_id and r.experiment_id for r in runs):
        return {}
    import mlflow

    try:
        uri = str(mlflow.get_tracking_uri())
    except Exception:  # a broken tracking setup must not break the report
        return {}
    if not uri.startswith(("http://", "https://")):
        return {}
    from mlflow_imbalance.tracking.keys import run_view_url

    return {
        r.name: run_view_url(uri, r.experiment_id, r.run_id)  # the model-training view
        for r in runs
        if r.run_id and r.experiment_id
    }
