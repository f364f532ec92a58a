"""The ``mlflow-imbalance`` command line (click).

``mlflow-imbalance report`` loads the ROC counts of an experiment's runs and writes the
self-contained HTML report; ``mlflow-imbalance list`` shows which runs hold counts. Progress bars
go to stderr, only when stderr is a terminal and ``--quiet`` is not given. User errors (unknown
experiment, no runs with counts, bad options, an unreachable or missing tracking store) print one
clear line naming the option and exit with status 1 or 2; ``--debug`` shows the traceback
instead. Read commands never create a tracking store: a missing SQLite file or directory is an
error, and an HTTP server is probed with a short timeout before anything else.

A run asked for by ``--run-id`` is never left out quietly: an id (or prefix of at least 8
characters, as the report's Run id column shows it) that matches no run, an ambiguous prefix,
or a run that cannot be used (no counts, corrupt files) is an error naming it, with exit status
2 and no report written. Runs found by ``--experiment`` / ``--filter`` that cannot be used are
left out with a warning line each on stderr (also with ``--quiet``) and in the report. Run names
and reasons printed to the terminal have control characters escaped (:func:`terminal_safe`).
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import click

logger = logging.getLogger(__name__)

__all__ = ["main"]

_REPORT_EPILOG = """\b
Examples:
  mlflow-imbalance report --experiment fraud -o report.html \\
      --prevalence 1e-4 --prevalence 1e-3 --cost-fp 1 --cost-fn 100
  mlflow-imbalance report --experiment fraud --filter "params.model = 'gbm'" \\
      --prevalence-range 1e-5:1e-2 -o report.html
  mlflow-imbalance report --run-id 1f2e... --run-id 9a8b... --tracking-uri sqlite:///mlflow.db \\
      --prevalence 1e-3 -o report.html --log-to-run 1f2e...
  mlflow-imbalance report --run-id b1ea36fd --run-id 9a8b7c6d -o report.html   # id prefixes
"""


class _Progress:
    """click progress bars on stderr, one per stage; silent unless stderr is a TTY."""

    LABELS: ClassVar[dict[str, str]] = {
        "load": "Loading runs      ",
        "bootstrap": "Bootstrap         ",
        "ranking": "Ranking flips     ",
        "figures": "Figures           ",
    }

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None
        self.stage: str | None = None
        self.done = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if stage != self.stage:
            self.close()
            self.stage = stage
            self.done = 0
            self.bar = click.progressbar(
                length=total, label=self.LABELS.get(stage, stage), file=sys.stderr
            )
            self.bar.__enter__()
        if self.bar is not None:
            self.bar.update(done - self.done)
            self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="mlflow-imbalance", prog_name="mlflow-imbalance")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
@click.option("--debug", is_flag=True, help="Show the full traceback of an error.")
@click.pass_context
def main(ctx: click.Context, verbose: int, debug: bool) -> None:
    """Evaluate MLflow runs of binary classifiers at the class prevalence they will really meet.

    Runs hold ROC counts logged by mlflow_imbalance.log_scores (artifacts
    imbalance/<name>/roc_counts.npz); these commands read them back.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    ctx.obj = {"debug": debug}


# ------------------------------------------------------------------------ errors and store
#: Python parameter names of build_report and friends -> the CLI option a user typed.
_OPTION_NAMES = {
    "n_bootstrap": "--bootstrap",
    "prevalence_range": "--prevalence-range",
    "decide_over": "--decide-over",
    "prevalences": "--prevalence",
    "cost_fp": "--cost-fp",
    "cost_fn": "--cost-fn",
    "confidence": "--confidence",
    "seed": "--seed",
    "title": "--title",
    "output": "--output",
    "runs_or_counts": "the selected runs",
    "tracking_uri": "--tracking-uri",
    "paper": "--paper",
    "pdf": "--pdf",
}
_OPTION_RE = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, _OPTION_NAMES)) + r")(?![\w-])")


def option_names(message: str) -> str:
    """A library error message with Python parameter names replaced by CLI option names."""
    message = message.replace("runs_or_counts holds", "the selected runs hold")
    return _OPTION_RE.sub(lambda m: _OPTION_NAMES[m.group(1)], message)


