"""The on-disk format of ROC counts: encode, decode and validate archives (numpy only).

``roc_counts.npz`` (format version 1, specified in ``docs/format.md``) is a numpy ``.npz``
archive readable with ``numpy.load(path, allow_pickle=False)`` alone. Before anything is read,
the archive's member names and uncompressed sizes are checked, so a foreign or oversized file
(a zip bomb) is rejected without being inflated; every array invariant of
:class:`~mlflow_imbalance.core.counts.RocCounts` is then validated when the counts are built.

This module works on arrays and plain fields only; :class:`RocCounts` builds itself from
:func:`decode` (``RocCounts.from_bytes``, ``RocCounts.load``), so imports point one way:
``counts`` → ``format``.

The score counts of an unlabeled production batch (``production/<batch>.npz``, format
``mlflow-imbalance/score-counts`` version 1) are written and read the same way:
:func:`save_score_counts` / :func:`load_score_counts` (fields for
``ScoreCounts.from_arrays``; ``core.production`` is not imported here).
"""

from __future__ import annotations

import dataclasses
import io
import logging
import math
import os
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

__all__ = [
    "COUNTS_FILENAME",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAX_ARCHIVE_BYTES",
    "MAX_META_BYTES",
    "MAX_THRESHOLDS_RATIO",
    "SCORE_COUNTS_FORMAT_NAME",
    "SCORE_COUNTS_FORMAT_VERSION",
    "MemberSpec",
    "decode",
    "decode_score_counts",
    "encode",
    "encode_score_counts",
    "load_score_counts",
    "read_archive",
    "read_npy_archive",
    "save_score_counts",
    "write_atomic",
]

FORMAT_NAME = "mlflow-imbalance/roc-counts"
FORMAT_VERSION = 1
COUNTS_FILENAME = "roc_counts.npz"
#: Largest total uncompressed size accepted on load (1 GiB: ~40 million thresholds).
MAX_ARCHIVE_BYTES = 1 << 30
#: Largest ratio of a ``thresholds`` member's declared size to its compressed size. Strictly
#: descending distinct doubles deflate at most ~6:1 (measured: consecutive integers 6.1,
#: k / 2^20 6.1, adjacent doubles 5.3, float32 scores 3.7, a linspace 1.4); zeros, the filler of
#: a zip bomb, ~1000:1. Checked (above :data:`RATIO_CHECK_BYTES`) before anything is inflated.
MAX_THRESHOLDS_RATIO = 32
#: Members whose declared size is at most this are not ratio-checked (tiny arrays and headers
#: compress well without being bombs).
RATIO_CHECK_BYTES = 1 << 20
#: Bytes inflated per read while a member is copied into its preallocated array.
_READ_CHUNK = 1 << 20


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


#: Exception types a malformed zip or ``.npy`` member can raise while being parsed; all of them
#: become a ``ValueError`` naming the source.
_PARSE_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OverflowError,
    MemoryError,
    NotImplementedError,
    RuntimeError,
    OSError,
    SyntaxError,
    struct.error,
    TypeError,
    ValueError,
    UnicodeDecodeError,
)
_MAX_HEADER_BYTES = 4096
_UNICODE_MAX_CHARS = 256


@dataclasses.dataclass(frozen=True)
class MemberSpec:
    """What one ``.npy`` member of an archive may hold.

    Attributes:
        dtypes: accepted dtype strings (e.g. ``("<i8", "<f8")``); ``"<U"`` accepts any
            little-endian unicode string up to 256 characters.
        ndim: 0 for a scalar, 1 for a vector.
        min_size: smallest accepted number of elements of a vector.
        same_length_as: key of another vector member this one must match in length (the
            counts' declared length ``K`` then bounds every vector's size before any inflation).
        max_ratio: largest ratio of the declared uncompressed size to the compressed size
            (members above :data:`RATIO_CHECK_BYTES`); None = not checked.
    """

    dtypes: tuple[str, ...]
    ndim: int
    min_size: int = 0
    same_length_as: str | None = None
    max_ratio: float | None = None


