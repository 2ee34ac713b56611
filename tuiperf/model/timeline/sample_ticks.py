"""One thread's CPU samples ready to draw as ticks (the data of sample_lane's rows, apart
from the lane plumbing so that `lanes.Lane` can name its type without an import cycle)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: a column this many sampling periods wide (or wider) shows density, not single ticks
DENSE_FROM = 8
#: density levels of a zoomed-out column (1..LEVELS), a zoomed-in tick is level TICK
LEVELS = 3
TICK = LEVELS + 1


@dataclass(frozen=True)
class Named:
    """Sample times in order and, per sample, an index into `names`."""

    times: np.ndarray
    code: np.ndarray
    names: list[str]

    def nearest(self, t: float, near: float) -> tuple[int, str] | None:
        """(time, name) of the sample nearest `t` when within `near` ns, else None."""
        n = len(self.times)
        if n == 0:
            return None
        i = int(np.searchsorted(self.times, t))
        best = min((j for j in (i - 1, i) if 0 <= j < n), key=lambda j: abs(self.times[j] - t))
        ts = int(self.times[best])
        return (ts, self.names[int(self.code[best])]) if abs(ts - t) <= near else None


@dataclass(frozen=True)
class SampleTicks:
    """One thread's samples, ready to draw."""

    pid: int
    tid: int
    #: the ticks (native samples, else Python ones) and the period between them (ns)
    ticks: np.ndarray
    period: float
    native: Named
    python: Named

    @property
    def kind(self) -> str:
        return "native" if len(self.native.times) else "python"

    def counts(self, edges: np.ndarray) -> np.ndarray:
        """Samples per column [edges[k], edges[k+1])."""
        return np.diff(np.searchsorted(self.ticks, edges, "left"))

    def levels(self, edges: np.ndarray) -> np.ndarray:
        """Per column: 0 (no sample), TICK (zoomed in: a sample), or 1..LEVELS (zoomed
        out: samples x period / column width, in thirds rounded up)."""
        n = self.counts(edges)
        width = float(edges[-1] - edges[0]) / max(len(edges) - 1, 1)
        if width < DENSE_FROM * self.period:
            return np.where(n > 0, TICK, 0).astype(np.int64)
        share = n * self.period / width
        return np.minimum(np.ceil(share * LEVELS), LEVELS).astype(np.int64)

    def name_at(self, t: float, near: float) -> str | None:
        """The sampled function nearest `t`: a Python frame first, else a native one."""
        for found in (self.python.nearest(t, near), self.native.nearest(t, near)):
            if found is not None:
                return found[1]
        return None
