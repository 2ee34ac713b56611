#!/usr/bin/env python3
"""Independent ground truth for tuiperf's advice, from an nsys SQLite export.

    python bench/advice/ground_truth.py REPORT.sqlite[.xz] [...] [--json]

Plain Python + sqlite3 + numpy; never imports tuiperf (self_check() refuses to run when this
file holds such an import). Follows /work/shared/GROUND_TRUTH.md. All figures are per steady
step unless named a share.

1. Steps. NVTX push/pop or start/end ranges named `step N`, `iteration N`, `iter N`,
   `ProfilerStep#N` on the thread that has most of them (`step_source` "nvtx"). Otherwise
   (`step_source` "period (P launches)") the loop is found in the GPU work: the ops' launch calls
   in order form a name sequence; the period P is the smallest candidate (the modal distance
   between repeats of some name) whose P-long windows over the last half of the run (else the
   last 1/4, 1/8, 1/16, 1/32: a compile warm-up can fill most of the run) hold the same multiset
   of names (>= 80 % of windows) and, when that part has backward kernels, each contain one
   (a layer repeats too, but its windows differ between forward and backward). Boundaries: the
   phase of the period after the largest median CPU pause between two launches, then every
   occurrence of the shortest name n-gram at that phase that recurs once per period.
   Dropped: the first step, then any leading step >= 1.5x the median (warm-up, compile), steps
   the capture cuts (unfinished range, or later than the capture end) and steps without GPU work.
   When no step follows the last steady one, that last step only marks the window's end.

2. Step time. `step_ns` = GPU-side period: from the first GPU op of the first steady step to the
   first op of the step after the last steady one, / n_steady (same phase at both ends, so it is
   right whether the CPU runs ahead or not). Ops belong to the step whose range holds their
   launch call's start (joined by correlationId and pid; any thread of the process). Also:
   `gpu_span_ns` (first op start to last op end / n), the CPU-side step ranges' median and spread,
   queue depth = median(op start - its launch call's end).

3. GPU busy per device over that window: the union of kernels, memcpy, memset and graph
   executions. NCCL kernels are communication, and so are copies >= 1 MB that go device-to-host
   and host-to-device with the same size in one step (a collective staged through host memory,
   as gloo does); exposed comm = comm with no compute beside it.

4. Why the GPU idles (main device). For each idle gap take the first op after it and its launch
   call. Call ended before the gap began: the op was queued (`gpu_wait`). Otherwise the GPU
   waited for the launching thread; the gap is split by what that thread did in it:
     data       OS runtime calls >= 20 us (read, recvmsg, poll, munmap, pthread_cond_wait, ...),
                not nested in a CUDA call, with no other thread of the process launching GPU
                work meanwhile (so a wait for the autograd thread is not a data wait);
     comm_wait  the same, inside an NVTX range named like a collective (allreduce, gloo, ...)
                or beside a host-staged collective's copies;
     copy       pageable host-to-device cudaMemcpy* calls (the CPU stages the bytes);
     sync       the rest of a gap that began while the thread sat in a blocking CUDA call
                (cuda*Synchronize, cudaMemcpy, device-to-host to pageable, cudaFree): the queue
                ran dry because the CPU waited for the GPU instead of queueing more (a gap begun
                in a blocking pageable H2D copy goes to copy the same way);
     cpu_work   the rest, in stretches >= 1 ms with no CUDA call (CPU-side data preparation,
                Python work between launches);
     launch     the rest (per-op Python and launch overhead).
   With NVTX phases nested in the steps (`data`, `forward`, ...) the idle is split per phase too.

5. Kernel names: precision (half = bf16/f16/fp8/int8/h-gemm tensor-core names, tf32, fp32 on
   CUDA cores = ffma/simt/sgemm/gemmSN/`<float` GEMMs and convolutions, other GEMMs, misc = not a
   GEMM), fallback GEMMs (half/tf32 GEMMs with align1/align2, kernels built for SM < 8.0 on an
   SM >= 9.0 GPU, SM80 half GEMMs on SM90), library, optimizer kernels per step (multi_tensor_apply
   vs the optimizer phase's others), kernels per step, mean kernel time, CUDA-graph share.

6. Levers and their size (GROUND_TRUTH.md section 5), by replaying the window: each op starts at
   max(its launch call's end, the previous op on its stream, the op on another stream it waited
   for) + the lag it had; a blocking call returns when the GPU work it waited for is done (+ its
   own return latency); data waits end at their captured wall time when the loader is the
   bottleneck (data waits >= 20 % of the step) and keep their duration otherwise; comm waits end
   at their captured time (other ranks). Replaying unchanged reproduces the capture. A lever
   changes one thing; its saving = captured period - replayed period:
     cpu_bound              the CPU's own time between calls becomes zero (CUDA graphs,
                            torch.compile, or CPU work moved off the loop), except the stretch
                            right after a blocking sync (graphs cannot span a sync);
     tiny_optimizer_kernels the same inside the optimizer NVTX phase only (foreach/fused);
     dataloader_starvation  data waits take no time;
     exposed_comm           comm waits take no time, or the exposed NCCL time, the larger;
     host_sync_per_step     blocking calls stop waiting for the GPU;
     pageable_copy          pageable H2D copies at the pinned bandwidth (the capture's own pinned
                            H2D copies, else 50 GB/s on SM90), non-blocking, and the batch
                            hand-over calls (munmap/mmap/read/recvmsg) off the main thread
                            (pin_memory=True moves them to the pin-memory thread);
     copy_bound             (H2D copies mostly pinned) the copy time not overlapped by compute;
     fp32_no_tensor_cores   fp32 CUDA-core GEMM/conv kernels 4x faster, not below 8 us;
     misaligned_gemm        fallback GEMMs 4x faster, not below 8 us (cutlass_75 align1 bf16
                            GEMMs -> nvjet was 6x in hf_gpt2_trainer).

Decision: the bottleneck is the class whose lever saves most, refined:
   - the launch lever is `tiny_optimizer_kernels` when the optimizer lever saves >= 50 % of it
     and the optimizer launches more per-parameter kernels than multi_tensor_apply ones (without
     an NVTX optimizer phase, the optimizer is the run of element-wise/reduction/multi-tensor
     kernels the main thread launches after the last backward launch);
   - it is `inference_launch_bound` when the steps show no backward work (no backward kernel,
     no `backward` phase, no graph executions hiding the kernels);
   - `graphs_untraced` when graphs in graph-trace mode hold >= 50 % of GPU busy time and the top
     lever is small or a kernel-level one (the kernels inside are not in the report);
   - `gpu_bound_healthy` when the top saving is < 10 % of the step and the GPU is >= 80 % busy.
   `also_acceptable` (as good an answer): classes whose saving is >= 80 % of the top one's and
   >= 5 % of the step; when the top lever is CPU-side, the bar is its saving less nsys's own
   CPU cost (a nominal 5 us per traced CUDA call on the launching threads: nsys stretches the CPU
   side, 2-25 us a launch in this corpus), and `gpu_bound_healthy` is as good when that leaves
   < 10 % of the step with the GPU >= 70 % busy; `graphs_untraced` whenever graph executions
   dominate in graph-trace mode.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import lzma
import os
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

KERNEL, MEMCPY, MEMSET, GRAPH = 0, 1, 2, 3
STEP_RE = re.compile(
    r"^\s*(?:step|iteration|iter|train[ _]step|ProfilerStep)\s*#?\s*[:=]?\s*(\d+)\s*$", re.I
)
BACKWARD_RE = re.compile(r"backward|bwd|_bw_|dgrad|wgrad|grad_input|cutlassb|autograd", re.I)
SYNC_API_RE = re.compile(
    r"^(cuda(Device|Stream|Event)Synchronize|cu(Ctx|Stream|Event)Synchronize|cudaMemcpy(2D)?(_v|$)"
    r"|cuMemcpy(DtoH|HtoD|DtoD)?(_v|$)|cudaFree(_v|$)|cuMemFree)"
)
WARMUP_FACTOR = 1.5
MIN_PERIOD_STEPS = 3
TOL_NS = 2_000
DATA_WAIT_MIN_NS = 20_000
FP32_SPEEDUP = 4.0
FALLBACK_SPEEDUP = 4.0  # cutlass_75 align1 bf16 -> nvjet measured 6x (hf_gpt2_trainer)
HEALTHY_SHARE = 0.10
NEAR_TIE = 0.8  # a lever within 20 % of the top one is as good an answer
TRACE_NS_PER_CALL = 5_000  # nominal CPU cost nsys adds to each traced CUDA call
NEAR_FLOOR = 0.05  # ... and saves at least 5 % of the step
LOADER_BOUND_SHARE = 0.20
LONG_CPU_NS = 1_000_000
#: OS calls of the main thread that take a DataLoader batch over (unpickle, map/unmap the
#: worker's shared memory); with pin_memory=True the pin-memory thread makes them instead
HANDOVER_CALLS = frozenset({"munmap", "mmap", "mmap64", "read", "recvmsg", "recvfrom", "recv"})
TC_FLOOR_NS = 8_000  # a small GEMM stays latency-bound on tensor cores
COMM_RE = re.compile(
    r"all_?reduce|all-reduce|all_?gather|reduce_?scatter|broadcast|barrier|all_?to_?all|nccl|gloo",
    re.I,
)
CAPTURE_TAG = "tuiperf"


# ----------------------------------------------------------------------------- loading


@contextlib.contextmanager
def opened(path: str) -> Iterator[sqlite3.Connection]:
    """An SQLite connection to REPORT (.xz decompressed into a temporary file)."""
    tmp = None
    if path.endswith(".xz"):
        tmp = tempfile.mkdtemp(prefix="gt_")
        plain = os.path.join(tmp, Path(path).name[:-3])
        with lzma.open(path) as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        path = plain
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        yield db
    finally:
        db.close()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}


def strings(db: sqlite3.Connection, ids: np.ndarray) -> dict[int, str]:
    want = sorted({int(i) for i in ids if i >= 0})
    out: dict[int, str] = {}
    for k in range(0, len(want), 900):
        chunk = want[k : k + 900]
        q = f"SELECT id, value FROM StringIds WHERE id IN ({','.join('?' * len(chunk))})"
        out.update(db.execute(q, chunk).fetchall())
    return out


def rows(db: sqlite3.Connection, sql: str, width: int) -> np.ndarray:
    data = db.execute(sql).fetchall()
    if not data:
        return np.zeros((0, width), dtype=np.int64)
    return np.array([[-1 if v is None else v for v in r] for r in data], dtype=np.int64)


@dataclass
class Ops:
    """GPU activity: one row per kernel, memcpy, memset or graph execution."""

    start: np.ndarray
    end: np.ndarray
    dev: np.ndarray
    stream: np.ndarray
    corr: np.ndarray
    pid: np.ndarray
    kind: np.ndarray
    name: np.ndarray  # demangled StringIds id, -1 for non-kernels
    short: np.ndarray
    copy_kind: np.ndarray
    src_kind: np.ndarray
    dst_kind: np.ndarray
    nbytes: np.ndarray
    node: np.ndarray  # graph-node kernel (node trace mode)
    api: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


OPS_COLS = "start, end, deviceId, streamId, correlationId, (globalPid >> 24) & 16777215"


def op_queries(db: sqlite3.Connection) -> list[str]:
    have = tables(db)
    out = []
    if "CUPTI_ACTIVITY_KIND_KERNEL" in have:
        node = (
            "graphNodeId IS NOT NULL"
            if "graphNodeId" in columns(db, "CUPTI_ACTIVITY_KIND_KERNEL")
            else "0"
        )
        out.append(
            f"SELECT {OPS_COLS}, {KERNEL}, demangledName, shortName, -1, -1, -1, 0, {node} "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL"
        )
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in have:
        out.append(
            f"SELECT {OPS_COLS}, {MEMCPY}, -1, -1, copyKind, srcKind, dstKind, bytes, 0 "
            "FROM CUPTI_ACTIVITY_KIND_MEMCPY"
        )
    if "CUPTI_ACTIVITY_KIND_MEMSET" in have:
        out.append(
            f"SELECT {OPS_COLS}, {MEMSET}, -1, -1, -1, -1, -1, bytes, 0 "
            "FROM CUPTI_ACTIVITY_KIND_MEMSET"
        )
    for t in sorted(have):
        if "GRAPH_TRACE" in t or "GRAPH_EXECUTION" in t:
            out.append(f"SELECT {OPS_COLS}, {GRAPH}, -1, -1, -1, -1, -1, 0, 0 FROM {t}")
    return out


def load_ops(db: sqlite3.Connection) -> Ops:
    parts = [rows(db, q, 14) for q in op_queries(db)]
    a = np.concatenate(parts) if parts else np.zeros((0, 14), dtype=np.int64)
    a = a[np.argsort(a[:, 0], kind="stable")]
    names = list(Ops.__dataclass_fields__)[:14]
    return Ops(**{n: a[:, i] for i, n in enumerate(names)})


@dataclass
class Api:
    """CUDA runtime/driver calls."""

    start: np.ndarray
    end: np.ndarray
    tid: np.ndarray
    corr: np.ndarray
    name: np.ndarray
    names: dict[int, str]

    @property
    def pid(self) -> np.ndarray:
        return (self.tid >> 24) & 0xFFFFFF

    def label(self, i: int) -> str:
        return self.names.get(int(self.name[i]), "")


def load_api(db: sqlite3.Connection) -> Api:
    a = np.zeros((0, 5), dtype=np.int64)
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables(db):
        a = rows(
            db,
            "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
            5,
        )
    a = a[np.argsort(a[:, 0], kind="stable")]
    return Api(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], strings(db, np.unique(a[:, 4])))


def link(ops: Ops, api: Api) -> np.ndarray:
    """Index of each op's launch call (same pid and correlationId), -1 when none."""
    key_api = (api.pid << 32) | (api.corr & 0xFFFFFFFF)
    order = np.argsort(key_api, kind="stable")
    keys = key_api[order]
    key_ops = (ops.pid << 32) | (ops.corr & 0xFFFFFFFF)
    pos = np.clip(np.searchsorted(keys, key_ops), 0, max(len(keys) - 1, 0))
    if not len(keys):
        return np.full(len(ops.start), -1)
    hit = keys[pos] == key_ops
    return np.where(hit, order[pos], -1)


