"""Where audit plans and labels live in a run, and reading them back (no statistics).

Under ``imbalance/<name>/audit/<batch>/`` (docs/format.md, "Audit plans and labels"):

- ``plan.json``: the plan (design, seed, indices, strata), one file, written once;
- ``labels-0001.json``, ``labels-0002.json``, ...: one file per ``log_audit_labels`` call (the
  labels it added and the estimate from all labels so far), never rewritten.

Each file is a single artifact carrying the sha256 of its own content (``digest``, over the
canonical JSON of every other key), so a file cut short or edited is refused, and a call that
failed before its one upload left nothing. :mod:`~mlflow_imbalance.tracking.production` asks
:func:`has_plan` before merging into a batch and :func:`card_lines` for the run card.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import tempfile
from typing import Any

from mlflow_imbalance.tracking._checks import ARTIFACT_ROOT
from mlflow_imbalance.tracking.load import _download

logger = logging.getLogger(__name__)

AUDIT_DIR = "audit"
PLAN_FILENAME = "plan.json"
PLAN_SCHEMA = "mlflow-imbalance/audit-plan"
LABELS_SCHEMA = "mlflow-imbalance/audit-labels"
SCHEMA_VERSION = 1
#: Largest audit file the loaders read.
MAX_BYTES = 64 << 20
_LABELS_RE = re.compile(r"labels-(\d{4,9})\.json")


def audit_prefix(name: str, batch: str) -> str:
    """``imbalance/<name>/audit/<batch>``."""
    return f"{ARTIFACT_ROOT}/{name}/{AUDIT_DIR}/{batch}"


def digest(record: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of ``record`` without its ``digest`` key."""
    body = {k: v for k, v in record.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, allow_nan=False, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dumps(record: dict[str, Any]) -> str:
    """The record with its digest, as the file's text."""
    out = dict(record, digest=digest(record))
    return json.dumps(out, indent=1, allow_nan=False, ensure_ascii=False) + "\n"


def _read(client: Any, run_id: str, path: str, schema: str, tmp: str) -> dict[str, Any]:
    data = _download(client, run_id, path, tmp).read_bytes()
    source = f"run {run_id}: {path}"
    if len(data) > MAX_BYTES:
        raise ValueError(f"{source} is {len(data)} bytes, above the limit of {MAX_BYTES}")
    try:
        record = json.loads(data)
    except ValueError:
        raise ValueError(f"{source} is not valid JSON (cut short?)") from None
    if not isinstance(record, dict) or record.get("schema") != schema:
        raise ValueError(f"{source} is not an mlflow-imbalance {schema.rsplit('/', 1)[-1]} file")
    if record.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(
            f"{source} has schema_version {record.get('schema_version')!r}; this version reads "
            f"{SCHEMA_VERSION} (upgrade the package to read newer files)"
        )
    if record.get("digest") != digest(record):
        raise ValueError(f"{source} fails its digest: modified or written half-way")
    return record


def _entries(client: Any, run_id: str, prefix: str) -> list[Any]:
    try:
        return list(client.list_artifacts(run_id, prefix))
    except Exception as exc:  # an absent folder lists empty on most stores
        logger.debug("listing %s failed: %s", prefix, exc)
        return []


def has_plan(client: Any, run_id: str, name: str, batch: str) -> bool:
    """Whether ``batch`` has a committed audit plan (one listing call)."""
    prefix = audit_prefix(name, batch)
    return any(e.path.rsplit("/", 1)[-1] == PLAN_FILENAME for e in _entries(client, run_id, prefix))


def read_plan(client: Any, run_id: str, name: str, batch: str, tmp: str) -> dict[str, Any] | None:
    """The verified ``plan.json`` record, or None when the batch has no plan."""
    if not has_plan(client, run_id, name, batch):
        return None
    path = f"{audit_prefix(name, batch)}/{PLAN_FILENAME}"
    return _read(client, run_id, path, PLAN_SCHEMA, tmp)


def read_labels(client: Any, run_id: str, name: str, batch: str, tmp: str) -> list[dict[str, Any]]:
    """Every verified ``labels-NNNN.json`` record of the batch, in call order."""
    found = []
    for e in _entries(client, run_id, audit_prefix(name, batch)):
        m = _LABELS_RE.fullmatch(e.path.rsplit("/", 1)[-1])
        if m and not e.is_dir:
            found.append((int(m.group(1)), e.path))
    return [_read(client, run_id, p, LABELS_SCHEMA, tmp) for _, p in sorted(found)]


def labels_filename(seq: int) -> str:
    """``labels-0001.json`` for call ``seq`` (1-based)."""
    return f"labels-{seq:04d}.json"


def audited_batches(client: Any, run_id: str, name: str) -> list[str]:
    """Batches with an audit folder."""
    prefix = f"{ARTIFACT_ROOT}/{name}/{AUDIT_DIR}"
    return [e.path.rsplit("/", 1)[-1] for e in _entries(client, run_id, prefix) if e.is_dir]


def card_lines(client: Any, run_id: str, name: str) -> dict[str, str]:
    """Batch -> the newest audit estimate's text (batches with a plan but no labels: said so)."""
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        for batch in audited_batches(client, run_id, name):
            try:
                labels = read_labels(client, run_id, name, batch, tmp)
                if labels:
                    out[batch] = str(labels[-1]["estimate"]["text"])
                else:
                    plan = read_plan(client, run_id, name, batch, tmp)
                    if plan is not None:
                        out[batch] = (
                            f"audit planned: {len(plan['indices'])} cases to label at "
                            f"threshold {plan['design']['threshold']:.4g}; no labels yet"
                        )
            except (ValueError, OSError, KeyError, TypeError) as exc:
                logger.warning("run %s: audit of batch %s unreadable: %s", run_id, batch, exc)
    return out
