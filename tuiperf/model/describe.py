"""Plain facts about a trace: devices, processes, threads, time range, row counts."""

from __future__ import annotations

from typing import Any

import pyarrow.compute as pc

from tuiperf.model.trace import Trace


def active_pids(trace: Trace) -> set[int]:
    """Processes that own events (PROCESSES lists every process on the machine)."""
    pids: set[int] = set()
    for name in ("api", "kernels", "memcpy", "memset", "nvtx", "osrt"):
        t = trace.table(name, ["pid"])
        if t.num_rows:
            pids.update(int(p) for p in pc.unique(t["pid"].drop_null()).to_pylist())
    return pids


def describe_trace(trace: Trace) -> dict[str, Any]:
    m = trace.meta
    pids = active_pids(trace)
    procs = {
        int(p): n
        for p, n in zip(
            trace.table("processes")["pid"].to_pylist(),
            trace.table("processes")["name"].to_pylist(),
        )
        if p is not None
    }
    threads = [
        {"pid": p, "tid": t, "name": n}
        for p, t, n in zip(*(trace.table("threads")[c].to_pylist() for c in ("pid", "tid", "name")))
        if p in pids
    ]
    rng = trace.time_range()
    return {
        "source": m.source,
        "format": m.format,
        "tool": m.tool,
        "tool_version": m.tool_version,
        "export_schema": m.export_schema,
        "devices": trace.table("devices").to_pylist(),
        "processes": [{"pid": p, "name": procs.get(p, "")} for p in sorted(pids)],
        "threads": threads,
        "time_range_ns": list(rng) if rng else None,
        "duration_ns": m.duration_ns,
        "capture": m.capture,
        "diagnostics": m.diagnostics,
        "rows": {k: v for k, v in trace.counts().items()},
        "cache": m.cache_path,
        "from_cache": m.from_cache,
    }