@dataclass
class Osrt:
    start: np.ndarray
    end: np.ndarray
    tid: np.ndarray
    name: np.ndarray
    names: dict[int, str]


def load_osrt(db: sqlite3.Connection) -> Osrt:
    a = np.zeros((0, 4), dtype=np.int64)
    if "OSRT_API" in tables(db):
        a = rows(
            db,
            "SELECT start, end, globalTid, nameId FROM OSRT_API WHERE eventClass = 27 "
            "AND end IS NOT NULL",
            4,
        )
    a = a[np.argsort(a[:, 0], kind="stable")]
    return Osrt(a[:, 0], a[:, 1], a[:, 2], a[:, 3], strings(db, np.unique(a[:, 3])))


@dataclass
class Nvtx:
    start: np.ndarray
    end: np.ndarray
    tid: np.ndarray
    text: list[str]


def load_nvtx(db: sqlite3.Connection) -> Nvtx:
    data: list[tuple] = []
    if "NVTX_EVENTS" in tables(db):
        data = db.execute(
            "SELECT n.start, coalesce(n.end, -1), n.globalTid, coalesce(n.text, s.value, '') "
            "FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
            "WHERE n.eventType IN (59, 60) ORDER BY n.start"
        ).fetchall()
    arr = np.array([d[:3] for d in data], dtype=np.int64).reshape(-1, 3)
    return Nvtx(arr[:, 0], arr[:, 1], arr[:, 2], [d[3] for d in data])


@dataclass
class Gpu:
    name: str = ""
    sm: int = 0  # compute capability x10


def load_gpu(db: sqlite3.Connection) -> Gpu:
    if "TARGET_INFO_GPU" not in tables(db):
        return Gpu()
    r = db.execute("SELECT name, computeMajor, computeMinor FROM TARGET_INFO_GPU").fetchone()
    return Gpu(r[0], int(r[1]) * 10 + int(r[2])) if r else Gpu()


def capture_end(db: sqlite3.Connection) -> int:
    if "ANALYSIS_DETAILS" in tables(db):
        r = db.execute("SELECT duration FROM ANALYSIS_DETAILS").fetchone()
        if r and r[0]:
            return int(r[0])
    return 1 << 62


@dataclass
class Capture:
    ops: Ops
    api: Api
    osrt: Osrt
    nvtx: Nvtx
    gpu: Gpu
    end_ns: int
    kname: dict[int, str]  # kernel name ids -> demangled/short names


def load(db: sqlite3.Connection) -> Capture:
    ops, api = load_ops(db), load_api(db)
    ops.api = link(ops, api)
    ids = np.unique(np.concatenate([ops.name, ops.short]))
    return Capture(
        ops, api, load_osrt(db), load_nvtx(db), load_gpu(db), capture_end(db), strings(db, ids)
    )


# ----------------------------------------------------------------------------- intervals


