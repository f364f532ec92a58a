"""Reachability of the tracking store: a bounded time budget when the server is down.

MLflow retries a failed HTTP request for minutes (``MLFLOW_HTTP_REQUEST_MAX_RETRIES``, backoff
doubling up to 2 minutes); a training loop whose logging hook meets a dead server would stall
that long at every capture. So:

- :func:`check_reachable` probes an ``http(s)://`` tracking URI with one short request
  (:data:`PROBE_TIMEOUT` seconds, no retries) before any upload, and raises
  :class:`TrackingServerUnreachable` — one line naming the URI and how to start a server —
  when nothing answers. Local stores (``sqlite:``, ``file:``, paths) are never probed.
- :func:`fail_fast_http` lowers MLflow's retry and timeout knobs (only ever lowers them) for
  the duration of a logging call made during training, so a server dying *during* an upload
  costs seconds, not minutes.
- :func:`bounded_store` is the budget of an explicit ``log_scores`` / ``log_counts``: inside
  :func:`fail_fast_http`, and a store failure there whose re-probe finds the server gone is
  raised as one :class:`TrackingServerUnreachable` naming the URI (nothing is committed: the
  ``summary.json`` commit marker goes last).
- The budget is configurable: :data:`TIMEOUT_ENV` (``MLFLOW_IMBALANCE_STORE_TIMEOUT``) sets the
  seconds one HTTP request may take (default :data:`DEFAULT_REQUEST_TIMEOUT`); ``0`` or ``off``
  leaves MLflow's own retry and timeout settings in force.
- :func:`mark_dead` / :func:`is_dead` remember, per (tracking URI, run), that the store was
  unreachable: later captures of the same run are skipped without waiting again, and the caller
  warns once (when :func:`mark_dead` returns True).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from mlflow.exceptions import MlflowException

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "PROBE_TIMEOUT",
    "TIMEOUT_ENV",
    "TrackingServerUnreachable",
    "bounded_store",
    "check_reachable",
    "fail_fast_http",
    "is_dead",
    "mark_dead",
    "resolve_uri",
]

#: Seconds one reachability probe may take (connect and first byte).
PROBE_TIMEOUT = 2.0
#: Environment variable: seconds one HTTP request of a logging call may take (``0`` / ``off``:
#: MLflow's own retries and timeout, which can wait minutes for a dead server).
TIMEOUT_ENV = "MLFLOW_IMBALANCE_STORE_TIMEOUT"
#: Seconds per HTTP request while logging, unless :data:`TIMEOUT_ENV` says otherwise.
DEFAULT_REQUEST_TIMEOUT = 5
#: MLflow HTTP knobs while logging: one immediate retry, :data:`DEFAULT_REQUEST_TIMEOUT` s each.
_FAIL_FAST_ENV = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": 1,
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": 0,
    "MLFLOW_HTTP_REQUEST_TIMEOUT": DEFAULT_REQUEST_TIMEOUT,
}

_lock = threading.RLock()
_env_depth = 0
_env_saved: dict[str, str | None] = {}
#: (tracking URI, run id) -> reason, for stores found unreachable during a run
_dead: dict[tuple[str, str], str] = {}


class TrackingServerUnreachable(MlflowException):
    """The tracking server did not answer a short probe (nothing was logged)."""

    def __init__(self, uri: str, reason: str, detail: str = "") -> None:
        self.uri = uri
        self.reason = reason
        from mlflow.protos.databricks_pb2 import TEMPORARILY_UNAVAILABLE

        super().__init__(
            _unreachable_message(uri, reason, detail), error_code=TEMPORARILY_UNAVAILABLE
        )


def _unreachable_message(uri: str, reason: str, detail: str = "") -> str:
    parts = urlsplit(uri)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or "127.0.0.1"
    return (
        f"tracking server {uri} is unreachable ({reason}){detail}: start one with "
        f"`mlflow server --host {host} --port {port}`, or point --tracking-uri / "
        "MLFLOW_TRACKING_URI at a running server or a local store such as sqlite:///mlflow.db"
    )


def resolve_uri(tracking_uri: str | None) -> str:
    """``tracking_uri``, else MLflow's current tracking URI."""
    if tracking_uri:
        return tracking_uri
    import mlflow

    return str(mlflow.get_tracking_uri())


def _is_http(uri: str) -> bool:
    return urlsplit(uri).scheme in ("http", "https")


