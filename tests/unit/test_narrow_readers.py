"""Readers of a trace whose tables a cache entry holds narrow (load/cache/narrow.py), found
by review (2026-12-06): the ranks split compared a table's pids in that table's own
narrow type; a widening waited behind a detail conversion (which may wait on the viewer's
thread); a detail column asked for while another thread joined the details.

Oracles: the same trace with its canonical tables, and events that must happen in order."""

from __future__ import annotations

import threading

import pyarrow as pa

from tuiperf import schema
from tuiperf.analysis.ranks.split import process_trace
from tuiperf.load.cache import narrow
from tuiperf.model.trace import Trace, TraceMeta


def _table(name: str, pids: list[int]) -> pa.Table:
    n = len(pids)
    cols = {
        "start": pa.array(range(n), pa.int64()),
        "end": pa.array(range(1, n + 1), pa.int64()),
        "duration": pa.array([1] * n, pa.int64()),
        "pid": pa.array(pids, pa.int64()),
        "correlation_id": pa.array(range(100, 100 + n), pa.int64()),
    }
    known = schema.TABLES[name].names
    return schema.conform(name, {k: v for k, v in cols.items() if k in known}, n)


def _meta() -> TraceMeta:
    return TraceMeta(source="x", format="test")


def test_each_rank_from_tables_whose_pids_are_narrow_in_different_types():
    # memset's pids fit int16, kernels' need int32: pid 40000 cannot be an int16 scalar
    tables = {"kernels": _table("kernels", [5000, 40000, 40000])}
    tables["memset"] = _table("memset", [5000])
    held = Trace({k: narrow.core(v) for k, v in tables.items()}, _meta())
    assert held.tables["memset"].schema.field("pid").type == pa.int16()
    plain = Trace(dict(tables), _meta())
    for pid in (5000, 40000, 7):
        got, want = process_trace(held, pid), process_trace(plain, pid)
        for name in tables:
            assert got.table(name).equals(want.table(name)), (pid, name)
    assert process_trace(held, 40000).table("memset").num_rows == 0


def test_a_widening_does_not_wait_behind_a_detail_conversion():
    """The detail loader of one table waits until another thread has widened a column of
    another table: with one lock for both, neither would ever go on."""
    api = narrow.core(_table("api", [5000, 5001]))
    kernels = _table("kernels", [5000])
    widened = threading.Event()

    def details() -> pa.Table:
        assert widened.wait(10), "the widening waited behind the detail conversion"
        return pa.table({"start": kernels["start"], "grid_x": pa.nulls(1, pa.int32())})

    trace = Trace({"api": api, "kernels": kernels.drop_columns(["grid_x"])}, _meta(),
                  pending={"kernels": details})  # fmt: skip
    worker = threading.Thread(target=lambda: trace.table("kernels"))
    worker.start()
    got = trace.table("api", ["pid"])  # narrow: widened now, while the loader waits
    widened.set()
    worker.join(10)
    assert not worker.is_alive()
    assert got["pid"].type == pa.int64() and got["pid"].to_pylist() == [5000, 5001]
    assert "kernels" not in trace.pending
    assert trace.table("kernels", ["grid_x"]).num_rows == 1


def test_a_detail_column_asked_for_while_another_thread_joined_them():
    """`table` read the table before the details were joined and the pending mark after
    they were: it must hand out the joined table, not fail on the missing column."""
    kernels = _table("kernels", [5000])
    trace = Trace({"kernels": kernels.drop_columns(["grid_x"])}, _meta())
    joined = kernels  # what another thread put in place, its pending mark already gone

    class Racing(dict):
        def get(self, key, default=None):  # type: ignore[no-untyped-def]
            got = super().get(key, default)
            self[key] = joined  # the join lands right after this read
            return got

    trace.tables = Racing(trace.tables)
    assert trace.table("kernels", ["grid_x"]).num_rows == 1


def test_a_missing_table_is_empty_with_the_columns_asked_for():
    trace = Trace({}, _meta())
    assert trace.table("kernels", ["start", "pid"]).column_names == ["start", "pid"]
    assert trace.table("kernels").schema == schema.TABLES["kernels"]


def test_asking_for_exactly_the_held_columns_leaves_the_details_pending():
    """Every column the core holds or computes, and nothing else: no detail conversion."""
    kernels = narrow.core(_table("kernels", [5000, 5001]))

    def details() -> pa.Table:
        raise AssertionError("the detail columns were converted")

    trace = Trace({"kernels": kernels}, _meta(), pending={"kernels": details})
    every = [*kernels.column_names, "duration"]
    got = trace.table("kernels", every)
    assert got.column_names == every and "kernels" in trace.pending
    assert got["duration"].to_pylist() == [1, 1]


def test_held_tables_come_with_their_details_and_as_stored():
    kernels = narrow.core(_table("kernels", [5000, 5001]))
    grid = pa.table({"start": kernels["start"], "grid_x": pa.array([3, 4], pa.int32())})
    trace = Trace({"kernels": kernels}, _meta(), pending={"kernels": lambda: grid})
    got = trace.held("kernels")
    assert "kernels" not in trace.pending and got["grid_x"].to_pylist() == [3, 4]
    assert got.schema.field("pid").type == pa.int16() and "duration" not in got.column_names
    assert trace.held("kernels") is got  # the same table, nothing converted again
    assert trace.held("memset").schema == schema.TABLES["memset"]  # absent: empty, canonical


def test_stored_columns_as_held_and_what_is_not_held_through_table():
    kernels = narrow.core(_table("kernels", [5000, 5001]))
    trace = Trace({"kernels": kernels}, _meta())
    every = trace.stored("kernels", list(kernels.column_names))  # exactly what is held
    assert every.schema == kernels.schema
    got = trace.stored("kernels", ["pid", "duration"])  # duration is computed: via table()
    assert got.column_names == ["pid", "duration"]
    assert got["pid"].to_pylist() == [5000, 5001] and got["duration"].to_pylist() == [1, 1]
    assert trace.stored("memset", ["start", "pid"]).column_names == ["start", "pid"]