_COUNTS_SPEC: dict[str, MemberSpec] = {
    "format": MemberSpec(("<U",), 0),
    "format_version": MemberSpec(("<i8",), 0),
    "thresholds": MemberSpec(("<f8",), 1, 1, max_ratio=MAX_THRESHOLDS_RATIO),
    "tp": MemberSpec(("<i8", "<f8"), 1, 1, same_length_as="thresholds"),
    "fp": MemberSpec(("<i8", "<f8"), 1, 1, same_length_as="thresholds"),
    "n_pos": MemberSpec(("<i8", "<f8"), 0),
    "n_neg": MemberSpec(("<i8", "<f8"), 0),
    "weighted": MemberSpec(("|b1",), 0),
    "compressed": MemberSpec(("|b1",), 0),
    "max_tpr_error": MemberSpec(("<f8",), 0),
    "max_fpr_error": MemberSpec(("<f8",), 0),
}


def _dtype_ok(dtype: np.dtype, accepted: tuple[str, ...]) -> bool:
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        return False
    if dtype.kind == "U":
        return (
            "<U" in accepted
            and dtype.str.startswith("<U")
            and (dtype.itemsize // 4 <= _UNICODE_MAX_CHARS)
        )
    return dtype.str in accepted


def _member_header(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, spec: MemberSpec, source: str
) -> tuple[tuple[int, ...], np.dtype, int]:
    """Parse the ``.npy`` header of a member from its first bytes; check it against ``spec``.

    Returns:
        The shape, the dtype and the header's length in bytes. The member's declared
        uncompressed size must equal header + shape x itemsize exactly, so nothing is allocated
        from an untrusted shape before the archive itself vouches for it.
    """
    member = info.filename
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(
                fh, max_header_size=_MAX_HEADER_BYTES
            )
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(
                fh, max_header_size=_MAX_HEADER_BYTES
            )
        else:  # pragma: no cover - read_magic accepts any major version byte
            raise ValueError(f"unsupported .npy version {version}")
        header_len = fh.tell()
    if not _dtype_ok(dtype, spec.dtypes):
        kinds = {d[1] for d in spec.dtypes}
        what = "numeric" if kinds <= {"i", "f"} else "a boolean" if kinds == {"b"} else "a string"
        raise ValueError(
            f"{source}: {member.removesuffix('.npy')} must be {what} ("
            + " or ".join(repr(d) for d in spec.dtypes)
            + f"), got dtype {dtype.str!r}"
        )
    if len(shape) != spec.ndim or (fortran and len(shape) > 1):
        want = "a scalar (shape ())" if spec.ndim == 0 else "one-dimensional"
        raise ValueError(
            f"{source}: {member.removesuffix('.npy')} must be {want}, got shape {shape}"
        )
    if spec.ndim == 1 and shape[0] < spec.min_size:
        raise ValueError(
            f"{source}: {member.removesuffix('.npy')} must hold at least {spec.min_size} "
            f"value(s), got shape {shape}"
        )
    if any(d < 0 for d in shape):
        raise ValueError(f"{source}: member {member} declares a negative shape {shape}")
    n_items = math.prod(shape)
    expected = header_len + n_items * dtype.itemsize
    if expected != info.file_size:
        raise ValueError(
            f"{source}: member {member} declares shape {shape} of {dtype.str} "
            f"({n_items * dtype.itemsize} bytes of data) but the archive lists "
            f"{info.file_size - header_len} (truncated or crafted file)"
        )
    return shape, dtype, header_len


def read_npy_archive(
    data: bytes,
    members: Mapping[str, MemberSpec],
    *,
    source: str,
    optional: Iterable[str] = (),
    max_bytes: int = MAX_ARCHIVE_BYTES,
) -> dict[str, np.ndarray]:
    """Read the ``.npy`` members of a zip archive safely (no pickle, no unbounded inflation).

    Before anything is decompressed beyond the ``.npy`` headers, checks the member names
    (exactly ``members``, plus any of ``optional``), the compression method, the total
    uncompressed size the zip directory declares (at most ``max_bytes``), and, for every member,
    its dtype (whitelisted), its shape (``ndim``), that the declared size equals the header
    plus shape x itemsize, that vectors declare the length of the member named by
    ``same_length_as`` and that no member claims to inflate beyond its ``max_ratio``. Then each
    member is inflated chunk by chunk into an array of exactly its declared size (memory: the
    arrays plus one 1 MiB chunk; the zip CRC is verified at the end of each member).

    Args:
        data: the archive's bytes.
        members: member key (without ``.npy``) -> :class:`MemberSpec`.
        source: names the file in error messages.
        optional: keys of ``members`` that may be absent.
        max_bytes: limit on the total declared uncompressed size.

    Returns:
        Key -> array (read-only).

    Raises:
        ValueError: naming ``source`` and the member, for anything malformed, truncated,
            oversized or inconsistent.
    """
    optional = set(optional)
    try:
        return _read_npy_archive(data, members, source, optional, max_bytes)
    except ValueError as exc:
        message = str(exc)
        if source not in message:
            message = f"{source}: {message}"
        raise ValueError(message) from None
    except _PARSE_ERRORS as exc:
        raise ValueError(
            f"{source} is not a readable .npz archive ({type(exc).__name__}: {exc})"
        ) from None


def _check_archive(
    zf: zipfile.ZipFile,
    source: str,
    members: Mapping[str, MemberSpec] = _COUNTS_SPEC,
    optional: Iterable[str] = (),
    max_bytes: int = MAX_ARCHIVE_BYTES,
) -> list[zipfile.ZipInfo]:
    """Member names (exactly ``members``) and the declared total size, before any inflation."""
    optional = set(optional)
    infos = zf.infolist()
    names = [i.filename for i in infos]
    expected = {f"{k}.npy" for k in members}
    required = {f"{k}.npy" for k in members if k not in optional}
    missing = required - set(names)
    extra = set(names) - expected
    if missing or extra or len(names) != len(set(names)):
        raise ValueError(
            f"{source} is not an mlflow-imbalance file: "
            f"missing {sorted(missing)}, unexpected {sorted(extra)}"
            + (", duplicated members" if len(names) != len(set(names)) else "")
        )
    total = sum(info.file_size for info in infos)
    if total > max_bytes:
        raise ValueError(f"{source} would inflate to {total} bytes, above the limit of {max_bytes}")
    return infos


def _read_npy_archive(
    data: bytes,
    members: Mapping[str, MemberSpec],
    source: str,
    optional: set[str],
    max_bytes: int,
) -> dict[str, np.ndarray]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{source} is not a valid .npz (zip) archive: {exc}") from None
    with zf:
        infos = _check_archive(zf, source, members, optional, max_bytes)
        headers = {}
        for info in infos:
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise ValueError(
                    f"{source}: member {info.filename} uses zip compression method "
                    f"{info.compress_type}; only stored and deflated members are read"
                )
            if info.flag_bits & 0x1:
                raise ValueError(f"{source}: member {info.filename} is encrypted")
            key = info.filename.removesuffix(".npy")
            try:
                headers[key] = (info, *_member_header(zf, info, members[key], source))
            except (ValueError, *_PARSE_ERRORS) as exc:
                text = str(exc).removeprefix(f"{source}: ")
                if key not in text:
                    text = f"member {info.filename}: {text}"
                raise ValueError(f"{source}: {text}") from None
        _check_budget(headers, members, source)
        out: dict[str, np.ndarray] = {}
        for key, (info, shape, dtype, header_len) in headers.items():
            out[key] = _read_member(zf, info, shape, dtype, header_len, source)
    return out


def _check_budget(
    headers: Mapping[str, tuple[zipfile.ZipInfo, tuple[int, ...], np.dtype, int]],
    members: Mapping[str, MemberSpec],
    source: str,
) -> None:
    """Each member's declared size against the archive's own declared length, before inflating.

    A vector with ``same_length_as`` must declare the length of that member (so the counts'
    declared length ``K`` and dtype bound every vector: ``K * 8`` bytes each), and a member
    with ``max_ratio`` must not claim to inflate more than that many times its compressed size
    (a consistent zero-filled ``thresholds`` of 1000 MiB in a 1 MB file is refused here, not
    after inflating it).
    """
    groups: dict[str, list[str]] = {}
    for key in headers:
        ref = members[key].same_length_as
        if ref is not None and ref in headers:
            groups.setdefault(ref, [ref]).append(key)
    for keys in groups.values():
        lengths = [headers[k][1][0] for k in keys]
        if len(set(lengths)) > 1:
            names = ", ".join(keys[:-1]) + f" and {keys[-1]}"
            got = ", ".join(map(str, lengths[:-1])) + f" and {lengths[-1]}"
            raise ValueError(
                f"{source}: {names} must have the same length, got {got} (declared in the "
                "archive; refused before inflating)"
            )
    for key, (info, _shape, _dtype, _header_len) in headers.items():
        spec = members[key]
        if spec.max_ratio is not None and info.file_size > RATIO_CHECK_BYTES:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > spec.max_ratio:
                raise ValueError(
                    f"{source}: member {info.filename} declares {info.file_size} bytes from "
                    f"{info.compress_size} compressed ({ratio:.0f}:1, above the {spec.max_ratio}:1 "
                    f"that real {key} reach): refused without inflating (a zip bomb?)"
                )


def _read_member(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    shape: tuple[int, ...],
    dtype: np.dtype,
    header_len: int,
    source: str,
) -> np.ndarray:
    """Inflate one member's data into an array of exactly its declared size, chunk by chunk.

    Memory is the array plus one chunk (:data:`_READ_CHUNK`): no intermediate ``bytes`` of the
    whole member. A member that inflates to fewer or more bytes than declared is refused.
    """
    out = np.empty(shape, dtype=dtype)
    view = memoryview(out.reshape(-1).view(np.uint8))
    nbytes = view.nbytes
    with zf.open(info) as fh:
        fh.read(header_len)
        pos = 0
        while pos < nbytes:
            chunk = fh.read(min(_READ_CHUNK, nbytes - pos))
            if not chunk:
                break
            view[pos : pos + len(chunk)] = chunk
            pos += len(chunk)
        if pos != nbytes or fh.read(1):
            raise ValueError(f"{source}: member {info.filename} is truncated")
    out.flags.writeable = False
    return out


def _check_format(arrays: dict[str, np.ndarray], source: str) -> None:
    fmt = str(arrays["format"])
    if fmt != FORMAT_NAME:
        raise ValueError(f"{source} has format {fmt[:100]!r}, expected {FORMAT_NAME!r}")
    version = int(arrays["format_version"])
    if version != FORMAT_VERSION:
        newer = version > FORMAT_VERSION
        raise ValueError(
            f"{source} has format_version {version}; this mlflow-imbalance reads version "
            f"{FORMAT_VERSION}"
            + (" (upgrade the package to read newer files)" if newer else " (not a valid version)")
        )


def _check_invariants(arrays: dict[str, np.ndarray], source: str) -> None:
    """docs/format.md invariants the ``RocCounts`` constructor does not check itself."""
    weighted = bool(arrays["weighted"])
    kinds = {k: arrays[k].dtype.kind for k in ("tp", "fp", "n_pos", "n_neg")}
    if not weighted:
        floats = [k for k, kind in kinds.items() if kind != "i"]
        if floats:
            raise ValueError(
                f"{source}: {floats[0]} has dtype {arrays[floats[0]].dtype.str!r} but the file is "
                "unweighted (weighted=False): unweighted counts are stored as '<i8'"
            )
    else:
        ints = [k for k, kind in kinds.items() if kind != "f"]
        if ints:
            raise ValueError(
                f"{source}: {ints[0]} has dtype {arrays[ints[0]].dtype.str!r} but the file is "
                "weighted: weighted counts are stored as '<f8'"
            )
    for key in ("max_tpr_error", "max_fpr_error"):
        value = float(arrays[key])
        if not (0.0 <= value <= 1.0):
            raise ValueError(f"{source}: {key} must lie in [0, 1], got {value!r}")
    exact = float(arrays["max_tpr_error"]) == 0.0 and float(arrays["max_fpr_error"]) == 0.0
    if exact:
        for arr_key, total_key in (("tp", "n_pos"), ("fp", "n_neg")):
            arr = arrays[arr_key]
            if not (np.all(np.isfinite(arr)) and np.all(arr[1:] >= arr[:-1])):
                continue  # the RocCounts constructor names the broken cumulative order
            last = arr[-1].item()
            total = arrays[total_key].item()
            if weighted:
                same = (
                    math.isfinite(last)
                    and math.isfinite(total)
                    and math.isclose(last, total, rel_tol=1e-9, abs_tol=0.0)
                )
            else:
                same = last == total
            if not same and 0 <= last < total:  # above n_pos: the constructor says so
                raise ValueError(
                    f"{source}: {arr_key}[-1]={last!r} must equal {total_key}={total!r} in exact "
                    "counts (max_tpr_error = max_fpr_error = 0: the lowest threshold is always "
                    "kept)"
                )


def decode(data: bytes, source: str = "counts archive") -> dict[str, Any]:
    """Parse and validate the bytes of a counts archive into ``RocCounts`` fields.

    Every member's dtype, shape and declared size are checked before it is read
    (:func:`read_npy_archive`), then the format, the version and the docs/format.md invariants
    that the ``RocCounts`` constructor does not check itself (dtype per ``weighted``,
    ``tp[-1] == n_pos`` and ``fp[-1] == n_neg`` for exact counts, error bounds).

    Returns:
        The keyword arguments of ``RocCounts(...)``; building the object checks the remaining
        array invariants (and the caller names ``source`` in any error).

    Raises:
        ValueError: naming ``source``, for anything malformed, truncated, oversized or
            inconsistent.
    """
    arrays = read_npy_archive(data, _COUNTS_SPEC, source=source)
    _check_format(arrays, source)
    _check_invariants(arrays, source)
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


# ---------------------------------------------------------------------------- score counts
#: Format name of a production batch's score counts (``production/<batch>.npz``, docs/format.md).
SCORE_COUNTS_FORMAT_NAME = "mlflow-imbalance/score-counts"
SCORE_COUNTS_FORMAT_VERSION = 1
#: Largest ``meta`` member (UTF-8 JSON bytes) written or read.
MAX_META_BYTES = 1 << 16

_SCORE_COUNTS_SPEC: dict[str, MemberSpec] = {
    "format": MemberSpec(("<U",), 0),
    "format_version": MemberSpec(("<i8",), 0),
    "batch": MemberSpec(("<U",), 0),
    "thresholds": MemberSpec(("<f8",), 1, 1, max_ratio=MAX_THRESHOLDS_RATIO),
    "n_above": MemberSpec(("<i8",), 1, 1, same_length_as="thresholds"),
    "n": MemberSpec(("<i8",), 0),
    "max_share_error": MemberSpec(("<f8",), 0),
    "meta": MemberSpec(("|u1",), 1, 0),
}


def _meta_bytes(meta: Mapping[str, Any] | None) -> bytes:
    import json

    if meta is not None and not isinstance(meta, Mapping):
        raise ValueError(f"meta must be a mapping or None, got {type(meta).__name__}")
    try:
        text = json.dumps(dict(meta or {}), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"meta must be JSON-serialisable (finite numbers): {exc}") from None
    data = text.encode("utf-8")
    if len(data) > MAX_META_BYTES:
        raise ValueError(f"meta is {len(data)} bytes as JSON, above the limit of {MAX_META_BYTES}")
    return data


def encode_score_counts(
    sc: Any,
    *,
    batch: str,
    meta: Mapping[str, Any] | None = None,
    max_share_error: float = 0.0,
) -> bytes:
    """Serialise score counts to the bytes of a version-1 ``score-counts`` ``.npz`` archive.

    Args:
        sc: a :class:`~mlflow_imbalance.core.production.ScoreCounts` (anything with
            ``to_arrays()`` giving ``thresholds``, ``n_above`` and ``n``).
        batch: the batch label stored with the counts (1-256 characters).
        meta: JSON entries stored with the counts (at most :data:`MAX_META_BYTES` as JSON).
        max_share_error: largest error of the share ``q(t)`` introduced by dropping thresholds
            (0 = exact; see docs/format.md).

    Raises:
        ValueError: naming the argument, for counts or options the reader would refuse.
    """
    arrays = sc.to_arrays()
    if not isinstance(batch, str) or not 1 <= len(batch) <= _UNICODE_MAX_CHARS:
        raise ValueError(f"batch must be a string of 1-{_UNICODE_MAX_CHARS} characters: {batch!r}")
    err = float(max_share_error)
    if not 0.0 <= err <= 1.0:
        raise ValueError(f"max_share_error must lie in [0, 1], got {max_share_error!r}")
    fields = {
        "thresholds": np.asarray(arrays["thresholds"], dtype="<f8"),
        "n_above": np.asarray(arrays["n_above"], dtype="<i8"),
        "n": np.asarray(arrays["n"], dtype="<i8").reshape(()),
    }
    _check_score_invariants(fields, "sc")
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        format=np.array(SCORE_COUNTS_FORMAT_NAME),
        format_version=np.array(SCORE_COUNTS_FORMAT_VERSION, dtype="<i8"),
        batch=np.array(batch),
        max_share_error=np.array(err, dtype="<f8"),
        meta=np.frombuffer(_meta_bytes(meta), dtype=np.uint8),
        **fields,
    )
    return buf.getvalue()


