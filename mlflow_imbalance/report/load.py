"""Thin loader layer between MLflow runs and the report (the report itself never imports mlflow).

Turns run ids, :class:`mlflow.entities.Run` objects or an experiment search into
:class:`~mlflow_imbalance.report.model.RunData` records (counts, summary, params, tags, digest and,
when the run kept them, raw scores for pairing) using the loaders of
:mod:`mlflow_imbalance.tracking`. A run whose counts are invalid, or that lacks counts under the
requested name, becomes a :class:`~mlflow_imbalance.report.model.SkippedRun` with the reason.

Counts names: with no name given (``name=None``) a run is read under the default name
``"test"``; a run with no set of that name but exactly one committed set under another name
(runs logged before every entry point used ``"test"``: ``"validation"`` by the training
callbacks, ``"autolog"`` by ``autolog()``) is read from that set, and its
:attr:`~mlflow_imbalance.report.model.RunData.counts_name` says so (the report prints a note). A
run holding several other sets is skipped with a reason that lists them. An explicit name is
taken literally: runs without that set are skipped, listing what they hold.

:func:`resolve_run_ids` turns run-id prefixes (as the report's "Run id" column shows them, 8
characters) into full ids for the command line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from mlflow_imbalance.report.model import RunData, SkippedRun
from mlflow_imbalance.report.options import DEFAULT_NAME

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_NAME",
    "DEFAULT_WORKERS",
    "MIN_PREFIX",
    "WORKERS_ENV",
    "LoadError",
    "RunIdError",
    "load_runs",
    "load_workers",
    "resolve_run_ids",
    "search_run_ids",
    "tracking_uri_set",
]

ProgressFn = Callable[[str, int, int], None]

#: Threads loading runs from the tracking store at once (each mostly waits on the store).
DEFAULT_WORKERS = 8
#: Environment variable: the number of threads loading runs (``1``: one after another).
WORKERS_ENV = "MLFLOW_IMBALANCE_LOAD_WORKERS"
#: Shortest run-id prefix resolved (the report's "Run id" column shows 8 characters).
MIN_PREFIX = 8
#: Candidates listed when a run-id prefix is ambiguous.
_MAX_CANDIDATES = 10
_PREFIX_RE = re.compile(r"[0-9A-Za-z-]+")


class LoadError(ValueError):
    """A user error while finding runs (unknown experiment, bad filter, no runs)."""


class RunIdError(LoadError):
    """A run id (or prefix) the user gave that cannot be resolved to exactly one run."""


class _Unusable(ValueError):
    """A run that cannot be used under the requested counts name (the message is the reason)."""


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
        exp = _experiment(client, experiment)
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
                for dropped in (i for i in ids if i not in keep):
                    logger.warning(
                        "--run-id %s does not match --filter %r; it is left out",
                        dropped,
                        filter_string,
                    )
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


def resolve_run_ids(refs: Sequence[str], experiment: str | None = None) -> list[str]:
    """Full run ids for ids or unique prefixes of at least :data:`MIN_PREFIX` characters.

    A full id is looked up directly. A shorter reference is matched as a prefix among the runs
    of ``experiment`` when one is given, else among the active runs of every active experiment
    (an MLflow search on ``attributes.run_id LIKE '<prefix>%'``).

    Args:
        refs: run ids or prefixes, as typed after ``--run-id``.
        experiment: experiment name (or numeric id) the runs must belong to, or None.

    Returns:
        The full ids, in the order given, without repeats.

    Raises:
        RunIdError: a reference shorter than :data:`MIN_PREFIX` characters or not made of run-id
            characters, no run with that id or prefix (in ``experiment`` when given), an
            ambiguous prefix (the message lists the candidates), or a full id of a run in
            another experiment than ``experiment``.
        LoadError: ``experiment`` does not exist.
    """
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    exp = _experiment(client, experiment) if experiment is not None else None
    out: list[str] = []
    for ref in refs:
        ref = str(ref).strip()
        if len(ref) < MIN_PREFIX:
            raise RunIdError(
                f"--run-id {ref!r} is too short: give the full run id or a prefix of at least "
                f"{MIN_PREFIX} characters (as the report's Run id column shows it)"
            )
        if not _PREFIX_RE.fullmatch(ref):
            raise RunIdError(f"--run-id {ref!r} is not a run id (letters, digits and '-' only)")
        run = None
        with contextlib.suppress(MlflowException):
            run = client.get_run(ref)
        if run is None:
            run = _run_by_prefix(client, ref, exp)
        elif exp is not None and run.info.experiment_id != exp.experiment_id:
            _refuse_other_experiment(client, ref, run, exp)
        out.append(run.info.run_id)
    return list(dict.fromkeys(out))


def _experiment(client: Any, experiment: str) -> Any:
    """The experiment named ``experiment`` (or with that numeric id)."""
    from mlflow.exceptions import MlflowException

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
    return exp


def _run_by_prefix(client: Any, prefix: str, exp: Any) -> Any:
    """The one run whose id starts with ``prefix`` (in ``exp`` when given)."""
    if exp is not None:
        exp_ids = [exp.experiment_id]
    else:
        exp_ids, token = [], None
        while True:
            page = client.search_experiments(max_results=1000, page_token=token)
            exp_ids += [e.experiment_id for e in page]
            token = page.token
            if not token:
                break
    matches: dict[str, Any] = {}
    for i in range(0, len(exp_ids), 100):
        found = client.search_runs(
            exp_ids[i : i + 100],
            filter_string=f"attributes.run_id LIKE '{prefix}%'",
            max_results=_MAX_CANDIDATES + 1,
        )
        for run in found:
            # LIKE is case-insensitive on some stores and '-' is literal: check exactly
            if run.info.run_id.lower().startswith(prefix.lower()):
                matches[run.info.run_id] = run
    where = f"in experiment {exp.name!r}" if exp is not None else "in any experiment"
    if not matches:
        hint = "" if len(prefix) >= 32 else f" whose id starts with {prefix!r}"
        raise RunIdError(f"--run-id {prefix!r}: no run{hint} {where} of the tracking store")
    if len(matches) > 1:
        listed = [
            f"{rid} ({run.info.run_name or 'unnamed'})"
            for rid, run in sorted(matches.items())[:_MAX_CANDIDATES]
        ]
        more = " and more" if len(matches) > _MAX_CANDIDATES else ""
        raise RunIdError(
            f"--run-id {prefix!r} is ambiguous {where}: it starts the ids of "
            f"{', '.join(listed)}{more}; give more characters"
        )
    return next(iter(matches.values()))


def _refuse_other_experiment(client: Any, ref: str, run: Any, exp: Any) -> None:
    from mlflow.exceptions import MlflowException

    try:
        other = client.get_experiment(run.info.experiment_id).name
    except MlflowException:
        other = run.info.experiment_id
    raise RunIdError(
        f"--run-id {ref} belongs to experiment {other!r}, not to --experiment {exp.name!r}; "
        f"drop --experiment or give a run of {exp.name!r}"
    )


def _check_runs_in_experiment(client: Any, run_ids: Sequence[str], exp: Any) -> None:
    """Refuse explicit run ids that belong to another experiment than the one named."""
    from mlflow.exceptions import MlflowException

    for run_id in run_ids:
        try:
            run = client.get_run(run_id)
        except MlflowException as exc:
            raise LoadError(f"--run-id {run_id}: {exc.message}") from None
        if run.info.experiment_id != exp.experiment_id:
            _refuse_other_experiment(client, run_id, run, exp)


def _run_id_of(item: Any) -> str:
    info = getattr(item, "info", None)
    if info is not None and hasattr(info, "run_id"):
        return str(info.run_id)
    return str(item)


def load_workers(workers: int | None = None) -> int:
    """Threads that load runs: ``workers``, else :data:`WORKERS_ENV`, else :data:`DEFAULT_WORKERS`.

    Raises:
        ValueError: ``workers`` or :data:`WORKERS_ENV` is not a whole number >= 1 (the message
            names which).
    """
    source = "workers"
    value: Any = workers
    if value is None:
        text = os.environ.get(WORKERS_ENV, "").strip()
        if not text:
            return DEFAULT_WORKERS
        source, value = WORKERS_ENV, text
    try:
        number = int(value)
        ok = number >= 1 and (not isinstance(value, float) or number == value)
    except (TypeError, ValueError):
        ok = False
    if not ok or isinstance(value, bool):
        raise ValueError(
            f"{source} must be the number of threads loading runs (a whole number >= 1; 1 loads "
            f"them one after another), got {str(value)[:40]!r}"
        )
    return number


def load_runs(
    runs: Iterable[Any],
    *,
    name: str | None = None,
    progress: ProgressFn | None = None,
    workers: int | None = None,
) -> tuple[list[RunData], list[SkippedRun], str | None]:
    """Load counts (and what else the report shows) of MLflow runs.

    Runs are read by a pool of ``workers`` threads (each waits on the tracking store, not the
    CPU); the result is the same as reading them one after another: same order, same skipped
    runs and reasons. Against an ``http(s)://`` tracking server the dead-server budget of
    :mod:`mlflow_imbalance.tracking._store` holds: the server is probed once first, every
    request is bounded (``MLFLOW_IMBALANCE_STORE_TIMEOUT``), and a server found gone while
    loading raises one :class:`~mlflow_imbalance.tracking._store.TrackingServerUnreachable`
    (the other threads stop; no run is reported skipped for it).

    Args:
        runs: run ids or :class:`mlflow.entities.Run` objects.
        name: the counts name the runs were logged under (``imbalance/<name>/``). None
            (default): :data:`DEFAULT_NAME`, or a run's only set when it holds no set of that
            name (recorded in :attr:`RunData.counts_name`). An explicit name is used as given.
        progress: optional callback ``(stage, done, total)``, called from the calling thread
            once per run as it finishes (``done`` rises by one each time).
        workers: threads loading runs; None: :data:`WORKERS_ENV`
            (``MLFLOW_IMBALANCE_LOAD_WORKERS``), else :data:`DEFAULT_WORKERS`. 1 loads them
            one after another in the calling thread.

    Returns:
        Loaded runs, skipped runs (with the reason) and the experiment name shared by the runs
        (None when they span several or none could be read).

    Raises:
        mlflow_imbalance.tracking._store.TrackingServerUnreachable: the tracking server does
            not answer (before or while loading).
        ValueError: ``workers`` / :data:`WORKERS_ENV` is not a whole number >= 1.
    """
    from mlflow_imbalance.tracking._store import (
        check_reachable,
        fail_fast_http,
        request_timeout,
        resolve_uri,
    )
    from mlflow_imbalance.tracking.load import _no_mlflow_progress_bar

    n_workers = load_workers(workers)
    request_timeout()  # MLFLOW_IMBALANCE_STORE_TIMEOUT, named when malformed
    items = list(runs)
    if not items:
        return [], [], None
    uri = resolve_uri(None)
    check_reachable(uri)  # a dead server: one clear error in seconds, not one per run
    loader = _RunLoader(uri, DEFAULT_NAME if name is None else name, fallback=name is None)
    total = len(items)
    results: list[Any] = [None] * total
    # MLflow's per-file download bars off for the whole load: the tracking loaders switch
    # them off around each download and restore the value after; set once here, every
    # thread sees and restores the same value (none can leave it changed after the load)
    with fail_fast_http(), _no_mlflow_progress_bar():
        if n_workers == 1 or total == 1:
            for i, item in enumerate(items):
                results[i] = loader.load(item)
                if progress is not None:
                    progress("load", i + 1, total)
        else:
            _load_concurrently(loader, items, results, min(n_workers, total), progress)
    loaded: list[RunData] = []
    skipped: list[SkippedRun] = []
    experiments: set[str] = set()
    for data, skip, exp_name in results:
        if exp_name is not None:
            experiments.add(exp_name)
        if data is not None:
            loaded.append(data)
        if skip is not None:
            skipped.append(skip)
    experiment = experiments.pop() if len(experiments) == 1 else None
    return loaded, skipped, experiment


def _load_concurrently(
    loader: _RunLoader,
    items: list[Any],
    results: list[Any],
    n_workers: int,
    progress: ProgressFn | None,
) -> None:
    """Fill ``results[i]`` with ``loader.load(items[i])`` on ``n_workers`` threads.

    Progress is reported from the calling thread as runs finish; the first exception (a dead
    server) stops the others and is raised once.
    """
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    total = len(items)
    done_count = 0
    pool = ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="mi-load")
    try:
        futures = {pool.submit(loader.load, item): i for i, item in enumerate(items)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=futures.__getitem__):
                exc = fut.exception()
                if exc is not None:
                    loader.stop.set()
                    raise loader.dead or exc  # a dead server: its one error, not a _Stopped
                results[futures[fut]] = fut.result()
                done_count += 1
                if progress is not None:
                    progress("load", done_count, total)
    except BaseException:
        loader.stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


class _Stopped(Exception):
    """Another thread found the tracking server gone: this run is not loaded."""


class _RunLoader:
    """Loads one run (thread-safe): a client per thread, a shared experiment-name cache."""

    def __init__(self, uri: str, wanted: str, *, fallback: bool) -> None:
        self.uri = uri
        self.wanted = wanted
        self.fallback = fallback
        self.stop = threading.Event()
        self._local = threading.local()
        self._lock = threading.Lock()  # the experiment-name cache
        self._probe_lock = threading.Lock()  # one re-probe at a time
        self._exp_names: dict[str, str] = {}
        self.dead: BaseException | None = None

    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            from mlflow.tracking import MlflowClient

            client = self._local.client = MlflowClient(tracking_uri=self.uri)
        return client

    def _experiment_name(self, exp_id: str) -> str:
        from mlflow.exceptions import MlflowException

        with self._lock:  # fetched once per experiment, not once per thread
            if exp_id not in self._exp_names:
                try:
                    self._exp_names[exp_id] = self._client().get_experiment(exp_id).name
                except MlflowException as exc:
                    self._check_alive(exc)
                    self._exp_names[exp_id] = exp_id
            return self._exp_names[exp_id]

    def _check_alive(self, exc: BaseException) -> None:
        """Raise TrackingServerUnreachable when ``exc`` came from a server now gone."""
        from mlflow_imbalance.tracking._store import TrackingServerUnreachable, store_failure

        if isinstance(exc, _Unusable):
            return
        if self.stop.is_set():
            self._halt()
        with self._probe_lock:
            if self.dead is None:
                reason = store_failure(self.uri, exc)
                if reason is not None:
                    self.dead = TrackingServerUnreachable(self.uri, reason, " while loading runs")
                    self.stop.set()
            if self.dead is not None:
                raise self.dead from exc

    def _halt(self) -> None:
        """Stop this run's load: the dead server's one error, else _Stopped (the load gave up)."""
        if self.dead is not None:
            raise self.dead
        raise _Stopped

    def load(self, item: Any) -> tuple[RunData | None, SkippedRun | None, str | None]:
        """``(RunData, None, experiment)`` or ``(None, SkippedRun, experiment or None)``."""
        from mlflow.exceptions import MlflowException

        from mlflow_imbalance import tracking
        from mlflow_imbalance.tracking._checks import _get_run

        if self.stop.is_set():
            self._halt()
        run_id = _run_id_of(item)
        label = run_id
        exp_name: str | None = None
        wanted = self.wanted
        try:
            run = item if hasattr(item, "data") and hasattr(item, "info") else None
            if run is None:  # "run 'abc' not found in the tracking store <uri>" when unknown
                run = _get_run(self._client(), run_id)
            tags = dict(run.data.tags)
            label = run.info.run_name or tags.get("mlflow.runName") or run_id
            exp_id = run.info.experiment_id
            exp_name = self._experiment_name(exp_id)
            counts, used = _load_counts(tracking, run_id, wanted, fallback=self.fallback)
            summary: dict[str, Any] = {}
            try:
                summary = dict(tracking.load_summary(run_id, name=used) or {})
            except Exception as exc:  # a summary problem degrades, it does not skip
                logger.warning("run %s: summary.json of %r unreadable: %s", run_id, used, exc)
            scores = None
            score_loader = getattr(tracking, "load_scores", None)
            if score_loader is not None:
                try:
                    scores = score_loader(run_id, name=used)
                except Exception as exc:  # scores are optional (pairing only)
                    logger.debug("run %s: no raw scores for %r: %s", run_id, used, exc)
                    scores = None
            production = _production_of(tracking, run_id, used)
            audits = _audits_of(tracking, run_id, used, production)
            if self.stop.is_set():  # the optional parts may have failed for a dead server
                self._halt()
            user_tags = {k: v for k, v in tags.items() if not k.startswith("mlflow.")}
            data = RunData(
                name=str(label),
                counts=counts,
                run_id=run_id,
                summary=summary,
                params=dict(run.data.params),
                tags=user_tags,
                digest=_digest_of(summary),
                scores=_as_pair(scores),
                source=f"MLflow run in {exp_name!r}"
                + (f", counts {used!r}" if used != wanted else ""),
                experiment_id=str(exp_id),
                counts_name=used,
                production=production,
                audits=audits,
            )
            return data, None, exp_name
        except (MlflowException, ValueError, OSError, KeyError, FileNotFoundError) as exc:
            self._check_alive(exc)
            reason = getattr(exc, "message", None) or str(exc)
            logger.info("skipping run %s: %s", run_id, reason)
            return None, SkippedRun(name=str(label), run_id=run_id, reason=_short(reason)), exp_name


def _load_counts(tracking: Any, run_id: str, name: str, *, fallback: bool) -> tuple[Any, str]:
    """A run's counts named ``name`` or, with ``fallback``, its only set; and the name read.

    Raises:
        _Unusable: the run holds no set named ``name`` and (without ``fallback``, or with
            several) none that can stand in; the message lists the sets it holds.
        mlflow.exceptions.MlflowException, ValueError, OSError: the set exists but cannot be
            read (store failure, manifest mismatch, invalid counts).
    """
    from mlflow.exceptions import MlflowException

    try:
        return tracking.load_counts(run_id, name=name), name
    except MlflowException:
        held = sorted(tracking.list_counts(run_id))  # committed sets with a valid summary
        if name in held:  # the set is there: the failure was something else
            raise
    # as load_counts says it: the file whose absence leaves the set uncommitted
    missing = f"no counts named {name!r} (no imbalance/{name}/summary.json)"
    if not held:
        raise _Unusable(f"{missing} and no other counts logged with the run")
    names = ", ".join(repr(n) for n in held)
    if fallback and len(held) == 1:
        logger.info("run %s: no counts named %r; using its only set %r", run_id, name, held[0])
        return tracking.load_counts(run_id, name=held[0]), held[0]
    if fallback:
        raise _Unusable(
            f"no counts named {name!r}, and several other sets ({names}): pass --name NAME "
            "(name= in Python) to choose which to compare"
        )
    raise _Unusable(f"no counts named {name!r}; it holds {names}")


def _production_of(tracking: Any, run_id: str, name: str) -> dict[str, Any]:
    """The run's committed production batches ``{batch: ScoreCounts}`` (none: {}).

    A batch that cannot be read degrades to a logged warning: the run's counts still stand.
    """
    loader = getattr(tracking, "load_production_counts", None)
    if loader is None:
        return {}
    try:
        return dict(loader(run_id, name))
    except Exception as exc:  # production batches are optional; their failure is not the run's
        logger.warning("run %s: production batches of %r unreadable: %s", run_id, name, exc)
        return {}


def _audits_of(tracking: Any, run_id: str, name: str, production: Any) -> dict[str, Any]:
    """The audit estimates of the run's production batches ``{batch: AuditEstimate}``.

    Only batches with labels appear; an audit that cannot be read degrades to a warning.
    """
    loader = getattr(tracking, "load_audit", None)
    out: dict[str, Any] = {}
    if loader is None:
        return out
    for batch in production:
        try:
            est = loader(run_id, batch, name=name)
        except Exception as exc:  # optional, like the batches themselves
            logger.warning("run %s: audit of batch %r unreadable: %s", run_id, batch, exc)
            continue
        if est is not None:
            out[str(batch)] = est
    return out


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
