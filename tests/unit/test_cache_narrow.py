"""Detail columns are stored in the narrowest integer type their values fit (issue 37: the
cache entry ≤ 1× the report) and read back with every value as in the report.

Expected types come from the report's own min/max (sqlite3) against the int8/int16/int32
ranges written out by hand; values against sqlite3's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from tuiperf import schema
from tuiperf.load.cache.narrow import (
    int_type_for,
    narrow,
    narrow_type,
    null_column,
    read_batches,
    widen,
)
from tuiperf.load.open import OpenOptions, open_trace


@pytest.mark.parametrize(
    ("lo", "hi", "want"),
    [
        (0, 0, pa.int8()),
        (-128, 127, pa.int8()),
        (0, 128, pa.int16()),
        (-129, 0, pa.int16()),
        (-32768, 32767, pa.int16()),
        (0, 32768, pa.int32()),
        (-32769, 0, pa.int32()),
        (-2147483648, 2147483647, pa.int32()),
        (0, 2147483648, pa.int64()),
        (-2147483649, 0, pa.int64()),
    ],
)
def test_int_type_at_the_boundaries(lo: int, hi: int, want: pa.DataType):
    assert int_type_for(lo, hi) == want


def test_narrow_then_widen_is_exact():
    names = pa.array(["a", "b", None, "a"]).dictionary_encode()
    t = pa.table(
        {
            "small": pa.array([-128, 127, None, 0], pa.int64()),
            "wide": pa.array([0, 2147483648, 1, 2], pa.int64()),
            "nulls": pa.nulls(4, pa.int64()),
            "name": names,
        }
    )
    n = narrow(t)
    assert [f.type for f in n.schema] == [
        pa.int8(),
        pa.int64(),
        pa.int64(),
        pa.dictionary(pa.int8(), pa.string()),
    ]
    back = widen(n, t.schema)
    assert back.schema == t.schema
    assert back.column("small").to_pylist() == [-128, 127, None, 0]
    assert back.column("name").to_pylist() == ["a", "b", None, "a"]


#: canonical detail column -> the report's column
_KERNEL_INTS = {
    "context": "contextId",
    "grid_x": "gridX",
    "grid_y": "gridY",
    "grid_z": "gridZ",
    "block_x": "blockX",
    "block_y": "blockY",
    "block_z": "blockZ",
    "registers": "registersPerThread",
    "static_smem": "staticSharedMemory",
    "dynamic_smem": "dynamicSharedMemory",
}

_BY_HAND = ((pa.int8(), -128, 127), (pa.int16(), -32768, 32767), (pa.int32(), -(2**31), 2**31 - 1))


def _expected_type(lo: int, hi: int) -> pa.DataType:
    return next((t for t, a, b in _BY_HAND if a <= lo and hi <= b), pa.int64())


def test_stored_kernel_details_are_narrow_and_exact(nsys_dir: Path, tmp_path: Path):
    path = nsys_dir / "vit_range.sqlite"
    trace = open_trace(path, OpenOptions(cache_dir=tmp_path))
    trace.complete_all()  # converts the details and keeps them in the entry
    entry = Path(trace.meta.cache_path or "")
    stored = ipc.open_file(pa.memory_map(str(entry / "kernels.details.arrow"))).read_all()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for canon, src in _KERNEL_INTS.items():
        lo, hi = db.execute(
            f"SELECT min({src}), max({src}) FROM CUPTI_ACTIVITY_KIND_KERNEL"
        ).fetchone()
        assert stored.schema.field(canon).type == _expected_type(lo, hi), canon
        want = sorted(r[0] for r in db.execute(f"SELECT {src} FROM CUPTI_ACTIVITY_KIND_KERNEL"))
        assert sorted(trace.table("kernels")[canon].to_pylist()) == want, canon
        # read back in the canonical type
        assert (
            trace.table("kernels").schema.field(canon).type
            == schema.TABLES["kernels"].field(canon).type
        )
    names = db.execute(
        "SELECT count(DISTINCT mangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL"
    ).fetchone()[0]
    assert names < 128
    assert stored.schema.field("mangled_name").type.index_type == pa.int8()
    got = trace.table("kernels")["mangled_name"]
    assert got.type.index_type == pa.int32()  # widened back to the canonical type
    want_names = sorted(
        r[0]
        for r in db.execute(
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
            " ON s.id = k.mangledName"
        )
    )
    assert sorted(got.to_pylist()) == want_names
    db.close()


def test_convert_keeps_details_apart_and_narrow(nsys_dir: Path, tmp_path: Path):
    """`convert` builds every column in one pass; its entry stores them as a first open
    does: core columns in kernels.arrow, detail columns narrow beside them."""
    path = nsys_dir / "vit_range.sqlite"
    opts = OpenOptions(cache_dir=tmp_path, defer_details=False)  # what `convert` asks
    first = open_trace(path, opts)
    entry = Path(first.meta.cache_path or "")
    core = ipc.open_file(pa.memory_map(str(entry / "kernels.arrow"))).read_all()
    stored = ipc.open_file(pa.memory_map(str(entry / "kernels.details.arrow"))).read_all()
    assert "grid_x" not in core.column_names and "start" in core.column_names
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    lo, hi = db.execute("SELECT min(gridX), max(gridX) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    assert stored.schema.field("grid_x").type == _expected_type(lo, hi) == pa.int16()
    again = open_trace(path, opts)
    assert again.meta.from_cache and set(again.pending) == {"api", "kernels"}
    for t in (first, again):
        k = t.table("kernels")
        assert k.schema == schema.TABLES["kernels"]
        want = sorted(r[0] for r in db.execute("SELECT gridX FROM CUPTI_ACTIVITY_KIND_KERNEL"))
        assert sorted(k["grid_x"].to_pylist()) == want
    db.close()


@pytest.mark.parametrize("defer", [True, False], ids=["first-open", "convert"])
def test_details_files_are_compressed_and_read_back_exact(
    nsys_dir: Path, tmp_path: Path, defer: bool
):
    """Both writers of a details file (the first open's later conversion, and `convert`)
    compress it: far fewer bytes than its narrow columns take in memory; read back, every
    column equals a conversion without the cache."""
    from tuiperf.load.cache import store

    assert store.DETAILS_CODEC == "zstd"
    path = nsys_dir / "vit_range.sqlite"
    trace = open_trace(path, OpenOptions(cache_dir=tmp_path, defer_details=defer))
    trace.complete_all()
    entry = Path(trace.meta.cache_path or "")
    for name in ("kernels", "api"):
        f = entry / f"{name}.details.arrow"
        stored = ipc.open_file(pa.memory_map(str(f))).read_all()
        assert f.stat().st_size < stored.nbytes / 2, name
    plain = open_trace(path, OpenOptions(use_cache=False))
    again = open_trace(path, OpenOptions(cache_dir=tmp_path))
    assert again.meta.from_cache
    for name in ("kernels", "api"):
        assert again.table(name).equals(plain.table(name)), name


# -- the edges mutation testing found unguarded (bench/mutation/narrow.txt) -----------------


def _dict(n_values: int, index: pa.DataType, rows: int = 3) -> pa.DictionaryArray:
    values = pa.array([f"v{i}" for i in range(n_values)])
    return pa.DictionaryArray.from_arrays(
        pa.array([i % n_values for i in range(rows)], index), values
    )


@pytest.mark.parametrize(
    ("n_values", "want"),
    [(1, pa.int8()), (128, pa.int8()), (129, pa.int16()), (32768, pa.int16()), (32769, pa.int32())],
)
def test_dictionary_index_narrows_to_the_dictionarys_length(n_values: int, want: pa.DataType):
    """Indices 0..n-1: 128 entries fit int8 (max index 127), 129 do not."""
    got = narrow_type(pa.chunked_array([_dict(n_values, pa.int32())]))
    assert got == pa.dictionary(want, pa.string())
    assert narrow_type(_dict(n_values, pa.int32())) == got  # a plain array too


def test_a_dictionary_index_never_widens():
    """An int8 index over a 200-entry dictionary (indices under 128 used) stays int8."""
    col = _dict(200, pa.int8())
    assert narrow_type(col) == col.type


def test_a_dictionary_column_without_chunks_narrows_to_int8():
    col = pa.chunked_array([], pa.dictionary(pa.int32(), pa.string()))
    assert narrow_type(col) == pa.dictionary(pa.int8(), pa.string())


def test_narrow_only_one_column_leaves_the_others():
    t = pa.table({"a": pa.array([1, 2], pa.int64()), "b": pa.array([3, 4], pa.int64())})
    got = narrow(t, only=1)
    assert got.schema.types == [pa.int64(), pa.int8()]
    assert got.to_pylist() == t.to_pylist()


def test_widen_goes_past_columns_the_schema_does_not_name():
    t = pa.table({"extra": pa.array([1], pa.int8()), "grid_x": pa.array([7], pa.int8())})
    canonical = pa.schema([pa.field("grid_x", pa.int32())])
    got = widen(t, canonical)
    assert got.schema.types == [pa.int8(), pa.int32()]
    assert got["grid_x"].to_pylist() == [7]


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 4096])
@pytest.mark.parametrize("t", [pa.int8(), pa.int32(), pa.int64()])
def test_null_column_is_a_valid_array_of_n_nulls(t: pa.DataType, n: int):
    col = null_column(t, n)
    col.validate(full=True)
    assert (col.type, len(col), col.null_count) == (t, n, n)
    assert col.to_pylist() == [None] * n


def test_read_batches_of_a_file_without_batches(tmp_path: Path):
    schema_ = pa.schema([pa.field("grid_x", pa.int32()), pa.field("name", pa.string())])
    path = tmp_path / "empty.arrow"
    with ipc.new_file(str(path), schema_):
        pass
    got = read_batches(path)
    assert got.schema == schema_ and got.num_rows == 0
