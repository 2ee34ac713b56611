"""Columns stored in the narrowest integer type their values fit, and widened back on read.

Only for what a cache entry keeps off the first screen's path (the detail columns,
`<table>.details.arrow`): those are read when first used, so widening them back to the
canonical types then costs one copy of those columns, never a first screen. An integer
column gets int8, int16 or int32 when every value fits; a dictionary column gets the
narrowest index type for its dictionary's length; all-null columns stay as they are (holes
on disk). Widening is exact: every value reads back as it was (bench/cache_size.md).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

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
