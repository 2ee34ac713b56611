"""Who made each torch.profiler `[memory]` event: the outermost operator (or
`record_function` range other than the step's) running on the same thread at that
moment, and, when the trace has stacks (`with_stack=True`), that operator's user frame.

torch.profiler records no stack with its memory events; the operator that was running
is the nearest thing it does record. A site is then `file:line (function)` from the
stack, else `<aten::linear>` with the operator's name as its function."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tuiperf.load.gpumem import categories
from tuiperf.load.gpumem import tables as T
from tuiperf.model import arrays as A
from tuiperf.model.timeline.callsites import frames_of, site_rows
from tuiperf.model.trace import Trace

RANGE_DOMAINS = ("cpu_op", "user_annotation")
STEP_PREFIX = "ProfilerStep#"


def attribute(data: T.MemoryData, trace: Trace) -> T.MemoryData:
    """`data` (torch.profiler's events) with `site` filled in from `trace` (its ranges)."""
    nvtx = trace.table("nvtx")
    if data.kind != T.KINETO or nvtx.num_rows == 0:
        return data
    tids = A.ints(data.events, "tid", -1)
    rows = _top_ranges(nvtx)
    start, end = A.ints(nvtx, "start")[rows], A.ints(nvtx, "end")[rows]
    tid = A.ints(nvtx, "tid", -1)[rows]
    t = A.ints(data.events, "time_ns", -1)
    owner = np.full(len(t), -1, np.int64)
    for th in np.unique(tids).tolist():
        mine = np.flatnonzero(tid == th)
        ev = np.flatnonzero(tids == th)
        k = np.searchsorted(start[mine], t[ev], "right") - 1
        ok = (k >= 0) & (t[ev] < end[mine][np.maximum(k, 0)])
        owner[ev[ok]] = rows[mine[k[ok]]]
    return _with_sites(data, trace, nvtx, owner)


def _top_ranges(nvtx: pa.Table) -> np.ndarray:
    """Rows of operator / annotation ranges not inside another on their thread."""
    dom = A.strings(nvtx, "domain")
    text = A.strings(nvtx, "text")
    keep = np.isin(dom, RANGE_DOMAINS) & ~np.char.startswith(text.astype(str), STEP_PREFIX)
    rows = np.flatnonzero(keep)
    tid, start, end = (A.ints(nvtx, c, -1)[rows] for c in ("tid", "start", "end"))
    order = np.lexsort((-end, start, tid))
    out, last_tid, reach = [], None, -1
    for i in order.tolist():
        if tid[i] != last_tid:
            last_tid, reach = tid[i], -1
        if start[i] >= reach:
            out.append(rows[i])
            reach = end[i]
    return np.asarray(out, np.int64)  # by thread, then start: disjoint on each thread


def _with_sites(
    data: T.MemoryData, trace: Trace, nvtx: pa.Table, owner: np.ndarray
) -> T.MemoryData:
    user = site_rows(trace, "nvtx")
    frames = frames_of(trace)
    text = A.strings(nvtx, "text")
    keys: dict[tuple[str, int, str, str], int] = {}
    site = np.full(len(owner), -1, np.int64)
    for i, r in enumerate(owner.tolist()):
        if r < 0:
            continue
        f = frames.site(int(user[r])) if len(user) and user[r] >= 0 else None
        cat = categories.of_range(str(text[r]))
        where = (f.file, f.line, f.function) if f else (f"<{text[r]}>", 0, str(text[r]))
        site[i] = keys.setdefault((*where, cat), len(keys))
    names = list(keys)
    sites = pa.table(
        {
            "site": pa.array(range(len(names)), pa.int32()),
            "file": pa.array([k[0] for k in names], pa.string()),
            "line": pa.array([k[1] for k in names], pa.int32()),
            "function": pa.array([k[2] for k in names], pa.string()),
            "category": pa.array([k[3] for k in names], pa.string()),
        },
        schema=T.SITES,
    )
    col = pa.array(site, mask=site < 0).cast(pa.int32())
    events = data.events.set_column(data.events.schema.get_field_index("site"), "site", col)
    return T.MemoryData(data.kind, data.source, events, sites, notes=data.notes)
