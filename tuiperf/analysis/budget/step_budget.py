"""Where each training step's wall time goes: GPU busy by kind, GPU idle by cause.

The parts of a step add up to its wall time exactly (integer ns):

* GPU busy, the union over streams (overlapping work counted once, the overlap reported):
  `compute` kernels, then `comm` (NCCL-type kernels, analysis.budget.comm: the exposed part, not
  hidden under compute on another stream), then `copy` (memcpy/memset not hidden under kernels);
* GPU idle, split by what the CPU side was doing:
  `data`   inside the loop's data phase (NVTX `data`-like range, Kineto's
           `enumerate(DataLoader)`), or, without one, in a DataLoader-type OS runtime wait
           of the loop thread;
  `sync`   the CPU was blocked in a sync call (stream/device/event sync, a synchronous or
           device-to-host copy) when the GPU ran dry: the gap until new work arrives, up
           to the time the CPU spent blocked in sync calls in that step (removing the syncs
           gives back no more); the rest of such gaps is `cpu_bound`;
  `cpu_bound` the GPU's queue was empty: the op that ends the gap was launched after the
           GPU went idle (launch -> start delay ~0), so the GPU waited on the launching
           thread (Holistic Trace Analysis' queue-length / launch-delay reading);
  `other`  the rest (work was queued but did not start: cross-stream waits, unknown).

Steps are the steady-state ones (after the first); the time before the first steady step
is the start-up, kept apart. Pure data: no Textual, no printing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.analysis import interval_sets as S
from tuiperf.analysis.budget.comm_names import COMM_KERNEL
from tuiperf.analysis.budget.steps import Steps, find_steps
from tuiperf.analysis.intervals import Union, overlap_sum
from tuiperf.analysis.trace_ctx import GPU_TABLES, TraceCtx
from tuiperf.load.kineto.tables import UNTRACED_KEY
from tuiperf.model import arrays as A

BUSY_PARTS = ("compute", "comm", "copy")
IDLE_PARTS = ("data", "sync", "cpu_bound", "other")
PARTS = BUSY_PARTS + IDLE_PARTS
LABELS = {
    "compute": "GPU busy: compute kernels",
    "comm": "GPU busy: exposed communication",
    "copy": "GPU busy: memcpy/memset",
    "data": "GPU idle: waiting for data",
    "sync": "GPU idle: host synchronisation",
    "cpu_bound": "GPU idle: CPU-bound issue",
    "other": "GPU idle: other/unexplained",
}
SHORT = {
    "compute": "compute",
    "comm": "comm",
    "copy": "copy",
    "data": "data wait",
    "sync": "host sync",
    "cpu_bound": "CPU-bound",
    "other": "other",
}
METHODS = {
    "nvtx": "NVTX/record_function step ranges",
    "kineto": "Kineto ProfilerStep ranges",
    "wrapper": "DDP/FSDP forward ranges, one an iteration (no step ranges)",
    "pattern": "the repeating GPU kernel pattern (no step markers)",
}

DATA_PHASE = re.compile(r"^(data|load|batch|fetch|input)|dataloader", re.IGNORECASE)
SYNC_API = re.compile(
    r"^(cudaStreamSynchronize|cudaDeviceSynchronize|cudaEventSynchronize|cudaThreadSynchronize"
    r"|cuStreamSynchronize|cuCtxSynchronize|cuEventSynchronize|cudaMemcpy|cudaMemcpy2D"
    r"|cudaMemcpyFromSymbol|cuMemcpyDtoH|cuMemcpyDtoH_v2)(_v\d+)?$",
    re.IGNORECASE,
)
#: OS runtime calls where a loop thread waits on DataLoader workers (pipes, sockets,
#: semaphores of the pin-memory queue, munmap of a received batch's shared memory);
#: pthread_cond_wait is left out: the main thread
#: waits in it for the autograd engine during backward()
DATALOADER_WAIT = re.compile(
    r"^(poll|ppoll|select|pselect6?|epoll_p?wait|recv|recvmsg|recvfrom|read"
    r"|sem_timedwait|sem_clockwait|munmap)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Parts:
    """One window's wall time, split into PARTS (ns; they sum to wall_ns)."""

    wall_ns: int
    ns: dict[str, int]
    #: GPU time during which two or more ops ran at once (counted once in the busy parts)
    overlap_ns: int = 0

    @property
    def busy_ns(self) -> int:
        return sum(self.ns[p] for p in BUSY_PARTS)

    @property
    def idle_ns(self) -> int:
        return sum(self.ns[p] for p in IDLE_PARTS)

    def pct(self, part: str) -> float:
        if part == "busy":
            v = self.busy_ns
        elif part == "idle":
            v = self.idle_ns
        else:
            v = self.ns[part]
        return 100.0 * v / self.wall_ns if self.wall_ns else 0.0

    def largest(self) -> str:
        return max(PARTS, key=lambda p: self.ns[p])

    def to_json(self) -> dict[str, Any]:
        return {
            "wall_ns": self.wall_ns,
            "gpu_busy_ns": self.busy_ns,
            "gpu_busy_pct": round(self.pct("busy"), 3),
            "gpu_idle_ns": self.idle_ns,
            "gpu_idle_pct": round(self.pct("idle"), 3),
            "overlap_ns": self.overlap_ns,
            "parts": {p: {"ns": self.ns[p], "pct": round(self.pct(p), 3)} for p in PARTS},
        }


