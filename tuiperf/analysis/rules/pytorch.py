"""PyTorch training-loop rules: evidence in the trace -> the PyTorch change that fixes it.

Every rule uses the step structure (NVTX `step N`, Kineto `ProfilerStep#N`, or a repeated
kernel pattern) when there is one, and says so in its scope; the first step is warm-up
(cuDNN autotuning, allocator growth) and is left out of per-step statistics.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tuiperf.analysis import fixes
from tuiperf.analysis.budget.context import GPU_TABLES, Ctx
from tuiperf.analysis.budget.step_budget import Budget, first_launch
from tuiperf.analysis.budget.steps import Steps
from tuiperf.analysis.findings import (
    SCOPE_KERNEL,
    SCOPE_RANGE,
    SCOPE_REPORT,
    SOURCE_TUIPERF,
    Evidence,
    Finding,
    Fix,
    Scope,
    Severity,
    Skip,
)
from tuiperf.analysis.kernel_levers import fix_for_kernel, kernel_family, kernel_kind
from tuiperf.analysis.rules import budget as budget_rules
from tuiperf.analysis.rules import comm as comm_rules
from tuiperf.analysis.rules import gloo as gloo_rules
from tuiperf.analysis.rules import kernels as kernel_rules
from tuiperf.analysis.rules import optimizer_phase, sites
from tuiperf.analysis.rules.link_metrics import pcie_rx_during, pcie_text
from tuiperf.analysis.rules.metrics_evidence import (
    IDLE_TENSOR_SHARE,
    steady_metrics,
    tensor_metrics,
    tensor_text,
)
from tuiperf.analysis.rules.run_facts import FP32_SIMT, LOW_PRECISION, run_facts
from tuiperf.model import arrays as A
from tuiperf.model import fmt

# -- thresholds (each says where it comes from) ------------------------------------------
#: "every step": a pattern must show in at least this share of the steady-state steps
EVERY_STEP_SHARE = 0.8
#: GPU idle while the CPU prepares the batch, as a share of step time, worth a finding;
#: 10% is where NVIDIA's and PyTorch's tuning guides start calling input pipelines a bottleneck
DATA_IDLE_SHARE = 0.10
#: … and an error from this share on (a literal: 3 * 0.10 is 0.30000000000000004)
DATA_IDLE_ERROR = 0.30
#: kernel-name rules fire when the kernels take at least this share of GPU kernel time
MIN_KERNEL_SHARE = 0.01
#: … and are a warning (not info) from this share on
WARN_KERNEL_SHARE = 0.05
#: TF32/bf16 tensor cores run GEMMs several times faster than FP32 CUDA cores (NVIDIA
#: Ampere/Hopper whitepapers: 8x+ peak); we claim half the time back, conservatively
TENSOR_CORE_SAVING = 0.5
#: per-parameter optimizers launch several kernels per tensor; foreach/fused ones a handful
#: per step (torch.optim docs): this many kernels in one optimizer step is per-parameter
MANY_OPTIMIZER_KERNELS = 40
#: "tiny": a kernel shorter than this does too little work to hide its launch (2 launches)
TINY_KERNEL_NS = 10_000
#: steady-state steps should not allocate: one cudaMalloc/cudaFree per step on average is
#: churn (the caching allocator reuses blocks after the first iterations)
ALLOC_PER_STEP = 1.0

_SYNC_API = re.compile(
    r"^(cudaStreamSynchronize|cudaDeviceSynchronize|cudaEventSynchronize|cuStreamSynchronize"
    r"|cuCtxSynchronize|cuEventSynchronize)",
    re.IGNORECASE,
)
_DATA_PHASE = re.compile(r"^(data|load|batch|fetch|input)|dataloader", re.IGNORECASE)
_OPTIM = re.compile(r"optim", re.IGNORECASE)
_ZERO_GRAD = re.compile(r"zero_grad", re.IGNORECASE)
_LAYOUT = re.compile(r"nchwToNhwc|nhwcToNchw|nchw2nhwc|nhwc2nchw", re.IGNORECASE)
_GEMM = re.compile(r"gemm|conv|fprop|dgrad|wgrad", re.IGNORECASE)
_ALLOC = re.compile(
    r"^(cudaMalloc|cudaFree|cuMemAlloc|cuMemFree|cudaMallocHost|cudaFreeHost"
    r"|cudaHostAlloc|cuMemHostAlloc|cuMemFreeHost)(_v\d+)?$",
    re.IGNORECASE,
)

Rule = Callable[[Ctx], list[Finding]]


# -- shared helpers ----------------------------------------------------------------------
def _finding(
    rule: str,
    sev: Severity,
    message: str,
    scope: Scope,
    ev: Evidence,
    saving: float | None,
    metrics: dict[str, object],
    count: int | None = None,
    kernels: tuple[str, ...] = (),
) -> Finding:
    return Finding(
        rule=rule,
        title=fixes.title_for(rule),
        severity=sev,
        message=message,
        fix=fixes.fix_for(rule),
        scope=scope,
        source=SOURCE_TUIPERF,
        count=len(ev) if count is None else count,
        evidence=ev,
        est_saving_ns=None if saving is None else int(saving),
        kernels=kernels,
        metrics=metrics,
    )


def _steps_scope(steps: Steps, idx: np.ndarray) -> Scope:
    if len(idx) == 0:
        return Scope(SCOPE_REPORT)
    what = {
        "nvtx": "NVTX range",
        "kineto": "ProfilerStep range",
        "wrapper": "DDP/FSDP forward",
    }.get(steps.source, "repeated pattern")
    return Scope(
        SCOPE_RANGE,
        f"{steps.label_span(idx)} ({fmt.plural(len(idx), 'step')}, {what})",
        int(steps.starts[idx[0]]),
        int(steps.ends[idx[-1]]),
    )


def _need_steps(ctx: Ctx) -> Steps:
    if not ctx.steps.found:
        raise Skip("no training steps found (no step ranges, no repeated kernel pattern)")
    return ctx.steps


def _steady_mask(steps: Steps, idx: np.ndarray) -> np.ndarray:
    """Which step indices (-1 = outside) are steady-state steps."""
    return np.isin(idx, steps.steady())


def _rows_evidence(
    ctx: Ctx,
    table: str,
    rows: np.ndarray,
    extra_cols: tuple[str, ...] = (),
    headers: dict[str, str] | None = None,
) -> Evidence:
    t = ctx.table(table)
    extra: dict[str, object] = {}
    for c in extra_cols:
        if c not in ("name", "copy_kind", "src_kind", "dst_kind"):
            extra[c] = A.ints(t, c, -1)[rows]
        elif _dense_dictionary(t.column(c)):  # the rows' codes, not a copy of each string
            extra[c] = t.column(c).take(A.from_numpy(np.asarray(rows, np.int64)))
        else:
            extra[c] = A.strings(t, c)[rows]
    return Evidence.build(
        table, rows, A.ints(t, "start")[rows], A.ints(t, "duration")[rows], extra, headers
    )


def _dense_dictionary(col: pa.ChunkedArray) -> bool:
    """A dictionary column without nulls (in its rows or its dictionaries): taking its rows
    gives the strings `A.strings` would ('' for null), kept as codes into the dictionary."""
    return (
        pa.types.is_dictionary(col.type)
        and col.null_count == 0
        and all(ch.dictionary.null_count == 0 for ch in col.chunks)
    )


# -- pageable copies ---------------------------------------------------------------------
def pageable_h2d_in_steps(ctx: Ctx) -> list[Finding]:
    """Pageable host-to-device copies inside training steps (not the one-off start-up ones)."""
    t = ctx.table("memcpy")
    if t.num_rows == 0:
        raise Skip("no memcpy events in this report")
    h2d = (A.strings(t, "copy_kind") == "Host-to-Device") & (A.strings(t, "src_kind") == "Pageable")
    steps = _need_steps(ctx)
    launch = ctx.launch_time("memcpy")
    idx = steps.index_of(launch)
    # the steady steps, as every step-counting finding: the start-up ones are model.to() too
    steady = steps.steady()
    inside = np.flatnonzero(h2d & _steady_mask(steps, idx))
    if len(inside) == 0:
        return []
    before = int((h2d & (launch < steps.starts[steady[0]])).sum())
    with_copies = np.unique(idx[inside])
    per_step = len(inside) / len(with_copies)
    dur = A.ints(t, "duration")[inside]
    step_bytes = int(A.ints(t, "bytes")[inside].sum() / len(with_copies))
    msg = (
        f"{len(inside):,} host-to-device copies from pageable memory inside {len(with_copies)} "
        f"of {len(steady)} steady-state steps ({per_step:.3g} per step, {fmt.size(step_bytes)} "
        f"a step, {fmt.duration(int(dur.sum()))} in all): each blocks the CPU and cannot "
        "overlap compute."
    )
    if before:
        msg += (
            f" {before:,} more pageable copies before the first steady step are start-up "
            "(model.to()) and harmless."
        )
    ev = _rows_evidence(
        ctx, "memcpy", inside, ("bytes", "src_kind"), {"bytes": "Bytes", "src_kind": "Src Kind"}
    )
    step_time = int((steps.ends[with_copies] - steps.starts[with_copies]).sum())
    sev = Severity.WARNING if dur.sum() >= MIN_KERNEL_SHARE * step_time else Severity.INFO
    model = _pinned_model(ctx, inside, _handover_ns(ctx, steps, with_copies, inside))
    link = pcie_rx_during(ctx, inside)  # nsys GPU metrics: how full the link was
    found = _finding(
        "pageable_h2d_in_steps",
        sev,
        msg + model.text + pcie_text(link),
        _steps_scope(steps, with_copies),
        ev,
        model.saving_ns,
        {
            "copies_in_steps": len(inside),
            "copies_per_step": round(per_step, 2),
            "start_up_copies": before,
            "bytes_per_step": step_bytes,
            "cpu_blocked_ns": model.blocked_ns,
            "pinned_copy_ns": model.pinned_ns,
            **({"pcie_rx_mean_pct": round(link[1], 2)} if link else {}),
        },
    )
    found.budget_part, found.saving_model, found.modelled = model.part, model.basis, True
    found.beyond_part_ns = model.beyond_part_ns
    found.title = steps_title("Pageable host-to-device copies", len(with_copies), len(steady))
    return [sites.name_sites(found, ctx, "memcpy", inside, "Copied from")]


#: pinned host memory copies this much faster than pageable when the report has no pinned
#: copy to measure (the driver stages pageable copies through a pinned buffer: CUDA C++
#: best practices guide; about 2x on PCIe hosts)
PINNED_SPEEDUP = 2.0
#: copies this large or more tell the pinned rate (small ones are latency)
RATE_MIN_BYTES = 1 << 20


@dataclass(frozen=True)
class PinnedModel:
    """What pinning + non_blocking saves on the flagged copies (ns, over all of them)."""

    part: str  # the budget part it comes from: "sync" (CPU blocked) or "copy" (GPU copying)
    saving_ns: int
    blocked_ns: int  # CPU time the copy calls took
    pinned_ns: int  # the same bytes at the pinned rate
    basis: str
    text: str
    beyond_part_ns: int = 0  # of the saving, the hand-over time outside the budget part


#: OS calls of the loop thread that hand a DataLoader worker's batch over: receiving its
#: shared-memory file descriptors, unmapping the batch's memory when it is freed
HANDOVER = re.compile(r"^(recvmsg|munmap)$")
RECEIVE = re.compile(r"^recvmsg$")


def _handover_ns(ctx: Ctx, steps: Steps, with_copies: np.ndarray, rows: np.ndarray) -> int:
    """Time the copying thread spends in HANDOVER calls inside the steps with copies, when
    those steps receive batches from worker processes (recvmsg there): with
    DataLoader(pin_memory=True) the pin-memory thread receives and frees them instead."""
    os_t = ctx.table("osrt")
    api_rows = ctx.api_rows("memcpy")[rows]
    if os_t.num_rows == 0 or not (api_rows >= 0).any():
        return 0
    tids = np.unique(A.ints(ctx.table("api"), "tid", -1)[api_rows[api_rows >= 0]])
    start = A.ints(os_t, "start")
    idx = steps.index_of(start)
    m = A.name_mask(os_t, "name", HANDOVER) & np.isin(A.ints(os_t, "tid", -1), tids)
    m &= np.isin(idx, with_copies)
    if not (m & A.name_mask(os_t, "name", RECEIVE)).any():  # no batch from a worker process
        return 0
    return int(A.ints(os_t, "duration")[m].sum())


def _pinned_model(ctx: Ctx, rows: np.ndarray, handover_ns: int = 0) -> PinnedModel:
    """Pinned memory + non_blocking=True: the CPU no longer waits in the copy call (in a
    loop where the GPU idles meanwhile, that time is the saving, with the batch hand-over
    the pin-memory thread takes on), and the GPU copies at the pinned rate (in a loop the
    copies fill, that is the saving)."""
    t = ctx.table("memcpy")
    size, dur = A.ints(t, "bytes"), A.ints(t, "duration")
    call = ctx.launch_duration("memcpy")[rows]
    blocked = int(np.where(call >= 0, call, dur[rows]).sum())
    rate = _pinned_rate(ctx) or PINNED_SPEEDUP * size[rows].sum() / max(int(dur[rows].sum()), 1)
    pinned = int(size[rows].sum() / rate) if rate > 0 else 0
    b = ctx.budget
    part = "copy" if b is not None and b.steady.ns["copy"] > b.steady.ns["sync"] else "sync"
    if b is not None and b.steady.busy_ns > b.steady.idle_ns:  # the GPU is the critical path
        saving = max(int(dur[rows].sum()) - pinned, 0)
        basis = "the GPU copy time less the same bytes at the pinned rate"
    elif b is not None:  # the loop waits on the CPU: the calls stop blocking it
        saving = blocked + handover_ns
        basis = "the CPU time the copy calls block (a non_blocking copy overlaps the CPU's work)"
        if handover_ns:
            basis += (
                f", plus {fmt.duration(handover_ns)} the loop thread spends receiving and "
                "unmapping the workers' batches (recvmsg, munmap), which the pin-memory "
                "thread takes over"
            )
    else:
        saving = max(blocked - pinned, 0)
        basis = "the CPU time the copy calls block, less the pinned copy time"
    text = (
        f" The copy calls block the CPU {fmt.duration(blocked)}; from pinned memory the same "
        f"bytes take ~{fmt.duration(pinned)} on the GPU ({rate:.1f} GB/s) and the call returns "
        f"at once. Saving modelled as {basis}."
    )
    beyond = handover_ns if saving > blocked else 0
    return PinnedModel(part, saving, blocked, pinned, basis, text, beyond)


def _pinned_rate(ctx: Ctx) -> float:
    """Bytes per ns (GB/s) of the report's own pinned host-to-device copies, 0 if none."""
    t = ctx.table("memcpy")
    ok = (A.strings(t, "copy_kind") == "Host-to-Device") & (A.strings(t, "src_kind") == "Pinned")
    ok &= A.ints(t, "bytes") >= RATE_MIN_BYTES
    d = int(A.ints(t, "duration")[ok].sum())
    return float(A.ints(t, "bytes")[ok].sum()) / d if d > 0 else 0.0


