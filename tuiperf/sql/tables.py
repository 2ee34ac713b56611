"""The tables behind the derived views: steps, the step budget, findings, ncu metrics.

Each has a fixed schema (so `--schema` lists it without running the analysis) and a builder
that runs only when a query names the view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from tuiperf.analysis.findings import AnalysisResult, Finding
    from tuiperf.model.ncu.metrics import KernelMetrics
    from tuiperf.model.trace import Trace

_I64 = pa.int64()
_STR = pa.string()

STEPS = pa.schema(
    [("device", _I64), ("step", _STR), ("start_ns", _I64), ("end_ns", _I64),
     ("duration_ns", _I64), ("cpu_start_ns", _I64), ("cpu_end_ns", _I64)]
)  # fmt: skip

FINDINGS = pa.schema(
    [("rank", _I64), ("id", _STR), ("rule", _STR), ("severity", _STR), ("title", _STR),
     ("scope", _STR), ("kernel", _STR), ("count", _I64), ("est_saving_ns", _I64),
     ("est_saving_pct", pa.float64()), ("budget_part", _STR), ("source", _STR),
     ("fix", _STR), ("message", _STR)]
)  # fmt: skip

NCU_METRICS_SQL = (
    "SELECT m.kernel_id, k.demangled AS name, m.section_name, m.metric, m.label, m.unit, "
    "m.value, m.text FROM {metrics} m JOIN {kernels} k ON k.id = m.kernel_id"
)


def budget_schema() -> pa.Schema:
    from tuiperf.analysis.budget.rows import COLUMNS

    types = {"str": _STR, "int": _I64, "pct": pa.float64()}
    return pa.schema([(c.key, types[c.fmt]) for c in COLUMNS])


def steps_table(trace: Trace) -> pa.Table:
    """One row per steady step and device: the GPU-side window and the CPU-side one."""
    from tuiperf.analysis.budget.context import Ctx

    b = Ctx(trace).budget
    rows: list[dict[str, Any]] = []
    for d in b.devices if b is not None else []:
        for s in d.steps:
            rows.append({
                "device": d.device, "step": s.label, "start_ns": s.start_ns,
                "end_ns": s.end_ns, "duration_ns": s.end_ns - s.start_ns,
                "cpu_start_ns": s.cpu_start_ns, "cpu_end_ns": s.cpu_end_ns,
            })  # fmt: skip
    return pa.Table.from_pylist(rows, schema=STEPS)


def budget_table(trace: Trace) -> pa.Table:
    from tuiperf.analysis.budget.rows import step_budget_table

    return step_budget_table(trace).data.cast(budget_schema())


def findings_table(trace: Trace | None, ncu: KernelMetrics | None) -> pa.Table:
    from tuiperf.analysis.engine import analyze

    return findings_rows(analyze(trace, ncu))


def findings_rows(result: AnalysisResult) -> pa.Table:
    from tuiperf.analysis.ids import finding_ids

    ids = finding_ids(result.findings)
    rows = [_finding(i + 1, fid, f) for i, (fid, f) in enumerate(zip(ids, result.findings))]
    return pa.Table.from_pylist(rows, schema=FINDINGS)


def _finding(rank: int, fid: str, f: Finding) -> dict[str, Any]:
    return {
        "rank": rank, "id": fid, "rule": f.rule,
        "severity": f.severity.word, "title": f.title, "scope": f.scope.text(),
        "kernel": f.kernel, "count": f.count, "est_saving_ns": f.est_saving_ns,
        "est_saving_pct": f.est_saving_pct, "budget_part": f.budget_part,
        "source": f.source, "fix": f.fix.text, "message": f.message,
    }  # fmt: skip
