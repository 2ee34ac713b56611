"""One report holding several ranks (`nsys profile torchrun ...` traces every worker process
into one report): the processes that ran GPU work, each as a trace of its own."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.analysis.budget.context import GPU_TABLES
from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace


def gpu_processes(trace: Trace) -> list[int]:
    """Processes that launched GPU work, by their busiest device, then pid."""
    pids, devs = [], []
    for name in GPU_TABLES:
        t = trace.table(name, ["pid", "device"])
        pids.append(A.ints(t, "pid", -1))
        devs.append(A.ints(t, "device", -1))
    pid, dev = np.concatenate(pids), np.concatenate(devs)
    ok = pid >= 0
    if not ok.any():
        return []
    pairs, counts = np.unique(np.stack([pid[ok], dev[ok]]), axis=1, return_counts=True)
    main: dict[int, tuple[int, int]] = {}  # pid -> (ops, device)
    for (p, d), n in zip(pairs.T.tolist(), counts.tolist(), strict=True):
        if n > main.get(p, (-1, 0))[0]:
            main[p] = (n, d)
    return sorted(main, key=lambda p: (main[p][1], p))


def process_trace(trace: Trace, pid: int) -> Trace:
    """`trace` with only the rows of process `pid` (tables without a process column, such
    as the devices, are kept whole)."""
    trace.complete_all()
    tables: dict[str, pa.Table] = {}
    for name, t in trace.tables.items():
        if "pid" in t.column_names and t.num_rows:
            # (a cache entry holds pid in the narrowest type of that table's own pids)
            pids = t["pid"].cast(pa.int64())
            keep = pc.fill_null(pc.equal(pids, pa.scalar(pid, pa.int64())), False)
            t = t.filter(keep)
        tables[name] = t
    return Trace(tables, trace.meta)


def several_ranks(trace: Trace) -> list[int]:
    """The processes of a report that each look like a rank (two or more processes with GPU
    work); [] when the report is one rank."""
    pids = gpu_processes(trace)
    return pids if len(pids) > 1 else []