def steps_title(what: str, hit: int, steps: int) -> str:
    """`… in every training step` only when it is every step; else `… in 3 of 30 …`."""
    if hit >= steps:
        return f"{what} in every training step"
    return f"{what} in {hit} of {steps} training steps"


# -- host syncs --------------------------------------------------------------------------
def host_sync_per_step(ctx: Ctx) -> list[Finding]:
    """A blocking sync (loss.item(), .cpu(), print) in (nearly) every steady-state step."""
    steps = _need_steps(ctx)
    api = ctx.table("api")
    rows = np.flatnonzero(A.name_mask(api, "name", _SYNC_API))
    idx = steps.index_of(A.ints(api, "start")[rows])
    steady = steps.steady()
    keep = _steady_mask(steps, idx)
    rows, idx = rows[keep], idx[keep]
    # a sync right after a host-to-device copy call is the copy's own (.to(device) from
    # pageable memory without non_blocking=True): the pageable-copy finding's, not a read
    copy_sync = _after_h2d_copy(ctx, rows)
    n_copy = int(copy_sync.sum())
    rows, idx = rows[~copy_sync], idx[~copy_sync]
    hit_steps = np.unique(idx)
    if len(steady) < 2 or len(hit_steps) < EVERY_STEP_SHARE * len(steady):
        return []
    blocked = int(A.ints(api, "duration")[rows].sum())
    d2h = _d2h_per_step(ctx, steps)
    msg = (
        f"{len(hit_steps)} of {len(steady)} steady-state steps block the CPU on the GPU "
        f"({len(rows) / len(hit_steps):.3g} sync call(s) a step, {fmt.duration(blocked)} "
        "blocked in all), so the CPU cannot queue the next step's work ahead."
    )
    if n_copy:
        msg += (
            f" {n_copy:,} more sync call(s) follow host-to-device copies (.to(device) "
            "without non_blocking=True): the pageable-copy finding covers those."
        )
    if d2h:
        msg += f" With {d2h:.3g} device-to-host copy(ies) a step: a value read back (loss.item())."
    ev = _rows_evidence(ctx, "api", rows, ("name",), {"name": "API Name"})
    found = _finding(
        "host_sync_per_step",
        Severity.WARNING,
        msg,
        _steps_scope(steps, steady),
        ev,
        blocked,
        {
            "steps_with_sync": len(hit_steps),
            "steady_steps": len(steady),
            "sync_calls": len(rows),
            "blocked_ns": blocked,
            "d2h_copies_per_step": d2h,
        },
    )
    found.title = steps_title("A host sync", len(hit_steps), len(steady)).replace(
        "training steps", "steady-state steps"
    )
    return [sites.name_sites(found, ctx, "api", rows, "The syncs are called from")]


