"""What one event is, who launched it and which NVTX ranges it falls in.

GPU work (kernels, memcpy, memset) links to its launching CUDA API call by correlation id
*and* pid (FORMATS.md §1.5). NVTX ranges are per thread and contain the launch call, not
the kernel. PyTorch launches backward kernels from its autograd thread, outside the main
thread's ranges, so a kernel's NVTX context is given two ways: the ranges open on the
launching thread at launch time, and the ranges open at that time on the process's other
threads (the thread that opened `backward`). An event with neither says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays as A
from tuiperf.model import fmt
from tuiperf.model.timeline import callsites
from tuiperf.model.timeline.lanes import display_name
from tuiperf.model.trace import Trace

GPU_TABLES = ("kernels", "memcpy", "memset", "graphs")


@dataclass(frozen=True)
class NvtxRange:
    text: str
    start: int
    end: int
    depth: int
    tid: int | None
    thread: str


@dataclass
class NvtxContext:
    """NVTX ranges open at `time` in process `pid`; `tid` is the thread that did the work."""

    time: int
    tid: int | None
    thread: str
    #: what the thread is to the event: "launching thread" (GPU work) or "thread" (the rest)
    role: str = "launching thread"
    own: list[NvtxRange] = field(default_factory=list)
    #: thread name -> ranges (outermost first) on the process's other threads
    others: dict[str, list[NvtxRange]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.own and not self.others

    def lines(self) -> list[str]:
        """One line per thread: `step 3 › backward  (on its thread, python3 (12522))`; or
        a sentence saying that no range was open."""
        where = f"its {self.role}, {self.thread}"
        if self.empty:
            return [f"no NVTX range was open at this time, on {where} or any other thread"]
        out = []
        if self.own:
            out.append(f"{_path(self.own)}  (on {where})")
        else:
            out.append(f"no NVTX range open on {where}")
        for thread, ranges in self.others.items():
            out.append(f"{_path(ranges)}  (by time, on {thread})")
        return out


def _path(ranges: list[NvtxRange]) -> str:
    return " › ".join(fmt.clean(r.text, 40) for r in ranges)


class NvtxIndex:
    """The nvtx table as numpy arrays, for 'which ranges are open at t' queries."""

    def __init__(self, trace: Trace) -> None:
        t = trace.table("nvtx")
        self.n = t.num_rows
        # (from Arrow's buffers: `fill_null` and `to_numpy` import pandas; model/arrays.py)
        start = A.as_int64(t["start"], 0)
        self.start = start
        self.end = np.where(A.valid(t["end"]), A.as_int64(t["end"], 0), start)
        self.pid = A.as_int64(t["pid"], -1)
        self.tid = A.as_int64(t["tid"], -1)
        self.depth = A.as_int64(t["depth"], 0)
        texts = t["text"].cast(pa.string()).to_pylist() if self.n else []
        self.text = [s if s is not None else "" for s in texts]
        self.threads = {
            (r["pid"], r["tid"]): r["name"] or "" for r in trace.table("threads").to_pylist()
        }

    def thread_name(self, pid: int | None, tid: int | None) -> str:
        name = self.threads.get((pid, tid))
        if tid is None:
            return name or "an unknown thread"
        return f"{name} ({tid})" if name else f"thread {tid}"

    def context(self, pid: int | None, tid: int | None, t: int) -> NvtxContext:
        ctx = NvtxContext(t, tid, self.thread_name(pid, tid))
        if self.n == 0:
            return ctx
        hit = (self.start <= t) & (self.end > t) & (self.pid == (-1 if pid is None else pid))
        for i in np.flatnonzero(hit).tolist():
            rtid = int(self.tid[i])
            r = NvtxRange(
                self.text[i],
                int(self.start[i]),
                int(self.end[i]),
                int(self.depth[i]),
                rtid,
                self.thread_name(pid, rtid),
            )
            if rtid == tid:
                ctx.own.append(r)
            else:
                ctx.others.setdefault(r.thread, []).append(r)
        ctx.own.sort(key=lambda r: (r.depth, r.start))
        for ranges in ctx.others.values():
            ranges.sort(key=lambda r: (r.depth, r.start))
        return ctx


# --- correlation -----------------------------------------------------------------------


def _matches(t: pa.Table, correlation: int | None, pid: int | None) -> list[int]:
    if t.num_rows == 0 or correlation is None:
        return []
    # in numpy: `pc.equal(col, value)` makes a scalar, which imports pandas (model/arrays.py)
    mask = A.valid(t["correlation_id"]) & (A.as_int64(t["correlation_id"]) == correlation)
    if pid is not None:
        mask &= A.valid(t["pid"]) & (A.as_int64(t["pid"]) == pid)
    return [int(i) for i in np.flatnonzero(mask)]


def launch_of(trace: Trace, table: str, row: int) -> int | None:
    """The api row that launched GPU event `row` of `table` (same correlation id and pid)."""
    rec = row_dict(trace, table, row)
    found = _matches(trace.table("api"), rec.get("correlation_id"), rec.get("pid"))
    return found[0] if found else None


def work_of(trace: Trace, api_row: int) -> list[tuple[str, int]]:
    """The GPU events (table, row) launched by CUDA API call `api_row`."""
    rec = row_dict(trace, "api", api_row)
    out = []
    for table in GPU_TABLES:
        out += [(table, r) for r in _matches(trace.table(table), rec["correlation_id"], rec["pid"])]
    return out


def partner_of(trace: Trace, table: str, row: int) -> tuple[str, int] | None:
    """The other end of a launch: the API call of GPU work, or the first work of a call."""
    if table in GPU_TABLES:
        api = launch_of(trace, table, row)
        return None if api is None else ("api", api)
    if table == "api":
        work = work_of(trace, row)
        return work[0] if work else None
    return None


def row_dict(trace: Trace, table: str, row: int) -> dict:
    return trace.table(table).slice(row, 1).to_pylist()[0]


# --- details of one event ----------------------------------------------------------------

KIND_OF_TABLE = {
    "kernels": "kernel",
    "memcpy": "memcpy",
    "memset": "memset",
    "graphs": "CUDA graph",
    "api": "CUDA API",
    "nvtx": "NVTX range",
    "osrt": "OS runtime call",
}


@dataclass
class EventDetails:
    table: str
    row: int
    title: str
    kind: str
    fields: list[tuple[str, str]]
    nvtx: NvtxContext | None = None
    #: the launch of GPU work, or the GPU work of a launch
    partner: tuple[str, int] | None = None


def describe(trace: Trace, table: str, row: int, index: NvtxIndex | None = None) -> EventDetails:
    """Name, times, place and links of event `row` of `table`, as label/value pairs."""
    index = index or NvtxIndex(trace)
    r = row_dict(trace, table, row)
    title = _title(table, r)
    dur = (r["end"] - r["start"]) if r.get("end") is not None else None
    fields = [("Start", fmt.time_point(r["start"], span=max(dur or 0, 1000)))]
    if dur is not None:
        fields += [("Duration", fmt.duration(dur))]
    fields += _place(table, r, index) + _specific(table, r)
    partner = partner_of(trace, table, row)
    if table in GPU_TABLES:
        fields += _launch_fields(trace, partner, index)
        when, tid = _launch_time(trace, partner, r)
    else:
        when, tid = r["start"], r.get("tid")
        if partner is not None:
            p = row_dict(trace, *partner)
            fields.append(("Launched", f"{_title(partner[0], p)} on stream {p.get('stream')}"))
    fields += callsites.detail_fields(trace, table, row)
    ctx = index.context(r.get("pid"), tid, int(when))
    if table not in GPU_TABLES:
        ctx.role = "thread"
    if table == "nvtx":  # its enclosing ranges, not itself or its children
        ctx.own = [x for x in ctx.own if x.depth < (r.get("depth") or 0)]
    return EventDetails(table, row, title, KIND_OF_TABLE.get(table, table), fields, ctx, partner)


def _title(table: str, r: dict) -> str:
    if table == "kernels":
        return fmt.clean(r.get("short_name") or r.get("name") or "kernel")
    if table == "memcpy":
        return f"memcpy {fmt.clean(r.get('copy_kind') or '')}".strip()
    if table == "memset":
        return "memset"
    if table == "nvtx":
        return fmt.clean(r.get("text") or "(unnamed range)")
    return fmt.clean(display_name("api" if table == "api" else table, r.get("name") or ""))


def _place(table: str, r: dict, index: NvtxIndex) -> list[tuple[str, str]]:
    if table in GPU_TABLES:
        return [("Device", str(r.get("device"))), ("Stream", str(r.get("stream")))]
    return [
        ("Thread", index.thread_name(r.get("pid"), r.get("tid"))),
        ("Process", str(r.get("pid"))),
    ]


def _dims(r: dict, what: str) -> str:
    return "×".join(str(r.get(f"{what}_{a}")) for a in "xyz")


def _specific(table: str, r: dict) -> list[tuple[str, str]]:
    if table == "kernels":
        return [
            ("Grid", _dims(r, "grid")),
            ("Block", _dims(r, "block")),
            ("Registers", str(r.get("registers"))),
            (
                "Shared mem",
                f"{fmt.size(r.get('static_smem'))} static, "
                f"{fmt.size(r.get('dynamic_smem'))} dynamic",
            ),
            ("Full name", fmt.clean(r.get("name") or "")),
        ]
    if table == "memcpy":
        out = [
            ("Bytes", fmt.size(r.get("bytes"))),
            ("From → to", f"{r.get('src_kind')} → {r.get('dst_kind')}"),
        ]
        dur = (r.get("end") or 0) - r["start"]
        if dur > 0 and r.get("bytes"):
            out.append(("Throughput", f"{fmt.size(r['bytes'] / dur * 1e9)}/s"))
        return out
    if table == "memset":
        return [("Bytes", fmt.size(r.get("bytes"))), ("Memory", str(r.get("mem_kind")))]
    if table == "nvtx":
        return [("Domain", fmt.clean(r.get("domain") or "default")), ("Depth", str(r.get("depth")))]
    if table == "graphs":
        return [("Graph", str(r.get("graph_id"))), ("Executable", str(r.get("graph_exec_id")))]
    if table in ("api", "osrt"):
        # torch.profiler records no return value: say nothing rather than "None"
        rv = r.get("return_value")
        return [] if rv is None else [("Returned", str(rv))]
    return []


def _launch_fields(
    trace: Trace, partner: tuple[str, int] | None, index: NvtxIndex
) -> list[tuple[str, str]]:
    if partner is None:
        return [("Launched by", "no CUDA API call found (outside the capture?)")]
    a = row_dict(trace, *partner)
    name = display_name("api", fmt.clean(a.get("name") or ""))
    return [
        ("Launched by", f"{name} on {index.thread_name(a.get('pid'), a.get('tid'))}"),
        (
            "Launch at",
            f"{fmt.time_point(a['start'], span=1000)} ({fmt.duration(a['end'] - a['start'])})",
        ),
        ("Correlation", str(a.get("correlation_id"))),
    ]


def _launch_time(trace: Trace, partner: tuple[str, int] | None, r: dict) -> tuple[int, int | None]:
    if partner is None:
        return r["start"], r.get("tid")
    a = row_dict(trace, *partner)
    return a["start"], a.get("tid")
