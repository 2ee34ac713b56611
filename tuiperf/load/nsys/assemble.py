"""Build a big canonical table from row batches into preallocated columns.

Converting a 1M-row table in one piece holds the raw rows and their normalized copy at
once (2-3x the result). Here each raw batch is normalized and copied into numpy buffers
sized for the whole table, so peak memory stays near the size of the result; the end
result is one contiguous array per column (what a memory-mapped cache wants). Converting
into the cache a table too big for the memory available, the buffers are spilled
(load.spill): memory-mapped files whose pages leave the process once written, so the
table never sits whole in memory.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.load import spill
from tuiperf.load.dictcols import compact_dictionary
from tuiperf.model.arrays import filled, from_numpy, numpy_dtype, view
from tuiperf.model.arrays import valid as valid_rows

#: rows per step where a spilled column is rewritten (sort, dictionary remap)
_STEP = 1 << 16


class Assembler:
    """Append canonical batches (dictionary columns encoded against one shared dictionary)."""

    def __init__(self, schema: pa.Schema, capacity: int) -> None:
        self.schema = schema
        self.capacity = max(capacity, 0)
        self.n = 0
        self.data: dict[str, np.ndarray] = {}
        self.valid: dict[str, np.ndarray | None] = {}
        self.dictionaries: dict[str, pa.Array] = {}
        self.in_order = True
        self._last_start: int | None = None
        row_bytes = sum(_dtype(f).itemsize for f in schema)
        self._spill = spill.folder(self.capacity * row_bytes)
        for f in schema:
            # zeros, not empty: a big calloc is untouched memory until written, and a column
            # that stays null (return values, green contexts...) is never written at all
            self.data[f.name] = self._zeros(self.capacity, _dtype(f))
            self.valid[f.name] = None

    def _zeros(self, n: int, dtype: np.dtype | type) -> np.ndarray:
        if self._spill is None:
            return np.zeros(n, dtype=dtype)
        return spill.zeros(n, dtype, self._spill)

    def _grow(self, need: int) -> None:
        cap = max(need, int(self.capacity * 1.5) + 1024)
        for name, arr in self.data.items():
            self.data[name] = self._resized(arr, cap)
            v = self.valid[name]
            if v is not None:
                self.valid[name] = self._resized(v, cap)
        self.capacity = cap

    def _resized(self, arr: np.ndarray, cap: int) -> np.ndarray:
        if self._spill is None:
            return np.resize(arr, cap)
        out = self._zeros(cap, arr.dtype)
        for lo in range(0, self.n, _STEP):
            hi = min(lo + _STEP, self.n)
            out[lo:hi] = arr[lo:hi]
            spill.drop_rows(out, lo, hi)
            spill.drop_rows(arr, lo, hi)
        return out

    def append(self, t: pa.Table) -> None:
        k = t.num_rows
        if k == 0:
            return
        if self.n + k > self.capacity:
            self._grow(self.n + k)
        lo, hi = self.n, self.n + k
        for f in self.schema:
            col = t[f.name].combine_chunks()
            if pa.types.is_dictionary(f.type):
                self.dictionaries.setdefault(f.name, col.dictionary)
                values = col.indices
            else:
                values = col
            self._put(f.name, values, lo, hi)
        self._track_order(t)
        self.n = hi

    def _put(self, name: str, values: pa.Array, lo: int, hi: int) -> None:
        if values.null_count:
            v = self.valid[name]
            if v is None:
                v = self._zeros(self.capacity, bool)
                v[:lo] = True  # the rows before had values
                spill.drop_rows(v, 0, lo)
                self.valid[name] = v
            if values.null_count == len(values):
                v[lo:hi] = False  # the data stays zeros, untouched
                spill.drop_rows(v, lo, hi)
                return
            v[lo:hi] = valid_rows(values)
            spill.drop_rows(v, lo, hi)
        elif (v := self.valid[name]) is not None:
            v[lo:hi] = True
            spill.drop_rows(v, lo, hi)
        out = self.data[name]
        out[lo:hi] = _numbers(values)
        spill.drop_rows(out, lo, hi)

    def _track_order(self, t: pa.Table) -> None:
        if "start" not in t.column_names or not self.in_order:
            return
        s = t["start"].combine_chunks()
        if s.null_count:
            self.in_order = False
            return
        arr = view(s)
        if (self._last_start is not None and arr[0] < self._last_start) or (
            len(arr) > 1 and not bool(np.all(arr[1:] >= arr[:-1]))
        ):
            self.in_order = False
        self._last_start = int(arr[-1])

    def finish(self) -> pa.Table:
        """The table, sorted by start (stable) unless the batches already were."""
        n = self.n
        order = None
        if not self.in_order and "start" in self.data:
            start = self.data["start"][:n]
            valid = self.valid["start"]
            key = np.where(valid[:n], start, np.iinfo(np.int64).max) if valid is not None else start
            order = np.argsort(key, kind="stable")
        arrays = []
        for f in self.schema:
            data = self.data[f.name][:n]
            valid = self.valid[f.name]
            valid = valid[:n] if valid is not None else None
            if order is not None:
                data = self._gather(data, order)
                valid = self._gather(valid, order) if valid is not None else None
            if self._spill is not None:
                arrays.append(_spilled_array(f, data, valid, self.dictionaries.get(f.name)))
            else:
                arrays.append(self._array(f, data, valid))
        self.data.clear()
        self.valid.clear()
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def _gather(self, arr: np.ndarray, order: np.ndarray) -> np.ndarray:
        if self._spill is None:
            return arr[order]
        out = self._zeros(len(order), arr.dtype)
        for lo in range(0, len(order), _STEP):
            hi = min(lo + _STEP, len(order))
            out[lo:hi] = arr[order[lo:hi]]
            spill.drop_rows(out, lo, hi)
        spill.drop_rows(arr, 0, len(arr))
        return out

    def _array(self, f: pa.Field, data: np.ndarray, valid: np.ndarray | None) -> pa.Array:
        if pa.types.is_dictionary(f.type):
            dictionary = self.dictionaries.get(f.name, pa.nulls(0, pa.string()))
            found = valid if valid is not None else np.ones(len(data), dtype=bool)
            return compact_dictionary(data, found, dictionary).cast(f.type)
        mask = ~valid if valid is not None else None
        if _is_number(f.type) and data.dtype == numpy_dtype(f.type):
            return from_numpy(data, mask)  # (`pa.array` imports pandas: see arrays.view)
        return pa.array(data, type=f.type, mask=mask)


def _is_number(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind)


def _numbers(values: pa.Array) -> np.ndarray:
    """A batch's numbers, nulls as 0, read from its buffers where it can."""
    if _is_number(values.type):
        return filled(values, 0)
    if values.null_count:
        values = pc.fill_null(values, 0)
    return values.to_numpy(zero_copy_only=False)


