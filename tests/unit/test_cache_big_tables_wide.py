"""A core table bigger than store.NARROW_UP_TO as converted is stored as it is (canonical
types, `duration` included) and used in place: reading it whole from the entry allocates
nothing (no widening into the process's memory). Up to the cap it is stored narrow. Either
way it reads back equal to a conversion without a cache."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.conftest import nsys_report
from tuiperf import schema
from tuiperf.load.cache import store
from tuiperf.load.cache.store import read_ipc
from tuiperf.load.open import OpenOptions, open_trace


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
        assert held.schema.equals(canonical)  # every column as converted, duration too
        before = pa.total_allocated_bytes()
        whole = trace.table("api")
        # nothing widened or computed (one int64 column of it would be 8 bytes a row)
        assert pa.total_allocated_bytes() - before < whole.num_rows
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
