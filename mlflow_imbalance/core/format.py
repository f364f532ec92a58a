"""The on-disk format of ROC counts: encode, decode and validate archives (numpy only).

``roc_counts.npz`` (format version 1, specified in ``docs/format.md``) is a numpy ``.npz``
archive readable with ``numpy.load(path, allow_pickle=False)`` alone. Before anything is read,
the archive's member names and uncompressed sizes are checked, so a foreign or oversized file
(a zip bomb) is rejected without being inflated; every array invariant of
:class:`~mlflow_imbalance.core.counts.RocCounts` is then validated when the counts are built.

This module works on arrays and plain fields only; :class:`RocCounts` builds itself from
:func:`decode` (``RocCounts.from_bytes``, ``RocCounts.load``), so imports point one way:
``counts`` → ``format``.
"""

from __future__ import annotations

import io
import logging
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

__all__ = [
    "COUNTS_FILENAME",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAX_ARCHIVE_BYTES",
    "decode",
    "encode",
    "read_archive",
    "write_atomic",
]

FORMAT_NAME = "mlflow-imbalance/roc-counts"
FORMAT_VERSION = 1
COUNTS_FILENAME = "roc_counts.npz"
#: Largest total uncompressed size accepted on load (1 GiB: ~40 million thresholds).
MAX_ARCHIVE_BYTES = 1 << 30

_ARRAY_KEYS = ("thresholds", "tp", "fp")
_SCALAR_KEYS = (
    "format",
    "format_version",
    "n_pos",
    "n_neg",
    "weighted",
    "compressed",
    "max_tpr_error",
    "max_fpr_error",
)
_EXPECTED_MEMBERS = {f"{k}.npy" for k in _ARRAY_KEYS + _SCALAR_KEYS}


def encode(counts: Any) -> bytes:
    """Serialise counts (a ``RocCounts``) to the bytes of a version-1 ``.npz`` archive."""
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        format=np.array(FORMAT_NAME),
        format_version=np.array(FORMAT_VERSION, dtype=np.int64),
        thresholds=np.asarray(counts.thresholds, dtype="<f8"),
        tp=np.asarray(counts.tp, dtype="<f8" if counts.weighted else "<i8"),
        fp=np.asarray(counts.fp, dtype="<f8" if counts.weighted else "<i8"),
        n_pos=np.array(counts.n_pos, dtype="<f8" if counts.weighted else "<i8"),
        n_neg=np.array(counts.n_neg, dtype="<f8" if counts.weighted else "<i8"),
        weighted=np.array(counts.weighted),
        compressed=np.array(counts.compressed),
        max_tpr_error=np.array(counts.max_tpr_error, dtype="<f8"),
        max_fpr_error=np.array(counts.max_fpr_error, dtype="<f8"),
    )
    return buf.getvalue()


def write_atomic(data: bytes, path: str | os.PathLike[str]) -> Path:
    """Write ``data`` atomically to ``path`` (a temporary file renamed into place)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _check_archive(zf: zipfile.ZipFile, source: str) -> None:
    names = set(zf.namelist())
    missing = _EXPECTED_MEMBERS - names
    extra = names - _EXPECTED_MEMBERS
    if missing or extra:
        raise ValueError(
            f"{source} is not an mlflow-imbalance counts file: "
            f"missing {sorted(missing)}, unexpected {sorted(extra)}"
        )
    total = sum(info.file_size for info in zf.infolist())
    if total > MAX_ARCHIVE_BYTES:
        raise ValueError(
            f"{source} would inflate to {total} bytes, above the limit of {MAX_ARCHIVE_BYTES}"
        )


def decode(data: bytes, source: str = "counts archive") -> dict[str, Any]:
    """Parse and validate the bytes of a counts archive into ``RocCounts`` fields.

    Returns:
        The keyword arguments of ``RocCounts(...)``; building the object checks the array
        invariants (and the caller names ``source`` in any error).
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{source} is not a valid .npz (zip) archive: {exc}") from None
    with zf:
        _check_archive(zf, source)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in _ARRAY_KEYS + _SCALAR_KEYS}
    except ValueError as exc:
        raise ValueError(f"{source} holds an unreadable array: {exc}") from None
    fmt = str(arrays["format"])
    if fmt != FORMAT_NAME:
        raise ValueError(f"{source} has format {fmt!r}, expected {FORMAT_NAME!r}")
    version = int(arrays["format_version"])
    if version != FORMAT_VERSION:
        raise ValueError(
            f"{source} has format_version {version}; this mlflow-imbalance reads version "
            f"{FORMAT_VERSION} (upgrade the package to read newer files)"
        )
    for key in _SCALAR_KEYS:
        if arrays[key].shape != ():
            raise ValueError(f"{source}: {key} must be a scalar, got shape {arrays[key].shape}")
    for key in _ARRAY_KEYS:
        if arrays[key].dtype.kind not in "fi":
            raise ValueError(f"{source}: {key} must be numeric, got dtype {arrays[key].dtype}")
    return {
        "thresholds": arrays["thresholds"],
        "tp": arrays["tp"],
        "fp": arrays["fp"],
        "n_pos": arrays["n_pos"].item(),
        "n_neg": arrays["n_neg"].item(),
        "compressed": bool(arrays["compressed"]),
        "max_tpr_error": float(arrays["max_tpr_error"]),
        "max_fpr_error": float(arrays["max_fpr_error"]),
        "weighted": bool(arrays["weighted"]),
    }


def read_archive(path: str | os.PathLike[str]) -> bytes:
    """Read the bytes of a counts file, refusing files above :data:`MAX_ARCHIVE_BYTES`."""
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise ValueError(f"{p} is {size} bytes, above the limit of {MAX_ARCHIVE_BYTES}")
    return p.read_bytes()
