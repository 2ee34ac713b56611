"""Columns a cache entry stores narrow, widened on first use into the entry's scratch files
when the table is big (model/scratch.py): the same values, nulls and types as pyarrow's
cast and subtract in memory (which a small table still uses), steps cutting through
chunks; file-backed; the size rule at its edge."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.conftest import nsys_report
from tests.support.scratch_maps import in_scratch_file
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import scratch, stored_columns


def _table() -> pa.Table:
    """Narrow columns as an entry stores them, several chunks, sliced, with nulls."""
    start = pa.chunked_array([[10, 20, None, 40], pa.array([0, 50, 60, 70, 80]).slice(1)])
    end = pa.chunked_array([[15, None, 33, 44], pa.array([0, 52, 66, None, 81]).slice(1)])
    names = pa.array(["a", "b", None, "a", "c", "b", "a", "c"]).dictionary_encode()
    narrow_names = pa.DictionaryArray.from_arrays(names.indices.cast(pa.int8()), names.dictionary)
    return pa.table({
        "start": start,
        "end": end,
        "pid": pa.chunked_array([pa.array([1, None, 3], pa.int16()),
                                 pa.array([9, 4, 5, 6, 7, None], pa.int16()).slice(1)]),
        "correlation_id": pa.chunked_array([pa.array(range(8), pa.int32())]),
        "name": pa.chunked_array([narrow_names]),
    })  # fmt: skip


@pytest.mark.parametrize("step", [1, 3, 1 << 22])
def test_widened_into_arrays_equal_pyarrows_cast(step: int, monkeypatch) -> None:
    monkeypatch.setattr(stored_columns, "_STEP", step)
    t = _table()
    todo = stored_columns.to_restore("api", t, ["pid", "correlation_id", "name", "duration"])
    assert set(todo) == {"pid", "correlation_id", "name", "duration"}
    made: list[int] = []

    def alloc(n: int, dtype: np.dtype) -> np.ndarray:
        made.append(n)
        return np.full(n, -7, dtype)  # garbage where nothing is written

    want = stored_columns.restored("api", t, todo)
    got = stored_columns.restored("api", t, todo, alloc)
    assert got.schema == want.schema
    assert got.equals(want)
    for name in todo:  # nulls where pyarrow has them, also under the computed duration
        assert got[name].null_count == want[name].null_count, name
    assert got["duration"].to_pylist() == [5, None, None, 4, 2, 6, None, 1]  # by hand
    assert made == [8, 8, 8, 8]  # pid, correlation_id, name's codes, duration


def test_a_dictionary_of_several_chunks_is_cast_by_pyarrow() -> None:
    a = pa.array(["x", "y"]).dictionary_encode()
    b = pa.array(["z"]).dictionary_encode()
    small = [
        pa.DictionaryArray.from_arrays(c.indices.cast(pa.int8()), c.dictionary) for c in (a, b)
    ]
    t = pa.table({"start": [1, 2, 3], "end": [2, 3, 4], "name": pa.chunked_array(small)})
    got = stored_columns.restored("api", t, ["name"], lambda n, d: np.zeros(n, d))
    assert got["name"].to_pylist() == ["x", "y", "z"]
    assert got["name"].type == pa.dictionary(pa.int32(), pa.string())


@pytest.mark.parametrize("report", ["vit_range", "cnn_osrt"])
def test_a_big_tables_columns_in_scratch_equal_a_cacheless_open(
    report: str, tmp_path: Path, monkeypatch
) -> None:
    opts = OpenOptions(cache_dir=tmp_path)
    first = open_trace(nsys_report(report), opts)  # the entry
    first.table("kernels"), first.table("api")  # and their details files
    monkeypatch.setattr(scratch, "SCRATCH_FROM", 0)  # every table "big"
    trace = open_trace(nsys_report(report), opts)
    assert trace.meta.from_cache
    plain = open_trace(nsys_report(report), OpenOptions(use_cache=False))
    for name in ("kernels", "api"):
        got, want = trace.table(name), plain.table(name)
        assert got.schema == want.schema, name
        assert got.equals(want), name
    kernels = trace.table("kernels")
    for col in ("duration", "pid", "correlation_id"):
        chunk = kernels[col].chunk(0)
        assert in_scratch_file(chunk.buffers()[1].address), col
    codes = kernels["name"].chunk(0).indices
    assert in_scratch_file(codes.buffers()[1].address)
    # detail columns (a details file, narrow): those with values widened into scratch too
    detail = [c for c in ("grid_x", "registers", "context") if kernels[c].null_count == 0]
    assert detail, "no detail column with values"
    for col in detail:
        for chunk in kernels[col].chunks:
            assert in_scratch_file(chunk.buffers()[1].address), col


def test_the_size_rule(tmp_path: Path, monkeypatch) -> None:
    """Big: the table's own bytes (as held: mapped) and its widened columns' together."""
    opts = OpenOptions(cache_dir=tmp_path)
    open_trace(nsys_report("vit_range"), opts)
    held = open_trace(nsys_report("vit_range"), opts).tables["kernels"]
    assert "duration" not in held.column_names
    need = held.nbytes + held.num_rows * 8  # duration alone widened
    for limit, in_file in ((need, False), (need - 1, True)):
        monkeypatch.setattr(scratch, "SCRATCH_FROM", limit)
        trace = open_trace(nsys_report("vit_range"), opts)
        duration = trace.table("kernels", ["duration"])["duration"].chunk(0)
        assert in_scratch_file(duration.buffers()[1].address) is in_file, limit


def test_the_details_size_rule(tmp_path: Path, monkeypatch) -> None:
    """Detail columns widen into scratch files past rows x 8 bytes x columns stored."""
    opts = OpenOptions(cache_dir=tmp_path)
    trace = open_trace(nsys_report("vit_range"), opts)
    trace.table("kernels")  # the details converted and stored
    cache, key = trace.cache, trace.cache_key
    stored = cache.load_details(key, "kernels", trace.tables["kernels"].num_rows)
    need = stored.num_rows * 8 * stored.num_columns
    for limit, in_file in ((need, False), (need - 1, True)):
        monkeypatch.setattr(scratch, "SCRATCH_FROM", limit)
        again = open_trace(nsys_report("vit_range"), opts)
        grid = again.table("kernels", ["start", "grid_x"])["grid_x"].chunk(0)
        assert in_scratch_file(grid.buffers()[1].address) is in_file, limit


def test_what_pyarrow_could_refuse_is_cast_by_pyarrow() -> None:
    """Out of range for the type wanted (a narrower one), or a dictionary of another value
    type: pyarrow's cast (which raises, or converts), never the copy into `alloc`."""

    def alloc(n: int, dtype: np.dtype) -> np.ndarray:
        raise AssertionError("copied into scratch")

    big = pa.chunked_array([pa.array([1, 1 << 40], pa.int64())])
    with pytest.raises(pa.ArrowInvalid):
        stored_columns.widened(big, pa.int32(), alloc)
    large = pa.chunked_array([pa.array(["a", "b", "a"], pa.large_string()).dictionary_encode()])
    want = pa.dictionary(pa.int32(), pa.string())
    got = stored_columns.widened(large, want, alloc)
    assert got.type == want and got.to_pylist() == ["a", "b", "a"]
