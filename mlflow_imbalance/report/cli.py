"""The ``mlflow-imbalance`` command line (click).

``mlflow-imbalance report`` loads the ROC counts of an experiment's runs and writes the
self-contained HTML report; ``mlflow-imbalance list`` shows which runs hold counts. Progress bars
go to stderr, only when stderr is a terminal and ``--quiet`` is not given. User errors (unknown
experiment, no runs with counts, bad options) print one clear line and exit with status 1 or 2.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
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
def main(verbose: int) -> None:
    """Evaluate MLflow runs of binary classifiers at the class prevalence they will really meet.

    Runs hold ROC counts logged by mlflow_imbalance.log_scores (artifacts
    imbalance/<name>/roc_counts.npz); these commands read them back.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


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
    help="A run to include (repeatable); without --experiment only these runs are used.",
)
@click.option(
    "--filter",
    "filter_string",
    metavar="EXPR",
    help="MLflow search filter on the experiment's runs, e.g. --filter \"params.model = 'gbm'\".",
)
@click.option(
    "--name",
    default="test",
    show_default=True,
    help="Counts name the runs were logged under (imbalance/<name>/), e.g. --name validation.",
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
    default=1.0,
    show_default=True,
    help="Cost of one false positive, e.g. --cost-fp 1.",
)
@click.option(
    "--cost-fn",
    type=float,
    default=1.0,
    show_default=True,
    help="Cost of one false negative, e.g. --cost-fn 100.",
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
    "--log-to-run",
    metavar="ID",
    help="Also log the report as artifact imbalance/report.html of this run, e.g. "
    "--log-to-run 1f2e3d....",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bars and no summary line.")
def report(
    experiment: str | None,
    run_ids: tuple[str, ...],
    filter_string: str | None,
    name: str,
    prevalences: tuple[float, ...],
    prevalence_range: str | None,
    cost_fp: float,
    cost_fn: float,
    confidence: float,
    n_bootstrap: int,
    seed: int,
    title: str | None,
    tracking_uri: str | None,
    output: Path,
    log_to_run: str | None,
    quiet: bool,
) -> None:
    """Write the HTML report comparing runs across prevalences.

    The report holds a summary table with intervals and ranks at each chosen prevalence,
    ranking-flip warnings, and ROC/PR/P³/B-ROC/cost figures with confidence bands. It is one
    self-contained file (no scripts, nothing loaded from the network).
    """
    if experiment is None and not run_ids:
        raise click.UsageError("give --experiment NAME and/or at least one --run-id ID")
    from mlflow_imbalance.report import load as _loading
    from mlflow_imbalance.report.build import build_report

    progress = _Progress(enabled=not quiet and sys.stderr.isatty())
    try:
        with _loading.tracking_uri_set(tracking_uri):
            ids, exp_name = _loading.search_run_ids(
                experiment, run_ids=run_ids, filter_string=filter_string
            )
            try:
                result = build_report(
                    ids,
                    prevalences=list(prevalences) or None,
                    prevalence_range=prevalence_range,
                    name=name,
                    cost_fp=cost_fp,
                    cost_fn=cost_fn,
                    confidence=confidence,
                    n_bootstrap=n_bootstrap,
                    seed=seed,
                    title=title,
                    experiment=exp_name,
                    progress=progress,
                )
            finally:
                progress.close()
            result.save(output)
            if log_to_run:
                _log_report(log_to_run, output)
    except _loading.LoadError as exc:
        raise click.ClickException(str(exc)) from None
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if not quiet:
        n_runs = len(result.context.get("runs", ()))
        skipped = len(result.skipped)
        extra = f", {skipped} skipped (see the report)" if skipped else ""
        click.echo(f"Wrote {output} ({n_runs} runs{extra}).", err=True)
        for s in result.skipped:
            click.echo(f"  skipped {s.name}: {s.reason}", err=True)


def _log_report(run_id: str, path: Path) -> None:
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    try:
        MlflowClient().log_artifact(run_id, str(path), artifact_path="imbalance")
    except MlflowException as exc:
        raise click.ClickException(
            f"could not log the report to run {run_id}: {exc.message}"
        ) from None
    if path.name != "report.html":
        logger.info("logged %s to run %s under imbalance/%s", path, run_id, path.name)


@main.command(name="list")
@click.option("--experiment", "-e", metavar="NAME", required=True, help="Experiment name or id.")
@click.option("--filter", "filter_string", metavar="EXPR", help="MLflow search filter.")
@_tracking_options
def list_runs(experiment: str, filter_string: str | None, tracking_uri: str | None) -> None:
    """List an experiment's runs and the counts names each holds.

    Example: mlflow-imbalance list --experiment fraud --tracking-uri sqlite:///mlflow.db
    """
    from mlflow.tracking import MlflowClient

    from mlflow_imbalance import tracking
    from mlflow_imbalance.report import load as _loading

    try:
        with _loading.tracking_uri_set(tracking_uri):
            ids, _ = _loading.search_run_ids(experiment, filter_string=filter_string)
            client = MlflowClient()
            for run_id in ids:
                run = client.get_run(run_id)
                try:
                    names = list(tracking.list_counts(run_id))
                except Exception as exc:  # listing must go on for the other runs
                    names = [f"<error: {exc}>"]
                label = run.info.run_name or ""
                click.echo(f"{run_id}\t{label}\t{', '.join(map(str, names)) or '-'}")
    except _loading.LoadError as exc:
        raise click.ClickException(str(exc)) from None


if __name__ == "__main__":  # pragma: no cover
    main()
