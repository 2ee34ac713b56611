"""The CPU operator summary of a torch.profiler trace (TensorBoard's Operator view).

Per op name (nvtx rows in domain `cpu_op`): calls, host total time (sum of the
ranges), host self time (each range less its direct children on the same thread,
ops and user annotations alike), and the GPU time of the work it launched: GPU
self = kernels, memcpys and memsets owned by this op; GPU total adds the GPU self
time of every range nested inside it.

A GPU op's owner is the cpu_op whose Kineto `External id` its launching API call
(joined on the correlation id) carries, or, without the call, the GPU op itself
carries. Only where neither names a cpu_op of the trace is it found by time: the
innermost range enclosing the launching call on its thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model import arrays as A
from tuiperf.model.arrays import from_strings
from tuiperf.model.trace import Trace
from tuiperf.summaries.stats import Column, StatsTable

REPORT = "op_sum"
OP_DOMAIN = "cpu_op"
CPU_DOMAINS = ("cpu_op", "user_annotation")

COLUMNS = [
    Column("Time (%)", "self_pct", "pct"),  # share of all ops' host self time
    Column("Host Self (ns)", "self_ns", "int"),
    Column("Host Total (ns)", "total_ns", "int"),
    Column("Calls", "count", "int"),
    Column("Avg Host Self (ns)", "avg_self_ns", "f1"),
    Column("Avg Host Total (ns)", "avg_total_ns", "f1"),
    Column("GPU Self (ns)", "gpu_self_ns", "int"),
    Column("GPU Total (ns)", "gpu_total_ns", "int"),
    Column("Name", "name", "str"),
]


@dataclass
class Ranges:
    """CPU ranges sorted by thread, start, end descending; parent = row index or -1."""

    thread: np.ndarray
    start: np.ndarray
    end: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    is_op: np.ndarray
    names: np.ndarray  # object array of texts
    threads: np.ndarray  # (pid, tid) pairs, index = thread code
    ext: np.ndarray  # Kineto `External id`, -1 where there is none


def cpu_ranges(trace: Trace) -> Ranges:
    t = trace.table("nvtx")
    if t.num_rows:
        dom = t["domain"].cast(pa.string())
        domains = from_strings(list(CPU_DOMAINS))  # (no pandas: model/arrays.py)
        t = t.filter(pc.and_(pc.is_in(dom, value_set=domains), pc.is_valid(t["end"])))
    pid = _np(t["pid"], -1)
    tid = _np(t["tid"], -1)
    pairs = np.stack([pid, tid], axis=1) if len(pid) else np.zeros((0, 2), np.int64)
    threads, code = np.unique(pairs, axis=0, return_inverse=True)
    code = code.ravel()
    start, end = _np(t["start"], 0), _np(t["end"], 0)
    order = np.lexsort((-end, start, code))
    depth = _np(t["depth"], 0)[order]
    codes, labels = A.codes(t, "domain")
    is_op = np.isin(codes, [i for i, label in enumerate(labels) if label == OP_DOMAIN])
    rows = Ranges(
        thread=code[order], start=start[order], end=end[order], depth=depth,
        parent=np.full(len(order), -1, np.int64),
        is_op=is_op[order],
        names=np.array(t["text"].cast(pa.string()).to_pylist(), dtype=object)[order],
        threads=threads, ext=_ints(t, "external_id")[order],
    )  # fmt: skip
    rows.parent = _parents(rows)
    return rows


def _np(col: pa.ChunkedArray, fill: int) -> np.ndarray:
    return A.as_int64(col, fill)


def _ints(t: pa.Table, key: str, fill: int = -1) -> np.ndarray:
    """Column `key` as int64 (`fill` for nulls), all `fill` where the table lacks it."""
    if key not in t.column_names:
        return np.full(t.num_rows, fill, np.int64)
    return _np(t[key], fill)


def _parents(r: Ranges) -> np.ndarray:
    """The nearest earlier row one level up on the same thread (rows are nested)."""
    parent = np.full(len(r.depth), -1, np.int64)
    for d in range(1, int(r.depth.max(initial=0)) + 1):
        up = np.flatnonzero(r.depth == d - 1)
        here = np.flatnonzero(r.depth == d)
        j = np.searchsorted(up, here) - 1
        ok = j >= 0
        cand = up[np.maximum(j, 0)]
        ok &= r.thread[cand] == r.thread[here]
        parent[here[ok]] = cand[ok]
    return parent


def host_self(r: Ranges) -> np.ndarray:
    dur = r.end - r.start
    child = np.flatnonzero(r.parent >= 0)
    inner = np.bincount(r.parent[child], weights=dur[child], minlength=len(dur))
    return np.maximum(dur - inner.astype(np.int64), 0)


def gpu_self(trace: Trace, r: Ranges) -> np.ndarray:
    """GPU time owned by each range (see the module docstring)."""
    out = np.zeros(len(r.start), np.int64)
    if len(r.start) == 0:
        return out
    corr, dur, gpid, ext = _gpu_work(trace)
    api = trace.table("api")
    call = launching_call(api, corr, gpid)
    has = call >= 0
    api_ext = _ints(api, "external_id")[call[has]]
    ext[has] = np.where(api_ext >= 0, api_ext, ext[has])
    owner = by_external_id(r, ext)
    late = np.flatnonzero(has & (owner < 0))
    if len(late):
        at = call[late]
        owner[late] = innermost(r, _np(api["pid"], -1)[at], _np(api["tid"], -1)[at],
                                _np(api["start"], 0)[at])  # fmt: skip
    ok = owner >= 0
    np.add.at(out, owner[ok], dur[ok])
    return out


def launching_call(api: pa.Table, corr: np.ndarray, pid: np.ndarray) -> np.ndarray:
    """Row of the API call with each correlation id (and pid, where known), or -1."""
    out = np.full(len(corr), -1, np.int64)
    if api.num_rows == 0 or len(corr) == 0:
        return out
    a_corr, a_pid = _np(api["correlation_id"], -1), _np(api["pid"], -1)
    order = np.argsort(a_corr, kind="stable")
    row = order[np.minimum(np.searchsorted(a_corr[order], corr), len(order) - 1)]
    hit = (a_corr[row] == corr) & (corr >= 0) & ((pid < 0) | (a_pid[row] == pid))
    out[hit] = row[hit]
    return out


def by_external_id(r: Ranges, ext: np.ndarray) -> np.ndarray:
    """For each External id, the cpu_op row that carries it, or -1."""
    out = np.full(len(ext), -1, np.int64)
    rows = np.flatnonzero(r.is_op & (r.ext >= 0))
    if len(rows) == 0:
        return out
    order = rows[np.argsort(r.ext[rows], kind="stable")]
    keys = r.ext[order]
    pos = np.minimum(np.searchsorted(keys, ext), len(keys) - 1)
    hit = (keys[pos] == ext) & (ext >= 0)
    out[hit] = order[pos[hit]]
    return out


def _gpu_work(trace: Trace) -> tuple[np.ndarray, ...]:
    """Correlation id, duration, launching pid and External id (-1: unknown) of all GPU work."""
    keys = (("correlation_id", -1), ("duration", 0), ("pid", -1), ("external_id", -1))
    cols: list[list[np.ndarray]] = [[] for _ in keys]
    for name in ("kernels", "memcpy", "memset"):
        t = trace.table(name)
        if t.num_rows:
            for out, (key, fill) in zip(cols, keys, strict=True):
                out.append(_ints(t, key, fill))
    return tuple(np.concatenate(c) if c else np.zeros(0, np.int64) for c in cols)


def innermost(r: Ranges, pid: np.ndarray, tid: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each (pid, tid, time), the deepest range of that thread holding it, or -1."""
    out = np.full(len(at), -1, np.int64)
    bounds = np.searchsorted(r.thread, np.arange(len(r.threads) + 1))
    for code, (p, t) in enumerate(r.threads.tolist()):
        mine = np.flatnonzero((pid == p) & (tid == t))
        lo, hi = bounds[code], bounds[code + 1]
        if len(mine) == 0 or lo == hi:
            continue
        cand = lo + np.searchsorted(r.start[lo:hi], at[mine], side="right") - 1
        cand = np.where(cand >= lo, cand, -1)
        for _ in range(int(r.depth[lo:hi].max()) + 1):
            miss = (cand >= 0) & (r.end[np.maximum(cand, 0)] < at[mine])
            if not miss.any():
                break
            cand = np.where(miss, r.parent[np.maximum(cand, 0)], cand)
        out[mine] = cand
    return out


