"""GPU metrics per device and metric (issue 34 item 2): the `gpu_metrics` summary.

One row per (device, metric, unit): the number of samples and their mean over the whole
report, then over the steady steps (the windows the caller gives: the step budget's steady
steps, `analysis.budget.gpu_metrics_report`), and the highest sample. A mean is the plain
mean of the samples whose time falls in the window ([start, end)): nsys samples at a fixed
period (docs/formats-gpu-metrics.md), so it is the time-weighted mean up to the one sample
at each edge of a window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace
from tuiperf.summaries.table import Column, StatsTable

REPORT = "gpu_metrics"
COLUMNS = [
    Column("Device", "device", "int"),
    Column("Metric", "metric", "str"),
    Column("Unit", "unit", "str"),
    Column("Samples", "samples", "int"),
    Column("Mean", "mean", "f3"),
    Column("Steady Samples", "steady_samples", "int"),
    Column("Steady Mean", "steady_mean", "f3"),
    Column("Max", "max", "f3"),
]

#: windows per device: (starts, ends), ns, [start, end)
Windows = dict[int, tuple[np.ndarray, np.ndarray]]


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


def gpu_metrics_table(trace: Trace, steady: Windows) -> StatsTable:
    """Per device and metric: the mean over the report and over the `steady` windows."""
    rows: list[dict[str, object]] = []
    for s in series(trace):
        win = steady.get(s.device)
        v = s.inside(*win) if win is not None else np.zeros(0)
        rows.append({
            "device": s.device, "metric": s.metric, "unit": s.unit,
            "samples": len(s.values), "mean": float(s.values.mean()),
            "steady_samples": len(v) if win is not None else None,
            "steady_mean": float(v.mean()) if len(v) else None,
            "max": float(s.values.max()),
        })  # fmt: skip
    types = {"int": pa.int64(), "f3": pa.float64(), "str": pa.string()}
    data = pa.table({c.key: pa.array([r[c.key] for r in rows], types[c.fmt]) for c in COLUMNS})
    return StatsTable(REPORT, COLUMNS, data)
