"""Communication work: NCCL-type kernels and collective ranges, their collective type, and
how much of their time compute on other streams hides (per device, per step).

A kernel is communication when its name says so (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`,
`ncclKernel_AllGather_RING_LL_Sum_int8_t`, RCCL's, …); the collective type comes from the
name. A CPU range is a collective when its text names one (NCCL's own NVTX ranges
`ncclAllReduce`, torch.profiler's `c10d::allreduce_` / `gloo:all_reduce`, a user's
`allreduce`): gloo runs collectives on the CPU, so they have no kernel. Message sizes come
from NCCL's NVTX payloads; the nsys SQLite export keeps the payload schema but not the
values in the reports seen so far, so sizes are reported as unknown there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tuiperf.analysis.budget.comm_names import COMM_KERNEL
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.intervals import Union
from tuiperf.model import arrays as A

#: a CPU range that is one collective call
COLLECTIVE_RANGE = re.compile(
    r"^(nccl(AllReduce|AllGather|ReduceScatter|Broadcast|Reduce|Send|Recv|AllToAll)"
    r"|c10d::|gloo:|nccl:)"
    r"|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast",
    re.IGNORECASE,
)
#: NCCL's set-up/tear-down ranges: not collectives
NOT_COLLECTIVE = re.compile(r"^nccl(Comm|Group|GetUniqueId|Mem|Config)", re.IGNORECASE)
#: collective types in the order they are tried against a squashed, lower-case name
_TYPES = (
    ("reducescatter", "ReduceScatter"),
    ("allreduce", "AllReduce"),
    ("allgather", "AllGather"),
    ("alltoall", "AllToAll"),
    ("broadcast", "Broadcast"),
    ("sendrecv", "SendRecv"),
    ("send", "SendRecv"),
    ("recv", "SendRecv"),
    ("reduce", "Reduce"),
)
#: Kineto rows that only mirror a CPU range on the GPU timeline
_GPU_MIRROR = "gpu_user_annotation"


def collective_of(name: str) -> str:
    """The collective type a kernel or range name carries ("" when none is named)."""
    squashed = re.sub(r"[^a-z]", "", name.lower())
    for key, kind in _TYPES:
        if key in squashed:
            return kind
    return ""


def comm_kernel_mask(ctx: Ctx) -> np.ndarray:
    """Which rows of the kernels table are communication kernels."""
    k = ctx.table("kernels")
    return A.name_mask(k, "name", COMM_KERNEL) if k.num_rows else np.zeros(0, bool)


def collective_ranges(ctx: Ctx) -> np.ndarray:
    """Rows of the nvtx table that are collective calls on the CPU, outermost only (a
    `c10d::allreduce_` op holding a `gloo:all_reduce` range counts once), by start. With
    torch.profiler's backend ranges (`gloo:all_reduce`, `nccl:all_reduce`), only those."""
    nv = ctx.table("nvtx")
    if nv.num_rows == 0:
        return np.zeros(0, np.int64)
    text = A.strings(nv, "text").astype(str)
    hit = np.array(
        [bool(COLLECTIVE_RANGE.search(t)) and not NOT_COLLECTIVE.match(t) for t in text], bool
    )
    hit &= A.strings(nv, "domain") != _GPU_MIRROR
    backend = hit & (np.char.startswith(text, "gloo:") | np.char.startswith(text, "nccl:"))
    if backend.any():  # torch.profiler: the backend's own range is the collective running;
        hit = backend  # c10d::allreduce_ only queues it (async) on the loop thread
    start, end = A.ints(nv, "start"), A.ints(nv, "end", -1)
    rows = np.flatnonzero(hit & (end > start))
    if len(rows) == 0:
        return rows
    rows = rows[np.lexsort((-end[rows], start[rows]))]
    # a range inside an earlier one (on any thread: Kineto's `gloo:all_reduce` runs on a
    # worker thread inside the loop's `c10d::allreduce_`) is part of it
    reach = np.maximum.accumulate(end[rows])
    inside = np.zeros(len(rows), bool)
    inside[1:] = end[rows][1:] <= reach[:-1]
    return rows[~inside]


