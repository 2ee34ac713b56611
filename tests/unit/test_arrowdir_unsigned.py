"""An arrowdir export keeps ids, counters and CPU numbers in unsigned Arrow types where the
SQLite export has plain INTEGERs (FORMATS.md §2: deviceId and correlationId uint32,
globalTid/globalPid uint64 with values at or over 2^63 that SQLite stores negative). A real
`.nsys-rep` captured with thread scheduling (`--cpuctxsw`, nsys's default) failed to open on
the H100 (2026-12-05: SCHED_EVENTS.cpu unsigned, `fill_null(-1)` on it). Oracle: the same
export read from SQLite, table by table and column by column."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from tests.support.data import unxz
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
SLOW = ROOT / "tests/data/cpu_samples/slow.sqlite.xz"
#: the same capture's GPU metrics run (GPU_METRICS, copies)
METRICS = ROOT / "tests/data/cpu_samples/metrics.sqlite.xz"
#: columns nsys's arrow export keeps signed (start/end times, StringIds.id, grid and block)
SIGNED = {"start", "end", "timestamp", "id", "gridX", "gridY", "gridZ", "blockX", "blockY"}
SIGNED |= {"blockZ", "value", "staticSharedMemory", "dynamicSharedMemory", "localMemoryTotal"}


def _unsigned(name: str, values: list[object]) -> pa.Array:
    """A column of one table as nsys's arrow export types it: integers unsigned where they
    are not times (globalTid/globalPid wrapped to their uint64 bits), the rest as read."""
    arr = pa.array(values)
    if not pa.types.is_integer(arr.type) or name in SIGNED:
        return arr
    ints = np.asarray(arr.fill_null(0).to_numpy(), np.int64)
    wide = bool(ints.size) and (ints.min() < 0 or ints.max() >= 2**32)
    kind = pa.uint64() if wide else pa.uint32()
    bits = pa.array(ints.view(np.uint64) if wide else ints.astype(np.uint32), kind)
    return pa.Array.from_buffers(kind, len(arr), [arr.buffers()[0], bits.buffers()[1]])


def _as_arrowdir(db_path: Path, out: Path) -> Path:
    out.mkdir()
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in names:
            cur = db.execute(f'SELECT * FROM "{table}"')
            cols = [d[0] for d in cur.description]
            rows = cur.fetchall()
            data = list(zip(*rows)) if rows else [[] for _ in cols]
            arrays = [_unsigned(c, list(v)) for c, v in zip(cols, data)]
            t = pa.Table.from_arrays(arrays, names=cols)
            with ipc.new_stream(str(out / f"{table}.arrow"), t.schema) as w:
                w.write_table(t)
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[Trace, Trace, Path]:
    db = unxz(SLOW)
    folder = _as_arrowdir(db, tmp_path_factory.mktemp("unsigned") / "slow_arrowdir")
    opts = OpenOptions(use_cache=False)
    return open_trace(db, opts), open_trace(folder, opts), folder


def test_the_export_really_is_unsigned(both: tuple[Trace, Trace, Path]) -> None:
    folder = both[2]
    with open(folder / "SCHED_EVENTS.arrow", "rb") as f:
        s = ipc.open_stream(f).schema
    assert pa.types.is_unsigned_integer(s.field("cpu").type)
    assert s.field("globalTid").type == pa.uint64()


@pytest.mark.parametrize("table", ["thread_state", "cpu_samples", "kernels", "api", "nvtx"])
def test_unsigned_arrowdir_reads_as_its_sqlite(both: tuple[Trace, Trace, Path], table: str) -> None:
    a, b, _ = both
    ta, tb = a.table(table), b.table(table)
    assert ta.num_rows > 0
    assert ta.schema == tb.schema
    for col in ta.column_names:
        assert ta[col].to_pylist() == tb[col].to_pylist(), f"{table}.{col}"


def test_every_table_and_count_match(both: tuple[Trace, Trace, Path]) -> None:
    a, b, _ = both
    assert a.counts() == b.counts()
    assert set(a.tables) == set(b.tables)


def test_gpu_metrics_and_copies_from_an_unsigned_arrowdir(tmp_path: Path) -> None:
    db = unxz(METRICS)
    a = open_trace(db, OpenOptions(use_cache=False))
    b = open_trace(_as_arrowdir(db, tmp_path / "m"), OpenOptions(use_cache=False))
    assert a.counts() == b.counts()
    for table in ("gpu_metrics", "memcpy", "kernels"):
        ta, tb = a.table(table), b.table(table)
        assert ta.num_rows > 0, table
        for col in ta.column_names:
            assert ta[col].to_pylist() == tb[col].to_pylist(), f"{table}.{col}"


def test_uint64_at_or_over_2_63_wraps_to_sqlites_negative_number() -> None:
    """FORMATS.md §2: DIAGNOSTIC_EVENT.globalPid 18302628885633695744 in parquet is
    -144115188075855872 in SQLite; below 2^63 and narrower types keep their value."""
    from tuiperf.load.nsys.tables import as_sqlite_integers

    t = pa.table(
        {
            "globalPid": pa.array([18302628885633695744, 2**63 - 1, 2**63, 0], pa.uint64()),
            "cpu": pa.array([0, 65535, None, 7], pa.uint16()),
            "start": pa.array([-5, 1, 2, 3], pa.int64()),
            "id": pa.array([1, 2, 3, 4], pa.int32()),  # StringIds.id: signed, kept as is
            "value": pa.array([0.5, 1.0, 2.0, None], pa.float64()),
        }
    )
    got = as_sqlite_integers(t)
    assert got["globalPid"].to_pylist() == [-144115188075855872, 2**63 - 1, -(2**63), 0]
    assert got["cpu"].to_pylist() == [0, 65535, None, 7]
    assert got.schema.types == [pa.int64(), pa.int64(), pa.int64(), pa.int32(), pa.float64()]
    assert got.column_names == t.column_names
    assert got.slice(0).select(["start", "id", "value"]).equals(t.select(["start", "id", "value"]))


@pytest.mark.parametrize(
    "fixture",
    [
        "gpumem/leak_nsys",  # CUDA_GPU_MEMORY_USAGE_EVENTS
        "graphs/graphs_default",  # CUDA graph executions
        "graphs/pybt",  # Python backtraces (NVTX payloads), thread scheduling, samples
        "nsys/h100_2gpu_1s",  # two processes, two GPUs: the (pid, correlation id) join
    ],
)
def test_every_table_of_an_unsigned_arrowdir_equals_its_sqlite(
    fixture: str, tmp_path: Path
) -> None:
    db = unxz(ROOT / "tests/data" / f"{fixture}.sqlite.xz")
    a = open_trace(db, OpenOptions(use_cache=False))
    b = open_trace(_as_arrowdir(db, tmp_path / "x"), OpenOptions(use_cache=False))
    assert a.counts() == b.counts()
    assert sorted(a.tables) == sorted(b.tables)
    for name in a.tables:
        ta, tb = a.table(name), b.table(name)
        assert ta.schema == tb.schema, name
        for col in ta.column_names:
            assert ta[col].to_pylist() == tb[col].to_pylist(), f"{name}.{col}"
