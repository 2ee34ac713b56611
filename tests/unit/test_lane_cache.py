"""The lane index kept in a cache entry (model/timeline/lane_cache.py): each lane's rows,
none for a lane that is one run of consecutive rows; the rest computed again on reopen.

Oracles: a build without any cache (`split_table`, itself checked against a brute-force
grouping in test_lane_index.py), array by array, on real exports with several devices,
streams and threads, and on a small table with missing and reversed ends inside a run; the
run test at its edges; every way a stored index can be wrong (stale, damaged, past the
table) gives a rebuild, never wrong lanes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from tests.conftest import nsys_report
from tests.support.data import unxz
from tuiperf import schema
from tuiperf.load.cache import narrow
from tuiperf.load.cache.store import Cache, CacheKey
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline import lane_cache
from tuiperf.model.timeline import lanes as lanes_module
from tuiperf.model.timeline.lane_split import split_table
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.trace import Trace, TraceMeta

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("starts", "ends", "rows", "max_end", "u_start", "u_end", "cum_busy")
COLS = ("pid", "device", "stream")


def _arrays(lanes) -> dict:  # type: ignore[no-untyped-def]
    return {lane.key: [getattr(lane.iv, f) for f in FIELDS] for lane in lanes.lanes}


def _no_split(*args):  # type: ignore[no-untyped-def]
    raise AssertionError("a table was split again: the stored index was not used")


@pytest.mark.parametrize(
    "report",
    [
        "nsys/h100_2gpu_1s",  # two GPUs, two processes
        "nsys/vit_amp",  # overlapping kernels
        "nsys/lstm",
        "cpu_samples/slow",  # many threads (osrt)
        "graphs/graphs_node",
    ],
)
def test_a_reopen_restores_every_lane_as_built(report: str, tmp_path: Path, monkeypatch):
    path = (
        nsys_report(report.split("/")[1])
        if report.startswith("nsys/")
        else unxz(ROOT / "tests/data" / f"{report}.sqlite.xz")
    )
    fresh = _arrays(build_lanes(open_trace(path, OpenOptions(use_cache=False))))
    build_lanes(open_trace(path, OpenOptions(cache_dir=tmp_path)))  # builds, keeps the index
    again = open_trace(path, OpenOptions(cache_dir=tmp_path))
    assert again.meta.from_cache
    monkeypatch.setattr(lanes_module, "split_table", _no_split)
    got = _arrays(build_lanes(again))
    assert got.keys() == fresh.keys()
    for key in fresh:
        for name, a, b in zip(FIELDS, fresh[key], got[key]):
            np.testing.assert_array_equal(a, b, err_msg=f"{key} {name}")


def _trace(tmp_path: Path, table: pa.Table) -> Trace:
    src = tmp_path / "src.bin"
    src.write_bytes(b"x")
    cache = Cache(tmp_path / "cache")
    key = CacheKey.for_source(src, "test")
    cache.entry(key).mkdir(parents=True)
    return Trace({"kernels": table}, TraceMeta(source="x", format="t"), cache, key)


def _kernels(rows: list[tuple[int, int, int | None]]) -> pa.Table:
    """(stream, start, end) rows of one process on device 0."""
    n = len(rows)
    cols = {
        "pid": pa.array([1] * n, pa.int64()),
        "device": pa.array([0] * n, pa.int32()),
        "stream": pa.array([r[0] for r in rows], pa.int64()),
        "start": pa.array([r[1] for r in rows], pa.int64()),
        "end": pa.array([r[2] for r in rows], pa.int64()),
    }
    return schema.conform("kernels", cols, n)


#: stream 7 is the run of rows 0..3 (an end missing, one before its start, one overlap);
#: stream 9 is rows 4, 6 (not a run); stream 8 is row 5 alone (a run of one)
ROWS = [(7, 0, None), (7, 10, 5), (7, 20, 35), (7, 30, 40), (9, 50, 60), (8, 55, 56), (9, 58, 70)]


def test_runs_store_no_rows_and_read_back_repaired(tmp_path: Path):
    t = _kernels(ROWS)
    trace = _trace(tmp_path, t)
    built = split_table(t, COLS)
    lane_cache.store_split(trace, "kernels", COLS, built)
    (stored,) = (tmp_path / "cache").rglob("lane-index-*.arrow")
    index = ipc.open_file(stored).read_all()
    assert index["rows"].to_pylist() == [4, 6]  # stream 9's rows only
    assert index.schema.field("rows").type == pa.int32()
    meta = json.loads(index.schema.metadata[b"lanes"])
    firsts = {tuple(lane["key"]): lane["first"] for lane in meta["lanes"]}
    assert firsts == {(1, 0, 7): 0, (1, 0, 8): 5, (1, 0, 9): -1}
    got = lane_cache.load_split(trace, "kernels", COLS)
    assert got is not None and got.keys() == built.keys()
    for key, iv in built.items():
        for name in FIELDS:
            np.testing.assert_array_equal(getattr(got[key], name), getattr(iv, name), name)
    run = got[(1, 0, 7)]  # by hand: ends repaired to the start, the overlap merged
    assert run.ends.tolist() == [0, 10, 35, 40]
    assert run.u_start.tolist() == [0, 10, 20] and run.u_end.tolist() == [0, 10, 40]
    assert run.cum_busy.tolist() == [0, 0, 20]


@pytest.mark.parametrize(
    ("rows", "first"),
    [([], 0), ([9], 9), ([5, 6, 7], 5), ([5, 7], -1), ([5, 6, 8], -1), ([7, 6], -1),
     ([0, 2, 1, 3], -1), ([0, 1, 2, 4], -1)],
)  # fmt: skip
def test_a_run_is_consecutive_ascending_rows(rows: list[int], first: int):
    assert lane_cache._run_start(np.array(rows, np.int64)) == first


def _stored(tmp_path: Path) -> tuple[Trace, Path]:
    t = _kernels(ROWS)
    trace = _trace(tmp_path, t)
    lane_cache.store_split(trace, "kernels", COLS, split_table(t, COLS))
    (path,) = (tmp_path / "cache").rglob("lane-index-*.arrow")
    return trace, path


def _rewrite(path: Path, rows: list[int], meta: dict) -> None:
    table = pa.table({"rows": pa.array(rows, pa.int32())})
    table = table.replace_schema_metadata({b"lanes": json.dumps(meta).encode()})
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table)


def _edit(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    index = ipc.open_file(path).read_all()
    meta = json.loads(index.schema.metadata[b"lanes"])
    rows = index["rows"].to_pylist()
    rows = change(meta, rows) or rows
    _rewrite(path, rows, meta)


def _lane(meta: dict, stream: int) -> dict:
    return next(lane for lane in meta["lanes"] if lane["key"][2] == stream)


@pytest.mark.parametrize(
    "damage",
    [
        lambda m, r: m.update(rows_in_table=8),  # stale: the table has 7 rows
        lambda m, r: m.update(layout=2),  # an older layout
        lambda m, r: _lane(m, 7).update(n=8),  # a run past the table
        lambda m, r: _lane(m, 8).update(first=7),  # a run starting past the table
        lambda m, r: _lane(m, 9).update(n=3),  # more rows than the index holds
        lambda m, r: _lane(m, 9).update(at=-1),
        lambda m, r: _lane(m, 9).update(at=1),  # its rows run past the index's end
        lambda m, r: [4, 7],  # a row past the table
        lambda m, r: m["lanes"][0].pop("first"),
        lambda m, r: m.update(lanes=[{"key": 3}]),
        lambda m, r: [-3, -1],  # rows before the table (numpy would count from its end)
        lambda m, r: _lane(m, 7).update(n=-1),  # a slice the wrong way round
        lambda m, r: m["lanes"].append(dict(_lane(m, 8))),  # a row in two lanes
        lambda m, r: m["lanes"].remove(_lane(m, 8)),  # a row in none
    ],
)
def test_a_wrong_index_is_never_used(tmp_path: Path, damage):  # type: ignore[no-untyped-def]
    trace, path = _stored(tmp_path)
    assert lane_cache.load_split(trace, "kernels", COLS) is not None
    _edit(path, damage)
    assert lane_cache.load_split(trace, "kernels", COLS) is None


def test_an_index_without_its_rows_column_is_not_used(tmp_path: Path):
    trace, path = _stored(tmp_path)
    meta = ipc.open_file(path).schema.metadata
    table = pa.table({"other": pa.array([4, 6], pa.int32())}).replace_schema_metadata(meta)
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    assert lane_cache.load_split(trace, "kernels", COLS) is None


def test_an_index_of_the_right_size_restores_at_the_edge(tmp_path: Path):
    """The last run ends on the table's last row, the rows on the index's last entry."""
    trace, path = _stored(tmp_path)
    _edit(path, lambda m, r: _lane(m, 8).update(first=6))  # row 6: the last one
    got = lane_cache.load_split(trace, "kernels", COLS)
    assert got is not None and got[(1, 0, 8)].rows.tolist() == [6]


@pytest.mark.parametrize(
    ("n_rows", "typ"), [(0, pa.int32()), (2**31, pa.int32()), (2**31 + 1, pa.int64())]
)
def test_rows_are_int32_while_the_last_row_fits(n_rows: int, typ: pa.DataType):
    assert lane_cache.rows_type(n_rows) == typ


def test_a_table_of_runs_stores_no_rows_at_all(tmp_path: Path):
    t = _kernels([(7, 0, 5), (7, 10, 15), (8, 20, 25)])
    trace = _trace(tmp_path, t)
    lane_cache.store_split(trace, "kernels", COLS, split_table(t, COLS))
    (path,) = (tmp_path / "cache").rglob("lane-index-*.arrow")
    assert path.name == "lane-index-kernels-pid-device-stream.arrow"  # what a reopen reads
    stored = ipc.open_file(path).read_all()
    assert stored.num_rows == 0 and stored.schema.field("rows").type == pa.int32()
    got = lane_cache.load_split(trace, "kernels", COLS)
    assert got is not None and got[(1, 0, 8)].rows.tolist() == [2]


def test_storing_and_restoring_widens_no_stored_column(tmp_path: Path):
    """The index is kept and read with the times alone: the table's other columns, stored
    narrow in a cache entry, stay as stored (widening them would cost memory for nothing)."""
    t = _kernels(ROWS)
    trace = _trace(tmp_path, narrow.core(t))
    stored = trace.tables["kernels"]
    assert stored.schema.field("pid").type == pa.int8()
    lane_cache.store_split(trace, "kernels", COLS, split_table(t, COLS))
    got = lane_cache.load_split(trace, "kernels", COLS)
    assert got is not None and len(got) == 3
    assert trace.tables["kernels"].schema == stored.schema


def test_without_a_cache_key_nothing_is_stored_or_read(tmp_path: Path):
    t = _kernels(ROWS)
    trace = _trace(tmp_path, t)
    trace.cache_key = None
    lane_cache.store_split(trace, "kernels", COLS, split_table(t, COLS))
    assert not list((tmp_path / "cache").rglob("lane-index-*"))
    assert lane_cache.load_split(trace, "kernels", COLS) is None
