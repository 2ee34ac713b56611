"""Columns of a trace's tables as a cache entry stores them, back in their canonical types.

A cache entry keeps a timeline's tables small (load/cache/narrow.py `core`): `start` and
`end` as they are (memory-mapped, used in place), every other integer and dictionary column
in the narrowest type its values fit, and `duration` left out where it is `end - start` in
every row. `Trace.table` hands out canonical columns only: a column used for the first time
is widened (or, `duration`, computed) here, once, and kept in the trace.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema
from tuiperf.model import arrays
from tuiperf.model.scratch import Alloc


def provides(name: str, t: pa.Table) -> set[str]:
    """The columns `t` can hand out: its own, and `duration` where it computes it."""
    have = set(t.column_names)
    canonical = schema.TABLES.get(name)
    if canonical is not None and "duration" in canonical.names and {"start", "end"} <= have:
        have.add("duration")
    return have


def to_restore(name: str, t: pa.Table, columns: list[str] | None) -> list[str]:
    """Which of `columns` (None: every canonical column) `t` holds narrower than canonical,
    or lacks while it can compute it (`duration` from `start` and `end`)."""
    canonical = schema.TABLES.get(name)
    if canonical is None:
        return []
    have = t.schema
    out = []
    for n in columns if columns is not None else canonical.names:
        at = canonical.get_field_index(n)
        if at < 0:
            continue
        i = have.get_field_index(n)
        if i >= 0:
            if have.field(i).type != canonical.field(at).type:
                out.append(n)
        elif n == "duration" and "start" in have.names and "end" in have.names:
            out.append(n)
    return out


def restored(name: str, t: pa.Table, columns: list[str], alloc: Alloc | None = None) -> pa.Table:
    """`t` with `columns` (from `to_restore`) in their canonical types; a computed
    `duration` goes where the canonical order puts it among `t`'s columns. With `alloc`
    (a big table's, model/scratch.py), integer columns and dictionary codes are widened into
    its arrays a step at a time; else by pyarrow, in memory."""
    canonical = schema.TABLES[name]
    for n in columns:
        field = canonical.field(n)
        i = t.schema.get_field_index(n)
        if i >= 0:
            t = t.set_column(i, field, widened(t.column(i), field.type, alloc))
            continue
        rank = canonical.get_field_index(n)
        at = sum(1 for c in t.column_names if canonical.get_field_index(c) < rank)
        t = t.add_column(at, field, _duration(t["start"], t["end"], alloc))
    return t


#: rows widened at a time into an `alloc` array (32 MiB of int64)
_STEP = 1 << 22


def widened(col: pa.ChunkedArray, want: pa.DataType, alloc: Alloc | None) -> pa.ChunkedArray:
    """`col` in type `want`: by pyarrow in memory, or (an `alloc`, for integer columns and
    a single chunk's dictionary codes) into `alloc`'s arrays a step at a time."""
    kind = col.type
    if alloc is None:
        return col.cast(want)
    if _safe(kind, want):
        data = _copied(col, arrays.numpy_dtype(want), alloc)
        return pa.chunked_array([_over(want, data, col)])
    if _same_dictionary(kind, want) and col.num_chunks == 1:
        codes = col.chunk(0)
        idx = pa.chunked_array([codes.indices])
        data = _copied(idx, arrays.numpy_dtype(want.index_type), alloc)
        indices = _over(want.index_type, data, idx)
        return pa.chunked_array([pa.DictionaryArray.from_arrays(indices, codes.dictionary)])
    return col.cast(want)


def _safe(kind: pa.DataType, want: pa.DataType) -> bool:
    """Integer to an integer type holding every value (what pyarrow's cast could refuse
    goes through it: out of range, it raises instead of wrapping)."""
    if not (pa.types.is_integer(kind) and pa.types.is_integer(want)):
        return False
    return bool(np.can_cast(arrays.numpy_dtype(kind), arrays.numpy_dtype(want), "safe"))


def _same_dictionary(kind: pa.DataType, want: pa.DataType) -> bool:
    """Dictionaries differing only in their codes' width, widened safely."""
    if not (pa.types.is_dictionary(kind) and pa.types.is_dictionary(want)):
        return False
    same = kind.value_type == want.value_type and kind.ordered == want.ordered
    return same and _safe(kind.index_type, want.index_type)


def _copied(col: pa.ChunkedArray, dtype: np.dtype, alloc: Alloc) -> np.ndarray:
    """`col`'s values (nulls as 0) in a new `dtype` array from `alloc`."""
    out = alloc(len(col), dtype)
    at = 0
    for chunk in col.chunks:
        for lo in range(0, len(chunk), _STEP):
            part = chunk.slice(lo, _STEP)
            out[at : at + len(part)] = arrays.filled(part, 0)
            at += len(part)
    return out


def _over(kind: pa.DataType, data: np.ndarray, col: pa.ChunkedArray) -> pa.Array:
    """An Arrow array over `data` (no copy) with `col`'s nulls."""
    bitmap = None
    if col.null_count:
        bitmap = pa.py_buffer(np.packbits(arrays.valid(col), bitorder="little"))
    buffers = [bitmap, pa.py_buffer(data)]
    return pa.Array.from_buffers(kind, len(data), buffers, null_count=col.null_count)


def _duration(start: pa.ChunkedArray, end: pa.ChunkedArray, alloc: Alloc | None) -> Any:
    """end - start (null where either is), as pyarrow's subtract computes it."""
    if alloc is None:
        return pc.subtract(end, start)
    n = len(start)
    out = alloc(n, np.int64)
    for lo in range(0, n, _STEP):
        s = arrays.filled(start.slice(lo, _STEP).combine_chunks(), 0)
        e = arrays.filled(end.slice(lo, _STEP).combine_chunks(), 0)
        np.subtract(e, s, out=out[lo : lo + len(s)])
    bitmap, nulls = None, 0
    if start.null_count or end.null_count:
        ok = arrays.valid(start) & arrays.valid(end)
        nulls = n - int(np.count_nonzero(ok))
        bitmap = pa.py_buffer(np.packbits(ok, bitorder="little"))
    got = pa.Array.from_buffers(pa.int64(), n, [bitmap, pa.py_buffer(out)], null_count=nulls)
    return pa.chunked_array([got])


def merged(name: str, core: pa.Table, details: pa.Table) -> pa.Table:
    """Core and detail columns of the same rows in canonical order, each column as it is
    (`schema.merge_details` with the core as stored: narrow, `duration` perhaps computed
    later); every canonical column must be there or computable."""
    cols = {n: core[n] for n in core.column_names}
    cols |= {n: details[n] for n in details.column_names if n != "start"}
    fields = []
    for f in schema.TABLES[name]:
        if f.name in cols:
            fields.append(pa.field(f.name, cols[f.name].type))
        elif f.name not in provides(name, core):
            raise KeyError(f"{name}: no column {f.name}")
    return pa.Table.from_arrays([cols[f.name] for f in fields], schema=pa.schema(fields))
