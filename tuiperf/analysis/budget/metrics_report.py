"""`tuiperf summary --report gpu_metrics`: each GPU metric's mean over the report and over
the step budget's steady steps (summaries.gpu_metrics holds the arithmetic; the steady
steps are analysis, a floor above it)."""

from __future__ import annotations

import numpy as np

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import Budget
from tuiperf.model.trace import Trace
from tuiperf.summaries.gpu_metrics import REPORT, Windows, gpu_metrics_table
from tuiperf.summaries.table import StatsTable


def steady_windows(budget: Budget | None) -> Windows:
    """Per device, the [start, end) ns of its steady steps (GPU side when the CPU runs
    ahead), as the step budget measures them."""
    out: Windows = {}
    for d in budget.devices if budget is not None else []:
        starts = np.array([s.start_ns for s in d.steps], np.int64)
        out[int(d.device)] = (starts, np.array([s.end_ns for s in d.steps], np.int64))
    return out


def metrics_table(trace: Trace) -> StatsTable:
    budget = Ctx(trace).budget if trace.has("gpu_metrics") else None
    return gpu_metrics_table(trace, steady_windows(budget))


def offer() -> None:
    """Offer this report to `tuiperf summary` and the Python API."""
    from tuiperf.summaries.reports import register

    register(REPORT, metrics_table, ("gpu_metrics",))
