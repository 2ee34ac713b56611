"""Plain facts about a trace: devices, processes, threads, time range, row counts."""

from __future__ import annotations

from typing import Any

import pyarrow.compute as pc

from tuiperf.model.trace import Trace


def active_pids(trace: Trace) -> set[int]:
    """Processes that own events (PROCESSES lists every process on the machine)."""
    pids: set[int] = set()
    for name in ("api", "kernels", "memcpy", "memset", "graphs", "nvtx", "osrt"):
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
        "devices": _devices(trace),
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


def _devices(trace: Trace) -> list[dict[str, object]]:
    """The devices table; where a capture did not describe its GPUs (no TARGET_INFO_GPU),
    the device ids the GPU work ran on, with nothing else known."""
    known = trace.table("devices").to_pylist()
    seen = {d.get("device") for d in known}
    ids: set[int] = set()
    for name in ("kernels", "memcpy", "memset", "graphs"):
        if trace.has(name) and trace.table(name).num_rows:
            col = trace.table(name, ["device"])["device"]
            ids |= {int(v) for v in pc.unique(col).to_pylist() if v is not None}
    return known + [{"device": d, "name": None} for d in sorted(ids - seen)]