def subtree_totals(r: Ranges, own: np.ndarray) -> np.ndarray:
    """`own` summed over each range and everything nested in it."""
    total = own.astype(np.int64).copy()
    for d in range(int(r.depth.max(initial=0)), 0, -1):
        rows = np.flatnonzero((r.depth == d) & (r.parent >= 0))
        np.add.at(total, r.parent[rows], total[rows])
    return total


def op_summary(trace: Trace) -> StatsTable:
    r = cpu_ranges(trace)
    self_ns = host_self(r)
    g_self = gpu_self(trace, r)
    g_total = subtree_totals(r, g_self)
    ops = np.flatnonzero(r.is_op)
    names, key = np.unique(r.names[ops].astype(str), return_inverse=True)
    key = key.ravel()

    def per_op(values: np.ndarray) -> np.ndarray:
        return np.bincount(key, weights=values[ops], minlength=len(names)).astype(np.int64)

    count = np.bincount(key, minlength=len(names))
    self_sum, total_sum = per_op(self_ns), per_op(r.end - r.start)
    order = np.lexsort((names, -self_sum))
    grand = float(self_sum.sum()) or 1.0
    data = pa.table({
        "self_pct": 100.0 * self_sum[order] / grand,
        "self_ns": self_sum[order],
        "total_ns": total_sum[order],
        "count": count[order],
        "avg_self_ns": self_sum[order] / np.maximum(count[order], 1),
        "avg_total_ns": total_sum[order] / np.maximum(count[order], 1),
        "gpu_self_ns": per_op(g_self)[order],
        "gpu_total_ns": per_op(g_total)[order],
        "name": pa.array(names[order].tolist(), pa.string()),
    })  # fmt: skip
    return StatsTable(REPORT, COLUMNS, data)
