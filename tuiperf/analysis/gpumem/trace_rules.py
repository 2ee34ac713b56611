"""The memory rules `analyze` runs on a timeline report: memory creep across steady steps
and a fragmented cache at the peak, from the report's own memory events (nsys
`--cuda-memory-usage=true`; torch.profiler `profile_memory=True`: its file is read again
once, up to REREAD_MAX bytes, then kept beside the cache entry). The report is built once
per trace and shared by the rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import Finding, Skip
from tuiperf.analysis.gpumem import rules as R
from tuiperf.analysis.gpumem.summary import MemoryReport, build
from tuiperf.load.gpumem import tables as T
from tuiperf.load.gpumem.timeline import NotRead, from_nsys, kineto_memory

#: TraceMeta.capture names this when torch.profiler recorded memory
PROFILE_MEMORY = "profile_memory"
#: a torch.profiler trace larger than this is not read a second time by analyze (its
#: memory events come from the cache entry once `tuiperf memory` has read them)
REREAD_MAX = 64 << 20
_KEY = "_gpumem_report"


def _memory(ctx: Ctx) -> T.MemoryData:
    meta = ctx.trace.meta
    data = None
    if meta.format == "kineto":
        if PROFILE_MEMORY in meta.capture:
            try:
                data = kineto_memory(ctx.trace, Path(meta.source), REREAD_MAX)
            except NotRead as e:
                raise Skip(
                    f"the trace's memory events are not read again by analyze ({e}); "
                    "`tuiperf memory` reads them once and keeps them for analyze"
                ) from None
    else:
        data = from_nsys(ctx.trace)
    if data is None:
        raise Skip(
            "no GPU memory events (nsys --cuda-memory-usage=true, or torch.profiler "
            "profile_memory=True)"
        )
    return data


def _report(ctx: Ctx) -> MemoryReport:
    """The memory report at the peak with the steps, once per trace (a Skip once is a
    Skip for every rule)."""
    got = ctx.trace.__dict__.get(_KEY)
    if got is None:
        try:
            got = build(_memory(ctx), ctx.steps)
        except Skip as e:
            got = e
        ctx.trace.__dict__[_KEY] = got
    if isinstance(got, Skip):
        raise got
    return got


def memory_creep(ctx: Ctx) -> list[Finding]:
    rep = _report(ctx)
    return [f for d in rep.devices for f in R.creep_by_steps(d)]


def memory_fragmentation(ctx: Ctx) -> list[Finding]:
    rep = _report(ctx)
    return [f for d in rep.devices for f in R.fragmentation(rep, d)]


RULES: dict[str, Callable[[Ctx], list[Finding]]] = {
    R.RULE_CREEP: memory_creep,
    R.RULE_FRAG: memory_fragmentation,
}
