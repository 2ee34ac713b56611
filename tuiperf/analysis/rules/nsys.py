"""The `nsys analyze` expert-system rules, with nsys's definitions and defaults.

Each rule flags exactly the rows `nsys analyze` prints for it (FORMATS.md §4), but keeps all
of them as evidence instead of the top 50. Where nsys's definition has a quirk, the quirk is
kept on purpose and said in a comment: parity first, interpretation in rules/pytorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal

import numpy as np

from tuiperf.analysis import fixes
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import (
    SCOPE_EVENTS,
    SCOPE_REPORT,
    SOURCE_NSYS,
    Evidence,
    Finding,
    Fix,
    Scope,
    Severity,
    Skip,
)
from tuiperf.analysis.intervals import overlap_sum
from tuiperf.model import arrays as A
from tuiperf.model import fmt

#: nsys analyze defaults (rule usage texts of Nsight Systems 2025.3: gpu_gaps `gap=500` ms,
#: gpu_time_util `threshold=50` % and `chunks=30`, valid 1..1000)
DEFAULT_GAP_MS = 500
DEFAULT_UTIL_THRESHOLD_PCT = 50
DEFAULT_UTIL_CHUNKS = 30
#: cuda_memcpy_sync leaves out host-to-device copies of at most 64 KB: the CUDA runtime
#: stages those and returns at once (nsys rule text; CUDA "API synchronization behavior")
SMALL_H2D_BYTES = 64 * 1024
#: PROFILER_OVERHEAD rows that gpu_gaps/gpu_time_util count as GPU busy (nsys gpustats)
CUDA_OVERHEAD_NAMES = (
    "CUDA profiling overhead",
    "CUDA profiling data flush overhead",
    "CUDA profiling stop overhead",
)

_ASYNC_MEMCPY = A.like("cudaMemcpy%Async%")
_SYNC_MEMCPY = A.like("cudaMemcpy%")
_MEMSET = A.like("cudaMemset%")
_ASYNC_ANY = A.like("%async%")
_SYNC_API = (A.like("cudaDeviceSynchronize%"), A.like("cudaStreamSynchronize%"))


@dataclass(frozen=True)
class NsysOptions:
    gap_ms: int = DEFAULT_GAP_MS
    util_threshold_pct: int = DEFAULT_UTIL_THRESHOLD_PCT
    util_chunks: int = DEFAULT_UTIL_CHUNKS


RuleFn = Callable[[Ctx, NsysOptions], list[Finding]]


# -- helpers -----------------------------------------------------------------------------
def _api_matching(ctx: Ctx, keep: Callable[[str], bool]) -> np.ndarray:
    api = ctx.table("api")
    c, values = A.codes(api, "name")
    hit = np.array([keep(v) for v in values] + [False], bool)
    return np.flatnonzero(hit[c]) if len(c) else np.zeros(0, np.int64)


def _join_api(
    ctx: Ctx, table: str, rows: np.ndarray, api_rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (gpu row, api row) by correlation id alone, as nsys joins (pid is not used:
    in a multi-process report equal ids of two processes both match, as in nsys)."""
    gcorr = A.ints(ctx.table(table), "correlation_id", -1)[rows]
    acorr = A.ints(ctx.table("api"), "correlation_id", -2)[api_rows]
    li, rj = A.join_keys(gcorr, acorr)
    return rows[li], api_rows[rj]


def _order_desc(duration: np.ndarray, start: np.ndarray) -> np.ndarray:
    """nsys's ORDER BY duration DESC; ties by start (the order SQLite scans them in)."""
    return np.lexsort((start, -duration))


def _steps_note(ctx: Ctx, times: np.ndarray) -> tuple[int, int]:
    """(how many of `times` fall before the first training step, how many inside steps)."""
    steps = ctx.steps
    if not steps.found or len(times) == 0:
        return 0, 0
    before = int((times < steps.first_start).sum())
    inside = int((steps.index_of(times) >= 0).sum())
    return before, inside


