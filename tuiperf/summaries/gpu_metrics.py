"""GPU metrics per device and metric (issue 34 item 2): the `gpu_metrics` summary.

One row per (device, metric, unit): the number of samples and their mean over the whole
report, then over the steady steps (the windows the caller gives: the step budget's steady
steps, `analysis.budget.gpu_metrics_report`), and the highest sample. A mean is the plain
mean of the samples whose time falls in the window ([start, end)): nsys samples at a fixed
period (docs/formats-gpu-metrics.md), so it is the time-weighted mean up to the one sample
at each edge of a window.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tuiperf.model.gpu_metrics import series
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
