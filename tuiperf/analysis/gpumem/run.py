"""The memory report with its findings (the memory rules; the command adds the timeline's
`alloc_churn`, which lives with the other timeline rules)."""

from __future__ import annotations

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.gpumem.attribute import attribute
from tuiperf.analysis.gpumem.rules import memory_findings
from tuiperf.analysis.gpumem.summary import MemoryReport, build
from tuiperf.load.gpumem import tables as T
from tuiperf.model.trace import Trace


def memory_report(
    data: T.MemoryData, trace: Trace | None = None, at_ns: int | None = None
) -> MemoryReport:
    ctx = Ctx(trace) if trace is not None else None
    steps = ctx.steps if ctx is not None else None
    if trace is not None and data.kind == T.KINETO:
        data = attribute(data, trace)
    rep = build(data, steps, at_ns)
    rep.findings = memory_findings(rep)
    if data.kind == T.SNAPSHOT and trace is not None:
        rep.notes.append(
            "the snapshot's clock is its own: per-step memory comes from the timeline's "
            "memory events, not the snapshot"
        )
    return rep
