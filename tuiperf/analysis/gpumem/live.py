"""What is live at one moment of a device's events: by user source line, and the free
space the allocator holds (fragmentation)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from tuiperf.analysis.gpumem.curve import DeviceMemory
from tuiperf.analysis.gpumem.stream import Moment
from tuiperf.load.gpumem import tables as T
from tuiperf.model import arrays as A

#: the bytes live at a moment that no recorded allocation explains
BEFORE = "<allocated before the recording began>"
#: allocations whose stack has no user frame: the autograd engine's thread (backward runs
#: there, without Python frames) or other C++ code (or a source without stacks)
NO_SITE = "<no user frame: autograd engine / C++>"


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


def live_arrays(m: Moment | None) -> dict[str, np.ndarray]:
    """The allocations live at moment `m` as columns (pos, addr, block, site, time, ...),
    by event position (nothing live when there is no moment)."""
    if m is None:
        return {k: np.zeros(0, np.int64) for k in ("pos", "addr", "block", "site", "time")}
    return m.arrays()


def sites_at(data: T.MemoryData, m: DeviceMemory, at: Moment | None) -> list[SiteBytes]:
    """Bytes live at moment `at`, by user frame, largest first (the dump's blocks when
    the device has no events)."""
    if len(m) == 0:
        return _state_sites(data, m.device)
    live = live_arrays(at)
    out = _group(data, live["site"], live["block"])
    rest = (at.allocated if at is not None else 0) - int(live["block"].sum())
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


def categories_at(data: T.MemoryData, m: DeviceMemory, at: Moment | None) -> dict[str, int]:
    """Bytes live at moment `at` by category (categories.py; "" unknown, which holds what
    was allocated before the recording)."""
    if len(m) == 0 or at is None:
        return {}
    live = live_arrays(at)
    cats = data.sites["category"].to_pylist()
    lut = np.array([*cats, ""], dtype=object)
    out: dict[str, int] = {}
    for c, b in zip(lut[live["site"]].tolist(), live["block"].tolist()):
        out[c] = out.get(c, 0) + b
    out[""] = out.get("", 0) + at.allocated - int(live["block"].sum())
    return {k: v for k, v in out.items() if v}


def largest_free(data: T.MemoryData, m: DeviceMemory, at: Moment | None) -> int | None:
    """The largest free gap inside the allocator's segments at moment `at` (None when the
    source does not record segments and blocks: nsys, torch.profiler)."""
    if data.kind != T.SNAPSHOT:
        return None
    if len(m) == 0 or at is None:
        return _state_largest_free(data, m.device)
    live = live_arrays(at)
    order = np.argsort(live["addr"], kind="stable")
    addr, size = live["addr"][order], live["block"][order]
    best = 0
    for start, length in at.segments.items():
        lo, hi = np.searchsorted(addr, start), np.searchsorted(addr, start + length)
        edges = [start, *np.ravel(np.column_stack([addr[lo:hi], addr[lo:hi] + size[lo:hi]]))]
        edges.append(start + length)
        gaps = np.diff(np.asarray(edges, np.int64))[::2]
        best = max(best, int(gaps.max()) if len(gaps) else 0)
    return best


def _state_largest_free(data: T.MemoryData, device: int) -> int | None:
    b = data.blocks.filter(pc.equal(data.blocks["device"], device))
    free = b.filter(pc.equal(b["state"], "inactive"))
    return int(pc.max(free["size"]).as_py() or 0) if free.num_rows else 0
