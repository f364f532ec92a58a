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
- :func:`mark_dead` / :func:`is_dead` remember, per (tracking URI, run), that the store was
  unreachable: later captures of the same run are skipped without waiting again, and the caller
  warns once (when :func:`mark_dead` returns True).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from mlflow.exceptions import MlflowException

logger = logging.getLogger(__name__)

__all__ = [
    "PROBE_TIMEOUT",
    "TrackingServerUnreachable",
    "check_reachable",
    "fail_fast_http",
    "is_dead",
    "mark_dead",
    "resolve_uri",
]

#: Seconds one reachability probe may take (connect and first byte).
PROBE_TIMEOUT = 2.0
#: MLflow HTTP knobs while logging during training: one immediate retry, 5 s per request.
_FAIL_FAST_ENV = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": 1,
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": 0,
    "MLFLOW_HTTP_REQUEST_TIMEOUT": 5,
}

_lock = threading.RLock()
_env_depth = 0
_env_saved: dict[str, str | None] = {}
#: (tracking URI, run id) -> reason, for stores found unreachable during a run
_dead: dict[tuple[str, str], str] = {}


class TrackingServerUnreachable(MlflowException):
    """The tracking server did not answer a short probe (nothing was logged)."""

    def __init__(self, uri: str, reason: str) -> None:
        self.uri = uri
        self.reason = reason
        from mlflow.protos.databricks_pb2 import TEMPORARILY_UNAVAILABLE

        super().__init__(_unreachable_message(uri, reason), error_code=TEMPORARILY_UNAVAILABLE)


def _unreachable_message(uri: str, reason: str) -> str:
    parts = urlsplit(uri)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or "127.0.0.1"
    return (
        f"tracking server {uri} is unreachable ({reason}): start one with "
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


@contextlib.contextmanager
def fail_fast_http() -> Iterator[None]:
    """Lower MLflow's HTTP retries/timeout inside the block (process-wide; restored after).

    Values the user set lower are kept. Nested and concurrent blocks share one setting.
    """
    global _env_depth
    with _lock:
        if _env_depth == 0:
            _env_saved.clear()
            for key, ours in _FAIL_FAST_ENV.items():
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
