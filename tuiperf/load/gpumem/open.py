"""Open what `tuiperf memory` reads: a snapshot, a timeline report, or one of each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tuiperf.errors import BadReportError, UsageError
from tuiperf.load import detect as det
from tuiperf.load.gpumem import tables as T
from tuiperf.load.gpumem.snapshot import load_snapshot
from tuiperf.load.gpumem.timeline import from_nsys, kineto_memory
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace

NO_NSYS_MEMORY = "no GPU memory events (record with `nsys profile --cuda-memory-usage=true`)"
NO_KINETO_MEMORY = "no [memory] events (record with torch.profiler.profile(profile_memory=True))"


@dataclass
class MemoryInputs:
    """The memory source to report, and the timeline (steps, CUDA calls) when given."""

    memory: T.MemoryData
    trace: Trace | None = None
    #: the timeline's own memory events when a snapshot is the source reported
    timeline_memory: T.MemoryData | None = None


def open_memory(
    path: Path, other: Path | None = None, opts: OpenOptions | None = None
) -> MemoryInputs:
    paths = [p for p in (path, other) if p is not None]
    kinds = [det.detect(p) for p in paths]
    snaps = [p for p, k in zip(paths, kinds) if k == det.TORCH_SNAPSHOT]
    timelines = [p for p, k in zip(paths, kinds) if k != det.TORCH_SNAPSHOT]
    if len(snaps) > 1 or len(timelines) > 1:
        raise UsageError("give one memory snapshot, one timeline report, or one of each")
    for p, k in zip(paths, kinds):
        if k in (det.NCU_REP, det.NCU_CSV):
            raise UsageError(f"{p}: an Nsight Compute report has no memory timeline")
    trace = open_trace(timelines[0], opts) if timelines else None
    own = timeline_memory(trace, timelines[0]) if trace is not None else None
    if snaps:
        return MemoryInputs(load_snapshot(snaps[0]), trace, own)
    assert trace is not None
    if own is None:
        why = NO_KINETO_MEMORY if trace.meta.format == det.KINETO else NO_NSYS_MEMORY
        raise BadReportError(f"{timelines[0]}: {why}")
    return MemoryInputs(own, trace)


def timeline_memory(trace: Trace, path: Path) -> T.MemoryData | None:
    if trace.meta.format == det.KINETO:
        return kineto_memory(trace, path)
    return from_nsys(trace)
