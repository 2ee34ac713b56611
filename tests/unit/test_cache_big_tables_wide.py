"""A core table bigger than store.NARROW_UP_TO as converted is stored as it is (canonical
types, less a `duration` that is end - start) and used in place: reading it whole from the
entry allocates nothing from Arrow's pool (no widening into the process's memory; its
`duration`, a big table's, computed into the entry's scratch files). Up to the cap it is
stored narrow. Either way it reads back equal to a conversion without a cache."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.conftest import nsys_report
from tests.support.scratch_maps import in_scratch_file
from tuiperf import schema
from tuiperf.load.cache import narrow, store
from tuiperf.load.cache.store import read_ipc
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import scratch


def _api_as_converted(tmp_path: Path) -> pa.Table:
    """The api table as the reader hands it to the entry writer."""
    got: dict[str, pa.Table] = {}
    real = store.EntryWriter.add

    def spy(self, name, table):  # type: ignore[no-untyped-def]
        if name == "api":
            got[name] = table
        return real(self, name, table)

    store.EntryWriter.add = spy  # type: ignore[method-assign]
    try:
        open_trace(nsys_report("vit_amp"), OpenOptions(cache_dir=tmp_path / "spy"))
    finally:
        store.EntryWriter.add = real  # type: ignore[method-assign]
    return got["api"]


@pytest.mark.parametrize("over", [0, 1])
def test_the_cap_boundary(tmp_path: Path, monkeypatch, over: int) -> None:
    size = _api_as_converted(tmp_path).nbytes
    monkeypatch.setattr(store, "NARROW_UP_TO", size - over)  # over=1: one byte over the cap
    monkeypatch.setattr(store, "COMPRESS_UP_TO", -1)  # mapped, to see what is allocated
    cache = tmp_path / "c"
    trace = open_trace(nsys_report("vit_amp"), OpenOptions(cache_dir=cache))
    (entry,) = [p for p in cache.iterdir() if p.is_dir()]
    held = read_ipc(entry / "api.arrow")
    canonical = schema.core_schema("api")
    if over:
        # every column as converted, but the duration that is end - start
        assert held.schema.equals(pa.schema([f for f in canonical if f.name != "duration"]))
        monkeypatch.setattr(scratch, "SCRATCH_FROM", 0)  # a big table's widening
        before = pa.total_allocated_bytes()
        whole = trace.table("api")
        # nothing widened or computed in Arrow's pool (one int64 column: 8 bytes a row)
        assert pa.total_allocated_bytes() - before < whole.num_rows
        assert in_scratch_file(whole["duration"].chunk(0).buffers()[1].address)
    else:
        assert "duration" not in held.column_names
        assert held.schema.field("pid").type != pa.int64()  # narrow
        whole = trace.table("api")
    fresh = open_trace(nsys_report("vit_amp"), OpenOptions(use_cache=False))
    assert whole.equals(fresh.table("api"))


def test_the_default_cap_follows_the_machine(monkeypatch) -> None:
    monkeypatch.setattr(store, "NARROW_UP_TO", None)
    monkeypatch.setattr(store.settings, "physical_memory", lambda: 64 << 30)
    assert store.narrow_up_to() == 8 << 30  # an eighth
    monkeypatch.setattr(store.settings, "physical_memory", lambda: 4 << 30)
    assert store.narrow_up_to() == 1 << 30  # at least 1 GiB
    monkeypatch.setattr(store.settings, "physical_memory", lambda: 0)  # unknown
    assert store.narrow_up_to() == 1 << 30


KINETO = Path(__file__).parents[1] / "data" / "kineto" / "kineto_cnn.json.gz"


def _as_converted(report: Path, name: str, tmp_path: Path) -> pa.Table:
    got: dict[str, pa.Table] = {}
    real = store.EntryWriter.add

    def spy(self, table_name, table):  # type: ignore[no-untyped-def]
        if table_name == name:
            got[name] = table
        return real(self, table_name, table)

    store.EntryWriter.add = spy  # type: ignore[method-assign]
    try:
        open_trace(report, OpenOptions(cache_dir=tmp_path / "spy"))
    finally:
        store.EntryWriter.add = real  # type: ignore[method-assign]
    return got[name]


@pytest.mark.parametrize("over", [0, 1])
def test_a_wide_table_leaves_out_a_derived_duration(tmp_path: Path, monkeypatch, over: int):
    """A kineto trace's kernels come with their `duration` (end - start in every row): the
    cap compares the table as converted, duration included; wide, it is left out too."""
    converted = _as_converted(KINETO, "kernels", tmp_path)
    assert "duration" in converted.column_names and narrow.duration_is_derived(converted)
    monkeypatch.setattr(store, "NARROW_UP_TO", converted.nbytes - over)
    monkeypatch.setattr(store, "COMPRESS_UP_TO", -1)
    cache = tmp_path / "c"
    trace = open_trace(KINETO, OpenOptions(cache_dir=cache))
    (entry,) = [p for p in cache.iterdir() if p.is_dir()]
    held = read_ipc(entry / "kernels.arrow")
    assert "duration" not in held.column_names
    pid = held.schema.field("pid").type
    assert (pid == pa.int64()) is bool(over)  # wide over the cap, narrow at it
    fresh = open_trace(KINETO, OpenOptions(use_cache=False))
    assert trace.table("kernels").equals(fresh.table("kernels"))
