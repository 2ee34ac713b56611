"""A GPU's memory as a timeline lane: the bytes the process holds (cudaMalloc'd device
memory, nsys `--cuda-memory-usage=true` rows; PyTorch's *reserved*) as a step function,
drawn per column as the highest level the column reaches, in eighths of the peak.

Built once from the trace's `gpu_memory` table; a frame costs two `searchsorted` calls
over the column edges and one `maximum.reduceat`, whatever the number of events."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace

#: nsys memKind labels that are the process's device memory (Device Static is left out:
#: module globals, there from the start)
RESERVED_KINDS = ("Device", "Managed", "Array")
FREE = "Deallocation"
#: levels a column is drawn in (0: nothing held)
LEVELS = 8


@dataclass(frozen=True)
class MemoryCounter:
    """Bytes held after each event, events sorted by time."""

    times: np.ndarray
    values: np.ndarray
    #: the bytes drawn full (default: the peak); lanes of one GPU share one scale
    scale: int | None = None

    @property
    def peak(self) -> int:
        return int(self.values.max()) if len(self.values) else 0

    @property
    def peak_time(self) -> int | None:
        return int(self.times[int(np.argmax(self.values))]) if len(self.values) else None

    def column_max(self, edges: np.ndarray) -> np.ndarray:
        """Per column [edges[k], edges[k+1]): the highest level held in it."""
        t, v = self.times, self.values
        if len(t) == 0:
            return np.zeros(len(edges) - 1, np.int64)
        before = np.searchsorted(t, edges[:-1], "left") - 1  # the level a column starts at
        level = np.where(before >= 0, v[np.maximum(before, 0)], 0)
        idx = np.searchsorted(t, edges, "left")
        busy = np.flatnonzero(idx[1:] > idx[:-1])  # columns with events in them
        if len(busy):
            inside = np.maximum.reduceat(v[: idx[-1]], idx[:-1][busy])
            level[busy] = np.maximum(level[busy], inside)
        return level

    def levels(self, edges: np.ndarray) -> np.ndarray:
        """Per column 0..LEVELS: its highest level in eighths of the peak (or of `scale`),
        rounded up."""
        peak = self.scale or self.peak
        if peak <= 0:
            return np.zeros(len(edges) - 1, np.int64)
        m = self.column_max(edges)
        return np.minimum(np.ceil(m * LEVELS / peak), LEVELS).astype(np.int64)

    def peak_column(self, edges: np.ndarray) -> int:
        """The column the peak falls in, or -1 when it is outside the window."""
        t = self.peak_time
        if t is None or not edges[0] <= t < edges[-1]:
            return -1
        return int(np.searchsorted(edges, t, "right")) - 1


def memory_counters(trace: Trace) -> dict[int, MemoryCounter]:
    """Per device, the bytes of device memory held over time (nsys rows; empty without)."""
    t = trace.table("gpu_memory")
    if t.num_rows == 0:
        return {}
    keep = np.isin(A.strings(t, "mem_kind"), RESERVED_KINDS)
    start, dev = A.ints(t, "start")[keep], A.ints(t, "device", -1)[keep]
    size = np.abs(A.ints(t, "bytes")[keep])
    sign = np.where(A.strings(t, "operation")[keep] == FREE, -1, 1)
    out = {}
    for d in np.unique(dev).tolist():
        mine = np.flatnonzero(dev == d)
        order = mine[np.argsort(start[mine], kind="stable")]
        out[int(d)] = MemoryCounter(start[order], np.cumsum(sign[order] * size[order]))
    return out
