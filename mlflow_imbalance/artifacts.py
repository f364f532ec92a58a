"""Counts files on disk (public, stable names; the format lives in :mod:`.core.format`)."""

from __future__ import annotations

import os
from pathlib import Path

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.format import (
    COUNTS_FILENAME,
    FORMAT_NAME,
    FORMAT_VERSION,
    MAX_ARCHIVE_BYTES,
    write_atomic,
)

__all__ = [
    "COUNTS_FILENAME",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAX_ARCHIVE_BYTES",
    "counts_from_bytes",
    "counts_to_bytes",
    "read_counts",
    "write_counts",
]


def counts_to_bytes(counts: RocCounts) -> bytes:
    """Serialise counts to the bytes of a version-1 ``.npz`` archive."""
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be RocCounts, got {type(counts).__name__}")
    return counts.to_bytes()


def counts_from_bytes(data: bytes, source: str = "counts archive") -> RocCounts:
    """Parse and validate the bytes of a counts archive."""
    return RocCounts.from_bytes(data, source)


def write_counts(counts: RocCounts, path: str | os.PathLike[str]) -> Path:
    """Write counts atomically to ``path`` (a temporary file renamed into place)."""
    return write_atomic(counts_to_bytes(counts), path)


def read_counts(path: str | os.PathLike[str]) -> RocCounts:
    """Read and validate a counts file written by :func:`write_counts`."""
    return RocCounts.load(path)
