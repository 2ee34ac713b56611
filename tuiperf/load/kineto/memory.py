"""torch.profiler's `[memory]` instant events (`profile_memory=True`), streamed.

Each is one allocator action on one device: `Bytes` (> 0 an allocation, < 0 a free, the
block's size), `Addr`, and the device's `Total Allocated` / `Total Reserved` after it.
`Device Type` 1 is CUDA (0 the CPU, whose rows are left out). Times use the loader's
origin: the earliest numeric `ts` of the file is time 0.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuiperf.load.kineto.stream import TraceStream

MEMORY_NAME = "[memory]"
CUDA_DEVICE_TYPE = 1
_FAR = 1e17
_KEYS = ("ts", "device", "bytes", "addr", "allocated", "reserved", "tid")


@dataclass
class MemoryRows:
    """Columns of the CUDA `[memory]` events; `ts` in µs as written, `t0_us` the origin."""

    cols: dict[str, array[Any]] = field(
        default_factory=lambda: {k: array("d" if k == "ts" else "q") for k in _KEYS}
    )
    t0_us: float = float("inf")
    skipped: int = 0
    #: the header's baseTimeNanoseconds: epoch ns = base + ts in ns (None when absent)
    base_ns: int | None = None

    def __len__(self) -> int:
        return len(self.cols["ts"])


def read_memory_events(path: Path) -> MemoryRows:
    out = MemoryRows()
    stream = TraceStream(path)
    for ev in stream:
        ts = ev.get("ts")
        if (type(ts) is not float and type(ts) is not int) or not -_FAR < ts < _FAR:
            continue
        out.t0_us = min(out.t0_us, ts)
        if ev.get("name") == MEMORY_NAME:
            _add(out, ev, ts)
    base = stream.header.get("baseTimeNanoseconds")
    out.base_ns = base if type(base) is int else None
    return out


def _add(out: MemoryRows, ev: dict[str, Any], ts: float) -> None:
    args = ev.get("args")
    if type(args) is not dict or args.get("Device Type") != CUDA_DEVICE_TYPE:
        return
    vals = [args.get(k) for k in ("Device Id", "Bytes", "Addr", "Total Allocated",
                                  "Total Reserved")]  # fmt: skip
    if any(type(v) is not int for v in vals):
        out.skipped += 1
        return
    c = out.cols
    c["ts"].append(float(ts))
    for k, v in zip(_KEYS[1:6], vals):
        c[k].append(v)
    tid = ev.get("tid")
    c["tid"].append(tid if type(tid) is int else -1)
