"""Build a big canonical table from row batches into preallocated columns.

Converting a 1M-row table in one piece holds the raw rows and their normalized copy at
once (2-3x the result). Here each raw batch is normalized and copied into numpy buffers
sized for the whole table, so peak memory stays near the size of the result; the end
result is one contiguous array per column (what a memory-mapped cache wants).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.load.dictcols import compact_dictionary


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
        for f in schema:
            # zeros, not empty: a big calloc is untouched memory until written, and a column
            # that stays null (return values, green contexts...) is never written at all
            self.data[f.name] = np.zeros(self.capacity, dtype=_dtype(f))
            self.valid[f.name] = None

    def _grow(self, need: int) -> None:
        cap = max(need, int(self.capacity * 1.5) + 1024)
        for name, arr in self.data.items():
            self.data[name] = np.resize(arr, cap)
            v = self.valid[name]
            if v is not None:
                self.valid[name] = np.resize(v, cap)
        self.capacity = cap

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
                v = np.ones(self.capacity, dtype=bool)
                self.valid[name] = v
            if values.null_count == len(values):
                v[lo:hi] = False  # the data stays zeros, untouched
                return
            v[lo:hi] = values.is_valid().to_numpy(zero_copy_only=False)
            values = pc.fill_null(values, 0)
        elif self.valid[name] is not None:
            self.valid[name][lo:hi] = True  # type: ignore[index]
        self.data[name][lo:hi] = values.to_numpy(zero_copy_only=False)

    def _track_order(self, t: pa.Table) -> None:
        if "start" not in t.column_names or not self.in_order:
            return
        s = t["start"].combine_chunks()
        if s.null_count:
            self.in_order = False
            return
        arr = s.to_numpy(zero_copy_only=False)
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
                data = data[order]
                valid = valid[order] if valid is not None else None
            arrays.append(self._array(f, data, valid))
        self.data.clear()
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def _array(self, f: pa.Field, data: np.ndarray, valid: np.ndarray | None) -> pa.Array:
        if pa.types.is_dictionary(f.type):
            dictionary = self.dictionaries.get(f.name, pa.array([], pa.string()))
            found = valid if valid is not None else np.ones(len(data), dtype=bool)
            return compact_dictionary(data, found, dictionary).cast(f.type)
        mask = ~valid if valid is not None else None
        return pa.array(data, type=f.type, mask=mask)


def _dtype(f: pa.Field) -> np.dtype:
    return np.dtype(np.int32 if pa.types.is_dictionary(f.type) else f.type.to_pandas_dtype())
