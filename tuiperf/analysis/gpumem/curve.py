"""Allocated and reserved bytes over time on each device, their peaks, and the moments the
report looks into, from one pass over the events a chunk at a time (stream.py).

The curve keeps every event of a device with up to EXACT_MAX events. Above that it keeps,
per time bucket (CURVE_BUCKETS of them over the device's recording), the events where
allocated, reserved and requested are highest and lowest and the bucket's last event, so
the highest level of any stretch of at least a bucket is drawn exactly, the peaks are the
exact values at their exact times, and memory stays flat however long the recording.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.analysis.gpumem.replay import Replayed
from tuiperf.analysis.gpumem.stream import DeviceReplay, Moment
from tuiperf.load.gpumem import tables as T
from tuiperf.model import arrays as A

ACTIVE = "active_allocated"
#: a device with up to this many events keeps every one in its curve
EXACT_MAX = 1 << 16
#: time buckets of a longer device's curve: up to six events each (below); 16384 buckets
#: are ~40 columns of detail for each column of a 400-column timeline, in under 4 MiB
CURVE_BUCKETS = 1 << 14
#: events handed to the replay at a time
CHUNK = 1 << 16
_STATIC, _SEG_ALLOC = T.ACTIONS.index(T.STATIC), T.ACTIONS.index(T.SEG_ALLOC)


@dataclass
class DeviceMemory:
    """One device's totals over time (the curve: every event, or each bucket's extremes)
    and what was live at the moments the report needs."""

    device: int
    rows: np.ndarray  # rows of the events table (empty when the events were streamed)
    time_ns: np.ndarray  # on the report's clock; -1 where the source has no time
    allocated: np.ndarray
    reserved: np.ndarray
    requested: np.ndarray
    #: per event, when the curve keeps every event (empty arrays for a bucketed curve)
    replayed: Replayed
    #: whether the source knows allocations (nsys sees only cudaMalloc: reserved)
    has_allocated: bool
    #: bytes already allocated / reserved when the recording began (snapshot: from its
    #: state at the dump; torch.profiler: from its running totals)
    before_allocated: int = 0
    before_reserved: int = 0
    static_bytes: int = 0
    #: the device's events (the curve may keep fewer)
    events: int = 0
    peak: Moment | None = None
    at: Moment | None = None
    end: Moment | None = None
    ooms: list[Moment] = field(default_factory=list)
    #: per step given: allocated / reserved after the last event before it (-1: none)
    step_allocated: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    step_reserved: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    step_found: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def __len__(self) -> int:
        return self.events

    @property
    def peak_index(self) -> int:
        """Position in the curve of the first point at which allocated (else reserved) is
        highest (the peak's event: the curve keeps it)."""
        v = self.allocated if self.has_allocated else self.reserved
        return int(np.argmax(v)) if len(v) else -1

    def index_at(self, t: int) -> int:
        """Position in the curve of the last point at or before time `t` (-1: none)."""
        return int(np.searchsorted(self.time_ns, t, "right")) - 1


def per_device(
    data: T.MemoryData, step_starts: np.ndarray | None = None, at_ns: int | None = None
) -> list[DeviceMemory]:
    """Every device's curve and moments, in one pass over the events; `step_starts` (report
    clock) get the totals just before each, `at_ns` the moment of the last event at or
    before it."""
    stats = _stats(data)
    thresholds = None if step_starts is None else np.asarray(step_starts, np.int64) - 1
    runs = {d: _Run(data, d, stats.get(d), thresholds, at_ns) for d in data.devices}
    for ch in chunks(data):
        dev = ch["device"]
        for d, run in runs.items():
            mine = np.flatnonzero(dev == d)
            if len(mine):
                run.feed({k: v[mine] for k, v in ch.items()}, mine if run.keep_rows else None)
    return [run.finish() for run in runs.values()]


@dataclass
class _Stats:
    events: int = 0
    tmin: int = -1
    tmax: int = -1
    static: int = 0
    traced: set[int] = field(default_factory=set)


def _stats(data: T.MemoryData) -> dict[int, _Stats]:
    """Per device: its events, time range (raw clock), static bytes, segments allocated."""
    out: dict[int, _Stats] = {}
    for ch in chunks(data):
        dev, t = ch["device"], ch["time"]
        for d in np.unique(dev).tolist():
            mine = dev == d
            s = out.setdefault(d, _Stats())
            s.events += int(mine.sum())
            td = t[mine & (t >= 0)]
            if len(td):
                lo, hi = int(td.min()), int(td.max())
                s.tmin = lo if s.tmin < 0 else min(s.tmin, lo)
                s.tmax = max(s.tmax, hi)
            code = ch["code"][mine]
            s.static += int(ch["size"][mine][code == _STATIC].sum())
            s.traced.update(ch["addr"][mine][code == _SEG_ALLOC].tolist())
    return out


def chunks(data: T.MemoryData) -> Iterator[dict[str, np.ndarray]]:
    """The events a chunk at a time as int64 columns: device, code (index in ACTIONS, -1
    unknown), addr, size, time (-1 none), site (-1 none), free (device_free, -1 none),
    alloc_after and resv_after (the source's totals, 0 none)."""
    if data.spill is not None:
        yield from data.spill.chunks()
        return
    ev = data.events
    for lo in range(0, ev.num_rows, CHUNK):
        part = ev.slice(lo, CHUNK)
        yield {
            "device": A.ints(part, "device", -1),
            "code": action_codes(part),
            "addr": A.ints(part, "addr", 0),
            "size": A.ints(part, "size", 0),
            "time": A.ints(part, "time_ns", -1),
            "site": A.ints(part, "site", -1),
            "free": A.ints(part, "device_free", -1),
            "alloc_after": A.ints(part, "allocated_after", 0),
            "resv_after": A.ints(part, "reserved_after", 0),
        }


class _Run:
    """One device's replay and curve while the chunks pass."""

    def __init__(
        self,
        data: T.MemoryData,
        d: int,
        stats: _Stats | None,
        thresholds: np.ndarray | None,
        at_ns: int | None,
    ) -> None:
        self.data, self.d = data, d
        self.stats = stats or _Stats()
        self.kineto = data.kind == T.KINETO
        self.has_allocated = data.kind != T.NSYS
        self.exact_curve = self.stats.events <= EXACT_MAX
        self.keep_rows = data.spill is None
        self.origin = 0
        if data.kind == T.SNAPSHOT and self.stats.tmin >= 0:
            origin = data.epoch_origin_ns
            self.origin = self.stats.tmin if origin is None else origin
        dump = _untraced(data, d, self.stats.traced) if data.kind == T.SNAPSHOT else {}
        self.r = DeviceReplay(data.kind != T.SNAPSHOT, self.has_allocated, at_ns, dump)
        self.r.keep_freed = self.exact_curve
        lo = self.stats.tmin - self.origin if self.stats.tmin >= 0 else 0
        hi = self.stats.tmax - self.origin if self.stats.tmax >= 0 else 0
        self.t0, self.width = lo, max(1, -(-(hi - lo + 1) // CURVE_BUCKETS))
        self.thr = thresholds
        n = 0 if thresholds is None else len(thresholds)
        self.step_a, self.step_r = np.zeros(n, np.int64), np.zeros(n, np.int64)
        self.step_found = np.zeros(n, bool)
        self.parts: dict[str, list[np.ndarray]] = {
            k: [] for k in ("t", "a", "r", "q", "b", "ra", "rr", "rows")
        }
        self.first: tuple[int, int] | None = None  # reported - replayed allocated, reserved

    def feed(self, ch: dict[str, np.ndarray], rows: np.ndarray | None) -> None:
        t = ch["time"]
        if self.origin:
            t = np.where(t >= 0, t - self.origin, -1)
        level = ch["alloc_after"].tolist() if self.kineto else None
        resv = ch["resv_after"].tolist() if self.kineto else None
        code, addr, size = (ch[k].tolist() for k in ("code", "addr", "size"))
        site, free = ch["site"].tolist(), ch["free"].tolist()
        ra, rr, rq, rb = self.r.feed(code, addr, size, t.tolist(), site, free, level, resv)
        a, r, q = np.array(ra, np.int64), np.array(rr, np.int64), np.array(rq, np.int64)
        if self.kineto:
            if self.first is None and len(a):
                self.first = (int(ch["alloc_after"][0] - a[0]), int(ch["resv_after"][0] - r[0]))
            a, r = ch["alloc_after"], ch["resv_after"]
        self._steps(t, a, r)
        keep = slice(None) if self.exact_curve else self._pick(t, a, r, q)
        p = self.parts
        p["t"].append(t[keep])
        p["a"].append(a[keep])
        p["r"].append(r[keep])
        p["q"].append(q[keep])
        if self.exact_curve:
            p["b"].append(np.array(rb, np.int64))
            p["ra"].append(np.array(ra, np.int64))
            p["rr"].append(np.array(rr, np.int64))
        if rows is not None:
            p["rows"].append(rows)

    def _steps(self, t: np.ndarray, a: np.ndarray, r: np.ndarray) -> None:
        if self.thr is None or not len(self.thr) or not len(t):
            return
        k = np.searchsorted(t, self.thr, "right") - 1
        hit = k >= 0
        self.step_a[hit], self.step_r[hit] = a[k[hit]], r[k[hit]]
        self.step_found |= hit

    def _pick(self, t: np.ndarray, *vals: np.ndarray) -> np.ndarray:
        """Positions of each bucket's highest and lowest allocated and reserved, highest
        requested (the first of equals) and last event, in order."""
        bucket = np.where(t >= 0, (t - self.t0) // self.width, -1)
        new = np.ones(len(t), bool)
        new[1:] = bucket[1:] != bucket[:-1]
        starts = np.flatnonzero(new)
        run = np.cumsum(new) - 1
        picks = [np.append(starts[1:] - 1, len(t) - 1)]
        a, r, q = vals
        for v, lows in ((a, True), (r, True), (q, False)):
            picks.append(_first_where(v == np.maximum.reduceat(v, starts)[run], run))
            if lows:
                picks.append(_first_where(v == np.minimum.reduceat(v, starts)[run], run))
        return np.unique(np.concatenate(picks))

    def finish(self) -> DeviceMemory:
        p, r = self.parts, self.r
        cat = {k: np.concatenate(v) if v else np.zeros(0, np.int64) for k, v in p.items()}
        n = r.n
        empty = np.zeros(0, np.int64)
        replayed = Replayed(empty, empty, empty, empty, empty)
        if self.exact_curve:
            freed = np.full(n, -1, np.int64)
            for j, i in r.freed_pairs:
                freed[j] = i
            replayed = Replayed(cat["ra"], cat["rr"], cat["q"], cat["b"], freed)
        m = DeviceMemory(
            self.d, cat["rows"], cat["t"], cat["a"].copy(), cat["r"].copy(), cat["q"],
            replayed, self.has_allocated, static_bytes=self.stats.static, events=n,
        )  # fmt: skip
        last_t = int(cat["t"][-1]) if n else -1
        m.end = r.end(last_t)
        m.peak = r.at_mark(r.peak) if r.peak.pos >= 0 else None
        m.at = r.at_mark(r.at) if r.at is not None and r.at.pos >= 0 else None
        m.ooms = r.ooms
        m.step_allocated, m.step_reserved, m.step_found = self.step_a, self.step_r, self.step_found
        self._anchor(m)
        return m

    def _anchor(self, m: DeviceMemory) -> None:
        """Shift the replayed totals by what was there before the recording began."""
        if self.kineto and self.first is not None:
            m.before_allocated, m.before_reserved = self.first
        elif self.data.kind == T.SNAPSHOT:
            data, d = self.data, self.d
            blocks = data.blocks.filter(pc.equal(data.blocks["device"], d))
            active = blocks.filter(pc.equal(blocks["state"], ACTIVE))
            end_alloc = int(pc.sum(active["size"]).as_py() or 0)
            segs = data.segments.filter(pc.equal(data.segments["device"], d))
            end_resv = int(pc.sum(segs["total_size"]).as_py() or 0)
            last_a = m.end.allocated if m.end is not None and len(m) else 0
            last_r = m.end.reserved if m.end is not None and len(m) else 0
            m.before_allocated, m.before_reserved = end_alloc - last_a, end_resv - last_r
            ba, br = m.before_allocated, m.before_reserved
            m.allocated += ba
            m.reserved += br
            m.step_allocated = m.step_allocated + ba
            m.step_reserved = m.step_reserved + br
            for x in (m.end, m.peak, m.at, *m.ooms):
                if x is not None:
                    x.allocated += ba
                    x.reserved += br


def _first_where(mask: np.ndarray, run: np.ndarray) -> np.ndarray:
    idx = np.flatnonzero(mask)
    r = run[idx]
    first = np.ones(len(idx), bool)
    first[1:] = r[1:] != r[:-1]
    return idx[first]


def _untraced(data: T.MemoryData, d: int, traced: set[int]) -> dict[int, int]:
    """The dump's segments on device `d` that the trace never allocated (older than the
    recording): address -> bytes."""
    segs = data.segments.filter(pc.equal(data.segments["device"], d))
    pairs = zip(A.ints(segs, "address", 0).tolist(), A.ints(segs, "total_size", 0).tolist())
    return {a: s for a, s in pairs if a not in traced}


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
