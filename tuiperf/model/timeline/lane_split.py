"""A table's events split into lanes by their key columns, each lane as sorted Intervals.

The lane of each row is coded first (`key_codes`): integer key columns through a lookup
table per column (every value a column takes, within a range of `LOOKUP_MAX_SPAN`), then
one over the combined codes, so coding is two gathers a row, no hashing; other columns
(text, wide values) are hashed. The rows are then read `SPLIT_CHUNK_ROWS` at a time and
scattered into per-lane arrays sized by a count of each lane's rows: the temporaries are a
chunk's, not the table's, and every output array is written once (no table-wide sort, no
gather of the whole table). Ends are repaired as the rows are read: a missing end, or one
before its start, becomes the start.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model.arrays import filled, from_numpy
from tuiperf.model.scratch import Alloc
from tuiperf.model.timeline.lane_intervals import Intervals

#: rows read at a time (the temporaries are a few arrays of this many rows)
SPLIT_CHUNK_ROWS = 1 << 20
#: the widest range of values of one key column coded through a lookup table (an int64
#: per value in the range: 32 MiB at most); wider ranges are hashed
LOOKUP_MAX_SPAN = 1 << 22
#: the most combined keys (products of the columns' distinct values) coded through a
#: lookup table; more are hashed
_COMBINED_MAX = 1 << 24

Codes = tuple[np.ndarray, list[tuple]]


def split_table(t: pa.Table, cols: tuple[str, ...], alloc: Alloc = np.empty) -> dict:
    """Events of `t` grouped by the key columns (lane key -> Intervals), in key order; the
    lanes' arrays from `alloc` (a cache entry's scratch files for a big table)."""
    if t.num_rows == 0:
        return {}
    code, keys = key_codes(t, cols)
    counts = np.bincount(code)  # every key has rows: one count per key
    rows = [alloc(int(c), np.int64) for c in counts]
    starts = [alloc(int(c), np.int64) for c in counts]
    ends = [alloc(int(c), np.int64) for c in counts]
    done = np.zeros(len(keys), np.int64)
    for off, s, e in _chunks(t):
        c = code[off : off + len(s)]
        order = np.argsort(c, kind="stable")  # a radix sort of small codes: table order kept
        per = np.bincount(c)
        last = np.cumsum(per)
        for k in np.flatnonzero(per):
            idx = order[last[k] - per[k] : last[k]]
            at, m = done[k], len(idx)
            rows[k][at : at + m] = idx + off
            starts[k][at : at + m] = s[idx]
            ends[k][at : at + m] = e[idx]
            done[k] += m
    return {key: Intervals.owned(starts[k], ends[k], rows[k], alloc) for k, key in enumerate(keys)}


def table_times(t: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The starts (missing: 0) and ends (missing: the lowest int64, which the repair
    `max(end, start)` turns into the start) of every row of `t`, as `split_table` reads
    them: views of the columns when they are one chunk without nulls."""
    return _column(t["start"], 0), _column(t["end"], np.iinfo(np.int64).min)


