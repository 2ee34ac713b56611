"""Hand-built tiny traces for the oracle tests: a few events whose every number the test
spells out, so the expected values are computed by hand (or by brute force), never by the
code under test."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from tuiperf import schema
from tuiperf.model.trace import Trace, TraceMeta

#: one GPU event: (start ns, end ns, device, stream, name)
Gpu = tuple[int, int, int, int, str]


def gpu_table(name: str, rows: Sequence[Gpu]) -> pa.Table:
    """Table `name` (kernels, memcpy, memset) holding `rows`, in the given order."""
    start = [r[0] for r in rows]
    end = [r[1] for r in rows]
    cols: dict[str, pa.Array] = {
        "start": pa.array(start, pa.int64()),
        "end": pa.array(end, pa.int64()),
        "duration": pa.array([e - s for s, e in zip(start, end)], pa.int64()),
        "device": pa.array([r[2] for r in rows], pa.int32()),
        "stream": pa.array([r[3] for r in rows], pa.int64()),
        "pid": pa.array([1] * len(rows), pa.int64()),
        "correlation_id": pa.array(range(1, len(rows) + 1), pa.int64()),
    }
    if "name" in schema.TABLES[name].names:
        cols["name"] = pa.array([r[4] for r in rows], pa.string()).dictionary_encode()
    if name == "kernels":
        cols["short_name"] = cols["name"]
    return schema.conform(name, cols, len(rows))


def trace_of(**tables: pa.Table) -> Trace:
    return Trace(dict(tables), TraceMeta(source="tiny", format="test"))


def kernels_trace(rows: Sequence[Gpu]) -> Trace:
    return trace_of(kernels=gpu_table("kernels", rows))


def busy_grid(spans: Sequence[tuple[int, int]], lo: int, hi: int) -> np.ndarray:
    """One bool per nanosecond of [lo, hi): whether any span [s, e) covers it."""
    grid = np.zeros(hi - lo, bool)
    for s, e in spans:
        grid[max(s, lo) - lo : max(min(e, hi) - lo, 0)] = True
    return grid