def _gpu_cols(ctx: Ctx, table: str, rows: np.ndarray) -> dict[str, object]:
    t = ctx.table(table)
    green = A.ints(t, "green_context", -1)[rows]
    return {
        "pid": A.ints(t, "pid", -1)[rows],
        "device": A.ints(t, "device", -1)[rows],
        "context": A.ints(t, "context", -1)[rows],
        "green_context": [None if g <= 0 else int(g) for g in green],
        "stream": A.ints(t, "stream", -1)[rows],
    }


_GPU_HEADERS = {
    "pid": "PID",
    "device": "Device ID",
    "context": "Context ID",
    "green_context": "Green Context ID",
    "stream": "Stream ID",
    "api": "API Name",
}


def _finding(
    rule: str,
    sev: Severity,
    message: str,
    ev: Evidence,
    scope: Scope | None = None,
    metrics: dict[str, object] | None = None,
    fix: Fix | None = None,
) -> Finding:
    return Finding(
        rule=rule,
        title=fixes.TITLES[rule],
        severity=sev,
        message=message,
        fix=fix or fixes.fix_for(rule),
        scope=scope or Scope(SCOPE_EVENTS, fmt.plural(len(ev), "event")),
        source=SOURCE_NSYS,
        count=len(ev),
        evidence=ev,
        metrics=metrics or {},
    )


def _need(ctx: Ctx, *tables: str) -> None:
    missing = [t for t in tables if not ctx.trace.has(t)]
    if missing:
        raise Skip(f"no {', '.join(missing)} events in this report")


# -- memcpy / memset ---------------------------------------------------------------------
def _memcpy_rows(
    ctx: Ctx, rule: str, memcpy_rows: np.ndarray, api_rows: np.ndarray
) -> tuple[Evidence, np.ndarray]:
    m, a = _join_api(ctx, "memcpy", memcpy_rows, api_rows)
    t = ctx.table("memcpy")
    dur, start = A.ints(t, "duration")[m], A.ints(t, "start")[m]
    order = _order_desc(dur, start)
    m, a, dur, start = m[order], a[order], dur[order], start[order]
    extra = {
        "src_kind": A.strings(t, "src_kind")[m],
        "dst_kind": A.strings(t, "dst_kind")[m],
        "bytes": A.ints(t, "bytes")[m],
        **_gpu_cols(ctx, "memcpy", m),
        "api": A.strings(ctx.table("api"), "name")[a],
    }
    headers = {"src_kind": "Src Kind", "dst_kind": "Dst Kind", "bytes": "Bytes", **_GPU_HEADERS}
    return Evidence.build("memcpy", m, start, dur, extra, headers), ctx.launch_time("memcpy")[m]


def cuda_memcpy_async(ctx: Ctx, opts: NsysOptions) -> list[Finding]:
    """Async memcpy API calls whose copy touches pageable host memory (runs synchronously)."""
    _need(ctx, "memcpy", "api")
    t = ctx.table("memcpy")
    pageable = (A.strings(t, "src_kind") == "Pageable") | (A.strings(t, "dst_kind") == "Pageable")
    api_rows = _api_matching(ctx, lambda n: bool(_ASYNC_MEMCPY.match(n)))
    ev, launched = _memcpy_rows(ctx, "cuda_memcpy_async", np.flatnonzero(pageable), api_rows)
    if len(ev) == 0:
        return []
    before, inside = _steps_note(ctx, launched)
    total = int(A.as_int64(ev.rows["duration_ns"]).sum())
    msg = (
        f"{len(ev):,} cudaMemcpy*Async calls copy from or to pageable host memory, so each "
        f"one blocks the CPU like a synchronous copy ({fmt.duration(total)} of copies)."
    )
    sev, fix = Severity.WARNING, None
    if ctx.steps.found:
        msg += f" {before:,} happen before the first training step, {inside:,} inside steps."
        if inside == 0:
            msg += " All are start-up copies (model.to(), buffers): harmless."
            sev, fix = Severity.INFO, fixes.START_UP_COPIES
    return [
        _finding(
            "cuda_memcpy_async",
            sev,
            msg,
            ev,
            fix=fix,
            metrics={
                "copies": len(ev),
                "before_first_step": before,
                "inside_steps": inside,
                "copy_time_ns": total,
            },
        )
    ]


