"""A GPU metric's lane in the timeline (model/timeline/metric_lane.py): each column's mean
in eighths of the metric's scale (▁…█, `--ascii` _.-:=+*#), blank where no sample falls;
the cursor's column marked as on any lane."""

from __future__ import annotations

from typing import Any

import numpy as np
from textual.strip import Strip

from tuiperf.model.timeline.lanes import Lane
from tuiperf.tui.widgets.cell_lane import cells_strip
from tuiperf.tui.widgets.lane_render import BUSY, EMPTY

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
    """The lane's row (`tl`: the Timeline widget)."""
    return cells_strip(tl, lane, current, metric_cells, "metric")
