"""A cache entry's core and derived tables up to store.COMPRESS_UP_TO bytes are stored
LZ4-compressed in one batch (read whole, each column one array); bigger ones stay
uncompressed and memory-mapped (reading allocates nothing). Either way they read back equal
to a conversion without a cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.conftest import nsys_report
from tuiperf.load.cache import store
from tuiperf.load.cache.store import codec_for, read_ipc
from tuiperf.load.open import OpenOptions, open_trace


def _bytes_table(n: int) -> pa.Table:
    t = pa.table({"x": pa.array(np.zeros(n, np.int8))})
    assert t.nbytes == n
    return t


def test_the_cap_is_inclusive(monkeypatch) -> None:
    monkeypatch.setattr(store, "COMPRESS_UP_TO", 4096)
    assert codec_for(_bytes_table(4096)) == store.CORE_CODEC == "lz4"
    assert codec_for(_bytes_table(4097)) is None
    assert codec_for(_bytes_table(0)) == "lz4"


def _entry(cache: Path) -> Path:
    (entry,) = [p for p in cache.iterdir() if p.is_dir()]
    return entry


@pytest.mark.parametrize("report", ["vit_amp", "cnn_osrt"])
def test_small_tables_compressed_one_array_a_column(report: str, tmp_path: Path) -> None:
    trace = open_trace(nsys_report(report), OpenOptions(cache_dir=tmp_path))
    fresh = open_trace(nsys_report(report), OpenOptions(use_cache=False))
    entry = _entry(tmp_path)
    for name in ("api", "kernels"):
        held = read_ipc(entry / f"{name}.arrow")
        assert (entry / f"{name}.arrow").stat().st_size < 0.8 * held.nbytes  # compressed
        assert all(c.num_chunks == 1 for c in held.columns)
        assert trace.table(name).equals(fresh.table(name)), name


def test_a_table_over_the_cap_stays_mapped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store, "COMPRESS_UP_TO", 1024)
    report = nsys_report("vit_amp")
    trace = open_trace(report, OpenOptions(cache_dir=tmp_path))
    path = _entry(tmp_path) / "api.arrow"
    before = pa.total_allocated_bytes()
    held = read_ipc(path)
    assert pa.total_allocated_bytes() == before  # mapped: nothing read into memory
    assert path.stat().st_size >= held.nbytes
    fresh = open_trace(report, OpenOptions(use_cache=False))
    assert trace.table("api").equals(fresh.table("api"))
