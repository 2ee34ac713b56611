"""Conversion into the cache assembles a table too big for the memory available in spilled
(memory-mapped, unlinked) files (issue 37: peak RSS of a conversion). The spilled table
must hold exactly what the in-memory one holds: expected values here are worked out by
hand, in plain Python. `no_memory` makes every table too big."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tuiperf.load import spill
from tuiperf.load.nsys import tables as nsys_tables
from tuiperf.load.nsys.assemble import Assembler
from tuiperf.load.open import OpenOptions, open_trace

_SCHEMA = pa.schema(
    [
        ("start", pa.int64()),
        ("value", pa.int64()),
        ("small", pa.int32()),
        ("name", pa.dictionary(pa.int32(), pa.string())),
    ]
)
_WORDS = pa.array(["zero", "one", "two", "three", "four"])  # the shared dictionary


@pytest.fixture
def no_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill, "available", lambda: 0)


def test_only_a_table_over_a_quarter_of_the_memory_available_spills(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setattr(spill, "available", lambda: 1000)
    with spill.into(tmp_path):
        assert spill.folder(250) is None  # 1000 / 4 exactly: kept in memory
        assert spill.folder(251) == tmp_path
    assert spill.folder(10**12) is None  # outside a cache writer: never


def _batch(starts: list[int], values: list[int | None], codes: list[int | None]) -> pa.Table:
    names = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), _WORDS)
    small = pa.array([s % 7 for s in starts], pa.int32())
    return pa.table([pa.array(starts), pa.array(values, pa.int64()), small, names], _SCHEMA)


def _assemble(capacity: int) -> pa.Table:
    asm = Assembler(_SCHEMA, capacity)
    asm.append(_batch([30, 10], [3, None], [4, 1]))  # out of order: finish sorts
    asm.append(_batch([20, 40, 5], [2, 4, None], [None, 4, 1]))  # past capacity 3: grows
    return asm.finish()


def _spilled_files() -> int:
    with open("/proc/self/maps") as f:
        return sum(".spill-" in line and "(deleted)" in line for line in f)


@pytest.mark.usefixtures("no_memory")
@pytest.mark.parametrize("capacity", [3, 100])
def test_spilled_table_is_the_in_memory_one(tmp_path: Path, capacity: int):
    before = _spilled_files()
    with spill.into(tmp_path):
        t = _assemble(capacity)
        assert _spilled_files() > before  # the columns are in (unlinked) files
    # rows sorted by start by hand: 5, 10, 20, 30, 40
    assert t.column("start").to_pylist() == [5, 10, 20, 30, 40]
    assert t.column("value").to_pylist() == [None, None, 2, 3, 4]
    assert t.column("small").to_pylist() == [5, 3, 6, 2, 5]
    assert t.column("name").to_pylist() == ["one", "one", None, "four", "four"]
    # only the values used are kept, in the dictionary's order
    assert t.column("name").chunk(0).dictionary.to_pylist() == ["one", "four"]
    assert t.schema == _SCHEMA
    assert t.equals(_assemble(capacity))  # the same table assembled in memory
    assert list(tmp_path.iterdir()) == []  # nothing left behind


@pytest.mark.usefixtures("no_memory")
def test_no_spill_outside_a_cache_writer(tmp_path: Path):
    assert spill.folder(10**12) is None
    before = _spilled_files()
    _assemble(100)
    assert _spilled_files() == before


def test_dropped_pages_keep_their_data(tmp_path: Path):
    a = spill.zeros(300_000, np.int64, tmp_path)
    a[:] = np.arange(300_000)
    spill.drop_rows(a, 0, len(a))
    assert int(a[123_456]) == 123_456 and int(a.sum()) == 300_000 * 299_999 // 2


def test_launch_index_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch):
    """Keys (pid << 32 | correlation id) and tids, built 2 rows at a time, sorted by key."""
    monkeypatch.setattr(nsys_tables.LaunchIndex, "_SLICE_ROWS", 2)
    api = pa.table(
        {
            "pid": pa.array([7, 7, 3, 7, 3], pa.int64()),
            "tid": pa.array([70, 71, 30, 72, 31], pa.int64()),
            "correlation_id": pa.array([5, 2, 9, 8, 1], pa.int64()),
        }
    )
    idx = nsys_tables.LaunchIndex.from_api(api)
    want = sorted([(7 << 32 | 5, 70), (7 << 32 | 2, 71), (3 << 32 | 9, 30), (7 << 32 | 8, 72),
                   (3 << 32 | 1, 31)])  # fmt: skip
    assert idx.keys.tolist() == [k for k, _ in want]
    assert idx.tids.tolist() == [t for _, t in want]
    assert idx.tids.dtype == np.int32


@pytest.mark.usefixtures("no_memory")
def test_converted_kernels_match_sqlite(nsys_dir: Path, tmp_path: Path):
    """A real conversion through the cache (spilled), against sqlite3: each kernel's start,
    end, stream and launching thread (the runtime call with its correlationId)."""
    path = nsys_dir / "vit_range.sqlite"
    trace = open_trace(path, OpenOptions(cache_dir=tmp_path, defer_details=False))
    k = trace.table("kernels")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT k.start, k.end, k.streamId, r.globalTid % 16777216"
        " FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
        " ON r.correlationId = k.correlationId"
        " ORDER BY k.start, k.rowid"
    ).fetchall()
    db.close()
    got = list(
        zip(
            k["start"].to_pylist(),
            k["end"].to_pylist(),
            k["stream"].to_pylist(),
            k["tid"].to_pylist(),
        )
    )
    assert got == [tuple(r) for r in rows]


def test_a_folder_that_cannot_hold_it_keeps_the_column_in_memory(tmp_path: Path):
    before = _spilled_files()
    a = spill.zeros(1000, np.int32, tmp_path / "missing")
    assert _spilled_files() == before and a.dtype == np.int32 and not a.any()


@pytest.mark.parametrize(
    ("line", "folder", "files", "room"),
    [
        ("0::/box", "box", {"memory.max": "1000", "memory.current": "300"}, 700),
        ("0::/box", "box", {"memory.max": "max", "memory.current": "300"}, None),
        ("0::/box", "box", {"memory.max": "100", "memory.current": "300"}, 0),
        (
            "4:memory:/box",
            "memory/box",
            {"memory.limit_in_bytes": "2000", "memory.usage_in_bytes": "500"},
            1500,
        ),
        ("4:cpu:/box", "cpu/box", {}, None),
    ],
)
def test_a_memory_cgroup_limits_what_is_available(
    tmp_path: Path, line: str, folder: str, files: dict[str, str], room: int | None
):
    proc = tmp_path / "cgroup"
    proc.write_text(line + "\n")
    (tmp_path / "sys" / folder).mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / "sys" / folder / name).write_text(text + "\n")
    assert spill._cgroup_room(proc, tmp_path / "sys") == room
