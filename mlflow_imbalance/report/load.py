"""Thin loader layer between MLflow runs and the report (the report itself never imports mlflow).

Turns run ids, :class:`mlflow.entities.Run` objects or an experiment search into
:class:`~mlflow_imbalance.report.model.RunData` records (counts, summary, params, tags, digest and,
when the run kept them, raw scores for pairing) using the loaders of
:mod:`mlflow_imbalance.tracking`. A run that lacks counts under the requested name, or whose
counts are invalid, becomes a :class:`~mlflow_imbalance.report.model.SkippedRun` with the reason.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from mlflow_imbalance.report.model import RunData, SkippedRun

logger = logging.getLogger(__name__)

__all__ = ["LoadError", "load_runs", "search_run_ids", "tracking_uri_set"]

ProgressFn = Callable[[str, int, int], None]


class LoadError(ValueError):
    """A user error while finding runs (unknown experiment, bad filter, no runs)."""


@contextlib.contextmanager
def tracking_uri_set(uri: str | None) -> Iterator[None]:
    """Use ``uri`` as MLflow's tracking URI inside the block, restoring the previous one."""
    if uri is None:
        yield
        return
    import mlflow
    from mlflow.tracking import _tracking_service

    previous = _tracking_service.utils._tracking_uri
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(previous)


def search_run_ids(
    experiment: str | None,
    *,
    run_ids: Sequence[str] = (),
    filter_string: str | None = None,
    max_results: int = 1000,
) -> tuple[list[str], str | None]:
    """Run ids of an experiment (optionally filtered) plus the given ones, in a stable order.

    Args:
        experiment: experiment name (or numeric id); None when only ``run_ids`` are given.
        run_ids: explicit run ids; kept in the order given, first.
        filter_string: an MLflow search filter such as ``"metrics.x > 0"``.
        max_results: cap on the number of runs searched.

    Returns:
        The ids and the experiment's name (None when no experiment was given).

    Raises:
        LoadError: unknown experiment, invalid filter, or nothing found.
    """
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    ids: list[str] = list(dict.fromkeys(run_ids))
    exp_name: str | None = None
    if experiment is not None:
        exp = client.get_experiment_by_name(experiment)
        if exp is None and experiment.isdigit():
            with contextlib.suppress(MlflowException):
                exp = client.get_experiment(experiment)
        if exp is None:
            known = sorted(e.name for e in client.search_experiments(max_results=50))
            raise LoadError(
                f"experiment {experiment!r} not found in the tracking store; known experiments: "
                f"{known!r}"
            )
        exp_name = exp.name
        if not run_ids or filter_string:
            try:
                found = client.search_runs(
                    [exp.experiment_id],
                    filter_string=filter_string or "",
                    max_results=max_results,
                    order_by=["attributes.start_time ASC"],
                )
            except MlflowException as exc:
                raise LoadError(f"invalid --filter {filter_string!r}: {exc.message}") from None
            if run_ids:  # explicit ids restricted by the filter
                keep = {r.info.run_id for r in found}
                ids = [i for i in ids if i in keep]
            else:
                ids = [r.info.run_id for r in found]
        if run_ids and not filter_string:
            _check_runs_in_experiment(client, ids, exp)
    if not ids:
        where = f"experiment {experiment!r}" if experiment is not None else "the arguments"
        extra = f" matching filter {filter_string!r}" if filter_string else ""
        raise LoadError(f"no runs found in {where}{extra}")
    return ids, exp_name


def _check_runs_in_experiment(client: Any, run_ids: Sequence[str], exp: Any) -> None:
    """Refuse explicit run ids that belong to another experiment than the one named."""
    from mlflow.exceptions import MlflowException

    for run_id in run_ids:
        try:
            run = client.get_run(run_id)
        except MlflowException as exc:
            raise LoadError(f"--run-id {run_id}: {exc.message}") from None
        if run.info.experiment_id != exp.experiment_id:
            try:
                other = client.get_experiment(run.info.experiment_id).name
            except MlflowException:
                other = run.info.experiment_id
            raise LoadError(
                f"--run-id {run_id} belongs to experiment {other!r}, not to --experiment "
                f"{exp.name!r}; drop --experiment or give a run of {exp.name!r}"
            )


