"""The memory report with its findings (the memory rules; the command adds the timeline's
`alloc_churn`, which lives with the other timeline rules)."""

from __future__ import annotations

import pyarrow.compute as pc

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.gpumem.attribute import attribute
from tuiperf.analysis.gpumem.rules import memory_findings
from tuiperf.analysis.gpumem.summary import MemoryReport, build
from tuiperf.load.gpumem import tables as T
from tuiperf.model.trace import Trace


def memory_report(
    data: T.MemoryData,
    trace: Trace | None = None,
    at_ns: int | None = None,
    timeline: T.MemoryData | None = None,
) -> MemoryReport:
    """The report of `data`; `trace` adds steps (and attributes torch.profiler's events),
    `timeline` (the trace's own memory events) puts a snapshot on the trace's clock."""
    ctx = Ctx(trace) if trace is not None else None
    steps = ctx.steps if ctx is not None else None
    notes: list[str] = []
    if trace is not None and data.kind == T.KINETO:
        data = attribute(data, trace)
        if pc.any(pc.greater(data.sites["line"], 0)).as_py():
            notes.append(KINETO_DEF_LINE)
    if trace is not None and data.kind == T.SNAPSHOT:
        notes.append(_align(data, trace, timeline))
    rep = build(data, steps, at_ns)
    rep.notes += [n for n in notes if n]
    rep.findings = memory_findings(rep)
    return rep


#: said when torch.profiler's Python frames name the sites
KINETO_DEF_LINE = (
    "torch.profiler records Python calls, not lines: its events name a function by its "
    "file and the line of its def (`model.py(40): forward`), so a site's line is the def "
    "line of the user function that was running, not the line that allocated (a snapshot "
    "has that)"
)


def _align(data: T.MemoryData, trace: Trace, timeline: T.MemoryData | None) -> str:
    """Put the snapshot's epoch times on the trace's clock when the trace says its epoch
    (torch.profiler's baseTimeNanoseconds) and the two overlap; else say why not."""
    origin = timeline.epoch_origin_ns if timeline is not None else None
    span = trace.time_range()
    times = _time_range(data)
    if origin is None or span is None or times is None:
        return (
            "the snapshot keeps its own clock (the timeline does not give its epoch): "
            "per-step memory is not taken from it"
        )
    lo, hi = times
    if hi - origin < span[0] or lo - origin > span[1]:
        return "the snapshot's times do not overlap the timeline's: not aligned (another run?)"
    data.epoch_origin_ns = origin
    return ""


def _time_range(data: T.MemoryData) -> tuple[int, int] | None:
    if data.spill is not None:
        return data.spill.time_range()
    t = data.events["time_ns"].drop_null()
    if len(t) == 0:
        return None
    lo, hi = pc.min_max(t).values()
    return int(lo.as_py()), int(hi.as_py())
