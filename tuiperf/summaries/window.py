"""The `nsys stats` summaries over a time window [lo, hi) of the report (range statistics).

Which events: those overlapping the window, as the events table's window filter keeps them
(`start < hi` and `end > lo`; a zero-length event counts when `lo <= start < hi`). An
event whose end is unknown counts as zero-length at its start.

How much of them: `clip=False` counts each such event whole (its full duration, even the
part outside the window); `clip=True` counts only its part inside the window (start and
end clamped to [lo, hi), the duration their difference). Bytes of a copy are never split:
a clipped copy still moves all its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tuiperf import schema
from tuiperf.model.trace import Trace
from tuiperf.summaries import stats
from tuiperf.summaries.table import StatsTable

#: the reports a window applies to: per-name sums of timed events
WINDOW_REPORTS = (
    "cuda_gpu_kern_sum",
    "cuda_api_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "nvtx_sum",
    "osrt_sum",
    "cuda_gpu_trace",
)


@dataclass(frozen=True)
class Window:
    """[lo, hi) ns of the report's clock; `clip`: count only the parts inside it."""

    lo: int
    hi: int
    clip: bool = False

    @property
    def span(self) -> int:
        return self.hi - self.lo

    @property
    def counting(self) -> str:
        """How events crossing an edge are counted, in words."""
        return "clipped to the window" if self.clip else "counted whole when they overlap it"


def _ends(t: pa.Table) -> np.ndarray:
    start = t["start"].to_numpy(zero_copy_only=False).astype(np.int64)
    if "end" not in t.column_names:
        return start
    end = t["end"]
    if end.null_count:
        end = end.fill_null(-(2**62))
    out = end.to_numpy(zero_copy_only=False).astype(np.int64)
    return np.where(out == -(2**62), start, out)


def inside(t: pa.Table, w: Window) -> np.ndarray:
    """Which rows of a timed table overlap the window (the events table's rule)."""
    start = t["start"].to_numpy(zero_copy_only=False).astype(np.int64)
    end = _ends(t)
    return (start < w.hi) & ((end > w.lo) | (start >= w.lo))


def clip_table(t: pa.Table, w: Window) -> pa.Table:
    """The rows `inside` the window; with `w.clip`, their times clamped to it."""
    keep = inside(t, w)
    t = t.filter(pa.array(keep))
    if not w.clip or t.num_rows == 0 or "end" not in t.column_names:
        return t
    valid = t["end"].is_valid().to_numpy(zero_copy_only=False) if t["end"].null_count else None
    start = np.maximum(t["start"].to_numpy(zero_copy_only=False).astype(np.int64), w.lo)
    end = np.maximum(np.minimum(_ends(t), w.hi), start)
    cols = {"start": pa.array(start, pa.int64()), "end": pa.array(end, pa.int64())}
    if valid is not None:  # an open range stays open (and zero-length)
        cols["end"] = pa.array(end, pa.int64(), mask=~valid)
        end = np.where(valid, end, start)
    if "duration" in t.column_names:
        cols["duration"] = pa.array(end - start, pa.int64())
    for name, col in cols.items():
        t = t.set_column(t.column_names.index(name), name, col)
    return t


def windowed(trace: Trace, w: Window, details: bool = False) -> Trace:
    """The trace with every timed table cut to the window (no cache: the results of a
    window are never stored as the report's). `details`: with the detail columns a cached
    report converts on first use (`cuda_gpu_trace` prints them; the sums need none)."""
    tables = {}
    for name in trace.tables:
        t = trace.table(name) if details else trace.tables[name]
        timed = name in schema.EVENT_TABLES and "start" in t.column_names
        tables[name] = clip_table(t, w) if timed else t
    return Trace(tables, trace.meta)


def window_summaries(
    trace: Trace, w: Window, names: tuple[str, ...] = WINDOW_REPORTS
) -> dict[str, StatsTable]:
    """Each report of `names` over the window."""
    cut = windowed(trace, w, details="cuda_gpu_trace" in names)
    return {n: stats.compute(cut, n) for n in names}