def union(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merged, sorted intervals."""
    if not len(s):
        return s, e
    o = np.argsort(s, kind="stable")
    s, e = s[o], np.maximum.accumulate(e[o])
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > e[:-1]
    starts = s[new]
    ends = np.append(e[np.flatnonzero(new)[1:] - 1], e[-1])
    return starts, ends


def clip(s: np.ndarray, e: np.ndarray, w0: int, w1: int) -> tuple[np.ndarray, np.ndarray]:
    s, e = np.maximum(s, w0), np.minimum(e, w1)
    keep = e > s
    return s[keep], e[keep]


def total(s: np.ndarray, e: np.ndarray) -> int:
    return int((e - s).sum())


def minus(a: tuple, b: tuple) -> int:
    """Length of union(a) not covered by union(b)."""
    sa, ea = union(*a)
    sb, eb = union(*b)
    return total(sa, ea) - overlap(sa, ea, sb, eb)


def overlap(sa: np.ndarray, ea: np.ndarray, sb: np.ndarray, eb: np.ndarray) -> int:
    """Overlap of two merged interval sets."""
    if not len(sa) or not len(sb):
        return 0
    cum = np.concatenate([[0], np.cumsum(eb - sb)])
    out = 0
    for s, e in zip(sa, ea):
        out += covered(sb, eb, cum, int(s), int(e))
    return out


def covered(sb: np.ndarray, eb: np.ndarray, cum: np.ndarray, s: int, e: int) -> int:
    """Length of [s, e) covered by merged intervals (sb, eb) with prefix sums cum."""
    i = int(np.searchsorted(eb, s, side="right"))
    j = int(np.searchsorted(sb, e, side="left"))
    if j <= i:
        return 0
    inner = int(cum[j] - cum[i])
    inner -= max(0, s - int(sb[i]))
    inner -= max(0, int(eb[j - 1]) - e)
    return max(inner, 0)


# ----------------------------------------------------------------------------- steps


@dataclass
class Steps:
    source: str
    start: np.ndarray  # CPU-side ranges of the steady steps
    end: np.ndarray
    labels: list[str]
    pid: int
    tid: int
    next_range: tuple[int, int] | None  # CPU range of the step after the last steady one
    n_found: int
    dropped: dict[str, int]


def nvtx_steps(cap: Capture) -> tuple[np.ndarray, np.ndarray, list[str], int] | None:
    nv = cap.nvtx
    hit = [i for i, t in enumerate(nv.text) if STEP_RE.match(t)]
    if len(hit) < 3:
        return None
    tid = Counter(int(nv.tid[i]) for i in hit).most_common(1)[0][0]
    idx = np.array([i for i in hit if nv.tid[i] == tid])
    return nv.start[idx], nv.end[idx], [nv.text[i] for i in idx], tid


def drop_steps(
    s: np.ndarray, e: np.ndarray, has_ops: np.ndarray, cut_at: int
) -> tuple[np.ndarray, dict[str, int]]:
    """Indices of steady steps: drop the first, leading slow ones, cut ones, empty ones."""
    keep = np.arange(len(s))
    cut = (e < 0) | (e > cut_at)
    dropped = {"cut": int(cut.sum()), "no_gpu_work": int((~has_ops & ~cut).sum())}
    keep = keep[~cut & has_ops]
    first = keep[:1]
    keep = keep[1:]
    dur = e[keep] - s[keep]
    warm = len(first)
    while len(keep) > 2 and dur[0] >= WARMUP_FACTOR * np.median(dur):
        keep, dur, warm = keep[1:], dur[1:], warm + 1
    dropped["warmup"] = warm
    return keep, dropped


def launches_in(cap: Capture, pid: int, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Step index (into s/e) of each op whose launch call starts in [s, e), else -1."""
    ops, api = cap.ops, cap.api
    out = np.full(len(ops.start), -1)
    ok = ops.api >= 0
    idx = np.flatnonzero(ok)
    t = api.start[ops.api[idx]]
    same = api.pid[ops.api[idx]] == pid
    j = np.searchsorted(s, t, side="right") - 1
    inside = same & (j >= 0) & (t < e[np.clip(j, 0, None)])
    out[idx[inside]] = j[inside]
    return out


def steps_from_nvtx(cap: Capture) -> Steps | None:
    found = nvtx_steps(cap)
    if found is None:
        return None
    s, e, labels, tid = found
    pid = (tid >> 24) & 0xFFFFFF
    step_of = launches_in(cap, pid, s, np.where(e < 0, 1 << 62, e))
    has_ops = np.bincount(step_of[step_of >= 0], minlength=len(s)) > 0
    keep, dropped = drop_steps(s, e, has_ops, cap.end_ns)
    nxt = None
    if len(keep) and keep[-1] + 1 < len(s):
        k = keep[-1] + 1
        nxt = (int(s[k]), int(e[k]) if e[k] >= 0 else 1 << 62)
    return Steps(
        "nvtx", s[keep], e[keep], [labels[i] for i in keep], pid, tid, nxt, len(s), dropped
    )


def main_pid(cap: Capture) -> int:
    ok = cap.ops.api >= 0
    if not ok.any():
        return -1
    pids = cap.api.pid[cap.ops.api[ok]]
    return int(Counter(pids.tolist()).most_common(1)[0][0])


def launch_sequence(cap: Capture, pid: int) -> tuple[np.ndarray, np.ndarray]:
    """Ops of pid with a launch call in launch order, and a name key for each."""
    ops, api = cap.ops, cap.api
    idx = np.flatnonzero(ops.api >= 0)
    idx = idx[api.pid[ops.api[idx]] == pid]
    # one entry per launch call (graph-node kernels share their graph launch)
    _, first = np.unique(ops.api[idx], return_index=True)
    idx = idx[first]
    idx = idx[np.argsort(api.start[ops.api[idx]], kind="stable")]
    key = np.where(ops.kind[idx] == KERNEL, ops.name[idx], -10 - ops.kind[idx] * 16)
    key = np.where(ops.kind[idx] == MEMCPY, key - ops.copy_kind[idx], key)
    return idx, key


def candidate_periods(key: np.ndarray) -> list[int]:
    """Modal distances between repeats of each name that repeats >= 4 times."""
    out = set()
    order = np.argsort(key, kind="stable")
    k = key[order]
    bounds = np.flatnonzero(np.diff(k)) + 1
    for pos in np.split(order, bounds):
        if len(pos) >= 4:
            d = np.diff(np.sort(pos))
            vals, cnt = np.unique(d, return_counts=True)
            out.add(int(vals[np.argmax(cnt)]))
    return sorted(p for p in out if 2 <= p <= len(key) // 3)


def windows_agree(key: np.ndarray, p: int, back: np.ndarray, cut: int) -> bool:
    """Do P-long windows over key[cut:] hold the same names (and each a backward kernel when
    that part of the run has any)?"""
    tail = key[cut:]
    n = len(tail) // p
    if n < 3:
        return False
    sigs = [tuple(sorted(Counter(tail[i * p : (i + 1) * p].tolist()).items())) for i in range(n)]
    _, count = Counter(sigs).most_common(1)[0]
    if count < 0.8 * n:
        return False
    bt = back[cut:]
    if bt.any():
        has = [bt[i * p : (i + 1) * p].any() for i in range(n)]
        return sum(has) >= 0.9 * n
    return True


def find_period(key: np.ndarray, back: np.ndarray) -> tuple[int, int]:
    """(period, start of the tail it was found in); the last half first, then shorter tails
    (a long compile warm-up can fill the first half and more)."""
    for frac in (2, 4, 8, 16, 32):
        cut = len(key) - len(key) // frac
        for p in candidate_periods(key[cut:]):
            if windows_agree(key, p, back, cut):
                return p, cut
    return 0, 0


def boundary_phase(cap: Capture, idx: np.ndarray, p: int, cut: int) -> int:
    """Phase in the period where the CPU pauses longest before a launch (median over periods)."""
    a = cap.ops.api[idx]
    gap = np.zeros(len(idx))
    gap[1:] = cap.api.start[a[1:]] - cap.api.end[a[:-1]]
    tail = gap[cut : cut + (len(idx) - cut) // p * p].reshape(-1, p)
    return (cut + int(np.argmax(np.median(tail, axis=0)))) % p


def marker_positions(key: np.ndarray, p: int, phase: int, cut: int) -> np.ndarray:
    """Positions of the shortest n-gram starting at `phase` that occurs once per period."""
    ref = cut + (phase - cut) % p
    for n in range(1, min(p, 16) + 1):
        gram = key[ref : ref + n]
        if len(gram) < n:
            break
        win = np.lib.stride_tricks.sliding_window_view(key, n)
        pos = np.flatnonzero((win == gram).all(axis=1))
        tail = pos[pos >= cut]
        if len(tail) and np.all(np.diff(tail) == p):
            return periodic_run(pos, p)
    return np.arange(ref % p, len(key), p)


def periodic_run(pos: np.ndarray, p: int) -> np.ndarray:
    """The occurrences that continue the period backwards from the last one: closer repeats
    are skipped (the same ops before the loop), a gap over 2P ends the run (a warm-up step)."""
    keep = [int(pos[-1])]
    for q in pos[::-1][1:].tolist():
        gap = keep[-1] - q
        if gap < p // 2:
            continue
        keep.append(q)
        if gap > 2 * p:
            break
    return np.array(keep[::-1])


def steps_from_period(cap: Capture) -> Steps | None:
    pid = main_pid(cap)
    idx, key = launch_sequence(cap, pid)
    if len(idx) < 12:
        return None
    back = np.array([bool(BACKWARD_RE.search(cap.kname.get(int(k), ""))) for k in key])
    p, cut = find_period(key, back)
    if not p:
        return None
    pos = marker_positions(key, p, boundary_phase(cap, idx, p, cut), cut)
    a = cap.ops.api[idx[pos]]
    s = cap.api.start[a]
    e = np.append(s[1:], -1)  # the last one is cut by the capture end
    has_ops = np.ones(len(s), dtype=bool)
    keep, dropped = drop_steps(s, e, has_ops, cap.end_ns)
    nxt = (int(s[keep[-1] + 1]), 1 << 62) if len(keep) and keep[-1] + 1 < len(s) else None
    tid = int(Counter(cap.api.tid[a].tolist()).most_common(1)[0][0])
    if len(keep) < MIN_PERIOD_STEPS:
        return None  # too few repeats to call them steps (a short window, a cut capture)
    labels = [f"period {i}" for i in keep]
    return Steps(f"period ({p} launches)", s[keep], e[keep], labels, pid, tid, nxt, len(s), dropped)


def find_steps(cap: Capture) -> Steps | None:
    st = steps_from_nvtx(cap) or steps_from_period(cap)
    if st is None or st.next_range is not None or len(st.start) < 3:
        return st
    # no step after the last steady one: it serves as the end marker of the window
    nxt = (int(st.start[-1]), int(st.end[-1]))
    return replace(st, start=st.start[:-1], end=st.end[:-1], labels=st.labels[:-1], next_range=nxt)


# ----------------------------------------------------------------------------- the window


@dataclass
class Window:
    """The steady steps' GPU work."""

    dev: int
    w0: int
    w1: int
    n: int
    step_of: np.ndarray  # per op: steady step index or -1
    first: np.ndarray  # per steady step: start of its first op on dev (-1 when none)
    next_op: int  # index of the next step's first op on dev, -1 when none
    staging: np.ndarray  # per op: a copy of a device-host-device round trip (gloo-style comm)

    @property
    def step_ns(self) -> float:
        return (self.w1 - self.w0) / self.n


def next_first_op(cap: Capture, st: Steps, dev: int) -> int:
    if st.next_range is None:
        return -1
    s, e = np.array([st.next_range[0]]), np.array([st.next_range[1]])
    of = launches_in(cap, st.pid, s, e)
    idx = np.flatnonzero((of == 0) & (cap.ops.dev == dev))
    return int(idx[np.argmin(cap.ops.start[idx])]) if len(idx) else -1


def make_window(cap: Capture, st: Steps) -> Window | None:
    step_of = launches_in(cap, st.pid, st.start, st.end)
    idx = np.flatnonzero(step_of >= 0)
    if not len(idx):
        return None
    ops = cap.ops
    busy = np.bincount(ops.dev[idx], weights=ops.end[idx] - ops.start[idx])
    dev = int(np.argmax(busy))
    on = idx[ops.dev[idx] == dev]
    first = np.full(len(st.start), 1 << 62)
    np.minimum.at(first, step_of[on], ops.start[on])
    first[first == 1 << 62] = -1
    nxt = next_first_op(cap, st, dev)
    w0 = int(ops.start[on].min())
    w1 = int(ops.start[nxt]) if nxt >= 0 else int(ops.end[on].max())
    return Window(dev, w0, w1, len(st.start), step_of, first, nxt, staging(cap, step_of))


def staging(cap: Capture, step_of: np.ndarray) -> np.ndarray:
    """Copies >= 1 MB that go device-to-host and host-to-device with the same size in the same
    step: a collective staged through host memory (gloo), or another host round trip."""
    ops = cap.ops
    big = np.flatnonzero((ops.kind == MEMCPY) & (ops.nbytes >= 1 << 20) & (step_of >= 0))
    keys = {
        k: {(int(step_of[i]), int(ops.nbytes[i])) for i in big if ops.copy_kind[i] == k}
        for k in (1, 2)
    }
    both = keys[1] & keys[2]
    out = np.zeros(len(ops.start), dtype=bool)
    out[big] = [(int(step_of[i]), int(ops.nbytes[i])) in both for i in big]
    return out


def precision(name: str) -> str:
    n = name.lower()
    gemm = is_gemm(n)
    if "nccl" in n:
        return "comm"
    if not gemm:
        return "misc"
    if "tf32" in n:
        return "tf32"
    half = ("bf16", "f16", "fp16", "half", "hmma", "h1688", "h16816", "e4m3", "e5m2", "fp8", "i8")
    if any(h in n for h in half) or ("nvjet" in n and "_h_" in n):
        return "half"
    fp32 = ("ffma", "simt", "sgemm", "gemmsn", "f32f32_f32f32", "<float")
    if any(f in n for f in fp32) and "tensorop" not in n:
        return "fp32"
    return "gemm_other"


def is_gemm(n: str) -> bool:
    words = ("gemm", "xmma", "nvjet", "cutlass", "conv", "fprop", "dgrad", "wgrad", "fmha")
    words += ("flash", "_mm_", "triton_tem", "bmm", "matmul")
    return any(w in n for w in words) and "gemv" not in n and "splitkreduce" not in n


def library(name: str) -> str:
    n = name.lower()
    for lib, words in (
        ("nccl", ("nccl",)),
        ("triton", ("triton",)),
        ("flash/fmha", ("flash", "fmha")),
        ("cudnn", ("cudnn", "implicit_convolve", "bn_fw", "bn_bw", "nchwtonhwc", "nhwctonchw")),
        ("cublas", ("cublas", "nvjet", "xmma_gemm", "gemmsn", "sgemm", "gemv", "splitkreduce")),
        ("cutlass", ("cutlass",)),
        ("aten", ("at::native", "at::", "void (anonymous")),
    ):
        if any(w in n for w in words):
            return lib
    return "other"


def fallback(name: str, sm: int) -> bool:
    """A GEMM on a fallback path: misaligned tensor-core GEMM or an older SM's kernel."""
    n = name.lower()
    if not is_gemm(n):
        return False
    prec = precision(n)
    if prec in ("half", "tf32") and re.search(r"align[12](?!\d)", n):
        return True
    arch = [int(a) for a in re.findall(r"(?:sm|cutlass_)(\d{2})(?!\d)", n)]
    if arch and sm >= 90 and min(arch) < 80:
        return True
    return bool(arch and sm >= 90 and prec == "half" and max(arch) == 80)


def kernel_table(cap: Capture, idx: np.ndarray) -> dict[str, dict[str, float]]:
    """Kernel time per precision class and library (ns), for op indices idx."""
    ops = cap.ops
    k = idx[ops.kind[idx] == KERNEL]
    out: dict[str, dict[str, float]] = {"precision": {}, "library": {}, "fallback": {}}
    dur = ops.end[k] - ops.start[k]
    for nid, d in zip(ops.name[k], dur):
        name = cap.kname.get(int(nid), "")
        for table, key in (("precision", precision(name)), ("library", library(name))):
            out[table][key] = out[table].get(key, 0) + int(d)
        if fallback(name, cap.gpu.sm):
            out["fallback"][name[:120]] = out["fallback"].get(name[:120], 0) + int(d)
    return out


def shares(d: dict[str, float], tot: float) -> dict[str, float]:
    return {k: round(v / tot, 4) for k, v in sorted(d.items(), key=lambda x: -x[1])} if tot else {}


# ----------------------------------------------------------------------------- CPU side


@dataclass
class Cpu:
    """What the loop's launching threads did: blocking CUDA calls and external waits."""

    threads: np.ndarray  # launching threads (globalTid)
    block_api: np.ndarray  # api index of blocking calls
    block_kind: np.ndarray  # 0 sync, 1 pageable H2D copy
    block_op: np.ndarray  # the memcpy op of a blocking copy call, -1 otherwise
    wait_s: np.ndarray  # external OS waits (data)
    wait_e: np.ndarray
    wait_tid: np.ndarray
    wait_name: list[str]
    wait_comm: np.ndarray  # the wait lies in a communication NVTX range (waiting for other ranks)
    calls: dict[int, tuple[np.ndarray, np.ndarray]]  # CUDA API calls per launching thread


def api_ops(cap: Capture) -> np.ndarray:
    """For each api row, the index of one op it launched (-1 none)."""
    out = np.full(len(cap.api.start), -1)
    ok = np.flatnonzero(cap.ops.api >= 0)
    out[cap.ops.api[ok]] = ok
    return out


def blocking(cap: Capture, pid: int, threads: np.ndarray) -> tuple[np.ndarray, ...]:
    api, ops = cap.api, cap.ops
    mine = np.flatnonzero(np.isin(api.tid, threads))
    op_of = api_ops(cap)
    kind, op = [], []
    for i in mine:
        o = int(op_of[i])
        is_copy = o >= 0 and ops.kind[o] == MEMCPY
        if is_copy and ops.copy_kind[o] == 1 and ops.src_kind[o] == 0:
            kind.append(1)
        elif SYNC_API_RE.match(api.label(i)) or (
            is_copy and ops.copy_kind[o] == 2 and ops.dst_kind[o] == 0
        ):
            kind.append(0)
        else:
            kind.append(-1)
        op.append(o if is_copy else -1)
    k, o = np.array(kind, dtype=np.int64), np.array(op, dtype=np.int64)
    sel = k >= 0
    return mine[sel], k[sel], o[sel]


def launch_times_by_thread(cap: Capture, idx: np.ndarray) -> dict[int, np.ndarray]:
    a = cap.ops.api[idx]
    out: dict[int, np.ndarray] = {}
    for t in np.unique(cap.api.tid[a]):
        out[int(t)] = np.sort(cap.api.start[a[cap.api.tid[a] == t]])
    return out


def external_waits(cap: Capture, threads: np.ndarray, launches: dict[int, np.ndarray]) -> tuple:
    """OS calls of the launching threads that wait on something outside the process's launches."""
    os_ = cap.osrt
    sel = np.flatnonzero(np.isin(os_.tid, threads) & (os_.end - os_.start >= DATA_WAIT_MIN_NS))
    calls = api_by_thread(cap, threads)
    keep = [i for i in sel if not nested(os_, i, calls) and not others_launch(os_, i, launches)]
    k = np.array(keep, dtype=np.int64)
    names = [os_.names.get(int(os_.name[i]), "?") for i in k]
    return os_.start[k], os_.end[k], os_.tid[k], names


def api_by_thread(cap: Capture, threads: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    api = cap.api
    return {int(t): (api.start[api.tid == t], api.end[api.tid == t]) for t in threads}


def nested(os_: Osrt, i: int, calls: dict[int, tuple[np.ndarray, np.ndarray]]) -> bool:
    """Is OS call i inside a CUDA API call of its thread?"""
    s, e = calls[int(os_.tid[i])]
    j = int(np.searchsorted(s, os_.start[i], side="right")) - 1
    return j >= 0 and e[j] >= os_.end[i]


def others_launch(os_: Osrt, i: int, launches: dict[int, np.ndarray]) -> bool:
    for t, times in launches.items():
        if t == os_.tid[i]:
            continue
        a = np.searchsorted(times, os_.start[i])
        if a < len(times) and times[a] < os_.end[i]:
            return True
    return False


def cpu_side(cap: Capture, win: Window, pid: int) -> Cpu:
    steady = np.flatnonzero(win.step_of >= 0)
    threads = np.unique(cap.api.tid[cap.ops.api[steady]])
    b_api, b_kind, b_op = blocking(cap, pid, threads)
    mine = np.flatnonzero((cap.ops.api >= 0) & ~win.staging)
    mine = mine[cap.api.pid[cap.ops.api[mine]] == pid]
    ws, we, wt, wn = external_waits(cap, threads, launch_times_by_thread(cap, mine))
    comm = comm_waits(cap, pid, ws, we) | staging_waits(cap, win, ws, we)
    calls = api_by_thread(cap, threads)
    return Cpu(threads, b_api, b_kind, b_op, ws, we, wt, wn, comm, calls)


def staging_waits(cap: Capture, win: Window, ws: np.ndarray, we: np.ndarray) -> np.ndarray:
    """Waits during which a host-staged collective's copy runs or is launched."""
    st = np.flatnonzero(win.staging)
    a = cap.ops.api[st]
    s = np.minimum(cap.ops.start[st], np.where(a >= 0, cap.api.start[a], cap.ops.start[st]))
    e = cap.ops.end[st]
    return np.array([bool(((s < b) & (e > x)).any()) for x, b in zip(ws, we)], dtype=bool)


def comm_waits(cap: Capture, pid: int, ws: np.ndarray, we: np.ndarray) -> np.ndarray:
    """Waits at least half inside an NVTX range named like a collective (any thread of pid)."""
    nv = cap.nvtx
    sel = [
        i
        for i, t in enumerate(nv.text)
        if COMM_RE.search(t) and nv.end[i] > 0 and (nv.tid[i] >> 24) & 0xFFFFFF == pid
    ]
    us, ue = union(nv.start[sel], nv.end[sel]) if sel else (np.zeros(0), np.zeros(0))
    cum = np.concatenate([[0], np.cumsum(ue - us)])
    return np.array(
        [covered(us, ue, cum, int(a), int(b)) >= 0.5 * (b - a) for a, b in zip(ws, we)],
        dtype=bool,
    )


# ----------------------------------------------------------------------------- idle gaps

BUCKETS = ("data", "comm_wait", "copy", "sync", "launch", "cpu_work", "gpu_wait", "unlinked")


@dataclass
class Gap:
    start: int
    end: int
    parts: dict[str, int]


def gaps(cap: Capture, win: Window) -> list[tuple[int, int, int]]:
    """(gap start, gap end, index of the first op after it) on the window's device."""
    ops = cap.ops
    on = np.flatnonzero(ops.dev == win.dev)
    s, e = clip(ops.start[on], ops.end[on], win.w0, win.w1)
    us, ue = union(s, e)
    starts = ops.start[on]
    order = np.argsort(starts, kind="stable")
    out = []
    for g0, g1 in zip(ue[:-1], us[1:]):
        j = order[np.searchsorted(starts[order], g1)]
        out.append((int(g0), int(g1), int(on[j])))
    if len(ue) and ue[-1] < win.w1 and win.next_op >= 0:
        out.append((int(ue[-1]), win.w1, win.next_op))
    return out


def thread_overlap(s: np.ndarray, e: np.ndarray, g0: int, g1: int) -> int:
    return int(np.clip(np.minimum(e, g1) - np.maximum(s, g0), 0, None).sum())


def attribute(cap: Capture, cpu: Cpu, g0: int, g1: int, op: int) -> dict[str, int]:
    a = int(cap.ops.api[op])
    if a < 0:
        return {"unlinked": g1 - g0}
    if cap.api.end[a] <= g0:
        return {"gpu_wait": g1 - g0}
    tid = int(cap.api.tid[a])
    w = cpu.wait_tid == tid
    data = thread_overlap(cpu.wait_s[w & ~cpu.wait_comm], cpu.wait_e[w & ~cpu.wait_comm], g0, g1)
    comm = thread_overlap(cpu.wait_s[w & cpu.wait_comm], cpu.wait_e[w & cpu.wait_comm], g0, g1)
    mine = cap.api.tid[cpu.block_api] == tid
    bs, be = cap.api.start[cpu.block_api[mine]], cap.api.end[cpu.block_api[mine]]
    bk = cpu.block_kind[mine]
    copy = thread_overlap(bs[bk == 1], be[bk == 1], g0, g1)
    rest = max(0, g1 - g0 - data - comm - copy)
    began = (bs <= g0) & (be >= g0 - TOL_NS)
    if began.any():
        key = "sync" if (bk[began] == 0).any() else "copy"
        return {"data": data, "comm_wait": comm, "copy": copy} | {
            key: rest + (copy if key == "copy" else 0)
        }
    work = min(rest, long_cpu_stretch(cpu, tid, int(cap.api.start[a]), g0, g1) - data - comm)
    work = max(work, 0)
    return {"data": data, "comm_wait": comm, "copy": copy, "cpu_work": work, "launch": rest - work}


def long_cpu_stretch(cpu: Cpu, tid: int, launch: int, g0: int, g1: int) -> int:
    """Time in [g0, launch) in stretches >= LONG_CPU_NS with no CUDA call on the thread
    (CPU work such as data preparation, not per-op launch overhead)."""
    s, e = cpu.calls[tid]
    lo = max(int(np.searchsorted(e, g0)) - 1, 0)
    hi = int(np.searchsorted(s, launch))
    edges_s = np.concatenate([[g0], np.minimum(e[lo:hi], launch)])
    edges_e = np.concatenate([np.maximum(s[lo:hi], g0), [launch]])
    free = np.maximum(edges_e - np.maximum.accumulate(edges_s), 0)
    return int(min(free[free >= LONG_CPU_NS].sum(), g1 - g0))


def idle_gaps(cap: Capture, win: Window, cpu: Cpu) -> list[Gap]:
    return [Gap(g0, g1, attribute(cap, cpu, g0, g1, op)) for g0, g1, op in gaps(cap, win)]


def idle_split(gs: list[Gap], n: int) -> dict[str, float]:
    out = dict.fromkeys(BUCKETS, 0.0)
    for g in gs:
        for k, v in g.parts.items():
            out[k] += v / n
    return {k: round(v) for k, v in out.items()}


def phases(cap: Capture, st: Steps) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """NVTX ranges nested in the steady steps on the steps' thread, by name."""
    nv = cap.nvtx
    out: dict[str, list[tuple[int, int]]] = {}
    if st.source != "nvtx":
        return {}
    for i, t in enumerate(nv.text):
        if nv.tid[i] != st.tid or STEP_RE.match(t) or nv.end[i] < 0:
            continue
        j = np.searchsorted(st.start, nv.start[i], side="right") - 1
        if j >= 0 and nv.end[i] <= st.end[j]:
            out.setdefault(t, []).append((int(nv.start[i]), int(nv.end[i])))
    return {k: (np.array([a for a, _ in v]), np.array([b for _, b in v])) for k, v in out.items()}


def phase_idle(gs: list[Gap], ph: dict, n: int) -> dict[str, dict[str, float]]:
    out = {}
    for name, (ps, pe) in ph.items():
        us, ue = union(ps, pe)
        cum = np.concatenate([[0], np.cumsum(ue - us)])
        parts = dict.fromkeys(BUCKETS, 0.0)
        for g in gs:
            f = covered(us, ue, cum, g.start, g.end) / max(g.end - g.start, 1)
            for k, v in g.parts.items():
                parts[k] += f * v / n
        row = {"cpu_wall_ns": round(total(us, ue) / n)}
        row.update({f"idle_{k}_ns": round(v) for k, v in parts.items() if v >= 1})
        out[name] = row
    return out


# ----------------------------------------------------------------------------- replay

NOWAIT_NS = 5_000


@dataclass
class Plan:
    """The steady window's ops on the main device in launch order, with what held each back."""

    op: np.ndarray
    ready: np.ndarray
    start: np.ndarray
    end: np.ndarray
    stream: np.ndarray
    prev: np.ndarray  # plan index of the previous op on the same stream, -1
    dep: np.ndarray  # plan index of an op on another stream it waited for, -1
    lag: np.ndarray
    events: list[tuple[int, int, int, Any]]  # (time, order, type, payload)
    n_steady: int  # plan[:n_steady] are steady ops, plan[n_steady:] the next step's first op


def plan_ops(cap: Capture, win: Window) -> np.ndarray:
    ops = cap.ops
    idx = np.flatnonzero((win.step_of >= 0) & (ops.dev == win.dev) & (ops.api >= 0))
    idx = idx[np.lexsort((ops.start[idx], cap.api.start[ops.api[idx]]))]
    return np.append(idx, win.next_op) if win.next_op >= 0 else idx


def same_stream_prev(stream: np.ndarray) -> np.ndarray:
    prev = np.full(len(stream), -1)
    last: dict[int, int] = {}
    for i, s in enumerate(stream.tolist()):
        prev[i] = last.get(s, -1)
        last[s] = i
    return prev


def cross_deps(start: np.ndarray, end: np.ndarray, stream: np.ndarray, base: np.ndarray) -> list:
    order = np.argsort(end, kind="stable")
    ends = end[order]
    dep = [-1] * len(start)
    for i in np.flatnonzero(start - base > TOL_NS):
        lo, hi = np.searchsorted(ends, [start[i] - TOL_NS, start[i]], side="right")
        cand = [j for j in order[lo:hi] if stream[j] != stream[i] and j < i]
        dep[i] = max(cand, key=lambda j: end[j]) if cand else -1
    return dep


def make_plan(cap: Capture, win: Window, cpu: Cpu, st: Steps) -> Plan:
    ops, api = cap.ops, cap.api
    op = plan_ops(cap, win)
    start, end, stream = ops.start[op], ops.end[op], ops.stream[op]
    ready = np.minimum(api.end[ops.api[op]], start)
    prev = same_stream_prev(stream)
    pe = np.where(prev >= 0, end[prev], -(1 << 62))
    dep = np.array(cross_deps(start, end, stream, np.maximum(ready, pe)), dtype=np.int64)
    de = np.where(dep >= 0, end[dep], -(1 << 62))
    lag = np.clip(start - np.maximum(np.maximum(ready, pe), de), 0, None)
    events = cpu_events(cap, op, cpu, st)
    n_steady = len(op) - (1 if win.next_op >= 0 else 0)
    return Plan(op, ready, start, end, stream, prev, dep, lag, events, n_steady)


def cpu_events(cap: Capture, op: np.ndarray, cpu: Cpu, st: Steps) -> list:
    api = cap.api
    lo, hi = int(st.start[0]), int(st.end[-1])
    groups: dict[int, list[int]] = {}
    for j, a in enumerate(cap.ops.api[op].tolist()):
        groups.setdefault(a, []).append(j)
    ev: list[tuple[int, int, int, Any]] = [
        (int(api.start[a]), 0, 0, (a, js)) for a, js in groups.items()
    ]
    pos = {int(o): j for j, o in enumerate(op.tolist())}
    for b, k, o in zip(cpu.block_api, cpu.block_kind, cpu.block_op):
        if lo <= api.start[b] < hi:
            ev.append((int(api.start[b]), 1, 1, (int(b), int(k), pos.get(int(o), -1))))
    for s, e, c, name in zip(cpu.wait_s, cpu.wait_e, cpu.wait_comm, cpu.wait_name):
        if lo <= s < hi:
            ev.append((int(s), 2, 2, (int(s), int(e), bool(c), name in HANDOVER_CALLS)))
    return sorted(ev, key=lambda x: (x[0], x[1]))


@dataclass
class Lever:
    name: str
    scale: np.ndarray | None = None  # per plan op duration factor
    no_wait: tuple[int, ...] = ()  # blocking kinds that stop waiting for the GPU
    data_free: bool = False
    comm_free: bool = False
    handover_free: bool = False  # the batch hand-over calls move to the pin-memory thread
    cpu_free: tuple[np.ndarray, np.ndarray] | None = None  # CPU ranges whose own time goes
    fixed_waits: bool = False  # data waits end when captured (the loader is the bottleneck)


def in_ranges(t: int, rng: tuple[np.ndarray, np.ndarray] | None) -> bool:
    if rng is None:
        return False
    j = int(np.searchsorted(rng[0], t, side="right")) - 1
    return j >= 0 and t < rng[1][j]


@dataclass
class State:
    delta: float = 0.0  # how much earlier the CPU is than captured
    cursor: int = -(1 << 62)  # captured end of the CPU's last event
    done: int = -(1 << 62)  # captured end of the GPU work issued so far
    done_new: float = -(1 << 62)
    after_sync: bool = False  # the CPU just returned from waiting for the GPU


def replay(cap: Capture, plan: Plan, lever: Lever) -> tuple[np.ndarray, np.ndarray]:
    """New (start, end) of the plan's ops under the lever."""
    dur = (plan.end - plan.start).astype(float)
    if lever.scale is not None:
        dur = dur * lever.scale
    ns, ne = np.zeros(len(dur)), np.zeros(len(dur))
    stt = State()
    for t, _, typ, pay in plan.events:
        if in_ranges(t, lever.cpu_free) and t > stt.cursor > -(1 << 61) and not stt.after_sync:
            stt.delta += t - stt.cursor
        stt.after_sync = False
        if typ == 0:
            launch(cap, plan, lever, stt, pay, dur, ns, ne)
        elif typ == 1:
            block(cap, plan, lever, stt, pay, ne)
        else:
            wait(lever, stt, pay)
    return ns, ne


def launch(
    cap: Capture,
    plan: Plan,
    lever: Lever,
    stt: State,
    pay: Any,
    dur: np.ndarray,
    ns: np.ndarray,
    ne: np.ndarray,
) -> None:
    a, js = pay
    s, e = int(cap.api.start[a]), int(cap.api.end[a])
    free = in_ranges(s, lever.cpu_free)
    for j in js:
        r = (min(s, plan.ready[j]) if free else plan.ready[j]) - stt.delta
        p = ne[plan.prev[j]] if plan.prev[j] >= 0 else r
        d = ne[plan.dep[j]] if plan.dep[j] >= 0 else r
        ns[j] = max(r, p, d) + plan.lag[j]
        ne[j] = ns[j] + dur[j]
        stt.done, stt.done_new = max(stt.done, int(plan.end[j])), max(stt.done_new, ne[j])
    if free:
        stt.delta += e - s
    stt.cursor = max(stt.cursor, e)


def block(cap: Capture, plan: Plan, lever: Lever, stt: State, pay: Any, ne: np.ndarray) -> None:
    b, kind, j = pay
    a, e = int(cap.api.start[b]), int(cap.api.end[b])
    c, c_new = (int(plan.end[j]), ne[j]) if j >= 0 else (stt.done, stt.done_new)
    if kind in lever.no_wait:
        new_e = a - stt.delta + min(e - a, NOWAIT_NS)
    elif a - TOL_NS <= c <= e + TOL_NS:
        new_e = max(a - stt.delta, c_new) + max(0, e - c)
        stt.after_sync = True
    else:
        new_e = e - stt.delta
    stt.delta = e - new_e
    stt.cursor = max(stt.cursor, e)


def wait(lever: Lever, stt: State, pay: tuple[int, int, bool, bool]) -> None:
    s, e, comm, handover = pay
    free = lever.comm_free if comm else lever.data_free or (handover and lever.handover_free)
    if free:
        new_e = s - stt.delta
    elif comm or lever.fixed_waits:
        new_e = max(e, s - stt.delta)
    else:
        new_e = e - stt.delta
    stt.delta = e - new_e
    stt.cursor = max(stt.cursor, e)


def period(plan: Plan, ns: np.ndarray, ne: np.ndarray, n: int) -> float:
    w0 = ns[: plan.n_steady].min()
    w1 = ns[plan.n_steady] if plan.n_steady < len(ns) else ne[: plan.n_steady].max()
    return float(w1 - w0) / n


# ----------------------------------------------------------------------------- busy time

COMPUTE, COMM, COPY = "compute", "comm", "copy"


def op_class(cap: Capture, win: Window, idx: np.ndarray) -> np.ndarray:
    ops = cap.ops
    comm = np.array([("nccl" in cap.kname.get(int(n), "").lower()) for n in ops.name[idx]])
    comm = comm.astype(bool) if len(idx) else np.zeros(0, dtype=bool)
    out = np.where(np.isin(ops.kind[idx], (MEMCPY, MEMSET)), COPY, COMPUTE).astype(object)
    out[(comm & (ops.kind[idx] == KERNEL)) | win.staging[idx]] = COMM
    return out


def device_busy(cap: Capture, win: Window, dev: int) -> dict[str, float]:
    ops = cap.ops
    idx = np.flatnonzero((ops.dev == dev) & (ops.end > win.w0) & (ops.start < win.w1))
    cls = op_class(cap, win, idx)
    parts = {
        c: union(*clip(ops.start[idx[cls == c]], ops.end[idx[cls == c]], win.w0, win.w1))
        for c in (COMPUTE, COMM, COPY)
    }
    every = union(*clip(ops.start[idx], ops.end[idx], win.w0, win.w1))
    span = win.w1 - win.w0
    out = {"busy": total(*every) / span}
    for c, iv in parts.items():
        out[c] = total(*iv) / span
    out["exposed_comm"] = minus(parts[COMM], parts[COMPUTE]) / span
    out["exposed_copy"] = minus(parts[COPY], parts[COMPUTE]) / span
    gi = idx[ops.kind[idx] == GRAPH]
    out["graph_exec"] = total(*union(*clip(ops.start[gi], ops.end[gi], win.w0, win.w1))) / span
    return {k: round(v, 4) for k, v in out.items()}


def busy_by_device(cap: Capture, win: Window) -> dict[str, dict[str, float]]:
    devs = np.unique(cap.ops.dev[win.step_of >= 0])
    return {str(int(d)): device_busy(cap, win, int(d)) for d in devs}


# ----------------------------------------------------------------------------- per-step figures


def spread(x: np.ndarray) -> dict[str, float]:
    if not len(x):
        return {}
    return {
        "median": round(float(np.median(x))),
        "mean": round(float(np.mean(x))),
        "min": int(np.min(x)),
        "max": int(np.max(x)),
    }


def gpu_periods(win: Window, cap: Capture) -> np.ndarray:
    f = win.first.astype(float)
    if win.next_op >= 0:
        f = np.append(f, cap.ops.start[win.next_op])
    f = f[f >= 0]
    return np.diff(f)


def queue_depth(cap: Capture, idx: np.ndarray) -> float:
    idx = idx[cap.ops.api[idx] >= 0]
    if not len(idx):
        return 0.0
    return float(np.median(cap.ops.start[idx] - cap.api.end[cap.ops.api[idx]]))


OPT_RE = re.compile(r"multi_tensor_apply|fused_adam|fusedadam|_foreach_|adam|sgd|lamb", re.I)
OPT_KERNEL_RE = re.compile(
    r"elementwise_kernel|multi_tensor_apply|reduce_kernel|fused_adam|lerp|addc(mul|div)|foreach",
    re.I,
)
OPT_PHASE_RE = re.compile(r"optim|adam|sgd|opt[_ ]?step|update", re.I)


def optimizer_stats(cap: Capture, win: Window, ph: dict) -> dict[str, float]:
    ops, n = cap.ops, win.n
    k = np.flatnonzero((win.step_of >= 0) & (ops.kind == KERNEL))
    names = [cap.kname.get(int(x), "") for x in ops.name[k]]
    mta = sum("multi_tensor_apply" in s for s in names)
    out = {"multi_tensor_apply_per_step": round(mta / n, 1)}
    rng = optimizer_ranges(ph)
    if rng is not None:
        t = cap.api.start[ops.api[k]]
        inside = sum(in_ranges(int(x), rng) for x in t)
        out["optimizer_phase_kernels_per_step"] = round(inside / n, 1)
        out["per_param_kernels_per_step"] = round(max(inside - mta, 0) / n, 1)
    return out


def after_backward(cap: Capture, st: Steps, win: Window) -> dict[str, tuple]:
    """Without an NVTX optimizer phase: from the end of each step's last backward launch (a
    launch by the autograd thread, or a backward-named kernel), the run of element-wise,
    reduction and multi-tensor kernels the main thread launches next, up to its first other op
    (the next forward's GEMM, norm, embedding or input copy)."""
    ops, api = cap.ops, cap.api
    idx = np.flatnonzero((win.step_of >= 0) & (ops.api >= 0))
    a = ops.api[idx]
    names = [cap.kname.get(int(n), "") for n in ops.name[idx]]
    back = (api.tid[a] != st.tid) | np.array([bool(BACKWARD_RE.search(n)) for n in names])
    last = np.full(len(st.start), -1)
    np.maximum.at(last, win.step_of[idx[back]], api.end[a[back]])
    seq, _ = launch_sequence(cap, st.pid)
    seq = seq[api.tid[ops.api[seq]] == st.tid]
    t = api.start[ops.api[seq]]
    ends = [optimizer_end(cap, seq, int(np.searchsorted(t, x))) if x > 0 else -1 for x in last]
    ok = (last > 0) & (np.array(ends) > last)
    if not ok.any():
        return {}
    return {"optimizer (after backward, inferred)": (last[ok], np.array(ends)[ok])}


def optimizer_end(cap: Capture, seq: np.ndarray, k: int) -> int:
    """Start of the first launch from seq[k] on that is not an optimizer-like kernel."""
    ops, api = cap.ops, cap.api
    for o in seq[k:].tolist():
        if ops.kind[o] != KERNEL or not OPT_KERNEL_RE.search(cap.kname.get(int(ops.name[o]), "")):
            return int(api.start[ops.api[o]])
    return -1


def optimizer_ranges(ph: dict) -> tuple[np.ndarray, np.ndarray] | None:
    sel = [v for name, v in ph.items() if OPT_PHASE_RE.search(name)]
    if not sel:
        return None
    return union(np.concatenate([s for s, _ in sel]), np.concatenate([e for _, e in sel]))


def kernel_figures(cap: Capture, win: Window) -> dict[str, Any]:
    ops = cap.ops
    idx = np.flatnonzero(win.step_of >= 0)
    k = idx[ops.kind[idx] == KERNEL]
    kt = kernel_table(cap, idx)
    tot = float(sum(kt["precision"].values()))
    fb = float(sum(kt["fallback"].values()))
    top_fb = sorted(kt["fallback"].items(), key=lambda x: -x[1])[:3]
    return {
        "kernels_per_step": round(len(k) / win.n, 1),
        "mean_kernel_ns": round(float(np.mean(ops.end[k] - ops.start[k]))) if len(k) else 0,
        "graph_launches_per_step": round(int((ops.kind[idx] == GRAPH).sum()) / win.n, 1),
        "graph_node_kernels_per_step": round(int(ops.node[k].sum()) / win.n, 1),
        "precision_shares": shares(kt["precision"], tot),
        "library_shares": shares(kt["library"], tot),
        "fallback_gemm_share": round(fb / tot, 4) if tot else 0.0,
        "fallback_gemm_top": [n for n, _ in top_fb],
    }


def has_backward(cap: Capture, win: Window, ph: dict) -> bool:
    if any("backward" in name.lower() for name in ph):
        return True
    k = np.flatnonzero((win.step_of >= 0) & (cap.ops.kind == KERNEL))
    return any(BACKWARD_RE.search(cap.kname.get(int(n), "")) for n in np.unique(cap.ops.name[k]))


# ----------------------------------------------------------------------------- levers

LEVER_TEXT = {
    "cpu_bound": "CUDA graphs / torch.compile(mode='reduce-overhead') or a larger batch: "
    "the GPU stops waiting for per-op launches",
    "inference_launch_bound": "CUDA graphs / torch.compile for the inference loop",
    "tiny_optimizer_kernels": "a foreach=True or fused=True optimizer",
    "dataloader_starvation": "more DataLoader workers, persistent_workers, prefetching",
    "host_sync_per_step": "drop the per-step .item()/.cpu()/synchronize (keep values on the GPU)",
    "pageable_copy": "pin_memory=True and non_blocking=True copies",
    "copy_bound": "overlap host-device copies with compute (side stream, prefetch)",
    "fp32_no_tensor_cores": "TF32 (torch.set_float32_matmul_precision('high')) or bf16 autocast",
    "misaligned_gemm": "pad GEMM dimensions to multiples of 8/16 (native tensor-core kernels)",
    "exposed_comm": "overlap communication with compute (DDP buckets, FSDP prefetch)",
    "gpu_bound_healthy": "nothing big: the GPU is busy with efficient kernels",
    "graphs_untraced": "re-capture with --cuda-graph-trace=node to see the kernels inside graphs",
}
CPU_LEVERS = ("cpu_bound", "inference_launch_bound", "tiny_optimizer_kernels")
KERNEL_LEVERS = ("fp32_no_tensor_cores", "misaligned_gemm", "exposed_comm", "copy_bound")


def pinned_bandwidth(cap: Capture) -> float:
    ops = cap.ops
    m = (ops.kind == MEMCPY) & (ops.copy_kind == 1) & (ops.src_kind == 1) & (ops.nbytes >= 1 << 20)
    if m.any():
        return float(np.median(ops.nbytes[m] / np.maximum(ops.end[m] - ops.start[m], 1)))
    return 50.0 if cap.gpu.sm >= 90 else 24.0  # bytes per ns = GB/s


def scales(cap: Capture, plan: Plan) -> dict[str, np.ndarray]:
    ops = cap.ops
    o = plan.op
    names = [
        cap.kname.get(int(n), "") if k == KERNEL else "" for n, k in zip(ops.name[o], ops.kind[o])
    ]
    fp32 = np.array([precision(n) == "fp32" for n in names], dtype=bool)
    fb = np.array([fallback(n, cap.gpu.sm) for n in names], dtype=bool)
    pageable = (ops.kind[o] == MEMCPY) & (ops.copy_kind[o] == 1) & (ops.src_kind[o] == 0)
    pinned_ns = ops.nbytes[o] / pinned_bandwidth(cap)
    dur = np.maximum(ops.end[o] - ops.start[o], 1)
    return {
        "fp32": np.where(fp32, faster(dur, FP32_SPEEDUP) / dur, 1.0),
        "fallback": np.where(fb, faster(dur, FALLBACK_SPEEDUP) / dur, 1.0),
        "copy": np.where(pageable, np.minimum(pinned_ns / dur, 1.0), 1.0),
    }


def faster(dur: np.ndarray, speedup: float) -> np.ndarray:
    """New duration of a GEMM made `speedup` times faster, but not below a small-kernel floor."""
    return np.maximum(dur / speedup, np.minimum(dur, TC_FLOOR_NS))


def levers(cap: Capture, plan: Plan, st: Steps, ph: dict, fixed: bool) -> dict[str, Lever]:
    out = {k: replace(v, fixed_waits=fixed) for k, v in lever_set(cap, plan, st, ph).items()}
    return out


def lever_set(cap: Capture, plan: Plan, st: Steps, ph: dict) -> dict[str, Lever]:
    sc = scales(cap, plan)
    out = {
        "none": Lever("none"),
        "launch": Lever("launch", cpu_free=(st.start, st.end)),
        "dataloader_starvation": Lever("data", data_free=True),
        "comm_wait": Lever("comm", comm_free=True),
        "host_sync_per_step": Lever("sync", no_wait=(0,)),
        "pageable_copy": Lever(
            "copy", scale=sc["copy"], no_wait=(1,), handover_free=bool((sc["copy"] < 1).any())
        ),
        "fp32_no_tensor_cores": Lever("fp32", scale=sc["fp32"]),
        "misaligned_gemm": Lever("fallback", scale=sc["fallback"]),
    }
    rng = optimizer_ranges(ph)
    if rng is not None:
        out["tiny_optimizer_kernels"] = Lever("optimizer", cpu_free=rng)
    return out


def cuda_calls(cap: Capture, cpu: Cpu, st: Steps) -> float:
    """CUDA API calls per step on the launching threads inside the steady steps."""
    n = sum(int(((s >= st.start[0]) & (s < st.end[-1])).sum()) for s, _ in cpu.calls.values())
    return round(n / len(st.start), 1)


def loader_bound(cpu: Cpu, st: Steps, step_ns: float) -> bool:
    """Do data waits take >= 20 % of the step (the loader, not the loop, sets the pace)?"""
    s = np.clip(cpu.wait_s[~cpu.wait_comm], st.start[0], st.end[-1])
    e = np.clip(cpu.wait_e[~cpu.wait_comm], st.start[0], st.end[-1])
    per_step = (e - s).sum() / len(st.start)
    return bool(per_step >= LOADER_BOUND_SHARE * step_ns)


def estimates(
    cap: Capture, plan: Plan, st: Steps, ph: dict, n: int, fixed: bool
) -> dict[str, float]:
    if plan.n_steady == 0:
        return {}
    base = None
    out: dict[str, float] = {}
    for name, lev in levers(cap, plan, st, ph, fixed).items():
        t = period(plan, *replay(cap, plan, lev), n)
        if base is None:
            base = t
            out["replay_period_ns"] = t
            continue
        out[name] = max(0.0, base - t)
    return out


def candidates(
    est: dict[str, float], busy: dict[str, float], step_ns: float, backward: bool, fig: dict
) -> dict[str, float]:
    """Saving per step of each bottleneck class's lever."""
    c = {k: v for k, v in est.items() if k not in ("replay_period_ns", "launch", "comm_wait")}
    launch = est.get("launch", 0.0)
    opt = c.pop("tiny_optimizer_kernels", 0.0)
    per_param = fig.get("per_param_kernels_per_step", 0.0) > fig["multi_tensor_apply_per_step"]
    if opt >= 0.5 * launch and opt > 0 and per_param:
        c["tiny_optimizer_kernels"] = opt
    else:
        c["cpu_bound" if backward else "inference_launch_bound"] = launch
    gpu_comm = busy.get("exposed_comm", 0.0) * step_ns
    c["exposed_comm"] = max(gpu_comm, est.get("comm_wait", 0.0))
    if fig.get("pageable_share", 1.0) < 0.5:
        c["copy_bound"] = busy.get("exposed_copy", 0.0) * step_ns
        c.pop("pageable_copy", None)
    return c


def decide(c: dict[str, float], busy: dict[str, float], step_ns: float, fig: dict) -> tuple:
    """The bottleneck class, its saving per step, and the classes as good (see the docstring)."""
    top = max(c, key=lambda k: c[k])
    small = c[top] < HEALTHY_SHARE * step_ns
    graphs = busy.get("graph_exec", 0.0) >= 0.5 * max(busy.get("busy", 0.0), 1e-9)
    graphs = graphs and bool(fig.get("graph_trace_mode"))
    floor = max(NEAR_TIE * bar(c, top, fig), NEAR_FLOOR * step_ns)
    near = [k for k, v in c.items() if k != top and v >= floor]
    if graphs and (small or top in KERNEL_LEVERS):
        return "graphs_untraced", 0.0, [top, *near]
    if small and busy.get("busy", 0.0) >= 0.8:
        return "gpu_bound_healthy", 0.0, []
    healthy = bar(c, top, fig) < HEALTHY_SHARE * step_ns and busy.get("busy", 0.0) >= 0.7
    return top, c[top], near + ["gpu_bound_healthy"] * healthy + ["graphs_untraced"] * graphs


def bar(c: dict[str, float], top: str, fig: dict) -> float:
    """The saving a runner-up must reach to be as good: the top one's, less the nominal
    tracing overhead when the top lever is CPU-side (nsys inflates the CPU's costs)."""
    if top in CPU_LEVERS:
        return max(c[top] - fig.get("tracing_overhead_ns_per_step", 0.0), 0.0)
    return c[top]


def lever_text(bottleneck: str, split: dict[str, float], fig: dict) -> str:
    if bottleneck not in ("cpu_bound", "inference_launch_bound"):
        return LEVER_TEXT.get(bottleneck, "")
    if split.get("cpu_work", 0) > split.get("launch", 0):
        return (
            "CPU work in the loop between launches (Python, CPU-side data preparation): "
            "move it off the training thread (DataLoader workers, on the GPU)"
        )
    if fig.get("graph_launches_per_step", 0) > 0:
        return "the step already replays CUDA graphs: capture more of it, or a larger batch"
    return LEVER_TEXT[bottleneck]


# ----------------------------------------------------------------------------- driver


def copy_figures(cap: Capture, win: Window) -> dict[str, Any]:
    ops = cap.ops
    idx = np.flatnonzero((win.step_of >= 0) & (ops.kind == MEMCPY))
    h2d = idx[ops.copy_kind[idx] == 1]
    dur = ops.end[h2d] - ops.start[h2d]
    page = ops.src_kind[h2d] == 0
    return {
        "h2d_ns_per_step": round(int(dur.sum()) / win.n),
        "h2d_bytes_per_step": round(int(ops.nbytes[h2d].sum()) / win.n),
        "pageable_share": round(float(dur[page].sum() / dur.sum()), 4) if dur.sum() else 0.0,
        "d2h_per_step": round(int((ops.copy_kind[idx] == 2).sum()) / win.n, 1),
    }


@dataclass
class Result:
    """Everything the report needs."""

    st: Steps
    win: Window
    cpu: Cpu
    gaps: list[Gap]
    phases: dict[str, tuple[np.ndarray, np.ndarray]]
    busy: dict[str, dict[str, float]]
    fig: dict[str, Any]
    replay: dict[str, float]
    classes: dict[str, float]
    verdict: tuple[str, float, list[str]]


def analyze(cap: Capture) -> dict[str, Any]:
    st = find_steps(cap)
    if st is None or len(st.start) == 0:
        return {"error": "no training steps found (no NVTX step ranges, no repeating GPU work)"}
    win = make_window(cap, st)
    if win is None:
        return {"error": "the steady steps launched no GPU work", "step_source": st.source}
    steady = np.flatnonzero(win.step_of >= 0)
    cpu = cpu_side(cap, win, st.pid)
    ph = phases(cap, st)
    if optimizer_ranges(ph) is None:
        ph.update(after_backward(cap, st, win))
    busy = busy_by_device(cap, win)
    fig = kernel_figures(cap, win) | copy_figures(cap, win) | optimizer_stats(cap, win, ph)
    fig["graph_trace_mode"] = bool((cap.ops.kind[steady] == GRAPH).any())
    fig["loader_bound"] = loader_bound(cpu, st, win.step_ns)
    fig["cuda_calls_per_step"] = cuda_calls(cap, cpu, st)
    fig["tracing_overhead_ns_per_step"] = fig["cuda_calls_per_step"] * TRACE_NS_PER_CALL
    est = estimates(cap, make_plan(cap, win, cpu, st), st, ph, win.n, fig["loader_bound"])
    main = busy[str(win.dev)]
    backward = has_backward(cap, win, ph) or fig["graph_trace_mode"]
    cand = candidates(est, main, win.step_ns, backward, fig)
    verdict = decide(cand, main, win.step_ns, fig)
    res = Result(st, win, cpu, idle_gaps(cap, win, cpu), ph, busy, fig, est, cand, verdict)
    return report_steps(cap, res) | report_gpu(cap, res) | report_verdict(res)


def report_steps(cap: Capture, r: Result) -> dict[str, Any]:
    st, win = r.st, r.win
    idx = np.flatnonzero(win.step_of >= 0)
    span = int(cap.ops.end[idx].max()) - int(cap.ops.start[idx].min())
    return {
        "gpu": cap.gpu.name,
        "step_source": st.source,
        "n_steady": win.n,
        "steps_found": st.n_found,
        "steps_dropped": st.dropped,
        "steady_labels": f"{st.labels[0]} .. {st.labels[-1]}",
        "device": win.dev,
        "step_ns": round(win.step_ns),
        "gpu_period_spread_ns": spread(gpu_periods(win, cap)),
        "gpu_span_ns": round(span / win.n),
        "cpu_step_median_ns": round(float(np.median(st.end - st.start))),
        "cpu_step_spread_ns": spread(st.end - st.start),
        "queue_depth_ns": round(queue_depth(cap, idx)),
    }


def wait_calls(r: Result) -> dict[str, int]:
    waits: Counter[str] = Counter()
    cpu, st = r.cpu, r.st
    for name, s, e, c in zip(cpu.wait_name, cpu.wait_s, cpu.wait_e, cpu.wait_comm):
        if st.start[0] <= s < st.end[-1]:
            waits[("comm: " if c else "") + name] += int(e - s)
    return {k: round(v / r.win.n) for k, v in waits.most_common(6)}


def report_gpu(cap: Capture, r: Result) -> dict[str, Any]:
    main = r.busy[str(r.win.dev)]
    fig = dict(r.fig)
    return {
        "busy_share": main["busy"],
        "idle_share": round(1 - main["busy"], 4),
        "busy_by_device": r.busy,
        "idle_split_ns_per_step": idle_split(r.gaps, r.win.n),
        "data_wait_calls_ns_per_step": wait_calls(r),
        "phases_ns_per_step": phase_idle(r.gaps, r.phases, r.win.n),
        "precision_shares": fig.pop("precision_shares"),
        "fallback_gemm_share": fig.pop("fallback_gemm_share"),
        "kernels": fig,
    }


def report_verdict(r: Result) -> dict[str, Any]:
    bottleneck, saving, also = r.verdict
    ranked = sorted(r.classes.items(), key=lambda x: -x[1])
    return {
        "replay_ns_per_step": {k: round(v) for k, v in r.replay.items()},
        "class_savings_ns_per_step": {k: round(v) for k, v in ranked},
        "bottleneck": bottleneck,
        "also_acceptable": also,
        "lever": lever_text(bottleneck, idle_split(r.gaps, r.win.n), r.fig),
        "est_saving_ns": round(saving),
        "est_saving_pct": round(100 * saving / r.win.step_ns, 1) if r.win.step_ns else 0.0,
    }


def self_check() -> None:
    """Refuse to run if this file imports the tool it checks."""
    text = Path(__file__).read_text()
    pat = rf"^\s*(import|from)\s+{CAPTURE_TAG}\b"
    if re.search(pat, text, re.M):
        raise SystemExit(f"{__file__} imports {CAPTURE_TAG}: the ground truth must be independent")


def run(path: str) -> dict[str, Any]:
    with opened(path) as db:
        out = analyze(load(db))
    out["report"] = Path(path).name
    return out


def text(d: dict[str, Any]) -> str:
    if "error" in d:
        return f"{d['report']}: {d['error']}"
    return "\n".join([f"{d['report']}  ({d['gpu']})", *text_lines(d)])


def ms_list(d: dict[str, float]) -> str:
    return ", ".join(f"{k} {v / 1e6:.2f}" for k, v in d.items() if v)


def text_lines(d: dict[str, Any]) -> list[str]:
    also = f"; as good: {', '.join(d['also_acceptable'])}" if d["also_acceptable"] else ""
    return [
        f"  steps: {d['step_source']}, {d['n_steady']} steady ({d['steady_labels']})",
        f"  step {d['step_ns'] / 1e6:.2f} ms (GPU period), CPU median "
        f"{d['cpu_step_median_ns'] / 1e6:.2f} ms, queue depth {d['queue_depth_ns'] / 1e3:.0f} us",
        f"  GPU busy {100 * d['busy_share']:.1f} %; idle ms/step: "
        + ms_list(d["idle_split_ns_per_step"]),
        f"  precision {d['precision_shares']}; fallback GEMMs {d['fallback_gemm_share']:.1%}",
        "  class savings ms/step: " + ms_list(d["class_savings_ns_per_step"]),
        f"  bottleneck: {d['bottleneck']} -> {d['lever']} "
        f"(saves ~{d['est_saving_ns'] / 1e6:.2f} ms/step, {d['est_saving_pct']} %){also}",
    ]


def main(argv: list[str] | None = None) -> int:
    self_check()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+", help="nsys SQLite export(s), .sqlite or .sqlite.xz")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    results = [run(p) for p in args.reports]
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results, indent=1))
    else:
        print("\n".join(text(r) for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
