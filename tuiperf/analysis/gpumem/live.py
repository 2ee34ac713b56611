"""What is live at one moment of a device's events: by user source line, and the free
space the allocator holds (fragmentation)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from tuiperf.analysis.gpumem.curve import DeviceMemory, action_codes, rows_of
from tuiperf.load.gpumem import tables as T
from tuiperf.model import arrays as A

#: the bytes live at a moment that no recorded allocation explains
BEFORE = "<allocated before the recording began>"
#: allocations whose stack has no user frame: the autograd engine's thread (backward runs
#: there, without Python frames) or other C++ code (or a source without stacks)
NO_SITE = "<no user frame: autograd engine / C++>"
_ALLOC, _SEG_ALLOC, _SEG_FREE = (T.ACTIONS.index(a) for a in (T.ALLOC, T.SEG_ALLOC, T.SEG_FREE))


@dataclass
class SiteBytes:
    file: str
    line: int
    function: str
    bytes: int
    count: int

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "function": self.function,
                "bytes": self.bytes, "count": self.count}  # fmt: skip


def live_rows(m: DeviceMemory, at: int) -> np.ndarray:
    """Positions of the allocations live just after event position `at`."""
    if at < 0:
        return np.zeros(0, np.int64)
    k = np.arange(at + 1)
    r = m.replayed
    is_alloc = r.block[: at + 1] > 0
    alive = (r.freed_at[: at + 1] < 0) | (r.freed_at[: at + 1] > at)
    return k[is_alloc & alive]


def sites_at(data: T.MemoryData, m: DeviceMemory, at: int) -> list[SiteBytes]:
    """Bytes live after event position `at`, by user frame, largest first."""
    if len(m) == 0:
        return _state_sites(data, m.device)
    pos = live_rows(m, at)
    site = A.ints(data.events.take(m.rows[pos]), "site", -1) if len(pos) else np.zeros(0, int)
    out = _group(data, site, m.replayed.block[pos])
    rest = int(m.allocated[at]) - int(m.replayed.block[pos].sum())
    if rest > 0:
        out.append(SiteBytes(BEFORE, 0, "", rest, 0))
    return sorted(out, key=lambda s: (-s.bytes, s.file, s.line))


def _state_sites(data: T.MemoryData, device: int) -> list[SiteBytes]:
    b = data.blocks.filter(pc.equal(data.blocks["device"], device))
    b = b.filter(pc.equal(b["state"], "active_allocated"))
    out = _group(data, A.ints(b, "site", -1), A.ints(b, "size", 0))
    return sorted(out, key=lambda s: (-s.bytes, s.file, s.line))


def _group(data: T.MemoryData, site: np.ndarray, size: np.ndarray) -> list[SiteBytes]:
    """Bytes and allocations by user frame (a line's categories merged)."""
    if len(site) == 0:
        return []
    uniq, inv = np.unique(site, return_inverse=True)
    total = np.bincount(inv, weights=size, minlength=len(uniq)).astype(np.int64)
    count = np.bincount(inv, minlength=len(uniq))
    files, lines = data.sites["file"].to_pylist(), data.sites["line"].to_pylist()
    funcs = data.sites["function"].to_pylist()
    merged: dict[tuple[str, int, str], list[int]] = {}
    for s, b, c in zip(uniq.tolist(), total.tolist(), count.tolist()):
        known = 0 <= s < len(files) and files[s]
        key = (files[s], lines[s], funcs[s]) if known else (NO_SITE, 0, "")
        acc = merged.setdefault(key, [0, 0])
        acc[0] += b
        acc[1] += c
    return [SiteBytes(f, ln, fn, b, c) for (f, ln, fn), (b, c) in merged.items()]


def categories_at(data: T.MemoryData, m: DeviceMemory, at: int) -> dict[str, int]:
    """Bytes live after event position `at` by category (categories.py; "" unknown,
    which holds what was allocated before the recording)."""
    if len(m) == 0 or at < 0:
        return {}
    pos = live_rows(m, at)
    site = A.ints(data.events.take(m.rows[pos]), "site", -1) if len(pos) else np.zeros(0, int)
    cats = data.sites["category"].to_pylist()
    lut = np.array([*cats, ""], dtype=object)
    out: dict[str, int] = {}
    for c, b in zip(lut[site].tolist(), m.replayed.block[pos].tolist()):
        out[c] = out.get(c, 0) + b
    out[""] = out.get("", 0) + int(m.allocated[at]) - int(m.replayed.block[pos].sum())
    return {k: v for k, v in out.items() if v}


def largest_free(data: T.MemoryData, m: DeviceMemory, at: int) -> int | None:
    """The largest free gap inside the allocator's segments after event position `at`
    (None when the source does not record segments and blocks: nsys, torch.profiler)."""
    if data.kind != T.SNAPSHOT:
        return None
    if len(m) == 0 or at < 0:
        return _state_largest_free(data, m.device)
    segs = _segments_at(data, m, at)
    pos = live_rows(m, at)
    ev = data.events.take(m.rows[pos]) if len(pos) else None
    addr = A.ints(ev, "addr", 0) if ev is not None else np.zeros(0, np.int64)
    order = np.argsort(addr)
    addr, size = addr[order], m.replayed.block[pos][order]
    best = 0
    for start, length in segs.items():
        lo, hi = np.searchsorted(addr, start), np.searchsorted(addr, start + length)
        edges = [start, *np.ravel(np.column_stack([addr[lo:hi], addr[lo:hi] + size[lo:hi]]))]
        edges.append(start + length)
        gaps = np.diff(np.asarray(edges, np.int64))[::2]
        best = max(best, int(gaps.max()) if len(gaps) else 0)
    return best


def _segments_at(data: T.MemoryData, m: DeviceMemory, at: int) -> dict[int, int]:
    """Segment address -> size after event position `at`: the trace's segment events over
    the segments of the dump that the trace never allocated (older than the recording)."""
    ev = rows_of(data, m.rows)
    codes, addr, size = action_codes(ev), A.ints(ev, "addr", 0), A.ints(ev, "size", 0)
    del ev
    traced = set(addr[codes == _SEG_ALLOC].tolist())
    segs = data.segments.filter(pc.equal(data.segments["device"], m.device))
    pairs = zip(A.ints(segs, "address", 0).tolist(), A.ints(segs, "total_size", 0).tolist())
    out = {a: s for a, s in pairs if a not in traced}
    seg = np.flatnonzero(np.isin(codes[: at + 1], (_SEG_ALLOC, _SEG_FREE)))
    for c, a, s in zip(codes[seg].tolist(), addr[seg].tolist(), size[seg].tolist()):
        if c == _SEG_ALLOC:
            out[a] = s
        elif c == _SEG_FREE:
            out.pop(a, None)
    return out


def _state_largest_free(data: T.MemoryData, device: int) -> int | None:
    b = data.blocks.filter(pc.equal(data.blocks["device"], device))
    free = b.filter(pc.equal(b["state"], "inactive"))
    return int(pc.max(free["size"]).as_py() or 0) if free.num_rows else 0