@dataclass(frozen=True)
class StepParts:
    """One steady step: the window its parts are measured over ([start_ns, end_ns), GPU
    side when the CPU runs ahead), and the CPU-side window its launches fall in."""

    label: str
    start_ns: int
    end_ns: int
    parts: Parts
    cpu_start_ns: int = 0
    cpu_end_ns: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            **self.parts.to_json(),
        }


@dataclass(frozen=True)
class DeviceBudget:
    device: int
    steps: list[StepParts]  # the steady-state steps
    steady: Parts  # their total
    median: dict[str, int]  # per part, the median over the steady steps
    startup: Parts | None  # before the first steady step
    #: the device's idle time by cause, over the whole report (for drawing): part ->
    #: (starts, ends) of disjoint intervals
    idle_causes: dict[str, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "steady": self.steady.to_json(),
            "steady_median_ns": self.median,
            "startup": None if self.startup is None else self.startup.to_json(),
            "per_step": [s.to_json() for s in self.steps],
        }


#: what a step's time is measured over
BASES = {
    "cpu_ranges": "the steps' CPU ranges, each to the next step's start",
    "gpu_span": "the GPU-side span of the work the steps launched (the CPU runs ahead)",
}


@dataclass(frozen=True)
class StepTime:
    """The windows the steady steps are measured over, and what a step costs."""

    starts: np.ndarray
    ends: np.ndarray
    basis: str  # a key of BASES
    #: each step's CPU side: its start to the next step's start (where its launches are)
    cpu_starts: np.ndarray
    cpu_ends: np.ndarray
    cpu_median_ns: int  # the median of the steps' CPU ranges
    #: median time from a GPU op's launch call's end to its start (the queue ahead of it)
    queue_ns: int
    #: median time from a step's CPU end to the end of the GPU work it launched
    lag_ns: int

    @property
    def step_ns(self) -> int:
        """The step time the user pays: the steady steps' span over their number."""
        n = len(self.starts)
        return int(self.ends[-1] - self.starts[0]) // n if n else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "step_ns": self.step_ns,
            "step_basis": self.basis,
            "step_basis_text": BASES[self.basis],
            "cpu_step_median_ns": self.cpu_median_ns,
            "queue_depth_ns": self.queue_ns,
            "gpu_lag_ns": self.lag_ns,
        }


@dataclass(frozen=True)
class Budget:
    method: str  # nvtx, kineto or pattern
    steady_labels: str
    startup_labels: str
    devices: list[DeviceBudget]  # the loop's main device first
    extra: dict[str, Any] = field(default_factory=dict)
    step: StepTime | None = field(default=None, compare=False, repr=False)
    confidence: str = "high"  # of the step boundaries: high, medium, low
    confidence_reason: str = ""
    #: a step timed with nothing recording (tuiperf.torch.profile_steps), ns
    untraced_step_ns: int | None = None

    @property
    def capture_adds_ns(self) -> int:
        """What recording adds to a step: the step here less the untraced one (0 if none)."""
        if self.untraced_step_ns is None:
            return 0
        return max(self.step_ns - self.untraced_step_ns, 0)

    @property
    def step_ns(self) -> int:
        """What one steady step costs (the span of the steady windows over their number)."""
        if self.step is not None:
            return self.step.step_ns
        return self.steady.wall_ns // max(self.n_steady, 1)

    @property
    def step_basis(self) -> str:
        return self.step.basis if self.step is not None else "cpu_ranges"

    @property
    def main(self) -> DeviceBudget:
        return self.devices[0]

    @property
    def steady(self) -> Parts:
        return self.main.steady

    @property
    def n_steady(self) -> int:
        return len(self.main.steps)

    @property
    def method_text(self) -> str:
        return METHODS.get(self.method, self.method)

    def to_json(self) -> dict[str, Any]:
        main = self.main.to_json()
        step = self.step.to_json() if self.step is not None else {}
        return {
            "method": self.method,
            "method_text": self.method_text,
            **step,
            "step_ns": self.step_ns,
            "step_basis": self.step_basis,
            "confidence": self.confidence,
            "confidence_reason": self.confidence_reason,
            "untraced_step_ns": self.untraced_step_ns,
            "capture_adds_ns": self.capture_adds_ns,
            "steady_steps": self.n_steady,
            "steady_labels": self.steady_labels,
            "startup_labels": self.startup_labels,
            "startup_note": self.extra.get("startup_note", ""),
            "device": self.main.device,
            "kinds": {"steady": main["steady"], "startup": main["startup"]},
            "steady_median_ns": main["steady_median_ns"],
            "devices": [d.to_json() for d in self.devices],
        }


