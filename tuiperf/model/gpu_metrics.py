"""GPU metrics as series (issue 34 item 2): each (device, metric, unit) of the trace's
`gpu_metrics` table as its samples in time order. The `gpu_metrics` summary, the timeline's
metric lanes and the range statistics all read them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace


@dataclass(frozen=True)
class Series:
    """One metric of one device: its samples in time order."""

    device: int
    metric: str
    unit: str
    times: np.ndarray
    values: np.ndarray

    def inside(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The samples whose time falls in any of the windows [starts, ends)."""
        keep = np.zeros(len(self.times), bool)
        lo = np.searchsorted(self.times, starts, "left")
        hi = np.searchsorted(self.times, ends, "left")
        for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
            keep[a:b] = True
        return self.values[keep]

    def mean_in(self, lo: int, hi: int) -> tuple[int, float | None]:
        """(samples, their mean) in [lo, hi)."""
        v = self.inside(np.array([lo]), np.array([hi]))
        return len(v), float(v.mean()) if len(v) else None

    def at(self, t: float) -> float | None:
        """The value of the last sample at or before `t` (None before the first)."""
        i = int(np.searchsorted(self.times, t, "right")) - 1
        return float(self.values[i]) if i >= 0 else None


def series(trace: Trace) -> list[Series]:
    """Every (device, metric, unit) of the trace's gpu_metrics table, in the table's order."""
    if not trace.has("gpu_metrics"):
        return []
    t = trace.table("gpu_metrics")
    dev, start = A.ints(t, "device", -1), A.ints(t, "start")
    metric, unit = A.codes(t, "metric"), A.codes(t, "unit")
    value = np.asarray(t["value"].to_numpy(zero_copy_only=False), np.float64)
    # each series once, in the order its first row comes in the table
    keys = np.stack([dev, metric[0], unit[0]])
    uniq, first, inv = np.unique(keys, axis=1, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.lexsort((start, inv))  # by series, then time
    bounds = np.searchsorted(inv[order], np.arange(uniq.shape[1] + 1))
    out = []
    for k in np.argsort(first).tolist():
        rows = order[bounds[k] : bounds[k + 1]]
        d, m, u = uniq[:, k].tolist()
        out.append(Series(int(d), _name(metric[1], m), _name(unit[1], u), start[rows],
                          value[rows]))  # fmt: skip
    return out


def _name(values: list[str], code: int) -> str:
    return values[code] if 0 <= code < len(values) else ""
