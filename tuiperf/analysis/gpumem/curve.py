"""Allocated and reserved bytes over time on each device, and their peaks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.analysis.gpumem.replay import Replayed, replay
from tuiperf.load.gpumem import tables as T
from tuiperf.model import arrays as A

ACTIVE = "active_allocated"


@dataclass
class DeviceMemory:
    """One device's events (rows of the source's events table) and totals after each."""

    device: int
    rows: np.ndarray
    time_ns: np.ndarray  # on the report's clock; -1 where the source has no time
    allocated: np.ndarray
    reserved: np.ndarray
    requested: np.ndarray
    replayed: Replayed
    #: whether the source knows allocations (nsys sees only cudaMalloc: reserved)
    has_allocated: bool
    #: bytes already allocated / reserved when the recording began (snapshot: from its
    #: state at the dump; torch.profiler: from its running totals)
    before_allocated: int = 0
    before_reserved: int = 0
    static_bytes: int = 0

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def peak_index(self) -> int:
        """Position of the first event at which allocated (else reserved) is highest."""
        v = self.allocated if self.has_allocated else self.reserved
        return int(np.argmax(v)) if len(v) else -1

    def index_at(self, t: int) -> int:
        """Position of the last event at or before time `t` (-1: none)."""
        return int(np.searchsorted(self.time_ns, t, "right")) - 1


def per_device(data: T.MemoryData) -> list[DeviceMemory]:
    dev = A.ints(data.events, "device", -1)
    return [_device(data, d, np.flatnonzero(dev == d)) for d in data.devices]


def _device(data: T.MemoryData, d: int, rows: np.ndarray) -> DeviceMemory:
    ev = rows_of(data, rows)
    codes = action_codes(ev)
    size = A.ints(ev, "size", 0)
    exact = data.kind != T.SNAPSHOT
    r = replay(codes, A.ints(ev, "addr", 0), size, exact)
    static = int(size[codes == T.ACTIONS.index(T.STATIC)].sum())
    m = DeviceMemory(d, rows, _times(data, ev), r.allocated, r.reserved,
                     r.requested, r, data.kind != T.NSYS, static_bytes=static)  # fmt: skip
    _anchor(m, data, ev, d)
    return m


def rows_of(data: T.MemoryData, rows: np.ndarray) -> pa.Table:
    """The events at `rows` (the whole table, not a copy, when they are all of it)."""
    if len(rows) == data.events.num_rows:
        return data.events
    return data.events.take(pa.array(rows))


def action_codes(ev: pa.Table) -> np.ndarray:
    """Each event's action as its index in tables.ACTIONS."""
    codes, labels = A.codes(ev, "action")
    lut = np.array([T.ACTIONS.index(x) if x in T.ACTIONS else -1 for x in labels] + [-1])
    return lut[codes]


def _times(data: T.MemoryData, ev: pa.Table) -> np.ndarray:
    t = A.ints(ev, "time_ns", -1)
    if data.kind == T.SNAPSHOT and (t >= 0).any():
        origin = data.epoch_origin_ns  # a timeline's time 0, else the first entry
        origin = int(t[t >= 0].min()) if origin is None else origin
        t = np.where(t >= 0, t - origin, -1)
    return t


def _anchor(m: DeviceMemory, data: T.MemoryData, ev: pa.Table, d: int) -> None:
    """Shift the replayed totals by what was there before the recording began."""
    if data.kind == T.KINETO and len(m):
        m.allocated = A.ints(ev, "allocated_after", 0)
        m.reserved = A.ints(ev, "reserved_after", 0)
        m.before_allocated = int(m.allocated[0] - m.replayed.allocated[0])
        m.before_reserved = int(m.reserved[0] - m.replayed.reserved[0])
    elif data.kind == T.SNAPSHOT:
        blocks = data.blocks.filter(pc.equal(data.blocks["device"], d))
        active = blocks.filter(pc.equal(blocks["state"], ACTIVE))
        end_alloc = int(pc.sum(active["size"]).as_py() or 0)
        segs = data.segments.filter(pc.equal(data.segments["device"], d))
        end_resv = int(pc.sum(segs["total_size"]).as_py() or 0)
        last_a = int(m.allocated[-1]) if len(m) else 0
        last_r = int(m.reserved[-1]) if len(m) else 0
        m.before_allocated, m.before_reserved = end_alloc - last_a, end_resv - last_r
        m.allocated += m.before_allocated
        m.reserved += m.before_reserved
