"""A thread's CPU samples lane in the timeline (model/timeline/sample_lane.py): a tick per
column holding a sample when zoomed in, density when zoomed out (░▒▓, `--ascii` .:#), and
the work that adds these lanes after the first frame."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from textual.strip import Strip

from tuiperf.model.timeline.lanes import Lane
from tuiperf.model.timeline.sample_lane import (
    LEVELS,
    SampleTicks,
    add_sample_lanes,
    sample_ticks,
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

#: a column's cell by level: nothing, density in thirds (zoomed out), a tick (zoomed in)
GLYPHS = " ░▒▓╷"
GLYPHS_ASCII = " .:#'"
assert len(GLYPHS) == LEVELS + 2


def tick_cells(lane: Lane, edges: np.ndarray, ascii_only: bool) -> tuple[list[str], np.ndarray]:
    """(a character per column, its style id) of a samples lane."""
    assert lane.ticks is not None
    glyphs = GLYPHS_ASCII if ascii_only else GLYPHS
    levels = lane.ticks.levels(edges)
    return [glyphs[v] for v in levels.tolist()], np.where(levels > 0, BUSY, EMPTY).astype(np.int8)


def ticks_strip(tl: Any, lane: Lane, current: bool) -> Strip:
    """The lane's row: its label, then the ticks (`tl`: the Timeline widget)."""
    chars, sids = tick_cells(lane, frame_edges(tl.vp), tl.g.ascii)
    c = tl.vp.col_of(tl.cursor_t)
    if 0 <= c < tl.columns and chars[c] == " ":
        chars[c] = tl.g.cursor_line
        sids[c] = CURSOR
    style, empty = tl._style("samples"), tl._style("empty")
    styles = LaneStyles(empty, style, style, style, style, tl._style("cursor"), tl._style("mark"))
    label = tl._style("label-current" if current else "label")
    segs = tl._label(f"  {lane.label}", label)
    segs += to_segments(chars, sids, tl.state.marked_columns(), styles)
    return Strip(segs, tl.size.width)


# --- after the first frame ------------------------------------------------------------


def start(app: Any, trace: Trace) -> None:
    """Read the samples into lanes in a worker (nothing at all without samples)."""
    if not trace.has("cpu_samples") or app.lanes is None:
        return
    places = [lane.place for lane in app.lanes.lanes]
    threads = {(p["pid"], p["tid"]) for p in places if p.get("tid") is not None}
    app.run_worker(lambda: _read(app, trace, threads), thread=True, name="sample-ticks",
                   exit_on_error=False)  # fmt: skip


def _read(app: Any, trace: Trace, threads: set[tuple[int, int]]) -> None:
    found = sample_ticks(trace, threads)
    with contextlib.suppress(Exception):  # the app may be closing
        app.call_from_thread(_add, app, found)


def _add(app: Any, found: list[SampleTicks]) -> None:
    if app.lanes is not None and add_sample_lanes(app.lanes, found):
        app.query_one("Timeline").add_lanes()  # by type name: no import of the widget
