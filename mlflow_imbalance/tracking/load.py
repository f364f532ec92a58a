"""Load what :mod:`mlflow_imbalance.tracking.log` committed to a run, verified.

:func:`load_summary` validates ``summary.json`` (:mod:`mlflow_imbalance.tracking.summary`);
:func:`load_counts` and :func:`load_scores` check every file they read against the sha256 of the
summary's ``files`` manifest, so a half-written or stale set is never read silently;
:func:`list_counts` lists the committed sets of a run.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.format import (
    COUNTS_FILENAME,
    MAX_ARCHIVE_BYTES,
    MemberSpec,
    read_npy_archive,
)
from mlflow_imbalance.tracking import _worker
from mlflow_imbalance.tracking._checks import (
    ARTIFACT_ROOT,
    Scores,
    _check_name,
    _client,
    _mlflow_exception,
    _require_run,
)
from mlflow_imbalance.tracking.summary import SUMMARY_FILENAME, labels_digest, summary_from_json

logger = logging.getLogger(__name__)

__all__ = ["list_counts", "load_counts", "load_scores", "load_summary"]

_SCORES_MAX_BYTES = 4 << 30
#: What ``scores.npz`` may hold (written by ``tracking.log._write_scores``).
_SCORES_SPEC = {
    "y_true": MemberSpec(("|b1",), 1, 1),
    "y_score": MemberSpec(("<f4", "<f8"), 1, 1),
    "sample_weight": MemberSpec(("<f8",), 1, 1),
}
#: Bytes per example of ``scores.npz`` at most (bool label, float64 score and weight), plus
#: room for the three ``.npy`` headers.
_SCORES_BYTES_PER_EXAMPLE = 17
_SCORES_HEADER_ROOM = 3 * 4096
#: What an MLflow run id may look like (MLflow's own rule: 32 hex digits for new runs).
_RUN_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]{0,255}")


def _check_run_id(run_id: Any) -> str:
    """``run_id`` as given, when it can be a run id; else a ValueError naming ``run_id``."""
    if not isinstance(run_id, str) or not _RUN_ID_RE.fullmatch(run_id):
        shown = repr(run_id) if isinstance(run_id, str) else type(run_id).__name__
        raise ValueError(
            f"run_id must be an MLflow run id (a string of letters, digits, '-' and '_', such as "
            f"run.info.run_id), got {shown:.80}"
        )
    return run_id


@contextmanager
def _no_mlflow_progress_bar() -> Iterator[None]:
    """Silence MLflow's per-file tqdm bars: our loads are small and the CLI draws its own."""
    import os

    key = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"
    old = os.environ.get(key)
    os.environ[key] = "false"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old


def _download(client: Any, run_id: str, path: str, dst: str) -> Path:
    with _no_mlflow_progress_bar():
        return Path(client.download_artifacts(run_id, path, dst))


def _local_artifacts(client: Any, run_id: str) -> Path | None:
    """The run's artifact folder when it is on this machine (``file:`` or a path), else None."""
    from urllib.parse import unquote, urlsplit

    try:
        uri = str(client.get_run(run_id).info.artifact_uri or "")
    except Exception:  # describing a failure must not fail differently
        return None
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return Path(unquote(parts.path))
    if parts.scheme == "" and uri:
        return Path(uri)
    return None


def _why_unreadable(client: Any, run_id: str, rel: str, exc: BaseException) -> str:
    """What is wrong with artifact ``rel`` of a run that failed to download, in plain words."""
    root = _local_artifacts(client, run_id)
    if root is not None:
        path = root
        for part in rel.split("/"):
            path = path / part
            if path.is_symlink():
                target = Path(os.readlink(path))
                shown = "/".join(path.relative_to(root).parts)
                what = (
                    "is a symbolic link"
                    if shown == rel
                    else f"cannot be read: its folder {shown} is a symbolic link"
                )
                if not path.exists():
                    return f"{what} to {target}, which does not exist"
                return (
                    f"{what} to {target} (outside the run's artifacts), which the tracking "
                    "store does not follow"
                )
        if path.is_dir():
            return "is a directory, not a file"
        if not path.exists():
            return "is missing from the run's artifacts (deleted after it was logged?)"
        return f"could not be read ({type(exc).__name__}: {getattr(exc, 'message', exc)})"
    folder = rel.rsplit("/", 1)[0]
    try:
        listed = {f.path: f.is_dir for f in client.list_artifacts(run_id, folder)}
    except Exception:  # the store failing: say what the download said
        listed = None
    if listed is not None and rel not in listed:
        return "is missing from the run's artifacts (deleted after it was logged?)"
    if listed is not None and listed[rel]:
        return "is a directory, not a file"
    return f"could not be read ({type(exc).__name__}: {getattr(exc, 'message', exc)})"