def probe(uri: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when an ``http(s)`` tracking server answers (any HTTP status), else the reason.

    Non-HTTP URIs (local stores, ``databricks``, ...) are not probed and give None.
    """
    if not _is_http(uri):
        return None
    import requests

    url = uri.rstrip("/") + "/health"
    try:
        with requests.get(url, timeout=(timeout, timeout), stream=True, allow_redirects=False):
            return None
    except requests.exceptions.ConnectTimeout:
        return f"no answer within {timeout:g} s"
    except requests.exceptions.ReadTimeout:
        return f"connected, but no response within {timeout:g} s"
    except requests.exceptions.ConnectionError as exc:
        text = str(exc)
        if "refused" in text.lower():
            return "connection refused"
        if "Name or service not known" in text or "nodename nor servname" in text:
            return "unknown host"
        return "connection failed"
    except requests.exceptions.RequestException as exc:
        return f"{type(exc).__name__}"


def check_reachable(tracking_uri: str | None) -> None:
    """Raise :class:`TrackingServerUnreachable` when an HTTP tracking server does not answer."""
    uri = resolve_uri(tracking_uri)
    reason = probe(uri)
    if reason is not None:
        raise TrackingServerUnreachable(uri, reason)


def is_dead(uri: str, run_id: str | None) -> bool:
    """Whether the store was found unreachable earlier in this run."""
    with _lock:
        return (uri, str(run_id)) in _dead


def mark_dead(uri: str, run_id: str | None, reason: str) -> bool:
    """Remember that the store is unreachable for this run; True the first time (warn then)."""
    with _lock:
        key = (uri, str(run_id))
        if key in _dead:
            return False
        _dead[key] = reason
        return True


def store_failure(uri: str, exc: BaseException) -> str | None:
    """The reason when ``exc`` came from an unreachable store (re-probed), else None."""
    if isinstance(exc, TrackingServerUnreachable):
        return exc.reason
    if not _is_http(uri):
        return None
    return probe(uri)


def request_timeout() -> float | None:
    """Seconds per HTTP request while logging (:data:`TIMEOUT_ENV`); None = MLflow's own.

    Raises:
        ValueError: naming :data:`TIMEOUT_ENV` when it is neither a number >= 0 nor ``off``.
    """
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return float(DEFAULT_REQUEST_TIMEOUT)
    if text.lower() in ("off", "none", "0"):
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value >= 0 and value < float("inf")):
        raise ValueError(
            f"{TIMEOUT_ENV} must be the seconds one HTTP request may take (a number > 0), or "
            f"0 / off for MLflow's own retries; got {text[:40]!r}"
        )
    return None if value == 0 else value


@contextlib.contextmanager
def bounded_store(tracking_uri: str | None, what: str = "") -> Iterator[None]:
    """The dead-server budget of an explicit logging call's store section.

    Inside :func:`fail_fast_http`; an exception from the store whose re-probe finds the server
    gone becomes one :class:`TrackingServerUnreachable` naming the URI (``what`` is appended
    to its reason, e.g. "; nothing was committed"). Other errors propagate unchanged.
    """
    uri = resolve_uri(tracking_uri)
    try:
        with fail_fast_http():
            yield
    except TrackingServerUnreachable:
        raise
    except Exception as exc:
        reason = store_failure(uri, exc)
        if reason is None:
            raise
        raise TrackingServerUnreachable(uri, reason, what) from exc


@contextlib.contextmanager
def fail_fast_http() -> Iterator[None]:
    """Lower MLflow's HTTP retries/timeout inside the block (process-wide; restored after).

    Values the user set lower are kept. Nested and concurrent blocks share one setting. With
    :data:`TIMEOUT_ENV` ``0`` / ``off`` nothing is changed.
    """
    global _env_depth
    timeout = request_timeout()
    if timeout is None:
        yield
        return
    # MLflow reads the timeout as an integer number of seconds
    knobs = {**_FAIL_FAST_ENV, "MLFLOW_HTTP_REQUEST_TIMEOUT": max(1, math.ceil(timeout))}
    with _lock:
        if _env_depth == 0:
            _env_saved.clear()
            for key, ours in knobs.items():
                current = os.environ.get(key)
                _env_saved[key] = current
                if current is None or not _lower_or_equal(current, ours):
                    os.environ[key] = str(ours)
        _env_depth += 1
    try:
        yield
    finally:
        with _lock:
            _env_depth -= 1
            if _env_depth == 0:
                for key, value in _env_saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value


def _lower_or_equal(text: str, ours: Any) -> bool:
    try:
        return float(text) <= float(ours)
    except ValueError:
        return False