def _after_h2d_copy(ctx: Ctx, rows: np.ndarray) -> np.ndarray:
    """For each API row in `rows`: whether the last GPU-launching call before it on its
    thread launched a host-to-device copy (calls that launch nothing do not count)."""
    api = ctx.table("api")
    mc = ctx.table("memcpy")
    if mc.num_rows == 0 or len(rows) == 0:
        return np.zeros(len(rows), bool)
    launching = np.concatenate([ctx.api_rows(t) for t in GPU_TABLES])
    launching = np.unique(launching[launching >= 0])
    h2d_rows = ctx.api_rows("memcpy")[A.strings(mc, "copy_kind") == "Host-to-Device"]
    h2d = np.isin(launching, h2d_rows)
    tid, start = A.ints(api, "tid", -1), A.ints(api, "start")
    out = np.zeros(len(rows), bool)
    for t in np.unique(tid[rows]):
        mine = tid[launching] == t
        lr = launching[mine][np.argsort(start[launching[mine]], kind="stable")]
        sel = np.flatnonzero(tid[rows] == t)
        k = np.searchsorted(start[lr], start[rows[sel]], "left") - 1
        ok = k >= 0
        out[sel[ok]] = np.isin(lr[k[ok]], launching[h2d])
    return out


def _d2h_per_step(ctx: Ctx, steps: Steps) -> float:
    t = ctx.table("memcpy")
    if t.num_rows == 0:
        return 0.0
    d2h = A.strings(t, "copy_kind") == "Device-to-Host"
    idx = steps.index_of(ctx.launch_time("memcpy"))
    n = int((d2h & _steady_mask(steps, idx)).sum())
    return round(n / max(len(steps.steady()), 1), 2)