def _is_http_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the store failing (a 5xx answer or no answer), not a bad file."""
    from mlflow.exceptions import MlflowException

    if isinstance(exc, MlflowException):
        return exc.get_http_status_code() >= 500 and "Failed to download" not in exc.message
    return False


def _unreadable(client: Any, run_id: str, rel: str, exc: BaseException) -> ValueError:
    """A ValueError naming the run and the file, for a download of ``rel`` that failed."""
    why = _why_unreadable(client, run_id, rel, exc)
    return ValueError(f"run {run_id}: {rel} {why}; log the set again")


def load_summary(
    run_id: str, name: str = "test", *, tracking_uri: str | None = None
) -> dict[str, Any]:
    """The validated ``summary.json`` of ``imbalance/<name>/`` in a run.

    Raises:
        mlflow.exceptions.MlflowException: the run has no committed set of that name (the
            message lists the names it has).
        ValueError: the summary is not a valid mlflow-imbalance summary.
    """
    _check_run_id(run_id)
    name = _check_name(name)
    _worker.flush()  # pending background logs (autolog, callbacks) land first
    client = _client(tracking_uri)
    return _load_summary(client, run_id, name)


def _load_summary(client: Any, run_id: str, name: str) -> dict[str, Any]:
    from mlflow.exceptions import MlflowException

    path = f"{ARTIFACT_ROOT}/{name}/{SUMMARY_FILENAME}"
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        try:
            text = _download(client, run_id, path, tmp).read_bytes()
        except (MlflowException, OSError) as exc:
            _require_run(client, run_id)
            try:
                listed = [f.path for f in client.list_artifacts(run_id, f"{ARTIFACT_ROOT}/{name}")]
            except (MlflowException, OSError) as inner:  # the folder itself is broken
                if _is_http_failure(inner):
                    raise
                raise _unreadable(client, run_id, path, inner) from None
            if path in listed:
                if _is_http_failure(exc):
                    raise
                raise _unreadable(client, run_id, path, exc) from None
            names = _committed_names(client, run_id)
            raise _mlflow_exception(
                f"run {run_id} has no committed counts named {name!r} (no {path}); "
                f"it has: {names or 'none'}",
                "RESOURCE_DOES_NOT_EXIST",
            ) from exc
    summary = summary_from_json(text, source=f"run {run_id}: {path}")
    if summary["name"] != name:
        raise ValueError(f"run {run_id}: {path} describes {summary['name']!r}, not {name!r}")
    return summary


def _committed_names(client: Any, run_id: str) -> list[str]:
    from mlflow.exceptions import MlflowException

    names = []
    for entry in client.list_artifacts(run_id, ARTIFACT_ROOT):
        if not entry.is_dir:
            continue
        try:
            inner = {f.path.rsplit("/", 1)[-1] for f in client.list_artifacts(run_id, entry.path)}
        except (MlflowException, OSError) as exc:  # unreadable folder: listed, so that
            if _is_http_failure(exc):  # loading it says what is wrong
                raise
            inner = {SUMMARY_FILENAME}
        if SUMMARY_FILENAME in inner:
            names.append(entry.path.rsplit("/", 1)[-1])
    return sorted(names)


def _fetch_verified(
    client: Any, run_id: str, name: str, summary: dict[str, Any], fname: str, dst: str
) -> bytes:
    entry = summary["files"].get(fname)
    if entry is None:
        raise ValueError(f"run {run_id}: {fname} is not in the manifest of counts {name!r}")
    limit = MAX_ARCHIVE_BYTES if fname == COUNTS_FILENAME else _SCORES_MAX_BYTES
    if int(entry.get("bytes", 0)) > limit:
        raise ValueError(
            f"run {run_id}: {ARTIFACT_ROOT}/{name}/{fname} is listed with {entry['bytes']} "
            f"bytes, above the limit of {limit}"
        )
    from mlflow.exceptions import MlflowException

    rel = f"{ARTIFACT_ROOT}/{name}/{fname}"
    try:
        data = _download(client, run_id, rel, dst).read_bytes()
    except (MlflowException, OSError) as exc:
        if _is_http_failure(exc):
            raise
        raise _unreadable(client, run_id, rel, exc) from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["sha256"]:
        raise ValueError(
            f"run {run_id}: {ARTIFACT_ROOT}/{name}/{fname} does not match its summary.json "
            f"manifest (sha256 {digest[:12]}… vs {entry['sha256'][:12]}…): the set was "
            "modified or a re-log did not finish; log it again"
        )
    return data


def load_counts(run_id: str, name: str = "test", *, tracking_uri: str | None = None) -> RocCounts:
    """Load and validate the counts of ``imbalance/<name>/`` from a run.

    The file must match the sha256 in ``summary.json`` and the counts' class totals must match
    the summary; the counts themselves are validated by :mod:`mlflow_imbalance.core.format`.
    """
    _check_run_id(run_id)
    name = _check_name(name)
    _worker.flush()  # pending background logs (autolog, callbacks) land first
    client = _client(tracking_uri)
    summary = _load_summary(client, run_id, name)
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        data = _fetch_verified(client, run_id, name, summary, COUNTS_FILENAME, tmp)
    source = f"run {run_id}: {ARTIFACT_ROOT}/{name}/roc_counts.npz"
    counts = RocCounts.from_bytes(data, source=source)
    if not (
        math.isclose(counts.n_pos, summary["n_pos"])
        and math.isclose(counts.n_neg, summary["n_neg"])
    ):
        raise ValueError(f"run {run_id}: counts {name!r} disagree with their summary.json totals")
    return counts


def load_scores(
    run_id: str, name: str = "test", *, tracking_uri: str | None = None
) -> Scores | None:
    """The raw scores kept with ``imbalance/<name>/`` (for paired comparisons), or None.

    Returns None when the run kept no scores; raises when kept scores fail the manifest or the
    label digest.
    """
    _check_run_id(run_id)
    name = _check_name(name)
    _worker.flush()  # pending background logs (autolog, callbacks) land first
    client = _client(tracking_uri)
    summary = _load_summary(client, run_id, name)
    info = summary.get("scores")
    if not info:
        return None
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        data = _fetch_verified(client, run_id, name, summary, info["file"], tmp)
    source = f"run {run_id}: {ARTIFACT_ROOT}/{name}/{info['file']}"
    n = int(info["n"])
    arrays = read_npy_archive(
        data,
        _SCORES_SPEC,
        source=source,
        optional=("sample_weight",),
        max_bytes=min(_SCORES_MAX_BYTES, n * _SCORES_BYTES_PER_EXAMPLE + _SCORES_HEADER_ROOM),
    )
    sizes = {k: v.size for k, v in arrays.items()}
    if set(sizes.values()) != {n}:
        raise ValueError(f"{source}: arrays of sizes {sizes} where summary.json says n={n}")
    y = arrays["y_true"].astype(bool)
    s = arrays["y_score"].astype(np.float64)
    w = arrays["sample_weight"].astype(np.float64) if "sample_weight" in arrays else None
    if not np.all(np.isfinite(s)):
        raise ValueError(f"{source}: y_score holds non-finite values")
    if summary.get("y_true_digest") and labels_digest(y, w) != summary["y_true_digest"]:
        raise ValueError(f"run {run_id}: kept labels of {name!r} do not match y_true_digest")
    return Scores(y, s, w)


def list_counts(run_id: str, *, tracking_uri: str | None = None) -> dict[str, dict[str, Any]]:
    """Names of the committed count sets of a run, each with its summary.

    Folders without a valid ``summary.json`` (an interrupted first upload, foreign files) are
    left out, with a log message.
    """
    _check_run_id(run_id)
    _worker.flush()  # pending background logs (autolog, callbacks) land first
    client = _client(tracking_uri)
    out: dict[str, dict[str, Any]] = {}
    from mlflow.exceptions import MlflowException

    try:
        names = _committed_names(client, run_id)
    except (MlflowException, OSError):
        _require_run(client, run_id)
        raise
    for name in names:
        try:
            out[name] = _load_summary(client, run_id, name)
        except (ValueError, OSError) as exc:
            logger.warning("run %s: ignoring counts %r: %s", run_id, name, exc)
    return out