@dataclass(frozen=True)
class CommRow:
    """One collective type on one device: its kernels and how much compute hid them."""

    device: int
    collective: str
    count: int
    total_ns: int
    overlapped_ns: int  # under compute kernels of the same device (other streams)
    bytes: int | None  # None: the report does not say

    @property
    def exposed_ns(self) -> int:
        return self.total_ns - self.overlapped_ns

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "collective": self.collective,
            "count": self.count,
            "total_ns": self.total_ns,
            "overlapped_ns": self.overlapped_ns,
            "exposed_ns": self.exposed_ns,
            "bytes": self.bytes,
        }


def comm_by_device(ctx: Ctx) -> list[CommRow]:
    """Communication kernels per device and collective type, time overlapped by compute."""
    k = ctx.table("kernels")
    comm = comm_kernel_mask(ctx)
    if not comm.any():
        return []
    start, end = A.ints(k, "start"), A.ints(k, "end")
    dev = A.ints(k, "device", -1)
    names = A.strings(k, "name").astype(str)
    kinds = np.array([collective_of(n) or "other" for n in names[comm]])
    rows = np.flatnonzero(comm)
    out: list[CommRow] = []
    for d in np.unique(dev[rows]):
        compute = Union.of(start[~comm & (dev == d)], end[~comm & (dev == d)])
        for kind in np.unique(kinds[dev[rows] == d]):
            sel = rows[(dev[rows] == d) & (kinds == kind)]
            hidden = compute.busy(start[sel], end[sel])
            total = int((end[sel] - start[sel]).sum())
            out.append(CommRow(int(d), str(kind), len(sel), total, int(hidden.sum()), None))
    return sorted(out, key=lambda r: (r.device, -r.total_ns))


@dataclass(frozen=True)
class StepOverlap:
    """Communication kernel time in one step on one device (union; ns)."""

    label: str
    comm_ns: int
    exposed_ns: int

    @property
    def overlapped_ns(self) -> int:
        return self.comm_ns - self.exposed_ns


def overlap_by_step(ctx: Ctx) -> dict[int, list[StepOverlap]]:
    """Per device, per steady step: communication kernel time, and the part no compute
    kernel hid (the step budget's `comm` part). {} without steps or comm kernels."""
    b = ctx.budget
    comm = comm_kernel_mask(ctx)
    if b is None or not comm.any():
        return {}
    k = ctx.table("kernels")
    start, end, dev = A.ints(k, "start"), A.ints(k, "end"), A.ints(k, "device", -1)
    out: dict[int, list[StepOverlap]] = {}
    for d in b.devices:
        on = comm & (dev == d.device)
        u = Union.of(start[on], end[on])
        a = np.array([s.start_ns for s in d.steps], np.int64)
        e = np.array([s.end_ns for s in d.steps], np.int64)
        total = u.busy(a, e)
        out[d.device] = [
            StepOverlap(s.label, int(total[i]), int(s.parts.ns["comm"]))
            for i, s in enumerate(d.steps)
        ]
    return out


@dataclass(frozen=True)
class StepComm:
    """One steady step of the loop's main device: its collectives' time (ns) and the part
    of it the GPU spent idle or on communication alone (exposed)."""

    label: str
    start_ns: int
    end_ns: int
    comm_ns: int
    exposed_ns: int
    calls: int


