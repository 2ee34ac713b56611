"""The per-lane interval index of a table, kept in the trace's cache entry.

Building the lanes of a 1M-kernel report (group by lane key, gather, running maxima,
unions, prefix sums) is O(n) numpy work: about half a second on two cores, most of a first
screen from the cache. Stored once as two Arrow tables beside the report's tables, a reopen
memory-maps them and slices each lane out of them without touching the events.

`lane-index-<table>`: one row per event, lanes one after the other: `rows` (into the
table), `starts`, `ends` and `aux`, which is the lane's running maximum of ends when its
events overlap, else its running busy sums, inclusive (`Intervals.cum_busy`; the union is
then the events themselves). `lane-union-<table>`: for the overlapping lanes only, their
union and its running busy sums (column `prefix`). Both are used as stored: no copy.
The lane keys and offsets go in the first table's schema metadata. Each lane is a record
batch of its own in both files: written from the lanes' arrays as they are (no copy of the
whole index into one buffer first), and read back as one contiguous array per lane.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays
from tuiperf.model.timeline.lane_intervals import Intervals
from tuiperf.model.trace import Trace

#: bump when the layout of the stored index changes
LAYOUT = 2


def load_split(trace: Trace, table: str, cols: tuple[str, ...]) -> dict[tuple, Any] | None:
    """The lanes of `table` from the cache entry, or None when absent or stale."""
    cache, key = trace.cache, trace.cache_key
    if cache is None or key is None:
        return None
    name = _name(table, cols)
    events = cache.load_derived(key, f"lane-index-{name}")
    union = cache.load_derived(key, f"lane-union-{name}")
    if events is None or union is None:
        return None
    meta = _meta(events)
    if meta is None or meta.get("rows_in_table") != trace.table(table, ["start"]).num_rows:
        return None
    ev = _Spans(events, ("rows", "starts", "ends", "aux"))
    un = _Spans(union, ("u_start", "u_end", "prefix"))
    out: dict[tuple, Any] = {}
    for lane in meta["lanes"]:
        rows, starts, ends, aux = ev.get(lane["at"], lane["n"])
        if lane["union_n"] < 0:  # disjoint: the union is the events, aux their busy sums
            out[tuple(lane["key"])] = Intervals.restored(
                starts, ends, rows, ends, starts, ends, aux
            )
        else:
            u_start, u_end, prefix = un.get(lane["union_at"], lane["union_n"])
            out[tuple(lane["key"])] = Intervals.restored(
                starts, ends, rows, aux, u_start, u_end, prefix
            )
    return out


class _Spans:
    """Columns of a table read by (offset, length): a span that is one record batch is
    that batch's memory-mapped arrays, as they are; any other span is copied."""

    def __init__(self, t: pa.Table, names: tuple[str, ...]) -> None:
        self.cols = [t[n] for n in names]
        self.at: dict[tuple[int, int], int] = {}
        offset = 0
        for i, batch_rows in enumerate(len(c) for c in (self.cols[0].chunks if names else [])):
            self.at[(offset, batch_rows)] = i
            offset += batch_rows

    def get(self, at: int, n: int) -> list[np.ndarray]:
        i = self.at.get((at, n))
        if i is not None:
            return [_view(c.chunk(i)) for c in self.cols]
        return [_view(c.slice(at, n)) for c in self.cols]


def store_split(trace: Trace, table: str, cols: tuple[str, ...], split: dict[tuple, Any]) -> None:
    """Keep `split` (lane key -> Intervals) in the cache entry; silently skip what JSON
    cannot describe (keys of odd types)."""
    cache, key = trace.cache, trace.cache_key
    if cache is None or key is None:
        return
    lanes, ev_parts, un_parts = [], [], []
    at = union_at = 0
    for k, iv in split.items():
        disjoint = iv.u_start is iv.starts
        lane = {"key": list(k), "at": at, "n": len(iv), "union_at": union_at, "union_n": -1}
        aux = iv.cum_busy if disjoint else iv.max_end
        ev_parts.append((iv.rows, iv.starts, iv.ends, aux))
        if not disjoint:
            lane["union_n"] = len(iv.u_start)
            un_parts.append((iv.u_start, iv.u_end, iv.cum_busy))
            union_at += len(iv.u_start)
        lanes.append(lane)
        at += len(iv)
    meta = {"layout": LAYOUT, "rows_in_table": trace.table(table, ["start"]).num_rows}
    try:
        text = json.dumps(meta | {"lanes": lanes}).encode()
    except TypeError:
        return
    events = _table(("rows", "starts", "ends", "aux"), ev_parts).replace_schema_metadata(
        {b"lanes": text}
    )
    name = _name(table, cols)
    union = _table(("u_start", "u_end", "prefix"), un_parts)
    cache.store_derived(key, f"lane-union-{name}", union, keep_chunks=True)
    cache.store_derived(key, f"lane-index-{name}", events, keep_chunks=True)


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


def _view(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    if isinstance(col, pa.ChunkedArray) and col.num_chunks == 0:
        return np.zeros(0, dtype=np.int64)
    return arrays.view(col)


def _table(names: tuple[str, ...], parts: list[tuple[Any, ...]]) -> pa.Table:
    """A record batch per part (a lane), over its arrays without a copy (int64 already)."""
    schema = pa.schema([pa.field(n, pa.int64()) for n in names])
    batches = [
        pa.record_batch([pa.array(np.asarray(a, dtype=np.int64)) for a in part], schema=schema)
        for part in parts
    ]
    return pa.Table.from_batches(batches, schema=schema)
