"""CPU samples by function (issue 34): the `cpu_samples` summary.

One row per (thread, kind, function, module) that a sample saw: Self = samples whose
sampled (innermost) frame is that function, Total = samples with that function anywhere on
their stack, counted once per sample (model.cpu_samples). The percentages are of the
samples of that thread and kind. The rows for all threads together come first (Thread
`all`), then each thread, most samples first; within one, Python samples before native,
then most self samples, then most total.

Native samples without a backtrace (nsys keeps a whole chain for one sample in four by
default) count their sampled function in both Self and Total: a caller's Total counts only
the samples that had a stack.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays as A
from tuiperf.model.cpu_samples import Counts, Samples
from tuiperf.model.trace import Trace
from tuiperf.summaries.table import Column, StatsTable

REPORT = "cpu_samples"
ALL = "all"
COLUMNS = [
    Column("Thread", "thread", "str"),
    Column("PID", "pid", "int"),
    Column("TID", "tid", "int"),
    Column("Kind", "kind", "str"),
    Column("Self", "self", "int"),
    Column("Self (%)", "self_pct", "pct"),
    Column("Total", "total", "int"),
    Column("Total (%)", "total_pct", "pct"),
    Column("Function", "function", "str"),
    Column("Module", "module", "str"),
]
_KINDS = ("python", "native")


def cpu_samples(trace: Trace) -> StatsTable:
    s = Samples(trace)
    rows: list[dict[str, object]] = []
    everyone = np.ones(len(s), bool)
    _add(rows, s, everyone, ALL, None, None)
    names = _thread_names(trace)
    threads, counts = _threads(s)
    for (pid, tid), _n in sorted(zip(threads, counts, strict=True), key=lambda x: -x[1]):
        if tid < 0:  # a sample without its thread (damaged export): in `all` only
            continue
        mask = (s.pid == pid) & (s.tid == tid)
        _add(rows, s, mask, names.get((pid, tid), str(tid)), pid, tid)
    data = {c.key: [r[c.key] for r in rows] for c in COLUMNS}
    types = {"int": pa.int64(), "pct": pa.float64(), "str": pa.string()}
    return StatsTable(
        REPORT, COLUMNS, pa.table({c.key: pa.array(data[c.key], types[c.fmt]) for c in COLUMNS})
    )


def _threads(s: Samples) -> tuple[list[tuple[int, int]], list[int]]:
    if not len(s):
        return [], []
    pairs, n = np.unique(np.stack([s.pid, s.tid]), axis=1, return_counts=True)
    return [(int(p), int(t)) for p, t in pairs.T.tolist()], n.tolist()


def _thread_names(trace: Trace) -> dict[tuple[int, int], str]:
    t = trace.table("threads")
    pid, tid, name = A.ints(t, "pid", -1), A.ints(t, "tid", -1), t["name"].to_pylist()
    return {(int(p), int(x)): str(n) for p, x, n in zip(pid, tid, name, strict=True) if n}


def _add(
    rows: list[dict[str, object]], s: Samples, mask: np.ndarray, thread: str,
    pid: int | None, tid: int | None,
) -> None:  # fmt: skip
    for kind in _KINDS:
        sel = mask & (s.kind == kind)
        if not sel.any():
            continue
        c = s.counts(sel)
        for k in _ordered(c):
            rows.append({
                "thread": thread, "pid": pid, "tid": tid, "kind": kind,
                "self": int(c.self_n[k]), "self_pct": 100.0 * c.self_n[k] / c.samples,
                "total": int(c.total_n[k]), "total_pct": 100.0 * c.total_n[k] / c.samples,
                "function": c.stacks.functions[k], "module": c.stacks.modules[k],
            })  # fmt: skip


def _ordered(c: Counts) -> list[int]:
    """Keys seen by these samples: most self, then most total, then by name."""
    seen = np.flatnonzero(c.total_n > 0)
    names = np.array([c.stacks.functions[k] for k in seen], dtype=str)
    order = np.lexsort((names, -c.total_n[seen], -c.self_n[seen]))
    return seen[order].tolist()
