"""Corrupt, truncated, crafted and oversized artifacts: every case a clear ValueError.

Truncations, byte flips, crafted ``.npy`` headers, zip bombs in every member (declared sizes
above the limit, and deflate streams that inflate far beyond what the zip declares), edge cases
of ``summary.json``; the report skips such a run with its reason and keeps the others. Plus a
property test: whatever ``save`` / ``log_scores`` writes loads back equal.
"""

from __future__ import annotations

import io
import json
import re
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import mlflow
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import mlflow_imbalance as mi
from mlflow_imbalance import RocCounts
from mlflow_imbalance.tracking.summary import summary_from_json

MEMBERS = (
    "format",
    "format_version",
    "thresholds",
    "tp",
    "fp",
    "n_pos",
    "n_neg",
    "weighted",
    "compressed",
    "max_tpr_error",
    "max_fpr_error",
)


def _counts() -> RocCounts:
    rng = np.random.default_rng(3)
    y = rng.random(500) < 0.2
    return RocCounts.from_scores(y, np.round(rng.normal(size=500) + y, 2))


GOOD = _counts().to_bytes()


def _load(data: bytes, source: str = "the file") -> RocCounts:
    return RocCounts.from_bytes(data, source=source)


def _arrays() -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(GOOD), allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _npy_header(descr: str, shape: tuple, fortran: bool = False, pad_to: int = 0) -> bytes:
    """A hand-made ``.npy`` v1.0 header (no data)."""
    text = f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}"
    total = max(len(text) + 11, pad_to)
    total += (-total) % 64
    text = text.ljust(total - 11) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(f"{name}.npy", data)
    return buf.getvalue()


def _members(**replace: bytes) -> dict[str, bytes]:
    out = {k: _npy(v) for k, v in _arrays().items()}
    out.update(replace)
    return out


def _patch_sizes(data: bytes, member: str, size: int) -> bytes:
    """Rewrite the uncompressed size of one member (central directory and local header)."""
    buf = bytearray(data)
    name = f"{member}.npy".encode()
    pos = buf.find(b"PK\x01\x02")
    while pos != -1:
        n = struct.unpack_from("<H", buf, pos + 28)[0]
        if bytes(buf[pos + 46 : pos + 46 + n]) == name:
            struct.pack_into("<I", buf, pos + 24, size)
            local = struct.unpack_from("<I", buf, pos + 42)[0]
            struct.pack_into("<I", buf, local + 22, size)
            return bytes(buf)
        pos = buf.find(b"PK\x01\x02", pos + 4)
    raise AssertionError(member)


