"""A huge report is analysed over a sample of its run, so that the analysis's memory
depends on the sample, not on the report (issue 37: a 50M-kernel report opens in 24 GiB).

The sample is the stretch of the run around its middle event that holds at most
`max_events` events (rows of the event tables), cut at step starts when the report marks
its steps with ranges, so it holds whole steps. Events that overlap it are kept whole; so
are GPU ops launched inside it that run after it (a CPU running ahead). The rows the
analysis points at (its findings' evidence) are the report's rows again afterwards.

Everything here reads the report's columns a slice at a time: choosing and cutting the
sample never holds more than one full-length boolean mask per table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema
from tuiperf.model import fmt
from tuiperf.model.arrays import from_numpy
from tuiperf.model.trace import Trace

#: the most events a report may have to be analysed whole (kernels, copies, API calls,
#: NVTX ranges, OS runtime calls, ...): about 2.5 GiB of analysis at ~250 bytes an event
DEFAULT_MAX_EVENTS = 10_000_000
#: the event histogram the sample is chosen on has this many bins per `max_events`
BINS_PER_LIMIT = 64
#: rows of a column read at a time
SLICE = 1 << 20
#: a sample is cut at step starts only when it keeps at least this many of them
MIN_STEP_STARTS = 3
#: the tables of GPU ops, whose launch calls may lie in the sample while they run after it
GPU_TABLES = ("kernels", "memcpy", "memset", "graphs")


@dataclass(frozen=True)
class Sample:
    """The stretch [lo, hi) of the run that was analysed, and how much of it that is."""

    lo: int
    hi: int
    #: events in the report, and in the sample (those overlapping it, launches included)
    total_events: int
    events: int
    #: whether lo and hi are step starts
    whole_steps: bool

    @property
    def span_ns(self) -> int:
        return self.hi - self.lo

    def text(self) -> str:
        cut = "cut at step starts" if self.whole_steps else "cut by time"
        return (
            f"a sample of the run: {fmt.duration(self.span_ns)} in its middle "
            f"({cut}), {self.events:,} of its {self.total_events:,} events"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "start_ns": self.lo,
            "end_ns": self.hi,
            "events": self.events,
            "total_events": self.total_events,
            "whole_steps": self.whole_steps,
        }


def sampled(trace: Trace, max_events: int) -> tuple[Sample, dict[str, np.ndarray], Trace] | None:
    """A report over `max_events` events cut to its sample: what the sample is, the
    report's row of each of its rows, and the cut trace (None: analyse it whole)."""
    chosen = choose(trace, max_events, lambda: _step_starts(trace))
    if chosen is None:
        return None
    lo, hi, whole = chosen
    part, kept = cut(trace, lo, hi)
    return Sample(lo, hi, n_events(trace), n_events(part), whole), kept, part


def _step_starts(trace: Trace) -> np.ndarray | None:
    """The starts of the report's step ranges (NVTX, Kineto), None without."""
    from tuiperf.analysis.budget.steps import from_ranges
    from tuiperf.analysis.trace_ctx import TraceCtx

    try:
        steps = from_ranges(TraceCtx(trace))
    except Exception:  # ranges it cannot read: cut by time, and let the analysis say why
        return None
    return steps.starts if steps is not None else None


def n_events(trace: Trace) -> int:
    return sum(trace.tables[n].num_rows for n in schema.EVENT_TABLES if n in trace.tables)


