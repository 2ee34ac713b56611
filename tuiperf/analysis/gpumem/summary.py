"""One memory report: per device the peak (or a chosen moment), what is live there,
fragmentation, memory at each step's start, and any out-of-memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tuiperf.analysis.budget.steps import Steps
from tuiperf.analysis.gpumem.curve import DeviceMemory, per_device
from tuiperf.analysis.gpumem.live import SiteBytes, categories_at, largest_free, sites_at
from tuiperf.analysis.gpumem.stream import Moment
from tuiperf.load.gpumem import tables as T


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
    on_clock = data.kind != T.SNAPSHOT or data.epoch_origin_ns is not None
    use_steps = steps is not None and steps.found and on_clock
    starts = steps.starts if use_steps and steps is not None else None
    curves = per_device(data, starts, at_ns)
    devs = [_device(data, m, steps if use_steps else None, at_ns) for m in curves]
    at = "peak" if at_ns is None else str(at_ns)
    return MemoryReport(data.kind, data.source, devs, at, data, notes=list(data.notes))


def _device(
    data: T.MemoryData, m: DeviceMemory, steps: Steps | None, at_ns: int | None
) -> DeviceReport:
    moment = m.peak if at_ns is None else m.at
    peak_a = _max(m.allocated, m.before_allocated) if m.has_allocated else None
    rep = DeviceReport(
        m.device, m, peak_a, _max(m.reserved, m.before_reserved), point(data, m, moment)
    )
    if steps is not None and len(m):
        rep.steps = step_memory(m, steps)
        rep.steps_source = steps.source
        rep.trend_bytes_per_step = trend([s for s in rep.steps if s.steady])
    rep.ooms = ooms(data, m)
    return rep


def _max(v: np.ndarray, before: int) -> int:
    return int(v.max()) if len(v) else before


def point(data: T.MemoryData, m: DeviceMemory, at: Moment | None) -> Point:
    if len(m) == 0 or at is None:
        alloc = m.before_allocated if m.has_allocated else None
        return Point(-1, None, alloc, m.before_reserved, largest_free(data, m, None),
                     sites_at(data, m, None) if len(m) == 0 else [])  # fmt: skip
    return Point(
        at.pos,
        at.time_ns if at.time_ns >= 0 else None,
        at.allocated if m.has_allocated else None,
        at.reserved,
        largest_free(data, m, at),
        sites_at(data, m, at) if m.has_allocated else [],
        categories_at(data, m, at) if m.has_allocated else {},
    )


def step_memory(m: DeviceMemory, steps: Steps) -> list[StepMemory]:
    """Each step's totals just before it begins (the replay took them as it passed)."""
    steady = set(steps.steady().tolist())
    out = []
    found = m.step_found.tolist()
    alloc, resv = m.step_allocated.tolist(), m.step_reserved.tolist()
    for i, (s, label) in enumerate(zip(steps.starts.tolist(), steps.labels)):
        a = (alloc[i] if found[i] else m.before_allocated) if m.has_allocated else None
        r = resv[i] if found[i] else m.before_reserved
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
    return [
        Oom(m.device, point(data, m, o), o.requested, o.device_free if o.device_free >= 0 else None)
        for o in m.ooms
    ]