def _bomb_member(header: bytes, zero_bytes: int) -> tuple[bytes, int]:
    """A deflated stream of ``header`` then ``zero_bytes`` zeros, and its CRC."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = [comp.compress(header)]
    crc = zlib.crc32(header)
    chunk = bytes(1 << 20)
    left = zero_bytes
    while left:
        piece = chunk[: min(left, len(chunk))]
        out.append(comp.compress(piece))
        crc = zlib.crc32(piece, crc)
        left -= len(piece)
    out.append(comp.flush())
    return b"".join(out), crc


def _zip_raw(members: dict[str, tuple[bytes, int, int, int]]) -> bytes:
    """A zip from raw deflate streams: name -> (stream, crc, declared size, method)."""
    local_parts, central, offset = [], [], 0
    for name, (stream, crc, size, method) in members.items():
        fname = f"{name}.npy".encode()
        local = struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(stream), size, len(fname), 0
        )
        local_parts.append(local + fname + stream)
        central.append(
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                method,
                0,
                0,
                crc,
                len(stream),
                size,
                len(fname),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + fname
        )
        offset += len(local_parts[-1])
    cd = b"".join(central)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), len(cd), offset, 0)
    return b"".join(local_parts) + cd + end


# ------------------------------------------------------------------------- truncation, flips
@pytest.mark.parametrize("fraction", [i / 25 for i in range(25)])
def test_truncated_file_is_a_value_error(fraction):
    cut = GOOD[: int(len(GOOD) * fraction)]
    with pytest.raises(ValueError, match="the file"):
        _load(cut)


@pytest.mark.parametrize("seed", range(60))
def test_random_byte_flips_never_escape_as_another_error(seed):
    rng = np.random.default_rng(seed)
    data = bytearray(GOOD)
    for pos in rng.choice(len(data), size=8, replace=False):
        data[pos] ^= int(rng.integers(1, 256))
    try:
        back = _load(bytes(data))
    except ValueError as exc:
        assert "the file" in str(exc)
    else:  # the flips hit bytes nothing reads (e.g. zip timestamps): the counts are intact
        assert back == _counts()


def test_flips_inside_every_member_payload_are_caught():
    with zipfile.ZipFile(io.BytesIO(GOOD)) as zf:
        infos = zf.infolist()
    for info in infos:
        data = bytearray(GOOD)
        start = info.header_offset + 30 + len(info.filename)
        data[start + info.compress_size // 2] ^= 0x55  # inside the deflate stream
        with pytest.raises(ValueError, match="the file"):
            _load(bytes(data))


# ------------------------------------------------------------------------- crafted headers
def test_huge_declared_shape_is_refused_without_allocating():
    header = _npy_header("<i8", (10**11,))
    data = _zip(_members(tp=header + bytes(64)))
    assert len(data) < 8000
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"tp.*\(100000000000,\)"):
            _load(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 << 20


@pytest.mark.parametrize(
    ("member", "header", "pattern"),
    [
        ("tp", _npy_header("|O", (3,)), r"tp must be numeric .*got dtype '\|O'"),
        ("tp", _npy_header(">i8", (3,)), r"tp must be numeric .*'>i8'"),
        ("thresholds", _npy_header("<f4", (3,)), r"thresholds must be numeric .*'<f4'"),
        ("tp", _npy_header("<i8", (3, 1)), r"tp must be one-dimensional, got shape \(3, 1\)"),
        ("tp", _npy_header("<i8", (0,)), r"tp must hold at least 1 value"),
        ("n_pos", _npy_header("<i8", (1,)), r"n_pos must be a scalar"),
        ("weighted", _npy_header("<i8", ()), r"weighted must be a boolean"),
        ("format", _npy_header("<U100000", ()), r"format must be a string"),
        ("format", _npy_header("|S27", ()), r"format must be a string"),
        ("tp", _npy_header("[('a', '<i8')]", (3,)), r"member tp\.npy: .*not a valid dtype"),
        ("tp", _npy_header("<i8", (3,), pad_to=8192), r"not a readable|header"),
        ("tp", b"\x93NUMPY\x09\x00garbage", r"not a readable|version"),
        ("tp", b"PK\x03\x04 not an npy at all", r"not a readable|magic"),
    ],
)
def test_crafted_headers(member, header, pattern):
    data = _zip(_members(**{member: header + bytes(24)}))
    with pytest.raises(ValueError, match=pattern):
        _load(data)


def test_header_shape_disagreeing_with_the_declared_size():
    body = _npy(np.arange(1, 4, dtype="<i8"))
    lying = body[:10] + body[10:].replace(b"(3,)", b"(9,)")
    with pytest.raises(ValueError, match=r"declares shape \(9,\).*truncated or crafted"):
        _load(_zip(_members(tp=lying)))


def test_unsupported_compression_and_duplicates():
    members = _members()
    raw = {k: (v, zlib.crc32(v), len(v), 0) for k, v in members.items()}
    stored = _zip_raw(raw)
    assert _load(stored) == _counts()  # stored members are fine
    bzip = _zip_raw({**raw, "tp": (raw["tp"][0], raw["tp"][1], raw["tp"][2], 12)})
    with pytest.raises(ValueError, match="compression method 12"):
        _load(bzip)
    dup_buf = io.BytesIO()
    with zipfile.ZipFile(dup_buf, "w") as zf:
        for k, v in members.items():
            zf.writestr(f"{k}.npy", v)
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("tp.npy", members["tp"])
    with pytest.raises(ValueError, match="duplicated"):
        _load(dup_buf.getvalue())


# ------------------------------------------------------------------------- zip bombs
@pytest.mark.parametrize("member", MEMBERS)
def test_declared_bomb_in_every_member(member):
    bomb = _patch_sizes(GOOD, member, 0xFFFF_FFF0)
    with pytest.raises(ValueError, match=r"would inflate to \d+ bytes, above the limit"):
        _load(bomb)


@pytest.mark.parametrize("member", MEMBERS)
def test_real_deflate_bomb_in_every_member(member):
    """A member whose stream inflates to 64 MiB while the zip declares the original size."""
    members = _members()
    raw = {}
    for k, v in members.items():
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        raw[k] = (c.compress(v) + c.flush(), zlib.crc32(v), len(v), 8)
    n = (64 << 20) // 8
    stream, crc = _bomb_member(_npy_header("<f8", (n,)), n * 8)
    raw[member] = (stream, crc, len(members[member]), 8)  # declares the small original size
    data = _zip_raw(raw)
    assert len(data) < 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="the file"):
            _load(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"{peak / 2**20:.0f} MiB allocated"


@pytest.mark.parametrize("member", ["thresholds", "tp", "format"])
def test_honest_bomb_within_limit_still_checked(member):
    """A member that honestly declares 64 MiB of zeros: read (within the limit), then refused."""
    members = _members()
    raw = {}
    for k, v in members.items():
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        raw[k] = (c.compress(v) + c.flush(), zlib.crc32(v), len(v), 8)
    n = (64 << 20) // 8
    header = _npy_header("<f8" if member != "tp" else "<i8", (n,))
    stream, crc = _bomb_member(header, n * 8)
    raw[member] = (stream, crc, len(header) + n * 8, 8)
    with pytest.raises(ValueError, match="the file"):
        _load(_zip_raw(raw))


# ------------------------------------------------------------------------- format invariants
@pytest.mark.parametrize(
    ("changes", "pattern"),
    [
        (
            {"tp": np.array([1, 2, 2], dtype="<f8")},
            r"tp has dtype '<f8' but the file is unweighted",
        ),
        ({"n_pos": np.float64(2)}, r"n_pos has dtype '<f8' but the file is unweighted"),
        ({"tp": np.array([1, 1, 1])}, r"tp\[-1\]=1 must equal n_pos=2 in exact counts"),
        ({"fp": np.array([0, 1, 2])}, r"fp\[-1\]=2 must equal n_neg=3"),
        ({"format_version": np.int64(-1)}, r"format_version -1.*not a valid version"),
        ({"format_version": np.int64(0)}, r"format_version 0"),
        ({"format_version": np.int64(2)}, r"upgrade the package"),
        ({"max_tpr_error": np.float64(np.nan)}, r"max_tpr_error must lie in \[0, 1\]"),
        ({"weighted": np.bool_(True)}, r"weighted counts are stored as '<f8'"),
        ({"format_version": np.int32(1)}, r"format_version must be numeric .*'<i4'"),
    ],
)
def test_format_invariants(changes, pattern):
    base = {k: np.asarray(v) for k, v in _arrays().items()}
    small = RocCounts([0.9, 0.5, 0.1], [1, 2, 2], [0, 1, 3], 2, 3).to_bytes()
    with np.load(io.BytesIO(small), allow_pickle=False) as npz:
        base = {k: npz[k] for k in npz.files}
    base.update(changes)
    buf = io.BytesIO()
    np.savez_compressed(buf, **base)
    with pytest.raises(ValueError, match=pattern):
        _load(buf.getvalue())


def test_reduced_counts_may_end_below_the_totals():
    c = RocCounts([0.9, 0.5], [1, 2], [0, 1], 3, 4, compressed=True, max_tpr_error=0.3,
                  max_fpr_error=0.7)  # fmt: skip
    assert _load(c.to_bytes()) == c


def test_missing_and_oversized_files(tmp_path):
    with pytest.raises(OSError):
        RocCounts.load(tmp_path / "nope.npz")
    with pytest.raises(ValueError, match=r"is not a valid \.npz"):
        _load(b"")


# ------------------------------------------------------------------------- summary.json
def _summary() -> dict:
    return {
        "schema": "mlflow-imbalance/summary",
        "schema_version": 1,
        "name": "test",
        "package_version": "1",
        "n_pos": 2,
        "n_neg": 3,
        "n_thresholds": 3,
        "test_prevalence": 0.4,
        "weighted": False,
        "compressed": True,
        "y_true_digest": None,
        "prevalences": [0.01],
        "costs": None,
        "headline": {},
        "files": {"roc_counts.npz": {"sha256": "0" * 64, "bytes": 10, "role": "counts"}},
        "scores": None,
        "extra": {},
    }


def _text(**changes) -> str:
    s = _summary()
    s.update(changes)
    return json.dumps(s)


def test_valid_summary_passes():
    assert summary_from_json(_text())["n_pos"] == 2


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (_text().replace('"n_pos": 2', '"n_pos": 1' + "0" * 400), r"out of range"),
        (_text().replace('"n_pos": 2', '"n_pos": ' + "9" * 5000), r"out of range"),
        (_text().replace('"n_pos": 2', '"n_pos": 1e400'), r"n_pos must be a finite number"),
        (_text().replace('"n_pos": 2', '"n_pos": NaN'), r"NaN"),
        (_text().replace('"test_prevalence": 0.4', '"test_prevalence": Infinity'), r"Infinity"),
        (_text(n_pos="2"), r"n_pos must be a finite number"),
        (_text(n_pos=True), r"n_pos must be a finite number"),
        (_text(n_pos=2.5), r"n_pos must be an integer in an unweighted summary"),
        (_text(n_neg=-3), r"n_neg must be positive"),
        (_text(schema_version=-1), r"schema_version must be at least 1"),
        (_text(schema_version=0), r"schema_version must be at least 1"),
        (_text(schema_version=2), r"upgrade the package"),
        (_text(schema_version="1"), r"schema_version must be an integer"),
        (_text(schema="other"), r"not an mlflow-imbalance summary"),
        (_text(weighted="no"), r"weighted must be true or false"),
        (_text(n_thresholds=0), r"n_thresholds must be a positive integer"),
        (_text(test_prevalence=0.5), r"test_prevalence .* disagrees"),
        (_text(prevalences=[2]), r"prevalences must be a list"),
        (_text(prevalences="0.01"), r"prevalences must be a list"),
        (_text(costs={"fp": 1}), r"costs must be null"),
        (_text(costs={"fp": -1, "fn": 2}), r"costs must be null"),
        (_text(files={}), r"files must be a manifest"),
        (_text(files={"roc_counts.npz": {"sha256": "x"}}), r"bad manifest entry"),
        (
            _text(files={"roc_counts.npz": {"sha256": "0" * 64, "bytes": 2**70}}),
            r"out of range",
        ),
        (
            _text(files={"../x": {"sha256": "0" * 64}, "roc_counts.npz": {"sha256": "0" * 64}}),
            r"bad manifest entry",
        ),
        (_text(scores={"file": "roc_counts.npz", "n": -1}), r"scores must be null"),
        (_text(scores={"file": "nope.npz", "n": 5}), r"scores must be null"),
        (_text(headline=[]), r"headline must be an object"),
        (_text(extra=None), r"extra must be an object"),
        (_text(name=""), r"name must be a non-empty string"),
        ("[" * 100_000 + "]" * 100_000, r"not valid JSON|must hold a JSON object"),
        (b"\xff\xfe\x00garbage", r"not valid JSON"),
        ("[]", r"must hold a JSON object"),
        ('{"schema": "mlflow-imbalance/summary"', r"not valid JSON"),
    ],
)
def test_summary_edge_cases(text, pattern):
    with pytest.raises(ValueError, match=pattern):
        summary_from_json(text, source="the summary")


def test_missing_keys_each_named():
    for key in _summary():
        if key in ("schema", "schema_version"):
            continue
        s = _summary()
        del s[key]
        with pytest.raises(ValueError, match=key):
            summary_from_json(json.dumps(s))


# ------------------------------------------------------------------------- report keeps going
def _corrupt_variants() -> dict[str, bytes]:
    rng = np.random.default_rng(0)
    flipped = bytearray(GOOD)
    for pos in rng.choice(np.arange(100, len(GOOD) - 100), size=8, replace=False):
        flipped[pos] ^= 0xFF
    return {
        "truncated": GOOD[: len(GOOD) // 2],
        "flipped": bytes(flipped),
        "crafted": _zip(_members(tp=_npy_header("<i8", (10**11,)) + bytes(8))),
        "bomb": _patch_sizes(GOOD, "thresholds", 0xFFFF_FFF0),
        "empty": b"",
    }


def test_build_report_skips_corrupt_files_and_keeps_the_good_one(tmp_path):
    from mlflow_imbalance.report.build import build_report

    good = tmp_path / "good.npz"
    _counts().save(good)
    paths = [good]
    for label, data in _corrupt_variants().items():
        p = tmp_path / f"{label}.npz"
        p.write_bytes(data)
        paths.append(p)
    report = build_report(paths, n_bootstrap=0)
    assert [r["name"] for r in report.context["runs"]] == ["good"]
    skipped = {s.name: s.reason for s in report.skipped}
    assert set(skipped) == set(_corrupt_variants())
    assert all(reason.startswith("ValueError") for reason in skipped.values()), skipped
    assert "would inflate" in skipped["bomb"] and "100000000000" in skipped["crafted"]


def test_mlflow_runs_corrupt_artifacts_are_skipped_with_reason(tracking_uri):
    from mlflow.tracking import MlflowClient

    from mlflow_imbalance.report.load import load_runs

    rng = np.random.default_rng(1)
    ids = []
    for _ in range(4):
        with mlflow.start_run() as run:
            y = rng.random(400) < 0.2
            mi.log_scores(y, rng.normal(size=400) + y, log_figures=False, n_bootstrap=0)
            ids.append(run.info.run_id)
    client = MlflowClient()

    def local(run_id: str, fname: str) -> Path:
        uri = client.get_run(run_id).info.artifact_uri.removeprefix("file://")
        return Path(uri) / "imbalance" / "test" / fname

    local(ids[1], "roc_counts.npz").write_bytes(_corrupt_variants()["flipped"])
    summary = local(ids[2], "summary.json")
    summary.write_text(
        summary.read_text().replace('"n_pos": ', '"n_pos": 1' + "0" * 400 + ', "x": ')
    )
    scores = local(ids[3], "scores.npz")
    scores.write_bytes(scores.read_bytes()[:-40])
    loaded, skipped, _ = load_runs(ids)
    assert [r.run_id for r in loaded] == [ids[0], ids[3]]  # scores are optional: run 3 kept
    assert loaded[1].scores is None
    reasons = {s.run_id: s.reason for s in skipped}
    assert set(reasons) == {ids[1], ids[2]}
    assert "does not match its summary.json manifest" in reasons[ids[1]]
    assert "out of range" in reasons[ids[2]]
    from mlflow_imbalance.tracking.load import load_scores

    with pytest.raises(ValueError, match=r"scores\.npz"):
        load_scores(ids[3])


def _logged_runs(n: int) -> list[str]:
    rng = np.random.default_rng(4)
    ids = []
    for _ in range(n):
        with mlflow.start_run() as run:
            y = rng.random(300) < 0.2
            mi.log_scores(y, rng.normal(size=300) + y, log_figures=False, n_bootstrap=0)
            ids.append(run.info.run_id)
    return ids


def _set_folder(run_id: str) -> Path:
    from mlflow.tracking import MlflowClient

    uri = MlflowClient().get_run(run_id).info.artifact_uri.removeprefix("file://")
    return Path(uri) / "imbalance" / "test"


def test_unreadable_files_skip_with_the_run_the_file_and_what_is_wrong(tracking_uri, tmp_path):
    """Deleted, symlinked, directory-shaped files and folders: plain reasons naming the file."""
    import shutil

    from mlflow_imbalance.report.load import load_runs

    outside = tmp_path / "outside"
    outside.mkdir()
    ids = _logged_runs(8)
    damage = {}

    def counts(i: int) -> Path:
        return _set_folder(ids[i]) / "roc_counts.npz"

    counts(1).unlink()
    damage[1] = r"imbalance/test/roc_counts\.npz is missing from the run's artifacts"
    shutil.move(counts(2), outside / "c2.npz")
    counts(2).symlink_to(outside / "c2.npz")
    damage[2] = r"imbalance/test/roc_counts\.npz is a symbolic link to .*c2\.npz"
    counts(3).unlink()
    counts(3).mkdir()
    damage[3] = r"imbalance/test/roc_counts\.npz is a directory, not a file"
    counts(4).unlink()
    counts(4).symlink_to(outside / "gone.npz")
    damage[4] = r"roc_counts\.npz is a symbolic link to .*gone\.npz, which does not exist"
    folder = _set_folder(ids[5])
    shutil.rmtree(folder)
    folder.symlink_to(outside / "no-such-folder")
    damage[5] = r"summary\.json cannot be read: its folder imbalance/test is a symbolic link"
    summary = _set_folder(ids[6]) / "summary.json"
    summary.unlink()
    summary.mkdir()
    damage[6] = r"imbalance/test/summary\.json is a directory, not a file"
    summary = _set_folder(ids[7]) / "summary.json"
    shutil.move(summary, outside / "s7.json")
    summary.symlink_to(outside / "s7.json")
    damage[7] = r"imbalance/test/summary\.json is a symbolic link to .*s7\.json"

    loaded, skipped, _ = load_runs(ids)
    assert [r.run_id for r in loaded] == [ids[0]]
    reasons = {ids.index(s.run_id): s.reason for s in skipped}
    assert set(reasons) == set(damage)
    for i, pattern in damage.items():
        reason = reasons[i]
        assert reason.startswith(f"run {ids[i]}: imbalance/test/"), reason
        assert re.search(pattern, reason), (pattern, reason)
        assert "Failed to download" not in reason and "Errno" not in reason, reason
    # the public loaders say the same
    with pytest.raises(ValueError, match=damage[3]):
        mi.load_counts(ids[3])


def test_scores_npz_bomb_is_refused(tracking_uri):
    """A scores.npz inflating far beyond what its summary's n allows is refused unread."""
    import hashlib

    from mlflow_imbalance.tracking.load import load_scores

    rng = np.random.default_rng(2)
    with mlflow.start_run() as run:
        y = rng.random(300) < 0.3
        mi.log_scores(y, rng.normal(size=300) + y, log_figures=False, n_bootstrap=0)
    from mlflow.tracking import MlflowClient

    root = Path(MlflowClient().get_run(run.info.run_id).info.artifact_uri.removeprefix("file://"))
    folder = root / "imbalance" / "test"
    n = (256 << 20) // 8
    stream, crc = _bomb_member(_npy_header("<f8", (n,)), n * 8)
    y_npy = _npy(y)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    bomb = _zip_raw({
        "y_true": (c.compress(y_npy) + c.flush(), zlib.crc32(y_npy), len(y_npy), 8),
        "y_score": (stream, crc, len(_npy_header("<f8", (n,))) + n * 8, 8),
    })  # fmt: skip
    assert len(bomb) < 1 << 20
    (folder / "scores.npz").write_bytes(bomb)
    summary = json.loads((folder / "summary.json").read_text())
    summary["files"]["scores.npz"]["sha256"] = hashlib.sha256(bomb).hexdigest()
    summary["files"]["scores.npz"]["bytes"] = len(bomb)
    (folder / "summary.json").write_text(json.dumps(summary))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="would inflate"):
            load_scores(run.info.run_id)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20