def _check_score_invariants(arrays: Mapping[str, np.ndarray], source: str) -> None:
    """The docs/format.md invariants of score counts (exact cumulative counts, distinct scores)."""
    thr, cnt, n = arrays["thresholds"], arrays["n_above"], int(arrays["n"])
    if thr.size == 0 or thr.size != cnt.size:
        raise ValueError(
            f"{source}: thresholds and n_above must be non-empty and of the same length, "
            f"got {thr.size} and {cnt.size}"
        )
    bad = np.flatnonzero(~np.isfinite(thr))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{source}: thresholds must be finite: thresholds[{i}]={thr[i].item()!r}")
    down = np.flatnonzero(thr[1:] >= thr[:-1])
    if down.size:
        i = int(down[0])
        raise ValueError(
            f"{source}: thresholds must be strictly descending: thresholds[{i + 1}]="
            f"{thr[i + 1].item()!r} follows thresholds[{i}]={thr[i].item()!r}"
        )
    if cnt[0] < 1:
        raise ValueError(f"{source}: n_above[0] must be >= 1 (a stored score), got {cnt[0]}")
    flat = np.flatnonzero(cnt[1:] <= cnt[:-1])
    if flat.size:
        i = int(flat[0])
        raise ValueError(
            f"{source}: n_above must be strictly increasing (each threshold is a score some case "
            f"has): n_above[{i + 1}]={cnt[i + 1].item()} <= n_above[{i}]={cnt[i].item()}"
        )
    if n < 1 or cnt[-1] != n:
        raise ValueError(
            f"{source}: n_above[-1]={cnt[-1].item()} must equal n={n} (the lowest score is "
            "always kept), and n must be >= 1"
        )