# -- data loading ------------------------------------------------------------------------
def _data_windows(ctx: Ctx, steps: Steps) -> tuple[np.ndarray, np.ndarray, str]:
    """Where the loop waits for its batch: NVTX data-loading ranges, else each step's
    stretch before its first GPU launch."""
    steady = steps.steady()
    names = [n for n in steps.phases if _DATA_PHASE.search(n)]
    if names:
        spans = np.array([s for n in names for s in steps.phases[n]], np.int64)
        spans = spans[_steady_mask(steps, steps.index_of(spans[:, 0]))]
        b = first_launch(ctx, spans[:, 0], spans[:, 1])  # then the batch is there
        return spans[:, 0], b, f"NVTX ranges {', '.join(names)}, up to their first GPU launch"
    launches = np.concatenate([ctx.launch_time(t) for t in GPU_TABLES])
    launches.sort()
    a = steps.starts[steady]
    pos = np.searchsorted(launches, a, "left")
    first = np.where(pos < len(launches), launches[np.minimum(pos, len(launches) - 1)], a)
    b = np.minimum(np.maximum(first, a), steps.ends[steady])
    # a loop that fetches its batch outside the step range (`for x in loader:` before the
    # range opens) waits between the steps: from the step before's end
    prev_end = np.where(steady > 0, steps.ends[np.maximum(steady - 1, 0)], a)
    return (
        np.minimum(prev_end, a),
        b,
        "each step's start (from the step before's end), before its first GPU launch",
    )