def cuda_memcpy_sync(ctx: Ctx, opts: NsysOptions) -> list[Finding]:
    """Synchronous cudaMemcpy* calls (the CPU waits for each), except small host-to-device."""
    _need(ctx, "memcpy", "api")
    t = ctx.table("memcpy")
    small_h2d = (A.strings(t, "copy_kind") == "Host-to-Device") & (
        A.ints(t, "bytes") <= SMALL_H2D_BYTES
    )
    api_rows = _api_matching(ctx, lambda n: bool(_SYNC_MEMCPY.match(n)) and not _ASYNC_ANY.match(n))
    ev, _ = _memcpy_rows(ctx, "cuda_memcpy_sync", np.flatnonzero(~small_h2d), api_rows)
    if len(ev) == 0:
        return []
    total = int(A.as_int64(ev.rows["duration_ns"]).sum())
    msg = (
        f"{len(ev):,} synchronous cudaMemcpy calls block the CPU until each copy is done "
        f"({fmt.duration(total)} of copies)."
    )
    return [
        _finding(
            "cuda_memcpy_sync",
            Severity.WARNING,
            msg,
            ev,
            metrics={"copies": len(ev), "copy_time_ns": total},
        )
    ]


def cuda_memset_sync(ctx: Ctx, opts: NsysOptions) -> list[Finding]:
    """Synchronous cudaMemset on pinned or managed memory."""
    _need(ctx, "memset", "api")
    t = ctx.table("memset")
    kind = A.strings(t, "mem_kind")
    rows = np.flatnonzero((kind == "Pinned") | (kind == "Managed"))
    api_rows = _api_matching(ctx, lambda n: bool(_MEMSET.match(n)) and not _ASYNC_ANY.match(n))
    m, a = _join_api(ctx, "memset", rows, api_rows)
    if len(m) == 0:
        return []
    dur, start = A.ints(t, "duration")[m], A.ints(t, "start")[m]
    order = _order_desc(dur, start)
    m, a = m[order], a[order]
    extra = {
        "mem_kind": kind[m],
        "bytes": A.ints(t, "bytes")[m],
        **_gpu_cols(ctx, "memset", m),
        "api": A.strings(ctx.table("api"), "name")[a],
    }
    ev = Evidence.build(
        "memset",
        m,
        start[order],
        dur[order],
        extra,
        {"mem_kind": "Memory Kind", "bytes": "Bytes", **_GPU_HEADERS},
    )
    msg = f"{len(ev):,} synchronous cudaMemset calls on pinned or managed memory block the CPU."
    return [_finding("cuda_memset_sync", Severity.WARNING, msg, ev)]


# -- synchronisation APIs ----------------------------------------------------------------
def cuda_api_sync(ctx: Ctx, opts: NsysOptions) -> list[Finding]:
    """Every cudaDeviceSynchronize / cudaStreamSynchronize call."""
    _need(ctx, "api")
    rows = _api_matching(ctx, lambda n: any(p.match(n) for p in _SYNC_API))
    if len(rows) == 0:
        return []
    api = ctx.table("api")
    dur, start = A.ints(api, "duration")[rows], A.ints(api, "start")[rows]
    order = _order_desc(dur, start)
    rows = rows[order]
    extra = {
        "pid": A.ints(api, "pid", -1)[rows],
        "tid": A.ints(api, "tid", -1)[rows],
        "api": A.strings(api, "name")[rows],
    }
    ev = Evidence.build(
        "api",
        rows,
        start[order],
        dur[order],
        extra,
        {"pid": "PID", "tid": "TID", "api": "API Name"},
    )
    total = int(dur.sum())
    _before, inside = _steps_note(ctx, start)
    msg = (
        f"{len(ev):,} device/stream synchronisation calls block the CPU for "
        f"{fmt.duration(total)} in all."
    )
    if ctx.steps.found:
        msg += f" {inside:,} are inside training steps."
    return [
        _finding(
            "cuda_api_sync",
            Severity.INFO,
            msg,
            ev,
            metrics={"calls": len(ev), "blocked_ns": total, "inside_steps": inside},
        )
    ]


