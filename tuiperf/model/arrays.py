"""Small numpy views over Arrow columns, shared by the rules and the ncu link (vectorised)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: numpy's dtype of each Arrow number type (`DataType.to_pandas_dtype` asks pandas whether
#: it is version 1 in pyarrow up to 25, importing it: a third of a second on a first screen)
_NUMPY_DTYPES = {
    t: np.dtype(name)
    for t, name in (
        (pa.int8(), "int8"), (pa.int16(), "int16"), (pa.int32(), "int32"),
        (pa.int64(), "int64"), (pa.uint8(), "uint8"), (pa.uint16(), "uint16"),
        (pa.uint32(), "uint32"), (pa.uint64(), "uint64"), (pa.float16(), "float16"),
        (pa.float32(), "float32"), (pa.float64(), "float64"), (pa.bool_(), "bool"),
    )
}  # fmt: skip


def numpy_dtype(kind: pa.DataType) -> np.dtype:
    """numpy's dtype for Arrow type `kind`, without importing pandas for a number type."""
    got = _NUMPY_DTYPES.get(kind)
    return got if got is not None else np.dtype(kind.to_pandas_dtype())


_ARROW_TYPES = {dtype: kind for kind, dtype in _NUMPY_DTYPES.items()}


def from_numpy(values: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    """A 1-D numpy array of numbers or bools as Arrow, `null` (True: no value) as its
    validity, built on its buffers: `pa.array` imports pandas when it is installed (a
    third of a second on an H100 VM) even for an ndarray. Numbers are not copied unless
    `values` is not contiguous; other dtypes go through `pa.array`."""
    kind = _ARROW_TYPES.get(values.dtype)
    if kind is None or values.ndim != 1:
        return pa.array(values, mask=null)
    n = len(values)
    if kind == pa.bool_():
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
    else:
        data = pa.py_buffer(np.ascontiguousarray(values))
    validity, nulls = None, 0
    if null is not None and n:
        nulls = int(np.count_nonzero(null))
        if nulls:
            validity = pa.py_buffer(np.packbits(~np.asarray(null, bool), bitorder="little"))
    return pa.Array.from_buffers(kind, n, [validity, data], null_count=nulls)


#: the most bytes of text one string array holds (its offsets are 32-bit)
STRING_BYTES_MAX = int(np.iinfo(np.int32).max)


def from_strings(values: Sequence[str | None]) -> pa.Array:
    """Python strings (None: null) as an Arrow string array, built on its buffers (see
    `from_numpy`)."""
    data = [b"" if v is None else v.encode("utf-8") for v in values]
    lengths = np.fromiter((len(b) for b in data), np.int64, len(data))
    offsets = np.zeros(len(data) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > STRING_BYTES_MAX:  # past 32-bit offsets: pyarrow's chunked build
        return pa.array(values, pa.string())
    null = np.fromiter((v is None for v in values), bool, len(values))
    nulls = int(np.count_nonzero(null))
    validity = pa.py_buffer(np.packbits(~null, bitorder="little")) if nulls else None
    buffers = [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(data))]
    return pa.Array.from_buffers(pa.string(), len(data), buffers, null_count=nulls)


def scalar(value: int | float | str | None, kind: pa.DataType) -> pa.Scalar:
    """`pa.scalar(value, kind)` without pandas (see `from_numpy`): the one value of an
    array built on buffers."""
    if value is None:
        return pa.nulls(1, kind)[0]
    if isinstance(value, str):
        return from_strings([value]).cast(kind)[0]
    dtype = numpy_dtype(kind) if kind in _NUMPY_DTYPES else np.dtype(type(value))
    return from_numpy(np.array([value], dtype)).cast(kind)[0]


def where_equal(col: pa.Array | pa.ChunkedArray, value: int) -> pa.Array:
    """A mask for `filter`: rows whose number `col` equals `value` (nulls: False), as
    `pc.equal(col, value)` without the pandas its Python scalar imports."""
    return where_in(col, [value])


def where_in(col: pa.Array | pa.ChunkedArray, values: Sequence[int]) -> pa.Array:
    """A mask for `filter`: rows whose number `col` is one of `values` (nulls: False), as
    `pc.is_in` does it: a float column compared as floats (59.5 is not 59)."""
    if pa.types.is_floating(col.type):
        chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
        numbers = np.concatenate([filled(c, 0) for c in chunks] or [np.zeros(0)])
    else:
        numbers = as_int64(col)
    return from_numpy(valid(col) & np.isin(numbers, np.asarray(values)))


def view(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """`arr` as numpy: a null-free integer or float column is read straight from its
    buffer (pyarrow's own `to_numpy` imports pandas when it is installed, a third of a
    second on a first screen that never needs it); anything else goes through pyarrow."""
    if isinstance(arr, pa.ChunkedArray):
        numeric = pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)
        if arr.num_chunks == 0 and numeric:  # (a table read from a file without batches)
            return np.zeros(0, numpy_dtype(arr.type))
        if arr.num_chunks != 1:
            if numeric and not arr.null_count:  # one copy, as pyarrow's, without pandas
                return np.concatenate([view(c) for c in arr.chunks])
            return arr.to_numpy()
        arr = arr.chunk(0)
    kind = arr.type
    if arr.null_count or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return arr.to_numpy(zero_copy_only=False)
    dtype = numpy_dtype(kind)
    if len(arr) == 0:
        return np.zeros(0, dtype)
    out = np.frombuffer(arr.buffers()[1], dtype, len(arr), arr.offset * dtype.itemsize)
    out.flags.writeable = False  # Arrow data is immutable, as with `to_numpy`
    return out


def filled(arr: pa.Array, fill: int) -> np.ndarray:
    """An integer array as numpy, its nulls replaced by `fill`, read from its buffers
    (`fill_null` builds a `pa.scalar`, which imports pandas too; see `view`): a read-only
    view without nulls, a copy with them."""
    if not arr.null_count:
        return view(arr)
    dtype = numpy_dtype(arr.type)
    out = np.frombuffer(arr.buffers()[1], dtype, len(arr), arr.offset * dtype.itemsize).copy()
    out[~_validity(arr)] = fill
    return out


def _validity(arr: pa.Array) -> np.ndarray:
    """`arr`'s validity bits (True: a value) for its own rows, from its bitmap: only the
    bytes under those rows are unpacked (a slice shares its parent's whole bitmap)."""
    lo, hi = arr.offset // 8, (arr.offset + len(arr) + 7) // 8
    bits = np.unpackbits(np.frombuffer(arr.buffers()[0], np.uint8, hi - lo, lo), bitorder="little")
    at = arr.offset % 8
    return bits[at : at + len(arr)].astype(bool)


def valid(col: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Where `col` is not null, as a bool array read from its validity bitmaps
    (`is_valid().to_numpy()` imports pandas; see `view`)."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = [_valid_chunk(c) for c in chunks]
    if not parts:
        return np.ones(0, bool)
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def _valid_chunk(arr: pa.Array) -> np.ndarray:
    if pa.types.is_dictionary(arr.type) and arr.dictionary.null_count:
        # a code that points at a null value is null too, for pyarrow
        return arr.is_valid().to_numpy(zero_copy_only=False)
    if not arr.null_count:
        return np.ones(len(arr), bool)
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), bool)
    return _validity(arr)