# ------------------------------------------------------------------------- property: round trip
_scores_st = st.lists(
    st.tuples(
        st.booleans(),
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False, width=64),
            st.sampled_from([0.0, -0.0, 5e-324, 1.0, 1.0 + 2**-52, -1e308, 1e308]),
        ),
        st.floats(min_value=0.0, max_value=1e6, allow_nan=False),
    ),
    min_size=2,
    max_size=60,
).filter(lambda rows: 0 < sum(r[0] for r in rows) < len(rows))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=_scores_st, weighted=st.booleans(), reduce_to=st.integers(2, 12), compress=st.booleans()
)
def test_whatever_save_writes_loads_back_equal(
    tmp_path_factory, rows, weighted, reduce_to, compress
):
    y = np.array([r[0] for r in rows])
    s = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows]) if weighted else None
    if w is not None and (w[y].sum() == 0 or w[~y].sum() == 0):
        return
    counts = RocCounts.from_scores(y, s, sample_weight=w, compress=compress)
    for c in (counts, counts.reduce(reduce_to) if counts.n_thresholds > reduce_to else counts):
        back = RocCounts.from_bytes(c.to_bytes())
        assert back == c and back.weighted == c.weighted and back.compressed == c.compressed
        assert back.max_tpr_error == c.max_tpr_error and back.max_fpr_error == c.max_fpr_error
        path = tmp_path_factory.mktemp("rt") / "roc_counts.npz"
        c.save(path)
        assert RocCounts.load(path) == c


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(rows=_scores_st, weighted=st.booleans())
# found by hypothesis: the test prevalence 1 / (1 + 7.9e-147) rounded to 1.0 and the headline
# metrics refused it
@example(rows=[(False, 0.0, 7.90843065641412e-147), (True, 0.0, 1.0)], weighted=True)
@example(rows=[(False, 0.0, 1.0), (True, 0.0, 7.90843065641412e-147)], weighted=True)
def test_whatever_log_scores_writes_loads_back_equal(tracking_uri, rows, weighted):
    from mlflow_imbalance.tracking.load import load_scores

    y = np.array([r[0] for r in rows])
    s = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows]) if weighted else None
    if w is not None and (w[y].sum() == 0 or w[~y].sum() == 0):
        return
    with mlflow.start_run() as run:
        mi.log_scores(y, s, sample_weight=w, log_figures=False, n_bootstrap=0, keep_scores=True)
    assert mi.load_counts(run.info.run_id) == RocCounts.from_scores(y, s, sample_weight=w)
    kept = load_scores(run.info.run_id)
    np.testing.assert_array_equal(kept.y_true, y)
    np.testing.assert_array_equal(kept.y_score, s)
    if w is not None:
        np.testing.assert_array_equal(kept.sample_weight, w)
    from mlflow_imbalance.tracking.load import load_summary

    assert 0 < load_summary(run.info.run_id)["test_prevalence"] < 1