def choose(
    trace: Trace, max_events: int, step_starts: Callable[[], np.ndarray | None]
) -> tuple[int, int, bool] | None:
    """The sample [lo, hi) of a report over `max_events` events (None: analyse it whole),
    and whether it was cut at two of `step_starts` (called only when a sample is needed)."""
    total = n_events(trace)
    rng = trace.time_range()
    if max_events <= 0 or total <= max_events or rng is None:
        return None
    t0, t1 = rng
    bins = max(1024, -(-BINS_PER_LIMIT * total // max_events))
    width = max(-(-(t1 - t0 + 1) // bins), 1)
    counts = np.zeros(bins, np.int64)
    for start in _starts(trace, t0):
        counts += np.bincount((start - t0) // width, minlength=bins)
    b0, b1 = middle(counts, max_events)
    lo, hi = t0 + b0 * width, min(t0 + b1 * width, t1 + 1)
    starts = step_starts()
    if starts is not None:
        inner = np.sort(starts[(starts >= lo) & (starts <= hi)])
        if len(inner) >= MIN_STEP_STARTS:
            return int(inner[0]), int(inner[-1]), True
    return lo, hi, False


def middle(counts: np.ndarray, limit: int) -> tuple[int, int]:
    """Bins [b0, b1) around the middle event that hold at most `limit` events (the one bin
    holding the middle event when that alone is over it)."""
    before = np.concatenate([[0], np.cumsum(counts)])  # events in bins [0, k)
    mid = before[-1] / 2
    b0 = int(np.searchsorted(before, mid - limit / 2, "left"))
    b1 = int(np.searchsorted(before, mid + limit / 2, "right")) - 1
    if b1 <= b0:
        b0 = int(np.searchsorted(before, mid, "right")) - 1
        return b0, b0 + 1
    return b0, b1


def _starts(trace: Trace, t0: int) -> Iterator[np.ndarray]:
    """The event tables' starts, a slice at a time (a missing start counts at t0)."""
    for name in schema.EVENT_TABLES:
        t = trace.tables.get(name)
        n = t.num_rows if t is not None else 0
        for off in range(0, n, SLICE):
            yield _ints(t.column("start").slice(off, SLICE), t0)  # type: ignore[union-attr]


# -- cutting the trace ---------------------------------------------------------------


def cut(trace: Trace, lo: int, hi: int) -> tuple[Trace, dict[str, np.ndarray]]:
    """The trace's events overlapping [lo, hi), and GPU ops launched in it; with, for each
    cut table, the report's row of each kept row."""
    launched = _launched_ids(trace, lo, hi)
    tables: dict[str, pa.Table] = {}
    kept: dict[str, np.ndarray] = {}
    for name, t in trace.tables.items():
        if name not in schema.EVENT_TABLES:
            tables[name] = t
            continue
        rows = np.flatnonzero(_keep(t, lo, hi, launched if name in GPU_TABLES else {}))
        kept[name] = rows
        tables[name] = t.take(from_numpy(np.asarray(rows, np.int64)))
    pending = {n: _details(trace, n, kept[n]) for n in trace.pending if n in kept}
    out = Trace(tables, trace.meta, pending=pending, on_details=trace.on_details)
    return out, kept


def _details(trace: Trace, name: str, rows: np.ndarray) -> Callable[[], pa.Table]:
    """The kept rows with their detail columns (read for these rows alone from a cache
    entry; else converted for the whole report, once, for the report and the sample)."""
    return lambda: trace.rows_of(name, rows)


def _ints(col: pa.ChunkedArray | pa.Array, missing: int) -> np.ndarray:
    if col.null_count:
        col = col.fill_null(missing)
    return np.asarray(col.to_numpy(), np.int64)


def _launched_ids(trace: Trace, lo: int, hi: int) -> dict[int, tuple[int, int]]:
    """Per process, the correlation ids of the API calls that start in [lo, hi) (first,
    last): CUDA numbers a process's calls in the order they begin."""
    api = trace.tables.get("api")
    if api is None:
        return {}
    out: dict[int, tuple[int, int]] = {}
    for off in range(0, api.num_rows, SLICE):
        part = api.slice(off, SLICE)
        start = _ints(part["start"], lo - 1)
        m = (start >= lo) & (start < hi)
        if not m.any():
            continue
        pid = _ints(part["pid"], -1)[m]
        corr = _ints(part["correlation_id"], -1)[m]
        ok = corr >= 0
        for p in np.unique(pid[ok]):
            c = corr[ok & (pid == p)]
            a, b = out.get(int(p), (int(c.min()), int(c.max())))
            out[int(p)] = (min(a, int(c.min())), max(b, int(c.max())))
    return out


def _keep(t: pa.Table, lo: int, hi: int, launched: dict[int, tuple[int, int]]) -> np.ndarray:
    """Rows that overlap [lo, hi) (a zero-length or open one: starts in it), or whose
    launch call is in it (`launched`: per pid, the first and last correlation id)."""
    out = np.zeros(t.num_rows, bool)
    for off in range(0, t.num_rows, SLICE):
        part = t.slice(off, SLICE)
        start = _ints(part["start"], hi)
        end = _ints(part["end"], -1)
        end = np.where(end < start, start, end)
        m = (start < hi) & ((end > lo) | (start >= lo))
        if launched:
            pid, corr = _ints(part["pid"], -1), _ints(part["correlation_id"], -1)
            for p, (a, b) in launched.items():
                m |= (pid == p) & (corr >= a) & (corr <= b)
        out[off : off + len(start)] = m
    return out


# -- the analysis's rows are the report's again ------------------------------------------


def report_rows(rows: pa.Table, kept: dict[str, np.ndarray]) -> pa.Table:
    """Evidence rows (`table`, `row`) of the cut trace, pointing at the report's rows."""
    if rows.num_rows == 0 or "row" not in rows.column_names:
        return rows
    row = rows["row"]
    valid = row.is_valid().to_numpy(zero_copy_only=False)
    out = np.array(_ints(row, 0))
    for name in pc.unique(rows["table"]).to_pylist():
        if name not in kept:
            continue
        m = valid & pc.equal(rows["table"], name).to_numpy(zero_copy_only=False)
        out[m] = kept[name][out[m]]
    col = pa.array(out, pa.int64(), mask=~valid)
    return rows.set_column(rows.column_names.index("row"), "row", col)


def without_startup(budget: Any) -> Any:
    """The budget less its start-up: a sample's first step is no start-up of the run."""
    if budget is None:
        return None
    devices = [replace(d, startup=None) for d in budget.devices]
    extra = {k: v for k, v in budget.extra.items() if k != "startup_note"}
    return replace(budget, devices=devices, startup_labels="", extra=extra)