def _run_id_of(item: Any) -> str:
    info = getattr(item, "info", None)
    if info is not None and hasattr(info, "run_id"):
        return str(info.run_id)
    return str(item)


def load_runs(
    runs: Iterable[Any],
    *,
    name: str = "test",
    progress: ProgressFn | None = None,
) -> tuple[list[RunData], list[SkippedRun], str | None]:
    """Load counts (and what else the report shows) of MLflow runs.

    Args:
        runs: run ids or :class:`mlflow.entities.Run` objects.
        name: the counts name the runs were logged under (``imbalance/<name>/``).
        progress: optional callback ``(stage, done, total)``.

    Returns:
        Loaded runs, skipped runs (with the reason) and the experiment name shared by the runs
        (None when they span several or none could be read).
    """
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    from mlflow_imbalance import tracking

    client = MlflowClient()
    items = list(runs)
    loaded: list[RunData] = []
    skipped: list[SkippedRun] = []
    experiments: set[str] = set()
    exp_names: dict[str, str] = {}
    for i, item in enumerate(items):
        run_id = _run_id_of(item)
        label = run_id
        try:
            run = item if hasattr(item, "data") and hasattr(item, "info") else None
            if run is None:
                run = client.get_run(run_id)
            tags = dict(run.data.tags)
            label = run.info.run_name or tags.get("mlflow.runName") or run_id
            exp_id = run.info.experiment_id
            if exp_id not in exp_names:
                try:
                    exp_names[exp_id] = client.get_experiment(exp_id).name
                except MlflowException:
                    exp_names[exp_id] = exp_id
            experiments.add(exp_names[exp_id])
            counts = tracking.load_counts(run_id, name=name)
            summary: dict[str, Any] = {}
            try:
                summary = dict(tracking.load_summary(run_id, name=name) or {})
            except Exception as exc:  # a summary problem degrades, it does not skip
                logger.warning("run %s: summary.json of %r unreadable: %s", run_id, name, exc)
            scores = None
            loader = getattr(tracking, "load_scores", None)
            if loader is not None:
                try:
                    scores = loader(run_id, name=name)
                except Exception as exc:  # scores are optional (pairing only)
                    logger.debug("run %s: no raw scores for %r: %s", run_id, name, exc)
                    scores = None
            user_tags = {k: v for k, v in tags.items() if not k.startswith("mlflow.")}
            loaded.append(
                RunData(
                    name=str(label),
                    counts=counts,
                    run_id=run_id,
                    summary=summary,
                    params=dict(run.data.params),
                    tags=user_tags,
                    digest=_digest_of(summary),
                    scores=_as_pair(scores),
                    source=f"MLflow run in {exp_names[exp_id]!r}",
                    experiment_id=str(exp_id),
                )
            )
        except (MlflowException, ValueError, OSError, KeyError, FileNotFoundError) as exc:
            reason = getattr(exc, "message", None) or str(exc)
            skipped.append(SkippedRun(name=str(label), run_id=run_id, reason=_short(reason)))
            logger.info("skipping run %s: %s", run_id, reason)
        if progress is not None:
            progress("load", i + 1, len(items))
    experiment = experiments.pop() if len(experiments) == 1 else None
    return loaded, skipped, experiment


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _digest_of(summary: dict[str, Any]) -> str | None:
    for key in ("digest", "y_true_digest", "labels_digest", "dataset_digest"):
        value = summary.get(key)
        if value:
            return str(value)
    return None


def _as_pair(scores: Any) -> Any:
    """Normalise what ``tracking.load_scores`` returns to ``(y_true, y_score)`` or None."""
    if scores is None:
        return None
    if isinstance(scores, tuple) and len(scores) >= 2:
        return (scores[0], scores[1])
    for yk, sk in (("y_true", "y_score"), ("labels", "scores")):
        try:
            return (scores[yk], scores[sk])
        except (KeyError, TypeError, IndexError):
            continue
        except ValueError:
            continue
    y = getattr(scores, "y_true", None)
    s = getattr(scores, "y_score", None)
    if y is not None and s is not None:
        return (y, s)
    return None
