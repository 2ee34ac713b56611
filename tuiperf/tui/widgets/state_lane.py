"""A thread's OS state lane in the timeline (model/timeline/state_lane.py): per column a
bar where the thread mostly ran (▄, `--ascii` =), a floor where it mostly waited (▁, _),
blank where no switch is recorded; and the work that adds these lanes after the first
frame."""

from __future__ import annotations

from typing import Any

import numpy as np
from textual.strip import Strip

from tuiperf.model.timeline.lanes import Lane
from tuiperf.model.timeline.state_lane import (
    RUNNING,
    WAITING,
    add_state_lanes,
    thread_states,
)
from tuiperf.model.trace import Trace
from tuiperf.tui.widgets.cell_lane import cells_strip, start_thread_rows
from tuiperf.tui.widgets.lane_render import BUSY, EMPTY

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
    """The lane's row (`tl`: the Timeline widget)."""
    return cells_strip(tl, lane, current, state_cells, "running")


# --- after the first frame ------------------------------------------------------------


def start(app: Any, trace: Trace) -> None:
    """Read the switches into lanes in a worker (nothing at all without them)."""
    start_thread_rows(app, trace, "thread_state", thread_states, add_state_lanes, "thread-state")
