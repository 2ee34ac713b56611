"""One pass over a device's allocator events, in chunks, keeping what is live, not the events.

The replay follows replay.py's rules (block sizes, frees awaiting completion, allocations
made before the recording). Per event it keeps nothing beyond the chunk it is in: the
totals over time are kept as the curve (curve.py: every event up to EXACT_MAX events,
else the extremes of each time bucket); the moments the report needs (the peak, `--at`,
each out-of-memory, the end) keep the allocations live there. The peak is found in the
same pass: when a new highest level is reached the peak moves there, and an allocation
live at the peak that is freed later is remembered (`Mark.freed`), so what was live at the
peak is what is still live and made by then plus those; the segments at the peak are the
segments now with the later segment events undone (or copied once that log grows past
the segments themselves).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from tuiperf.analysis.gpumem.replay import _Segments, block_size, round_size
from tuiperf.load.gpumem import tables as T

_ALLOC, _FREE, _FREE_DONE, _SEG_ALLOC, _SEG_FREE, _OOM = (
    T.ACTIONS.index(a) for a in (T.ALLOC, T.FREE, T.FREE_DONE, T.SEG_ALLOC, T.SEG_FREE, T.OOM)
)
#: an allocation: [event position, address, block bytes, requested bytes, site, time,
#: position of the free that released it (-1: not freed)]
POS, ADDR, BLOCK, REQ, SITE, TIME, FREED = range(7)
Rec = list[int]


@dataclass
class Moment:
    """What was live just after one event: raw totals (before the shift by what the
    recording missed), the live allocations and the segments (address -> bytes)."""

    pos: int
    time_ns: int
    allocated: int
    reserved: int
    live: list[Rec]
    segments: dict[int, int]
    #: an out-of-memory's request and what CUDA had free
    requested: int = 0
    device_free: int = -1

    def arrays(self) -> dict[str, np.ndarray]:
        """The live allocations as columns, by event position."""
        rows = sorted(self.live, key=lambda r: r[POS])
        cols = np.array(rows, np.int64).reshape(-1, 7)
        return {k: cols[:, i] for i, k in enumerate(("pos", "addr", "block", "req", "site",
                                                     "time", "freed"))}  # fmt: skip


@dataclass
class Mark:
    """A moment that may move on (the peak so far; the last event at or before --at)."""

    pos: int = -1
    time_ns: int = -1
    allocated: int = 0
    reserved: int = 0
    #: allocations live at `pos` freed since
    freed: list[Rec] = field(default_factory=list)
    #: segment changes since `pos`: (address, bytes before; None: absent)
    seglog: list[tuple[int, int | None]] = field(default_factory=list)
    segsnap: dict[int, int] | None = None

    def reset(self, pos: int, t: int, alloc: int, resv: int) -> None:
        self.pos, self.time_ns, self.allocated, self.reserved = pos, t, alloc, resv
        self.freed = []
        self.seglog = []
        self.segsnap = None

    def segments(self, now: dict[int, int]) -> dict[int, int]:
        if self.segsnap is not None:
            return dict(self.segsnap)
        out = dict(now)
        for addr, before in reversed(self.seglog):
            if before is None:
                out.pop(addr, None)
            else:
                out[addr] = before
        return out


class DeviceReplay:
    """Feed events in order (`feed`, a chunk at a time); read the totals after each event
    of the chunk and the moments."""

    def __init__(
        self,
        exact: bool,
        level_is_allocated: bool,
        at_ns: int | None,
        segments: dict[int, int] | None = None,
    ) -> None:
        self.exact = exact
        self.level_is_allocated = level_is_allocated
        self.at_ns = at_ns
        self.alloc = self.resv = self.req = 0
        self.used: list[int] = []
        self.live: dict[int, Rec] = {}
        #: allocations whose address was taken again before they were freed: live forever
        self.orphans: list[Rec] = []
        self.segs = _Segments()
        #: the segments as the report sees them: the dump's that the trace never allocated,
        #: under the trace's segment events
        self.view: dict[int, int] = dict(segments or {})
        self.peak = Mark()
        self.at = Mark() if at_ns is not None else None
        self._marks = [m for m in (self.peak, self.at) if m is not None]
        self._best: int | None = None
        self.ooms: list[Moment] = []
        self.n = 0
        #: (allocation's position, its free's) for every free, when asked
        self.keep_freed = False
        self.freed_pairs: list[tuple[int, int]] = []

    # -- the moments -----------------------------------------------------------------
    def live_now(self) -> list[Rec]:
        return [r for r in chain(self.live.values(), self.orphans) if r[FREED] < 0]

    def end(self, t: int) -> Moment:
        return Moment(self.n - 1, t, self.alloc, self.resv, self.live_now(), dict(self.view))

    def at_mark(self, m: Mark) -> Moment:
        live = [r for r in chain(self.live.values(), self.orphans)
                if r[FREED] < 0 and r[POS] <= m.pos]  # fmt: skip
        live += m.freed
        return Moment(m.pos, m.time_ns, m.allocated, m.reserved, live, m.segments(self.view))

    # -- the events ------------------------------------------------------------------
    def feed(
        self, c: list[int], a: list[int], s: list[int], t: list[int], site: list[int],
        free: list[int], level: list[int] | None, resv_src: list[int] | None,
    ) -> tuple[list[int], list[int], list[int], list[int]]:  # fmt: skip
        """The events of one chunk; returns per event allocated, reserved, requested (the
        replay's) and the block of each allocation (0 for other events)."""
        out_a: list[int] = []
        out_r: list[int] = []
        out_q: list[int] = []
        out_b: list[int] = []
        at_ns = self.at_ns
        i = self.n
        for k in range(len(c)):
            ck, ak, sk, tk = c[k], a[k], s[k], t[k]
            b = self._step(i, ck, ak, sk, tk, site[k]) if ck <= _SEG_FREE else 0
            out_a.append(self.alloc)
            out_r.append(self.resv)
            out_q.append(self.req)
            out_b.append(b)
            alloc = level[k] if level is not None else self.alloc
            resv = resv_src[k] if resv_src is not None else self.resv
            v = alloc if self.level_is_allocated else resv
            if self._best is None or v > self._best:
                self._best = v
                self.peak.reset(i, tk, alloc, resv)
            if at_ns is not None and tk <= at_ns and self.at is not None:
                self.at.reset(i, tk, alloc, resv)
            if ck == _OOM:
                self.ooms.append(Moment(i, tk, alloc, resv, self.live_now(), dict(self.view),
                                        sk, free[k]))  # fmt: skip
            i += 1
        self.n = i
        return out_a, out_r, out_q, out_b

    def _step(self, i: int, c: int, a: int, s: int, t: int, site: int) -> int:
        if c == _ALLOC:
            b = s if self.exact else block_size(s, self._extent(a))
            self.alloc += b
            self.req += s
            old = self.live.get(a)
            if old is not None:
                _forget(self.used, a)
                if old[FREED] < 0:
                    self.orphans.append(old)
            self.live[a] = [i, a, b, s, site, t, -1]
            bisect.insort(self.used, a)
            return b
        if c == _FREE:
            r = self.live.get(a)
            if r is not None and r[FREED] < 0:
                r[FREED] = i
                if self.keep_freed:
                    self.freed_pairs.append((r[POS], i))
                self.alloc -= r[BLOCK]
                self.req -= r[REQ]
                for m in self._marks:
                    if r[POS] <= m.pos:
                        m.freed.append(r)
            elif r is None:  # allocated before the recording began
                self.alloc -= s if self.exact else round_size(s)
                self.req -= s
            if self.exact:
                self.live.pop(a, None)
                _forget(self.used, a)
        elif c == _FREE_DONE:
            if self.live.pop(a, None) is not None:
                _forget(self.used, a)
        elif c == _SEG_ALLOC:
            self.resv += s
            self.segs.add(a, s)
            self._view(a, s)
        elif c == _SEG_FREE:
            self.resv -= s
            self.segs.drop(a)
            self._view(a, None)
        return 0

    def _view(self, a: int, s: int | None) -> None:
        before = self.view.get(a)
        if s is None:
            self.view.pop(a, None)
        else:
            self.view[a] = s
        for m in self._marks:
            if m.segsnap is not None or m.pos < 0:
                continue
            m.seglog.append((a, before))
            if len(m.seglog) > 2 * len(self.view) + 64:
                m.segsnap = m.segments(self.view)
                m.seglog = []

    def _extent(self, addr: int) -> int | None:
        end = self.segs.end_of(addr)
        if end is None:
            return None
        k = bisect.bisect_right(self.used, addr)
        nxt = self.used[k] if k < len(self.used) else end
        return min(nxt, end) - addr


def _forget(used: list[int], addr: int) -> None:
    k = bisect.bisect_left(used, addr)
    if k < len(used) and used[k] == addr:
        used.pop(k)
