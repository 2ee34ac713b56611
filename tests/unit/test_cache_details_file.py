"""The detail columns kept in a cache entry (`<table>.details.arrow`) are those columns and
nothing else (no second copy of `start`: issue 37, bench/cache_size.md), and a reopened
entry completed from them equals an eager conversion of the report."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from tuiperf import schema
from tuiperf.load.open import OpenOptions, open_trace


@pytest.mark.parametrize("source", ["vit_range.sqlite", "cnn_osrt_arrowdir"])
def test_details_file_then_reopen_equals_eager(nsys_dir: Path, tmp_path: Path, source: str):
    path = nsys_dir / source
    eager = open_trace(path, OpenOptions(cache_dir=tmp_path / "eager", defer_details=False))
    lazy = OpenOptions(cache_dir=tmp_path / "lazy")
    first = open_trace(path, lazy)
    first.complete_all()  # converts the details and keeps them in the entry
    entry = Path(first.meta.cache_path or "")
    for name in ("kernels", "api"):
        stored = ipc.open_file(pa.memory_map(str(entry / f"{name}.details.arrow"))).read_all()
        assert stored.column_names == [
            f.name for f in schema.TABLES[name] if f.name in schema.DETAIL_COLUMNS[name]
        ]
        assert stored.num_rows == eager.table(name).num_rows
    again = open_trace(path, lazy)
    assert again.meta.from_cache and set(again.pending) == {"api", "kernels"}
    for name in ("kernels", "api"):
        assert again.table(name).equals(eager.table(name)), name


def _batches(path: Path, cols: dict[str, list[list[int | None]]], typ: pa.DataType) -> None:
    """An IPC file of record batches, one per list index, ZSTD-compressed as stored."""
    names = list(cols)
    n_batches = len(next(iter(cols.values())))
    schema_ = pa.schema([(c, typ) for c in names])
    opts = ipc.IpcWriteOptions(compression="zstd")
    with ipc.new_file(str(path), schema_, options=opts) as w:
        for i in range(n_batches):
            w.write_batch(pa.record_batch([pa.array(cols[c][i], typ) for c in names], schema_))


@pytest.mark.parametrize("typ", [pa.int64(), pa.int32(), pa.int8()])
def test_read_batches_equals_reading_the_file_whole(tmp_path: Path, typ: pa.DataType):
    from tuiperf.load.cache import narrow

    path = tmp_path / "d.arrow"
    cols: dict[str, list[list[int | None]]] = {
        "all_null": [[None] * 3, [None] * 4, [None]],
        "null_then_values": [[None] * 3, [1, None, 2, 3], [None]],  # kept, nulls and all
        "values": [[1, 2, 3], [4, 5, 6, 7], [8]],
        "values_then_null": [[1, 2, 3], [None] * 4, [None]],
    }
    _batches(path, cols, typ)
    whole = ipc.open_file(pa.memory_map(str(path))).read_all()
    got = narrow.read_batches(path)
    assert got.schema == whole.schema and got.num_rows == 8
    for name in cols:
        flat = [v for part in cols[name] for v in part]
        assert got[name].to_pylist() == whole[name].to_pylist() == flat, name
    assert got["all_null"].null_count == 8 and got["all_null"].num_chunks == 1


def test_null_column_is_nulls_of_its_type():
    from tuiperf.load.cache import narrow

    for typ, n in ((pa.int64(), 1000), (pa.int32(), 17), (pa.int16(), 0)):
        col = narrow.null_column(typ, n)
        assert col.type == typ and len(col) == n and col.null_count == n
        assert col.equals(pa.nulls(n, typ))
        col.validate(full=True)
        assert col.slice(3, 5).to_pylist() == [None] * len(range(n)[3:8])


def test_lazy_nulls_replaces_only_all_null_integer_columns():
    from tuiperf.load.cache import narrow

    t = pa.table({
        "a": pa.array([None, None], pa.int64()),
        "b": pa.array([1, None], pa.int64()),
        "s": pa.array([None, None], pa.string()),
    })  # fmt: skip
    got = narrow.lazy_nulls(t)
    assert got.equals(t)
    # "a" now lies on the zero mapping, "b" is the column it was
    assert got["a"].chunks[0].buffers()[1].address != t["a"].chunks[0].buffers()[1].address
    assert got["b"].chunks[0].buffers()[1].address == t["b"].chunks[0].buffers()[1].address
