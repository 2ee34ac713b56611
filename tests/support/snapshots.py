"""Hand-built PyTorch allocator snapshots in `_dump_snapshot`'s format (torch 2.x:
`segments` with `blocks`, `device_traces` of alloc / free_requested / free_completed /
segment_alloc / segment_free / oom entries with `frames`, innermost first, and `time_us`).

The builder tracks what a real allocator would have at the dump (segments tiled by active
and inactive blocks) so that the state and the trace agree; it does not round or split:
tests give sizes that are multiples of 512 in segments with room to split, where PyTorch's
block is the request itself."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

TORCH_FRAME = {
    "filename": "/env/lib/python3.11/site-packages/torch/nn/modules/module.py",
    "line": 1750,
    "name": "_call_impl",
}
CPP_FRAME = {
    "filename": "/pytorch/c10/cuda/CUDACachingAllocator.cpp",
    "line": 0,
    "name": "c10::cuda::CUDACachingAllocator::malloc",
}


def frames(file: str, line: int, fn: str) -> list[dict[str, Any]]:
    """A stack innermost first: C++ frame, a torch frame, then the user's line."""
    return [
        CPP_FRAME,
        TORCH_FRAME,
        {"filename": file, "line": line, "name": fn},
        {"filename": "/proj/u/run.py", "line": 1, "name": "<module>"},
    ]


class Snap:
    def __init__(self, devices: int = 1, t0_us: int = 1_700_000_000_000_000) -> None:
        self.traces: list[list[dict[str, Any]]] = [[] for _ in range(devices)]
        self.segs: dict[tuple[int, int], int] = {}
        self.live: dict[tuple[int, int], tuple[int, list[dict[str, Any]]]] = {}
        self.t = t0_us

    def _add(self, dev: int, **e: Any) -> None:
        self.t += 10
        e.setdefault("stream", 0)
        e.setdefault("frames", [])
        self.traces[dev].append({**e, "time_us": self.t})

    def segment(self, addr: int, size: int, dev: int = 0) -> None:
        self.segs[(dev, addr)] = size
        self._add(dev, action="segment_alloc", addr=addr, size=size)

    def segment_free(self, addr: int, dev: int = 0) -> None:
        size = self.segs.pop((dev, addr))
        self._add(dev, action="segment_free", addr=addr, size=size)

    def alloc(self, addr: int, size: int, fr: list[dict[str, Any]], dev: int = 0) -> None:
        self.live[(dev, addr)] = (size, fr)
        self._add(dev, action="alloc", addr=addr, size=size, frames=fr)

    def free(self, addr: int, dev: int = 0) -> None:
        size, fr = self.live.pop((dev, addr))
        self._add(dev, action="free_requested", addr=addr, size=size, frames=fr)
        self._add(dev, action="free_completed", addr=addr, size=size, frames=fr)

    def oom(self, size: int, device_free: int, fr: list[dict[str, Any]], dev: int = 0) -> None:
        self._add(dev, action="oom", size=size, device_free=device_free, frames=fr)

    def snapshot(self) -> dict[str, Any]:
        segments = []
        for (dev, addr), size in sorted(self.segs.items()):
            blocks, at = [], addr
            for (d, a), (s, fr) in sorted(self.live.items()):
                if d != dev or not addr <= a < addr + size:
                    continue
                if a > at:
                    blocks.append(_block(at, a - at, 0, "inactive", []))
                blocks.append(_block(a, s, s, "active_allocated", fr))
                at = a + s
            if at < addr + size:
                blocks.append(_block(at, addr + size - at, 0, "inactive", []))
            used = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
            segments.append(
                {
                    "device": dev,
                    "address": addr,
                    "total_size": size,
                    "stream": 0,
                    "segment_type": "large" if size > 2 << 20 else "small",
                    "segment_pool_id": (0, 0),
                    "allocated_size": used,
                    "active_size": used,
                    "requested_size": used,
                    "blocks": blocks,
                }
            )
        return {
            "segments": segments,
            "device_traces": self.traces,
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": None},
        }

    def dump(self, path: Path, protocol: int = pickle.DEFAULT_PROTOCOL) -> Path:
        path.write_bytes(pickle.dumps(self.snapshot(), protocol=protocol))
        return path


def _block(addr: int, size: int, req: int, state: str, fr: list[dict[str, Any]]) -> dict:
    return {"address": addr, "size": size, "requested_size": req, "state": state, "frames": fr}


def brute_peak(trace: list[dict[str, Any]]) -> tuple[int, int, dict[tuple, int]]:
    """(peak allocated, its entry index, live bytes by user frame (file, line, function)):
    replayed from the entries themselves, the sizes taken as the blocks."""
    live: dict[int, tuple[int, tuple]] = {}
    best, at = -1, -1
    held: dict[tuple, int] = {}
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            f = e["frames"][2]
            live[e["addr"]] = (e["size"], (f["filename"], f["line"], f["name"]))
        elif e["action"] == "free_requested":
            live.pop(e["addr"])
        total = sum(s for s, _ in live.values())
        if total > best:
            best, at, held = total, i, {}
            for s, site in live.values():
                held[site] = held.get(site, 0) + s
    return best, at, held