@dataclass(frozen=True)
class LoopComm:
    """The collectives of the training loop: kernels (NCCL) or CPU ranges (gloo, or NCCL
    without kernels), their spans, and the steady steps' share of them."""

    source: str  # "kernels", "ranges" or "" (none found)
    device: int
    starts: np.ndarray
    ends: np.ndarray
    steps: list[StepComm]
    #: per call (same order): its collective type ("other" when the name says none)
    kinds: np.ndarray = field(default_factory=lambda: np.zeros(0, object))

    @property
    def found(self) -> bool:
        return bool(self.source)

    def by_kind(self) -> dict[str, tuple[int, int]]:
        """Collective type -> (calls, total ns), over every call of the loop."""
        out: dict[str, tuple[int, int]] = {}
        for k, d in zip(self.kinds.tolist(), (self.ends - self.starts).tolist(), strict=True):
            n, t = out.get(k, (0, 0))
            out[k] = (n + 1, t + int(d))
        return out


def loop_comm(ctx: Ctx) -> LoopComm | None:
    """The loop's collectives per steady step; None without steps."""
    b = ctx.budget
    if b is None:
        return None
    dev = b.main
    a = np.array([s.start_ns for s in dev.steps], np.int64)
    e = np.array([s.end_ns for s in dev.steps], np.int64)
    k = ctx.table("kernels")
    on = comm_kernel_mask(ctx) & (A.ints(k, "device", -1) == dev.device) if k.num_rows else None
    if on is not None and on.any():
        s, t = A.ints(k, "start")[on], A.ints(k, "end")[on]
        exposed = np.array([p.parts.ns["comm"] for p in dev.steps], np.int64)
        names = A.strings(k, "name").astype(str)[on]
        return _loop(ctx, "kernels", dev.device, (s, t, names), a, e, exposed)
    rows = collective_ranges(ctx)
    nv = ctx.table("nvtx")
    if len(rows) and ctx.steps.tid is not None:
        same = A.ints(nv, "tid", -1)[rows] == ctx.steps.tid
        rows = rows[same] if same.any() else rows
    if len(rows) == 0:
        z = np.zeros(0, np.int64)
        none = (z, z, np.zeros(0, str))
        return _loop(ctx, "", dev.device, none, a, e, np.zeros(len(a), np.int64))
    s, t = A.ints(nv, "start")[rows], A.ints(nv, "end")[rows]
    # CPU ranges: the steps' CPU-side windows (the same ones unless the CPU runs ahead)
    a = np.array([p.cpu_start_ns for p in dev.steps], np.int64)
    e = np.array([p.cpu_end_ns for p in dev.steps], np.int64)
    ops = ctx.gpu_ops
    mine = ops.device == dev.device
    busy = Union.of(ops.start[mine], ops.end[mine])
    exposed = np.zeros(len(a), np.int64)
    for i in range(len(a)):
        lo, hi = np.maximum(s, a[i]), np.minimum(t, e[i])
        ok = hi > lo
        exposed[i] = int(busy.idle(lo[ok], hi[ok]).sum())
    names = A.strings(nv, "text").astype(str)[rows]
    return _loop(ctx, "ranges", dev.device, (s, t, names), a, e, exposed)


def _loop(
    ctx: Ctx,
    source: str,
    device: int,
    calls: tuple[np.ndarray, np.ndarray, np.ndarray],
    a: np.ndarray,
    e: np.ndarray,
    exposed: np.ndarray,
) -> LoopComm:
    """The LoopComm of calls (starts, ends, names) over the steady steps [a, e)."""
    order = np.argsort(calls[0], kind="stable")
    s, t = calls[0][order], calls[1][order]
    kinds = np.array([collective_of(n) or "other" for n in calls[2][order]], object)
    u = Union.of(s, t)
    total = u.busy(a, e)
    b = ctx.budget
    assert b is not None
    steps = [
        StepComm(
            p.label,
            int(a[i]),
            int(e[i]),
            int(total[i]),
            int(exposed[i]),
            int(((s >= a[i]) & (s < e[i])).sum()),
        )
        for i, p in enumerate(b.main.steps)
    ]
    return LoopComm(source, device, s, t, steps, kinds)
