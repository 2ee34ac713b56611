"""The memory rules `analyze` runs on a timeline report: memory creep across steady steps
and a fragmented cache at the peak, from the report's own memory events (nsys
`--cuda-memory-usage=true`; torch.profiler `profile_memory=True`, read again from its
file)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import Finding, Skip
from tuiperf.analysis.gpumem import rules as R
from tuiperf.analysis.gpumem.summary import build
from tuiperf.load.gpumem import tables as T
from tuiperf.load.gpumem.timeline import from_nsys, kineto_memory

#: TraceMeta.capture names this when torch.profiler recorded memory
PROFILE_MEMORY = "profile_memory"


def _memory(ctx: Ctx) -> T.MemoryData:
    meta = ctx.trace.meta
    data = None
    if meta.format == "kineto":
        if PROFILE_MEMORY in meta.capture:
            data = kineto_memory(ctx.trace, Path(meta.source))
    else:
        data = from_nsys(ctx.trace)
    if data is None:
        raise Skip(
            "no GPU memory events (nsys --cuda-memory-usage=true, or torch.profiler "
            "profile_memory=True)"
        )
    return data


def memory_creep(ctx: Ctx) -> list[Finding]:
    rep = build(_memory(ctx), ctx.steps)
    return [f for d in rep.devices for f in R.creep_by_steps(d)]


def memory_fragmentation(ctx: Ctx) -> list[Finding]:
    rep = build(_memory(ctx))
    return [f for d in rep.devices for f in R.fragmentation(rep, d)]


RULES: dict[str, Callable[[Ctx], list[Finding]]] = {
    R.RULE_CREEP: memory_creep,
    R.RULE_FRAG: memory_fragmentation,
}