#: Characters that a terminal interprets rather than prints: C0 controls (ESC starts CSI and
#: OSC sequences), DEL, C1 controls (U+009B is a one-byte CSI) and the bidirectional
#: overrides/isolates that reorder what a line appears to say.
_TERMINAL_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: Any) -> str:
    r"""``text`` with every terminal control character escaped (``\x1b``, ``\n``, ``\u202e``).

    Run names and reasons come from the tracking store: a name holding ESC sequences could
    rewrite the screen, a newline or tab could forge a line of ``list``'s output.
    """
    return _TERMINAL_UNSAFE.sub(
        lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text)
    )


def _one_line(text: str, limit: int = 600) -> str:
    text = terminal_safe(" ".join(str(text).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RunIdProblem(click.ClickException):
    """A ``--run-id`` that cannot be found or used: one line, exit status 2 (a usage error)."""

    exit_code = 2


def _debug_enabled() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    return bool(root is not None and isinstance(root.obj, dict) and root.obj.get("debug"))


@contextlib.contextmanager
def cli_errors() -> Iterator[None]:
    """Turn any error inside the block into one line on stderr and exit status 1.

    With ``--debug`` the exception propagates with its traceback. ``click`` usage errors pass
    through unchanged.
    """
    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
        raise
    except Exception as exc:
        if _debug_enabled():
            raise
        text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        if not isinstance(exc, ValueError | OSError) and not _is_mlflow_error(exc):
            text = f"{type(exc).__name__}: {text} (run with --debug for the traceback)"
        raise click.ClickException(_one_line(option_names(str(text)))) from None


def _is_mlflow_error(exc: BaseException) -> bool:
    return any(c.__module__.startswith("mlflow.") for c in type(exc).__mro__)


def check_store(tracking_uri: str | None) -> str:
    """Check, for a read command, that the tracking store exists and answers; return its URI.

    Never creates anything: a missing SQLite file or store directory is an error, an HTTP
    server is probed once with a short timeout.

    Raises:
        click.ClickException: one line naming the URI and what to do.
    """
    import mlflow
    from mlflow.tracking._tracking_service.utils import _tracking_store_registry

    from mlflow_imbalance.tracking._store import TrackingServerUnreachable, check_reachable

    uri = tracking_uri or str(mlflow.get_tracking_uri())
    try:
        _tracking_store_registry.get_store_builder(uri)
    except Exception:
        raise click.ClickException(
            _one_line(
                f"--tracking-uri {uri!r} is not a tracking store URI MLflow knows; use e.g. "
                "sqlite:///mlflow.db, http://127.0.0.1:5000, file:///path/to/mlruns or databricks"
            )
        ) from None
    scheme = uri.split(":", 1)[0].lower() if "://" in uri or uri.startswith("sqlite:") else ""
    local = None
    if scheme == "sqlite":
        path = uri.split("sqlite:///", 1)[-1] if uri.startswith("sqlite:///") else ""
        if path and path != ":memory:":
            local = Path(path.split("?", 1)[0])
    elif scheme in ("", "file"):
        from urllib.parse import unquote, urlsplit

        local = Path(unquote(urlsplit(uri).path) if scheme == "file" else uri)
    if local is not None and not local.exists():
        raise click.ClickException(
            _one_line(
                f"no MLflow tracking store at {uri} ({local} does not exist); run from the "
                "directory that holds it or pass --tracking-uri (e.g. sqlite:///mlflow.db or "
                "http://127.0.0.1:5000)"
            )
        )
    try:
        check_reachable(uri)
    except TrackingServerUnreachable as exc:
        raise click.ClickException(_one_line(exc.message)) from None
    return uri


def _tracking_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--tracking-uri",
        metavar="URI",
        envvar="MLFLOW_TRACKING_URI",
        show_envvar=True,
        help="MLflow tracking URI, e.g. sqlite:///mlflow.db or http://127.0.0.1:5000 "
        "(default: MLflow's own default).",
    )(f)
    return f


@main.command(epilog=_REPORT_EPILOG)
@click.option(
    "--experiment",
    "-e",
    metavar="NAME",
    help="Experiment name (or id) whose runs are compared, e.g. --experiment fraud.",
)
@click.option(
    "--run-id",
    "run_ids",
    multiple=True,
    metavar="ID",
    help="A run to compare (repeatable): its id, or a unique prefix of at least 8 characters "
    "as the report's Run id column shows it, e.g. --run-id b1ea36fd. Without --experiment only "
    "these runs are used (a prefix is then looked up in every experiment). A --run-id that "
    "matches no run, or whose run has no usable counts, is an error (exit status 2).",
)
@click.option(
    "--filter",
    "filter_string",
    metavar="EXPR",
    help="MLflow search filter on the experiment's runs, e.g. --filter \"params.model = 'gbm'\".",
)
@click.option(
    "--name",
    default=None,
    metavar="NAME",
    help="Counts name to compare (imbalance/<name>/), e.g. --name validation. Default: test, "
    "the name every entry point logs under; a run with no 'test' set but exactly one other "
    "(older runs: 'validation', 'autolog') is read from that one, with a note. Given "
    "explicitly, every run must hold that set.",
)
@click.option(
    "--prevalence",
    "prevalences",
    multiple=True,
    type=float,
    metavar="ETA",
    help="Deployment prevalence of interest (repeatable), e.g. --prevalence 1e-4 "
    "--prevalence 1e-3.",
)
@click.option(
    "--prevalence-range",
    metavar="LOW:HIGH",
    help="Prevalence range searched for ranking flips and drawn on η axes, e.g. 1e-5:1e-2 "
    "(default: spans the test and chosen prevalences).",
)
@click.option(
    "--cost-fp",
    type=float,
    default=None,
    help="Cost of one false positive, e.g. --cost-fp 1 (build_report's costs={'fp': 1, ...}). "
    "Costs make the lowest expected cost the decision criterion (default: the costs logged "
    "with the runs, if any; a cost left out when the other is given is 1).",
)
@click.option(
    "--cost-fn",
    type=float,
    default=None,
    help="Cost of one false negative, e.g. --cost-fn 100 (build_report's costs={'fn': 100, "
    "...}; default: logged with the runs; 1).",
)
@click.option(
    "--primary-metric",
    type=click.Choice(["ap", "pr_auc", "max_f1", "roc_auc"]),
    default="ap",
    show_default=True,
    help="Decision criterion when no costs are given or logged, e.g. --primary-metric pr_auc.",
)
@click.option(
    "--confidence",
    type=float,
    default=0.95,
    show_default=True,
    help="Confidence level of every interval and band, e.g. --confidence 0.9.",
)
@click.option(
    "--bootstrap",
    "n_bootstrap",
    type=int,
    default=1000,
    show_default=True,
    help="Count-bootstrap replicates for intervals and bands: 0 = analytic intervals only, "
    "otherwise at least 50 (fewer cannot estimate a 95% band), "
    "e.g. --bootstrap 200.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Bootstrap seed, e.g. --seed 7."
)
@click.option("--title", metavar="TEXT", help='Report title, e.g. --title "Fraud models, Q3".')
@click.option(
    "--batch",
    metavar="LABEL",
    help="The production batch whose estimated prevalence the verdict is given at (default: "
    "the latest logged with mlflow_imbalance.log_production_scores), e.g. --batch 2026-w47.",
)
@click.option(
    "--decide-over",
    metavar="LOW:HIGH",
    help="Also give one verdict decided over this range of the deployment prevalence (the "
    "decision of least worst-case regret with costs), e.g. --decide-over 1e-3:1e-2.",
)
@click.option(
    "--no-production",
    is_flag=True,
    help="Ignore the runs' production batches (no estimated prevalence).",
)
@_tracking_options
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="Where to write the HTML report, e.g. -o reports/fraud.html.",
)
@click.option(
    "--pdf",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also print the report to this PDF file (through headless Chromium, once its charts "
    "are drawn; every section expanded, no browser header or footer), e.g. --pdf report.pdf.",
)
@click.option(
    "--paper",
    type=click.Choice(["letter", "a4"], case_sensitive=False),
    default="letter",
    show_default=True,
    help="Paper size of the --pdf file.",
)
@click.option(
    "--log-to-run",
    metavar="ID",
    help="Also log the report as artifact imbalance/report.html of this run (whatever the -o "
    "file is called), e.g. --log-to-run 1f2e3d....",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bars and no summary line.")
@click.option(
    "--model",
    metavar="NAME@ALIAS",
    help="A registered decision (mlflow_imbalance.register_decision): shown first, with its "
    "compared runs (the default runs), its η and costs (the defaults) and its check history.",
)
def report(
    experiment: str | None,
    run_ids: tuple[str, ...],
    filter_string: str | None,
    name: str | None,
    prevalences: tuple[float, ...],
    prevalence_range: str | None,
    cost_fp: float | None,
    cost_fn: float | None,
    primary_metric: str,
    confidence: float,
    n_bootstrap: int,
    seed: int,
    title: str | None,
    batch: str | None,
    decide_over: str | None,
    no_production: bool,
    tracking_uri: str | None,
    output: Path,
    pdf: Path | None,
    paper: str,
    log_to_run: str | None,
    quiet: bool,
    model: str | None = None,
) -> None:
    """Write the HTML report comparing runs across prevalences.

    The report opens with the verdict at each deployment prevalence (which run to ship, at
    which threshold, how sure), then a prevalence control that recomputes everything in the
    browser, one table per prevalence, ranking flips and interactive curves. With no
    --prevalence / --cost-* it uses the prevalences and costs logged with the runs. It is one
    self-contained file (inline scripts only, nothing loaded from the network). The verdict
    is printed at the end. With --pdf the report is also printed to a PDF for a review
    (needs Chromium or Chrome; without one the exit status is 2 and nothing is written).

    Every --run-id must name one run with usable counts, else nothing is written and the
    exit status is 2. Runs of --experiment that cannot be used are left out with a warning
    line each (and listed in the report); the exit status stays 0.
    """
    if experiment is None and not run_ids and not model:
        raise click.UsageError("give --experiment NAME and/or at least one --run-id ID")
    from mlflow_imbalance.report import load as _loading
    from mlflow_imbalance.report.build import build_report

    check_output_path(output)
    if pdf is not None:
        check_output_path(pdf, "--pdf")
        _check_browser()
    with cli_errors():
        from mlflow_imbalance.report.options import DEFAULT_NAME, _options

        # every option checked before the store is touched (messages name the CLI options)
        _options(
            list(prevalences) or None, prevalence_range, name or DEFAULT_NAME, cost_fp,
            cost_fn, confidence, n_bootstrap, seed, title, primary_metric,
        )  # fmt: skip
        from mlflow_imbalance.report.options import check_decide_over

        check_decide_over(decide_over)
        uri = check_store(tracking_uri)
        decision = None
        if model:
            from mlflow_imbalance.deploy import read_decision

            decision = read_decision(model, tracking_uri=uri)
            if experiment is None and not run_ids:
                run_ids = tuple(decision["compared_ids"])
            prevalences = prevalences or (decision["eta"],)
            if cost_fp is None and cost_fn is None and decision["cost_fp"] is not None:
                cost_fp, cost_fn = decision["cost_fp"], decision["cost_fn"]
    costs = None
    if cost_fp is not None or cost_fn is not None:  # the one left out is 1, as documented
        costs = {
            "fp": 1.0 if cost_fp is None else cost_fp,
            "fn": 1.0 if cost_fn is None else cost_fn,
        }
    progress = _report_progress(quiet)
    with cli_errors(), _loading.tracking_uri_set(uri):
        try:
            try:
                asked = _loading.resolve_run_ids(run_ids, experiment)
            except _loading.RunIdError as exc:
                if _debug_enabled():
                    raise
                raise RunIdProblem(_one_line(str(exc))) from None
            ids, exp_name = _loading.search_run_ids(
                experiment, run_ids=asked, filter_string=filter_string
            )
            runs, skipped, exp_loaded = _loading.load_runs(ids, name=name, progress=progress)
            _refuse_unusable(asked, skipped)
            for s in skipped:  # found by --experiment / --filter: left out, loudly
                click.echo(
                    f"Warning: run {terminal_safe(s.name)}"
                    + (f" ({terminal_safe(s.run_id)})" if s.run_id and s.run_id != s.name else "")
                    + f" left out: {_one_line(s.reason)}",
                    err=True,
                )
            result = build_report(
                runs,
                prevalences=list(prevalences) or None,
                prevalence_range=prevalence_range,
                name=name,
                costs=costs,
                primary_metric=primary_metric,
                confidence=confidence,
                n_bootstrap=n_bootstrap,
                seed=seed,
                title=title,
                production=False if no_production else None,
                batch=batch,
                decide_over=decide_over,
                experiment=exp_name or exp_loaded,
                progress=progress,
                skipped=skipped,
                decision=decision,
            )
        finally:
            progress.close()
        result.save(output)
        if pdf is not None:
            from mlflow_imbalance.report.pdf import print_pdf

            print_pdf(output, pdf, paper=paper.lower())
    if not quiet:
        for note in result.notes:
            click.echo(f"Note: {_one_line(note)}", err=True)
        n_runs = len(result.context.get("runs", ()))
        n_skipped = len(result.skipped)
        extra = f", {n_skipped} left out (see above and the report)" if n_skipped else ""
        click.echo(f"Wrote {terminal_safe(output)} ({n_runs} runs{extra}).", err=True)
        if pdf is not None:
            click.echo(f"Wrote {terminal_safe(pdf)} ({paper.lower()} paper).", err=True)
        print_verdict(result)
    if log_to_run:
        log_report_to_run(log_to_run, output, quiet=quiet, tracking_uri=uri)


def _refuse_unusable(asked: list[str], skipped: list[Any]) -> None:
    """Exit with status 2 when a run asked for by ``--run-id`` cannot be used.

    A report of the other runs would carry a verdict that never considered the run the user
    asked about, so none is written.

    Raises:
        RunIdProblem: naming every such run and its reason.
    """
    wanted = set(asked)
    bad = [s for s in skipped if s.run_id in wanted]
    if not bad:
        return
    parts = [
        f"--run-id {s.run_id}"
        + (f" ({terminal_safe(s.name)})" if s.name != s.run_id else "")
        + f" cannot be used: {s.reason}"
        for s in bad
    ]
    raise RunIdProblem(_one_line("; ".join(parts) + "; no report written", 1200))


def _report_progress(quiet: bool) -> Any:
    """The report's progress (tqdm bars on a terminal, plain lines otherwise; none if quiet)."""
    from mlflow_imbalance.report.progress import progress_callback

    return progress_callback(False if quiet else None)


def print_verdict(result: Any) -> None:
    """Print the report's verdict (one paragraph per chosen prevalence) on stdout."""
    ctx = result.context
    logged = [
        what
        for what, yes in (
            ("prevalences", ctx.get("prevalences_source") == "runs"),
            ("costs", str(ctx.get("costs_source", "")).startswith("runs")),
        )
        if yes
    ]
    head = f"Verdict ({' and '.join(logged)} logged with the runs)" if logged else "Verdict"
    click.echo(f"\n{head}:")
    for row in (ctx.get("deployment") or {}).get("rows", []):
        if row["chosen"]:
            click.echo(
                terminal_safe(
                    f"  (η = {row['eta']} {row['ci']} is estimated from production batch "
                    f"{row['batch']}, {row['run']}'s scores; prior-shift check {row['check']})"
                )
            )
    for v in result.verdict:
        click.echo(f"  {terminal_safe(v.text)}")


def check_output_path(output: Path, option: str = "--output") -> None:
    """Refuse an ``--output`` (or ``--pdf``) that cannot be written, before any work is done."""
    if output.is_dir():
        raise click.BadParameter(f"{output} is a directory; give a file name", param_hint=option)
    parent = output.parent if str(output.parent) else Path(".")
    if not parent.is_dir():
        raise click.BadParameter(
            f"cannot write {output}: the directory {parent} does not exist", param_hint=option
        )
    import os

    if not os.access(parent, os.W_OK):
        raise click.BadParameter(
            f"cannot write {output}: the directory {parent} is not writable", param_hint=option
        )


class NoBrowser(click.ClickException):
    """``--pdf`` without a Chromium-based browser: one line, exit status 2."""

    exit_code = 2


def _check_browser() -> None:
    """Exit with status 2 (before any work) when ``--pdf`` has no browser to print with."""
    from mlflow_imbalance.report.pdf import ChromiumNotFound, require_chromium

    try:
        require_chromium()
    except ChromiumNotFound as exc:
        raise NoBrowser(f"--pdf: {exc}") from None


REPORT_ARTIFACT = "imbalance/report.html"


def log_report_to_run(
    run_id: str, path: Path, *, quiet: bool = False, tracking_uri: str | None = None
) -> str:
    """Log the written report as artifact ``imbalance/report.html`` of a run (whatever -o was).

    Prints where it went (unless ``quiet``) and returns the artifact path.

    Raises:
        click.ClickException: the run is unknown or the store fails (one line).
    """
    import shutil
    import tempfile

    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    folder, fname = REPORT_ARTIFACT.rsplit("/", 1)
    try:
        with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
            staged = Path(tmp) / fname
            shutil.copyfile(path, staged)
            MlflowClient(tracking_uri).log_artifact(run_id, str(staged), artifact_path=folder)
    except MlflowException as exc:
        raise click.ClickException(
            _one_line(f"--log-to-run {run_id}: could not log the report: {exc.message}")
        ) from None
    if not quiet:
        click.echo(
            f"Logged the report to run {terminal_safe(run_id)} as {REPORT_ARTIFACT}.", err=True
        )
    return REPORT_ARTIFACT


@main.command(name="check")
@click.option(
    "--model",
    "-m",
    metavar="NAME@ALIAS",
    required=True,
    help="The registered decision: NAME@ALIAS, NAME/VERSION or models:/... .",
)
@click.option(
    "--tolerance",
    type=float,
    metavar="TAU",
    help="Regret per case the decision may lose (default: the registered τ).",
)
@click.option("--no-record", is_flag=True, help="Do not write the result to the registry.")
@_tracking_options
def check(model: str, tolerance: float | None, no_record: bool, tracking_uri: str | None) -> None:
    """Check a registered decision against the production batches logged since it was made.

    Prints the result and exits 0 (holds), 3 (retune: same model, new threshold), 4
    (reconsider: another run or no model would be better) or 5 (unknown: η not pinned down,
    the prior-shift check failed, or no batch yet); 1-2 are errors. The result is also written
    to the model version's tags (mlflow_imbalance.check.*) unless --no-record.
    """
    from mlflow_imbalance.deploy import check_decision

    with cli_errors():
        uri = check_store(tracking_uri)
        result = check_decision(model, tolerance=tolerance, tracking_uri=uri,
                                record=not no_record)  # fmt: skip
    for line in result.text.splitlines():
        click.echo(terminal_safe(line))
    sys.exit(result.exit_code)


@main.command(name="list")
@click.option("--experiment", "-e", metavar="NAME", required=True, help="Experiment name or id.")
@click.option("--filter", "filter_string", metavar="EXPR", help="MLflow search filter.")
@_tracking_options
def list_runs(experiment: str, filter_string: str | None, tracking_uri: str | None) -> None:
    """List an experiment's runs and the counts names each holds.

    Example: mlflow-imbalance list --experiment fraud --tracking-uri sqlite:///mlflow.db
    """
    with cli_errors():
        uri = check_store(tracking_uri)
        list_counts_table(experiment, filter_string, uri)


def list_counts_table(experiment: str, filter_string: str | None, tracking_uri: str) -> None:
    """Print a header line, then one tab-separated line per run: id, name, counts names."""
    from mlflow.tracking import MlflowClient

    from mlflow_imbalance import tracking
    from mlflow_imbalance.report import load as _loading

    with _loading.tracking_uri_set(tracking_uri):
        ids, _ = _loading.search_run_ids(experiment, filter_string=filter_string)
        client = MlflowClient()
        click.echo("run_id\trun_name\tcounts")
        for run_id in ids:
            run = client.get_run(run_id)
            try:
                names = list(tracking.list_counts(run_id))
            except Exception as exc:  # listing must go on for the other runs
                names = [f"<error: {_one_line(str(exc), 200)}>"]
            label = terminal_safe(run.info.run_name or "")
            held = terminal_safe(", ".join(map(str, names)) or "-")
            click.echo(f"{terminal_safe(run_id)}\t{label}\t{held}")


if __name__ == "__main__":  # pragma: no cover
    main()
