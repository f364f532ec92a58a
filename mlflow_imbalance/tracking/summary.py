"""The ``summary.json`` of a logged counts set: schema, digests and validation (no mlflow).

Every ``imbalance/<name>/`` folder of an MLflow run holds ``summary.json``, written last as the
commit marker of the folder. Its ``files`` manifest lists every file of the set with its sha256,
so a loader can tell a complete, consistent set from a half-written or stale one.

Schema (``schema == "mlflow-imbalance/summary"``, ``schema_version == 1``), keys always present:

- ``name``: the set's name (``"test"`` by default).
- ``package_version``, ``mlflow_version``, ``created_at`` (UTC, ISO 8601).
- ``n_pos``, ``n_neg`` (counts, or weight sums when ``weighted``), ``n_thresholds``,
  ``test_prevalence`` = n_pos / (n_pos + n_neg), ``weighted``, ``compressed``.
- ``y_true_digest``: ``"sha256:<hex>"`` of the binarised labels *in example order* (and of the
  sample weights when given), or None when only counts were logged (e.g. Spark). Two runs with
  the same digest were scored on the same labels in the same order, which is what pairing runs
  example by example (a paired bootstrap) needs; equal digests are necessary, not sufficient,
  for "the same test set" (different examples can carry the same label sequence).
- ``prevalences``: the prevalences of interest; ``costs``: ``{"fp": .., "fn": ..}`` or None.
- ``headline``: the headline metrics (see :mod:`mlflow_imbalance.tracking`): ``confidence``;
  ``roc_auc`` and, per row of ``at_prevalence`` (the test prevalence first), ``ap``, ``pr_auc``,
  ``max_f1``, ``precision_at_max_f1``, ``recall_at_max_f1`` as ``{"value", "interval" ([low,
  high] or null), "method"}``; ``methods`` (metric -> method text); ``bootstrap`` (``n_boot``,
  ``seed``, ``interval``, ``thinned_to``, ``max_tpr_error``, ``max_fpr_error``,
  ``max_estimate_shift``, ...) or null; ``operating_point`` (the fixed threshold of the
  ``precision_op`` / ``f1_op`` series); ``tpr_at_fpr``. With costs each row has ``min_cost``:
  ``threshold`` (the lowest-cost threshold, the verdict's), ``per_cases`` and
  ``expected_cost_per_cases`` (the lowest expected cost per that many cases, the unit of the
  report, the card and the MLflow key), ``expected_cost`` (per case),
  ``normalized_expected_cost`` (divided by the cost of getting every case wrong), their
  intervals, ``tpr``, ``fpr``, ``precision``, ``recall``. Not checked beyond being an object
  (docs/format.md lists every key).
- ``files``: ``{filename: {"sha256": hex, "bytes": int, "role": str}}``; ``roc_counts.npz`` is
  always listed (role ``"counts"``).
- ``scores``: None, or ``{"file": "scores.npz", "n": int, "digest": "sha256:<hex>"}`` when the
  raw scores were kept.
- ``extra``: a dict of caller-provided entries (e.g. ``{"positives": "synthesized"}``), which are
  also copied to the top level for convenience when they do not clash with a schema key.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "REQUIRED_KEYS",
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "SUMMARY_FILENAME",
    "file_sha256",
    "labels_digest",
    "scores_digest",
    "summary_from_json",
    "summary_to_json",
    "validate_summary",
]

SCHEMA_NAME = "mlflow-imbalance/summary"
SCHEMA_VERSION = 1
SUMMARY_FILENAME = "summary.json"
#: Largest summary.json accepted on load (a summary is a few kB; this stops a foreign file).
MAX_SUMMARY_BYTES = 16 << 20

REQUIRED_KEYS: tuple[str, ...] = (
    "schema",
    "schema_version",
    "name",
    "package_version",
    "n_pos",
    "n_neg",
    "n_thresholds",
    "test_prevalence",
    "weighted",
    "compressed",
    "y_true_digest",
    "prevalences",
    "costs",
    "headline",
    "files",
    "scores",
    "extra",
)

_DIGEST_DOMAIN_LABELS = b"mlflow-imbalance/labels/v1\0"
_DIGEST_DOMAIN_SCORES = b"mlflow-imbalance/scores/v1\0"


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def labels_digest(is_pos: np.ndarray, sample_weight: np.ndarray | None = None) -> str:
    """Order-sensitive digest of binarised labels (and weights): ``"sha256:<hex>"``.

    The labels are packed to bits (so 10^6 labels hash 125 kB); the length is hashed too, so
    trailing zero bits cannot collide. Weights, when given, are hashed as little-endian float64.
    """
    y = np.asarray(is_pos, dtype=bool)
    h = hashlib.sha256(_DIGEST_DOMAIN_LABELS)
    h.update(np.int64(y.size).tobytes())
    h.update(np.packbits(y).tobytes())
    if sample_weight is not None:
        h.update(b"w")
        h.update(np.ascontiguousarray(sample_weight, dtype="<f8").tobytes())
    return "sha256:" + h.hexdigest()


def scores_digest(y_score: np.ndarray) -> str:
    """Order-sensitive digest of scores as little-endian float64: ``"sha256:<hex>"``."""
    h = hashlib.sha256(_DIGEST_DOMAIN_SCORES)
    s = np.ascontiguousarray(y_score, dtype="<f8")
    h.update(np.int64(s.size).tobytes())
    h.update(s.tobytes())
    return "sha256:" + h.hexdigest()


def _jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays and non-finite floats to strict-JSON values (NaN -> None)."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def summary_to_json(summary: Mapping[str, Any]) -> str:
    """Serialise a summary to strict JSON (keys in the order given, NaN/inf written as null).

    The writer orders a summary to read top-down: schema and headline first, manifest last.
    """
    return json.dumps(_jsonable(summary), indent=2, allow_nan=False) + "\n"


def summary_from_json(text: str | bytes, source: str = "summary.json") -> dict[str, Any]:
    """Parse and validate the text of a summary.json."""
    if len(text) > MAX_SUMMARY_BYTES:
        raise ValueError(f"{source} is {len(text)} bytes, above the limit of {MAX_SUMMARY_BYTES}")
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_int=_bounded_int)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"{source} is not valid JSON: {str(exc)[:200]}") from None
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
    return validate_summary(data, source=source)


#: Largest integer accepted anywhere in a summary (counts are int64 on disk).
_MAX_INT = 2**63 - 1


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name} (NaN and Infinity are not allowed)")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19:  # before int(): a 10**6-digit literal must not be parsed
        raise ValueError(f"integer {text[:30]}… is out of range")
    value = int(text)
    if abs(value) > _MAX_INT:
        raise ValueError(f"integer {value} is out of range")
    return value


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) <= _MAX_INT
    return isinstance(value, float) and math.isfinite(value)


def _number(data: Mapping[str, Any], key: str, source: str, *, positive: bool = False) -> float:
    value = data[key]
    if not _is_number(value):
        raise ValueError(f"{source}: {key} must be a finite number, got {value!r:.60}")
    if positive and value <= 0:
        raise ValueError(f"{source}: {key} must be positive, got {value!r}")
    return float(value)


def _check_types(data: Mapping[str, Any], source: str) -> None:
    """Types of the keys loaders rely on beyond the totals (every one named when wrong)."""
    for key in ("weighted", "compressed"):
        if not isinstance(data[key], bool):
            raise ValueError(f"{source}: {key} must be true or false, got {data[key]!r:.60}")
    n_thr = data["n_thresholds"]
    if not (_is_number(n_thr) and isinstance(n_thr, int) and n_thr >= 1):
        raise ValueError(f"{source}: n_thresholds must be a positive integer, got {n_thr!r:.60}")
    if not data["weighted"]:
        for key in ("n_pos", "n_neg"):
            if not isinstance(data[key], int):
                raise ValueError(
                    f"{source}: {key} must be an integer in an unweighted summary, got "
                    f"{data[key]!r:.60}"
                )
    costs = data["costs"]
    if costs is not None and not (
        isinstance(costs, dict)
        and set(costs) == {"fp", "fn"}
        and all(_is_number(v) and v > 0 for v in costs.values())
    ):
        raise ValueError(
            f"{source}: costs must be null or {{'fp': >0, 'fn': >0}}, got {costs!r:.80}"
        )


def validate_summary(data: Any, source: str = "summary.json") -> dict[str, Any]:
    """Check a parsed summary against the schema; return it as a dict.

    Raises:
        ValueError: naming the offending key, for a foreign file, a newer schema version, a
            missing key, a wrong type, or a manifest without ``roc_counts.npz``.
    """
    if not isinstance(data, dict):
        raise ValueError(f"{source} must hold a JSON object, got {type(data).__name__}")
    if data.get("schema") != SCHEMA_NAME:
        raise ValueError(
            f"{source} has schema {data.get('schema')!r}, expected {SCHEMA_NAME!r} "
            "(not an mlflow-imbalance summary)"
        )
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValueError(f"{source}: schema_version must be an integer, got {version!r:.60}")
    if version < 1:
        raise ValueError(f"{source}: schema_version must be at least 1, got {version!r:.60}")
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"{source} has schema_version {version}; this mlflow-imbalance reads up to "
            f"{SCHEMA_VERSION} (upgrade the package to read newer runs)"
        )
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise ValueError(f"{source} lacks required key(s) {missing}")
    if not isinstance(data["name"], str) or not data["name"]:
        raise ValueError(f"{source}: name must be a non-empty string, got {data['name']!r}")
    n_pos = _number(data, "n_pos", source, positive=True)
    n_neg = _number(data, "n_neg", source, positive=True)
    _check_types(data, source)
    prevalence = _number(data, "test_prevalence", source, positive=True)
    if not math.isclose(prevalence, n_pos / (n_pos + n_neg), rel_tol=1e-9):
        raise ValueError(
            f"{source}: test_prevalence {prevalence!r} disagrees with n_pos={n_pos!r}, "
            f"n_neg={n_neg!r}"
        )
    if not isinstance(data["prevalences"], list) or not all(
        _is_number(p) and 0 < p < 1 for p in data["prevalences"]
    ):
        raise ValueError(
            f"{source}: prevalences must be a list of numbers in (0, 1), got "
            f"{data['prevalences']!r}"
        )
    digest = data["y_true_digest"]
    if digest is not None and not (isinstance(digest, str) and digest.startswith("sha256:")):
        raise ValueError(f"{source}: y_true_digest must be 'sha256:<hex>' or null, got {digest!r}")
    files = data["files"]
    if not isinstance(files, dict) or "roc_counts.npz" not in files:
        raise ValueError(f"{source}: files must be a manifest listing roc_counts.npz")
    for fname, entry in files.items():
        if (
            not isinstance(fname, str)
            or "/" in fname
            or fname.startswith(".")
            or not isinstance(entry, dict)
            or not isinstance(entry.get("sha256"), str)
            or len(entry["sha256"]) != 64
            or not (
                isinstance(entry.get("bytes", 0), int)
                and not isinstance(entry.get("bytes", 0), bool)
                and 0 <= entry.get("bytes", 0) <= _MAX_INT
            )
        ):
            raise ValueError(f"{source}: bad manifest entry {fname!r}: {entry!r}")
    scores = data["scores"]
    if scores is not None and (
        not isinstance(scores, dict)
        or not isinstance(scores.get("file"), str)
        or scores["file"] not in files
        or not (isinstance(scores.get("n"), int) and not isinstance(scores["n"], bool))
        or not 0 < scores["n"] <= _MAX_INT
    ):
        raise ValueError(
            f"{source}: scores must be null or name a file of the manifest with its number of "
            f"examples n, got {scores!r:.80}"
        )
    if not isinstance(data["headline"], dict):
        raise ValueError(f"{source}: headline must be an object")
    if not isinstance(data["extra"], dict):
        raise ValueError(f"{source}: extra must be an object")
    return data