# -- the computation ---------------------------------------------------------------------
#: tuiperf.torch's NVTX mark (Nsight Systems) for the untraced step time: its metadata key
UNTRACED_MARK = f"{UNTRACED_KEY}="


def untraced_step_ns(ctx: TraceCtx) -> int | None:
    """The step time tuiperf.torch measured with nothing recording: the trace's metadata
    (torch.profiler), else the NVTX mark it leaves as Nsight Systems' capture starts."""
    if ctx.trace.meta.untraced_step_ns:
        return ctx.trace.meta.untraced_step_ns
    nv = ctx.table("nvtx")
    if nv.num_rows == 0:
        return None
    texts = pc.unique(nv.column("text").combine_chunks().cast(pa.string())).to_pylist()
    for text in texts:
        if isinstance(text, str) and text.startswith(UNTRACED_MARK):
            value = text[len(UNTRACED_MARK) :]
            return int(value) if value.isdigit() and int(value) > 0 else None
    return None


def step_budget(ctx: TraceCtx, steps: Steps | None = None) -> Budget | None:
    """The budget of the report's steady-state steps (`steps`, found when not given); None
    without steps or GPU work."""
    steps = find_steps(ctx) if steps is None else steps
    ops = ctx.gpu_ops
    if not steps.found or len(ops) == 0:
        return None
    steady = steps.steady()
    devices = _devices(ctx, steps)
    win = step_windows(ctx, steps, steady, devices[0])
    a0 = int(win.starts[0])
    rng = ctx.trace.time_range()
    t0 = min(int(rng[0]) if rng else a0, a0)
    cpu = _CpuSide(ctx, steps)
    devs = [_device(ctx, cpu, steps, steady, d, t0, win) for d in devices]
    first = int(steady[0])
    budget = Budget(
        steps.source,
        steps.label_span(steady),
        steps.label_span(np.arange(first)) if first else "",
        devs,
        step=win,
        confidence=steps.confidence,
        confidence_reason=steps.reason,
        untraced_step_ns=untraced_step_ns(ctx),
    )
    note = _compile_note(ctx, int(steps.starts[first]), len(steady))
    if note:
        budget.extra["startup_note"] = note
    return budget


#: kernels torch.compile's Inductor generates (its autotuning benchmarks them too)
_TRITON = re.compile("^triton_")


def _compile_note(ctx: TraceCtx, first_steady: int, n_steady: int) -> str:
    """What makes the start-up long when torch.compile is in the capture: the Triton
    kernels it generated and benchmarked before the first steady step, against a steady
    step's launches. "" when no Triton kernel ran before it."""
    k = ctx.table("kernels")
    if k.num_rows == 0:
        return ""
    launch = ctx.launch_time("kernels")
    before = launch < first_steady
    triton = A.name_mask(k, "short_name", _TRITON)  # per name, not per kernel: no string copies
    n_triton = int((triton & before).sum())
    if n_triton == 0:
        return ""
    per_step = int((~before).sum()) / max(n_steady, 1)
    return (
        f"torch.compile in the capture: {int(before.sum()):,} kernels ran before the first "
        f"steady step ({n_triton:,} of them Triton kernels Inductor generated or autotuned), "
        f"against {per_step:,.0f} a steady step; those steps are compilation, not training."
    )


