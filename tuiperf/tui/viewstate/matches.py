"""The events table's current rows as matches on the timeline: `n`/`N` and highlights.

Pure numpy over the table's View (no Textual): the matched rows in time order for stepping,
and, per lane, which cells hold a match. A lane's per-position mask and running count are
built the first time the lane is drawn, so a frame costs O(columns · log n) afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tuiperf.model.timeline.lanes import Intervals, Lane

if TYPE_CHECKING:  # the events table's queries: imported with the table, after the first frame
    from tuiperf.model.timeline.query import View

#: draw the exact span of each matching event when the window holds at most this many
#: events per column; otherwise mark the cells where a matching event starts
EXACT_DENSITY = 4


@dataclass
class Matches:
    """Rows of table `table` that the events table shows, in time order."""

    table: str
    rows: np.ndarray  # int64 row numbers, ordered by (start, row)
    starts: np.ndarray  # their start times (ns)
    mask: np.ndarray  # bool per table row
    table_starts: np.ndarray  # start (ns) of every row of the table
    #: the table has a filter (otherwise every event matches and nothing is highlighted)
    filtered: bool
    _lanes: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_view(cls, view: View) -> Matches:
        events = view.events
        mask = np.zeros(events.num_rows, dtype=bool)
        mask[view.indices] = True
        rows = np.flatnonzero(mask)
        all_starts = np.asarray(events.column("start").values, dtype=np.int64)
        starts = all_starts[rows]
        if len(starts) > 1 and bool(np.any(starts[1:] < starts[:-1])):
            order = np.lexsort((rows, starts))
            rows, starts = rows[order], starts[order]
        return cls(events.kind, rows, starts, mask, all_starts, view.query.is_filtered)

    def __len__(self) -> int:
        return len(self.rows)

    # -- n / N ------------------------------------------------------------------------
    def start_of(self, row: int) -> int:
        return int(self.table_starts[row])

    def step(self, t: float, row: int | None, direction: int) -> tuple[int | None, bool]:
        """The next (direction > 0) or previous match after time t (and row `row`, when the
        selection is an event of this table); wraps around. Returns (row, wrapped)."""
        n = len(self.rows)
        if n == 0:
            return None, False
        i = self._after(t, row) if direction > 0 else self._before(t, row)
        wrapped = not 0 <= i < n
        if wrapped:
            i = 0 if direction > 0 else n - 1
        return int(self.rows[i]), wrapped

    def _after(self, t: float, row: int | None) -> int:
        if row is None:
            return int(np.searchsorted(self.starts, t, side="right"))
        i = int(np.searchsorted(self.starts, t, side="left"))
        while i < len(self.rows) and self.starts[i] == t and self.rows[i] <= row:
            i += 1
        return i

    def _before(self, t: float, row: int | None) -> int:
        if row is None:
            return int(np.searchsorted(self.starts, t, side="left")) - 1
        j = int(np.searchsorted(self.starts, t, side="right")) - 1
        while j >= 0 and self.starts[j] == t and self.rows[j] >= row:
            j -= 1
        return j

    # -- highlights -----------------------------------------------------------------------
    def _lane(self, lane: int, iv: Intervals) -> tuple[np.ndarray, np.ndarray]:
        hit = self._lanes.get(lane)
        if hit is None:
            rows = iv.rows
            ok = rows < len(self.mask)
            hits = np.zeros(len(rows), dtype=bool)
            hits[ok] = self.mask[rows[ok]]
            count = np.zeros(len(rows) + 1, dtype=np.int64)
            np.cumsum(hits, out=count[1:])
            hit = self._lanes[lane] = (hits, count)
        return hit

    def prepare(self, lanes: list[Lane]) -> None:
        """Build the per-lane arrays now (in a worker), not on the lanes' first frame."""
        if self.filtered:
            for i, lane in enumerate(lanes):
                if lane.table == self.table:
                    self._lane(i, lane.iv)

    def cells(self, lane: int, iv: Intervals, edges: np.ndarray) -> np.ndarray | None:
        """Per column of the frame (edges: columns + 1 int64 ns): does it hold a match?"""
        if not self.filtered or len(iv) == 0:
            return None
        hits, count = self._lane(lane, iv)
        columns = len(edges) - 1
        t0, t1 = int(edges[0]), int(edges[-1])
        i0, i1 = iv.window(t0, t1)
        if count[i1] == count[i0]:
            return None
        if i1 - i0 <= EXACT_DENSITY * columns:
            return _exact(iv, hits, i0, i1, edges)
        first = np.searchsorted(iv.starts, edges, side="left")
        return np.diff(count[first]) > 0 if columns else None


def _exact(iv: Intervals, hits: np.ndarray, i0: int, i1: int, edges: np.ndarray) -> np.ndarray:
    """Every column that a matching event in positions [i0, i1) overlaps (at least one)."""
    columns = len(edges) - 1
    out = np.zeros(columns, dtype=bool)
    pos = i0 + np.flatnonzero(hits[i0:i1])
    c0 = np.searchsorted(edges, iv.starts[pos], side="right") - 1
    c1 = np.searchsorted(edges, iv.ends[pos], side="left")
    c0 = np.clip(c0, 0, columns - 1)
    c1 = np.clip(np.maximum(c1, c0 + 1), 1, columns)
    for a, b in zip(c0.tolist(), c1.tolist(), strict=True):
        out[a:b] = True
    return out
