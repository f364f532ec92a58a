"""One background thread per process for the slow half of a logging call made during training.

Autolog captures and training callbacks compute the counts on the training thread (one sort of
the scores) and hand the rest -- headline intervals, figures, card, upload -- to this worker
through a bounded queue (:data:`QUEUE_SIZE` jobs; a full queue makes the next capture wait, so
memory stays bounded). Pending jobs are flushed:

- when the user's ``mlflow.end_run()`` runs (also at the end of ``with mlflow.start_run():``):
  MLflow has no run-end hook, so :func:`install_end_run_flush` wraps ``mlflow.end_run``;
- before a capture in a different run (:func:`submit` flushes when the run changes);
- at interpreter exit (threading's exit hook, before thread pools shut down; ``atexit``);
- on :func:`flush` (``mlflow_imbalance.flush()`` / ``tracking.flush(timeout=None)``).

A job never fails silently: the job itself turns failures into the training paths' warnings
(see :mod:`mlflow_imbalance.tracking.autologging`), and anything escaping a job is warned about
here.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import warnings
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["QUEUE_SIZE", "flush", "on_worker_thread", "submit"]

#: Most jobs waiting for the worker; a capture beyond it waits for a free slot.
QUEUE_SIZE = 4
_THREAD_NAME = "mlflow-imbalance-log"

_lock = threading.Lock()
_queue: queue.Queue[tuple[str | None, Callable[[], Any]]] = queue.Queue(maxsize=QUEUE_SIZE)
_thread: threading.Thread | None = None
_last_run: str | None = None
_atexit_registered = False


def on_worker_thread() -> bool:
    """Whether the caller runs on the background logging thread."""
    return threading.current_thread() is _thread


def _run() -> None:
    while True:
        _run_id, job = _queue.get()
        try:
            job()
        except BaseException as exc:  # the job warns itself; this is the last line of defence
            message = f"mlflow-imbalance: background logging failed: {exc!r}"
            logger.debug(message, exc_info=True)
            warnings.warn(message, UserWarning, stacklevel=1)
        finally:
            _queue.task_done()


def _ensure_thread() -> None:
    global _thread, _atexit_registered
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name=_THREAD_NAME, daemon=True)
            _thread.start()
        if not _atexit_registered:
            # threading's own exit hooks run before concurrent.futures refuses new work (the
            # scores are written by a thread pool) and before atexit; registered after
            # concurrent.futures' hook, ours runs first. atexit is the fallback.
            import concurrent.futures.thread  # noqa: F401  (its exit hook first: ours after)

            register = getattr(threading, "_register_atexit", None)
            if register is not None:
                register(_flush_at_exit)
            atexit.register(_flush_at_exit)
            _atexit_registered = True


def submit(run_id: str | None, job: Callable[[], Any]) -> None:
    """Queue ``job`` (a callable that handles its own errors) for the background thread.

    Pending jobs of another run are flushed first, so one run's logs are complete before the
    next run's begin. Blocks while the queue is full. Called from the worker itself (a job that
    logs), the job runs at once.
    """
    global _last_run
    if on_worker_thread():
        job()
        return
    if _last_run is not None and run_id != _last_run:
        flush()
    _last_run = run_id
    install_end_run_flush()
    _ensure_thread()
    _queue.put((run_id, job))


def flush(timeout: float | None = None) -> bool:
    """Wait until every queued background log has finished (or ``timeout`` seconds passed).

    Args:
        timeout: seconds to wait at most; None waits as long as it takes.

    Returns:
        True when nothing is pending any more, False on timeout.
    """
    if on_worker_thread():
        return _queue.unfinished_tasks == 0
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    with _queue.all_tasks_done:
        while _queue.unfinished_tasks:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            _queue.all_tasks_done.wait(remaining)
    return True


def pending() -> int:
    """Number of queued or running background logs."""
    return _queue.unfinished_tasks


def _flush_at_exit() -> None:
    if _queue.unfinished_tasks:
        logger.info("mlflow-imbalance: finishing %d background log(s)", _queue.unfinished_tasks)
        flush()


_end_run_wrapped = False


def install_end_run_flush() -> None:
    """Make ``mlflow.end_run()`` (and leaving ``with mlflow.start_run()``) flush pending logs.

    Wraps ``mlflow.end_run`` and ``mlflow.tracking.fluent.end_run`` (which ``ActiveRun.__exit__``
    calls) once per process; the wrapper flushes and then calls MLflow's own function.
    """
    global _end_run_wrapped
    with _lock:
        if _end_run_wrapped:
            return
        import mlflow
        from mlflow.tracking import fluent

        original = fluent.end_run

        def end_run(*args: Any, **kwargs: Any) -> Any:
            flush()
            return original(*args, **kwargs)

        end_run.__wrapped__ = original  # type: ignore[attr-defined]
        end_run.__doc__ = original.__doc__
        end_run._mlflow_imbalance_flush = True  # type: ignore[attr-defined]
        fluent.end_run = end_run
        if getattr(mlflow, "end_run", None) is original:
            mlflow.end_run = end_run
        _end_run_wrapped = True
