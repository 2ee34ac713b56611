"""CPU samples as ticks on the timeline (issue 34 item 1): one row under each thread that
has samples, a tick where the thread was sampled.

Ticks are the thread's native samples (nsys `--sample`: `COMPOSITE_EVENTS`, taken only
while the thread runs); a thread with Python samples only (wall-clock, `--python-sampling`)
gets those. Zoomed in, a column holding a sample is a tick; zoomed out (a column spans
`DENSE_FROM` sampling periods or more) a column's level says how much of it the thread was
sampled: samples x period / column width, in thirds.

The name at the cursor is the nearest Python sample's innermost frame (function, file and
line) when there is one within `near` ns, else the nearest native sample's function.

Built in a worker after the first frame (`sample_ticks`); a frame costs one
`searchsorted` over the column edges, whatever the number of samples."""

from __future__ import annotations

import os

import numpy as np

from tuiperf.model import arrays as A
from tuiperf.model.timeline.lane_intervals import Intervals
from tuiperf.model.timeline.lanes import Lane, LaneSet, NameColumn
from tuiperf.model.timeline.sample_ticks import DENSE_FROM as DENSE_FROM
from tuiperf.model.timeline.sample_ticks import LEVELS as LEVELS
from tuiperf.model.timeline.sample_ticks import TICK as TICK
from tuiperf.model.timeline.sample_ticks import Named, SampleTicks
from tuiperf.model.trace import Trace

SEP = "·"


def _period(groups: list[np.ndarray]) -> float:
    """The sampling period: the median gap between consecutive samples of a thread, over
    every thread (2 ms for nsys's default native sampling, ~1 ms for its Python sampling;
    a thread that seldom runs has longer gaps, which the busy threads outnumber)."""
    gaps = np.concatenate([np.diff(g) for g in groups]) if groups else np.zeros(0, np.int64)
    gaps = gaps[gaps > 0]
    return float(np.median(gaps)) if len(gaps) else 1e6


def _python_labels(
    trace: Trace, stack_id: np.ndarray, fn: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    """Per Python sample, a code into the list of `function (file:line)` texts of the
    innermost frames (one text per distinct frame, not per sample); `fn`: the samples'
    function names."""
    st = trace.table("sample_stacks", ["node_id", "module", "line"])
    node = A.ints(st, "node_id", -1)
    size = int(node.max()) + 1 if len(node) else 0
    line, mod = np.full(size, -1, np.int64), np.full(size, "", dtype=object)
    line[node], mod[node] = A.ints(st, "line", -1), A.strings(st, "module")
    uniq, inv = np.unique(stack_id, return_inverse=True)
    inv = inv.reshape(-1)
    first = np.zeros(len(uniq), np.int64)
    first[inv[::-1]] = np.arange(len(stack_id))[::-1]  # a sample of each frame
    text = []
    for s, i in zip(uniq.tolist(), first.tolist(), strict=True):
        where = ""
        if 0 <= s < size and mod[s]:
            where = os.path.basename(str(mod[s])) + (f":{line[s]}" if line[s] >= 0 else "")
        text.append(f"{fn[i]} ({where})" if where else str(fn[i]))
    return inv, text


def sample_ticks(trace: Trace, threads: set[tuple[int, int]] | None = None) -> list[SampleTicks]:
    """Per thread with samples (of `threads`, when given), its ticks and names; empty
    when the report has no CPU samples."""
    if not trace.has("cpu_samples"):
        return []
    t = trace.table("cpu_samples", ["start", "pid", "tid", "kind", "function", "stack_id"])
    start, pid, tid = A.ints(t, "start"), A.ints(t, "pid", -1), A.ints(t, "tid", -1)
    py = A.strings(t, "kind") == "python"
    fc, fv = A.codes(t, "function")
    code = np.where(fc >= 0, fc, len(fv))  # null: the "" appended to the names
    native_names = [*fv, ""]
    pyi = np.flatnonzero(py)
    fn = np.array(native_names, dtype=object)[code[pyi]]
    code[pyi], py_names = _python_labels(trace, A.ints(t, "stack_id", -1)[pyi], fn)
    order = np.lexsort((start, tid, pid))  # by thread, then time
    cut = np.flatnonzero((np.diff(pid[order]) != 0) | (np.diff(tid[order]) != 0)) + 1
    found = []
    for rows in np.split(order, cut) if len(order) else []:
        nat, pys = rows[~py[rows]], rows[py[rows]]
        native = Named(start[nat], code[nat], native_names)
        found.append((int(pid[rows[0]]), int(tid[rows[0]]), native,
                      Named(start[pys], code[pys], py_names)))  # fmt: skip
    periods = {
        "native": _period([native.times for _, _, native, _ in found]),
        "python": _period([python.times for _, _, _, python in found]),
    }
    out = []
    for p, q, native, python in found:
        if threads is not None and (p, q) not in threads:
            continue
        kind = "native" if len(native.times) else "python"
        ticks = native.times if kind == "native" else python.times
        out.append(SampleTicks(p, q, ticks, periods[kind], native, python))
    return out


def add_sample_lanes(ls: LaneSet, found: list[SampleTicks]) -> list[int]:
    """A samples lane under each thread of `found` that has lanes, after its last lane in
    its group (threads without lanes are left out). Returns the new lanes' indices."""
    empty = np.zeros(0, np.int64)
    added = []
    for ticks in found:
        place: dict[str, int | str | None] = {"pid": ticks.pid, "tid": ticks.tid}
        mine = [li for li, lane in enumerate(ls.lanes) if lane.place == place]
        group = next((g for g in ls.groups if mine and mine[-1] in g.lanes), None)
        if group is None:
            continue
        base = ls.lanes[mine[0]]
        label = base.label.rsplit(" ", 1)[0] if base.kind == "nvtx" else base.label
        for what in (" CUDA API", " NVTX", " OS runtime", " CPU ops", " CUDA runtime"):
            label = label.removesuffix(what)
        key = ("cpu_samples", ticks.pid, ticks.tid)
        lane = Lane(key=key, group=group.key, label=f"{label} CPU samples", kind="samples",
                    table="cpu_samples", iv=Intervals(empty, empty, empty),
                    names=NameColumn(None, "samples"), place=place, ticks=ticks)  # fmt: skip
        ls.by_key[key] = len(ls.lanes)
        group.lanes.insert(max(group.lanes.index(li) for li in mine if li in group.lanes) + 1,
                           len(ls.lanes))  # fmt: skip
        ls.lanes.append(lane)
        added.append(ls.by_key[key])
    return added


def cursor_text(lane: Lane, t: float, ns_per_col: float) -> str:
    """What the status line says on a samples lane: the sampled function nearest the
    cursor (within a column, or four sampling periods when columns are narrower)."""
    ticks = lane.ticks
    assert ticks is not None
    name = ticks.name_at(t, max(ns_per_col, 4 * ticks.period))
    if not name:
        return f"no sample near the cursor {SEP} {lane.label}"
    return f"sampled {name} {SEP} {lane.label}"  # the name first: the status line is narrow
