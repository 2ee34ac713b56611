"""The trace under analysis and the arrays every rule derives from it (launch times, GPU ops,
API rows), computed once. The steps and the step budget are one floor up, in
`analysis.budget.context.Ctx`: the modules that find them read a `TraceCtx`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property

import numpy as np
import pyarrow as pa

from tuiperf.analysis.intervals import Union
from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace

#: the GPU work tables; "graphs" (whole CUDA graph executions) is busy time like kernels
GPU_TABLES = ("kernels", "memcpy", "memset", "graphs")
NSYS_GPU_TABLES = GPU_TABLES[:3]


@dataclass
class GpuOps:
    """Kernels ∪ memcpy ∪ memset ∪ graph executions as flat arrays (which table, which row)."""

    table: np.ndarray  # index into GPU_TABLES
    row: np.ndarray
    start: np.ndarray
    end: np.ndarray
    pid: np.ndarray
    device: np.ndarray
    context: np.ndarray

    def __len__(self) -> int:
        return len(self.start)


class TraceCtx:
    """The trace under analysis, with lazily computed shared views."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def table(self, name: str) -> pa.Table:
        return self.trace.table(name)

    @cached_property
    def profiled_ns(self) -> int:
        """The denominator of "% of profiled time": the span of the trace's events (first
        start to last end, the time range `tuiperf info` prints); the capture's recorded
        duration only when there are no events. Not the session length: nsys's
        ANALYSIS_DETAILS counts from the session start, which can be minutes before
        the capture range (h100_2gpu_1s: 296 s of session, 969 ms of events)."""
        rng = self.trace.time_range()
        if rng and rng[1] > rng[0]:
            return int(rng[1] - rng[0])
        return int(self.trace.meta.duration_ns or 0)

    @cached_property
    def gpu_ops(self) -> GpuOps:
        return self._ops(GPU_TABLES)

    @cached_property
    def nsys_gpu_ops(self) -> GpuOps:
        """The GPU work `nsys analyze` looks at: kernels, memcpy and memset, not whole-graph
        executions (the six nsys rules keep its answers, graphs or not). The first rows of
        `gpu_ops` (its tables come in that order), as views: no second copy."""
        n = sum(self.table(name).num_rows for name in NSYS_GPU_TABLES)
        ops = self.gpu_ops
        return GpuOps(*(getattr(ops, f.name)[:n] for f in fields(GpuOps)))

    def _ops(self, tables: tuple[str, ...]) -> GpuOps:
        """The rows of `tables`, in that order; read-only (`nsys_gpu_ops` shares them)."""
        parts = []
        for i, name in enumerate(tables):
            t = self.table(name)
            n = t.num_rows
            parts.append((
                np.full(n, i, np.int64), np.arange(n, dtype=np.int64),
                A.ints(t, "start"), A.ints(t, "end"), A.ints(t, "pid", -1),
                A.ints(t, "device", -1), A.ints(t, "context", -1),
            ))  # fmt: skip
        cols = [np.concatenate([p[k] for p in parts]) for k in range(7)]
        for c in cols:
            c.flags.writeable = False
        return GpuOps(*cols)

    @cached_property
    def gpu_busy(self) -> Union:
        """The union of all GPU activity (any device), for idle-time questions."""
        ops = self.gpu_ops
        return Union.of(ops.start, ops.end)

    @cached_property
    def kernel_time_ns(self) -> int:
        k = self.table("kernels")
        return int(A.ints(k, "duration").sum()) if k.num_rows else 0

    @cached_property
    def compute_time_ns(self) -> int:
        """Kernel time plus whole CUDA graph executions (whose kernels nsys's default graph
        trace mode does not record one by one): the GPU compute time shares are of."""
        g = self.table("graphs")
        return self.kernel_time_ns + (int(A.ints(g, "duration").sum()) if g.num_rows else 0)

    @cached_property
    def _api_keys(self) -> np.ndarray:
        api = self.table("api")
        return A.pid_corr_key(A.ints(api, "pid", -1), A.ints(api, "correlation_id", -1))

    def api_rows(self, table: str) -> np.ndarray:
        """For each row of a GPU table, its launching API call's row (same pid and
        correlation id), or -1 when the API row is missing (windowed exports)."""
        cache = self.__dict__.setdefault("_api_rows_cache", {})
        if table not in cache:
            t = self.table(table)
            keys = A.pid_corr_key(A.ints(t, "pid", -1), A.ints(t, "correlation_id", -1))
            cache[table] = A.first_match(keys, self._api_keys)
        return cache[table]

    def launch_time(self, table: str) -> np.ndarray:
        """When the CPU asked for each GPU op (its API call's start); the GPU start when the
        API row is missing. NVTX ranges contain launches, not the GPU work."""
        t = self.table(table)
        rows = self.api_rows(table)
        gpu_start = A.ints(t, "start")
        api_start = A.ints(self.table("api"), "start")
        if len(api_start) == 0:
            return gpu_start
        return np.where(rows >= 0, api_start[np.maximum(rows, 0)], gpu_start)

    def launch_duration(self, table: str) -> np.ndarray:
        """The CPU duration of each GPU op's launching call; -1 when unknown."""
        rows = self.api_rows(table)
        dur = A.ints(self.table("api"), "duration")
        if len(dur) == 0:
            return np.full(len(rows), -1, np.int64)
        return np.where(rows >= 0, dur[np.maximum(rows, 0)], -1)