#: the CPU runs ahead of the GPU when the work a step launched ends, in the median step,
#: this share of the median CPU step (or more) after the step's CPU range: the CPU ranges
#: then understate what a step costs, and its GPU-side span is measured instead
AHEAD_SHARE = 0.25


def step_windows(ctx: TraceCtx, steps: Steps, steady: np.ndarray, dev: int) -> StepTime:
    """The windows the steady steps are measured over. Each step runs to the next one's
    start (time between step ranges is paid by the loop too); when the CPU runs ahead of
    the GPU, each step is instead the GPU-side span from the end of the work the step
    before launched to the end of the work it launched."""
    ops = ctx.gpu_ops
    on = ops.device == dev
    launch_end = _op_launch_end(ctx)[on]
    idx = np.where(launch_end != NO_LAUNCH, steps.index_of(_op_launch(ctx)[on]), -1)
    gpu_end = np.full(len(steps), -1, np.int64)
    ok = idx >= 0
    np.maximum.at(gpu_end, idx[ok], ops.end[on][ok])
    mine = np.isin(idx, steady)
    wait = ops.start[on][mine] - launch_end[mine]
    queue = int(np.median(np.maximum(wait, 0))) if len(wait) else 0
    cpu_end = steps.ends[steady]
    a = steps.starts[steady]
    med = int(np.median(cpu_end - a))
    has = gpu_end[steady] >= 0
    lag = int(np.median(gpu_end[steady][has] - cpu_end[has])) if has.any() else 0
    b = np.append(a[1:], cpu_end[-1])
    if lag <= AHEAD_SHARE * med:
        return StepTime(a, b, "cpu_ranges", a, b, med, queue, lag)
    ga, gb = _gpu_span(ops.start[on][mine], gpu_end, steady)
    return StepTime(ga, gb, "gpu_span", a, b, med, queue, lag)