# -- GPU idle time -----------------------------------------------------------------------
@dataclass
class _Group:
    pid: int
    device: int
    start: np.ndarray
    end: np.ndarray
    context: np.ndarray


def _gpu_groups(ctx: Ctx) -> list[_Group]:
    """Per (pid, device): GPU ops with start > 0, plus the CUDA profiling-overhead rows of
    that pid strictly inside [first op start, last op end] (copied to every device of the
    process, as nsys does: an overhead on one thread stalls all GPUs of the process)."""
    cached = ctx.__dict__.get("_nsys_gpu_groups")
    if cached is None:
        cached = ctx.__dict__["_nsys_gpu_groups"] = _build_groups(ctx)
    return cached


def _build_groups(ctx: Ctx) -> list[_Group]:
    ops = ctx.nsys_gpu_ops
    keep = ops.start > 0
    pid, dev = ops.pid[keep], ops.device[keep]
    start, end, cx = ops.start[keep], ops.end[keep], ops.context[keep]
    ov = ctx.table("overhead")
    ov_mask = np.isin(A.strings(ov, "name"), CUDA_OVERHEAD_NAMES)
    ov_start, ov_end = A.ints(ov, "start")[ov_mask], A.ints(ov, "end")[ov_mask]
    ov_pid = A.ints(ov, "pid", -1)[ov_mask]
    key = (pid << 16) | (dev & 0xFFFF)
    order = np.argsort(key, kind="stable")
    _, first = np.unique(key[order], return_index=True)
    groups = []
    for sel in np.split(order, first[1:]):
        p, d = int(pid[sel[0]]), int(dev[sel[0]])
        s, e, c = start[sel], end[sel], cx[sel]
        lo, hi = s.min(), e.max()
        o = (ov_pid == p) & (ov_start > lo) & (ov_end < hi)
        # overhead rows take the range's context id (one of the group's; nsys's is arbitrary)
        c_ov = np.full(int(o.sum()), c[0])
        groups.append(
            _Group(
                p,
                d,
                np.concatenate([s, ov_start[o]]),
                np.concatenate([e, ov_end[o]]),
                np.concatenate([c, c_ov]),
            )
        )
    return groups


def gpu_gaps(ctx: Ctx, opts: NsysOptions) -> list[Finding]:
    """Stretches where a GPU is idle longer than `gap_ms`, inside each (pid, device) span."""
    if ctx.nsys_gpu_ops.start.size == 0:
        raise Skip("no GPU operations in this report")
    threshold = opts.gap_ms * 1_000_000
    cols: dict[str, list[int]] = {k: [] for k in ("start", "dur", "pid", "device", "context")}
    for g in _gpu_groups(ctx):
        # nsys pairs the j-th smallest end with the (j+1)-th smallest start, each sorted on
        # its own: a long op that spans a short gap still leaves that gap reported.
        s = np.sort(g.start)
        eo = np.argsort(g.end, kind="stable")
        e, c = g.end[eo], g.context[eo]
        dur = s[1:] - e[:-1]
        hit = np.flatnonzero((dur > threshold) & (e[:-1] < s[1:]))
        cols["start"] += e[hit].tolist()
        cols["dur"] += dur[hit].tolist()
        cols["pid"] += [g.pid] * len(hit)
        cols["device"] += [g.device] * len(hit)
        cols["context"] += c[hit].tolist()
    if not cols["start"]:
        return []
    start, dur = np.array(cols["start"]), np.array(cols["dur"])
    order = _order_desc(dur, start)
    extra = {k: np.array(cols[k])[order] for k in ("pid", "device", "context")}
    ev = Evidence.build(
        "",
        None,
        start[order],
        dur[order],
        extra,
        {"pid": "PID", "device": "Device ID", "context": "Context ID"},
    )
    total = int(dur.sum())
    before, _inside = _steps_note(ctx, start)
    msg = (
        f"{len(ev):,} stretches where a GPU sat idle for more than {opts.gap_ms} ms "
        f"({fmt.duration(total)} in all)."
    )
    sev = Severity.WARNING
    if ctx.steps.found:
        msg += f" {before:,} begin before the first training step (start-up)."
        if before == len(ev):
            sev = Severity.INFO
    return [
        _finding(
            "gpu_gaps",
            sev,
            msg,
            ev,
            Scope(SCOPE_REPORT),
            metrics={"gaps": len(ev), "idle_ns": total, "gap_ms": opts.gap_ms},
        )
    ]