def _spilled_array(
    f: pa.Field, data: np.ndarray, valid: np.ndarray | None, dictionary: pa.Array | None
) -> pa.Array:
    """Column `f` over the spilled buffer itself (no copy): what `Assembler._array` builds
    in memory, the same values, nulls and dictionary."""
    bitmap = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    if valid is not None:
        spill.drop_rows(valid, 0, len(valid))
    if pa.types.is_dictionary(f.type):
        values = dictionary if dictionary is not None else pa.nulls(0, pa.string())
        keep = _remap_in_place(data, valid, len(values))
        if keep is not None:
            values = values.take(from_numpy(keep)) if len(keep) else pa.nulls(0, pa.string())
        idx = pa.Array.from_buffers(pa.int32(), len(data), [bitmap, pa.py_buffer(data)])
        return pa.DictionaryArray.from_arrays(idx, values.cast(pa.string())).cast(f.type)
    if data.dtype.kind in "iuf" and data.dtype.itemsize * 8 == f.type.bit_width:
        return pa.Array.from_buffers(f.type, len(data), [bitmap, pa.py_buffer(data)])
    mask = ~valid if valid is not None else None  # (no such column in the big tables)
    return pa.array(data, type=f.type, mask=mask)


def _remap_in_place(pos: np.ndarray, valid: np.ndarray | None, size: int) -> np.ndarray | None:
    """Renumber dictionary positions `pos` (int32, spilled) to the values used, in place,
    as dictcols.compact_dictionary does; the positions kept (None: every value is used)."""
    used = np.zeros(size + 1, dtype=bool)
    for lo in range(0, len(pos), _STEP):
        hi = min(lo + _STEP, len(pos))
        chunk = pos[lo:hi]
        used[chunk if valid is None else chunk[valid[lo:hi]]] = True
        spill.drop_rows(pos, lo, hi)
    keep = np.flatnonzero(used[:size])
    if len(keep) == size:
        return None
    remap = (np.cumsum(used) - 1).astype(np.int32)
    for lo in range(0, len(pos), _STEP):
        hi = min(lo + _STEP, len(pos))
        pos[lo:hi] = remap[pos[lo:hi]]
        spill.drop_rows(pos, lo, hi)
    return keep


def _dtype(f: pa.Field) -> np.dtype:
    return np.dtype(np.int32) if pa.types.is_dictionary(f.type) else numpy_dtype(f.type)