def dataloader_starvation(ctx: Ctx) -> list[Finding]:
    """The GPU sits idle while the CPU fetches and prepares the next batch."""
    steps = _need_steps(ctx)
    if len(ctx.gpu_ops) == 0:
        raise Skip("no GPU operations in this report")
    a, b, where = _data_windows(ctx, steps)
    if len(a) == 0:
        return []
    idle = ctx.gpu_busy.idle(a, b)
    steady = steps.steady()
    b_ = ctx.budget
    waits = _budget_data(b_)
    if waits is not None and int(waits[2].sum()) > int(idle.sum()):
        # the loop thread's DataLoader waits (OS runtime) explain more: steps found from
        # the kernel pattern do not start where the loop fetches its batch
        a, b, idle = waits
        where = "the training thread's DataLoader waits (OS runtime calls) in the GPU's idle time"
    step_time = (
        b_.steady.wall_ns if b_ is not None else int((steps.ends - steps.starts)[steady].sum())
    )
    share = idle.sum() / step_time if step_time else 0.0
    if share < DATA_IDLE_SHARE:
        return []
    msg = (
        f"The GPU is idle {fmt.duration(int(idle.sum()))} ({share:.0%} of steady-state step "
        f"time) while the loop waits for its next batch (measured over {where})."
    )
    wait = _osrt_wait(ctx, steps, a, b)
    if wait:
        msg += f" Of its OS runtime calls there, the training thread spends most time in {wait}."
    period = _stall_period(steps, steady, b, idle)
    if period:
        msg += (
            f" Most of the wait comes every {period[0]} steps ({period[1]:.0%} of it, in "
            f"{period[2]} stalls): an epoch boundary, where the DataLoader starts its "
            "workers again; persistent_workers=True keeps them (and a larger prefetch_factor "
            "covers the refill)."
        )
    ev = Evidence.build("", None, a, b - a, {"gpu_idle_ns": idle}, {"gpu_idle_ns": "GPU idle (ns)"})
    sev = Severity.ERROR if share >= DATA_IDLE_ERROR else Severity.WARNING
    return [
        _finding(
            "dataloader_starvation",
            sev,
            msg,
            _steps_scope(steps, steady),
            ev,
            idle.sum(),
            {"gpu_idle_ns": int(idle.sum()), "idle_share": round(share, 3), "windows": where},
        )
    ]