def sqlite_round1(x: float) -> float:
    """SQLite's round(x, 1): add 0.05 to the double, keep one decimal (printf-style)."""
    v = Decimal(x + 0.05) if x >= 0 else -Decimal(-x + 0.05)
    return float(v.quantize(Decimal("0.1"), rounding=ROUND_DOWN))


def _low_chunks(g: _Group, chunks: int, threshold: int) -> list[tuple[int, int, float]]:
    """(start, duration, in-use %) of the merged runs of chunks below `threshold` %."""
    lo, hi = int(g.start.min()), int(g.end.max())
    size = float(math.ceil(float(hi - lo) / chunks))
    cs = np.array([lo + i * size for i in range(chunks)], dtype=np.float64)
    ce = np.minimum(cs + size, hi)
    valid = cs < ce
    cs_i, ce_i = cs[valid].astype(np.int64), ce[valid].astype(np.int64)
    ids = np.flatnonzero(valid)
    width = ce_i - cs_i
    pct = overlap_sum(g.start, g.end, cs_i, ce_i) / width * 100.0
    low = pct < threshold
    ids, cs_i, ce_i, width, pct = ids[low], cs_i[low], ce_i[low], width[low], pct[low]
    out = []
    run = ids - np.arange(len(ids))  # consecutive chunk ids share this value
    for r in np.unique(run):
        sel = run == r
        w = width[sel]
        avg = sqlite_round1(float((w * pct[sel]).sum() / w.sum()))
        out.append((int(cs_i[sel].min()), int(ce_i[sel].max() - cs_i[sel].min()), avg))
    return out


def gpu_time_util(ctx: Ctx, opts: NsysOptions) -> list[Finding]:
    """Regions where a GPU's time utilisation is below the threshold (chunked, merged)."""
    if ctx.nsys_gpu_ops.start.size == 0:
        raise Skip("no GPU operations in this report")
    if not 1 <= opts.util_chunks <= 1000:
        raise ValueError("chunks must be between 1 and 1000")
    rows = []
    for g in _gpu_groups(ctx):
        for c_start, c_dur, c_pct in _low_chunks(g, opts.util_chunks, opts.util_threshold_pct):
            rows.append((c_pct, c_dur, c_start, g.pid, g.device, int(g.context[0])))
    if not rows:
        return []
    rows.sort(key=lambda r: (r[0], r[1]))  # nsys: ORDER BY average, duration
    pct, dur, start, pid, dev, cx = (np.array(c) for c in zip(*rows, strict=True))
    ev = Evidence.build(
        "",
        None,
        start,
        dur,
        {"in_use_pct": pct, "pid": pid, "device": dev, "context": cx},
        {"in_use_pct": "In-Use (%)", "pid": "PID", "device": "Device ID", "context": "Context ID"},
    )
    low_ns = int(dur.sum())
    msg = (
        f"{fmt.plural(len(ev), 'region')} ({fmt.duration(low_ns)}) where the GPU was busy less "
        f"than {opts.util_threshold_pct}% of the time, averaging {float(pct.min()):.1f}% at the "
        "lowest."
    )
    return [
        _finding(
            "gpu_time_util",
            Severity.INFO,
            msg,
            ev,
            Scope(SCOPE_REPORT),
            metrics={
                "regions": len(ev),
                "low_util_ns": low_ns,
                "threshold_pct": opts.util_threshold_pct,
                "chunks": opts.util_chunks,
            },
        )
    ]


#: rule id -> function, in the order `nsys analyze` runs them
RULES: dict[str, RuleFn] = {
    "cuda_memcpy_async": cuda_memcpy_async,
    "cuda_memcpy_sync": cuda_memcpy_sync,
    "cuda_memset_sync": cuda_memset_sync,
    "cuda_api_sync": cuda_api_sync,
    "gpu_gaps": gpu_gaps,
    "gpu_time_util": gpu_time_util,
}
