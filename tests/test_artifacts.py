"""The roc_counts.npz format: exact round trip, numpy-only reading, validation on load."""

from __future__ import annotations

import io
import struct
import zipfile

import numpy as np
import pytest

from mlflow_imbalance import RocCounts, artifacts
from mlflow_imbalance.core import format as core_format


def _counts(weighted: bool = False) -> RocCounts:
    rng = np.random.default_rng(0)
    y = rng.random(2000) < 0.1
    y[:2] = [True, False]
    s = np.round(rng.normal(size=2000) + y, 2)
    w = rng.exponential(size=2000) if weighted else None
    return RocCounts.from_scores(y, s, sample_weight=w)


@pytest.mark.parametrize(
    "counts",
    [
        _counts(),
        _counts(weighted=True),
        _counts().reduce(10),
        RocCounts.from_scores([0, 1, 1, 0], [0.1, 0.4, 0.4, 0.9], compress=False),
    ],
    ids=["plain", "weighted", "reduced", "uncompressed"],
)
def test_round_trip_exact(tmp_path, counts):
    path = tmp_path / "sub" / artifacts.COUNTS_FILENAME
    counts.save(path)
    back = RocCounts.load(path)
    assert back == counts  # bit-exact arrays, totals and errors
    assert back.compressed == counts.compressed and back.weighted == counts.weighted
    assert back.tp.dtype == counts.tp.dtype
    assert back.max_tpr_error == counts.max_tpr_error
    if counts is not None and not counts.is_exact:
        assert back.max_tpr_error > 0
    assert list(tmp_path.joinpath("sub").iterdir()) == [path]  # no temporary left behind


def test_readable_with_numpy_alone(tmp_path):
    c = _counts()
    path = tmp_path / "roc_counts.npz"
    c.save(path)
    with np.load(path, allow_pickle=False) as npz:
        assert str(npz["format"]) == artifacts.FORMAT_NAME
        assert int(npz["format_version"]) == 1
        np.testing.assert_array_equal(npz["thresholds"], c.thresholds)
        np.testing.assert_array_equal(npz["tp"], c.tp)
        np.testing.assert_array_equal(npz["fp"], c.fp)
        assert npz["tp"].dtype == np.dtype("<i8") and npz["thresholds"].dtype == np.dtype("<f8")
        assert int(npz["n_pos"]) == c.n_pos and int(npz["n_neg"]) == c.n_neg


def _arrays(counts: RocCounts) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(artifacts.counts_to_bytes(counts)), allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _tampered(**changes) -> bytes:
    arrays = _arrays(RocCounts([0.9, 0.5, 0.1], [1, 2, 2], [0, 1, 3], 2, 3))
    arrays.update({k: np.asarray(v) for k, v in changes.items()})
    return _npz(arrays)


@pytest.mark.parametrize(
    ("changes", "pattern"),
    [
        ({"format_version": np.int64(2)}, r"format_version 2; this mlflow-imbalance reads version"),
        ({"format": np.array("something/else")}, r"has format 'something/else'"),
        ({"thresholds": np.array([0.9, 0.9, 0.1])}, r"strictly descending: thresholds\[1\]=0.9"),
        ({"tp": np.array([1, 0, 2])}, r"tp must be cumulative .*tp\[1\]=0 < tp\[0\]=1"),
        ({"fp": np.array([0, 2, 1])}, r"fp must be cumulative"),
        ({"fp": np.array([-1, 1, 3])}, r"fp must be non-negative, found -1"),
        ({"tp": np.array([1, 2])}, r"same length, got 3, 2 and 3"),
        ({"tp": np.array([1, 2, 5])}, r"tp\[-1\]=5 exceeds n_pos=2"),
        ({"n_neg": np.int64(0)}, r"n_neg must be positive, got 0"),
        ({"max_fpr_error": np.float64(1.5)}, r"max_fpr_error must lie in \[0, 1\]"),
        ({"tp": np.array(["a", "b", "c"])}, r"tp must be numeric"),
        ({"n_pos": np.array([2, 2])}, r"n_pos must be a scalar"),
    ],
)
def test_load_rejects_invalid_content(tmp_path, changes, pattern):
    path = tmp_path / "roc_counts.npz"
    path.write_bytes(_tampered(**changes))
    with pytest.raises(ValueError, match=pattern):
        RocCounts.load(path)


def test_load_rejects_foreign_files(tmp_path):
    path = tmp_path / "roc_counts.npz"
    path.write_bytes(b"this is not a zip file at all")
    with pytest.raises(ValueError, match=r"is not a valid \.npz \(zip\) archive"):
        RocCounts.load(path)
    good = _arrays(_counts())
    extra = _npz({**good, "payload": np.arange(3)})
    with pytest.raises(ValueError, match=r"unexpected \['payload.npy'\]"):
        artifacts.counts_from_bytes(extra)
    missing = _npz({k: v for k, v in good.items() if k != "fp"})
    with pytest.raises(ValueError, match=r"missing \['fp.npy'\]"):
        artifacts.counts_from_bytes(missing)


def _declare_size(data: bytes, member: str, size: int) -> bytes:
    """Rewrite the uncompressed size a zip's central directory declares for one member."""
    buf = bytearray(data)
    name = member.encode()
    pos = buf.find(b"PK\x01\x02")
    while pos != -1:
        name_len = struct.unpack_from("<H", buf, pos + 28)[0]
        if bytes(buf[pos + 46 : pos + 46 + name_len]) == name:
            struct.pack_into("<I", buf, pos + 24, size)
            return bytes(buf)
        pos = buf.find(b"PK\x01\x02", pos + 4)
    raise AssertionError(f"{member} not found")


def test_zip_bomb_rejected_before_inflating():
    data = artifacts.counts_to_bytes(_counts())
    bomb = _declare_size(data, "thresholds.npy", 0xFFFF_FFF0)  # declares ~4 GiB
    with zipfile.ZipFile(io.BytesIO(bomb)) as zf:
        declared = sum(i.file_size for i in zf.infolist())
        assert declared > artifacts.MAX_ARCHIVE_BYTES
        with pytest.raises(ValueError, match=r"would inflate to \d+ bytes, above the limit"):
            core_format._check_archive(zf, "bomb")
    with pytest.raises(ValueError, match=r"would inflate to \d+ bytes"):
        artifacts.counts_from_bytes(bomb)
    assert len(bomb) < 100_000  # the check costs nothing: the archive itself is small


def test_write_counts_type_check(tmp_path):
    with pytest.raises(TypeError, match="counts must be RocCounts"):
        artifacts.write_counts({"tp": [1]}, tmp_path / "x.npz")
