"""A timeline's tables stored narrow in the cache entry (load/cache/narrow.py `core`) read
back exactly as the same report converted without any cache (model/stored_columns.py).

Oracle: `open_trace(..., use_cache=False)`, which never narrows nor leaves anything out,
table by table, column by column, value by value and type by type, on real exports with
several devices, processes, CUDA graphs, GPU metrics, CPU and Python samples. Then the
decision to leave `duration` out, at its edges (one row off by 1 ns, a null where the times
are known, a mismatch in the last of several checked slices), and how a reader sees it:
narrow columns widened only when used, once.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from tests.conftest import nsys_report
from tests.support.data import unxz
from tuiperf import schema
from tuiperf.load.cache import narrow
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import stored_columns
from tuiperf.model.trace import Trace, TraceMeta

ROOT = Path(__file__).resolve().parents[2]
REAL = [
    "nsys/h100_2gpu_1s",  # two GPUs
    "nsys/cnn_osrt",
    "nsys/lstm",
    "graphs/graphs_node",
    "graphs/pybt",
    "cpu_samples/slow",
    "gpu_metrics/healthy_metrics",
    "ranks/nccl1",
]


def _report(name: str) -> Path:
    if name.startswith("nsys/"):
        return nsys_report(name.split("/")[1])
    return unxz(ROOT / "tests/data" / f"{name}.sqlite.xz")


@pytest.mark.parametrize("name", REAL)
def test_every_table_reads_back_as_converted_without_a_cache(name: str, tmp_path: Path):
    report = _report(name)
    want = open_trace(report, OpenOptions(use_cache=False))
    want.complete_all()
    open_trace(report, OpenOptions(cache_dir=tmp_path))  # converts, stores narrow
    got = open_trace(report, OpenOptions(cache_dir=tmp_path))
    assert got.meta.from_cache
    assert sorted(got.tables) == sorted(want.tables)
    narrowed = 0
    for t in want.tables:
        stored = got.tables[t].schema
        narrowed += sum(1 for f in stored if f.type != want.tables[t].schema.field(f.name).type)
        a, b = want.table(t), got.table(t)
        assert b.schema == a.schema, t
        assert b.equals(a), t
    assert narrowed > 0, "nothing was stored narrow: the check above proves nothing"


def test_the_entry_stores_times_whole_and_the_rest_narrow(tmp_path: Path):
    open_trace(nsys_report("lstm"), OpenOptions(cache_dir=tmp_path))
    api = ipc.open_file(next(tmp_path.rglob("api.arrow"))).schema
    assert api.field("start").type == api.field("end").type == pa.int64()
    assert "duration" not in api.names
    assert api.field("pid").type.bit_width < 64
    assert api.field("correlation_id").type.bit_width < 64
    assert api.field("name").type.index_type.bit_width < 32


def _events(durations: list[int | None], ends: list[int | None]) -> pa.Table:
    n = len(durations)
    cols = {
        "start": pa.array([10 * i for i in range(n)], pa.int64()),
        "end": pa.array(ends, pa.int64()),
        "duration": pa.array(durations, pa.int64()),
        "pid": pa.array([7] * n, pa.int64()),
    }
    return pa.table(cols)


def test_duration_left_out_only_where_it_is_end_minus_start():
    ends = [5, 17, None, 40]
    exact = [5, 7, None, 10]
    assert narrow.duration_is_derived(_events(exact, ends))
    assert not narrow.duration_is_derived(_events([5, 7, None, 11], ends))  # 1 ns off
    assert not narrow.duration_is_derived(_events([5, 6, None, 10], ends))
    assert not narrow.duration_is_derived(_events([5, 7, 0, 10], ends))  # known, end missing
    assert not narrow.duration_is_derived(_events([5, None, None, 10], ends))  # missing
    assert not narrow.duration_is_derived(_events(exact, ends).drop_columns(["end"]))
    assert "duration" not in narrow.core(_events(exact, ends)).column_names
    assert "duration" in narrow.core(_events([5, 7, None, 11], ends)).column_names


@pytest.mark.parametrize("bad_row", [0, 2, 3, 6])
def test_every_checked_slice_counts(bad_row: int, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(narrow, "_CHECK_ROWS", 3)  # slices [0, 3), [3, 6), [6, 7)
    ends = [10 * i + 4 for i in range(7)]
    durations: list[int | None] = [4] * 7
    assert narrow.duration_is_derived(_events(durations, list(ends)))
    durations[bad_row] = 5
    assert not narrow.duration_is_derived(_events(durations, list(ends)))


def _stored_trace(table: pa.Table) -> Trace:
    return Trace({"kernels": narrow.core(table)}, TraceMeta(source="x", format="test"))


def _kernels(n: int) -> pa.Table:
    """Canonical kernels: small ids and counts (stored narrow), some nulls, exact durations."""
    cols: dict[str, pa.Array] = {
        "start": pa.array([100 * i for i in range(n)], pa.int64()),
        "end": pa.array([100 * i + 40 + i % 7 for i in range(n)], pa.int64()),
        "duration": pa.array([40 + i % 7 for i in range(n)], pa.int64()),
        "pid": pa.array([1 + i % 2 for i in range(n)], pa.int64()),
        "stream": pa.array([None if i % 9 == 0 else 7 for i in range(n)], pa.int64()),
        "correlation_id": pa.array([40_000 + i for i in range(n)], pa.int64()),
        "name": pa.array([f"k{i % 3}" for i in range(n)]).dictionary_encode(),
    }
    return schema.conform("kernels", cols, n)


def test_columns_widen_when_used_and_stay_widened():
    want = _kernels(300)
    trace = _stored_trace(want)
    stored = trace.tables["kernels"]
    assert "duration" not in stored.column_names
    assert stored.schema.field("pid").type == pa.int8()
    assert stored.schema.field("correlation_id").type == pa.int32()
    assert trace.table("kernels", ["start", "end"]).equals(want.select(["start", "end"]))
    assert trace.tables["kernels"] is stored  # nothing widened for the times
    got = trace.table("kernels", ["pid", "duration"])
    assert got.equals(want.select(["pid", "duration"]))
    after = trace.tables["kernels"]
    assert after.schema.field("pid").type == pa.int64()
    assert after.schema.field("stream").type == stored.schema.field("stream").type  # untouched
    assert trace.table("kernels").equals(want)
    assert stored_columns.to_restore("kernels", trace.tables["kernels"], None) == []


def test_only_canonical_columns_are_restored():
    stored = narrow.core(_kernels(20))
    got = stored_columns.to_restore("kernels", stored, ["not_a_column", "pid", "duration"])
    assert got == ["pid", "duration"]
    assert stored_columns.to_restore("not_a_table", stored, None) == []


def test_a_computed_duration_does_not_convert_the_detail_columns(tmp_path: Path):
    """`duration` comes from the times alone: asking for it leaves the detail columns (read
    again from the report when first needed) unconverted."""
    report = nsys_report("lstm")
    want = open_trace(report, OpenOptions(use_cache=False))
    trace = open_trace(report, OpenOptions(cache_dir=tmp_path))
    assert {"kernels", "api"} <= set(trace.pending)
    for name in ("kernels", "api"):
        got = trace.table(name, ["start", "duration"])
        assert got.equals(want.table(name, ["start", "duration"])), name
        assert name in trace.pending, f"{name}: the details were converted for `duration`"
    assert stored_columns.provides("kernels", trace.tables["kernels"]) >= {"duration", "start"}
    assert "duration" not in stored_columns.provides("devices", trace.tables["devices"])


def test_converting_the_details_leaves_the_core_as_stored(tmp_path: Path):
    """The detail columns join the core without widening it: a `convert` of a report
    opened before must not copy every core column into memory."""
    report = nsys_report("lstm")
    want = open_trace(report, OpenOptions(use_cache=False))
    trace = open_trace(report, OpenOptions(cache_dir=tmp_path))
    stored = trace.tables["api"].schema
    trace.complete_all()
    merged = trace.tables["api"].schema
    for f in stored:
        assert merged.field(f.name).type == f.type, f.name
    assert "api_kind" in merged.names and "duration" not in merged.names
    assert trace.table("api").equals(want.table("api"))


def test_duration_is_computable_only_from_both_times():
    t = narrow.core(_kernels(10))
    assert "duration" in stored_columns.provides("kernels", t.select(["start", "end"]))
    assert "duration" not in stored_columns.provides("kernels", t.select(["start", "pid"]))
    assert "duration" not in stored_columns.provides("no_such_table", t.select(["start", "end"]))
    assert stored_columns.to_restore("kernels", t.select(["start", "pid"]), ["duration"]) == []
    assert stored_columns.to_restore("kernels", t.select(["end", "pid"]), ["duration"]) == []
    # a column neither held nor computable (a detail column not converted yet) is not asked
    assert stored_columns.to_restore("kernels", t, ["grid_x", "duration"]) == ["duration"]


def test_duration_decided_column_types_and_null_routes():
    three = _events([5, 7, 3, 10], [5, 17, 23, 40]).drop_columns(["pid"])
    assert narrow.duration_is_derived(three)  # exactly the three columns
    as_int32 = three.set_column(2, "duration", three["duration"].cast(pa.int32()))
    assert not narrow.duration_is_derived(as_int32)  # not the canonical type: kept
    # the end is missing where the duration is known: a wrong read of the end's buffer
    # (0 under the null) would make 0 - 20 match the stored -20
    assert not narrow.duration_is_derived(_events([5, 7, -20, 10], [5, 17, None, 40]))
    # as many nulls, in other rows
    assert not narrow.duration_is_derived(_events([5, None, 8, 10], [5, 17, None, 40]))


def test_duration_checked_across_chunks(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(narrow, "_CHECK_ROWS", 4)  # slices cut through the chunks
    a = _events([4, 4, 4], [4, 14, 24])
    b = a.set_column(0, "start", pa.array([30, 40, 50], pa.int64()))
    b = b.set_column(1, "end", pa.array([34, 44, 54], pa.int64()))
    t = pa.concat_tables([a, b, a])
    assert t["start"].num_chunks == 3
    assert narrow.duration_is_derived(t)
    for wrong in ([5, 4, 4], [4, 4, 5]):  # in the second chunk of a slice, and the first
        b2 = b.set_column(2, "duration", pa.array(wrong, pa.int64()))
        assert not narrow.duration_is_derived(pa.concat_tables([a, b2, a]))


def test_each_narrowed_column_is_handed_to_the_spill_callback():
    seen: list[list[str]] = []
    narrow.core(_kernels(10), spilled=lambda part: seen.append(part.column_names))
    kept = [n for n in schema.TABLES["kernels"].names if n not in ("start", "end", "duration")]
    assert seen == [[n] for n in kept]


def test_convert_to_a_folder_through_the_cache_writes_canonical_tables(tmp_path: Path):
    from tuiperf.cli import main
    from tuiperf.load.cache.store import read_ipc

    report = nsys_report("cnn_osrt")
    cached, plain = tmp_path / "cached", tmp_path / "plain"
    cache = ["--cache-dir", str(tmp_path / "c")]
    assert main(["convert", str(report), "-o", str(cached), *cache]) == 0
    assert main(["convert", str(report), "-o", str(plain), "--no-cache"]) == 0
    names = sorted(p.name for p in plain.glob("*.arrow"))
    assert names == sorted(p.name for p in cached.glob("*.arrow")) and "api.arrow" in names
    for name in names:
        a, b = read_ipc(plain / name), read_ipc(cached / name)
        assert b.schema == a.schema == schema.TABLES[name.removesuffix(".arrow")], name
        assert b.equals(a), name