def _budget_data(b: Budget | None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The step budget's data-wait intervals inside its steady windows: (starts, ends,
    durations); None without a budget."""
    if b is None or "data" not in b.main.idle_causes:
        return None
    s, e = b.main.idle_causes["data"]
    lo, hi = b.main.steps[0].start_ns, b.main.steps[-1].end_ns
    s, e = np.maximum(s, lo), np.minimum(e, hi)
    ok = e > s
    return s[ok], e[ok], (e - s)[ok]


#: a step's data wait is a stall when it is this many times the median step's
STALL_FACTOR = 4.0
#: … and stalls at a fixed period that hold at least this share of the wait are periodic
PERIODIC_SHARE = 0.5


def _stall_period(
    steps: Steps, steady: np.ndarray, ends: np.ndarray, idle: np.ndarray
) -> tuple[int, float, int] | None:
    """(period in steps, share of the wait, stalls) when most of the data wait comes in
    stalls at a fixed step interval (two or more); else None."""
    idx = steps.index_of(np.maximum(ends - 1, 0))
    ok = idx >= 0
    per = np.bincount(idx[ok], weights=idle[ok], minlength=len(steps))[steady]
    total = float(per.sum())
    if total <= 0 or len(per) < 4:
        return None
    big = np.flatnonzero(per > STALL_FACTOR * max(float(np.median(per)), 1.0))
    if len(big) < 2 or per[big].sum() < PERIODIC_SHARE * total:
        return None
    gaps = np.diff(big)
    if gaps.min() < 2 or gaps.max() - gaps.min() > 1:
        return None
    return int(np.median(gaps)), float(per[big].sum() / total), len(big)


def _osrt_wait(ctx: Ctx, steps: Steps, a: np.ndarray, b: np.ndarray) -> str:
    """The OS runtime call the training thread spends most time in inside the windows."""
    os_t = ctx.table("osrt")
    if os_t.num_rows == 0 or steps.tid is None:
        return ""
    sel = A.ints(os_t, "tid", -1) == steps.tid
    s, d = A.ints(os_t, "start")[sel], A.ints(os_t, "duration")[sel]
    names = A.strings(os_t, "name")[sel]
    i = np.searchsorted(a, s, "right") - 1
    inside = (i >= 0) & (s < b[np.maximum(i, 0)])
    if not inside.any():
        return ""
    uniq, inv = np.unique(names[inside], return_inverse=True)
    tot = np.bincount(inv, weights=d[inside])
    return str(uniq[int(np.argmax(tot))])


# -- kernel-name rules -------------------------------------------------------------------
def _kernel_name_rule(
    ctx: Ctx, rule: str, mask: np.ndarray, what: str, saving_share: float
) -> list[Finding]:
    k = ctx.table("kernels")
    rows = np.flatnonzero(mask)
    total = int(A.ints(k, "duration")[rows].sum())
    share = total / ctx.compute_time_ns if ctx.compute_time_ns else 0.0
    if len(rows) == 0 or share < MIN_KERNEL_SHARE:
        return []
    names = A.strings(k, "short_name")[rows]
    uniq, inv, cnt = np.unique(names, return_inverse=True, return_counts=True)
    time = np.bincount(inv, weights=A.ints(k, "duration")[rows])
    top = ", ".join(
        f"{n} ×{c:,}" for n, c in sorted(zip(uniq, cnt, strict=True), key=lambda x: -x[1])[:3]
    )
    by_time = tuple(str(uniq[i]) for i in np.argsort(-time, kind="stable"))
    graphs = " and CUDA graph executions" if ctx.table("graphs").num_rows else ""
    msg = (
        f"{len(rows):,} {what} take {fmt.duration(total)}, {share:.1%} of GPU kernel"
        f"{graphs} time ({top})."
    )
    sev = Severity.WARNING if share >= WARN_KERNEL_SHARE else Severity.INFO
    ev = _rows_evidence(ctx, "kernels", rows, ("name",), {"name": "Kernel"})
    return [
        _finding(
            rule,
            sev,
            msg,
            Scope(SCOPE_KERNEL, ", ".join(by_time[:5])),
            ev,
            total * saving_share,
            {"kernels": len(rows), "time_ns": total, "share_of_kernel_time": round(share, 4)},
            kernels=by_time,
        )
    ]


def layout_conversion(ctx: Ctx) -> list[Finding]:
    """NCHW<->NHWC transposes around cuDNN convolutions: channels_last removes them."""
    k = ctx.table("kernels")
    if k.num_rows == 0:
        raise Skip("no kernels in this report")
    mask = A.name_mask(k, "name", _LAYOUT)
    found = _kernel_name_rule(ctx, "layout_conversion", mask, "layout conversion kernels", 1.0)
    return [sites.name_modules(f, ctx, "kernels", np.flatnonzero(mask)) for f in found]


def fp32_no_tensor_cores(ctx: Ctx) -> list[Finding]:
    """GEMM/conv kernels that run FP32 on CUDA cores (no TF32/bf16/fp16 tensor cores)."""
    k = ctx.table("kernels")
    if k.num_rows == 0:
        raise Skip("no kernels in this report")
    mask = (
        A.name_mask(k, "name", _GEMM)
        & A.name_mask(k, "name", FP32_SIMT)
        & ~A.name_mask(k, "name", LOW_PRECISION)
    )
    found = _kernel_name_rule(
        ctx,
        "fp32_no_tensor_cores",
        mask,
        "FP32 GEMM/convolution kernels without tensor cores",
        TENSOR_CORE_SAVING,
    )
    facts = run_facts(ctx)
    if found and facts.low_precision:
        found[0].fix = _left_in_fp32_fix(facts.low_precision_ns / facts.gemm_ns)
    if found:  # nsys GPU metrics: did the tensor cores work while the GPU was busy?
        m = steady_metrics(ctx)
        found[0].message += tensor_text(
            m,
            "the tensor cores sit nearly idle while the GPU works (under "
            f"{IDLE_TENSOR_SHARE:.0%} of its busy time), as these kernels' "
            "names say: the matrix products run on the CUDA cores.",
            f"the tensor cores work {m.tensor_of_busy if m else 0:.0%} of the busy time: other "
            "matrix products of the run use them, these do not.",
        )
        found[0].metrics.update(tensor_metrics(m))
    return found


#: what fp32_no_tensor_cores says of a run that already autocasts (or allows TF32)
_LEFT_IN_FP32 = """\
torch.backends.cuda.matmul.allow_tf32 = True      # or torch.set_float32_matmul_precision("high")
torch.backends.cudnn.allow_tf32 = True"""


def _left_in_fp32_fix(low_share: float) -> Fix:
    """The run's GEMMs are mostly in a low precision already: these are the ones left out
    (ops autocast keeps in FP32, code outside the autocast region). Not "use autocast"."""
    return Fix(
        f"The run already runs {low_share:.0%} of its GEMM/conv time on tensor cores in a "
        "low precision (autocast or TF32): these are the ones left in FP32, ops autocast "
        "keeps in FP32 or code outside the autocast region (a loss, a head, the input "
        "projection's backward). Allow TF32 for them, or bring that code under autocast.",
        _LEFT_IN_FP32,
    )


def top_kernel(ctx: Ctx) -> list[Finding]:
    """The kernel with the most GPU time gets a line, problem or not: its share, its kind
    of code and the change that acts on it (other rules say when something is wrong)."""
    k = ctx.table("kernels")
    if k.num_rows == 0 or not ctx.kernel_time_ns:
        raise Skip("no kernels in this report")
    codes, names = A.codes(k, "name")
    dur = A.ints(k, "duration")
    ok = codes >= 0
    time = np.bincount(codes[ok], weights=dur[ok], minlength=len(names))
    top = int(np.argmax(time))
    rows = np.flatnonzero(codes == top)
    share = float(time[top]) / ctx.compute_time_ns
    short = str(A.strings(k, "short_name")[rows[0]] or names[top])
    kind = kernel_kind(names[top])
    msg = (
        f"{short} takes the most GPU time of any kernel: {fmt.duration(int(time[top]))}, "
        f"{share:.1%} of kernel time ({len(rows):,} launches, "
        f"{fmt.duration(int(time[top]) // len(rows))} each on average)."
    )
    top_family = kernel_family(names[top])
    fam = [i for i, n in enumerate(names) if kernel_family(str(n)) == top_family]
    family_share = float(time[fam].sum()) / ctx.compute_time_ns
    if len(fam) > 1:
        msg += (
            f" With its {len(fam) - 1} other variant(s) (the same kernel at other tile shapes "
            f"or layouts) it takes {family_share:.1%}."
        )
    msg += (
        " The fix below is the largest lever on it, whether or not another finding names a "
        "problem in it."
    )
    ev = _rows_evidence(ctx, "kernels", rows, ("name",), {"name": "Kernel"})
    found = _finding(
        "top_kernel",
        Severity.INFO,
        msg,
        Scope(SCOPE_KERNEL, names[top]),
        ev,
        None,
        {
            "share_of_kernel_time": round(share, 4),
            "launches": len(rows),
            "kind": kind,
            "family_share_of_kernel_time": round(family_share, 4),
            "family_variants": len(fam),
        },
        kernels=(names[top],),
    )
    found.fix = fix_for_kernel("general", names[top], low_precision=run_facts(ctx).low_precision)
    return [found]


# -- optimizer ---------------------------------------------------------------------------
def _optimizer_windows(ctx: Ctx) -> tuple[np.ndarray, np.ndarray]:
    """The optimizer's update ranges in steady steps, nested ones merged: an `optimizer`
    NVTX range or torch.profiler's `Optimizer.step#…`, not `Optimizer.zero_grad#…` and not
    the GPU-side copies of the annotations (they have no process); without any, the phase
    inferred from the launches after the backward pass (optimizer_phase)."""
    s, e = _marked_optimizer(ctx)
    if len(s) == 0:  # nothing marks it: the run after the backward pass (optimizer_phase)
        s, e = optimizer_phase.inferred_windows(ctx)
    if ctx.steps.found:
        keep = _steady_mask(ctx.steps, ctx.steps.index_of(s))
        s, e = s[keep], e[keep]
    order = np.argsort(s, kind="stable")
    s, e = s[order], np.maximum.accumulate(e[order]) if len(e) else e[order]
    first = np.ones(len(s), bool)
    first[1:] = s[1:] >= e[:-1]  # a window that starts inside the one before is nested
    groups = np.cumsum(first) - 1
    ends = np.zeros(int(first.sum()), np.int64)
    np.maximum.at(ends, groups, e)
    return s[first], ends


def _marked_optimizer(ctx: Ctx) -> tuple[np.ndarray, np.ndarray]:
    """The `optimizer` NVTX / `Optimizer.step#…` ranges of a process (not zero_grad)."""
    nv = ctx.table("nvtx")
    if nv.num_rows == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    m = A.name_mask(nv, "text", _OPTIM) & ~A.name_mask(nv, "text", _ZERO_GRAD)
    m &= A.ints(nv, "pid", -1) >= 0
    s, e = A.ints(nv, "start")[m], A.ints(nv, "end", -1)[m]
    ok = e > s
    return s[ok], e[ok]


def tiny_optimizer_kernels(ctx: Ctx) -> list[Finding]:
    """A per-parameter optimizer: many tiny kernels in each optimizer step."""
    a, b = _optimizer_windows(ctx)
    if len(a) == 0:
        raise Skip(
            "no optimizer ranges (NVTX, torch.profiler Optimizer.step, or a backward "
            "pass whose launches it could follow)"
        )
    k = ctx.table("kernels")
    launch = ctx.launch_time("kernels")
    i = np.searchsorted(a, launch, "right") - 1
    rows = np.flatnonzero((i >= 0) & (launch < b[np.maximum(i, 0)]))
    n_steps = len(np.unique(ctx.steps.index_of(a))) if ctx.steps.found else len(a)
    per_step = len(rows) / max(n_steps, 1)
    if len(rows) == 0:
        return []
    med = float(np.median(A.ints(k, "duration")[rows]))
    if per_step < MANY_OPTIMIZER_KERNELS or med >= TINY_KERNEL_NS:
        return []
    idle = int(ctx.gpu_busy.idle(a, b).sum())
    msg = (
        f"Each optimizer step launches {per_step:.0f} kernels (median {fmt.duration(med)}): "
        f"the parameters are updated one by one. The GPU idles {fmt.duration(idle)} inside "
        "optimizer steps."
    )
    ev = _rows_evidence(ctx, "kernels", rows, ("name",), {"name": "Kernel"})
    scope = Scope(SCOPE_RANGE, f"optimizer ({len(a)} ranges)", int(a[0]), int(b[-1]))
    return [
        _finding(
            "tiny_optimizer_kernels",
            Severity.WARNING,
            msg,
            scope,
            ev,
            idle,
            {"kernels_per_step": round(per_step, 1), "median_kernel_ns": med},
        )
    ]


# -- allocator ---------------------------------------------------------------------------
def alloc_churn(ctx: Ctx) -> list[Finding]:
    """cudaMalloc/cudaFree calls in steady-state steps: the caching allocator is bypassed."""
    steps = _need_steps(ctx)
    api = ctx.table("api")
    rows = np.flatnonzero(A.name_mask(api, "name", _ALLOC))
    idx = steps.index_of(A.ints(api, "start")[rows])
    rows = rows[_steady_mask(steps, idx)]
    steady = steps.steady()
    per_step = len(rows) / max(len(steady), 1)
    if len(steady) < 2 or per_step < ALLOC_PER_STEP:
        return []
    spent = int(A.ints(api, "duration")[rows].sum())
    msg = (
        f"{len(rows):,} cudaMalloc/cudaFree-type calls in {len(steady)} steady-state steps "
        f"({per_step:.3g} a step, {fmt.duration(spent)}); cudaFree also synchronises the "
        "device."
    )
    ev = _rows_evidence(ctx, "api", rows, ("name",), {"name": "API Name"})
    return [
        _finding(
            "alloc_churn",
            Severity.WARNING,
            msg,
            _steps_scope(steps, steady),
            ev,
            spent,
            {"calls": len(rows), "calls_per_step": round(per_step, 2)},
        )
    ]


RULES: dict[str, Rule] = {
    "pageable_h2d_in_steps": pageable_h2d_in_steps,
    "dataloader_starvation": dataloader_starvation,
    "host_sync_per_step": host_sync_per_step,
    "cpu_bound": budget_rules.cpu_bound,
    "gpu_bound": budget_rules.gpu_bound,
    "copy_bound": budget_rules.copy_bound,
    "layout_conversion": layout_conversion,
    "fp32_no_tensor_cores": fp32_no_tensor_cores,
    "tiny_optimizer_kernels": tiny_optimizer_kernels,
    "alloc_churn": alloc_churn,
    "exposed_comm": comm_rules.exposed_comm,
    "gloo_staging": gloo_rules.gloo_staging,
    "misaligned_gemm": kernel_rules.misaligned_gemm,
    "graphs_untraced": kernel_rules.graphs_untraced,
    "top_kernel": top_kernel,
}
