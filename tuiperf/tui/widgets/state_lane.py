"""A thread's OS state lane in the timeline (model/timeline/state_lane.py): per column a
bar where the thread mostly ran (▄, `--ascii` =), a floor where it mostly waited (▁, _),
blank where no switch is recorded; and the work that adds these lanes after the first
frame."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from textual.strip import Strip

from tuiperf.model.timeline.lanes import Lane
from tuiperf.model.timeline.state_lane import (
    RUNNING,
    WAITING,
    ThreadStates,
    add_state_lanes,
    thread_states,
)
from tuiperf.model.trace import Trace
from tuiperf.tui.widgets.lane_render import (
    BUSY,
    CURSOR,
    EMPTY,
    LaneStyles,
    frame_edges,
    to_segments,
)

#: a column's cell by state: unknown, running, waiting
GLYPHS = " ▄▁"
GLYPHS_ASCII = " =_"
assert (RUNNING, WAITING) == (1, 2)


def state_cells(lane: Lane, edges: np.ndarray, ascii_only: bool) -> tuple[list[str], np.ndarray]:
    """(a character per column, its style id) of a state lane: waiting cells keep the
    empty style, so only the running ones are coloured."""
    assert lane.state is not None
    glyphs = GLYPHS_ASCII if ascii_only else GLYPHS
    states = lane.state.states(edges)
    return [glyphs[v] for v in states.tolist()], np.where(states == RUNNING, BUSY, EMPTY).astype(
        np.int8
    )


def state_strip(tl: Any, lane: Lane, current: bool) -> Strip:
    """The lane's row: its label, then the states (`tl`: the Timeline widget)."""
    chars, sids = state_cells(lane, frame_edges(tl.vp), tl.g.ascii)
    c = tl.vp.col_of(tl.cursor_t)
    if 0 <= c < tl.columns and chars[c] == " ":
        chars[c] = tl.g.cursor_line
        sids[c] = CURSOR
    style, empty = tl._style("running"), tl._style("empty")
    styles = LaneStyles(empty, style, style, style, style, tl._style("cursor"), tl._style("mark"))
    label = tl._style("label-current" if current else "label")
    segs = tl._label(f"  {lane.label}", label)
    segs += to_segments(chars, sids, tl.state.marked_columns(), styles)
    return Strip(segs, tl.size.width)


# --- after the first frame ------------------------------------------------------------


def start(app: Any, trace: Trace) -> None:
    """Read the switches into lanes in a worker (nothing at all without them)."""
    if not trace.has("thread_state") or app.lanes is None:
        return
    places = [lane.place for lane in app.lanes.lanes]
    threads = {(p["pid"], p["tid"]) for p in places if p.get("tid") is not None}
    app.run_worker(lambda: _read(app, trace, threads), thread=True, name="thread-state",
                   exit_on_error=False)  # fmt: skip


def _read(app: Any, trace: Trace, threads: set[tuple[int, int]]) -> None:
    found = thread_states(trace, threads)
    with contextlib.suppress(Exception):  # the app may be closing
        app.call_from_thread(_add, app, found)


def _add(app: Any, found: list[ThreadStates]) -> None:
    if app.lanes is not None and add_state_lanes(app.lanes, found):
        app.query_one("Timeline").add_lanes()  # by type name: no import of the widget
