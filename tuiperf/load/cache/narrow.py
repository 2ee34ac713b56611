"""Columns stored in the narrowest integer type their values fit, and widened back on read.

The detail columns (`<table>.details.arrow`) are read when first used, so widening them
back to the canonical types then costs one copy of those columns, never a first screen.
A timeline's core tables (`core`) keep `start` and `end` as they are (memory-mapped and
used in place: the time range, the lanes) and the rest narrow, widened column by column
when first used (model/stored_columns.py); `duration` is not stored where it is
`end - start` in every row (bench/cache_size.md). An integer
column gets int8, int16 or int32 when every value fits; a dictionary column gets the
narrowest index type for its dictionary's length; all-null columns stay as they are (holes
on disk). Widening is exact: every value reads back as it was (bench/cache_size.md).
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from tuiperf.model.arrays import view
from tuiperf.model.scratch import Alloc
from tuiperf.model.stored_columns import widened

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


#: columns a core table keeps as they are (int64, memory-mapped and read in place)
KEEP = frozenset({"start", "end"})
#: rows compared at a time when checking that `duration` is end - start
_CHECK_ROWS = 1 << 20


def core(table: pa.Table, spilled: Callable[[pa.Table], None] | None = None) -> pa.Table:
    """A core table as a cache entry stores it: `duration` left out where it is end - start
    in every row, every column but `KEEP` in its narrowest type. Column by column; after
    each, `spilled` is given the original column (its pages can leave the process)."""
    table = without_derived(table)
    for i in narrowable(table):
        table = narrow_column(table, i, spilled)
    return table


def without_derived(table: pa.Table) -> pa.Table:
    """`table` without `duration` where it is end - start in every row."""
    return table.drop_columns(["duration"]) if duration_is_derived(table) else table


def narrowable(table: pa.Table) -> list[int]:
    """The columns of a core table stored narrow (all but `KEEP`)."""
    return [i for i, name in enumerate(table.column_names) if name not in KEEP]


def narrow_column(
    table: pa.Table, i: int, spilled: Callable[[pa.Table], None] | None = None
) -> pa.Table:
    """`table` with column `i` narrow; `spilled` is given the original column. A caller
    that rebinds its only reference to the result lets the original column go now, not
    after the whole table (EntryWriter.add: peak memory, bench/cache_entry_ab.md)."""
    out = narrow(table, only=i)
    if spilled is not None:
        spilled(table.select([i]))
    return out


def duration_is_derived(table: pa.Table) -> bool:
    """Whether `duration` is exactly `end - start` in every row, nulls included (then it
    need not be stored: model/stored_columns.py computes it the same way). Compared
    `_CHECK_ROWS` rows at a time, in numpy over the columns' own buffers where a slice has
    no nulls (Arrow's kernels would leave a table's worth of freed buffers in its pool)."""
    if not {"start", "end", "duration"} <= set(table.column_names):
        return False
    cols = [table.column(n) for n in ("start", "end", "duration")]
    if any(c.type != pa.int64() for c in cols):
        return False
    for off in range(0, table.num_rows, _CHECK_ROWS):
        start, end, duration = (c.slice(off, _CHECK_ROWS) for c in cols)
        if start.null_count or end.null_count or duration.null_count:
            if not _same_with_nulls(start, end, duration):
                return False
        elif not np.array_equal(np.subtract(view(end), view(start)), view(duration)):
            return False
    return True


def _same_with_nulls(start: pa.ChunkedArray, end: pa.ChunkedArray, got: pa.ChunkedArray) -> bool:
    want = pc.subtract(end, start)
    if want.null_count != got.null_count:
        return False
    if not pc.all(pc.equal(pc.is_null(want), pc.is_null(got))).as_py():
        return False
    return bool(pc.all(pc.fill_null(pc.equal(want, got), True)).as_py())


def widen(table: pa.Table, canonical: pa.Schema, alloc: Alloc | None = None) -> pa.Table:
    """`table`'s columns back in their types in `canonical` (those it names); with `alloc`
    (a big table's scratch files), each column with a value into its arrays
    (stored_columns.widened), a column null in every row by pyarrow (no value to write)."""
    for i, name in enumerate(table.column_names):
        idx = canonical.get_field_index(name)
        if idx < 0:
            continue
        want = canonical.field(idx).type
        col = table.column(i)
        if col.type != want:
            into = alloc if col.null_count < len(col) else None
            table = table.set_column(i, pa.field(name, want), widened(col, want, into))
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
