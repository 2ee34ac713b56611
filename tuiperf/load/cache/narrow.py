"""Columns stored in the narrowest integer type their values fit, and widened back on read.

Only for what a cache entry keeps off the first screen's path (the detail columns,
`<table>.details.arrow`): those are read when first used, so widening them back to the
canonical types then costs one copy of those columns, never a first screen. An integer
column gets int8, int16 or int32 when every value fits; a dictionary column gets the
narrowest index type for its dictionary's length; all-null columns stay as they are (holes
on disk). Widening is exact: every value reads back as it was (bench/cache_size.md).
"""

from __future__ import annotations

import mmap
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

#: narrow candidates, narrowest first, with their (inclusive) ranges
_INTS = (
    (pa.int8(), -(1 << 7), (1 << 7) - 1),
    (pa.int16(), -(1 << 15), (1 << 15) - 1),
    (pa.int32(), -(1 << 31), (1 << 31) - 1),
)


def int_type_for(lo: int, hi: int) -> pa.DataType:
    """The narrowest signed type holding every value in lo..hi (int64 beyond int32)."""
    for t, tlo, thi in _INTS:
        if tlo <= lo and hi <= thi:
            return t
    return pa.int64()


def narrow_type(col: pa.ChunkedArray | pa.Array) -> pa.DataType:
    """The type `col` is stored in (its own where nothing narrower holds every value)."""
    t = col.type
    if pa.types.is_dictionary(t):
        dict_len = max((len(c.dictionary) for c in _chunks(col)), default=0)
        idx = int_type_for(0, max(dict_len - 1, 0))
        return pa.dictionary(idx, t.value_type) if _bits(idx) < _bits(t.index_type) else t
    if not pa.types.is_signed_integer(t) or col.null_count == len(col):
        return t
    mm = pc.min_max(col).as_py()
    got = int_type_for(int(mm["min"]), int(mm["max"]))
    return got if _bits(got) < _bits(t) else t


def narrow(table: pa.Table, only: int | None = None) -> pa.Table:
    """`table` with each column (or column `only`) in its narrowest type (see narrow_type)."""
    for i, name in enumerate(table.column_names):
        if only is not None and i != only:
            continue
        col = table.column(i)
        t = narrow_type(col)
        if t != col.type:
            table = table.set_column(i, pa.field(name, t), col.cast(t))
    return table


def widen(table: pa.Table, canonical: pa.Schema) -> pa.Table:
    """`table`'s columns back in their types in `canonical` (those it names)."""
    for i, name in enumerate(table.column_names):
        idx = canonical.get_field_index(name)
        if idx < 0:
            continue
        want = canonical.field(idx).type
        col = table.column(i)
        if col.type != want:
            table = table.set_column(i, pa.field(name, want), col.cast(want))
    return table


def _chunks(col: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    return list(col.chunks) if isinstance(col, pa.ChunkedArray) else [col]


def _bits(t: pa.DataType) -> int:
    return int(t.bit_width)


def read_batches(path: Path) -> pa.Table:
    """A (compressed) Arrow IPC file of detail columns, a record batch at a time; a
    fixed-width column null in every row comes back on zero pages (`null_column`), not as
    the rows × width bytes decompressing it would allocate."""
    reader = ipc.open_file(pa.memory_map(str(path)))
    fields = list(reader.schema)
    chunks: list[list[pa.Array | int]] = [[] for _ in fields]  # an int: that many nulls
    for i in range(reader.num_record_batches):
        batch = reader.get_batch(i)
        for j, col in enumerate(batch.columns):
            empty = pa.types.is_integer(col.type) and col.null_count == len(col)
            chunks[j].append(len(col) if empty else col)
    cols = []
    for f, parts in zip(fields, chunks, strict=True):
        if parts and all(isinstance(c, int) for c in parts):
            cols.append(pa.chunked_array([null_column(f.type, sum(parts))]))
        else:
            arrays = [pa.nulls(c, f.type) if isinstance(c, int) else c for c in parts]
            cols.append(pa.chunked_array(arrays, f.type))
    return pa.Table.from_arrays(cols, schema=reader.schema)


def lazy_nulls(table: pa.Table) -> pa.Table:
    """`table` with each integer column that is null in every row on zero pages
    (`null_column`): its buffers are freed."""
    for i, f in enumerate(table.schema):
        col = table.column(i)
        if pa.types.is_integer(f.type) and len(col) and col.null_count == len(col):
            table = table.set_column(i, f, pa.chunked_array([null_column(f.type, len(col))]))
    return table


def null_column(t: pa.DataType, n: int) -> pa.Array:
    """`n` nulls of the fixed-width type `t` over one private anonymous mapping: its zero
    pages are the kernel's own until written, and Arrow arrays are never written, so the
    column costs no memory however long (reading it maps the shared zero page)."""
    zero = mmap.mmap(-1, max(n * t.bit_width // 8, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = pa.py_buffer(zero)
    return pa.Array.from_buffers(t, n, [buf.slice(0, (n + 7) // 8), buf], null_count=n)
