"""GPU busy and the step-budget parts over a time window [lo, hi) (range statistics).

GPU busy is the union of a device's GPU work (kernels, copies, memsets, graph executions)
inside the window: work crossing an edge counts only for its part inside, and overlapping
work once. The parts are the step budget's (`step_budget`): busy by kind (compute, exposed
comm, copy) by the same priority, idle by the cause the budget gave each idle stretch of the
report (data, sync, cpu_bound), the rest of the idle time `other`; they add up to the
window's length. Without steps there is no budget: busy only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyarrow as pa

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import (
    LABELS,
    PARTS,
    Budget,
    Parts,
    _busy_sets,
    _op_kind,
)
from tuiperf.analysis.intervals import Union, overlap_sum
from tuiperf.summaries.table import Column, StatsTable
from tuiperf.summaries.window import Window, window_summaries


@dataclass(frozen=True)
class DeviceWindow:
    """One device over the window: its busy time and, with steps, the budget's parts."""

    device: int
    wall_ns: int
    busy_ns: int
    parts: Parts | None = None

    @property
    def busy_pct(self) -> float:
        return 100.0 * self.busy_ns / self.wall_ns if self.wall_ns else 0.0


def _clipped(u: Union, lo: int, hi: int) -> int:
    return int(u.busy(np.array([lo]), np.array([hi]))[0])


#: `budget` left out: the context's (computed on first use)
FROM_CTX: Literal["ctx"] = "ctx"


def device_windows(
    ctx: Ctx, lo: int, hi: int, budget: Budget | Literal["ctx"] | None = FROM_CTX
) -> list[DeviceWindow]:
    """Every device with GPU work in the report, over [lo, hi); `budget`, when the caller
    has it already (the viewer's analysis), is the context's."""
    ops = ctx.gpu_ops
    budget = ctx.budget if isinstance(budget, str) else budget
    causes = {} if budget is None else {d.device: d.idle_causes for d in budget.devices}
    kind = _op_kind(ctx) if len(ops) else np.zeros(0, np.int64)
    out = []
    for dev in np.unique(ops.device).tolist():
        on = ops.device == dev
        busy = _busy_sets(ops.start[on], ops.end[on], kind[on])
        parts = None
        if dev in causes:
            parts = _parts(busy, causes[dev], ops.start[on], ops.end[on], lo, hi)
        out.append(DeviceWindow(int(dev), hi - lo, _clipped(busy[-1], lo, hi), parts))
    return out


def _parts(
    busy: list[Union],
    causes: dict[str, tuple[np.ndarray, np.ndarray]],
    start: np.ndarray,
    end: np.ndarray,
    lo: int,
    hi: int,
) -> Parts:
    c, cc, al = (_clipped(u, lo, hi) for u in busy)
    ns = {"compute": c, "comm": cc - c, "copy": al - cc}
    for p in ("data", "sync", "cpu_bound"):
        s, e = causes.get(p, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        ns[p] = _clipped(Union.of(s, e), lo, hi)
    ns["other"] = (hi - lo) - al - ns["data"] - ns["sync"] - ns["cpu_bound"]
    both = int(overlap_sum(start, end, np.array([lo]), np.array([hi]))[0]) - al
    return Parts(hi - lo, {p: int(ns[p]) for p in PARTS}, both)


# --- everything over the window, as one table (the CLI's range report, the viewer's R) --

#: the per-name sums of a range, by section: (section, report, name column)
SECTIONS = (
    ("kernels", "cuda_gpu_kern_sum", "name"),
    ("api", "cuda_api_sum", "name"),
    ("memory", "cuda_gpu_mem_time_sum", "operation"),
    ("nvtx", "nvtx_sum", "range"),
    ("osrt", "osrt_sum", "name"),
)
RANGE_COLUMNS = [
    Column("Section", "section", "str"),
    Column("Device", "device", "str"),
    Column("Count", "count", "int"),
    Column("Total (ns)", "total_ns", "int"),
    Column("Share (%)", "share_pct", "pct"),
    Column("Name", "name", "str"),
]


def range_stats(
    ctx: Ctx, w: Window, budget: Budget | Literal["ctx"] | None = FROM_CTX
) -> StatsTable:
    """Rows `gpu` (per device: GPU busy, then the budget's parts, shares of the window),
    then the per-name sums of each section (shares of the section's total, as nsys
    stats' Time (%)), each section by total time descending."""
    rows: list[dict[str, object]] = []
    for d in device_windows(ctx, w.lo, w.hi, budget):
        rows.append(_gpu_row(d.device, "GPU busy", d.busy_ns, d.wall_ns))
        if d.parts is not None:
            rows += [_gpu_row(d.device, LABELS[p], d.parts.ns[p], d.wall_ns) for p in PARTS]
    sums = window_summaries(ctx.trace, w, tuple(s[1] for s in SECTIONS))
    for section, report, key in SECTIONS:
        for r in sums[report].data.to_pylist():
            rows.append({"section": section, "device": "", "name": r[key], "count": r["count"],
                         "total_ns": r["total_ns"], "share_pct": r["time_pct"]})  # fmt: skip
    rows += _metric_rows(ctx, w)
    data = pa.Table.from_pylist(rows, schema=_RANGE_SCHEMA)
    return StatsTable("range_stats", RANGE_COLUMNS, data)


_RANGE_SCHEMA = pa.schema([
    ("section", pa.string()), ("device", pa.string()), ("count", pa.int64()),
    ("total_ns", pa.int64()), ("share_pct", pa.float64()), ("name", pa.string()),
])  # fmt: skip


def _metric_rows(ctx: Ctx, w: Window) -> list[dict[str, object]]:
    """Section `metrics`: each drawn GPU metric's mean over the samples in the window
    (count = those samples; the mean, in its unit, in the name)."""
    from tuiperf.model.timeline.metric_lane import metric_lines

    out: list[dict[str, object]] = []
    for dev, lines in sorted(metric_lines(ctx.trace).items()):
        for line in lines:
            n, mean = line.s.mean_in(w.lo, w.hi)
            name = f"{line.label}: mean {line.text(mean)}"
            out.append({"section": "metrics", "device": str(dev), "count": n, "total_ns": None,
                        "share_pct": None, "name": name})  # fmt: skip
    return out


def _gpu_row(device: int, name: str, ns: int, wall: int) -> dict[str, object]:
    pct = 100.0 * ns / wall if wall else 0.0
    return {"section": "gpu", "device": str(device), "name": name, "count": None,
            "total_ns": int(ns), "share_pct": pct}  # fmt: skip
