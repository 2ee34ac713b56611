"""The per-lane split of a table, kept in the trace's cache entry.

Splitting the events of a table into lanes (coding each row's lane key, scattering the rows
lane by lane) is most of a first screen from the cache when done again: 0.27 s of 0.40 at
1M kernels on two cores, 0.58 of 0.73 s at 5M (bench/cache_size.md). What it finds is kept
as `lane-index-<table>`: for each lane, which rows of the table it holds, in its order. A
lane that is one run of consecutive rows (a stream's kernels, when the report has one
stream) stores no rows at all, only where the run starts; the others store theirs as
int32 (int64 past 2^31 rows). The lane keys, offsets and runs go in the file's schema
metadata.

The rest of a lane (its starts, repaired ends, running maxima, union and busy sums) is
computed again from the table's `start` and `end` on reopen, by the same code a build
runs (`Intervals.owned` over the lane's rows): 4 bytes a row or none are stored, where
storing those arrays took 32 bytes a row, more than the report's own size for the event
tables (bench/cache_size.md). A run's starts are the table's own memory-mapped column.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model import arrays, scratch
from tuiperf.model.scratch import Alloc
from tuiperf.model.timeline.lane_intervals import Intervals
from tuiperf.model.timeline.lane_split import table_times
from tuiperf.model.trace import Trace

#: bump when the layout of the stored index changes
LAYOUT = 3


def load_split(trace: Trace, table: str, cols: tuple[str, ...]) -> dict[tuple, Any] | None:
    """The lanes of `table` from the cache entry, or None when absent, stale or damaged."""
    cache, key = trace.cache, trace.cache_key
    if cache is None or key is None:
        return None
    index = cache.load_derived(key, f"lane-index-{_name(table, cols)}")
    meta = _meta(index) if index is not None else None
    t = trace.table(table, ["start", "end"])
    if index is None or meta is None or meta.get("rows_in_table") != t.num_rows:
        return None
    starts, ends = table_times(t)
    alloc = allocator(trace, t.num_rows)
    out: dict[tuple, Any] = {}
    try:
        rows = _rows(index, t.num_rows)
        lanes = meta["lanes"]
        if sum(int(lane["n"]) for lane in lanes) != t.num_rows:
            raise ValueError  # the lanes hold every row once
        for lane in lanes:
            out[tuple(lane["key"])] = _lane(lane, rows, starts, ends, alloc)
    except (IndexError, KeyError, TypeError, ValueError):
        return None  # not what store_split writes: built again
    return out


def _rows(index: pa.Table, n_rows: int) -> np.ndarray:
    """The stored rows, each a row of the table (else ValueError)."""
    rows = arrays.view(index["rows"])
    if len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= n_rows):
        raise ValueError
    return rows


def allocator(trace: Trace, n_rows: int) -> Alloc:
    """np.empty, or the cache entry's scratch files for a table whose lanes' arrays
    (starts, ends, busy sums: 24 bytes a row; split anew, rows too) pass
    `scratch.scratch_from()`: 5 GiB of them at 51.2M kernels (bench/big_tables_wide.md)."""
    return scratch.allocator(trace, n_rows * 24)


def _lane(
    lane: dict, rows: np.ndarray, starts: np.ndarray, ends: np.ndarray, alloc: Alloc = np.empty
) -> Intervals:
    """One lane's Intervals: its rows' starts and repaired ends, indexed like a build."""
    n, first = int(lane["n"]), int(lane["first"])
    if n < 0:
        raise ValueError
    if first >= 0:  # a run of rows: the table's columns, sliced
        if first + n > len(starts):
            raise IndexError  # a run past the table
        s, e = starts[first : first + n], ends[first : first + n]
        if np.any(e < s):  # (`<=` would do the same: an end at its start is kept as is)
            e = np.maximum(e, s, out=alloc(n, e.dtype))
        return Intervals.owned(s, e, np.arange(first, first + n), alloc)
    at = int(lane["at"])
    if at < 0 or at + n > len(rows):
        raise IndexError  # rows past the index
    r = rows[at : at + n]  # memory-mapped, as stored
    s = _gather(starts, r, alloc)
    e = _gather(ends, r, alloc)
    np.maximum(e, s, out=e)
    return Intervals.owned(s, e, r, alloc)


#: rows gathered at a time into an array that `alloc` gave
_GATHER_STEP = 1 << 22


def _gather(values: np.ndarray, rows: np.ndarray, alloc: Alloc = np.empty) -> np.ndarray:
    """`values[rows]` through Arrow's take (3.4× numpy's at 50M rows on two cores), without
    its bounds check: `_rows` checked every row once. The result is this call's own: Arrow's
    buffer, or (a scratch `alloc`) filled a step at a time."""
    if alloc is np.empty:
        return _take(values, rows)
    out = alloc(len(rows), values.dtype)
    for lo in range(0, len(rows), _GATHER_STEP):
        out[lo : lo + _GATHER_STEP] = _take(values, rows[lo : lo + _GATHER_STEP])
    return out


def _take(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    got = pc.take(_arrow(values), _arrow(rows), boundscheck=False)
    return np.frombuffer(got.buffers()[1], values.dtype, len(got), got.offset * values.itemsize)


def _arrow(a: np.ndarray) -> pa.Array:
    """A contiguous integer numpy array as an Arrow array over the same memory (not
    `pa.array`, which imports pandas when it is installed: a first screen never needs it)."""
    kind = pa.from_numpy_dtype(a.dtype)
    return pa.Array.from_buffers(kind, len(a), [None, pa.py_buffer(np.ascontiguousarray(a))])


def store_split(trace: Trace, table: str, cols: tuple[str, ...], split: dict[tuple, Any]) -> None:
    """Keep `split` (lane key -> Intervals) in the cache entry; silently skip what JSON
    cannot describe (keys of odd types)."""
    cache, key = trace.cache, trace.cache_key
    if cache is None or key is None:
        return
    n_rows = trace.table(table, ["start"]).num_rows
    dtype = arrays.numpy_dtype(rows_type(n_rows))
    lanes, parts = [], []
    at = 0
    for k, iv in split.items():
        first = _run_start(iv.rows)
        lanes.append({"key": list(k), "n": len(iv), "first": first, "at": at})
        if first < 0:
            parts.append(iv.rows.astype(dtype))
            at += len(iv)
    meta = {"layout": LAYOUT, "rows_in_table": n_rows}
    try:
        text = json.dumps(meta | {"lanes": lanes}).encode()
    except TypeError:
        return
    rows = np.concatenate(parts) if parts else np.zeros(0, dtype)
    # (on buffers: `pa.table` of an ndarray imports pandas; model/arrays.py)
    index = pa.table({"rows": arrays.from_numpy(rows)}).replace_schema_metadata({b"lanes": text})
    cache.store_derived(key, f"lane-index-{_name(table, cols)}", index)


def rows_type(n_rows: int) -> pa.DataType:
    """How a table of `n_rows` rows numbers them in the index: int32 while its last row
    (n_rows - 1) fits."""
    return pa.int32() if n_rows - 1 <= np.iinfo(np.int32).max else pa.int64()


def _run_start(rows: np.ndarray) -> int:
    """The first row when `rows` are consecutive ascending rows, else -1."""
    n = len(rows)
    if n == 0:
        return 0
    first = int(rows[0])
    if int(rows[-1]) != first + n - 1 or bool(np.any(np.diff(rows) != 1)):
        return -1
    return first


def _name(table: str, cols: tuple[str, ...]) -> str:
    return f"{table}-{'-'.join(cols)}"


def _meta(t: pa.Table) -> dict[str, Any] | None:
    raw = (t.schema.metadata or {}).get(b"lanes")
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    return meta if isinstance(meta, dict) and meta.get("layout") == LAYOUT else None
