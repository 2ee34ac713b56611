"""`tuiperf summary --report step_budget`: the step budget as rows, for scripts."""

from __future__ import annotations

import pyarrow as pa

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import PARTS, DeviceBudget, Parts
from tuiperf.model.trace import Trace
from tuiperf.summaries.rows import ReportRows
from tuiperf.summaries.stats import Column, StatsTable

REPORT = "step_budget"
#: the tables the budget reads (the report is empty when none has a row)
SOURCE_TABLES = ("kernels", "memcpy", "memset", "nvtx", "api", "osrt")
_HEADERS = {
    "compute": "Compute (ns)",
    "comm": "Comm (ns)",
    "copy": "Copy (ns)",
    "data": "Data Wait (ns)",
    "sync": "Host Sync (ns)",
    "cpu_bound": "CPU-Bound (ns)",
    "other": "Other (ns)",
}
COLUMNS = [
    Column("Step", "step", "str"),
    Column("Kind", "kind", "str"),
    Column("Device", "device", "int"),
    Column("Wall (ns)", "wall_ns", "int"),
    Column("GPU Busy (%)", "busy_pct", "pct"),
    *(Column(_HEADERS[p], f"{p}_ns", "int") for p in PARTS),
    Column("Overlap (ns)", "overlap_ns", "int"),
    Column("Method", "method", "str"),
]


def step_budget_table(trace: Trace) -> StatsTable:
    """Per device: the start-up, each steady step, their total and per-part median."""
    b = Ctx(trace).budget
    rows: list[dict[str, object]] = []
    for d in b.devices if b is not None else []:
        rows += _device_rows(d, b.method if b else "")
    data = {c.key: [r[c.key] for r in rows] for c in COLUMNS}
    types = {"str": pa.string(), "int": pa.int64(), "pct": pa.float64()}
    table = pa.table({c.key: pa.array(data[c.key], types[c.fmt]) for c in COLUMNS})
    return StatsTable(REPORT, COLUMNS, table)


def _device_rows(d: DeviceBudget, method: str) -> list[dict[str, object]]:
    out = []
    if d.startup is not None:
        out.append(_row("start-up", "startup", d.device, d.startup, method))
    out += [_row(s.label, "steady", d.device, s.parts, method) for s in d.steps]
    out.append(_row("total", "steady_total", d.device, d.steady, method))
    median = Parts(sum(d.median.values()), d.median, 0)
    out.append(_row("median", "steady_median", d.device, median, method))
    return out


def _row(step: str, kind: str, dev: int, p: Parts, method: str) -> dict[str, object]:
    return {
        "step": step,
        "kind": kind,
        "device": dev,
        "wall_ns": p.wall_ns,
        "busy_pct": p.pct("busy"),
        **{f"{k}_ns": p.ns[k] for k in PARTS},
        "overlap_ns": p.overlap_ns,
        "method": method,
    }


def offer() -> None:
    """Offer this report to `tuiperf summary` and the Python API (the summaries floor below
    cannot import the analysis that computes it)."""
    from tuiperf.summaries.reports import register

    register(REPORT, step_budget_table, SOURCE_TABLES)


#: the table view (`--format table`, 80 columns): short headers (CPU = CPU-bound issue),
#: the step last (it takes the width left); GPU busy %, kind, method and overlap are in the
#: CSV and JSON
_SHOWN = [
    Column("Wall (ns)", "wall_ns", "int"),
    Column("Compute (ns)", "compute_ns", "int"),
    Column("Comm (ns)", "comm_ns", "int"),
    Column("Copy (ns)", "copy_ns", "int"),
    Column("Data (ns)", "data_ns", "int"),
    Column("Sync (ns)", "sync_ns", "int"),
    Column("CPU (ns)", "cpu_bound_ns", "int"),
    Column("Other (ns)", "other_ns", "int"),
]


def for_display(rows: ReportRows) -> StatsTable:
    """The budget as a narrow table: the parts in short columns (comm only when some
    step has it, the device only with several), the step's name last."""
    data = rows.head()
    cols = [c for c in _SHOWN if c.key != "comm_ns" or any(r["comm_ns"] for r in data)]
    if len({r["device"] for r in data}) > 1:
        cols.insert(0, Column("Device", "device", "int"))
    cols.append(Column("Step", "step", "str"))
    types = {"str": pa.string(), "int": pa.int64(), "pct": pa.float64()}
    table = pa.table({c.key: pa.array([r[c.key] for r in data], types[c.fmt]) for c in cols})
    return StatsTable(REPORT, cols, table)