def ints(table: pa.Table, name: str, fill: int = 0) -> np.ndarray:
    """Column `name` as int64, nulls replaced by `fill`."""
    if table.num_rows == 0:
        return np.zeros(0, np.int64)
    return as_int64(table[name], fill)


def as_int64(col: pa.Array | pa.ChunkedArray, fill: int = 0) -> np.ndarray:
    """A number column as int64 (floats truncated), nulls replaced by `fill`, read from
    Arrow's buffers where it can (`to_numpy` imports pandas; see `view`)."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    if not chunks or pa.types.is_null(col.type):
        return np.full(len(col), fill, np.int64)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        filled_col = pc.fill_null(col, fill) if col.null_count else col
        return np.asarray(filled_col.to_numpy(zero_copy_only=False), dtype=np.int64)
    parts = []
    for c in chunks:
        if pa.types.is_integer(c.type):  # (a copy where it has nulls: writable)
            out = filled(c, 0).astype(np.int64, copy=False)
        else:
            out = filled(c, 0).astype(np.int64)
        if c.null_count and fill:  # (after the cast: an unsigned column takes -1 too)
            out[~_validity(c)] = fill
        parts.append(out)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def known(table: pa.Table, *names: str) -> np.ndarray:
    """Rows where none of columns `names` is null. A null id (pid, tid, correlation id)
    is unknown: it names no process, thread or call, and two of them are not the same one,
    so matching code masks them out with this instead of filling them with a sentinel."""
    ok = np.ones(table.num_rows, bool)
    for name in names:
        col = table[name]
        if col.null_count:
            ok &= pc.is_valid(col).to_numpy(zero_copy_only=False)
    return ok


def codes(table: pa.Table, name: str) -> tuple[np.ndarray, list[str]]:
    """A dictionary column as (int codes, dictionary); null -> code -1."""
    if table.num_rows == 0:
        return np.zeros(0, np.int64), []
    col = table[name]
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    arr = col.unify_dictionaries().combine_chunks() if col.num_chunks > 1 else col.chunk(0)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    values = [v if v is not None else "" for v in arr.dictionary.to_pylist()]
    return filled(arr.indices, -1).astype(np.int64, copy=False), values  # (no pandas)


def name_mask(table: pa.Table, name: str, pattern: re.Pattern[str]) -> np.ndarray:
    """Rows whose dictionary string in `name` matches `pattern` (searched, not anchored)."""
    c, values = codes(table, name)
    if not values:
        return np.zeros(len(c), bool)
    hit = np.array([bool(pattern.search(v)) for v in values] + [False], dtype=bool)
    return hit[c]  # code -1 -> the appended False


def strings(table: pa.Table, name: str) -> np.ndarray:
    """A dictionary column decoded to an object array of str ('' for null)."""
    c, values = codes(table, name)
    lut = np.array([*values, ""], dtype=object)
    return lut[c]


def like(pattern: str) -> re.Pattern[str]:
    """SQL LIKE (case-insensitive for ASCII, % and _ wildcards) as an anchored regex."""
    out = []
    for ch in pattern:
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
    return re.compile("^" + "".join(out) + "$", re.IGNORECASE | re.DOTALL)


def join_keys(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs (i, j) with left[i] == right[j] (an inner join), ordered by i."""
    if len(left) == 0 or len(right) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.argsort(right, kind="stable")
    sorted_r = right[order]
    lo = np.searchsorted(sorted_r, left, "left")
    hi = np.searchsorted(sorted_r, left, "right")
    n = hi - lo
    li = np.repeat(np.arange(len(left)), n)
    offs = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    rj = order[np.repeat(lo, n) + offs]
    return li.astype(np.int64), rj.astype(np.int64)


def first_match(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """For each left key, the index of one right row with the same key, or -1."""
    if len(right) == 0:
        return np.full(len(left), -1, np.int64)
    order = np.argsort(right, kind="stable")
    sorted_r = right[order]
    pos = np.searchsorted(sorted_r, left, "left")
    pos_c = np.minimum(pos, len(right) - 1)
    ok = (pos < len(right)) & (sorted_r[pos_c] == left)
    return np.where(ok, order[pos_c], -1).astype(np.int64)


def pid_corr_key(pid: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """One int64 key per (pid, correlation id): pids are 24-bit, correlation ids 32-bit."""
    return (pid.astype(np.int64) << 32) | (corr.astype(np.int64) & 0xFFFFFFFF)