def _chunks(t: pa.Table) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(first row, starts, repaired ends) of each `SPLIT_CHUNK_ROWS` rows of `t`."""
    for off in range(0, t.num_rows, SPLIT_CHUNK_ROWS):
        part = t.slice(off, SPLIT_CHUNK_ROWS)  # the last one shorter
        s = _column(part["start"], 0)
        e = _column(part["end"], np.iinfo(np.int64).min)
        yield off, s, np.maximum(e, s)


def _column(col: pa.ChunkedArray, fill: int) -> np.ndarray:
    """An integer column as int64 numpy, nulls as `fill` (one chunk: a view where it can).
    A narrower column (a cache entry stores ids narrow) is widened a chunk at a time,
    before its nulls are filled: `fill` may not fit its own type."""
    parts = [filled(_wide(c) if c.null_count else c, fill) for c in col.chunks if len(c)]
    if not parts:
        return np.zeros(0, np.int64)
    out = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return out.astype(np.int64, copy=False)


def _wide(c: pa.Array) -> pa.Array:
    return c if c.type == pa.int64() else c.cast(pa.int64())


def key_codes(t: pa.Table, cols: tuple[str, ...]) -> Codes:
    """A small integer per row naming its key (0..k-1, keys in sorted order when coded by
    lookup, else in order of first appearance) and the key of each code."""
    found = _lookup_codes(t, cols)
    return found if found is not None else _hashed_codes(t, cols)


def _lookup_codes(t: pa.Table, cols: tuple[str, ...]) -> Codes | None:
    """Codes through lookup tables; None when a column is not integer or too wide."""
    columns = []
    for name in cols:
        found = _column_lookup(t[name])
        if found is None:
            return None
        columns.append(found)
    space = 1
    for _, _, values in columns:
        space *= len(values)
    if space > _COMBINED_MAX:
        return None
    combined = np.zeros(t.num_rows, np.int32)  # space <= _COMBINED_MAX < 2**31
    for name, (lo, lut, values) in zip(cols, columns):
        for off, slot in _slots(t[name], lo, t.num_rows):
            part = combined[off : off + len(slot)]
            part *= len(values)
            part += lut[slot]
    present = np.zeros(space, bool)
    present[combined] = True
    lut = np.cumsum(present, dtype=np.int32) - 1
    code = lut[combined].astype(np.uint16 if present.sum() <= 1 << 16 else np.int32)
    return code, [_decode(int(c), columns) for c in np.flatnonzero(present)]


def _column_lookup(col: pa.ChunkedArray) -> tuple[int, np.ndarray, list] | None:
    """(lowest value, slot -> code, the values in code order; None for null) of an integer
    column whose values span at most LOOKUP_MAX_SPAN; None otherwise."""
    if not pa.types.is_integer(col.type):
        return None
    mm = pc.min_max(col).as_py()
    lo, hi = mm["min"], mm["max"]
    if lo is None:
        lo = hi = 0
    span = int(hi) - int(lo) + 2  # slot 0: null; slot v - lo + 1: value v
    if span > LOOKUP_MAX_SPAN:
        return None
    present = np.zeros(span, bool)
    for _, slot in _slots(col, int(lo), len(col)):
        present[slot] = True
    lut = np.cumsum(present, dtype=np.int32) - 1
    values = [None if s == 0 else int(s) + int(lo) - 1 for s in np.flatnonzero(present)]
    return int(lo), lut, values


def _slots(col: pa.ChunkedArray, lo: int, n: int) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, slot of each value: null 0, value v at v - lo + 1) in chunks."""
    for off in range(0, n, SPLIT_CHUNK_ROWS):
        v = _column(col.slice(off, SPLIT_CHUNK_ROWS), lo - 1)
        yield off, v - (lo - 1)


def _decode(c: int, columns: list[tuple[int, np.ndarray, list]]) -> tuple:
    parts = []
    for _, _, values in reversed(columns):
        c, k = divmod(c, len(values))
        parts.append(values[k])
    return tuple(reversed(parts))


def _hashed_codes(t: pa.Table, cols: tuple[str, ...]) -> Codes:
    """Codes by hashing each column's values, then their combinations (any types)."""
    combined: np.ndarray | None = None
    uniques: list[list] = []
    for name in cols:
        col = t[name]
        if pa.types.is_dictionary(col.type):
            col = col.cast(pa.string())
        u = pc.unique(col)
        codes = _column(pc.index_in(col, value_set=u), -1)
        uniques.append(u.to_pylist())
        combined = codes if combined is None else combined * len(u) + codes
    assert combined is not None
    # (Arrow arrays on numpy's buffers: `pa.array` imports pandas; model/arrays.py)
    combined_arrow = from_numpy(np.asarray(combined, np.int64))
    u = pc.unique(combined_arrow)
    code = _column(pa.chunked_array([pc.index_in(combined_arrow, value_set=u)]), -1)
    keys = []
    for c in u.to_pylist():
        parts = []
        for vals in reversed(uniques):
            c, k = divmod(c, len(vals))
            parts.append(vals[k])
        keys.append(tuple(reversed(parts)))
    return code, keys
