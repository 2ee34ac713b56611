"""OS thread state on the timeline (issue 34 item 3): one row under each thread that the
scheduler switched (nsys `--cpuctxsw`, the `thread_state` table), a cell per column saying
whether the thread ran or waited there.

A thread's intervals alternate running (switched onto a CPU until switched off) and waiting
(off until back on); a lost switch leaves a gap where nothing is known. A column is
`RUNNING` when the thread ran at least as long as it waited inside it, `WAITING` when it
waited longer, `UNKNOWN` when no interval reaches into it (before the first switch, after
the last one, in a gap). A separate row, not the CPU samples row: that row's cells already
say how much of a column was sampled (which tracks the running share), and a cell holds one
glyph, so the two could only be merged through colour, which `--ascii` and plain terminals
lose.

Built in a worker after the first frame (`thread_states`); a frame costs two
`searchsorted` over the column edges, whatever the number of switches."""

from __future__ import annotations

import numpy as np

from tuiperf.model import arrays as A
from tuiperf.model.fmt import duration
from tuiperf.model.timeline.lane_intervals import Intervals
from tuiperf.model.timeline.lanes import Lane, LaneSet, NameColumn
from tuiperf.model.timeline.thread_states import RUNNING as RUNNING
from tuiperf.model.timeline.thread_states import UNKNOWN as UNKNOWN
from tuiperf.model.timeline.thread_states import WAITING as WAITING
from tuiperf.model.timeline.thread_states import ThreadStates
from tuiperf.model.trace import Trace

SEP = "·"


def thread_states(trace: Trace, threads: set[tuple[int, int]] | None = None) -> list[ThreadStates]:
    """Per thread with switches (of `threads`, when given), its intervals; empty when the
    report has no `thread_state`."""
    if not trace.has("thread_state"):
        return []
    t = trace.table("thread_state", ["start", "end", "pid", "tid", "state"])
    start, end = A.ints(t, "start"), A.ints(t, "end")
    pid, tid = A.ints(t, "pid", -1), A.ints(t, "tid", -1)
    running = A.strings(t, "state") == "running"
    order = np.lexsort((start, tid, pid))  # by thread, then time
    cut = np.flatnonzero((np.diff(pid[order]) != 0) | (np.diff(tid[order]) != 0)) + 1
    out = []
    for rows in np.split(order, cut) if len(order) else []:
        p, q = int(pid[rows[0]]), int(tid[rows[0]])
        if threads is None or (p, q) in threads:
            out.append(ThreadStates(p, q, start[rows], end[rows], running[rows]))
    return out


def _thread_label(base: Lane) -> str:
    label = base.label.rsplit(" ", 1)[0] if base.kind == "nvtx" else base.label
    for what in (" CUDA API", " NVTX", " OS runtime", " CPU ops", " CUDA runtime"):
        label = label.removesuffix(what)
    return label


def add_state_lanes(ls: LaneSet, found: list[ThreadStates]) -> list[int]:
    """A state lane under each thread of `found` that has lanes, after its event lanes and
    before its CPU samples lane, whichever of the two was added first (threads without
    lanes are left out). Returns the new lanes' indices."""
    empty = np.zeros(0, np.int64)
    added = []
    for st in found:
        place: dict[str, int | str | None] = {"pid": st.pid, "tid": st.tid}
        mine = [li for li, lane in enumerate(ls.lanes) if lane.place == place]
        events = [li for li in mine if ls.lanes[li].kind != "samples"]
        group = next((g for g in ls.groups if events and events[-1] in g.lanes), None)
        if group is None:
            continue
        key = ("thread_state", st.pid, st.tid)
        lane = Lane(key=key, group=group.key, label=f"{_thread_label(ls.lanes[events[0]])} state",
                    kind="state", table="thread_state", iv=Intervals(empty, empty, empty),
                    names=NameColumn(None, "state"), place=place, state=st)  # fmt: skip
        ls.by_key[key] = len(ls.lanes)
        after = max(group.lanes.index(li) for li in events if li in group.lanes)
        group.lanes.insert(after + 1, len(ls.lanes))
        ls.lanes.append(lane)
        added.append(ls.by_key[key])
    return added


def cursor_text(lane: Lane, t: float, ascii_only: bool = False) -> str:
    """What the status line says on a state lane: `running 80 µs` or `waiting 12.4 ms
    (descheduled)`, the length of the interval under the cursor."""
    st = lane.state
    assert st is not None
    found = st.at(t)
    if found is None:
        return f"no switch recorded here {SEP} {lane.label}"
    running, a, b = found
    if running:
        return f"running {duration(b - a, ascii_only)} {SEP} {lane.label}"
    return f"waiting {duration(b - a, ascii_only)} (descheduled) {SEP} {lane.label}"
