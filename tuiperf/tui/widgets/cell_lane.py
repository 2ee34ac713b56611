"""What the timeline's one-glyph-a-column lanes share (GPU metrics, CPU samples, thread
state): drawing a row from its cells, and adding a thread's rows in a worker after the
first frame."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
from textual.strip import Strip

from tuiperf.model.timeline.lanes import Lane, LaneSet
from tuiperf.model.trace import Trace
from tuiperf.tui.widgets.lane_render import CURSOR, LaneStyles, frame_edges, to_segments

#: a lane's cells for the frame's column edges: (a character per column, its style id)
Cells = Callable[[Lane, np.ndarray, bool], tuple[list[str], np.ndarray]]


def cells_strip(tl: Any, lane: Lane, current: bool, cells: Cells, style: str) -> Strip:
    """The lane's row: its label, then its cells, busy ones in `style`, the cursor's
    column marked where it is blank (`tl`: the Timeline widget)."""
    chars, sids = cells(lane, frame_edges(tl.vp), tl.g.ascii)
    c = tl.vp.col_of(tl.cursor_t)
    if 0 <= c < tl.columns and chars[c] == " ":
        chars[c] = tl.g.cursor_line
        sids[c] = CURSOR
    busy, empty = tl._style(style), tl._style("empty")
    styles = LaneStyles(empty, busy, busy, busy, busy, tl._style("cursor"), tl._style("mark"))
    label = tl._style("label-current" if current else "label")
    segs = tl._label(f"  {lane.label}", label)
    segs += to_segments(chars, sids, tl.state.marked_columns(), styles)
    return Strip(segs, tl.size.width)


def start_thread_rows(
    app: Any,
    trace: Trace,
    table: str,
    build: Callable[[Trace, set[tuple[int, int]]], list[Any]],
    add: Callable[[LaneSet, list[Any]], list[int]],
    name: str,
) -> None:
    """Rows under the threads that have lanes, built from `table` by `build` in a worker
    and added by `add` on the app's thread (nothing at all without the table)."""
    if not trace.has(table) or app.lanes is None:
        return
    places = [lane.place for lane in app.lanes.lanes]
    threads = {(p["pid"], p["tid"]) for p in places if p.get("tid") is not None}

    def read() -> None:
        found = build(trace, threads)
        with contextlib.suppress(Exception):  # the app may be closing
            app.call_from_thread(added, found)

    def added(found: list[Any]) -> None:
        if app.lanes is not None and add(app.lanes, found):
            app.query_one("Timeline").add_lanes()  # by type name: no import of the widget

    app.run_worker(read, thread=True, name=name, exit_on_error=False)
