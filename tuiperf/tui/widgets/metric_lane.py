"""A GPU metric's lane in the timeline (model/timeline/metric_lane.py): each column's mean
in eighths of the metric's scale (▁…█, `--ascii` _.-:=+*#), blank where no sample falls;
the cursor's column marked as on any lane."""

from __future__ import annotations

from typing import Any

import numpy as np
from textual.strip import Strip

from tuiperf.model.timeline.lanes import Lane
from tuiperf.tui.widgets.lane_render import (
    BUSY,
    CURSOR,
    EMPTY,
    LaneStyles,
    frame_edges,
    to_segments,
)

#: a metric lane's cells, from nothing to the scale (metric_lane.LEVELS + 1 of them)
BARS = " ▁▂▃▄▅▆▇█"
BARS_ASCII = " _.-:=+*#"


def metric_cells(lane: Lane, edges: np.ndarray, ascii_only: bool) -> tuple[list[str], np.ndarray]:
    """(a character per column, its style id) of a metric lane."""
    assert lane.metric is not None
    bars = BARS_ASCII if ascii_only else BARS
    levels = lane.metric.levels(edges)
    chars = [bars[v] if v >= 0 else " " for v in levels.tolist()]
    return chars, np.where(levels > 0, BUSY, EMPTY).astype(np.int8)


def metric_strip(tl: Any, lane: Lane, current: bool) -> Strip:
    """The lane's row: its label, then the sparkline (`tl`: the Timeline widget)."""
    chars, sids = metric_cells(lane, frame_edges(tl.vp), tl.g.ascii)
    c = tl.vp.col_of(tl.cursor_t)
    if 0 <= c < tl.columns and chars[c] == " ":
        chars[c] = tl.g.cursor_line
        sids[c] = CURSOR
    style, empty = tl._style("metric"), tl._style("empty")
    styles = LaneStyles(empty, style, style, style, style, tl._style("cursor"), tl._style("mark"))
    label = tl._style("label-current" if current else "label")
    segs = tl._label(f"  {lane.label}", label)
    segs += to_segments(chars, sids, tl.state.marked_columns(), styles)
    return Strip(segs, tl.size.width)