def _gpu_span(
    starts: np.ndarray, gpu_end: np.ndarray, steady: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Windows between the ends of the GPU work each step launched (a running maximum:
    a step that launched nothing takes no time); the first starts where the step before
    it ended on the GPU, or at its own first GPU op."""
    run = np.maximum.accumulate(np.where(gpu_end >= 0, gpu_end, np.iinfo(np.int64).min))
    first = int(steady[0])
    own_start = int(starts.min()) if len(starts) else int(run[steady[-1]])
    prev = int(run[first - 1]) if first > 0 and run[first - 1] >= 0 else own_start
    ends = np.maximum(run[steady], prev)
    return np.append(prev, ends[:-1]), ends


def _devices(ctx: TraceCtx, steps: Steps) -> list[int]:
    """Devices with GPU work in the steady steps, the loop process's busiest first."""
    ops = ctx.gpu_ops
    inside = steps.index_of(ops.start) >= 0
    inside |= np.isin(steps.index_of(_op_launch(ctx)), steps.steady())
    devs, counts = np.unique(ops.device[inside], return_counts=True)
    if len(devs) == 0:
        devs, counts = np.unique(ops.device, return_counts=True)
    if steps.pid is not None:
        mine = inside & (ops.pid == steps.pid)
        counts = counts + len(ops) * np.array([(ops.device[mine] == d).sum() for d in devs])
    return [int(d) for d in devs[np.argsort(-counts, kind="stable")]]


def _op_launch(ctx: TraceCtx) -> np.ndarray:
    return np.concatenate([ctx.launch_time(t) for t in GPU_TABLES])


#: the launch end of a GPU op whose launch call is not in the report (launched before the
#: capture began, or by a process whose API was not traced): its queue is unknown, not
#: empty, and it belongs to no step by its launch
NO_LAUNCH = np.iinfo(np.int64).min


def _op_launch_end(ctx: TraceCtx) -> np.ndarray:
    """When each GPU op's launch call returned (NO_LAUNCH where the call is not known)."""
    ends = []
    for t in GPU_TABLES:
        dur = ctx.launch_duration(t)
        ends.append(np.where(dur >= 0, ctx.launch_time(t) + dur, NO_LAUNCH))
    return np.concatenate(ends)


def _op_kind(ctx: TraceCtx) -> np.ndarray:
    """0 compute kernel (or CUDA graph execution), 1 communication kernel, 2 memcpy/memset
    (in gpu_ops order)."""
    k = ctx.table("kernels")
    comm = A.name_mask(k, "name", COMM_KERNEL) if k.num_rows else np.zeros(0, bool)
    n_copy = ctx.table("memcpy").num_rows + ctx.table("memset").num_rows
    n_graph = ctx.table("graphs").num_rows
    return np.concatenate(
        [comm.astype(np.int8), np.full(n_copy, 2, np.int8), np.zeros(n_graph, np.int8)]
    )


class _CpuSide:
    """What the CPU was doing: data-phase windows and blocking sync calls (all devices)."""

    def __init__(self, ctx: TraceCtx, steps: Steps) -> None:
        self.data = _data_union(ctx, steps)
        self.sync = _sync_union(ctx)


def _data_union(ctx: TraceCtx, steps: Steps) -> Union:
    names = [n for n in steps.phases if DATA_PHASE.search(n)]
    if names:
        spans = np.array([s for n in names for s in steps.phases[n]], np.int64)
        return S.of_pairs(spans[:, 0], first_launch(ctx, spans[:, 0], spans[:, 1]))
    os_t = ctx.table("osrt")
    if os_t.num_rows == 0:
        return S.of_pairs(np.zeros(0, np.int64), np.zeros(0, np.int64))
    m = A.name_mask(os_t, "name", DATALOADER_WAIT)
    tid = A.ints(os_t, "tid")
    loop = [steps.tid] if steps.tid is not None else _launching_threads(ctx)
    m &= A.known(os_t, "tid") & np.isin(tid, loop)  # a wait on no known thread: no loop's
    if steps.tid is None and m.any():  # the launching thread that waits the most
        tids, inv = np.unique(tid[m], return_inverse=True)
        waited = np.bincount(inv, weights=A.ints(os_t, "duration")[m])
        m &= tid == tids[int(np.argmax(waited))]
    return S.of_pairs(A.ints(os_t, "start")[m], A.ints(os_t, "end")[m])


def first_launch(ctx: TraceCtx, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where each data phase [a, b) stops waiting: at its first GPU launch (the batch has
    arrived; a phase that makes its batch on the GPU launches at once, and its gaps after
    that are launch overhead, not data), else its end."""
    launch = np.sort(_op_launch(ctx))
    i = np.searchsorted(launch, a, "left")
    first = launch[np.minimum(i, len(launch) - 1)] if len(launch) else b
    return np.where((i < len(launch)) & (first < b), first, b)


def _launching_threads(ctx: TraceCtx) -> np.ndarray:
    """Threads that launch GPU work (a launch call on no known thread names none)."""
    api = ctx.table("api")
    tids = A.ints(api, "tid")
    rows = np.concatenate([ctx.api_rows(t) for t in GPU_TABLES])
    rows = rows[rows >= 0]
    return np.unique(tids[rows[A.known(api, "tid")[rows]]]) if len(tids) else np.zeros(0, np.int64)


def _sync_union(ctx: TraceCtx) -> Union:
    api = ctx.table("api")
    if api.num_rows == 0:
        return S.of_pairs(np.zeros(0, np.int64), np.zeros(0, np.int64))
    blocking = A.name_mask(api, "name", SYNC_API)
    mc = ctx.table("memcpy")
    if mc.num_rows:  # device-to-host copies, and copies from/to pageable memory, block
        slow = (A.strings(mc, "copy_kind") == "Device-to-Host") | (
            A.strings(mc, "src_kind") == "Pageable"
        )
        rows = ctx.api_rows("memcpy")[slow]
        blocking[rows[rows >= 0]] = True
    return S.of_pairs(A.ints(api, "start")[blocking], A.ints(api, "end")[blocking])


def _device(
    ctx: TraceCtx, cpu: _CpuSide, steps: Steps, steady: np.ndarray, dev: int, t0: int, win: StepTime
) -> DeviceBudget:
    """The budget of one device over the steady windows, and over the start-up [t0, first)."""
    ops = ctx.gpu_ops
    on = ops.device == dev
    start, end, kind = ops.start[on], ops.end[on], _op_kind(ctx)[on]
    a, b = win.starts, win.ends
    hi = max(int(b.max()), int(end.max())) + 1
    lo = min(t0, int(start.min())) - 1
    busy = _busy_sets(start, end, kind)
    idle = S.complement(busy[-1], lo, hi)
    windows = np.append(a, t0), np.append(b, a[0])  # steady steps, then start-up
    causes = _idle_causes(idle, start, _op_launch_end(ctx)[on], cpu, windows)
    parts = _measure(busy, causes, start, end, *windows)
    step_parts = [
        StepParts(
            steps.labels[int(i)],
            int(a[k]),
            int(b[k]),
            parts[k],
            int(win.cpu_starts[k]),
            int(win.cpu_ends[k]),
        )
        for k, i in enumerate(steady)
    ]
    startup = parts[-1] if parts[-1].wall_ns > 0 else None
    total = _sum_parts(parts[:-1])
    median = {p: int(np.median([s.parts.ns[p] for s in step_parts])) for p in PARTS}
    drawn = {p: (u.starts, u.ends) for p, u in causes.items()}
    return DeviceBudget(dev, step_parts, total, median, startup, drawn)


def _busy_sets(start: np.ndarray, end: np.ndarray, kind: np.ndarray) -> list[Union]:
    """Unions of compute, compute+comm, and all ops: the busy parts by priority."""
    sets: list[Union] = []
    for k in (0, 1, 2):
        if sets and not (kind == k).any():  # nothing of kind k: the same union again
            sets.append(sets[-1])
        else:
            sets.append(Union.of(start[kind <= k], end[kind <= k]))
    return sets


def _idle_causes(
    idle: Union,
    op_start: np.ndarray,
    op_launch_end: np.ndarray,
    cpu: _CpuSide,
    windows: tuple[np.ndarray, np.ndarray],
) -> dict[str, Union]:
    """Idle time by cause, as disjoint unions (data, sync, cpu_bound, other). An op with
    no launch call in the report has NO_LAUNCH as its launch end: a gap it closes never
    reads as an empty queue."""
    g0, g1 = idle.starts, idle.ends
    order = np.argsort(op_start, kind="stable")
    nxt = np.searchsorted(op_start[order], g1, "left")
    has = nxt < len(order)
    closing_launch = np.where(has, op_launch_end[order[np.minimum(nxt, len(order) - 1)]], -1)
    drained_in_sync = S.member(cpu.sync, g0)
    queue_empty = has & (closing_launch >= g0) & ~drained_in_sync
    refill, refill_ok = _sync_refill(idle, drained_in_sync, cpu.sync, windows)
    starved = S.of_pairs(g0[queue_empty], g1[queue_empty])
    a, b, (i, d, s, r, ok, cb) = S.segments([idle, cpu.data, cpu.sync, refill, refill_ok, starved])
    i_nd = i & ~d
    sync = s | (r & ok)
    cb = cb | (r & ~ok)
    return {
        "data": S.pieces(a, b, i & d),
        "sync": S.pieces(a, b, i_nd & sync),
        "cpu_bound": S.pieces(a, b, i_nd & ~sync & cb),
        "other": S.pieces(a, b, i_nd & ~sync & ~cb),
    }


def _sync_refill(
    idle: Union, drained: np.ndarray, sync: Union, windows: tuple[np.ndarray, np.ndarray]
) -> tuple[Union, Union]:
    """The refill gaps (from the end of the sync call the GPU ran dry in to the next GPU
    work), and the windows (steps) where they count as sync: those whose sync time, refill
    included, fits in the time the CPU spent blocked in sync calls there. Removing a sync
    gives back no more than it blocked the CPU; beyond that the CPU was busy with other
    work, so the gap is cpu_bound."""
    g0, g1 = idle.starts[drained], idle.ends[drained]
    k = np.searchsorted(sync.starts, g0, "right") - 1
    mid = np.minimum(g1, sync.ends[k]) if len(k) else g1
    refill = S.of_pairs(mid, g1)
    a, b = windows
    held = S.of_pairs(g0, mid).busy(a, b)
    fits = held + refill.busy(a, b) <= sync.busy(a, b)
    return refill, S.of_pairs(a[fits], b[fits])


def _measure(
    busy: list[Union],
    causes: dict[str, Union],
    start: np.ndarray,
    end: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
) -> list[Parts]:
    wall = b - a
    c, cc, al = (u.busy(a, b) for u in busy)
    ns = {"compute": c, "comm": cc - c, "copy": al - cc}
    for p in ("data", "sync", "cpu_bound"):
        ns[p] = causes[p].busy(a, b)
    ns["other"] = wall - al - ns["data"] - ns["sync"] - ns["cpu_bound"]
    overlap = overlap_sum(start, end, a, b) - al
    return [
        Parts(int(wall[k]), {p: int(ns[p][k]) for p in PARTS}, int(overlap[k]))
        for k in range(len(a))
    ]


def _sum_parts(parts: list[Parts]) -> Parts:
    return Parts(
        sum(p.wall_ns for p in parts),
        {k: sum(p.ns[k] for p in parts) for k in PARTS},
        sum(p.overlap_ns for p in parts),
    )
