"""A thread's CPU samples lane in the timeline (model/timeline/sample_lane.py): a tick per
column holding a sample when zoomed in, density when zoomed out (░▒▓, `--ascii` .:#), and
the work that adds these lanes after the first frame."""

from __future__ import annotations

from typing import Any

import numpy as np
from textual.strip import Strip

from tuiperf.model.timeline.lanes import Lane
from tuiperf.model.timeline.sample_lane import (
    LEVELS,
    add_sample_lanes,
    sample_ticks,
)
from tuiperf.model.trace import Trace
from tuiperf.tui.widgets.cell_lane import cells_strip, start_thread_rows
from tuiperf.tui.widgets.lane_render import BUSY, EMPTY

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
    """The lane's row (`tl`: the Timeline widget)."""
    return cells_strip(tl, lane, current, tick_cells, "samples")


# --- after the first frame ------------------------------------------------------------


def start(app: Any, trace: Trace) -> None:
    """Read the samples into lanes in a worker (nothing at all without samples)."""
    start_thread_rows(app, trace, "cpu_samples", sample_ticks, add_sample_lanes, "sample-ticks")
