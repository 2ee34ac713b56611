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
from dataclasses import dataclass
from typing import Any

import numpy as np

from tuiperf.analysis.context import Ctx
from tuiperf.analysis.intervals import Union
from tuiperf.model import arrays as A

#: a communication kernel (NCCL, RCCL, and collectives by name)
COMM_KERNEL = re.compile(
    r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv", re.IGNORECASE
)
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
    `c10d::allreduce_` op holding a `gloo:all_reduce` range counts once)."""
    nv = ctx.table("nvtx")
    if nv.num_rows == 0:
        return np.zeros(0, np.int64)
    text = A.strings(nv, "text").astype(str)
    hit = np.array(
        [bool(COLLECTIVE_RANGE.search(t)) and not NOT_COLLECTIVE.match(t) for t in text], bool
    )
    hit &= A.strings(nv, "domain") != _GPU_MIRROR
    start, end = A.ints(nv, "start"), A.ints(nv, "end", -1)
    rows = np.flatnonzero(hit & (end > start))
    if len(rows) == 0:
        return rows
    rows = rows[np.argsort(start[rows], kind="stable")]
    tid = A.ints(nv, "tid", -1)
    keep: list[int] = []
    last_end: dict[int, int] = {}
    for r in rows:
        t = int(tid[r])
        if int(start[r]) >= last_end.get(t, -1):
            keep.append(int(r))
            last_end[t] = int(end[r])
    return np.array(keep, np.int64)


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