def decode_score_counts(data: bytes, source: str = "score counts archive") -> dict[str, Any]:
    """Parse and validate the bytes of a score-counts archive, in bounded memory.

    Read as :func:`decode` reads ROC counts (:func:`read_npy_archive`: member names, dtypes,
    shapes, declared lengths and compression ratio checked before anything is inflated), then
    the format, the version and the invariants of docs/format.md.

    Returns:
        ``{"thresholds", "n_above", "n", "batch", "max_share_error", "meta"}``: the first three
        are the arguments of ``ScoreCounts.from_arrays``.

    Raises:
        ValueError: naming ``source`` and the member, for anything malformed, truncated,
            oversized or inconsistent.
    """
    import json

    arrays = read_npy_archive(data, _SCORE_COUNTS_SPEC, source=source)
    fmt = str(arrays["format"])
    if fmt != SCORE_COUNTS_FORMAT_NAME:
        raise ValueError(
            f"{source} has format {fmt[:100]!r}, expected {SCORE_COUNTS_FORMAT_NAME!r}"
        )
    version = int(arrays["format_version"])
    if version != SCORE_COUNTS_FORMAT_VERSION:
        hint = "upgrade the package" if version > SCORE_COUNTS_FORMAT_VERSION else "not valid"
        raise ValueError(
            f"{source} has format_version {version}; this mlflow-imbalance reads version "
            f"{SCORE_COUNTS_FORMAT_VERSION} ({hint})"
        )
    _check_score_invariants(arrays, source)
    err = float(arrays["max_share_error"])
    if not 0.0 <= err <= 1.0:
        raise ValueError(f"{source}: max_share_error must lie in [0, 1], got {err!r}")
    batch = str(arrays["batch"])
    if not batch:
        raise ValueError(f"{source}: batch must be a non-empty string")
    raw = arrays["meta"]
    if raw.size > MAX_META_BYTES:
        raise ValueError(f"{source}: meta holds {raw.size} bytes, above {MAX_META_BYTES}")
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{source}: meta is not UTF-8 JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{source}: meta must be a JSON object, got {type(meta).__name__}")
    return {
        "thresholds": arrays["thresholds"],
        "n_above": arrays["n_above"],
        "n": int(arrays["n"]),
        "batch": batch,
        "max_share_error": err,
        "meta": meta,
    }


def save_score_counts(
    path: str | os.PathLike[str],
    sc: Any,
    *,
    batch: str,
    meta: Mapping[str, Any] | None = None,
    max_share_error: float = 0.0,
) -> Path:
    """Write score counts atomically to ``path`` (:func:`encode_score_counts`, then rename)."""
    return write_atomic(
        encode_score_counts(sc, batch=batch, meta=meta, max_share_error=max_share_error), path
    )


def load_score_counts(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a file written by :func:`save_score_counts` (:func:`decode_score_counts` fields).

    ``ScoreCounts.from_arrays(f["thresholds"], f["n_above"], f["n"])`` builds the counts.
    """
    return decode_score_counts(read_archive(path), source=str(path))
