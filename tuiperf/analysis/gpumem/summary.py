"""One memory report: per device the peak (or a chosen moment), what is live there,
fragmentation, memory at each step's start, and any out-of-memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tuiperf.analysis.budget.steps import Steps
from tuiperf.analysis.gpumem.curve import DeviceMemory, action_codes, per_device, rows_of
from tuiperf.analysis.gpumem.live import SiteBytes, categories_at, largest_free, sites_at
from tuiperf.load.gpumem import tables as T
from tuiperf.model import arrays as A

_OOM = T.ACTIONS.index(T.OOM)


@dataclass
class Point:
    """Totals on one device just after one event."""

    index: int
    time_ns: int | None
    allocated: int | None
    reserved: int
    largest_free: int | None
    sites: list[SiteBytes]
    #: bytes by what they are for (load/gpumem/categories.py), where the stacks say
    categories: dict[str, int] = field(default_factory=dict)

    @property
    def free_cached(self) -> int | None:
        """Reserved but not allocated: free blocks the allocator keeps."""
        return None if self.allocated is None else self.reserved - self.allocated


@dataclass
class StepMemory:
    label: str
    start_ns: int
    allocated: int | None
    reserved: int
    steady: bool


@dataclass
class Oom:
    device: int
    point: Point
    requested_bytes: int
    device_free_bytes: int | None


@dataclass
class DeviceReport:
    device: int
    curve: DeviceMemory
    peak_allocated: int | None
    peak_reserved: int
    at: Point
    steps: list[StepMemory] = field(default_factory=list)
    #: least-squares slope of allocated (else reserved) at the steady steps' starts
    trend_bytes_per_step: float | None = None
    ooms: list[Oom] = field(default_factory=list)
    #: where the steps came from (analysis/budget/steps.Steps.source: "nvtx", "kineto",
    #: "pattern" for a repeated kernel pattern standing in for step ranges, ...)
    steps_source: str = ""


@dataclass
class MemoryReport:
    kind: str
    source: str
    devices: list[DeviceReport]
    at: str  # "peak", or the time asked for
    data: T.MemoryData
    findings: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def main(self) -> DeviceReport | None:
        """The device with the highest peak (allocated, else reserved)."""
        if not self.devices:
            return None
        return max(self.devices, key=lambda d: (d.peak_allocated or 0, d.peak_reserved))


def build(data: T.MemoryData, steps: Steps | None = None, at_ns: int | None = None) -> MemoryReport:
    devs = [_device(data, m, steps, at_ns) for m in per_device(data)]
    at = "peak" if at_ns is None else str(at_ns)
    return MemoryReport(data.kind, data.source, devs, at, data, notes=list(data.notes))


def _device(
    data: T.MemoryData, m: DeviceMemory, steps: Steps | None, at_ns: int | None
) -> DeviceReport:
    idx = m.peak_index if at_ns is None else m.index_at(at_ns)
    peak_a = _max(m.allocated, m.before_allocated) if m.has_allocated else None
    rep = DeviceReport(
        m.device, m, peak_a, _max(m.reserved, m.before_reserved), point(data, m, idx)
    )
    on_clock = data.kind != T.SNAPSHOT or data.epoch_origin_ns is not None
    if steps is not None and steps.found and on_clock and len(m):
        rep.steps = step_memory(m, steps)
        rep.steps_source = steps.source
        rep.trend_bytes_per_step = trend([s for s in rep.steps if s.steady])
    rep.ooms = ooms(data, m)
    return rep


def _max(v: np.ndarray, before: int) -> int:
    return int(v.max()) if len(v) else before


def point(data: T.MemoryData, m: DeviceMemory, idx: int) -> Point:
    if len(m) == 0 or idx < 0:
        alloc = m.before_allocated if m.has_allocated else None
        return Point(-1, None, alloc, m.before_reserved, largest_free(data, m, -1),
                     sites_at(data, m, -1) if len(m) == 0 else [])  # fmt: skip
    t = int(m.time_ns[idx])
    return Point(
        idx,
        t if t >= 0 else None,
        int(m.allocated[idx]) if m.has_allocated else None,
        int(m.reserved[idx]),
        largest_free(data, m, idx),
        sites_at(data, m, idx) if m.has_allocated else [],
        categories_at(data, m, idx) if m.has_allocated else {},
    )


def step_memory(m: DeviceMemory, steps: Steps) -> list[StepMemory]:
    steady = set(steps.steady().tolist())
    out = []
    for i, (s, label) in enumerate(zip(steps.starts.tolist(), steps.labels)):
        k = m.index_at(int(s) - 1)  # the totals just before the step begins
        a = (int(m.allocated[k]) if k >= 0 else m.before_allocated) if m.has_allocated else None
        r = int(m.reserved[k]) if k >= 0 else m.before_reserved
        out.append(StepMemory(label, int(s), a, r, i in steady))
    return out


def trend(steps: list[StepMemory]) -> float | None:
    """Bytes per step, least squares over the steps given (None under 3 steps)."""
    if len(steps) < 3:
        return None
    y = np.array([s.allocated if s.allocated is not None else s.reserved for s in steps], float)
    x = np.arange(len(y), dtype=float)
    return float(np.polyfit(x, y, 1)[0])


def ooms(data: T.MemoryData, m: DeviceMemory) -> list[Oom]:
    if len(m) == 0:
        return []
    ev = rows_of(data, m.rows)
    pos = np.flatnonzero(action_codes(ev) == _OOM)
    size, free = A.ints(ev, "size", 0), A.ints(ev, "device_free", -1)
    return [
        Oom(m.device, point(data, m, int(p)), int(size[p]), int(free[p]) if free[p] >= 0 else None)
        for p in pos.tolist()
    ]
