"""What the timeline shows and where its cursors are, kept apart from the terminal.

The viewport (window, zoom, pan) is `tuiperf.model.timeline.viewport.Viewport`; this adds what the
widget used to keep beside it: the rows (group headers and lanes, groups folded or not), the
lane cursor and the first row on screen, the time cursor, the selected event and its
partner, the marked range, and the zoom stack. The widget
(`tuiperf.tui.widgets.timeline`) draws this state and dispatches keys and mouse to it.

Sizes come from the widget: `columns` (cells of time) and `page` (lane rows on screen).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tuiperf.model.timeline.lanes import Group, LaneSet
from tuiperf.model.timeline.viewport import PAGE_FRACTION, STEP_FRACTION, Viewport, ZoomStack
from tuiperf.model.trace import Trace
from tuiperf.tui.viewstate import layout as L


@dataclass(frozen=True)
class Row:
    """A visible row: a group header (lane = None) or a lane."""

    group: int
    lane: int | None


@dataclass(frozen=True)
class Selection:
    """Event `row` of `table`, at position `pos` of lane `lane`, over [start, end) ns."""

    table: str
    row: int
    lane: int | None
    pos: int | None
    start: int
    end: int


class TimelineState:
    """Viewport, rows, cursors, selection and marks of one timeline."""

    def __init__(self) -> None:
        self.trace: Trace | None = None
        #: the report's lanes (`base`) and what the layout shows of them (`lanes`: same lane
        #: indices, other groups: viewstate/layout.py)
        self.base: LaneSet | None = None
        self.lanes: LaneSet | None = None
        self.layout = L.Layout()
        self._bundles: dict[str, list[Group]] = {}
        self.vp = Viewport.fit(0, 1, 1)
        self.rows: list[Row] = []
        self.collapsed: set[int] = set()
        self.row_cursor = 0
        #: the first row on screen (below the ruler)
        self.top = 0
        #: the time cursor (ns)
        self.cursor_t = 0.0
        self.selection: Selection | None = None
        self.partner: Selection | None = None
        #: the marked range's start and end (None: not marked)
        self.mark: list[float | None] = [None, None]
        self.zooms = ZoomStack()
        #: inside a burst of zoom steps (one zoom-stack entry for the whole burst)
        self.zooming = False

    # --- data -------------------------------------------------------------------------

    def set_data(
        self, trace: Trace, lanes: LaneSet, columns: int, layout: L.Layout | None = None
    ) -> None:
        """Show `lanes` whole (as `layout` arranges them), the time cursor in the middle."""
        self.trace, self.base = trace, lanes
        self.layout = layout or L.Layout()
        self._bundles = L.bundles(lanes)
        self.vp = Viewport.fit(lanes.lo, lanes.hi, columns)
        self.cursor_t = (self.vp.start + self.vp.end) / 2
        self.arrange()

    def arrange(self, keep: int | None = None) -> None:
        """Groups and rows again from the layout; the lane cursor on lane `keep` if shown."""
        assert self.base is not None
        self.lanes, self.collapsed = L.arrange(self.base, self.layout, self._bundles)
        self.rebuild_rows()
        if keep is not None:
            at = [r for r, row in enumerate(self.rows) if row.lane == keep]
            self.row_cursor = at[0] if at else self.row_cursor

    def rebuild_rows(self) -> None:
        """Rows from the groups (a folded group shows its header only); the cursor stays
        in range, on the first lane rather than the first header."""
        assert self.lanes is not None
        self.rows = []
        for gi, group in enumerate(self.lanes.groups):
            self.rows.append(Row(gi, None))
            if gi not in self.collapsed:
                self.rows += [Row(gi, li) for li in group.lanes]
        self.row_cursor = min(self.row_cursor, max(len(self.rows) - 1, 0))
        if self.row_cursor == 0 and len(self.rows) > 1:
            self.row_cursor = 1

    def lanes_added(self) -> None:
        """Lanes were appended to the report's lanes (memory lanes, read after the first
        frame): arranged again as the layout says, the lane cursor on the same lane."""
        assert self.base is not None
        self._bundles = L.bundles(self.base)
        self.arrange(keep=self.current_lane)

    def show_time(self, t: float, lane: int | None = None, page: int = 1) -> None:
        """The time cursor at `t`, in view (the zoom kept), the lane cursor on `lane`."""
        self.zooms.push(self.vp)
        self.vp = self.vp.ensure_visible(t, t + 1)
        self.cursor_t = float(t)
        if lane is not None:
            self.goto_lane(lane, page)

    def resize(self, columns: int) -> bool:
        """The width in cells of time changed; False when it did not."""
        if self.vp.columns == max(int(columns), 1):
            return False
        self.vp = self.vp.with_columns(columns)
        return True

    @property
    def current(self) -> Row | None:
        return self.rows[self.row_cursor] if self.rows else None

    @property
    def current_lane(self) -> int | None:
        row = self.current
        return None if row is None else row.lane

    def lane_label(self) -> str:
        """The label of the lane under the cursor ("" on a group header)."""
        lane = self.current_lane
        if lane is None or not self.lanes:
            return ""
        line = self.lanes.lanes[lane].metric  # a GPU metric: its value at the cursor too
        if line is not None:
            return f"{line.label} {line.text(line.s.at(self.cursor_t))} at the cursor"
        if self.lanes.lanes[lane].ticks is not None:  # CPU samples: the function sampled
            from tuiperf.model.timeline.sample_lane import cursor_text

            return cursor_text(self.lanes.lanes[lane], self.cursor_t, self.vp.ns_per_col)
        if self.lanes.lanes[lane].state is not None:  # OS thread state: running / waiting
            from tuiperf.model.timeline import state_lane

            return state_lane.cursor_text(self.lanes.lanes[lane], self.cursor_t)
        return self.lanes.lanes[lane].label

    # --- the viewport -----------------------------------------------------------------

    def set_viewport(self, vp: Viewport, push: bool = False) -> None:
        if push:
            self.zooms.push(self.vp)
        self.vp = vp

    def anchor(self) -> float:
        """Where zooming keeps still: the time cursor when on screen, else the middle."""
        if self.vp.start <= self.cursor_t <= self.vp.end:
            return self.cursor_t
        return (self.vp.start + self.vp.end) / 2

    def zoom_by(self, zoom_in: bool, anchor: float | None = None) -> None:
        if not self.zooming:  # one zoom-stack entry per burst of +/- presses
            self.zooms.push(self.vp)
        anchor = self.anchor() if anchor is None else anchor
        self.vp = self.vp.zoom_in(anchor) if zoom_in else self.vp.zoom_out(anchor)
        self.zooming = True

    def pan_by(self, fraction: float) -> None:
        """Move by `fraction` of the window; a time cursor on screen keeps its column."""
        col = self.vp.col_of(self.cursor_t)
        self.vp = self.vp.pan(fraction)
        self.zooming = False
        if 0 <= col < self.vp.columns:
            self.cursor_t = self.vp.time_of(col + 0.5)

    def pan(self, direction: int) -> None:
        self.pan_by(direction * STEP_FRACTION)

    def page(self, direction: int) -> None:
        self.pan_by(direction * PAGE_FRACTION)

    def go_edge(self, direction: int) -> tuple[int, int] | None:
        """To the start (-1) or the end (+1) of the trace. The time cursor goes there too,
        and the selection with it: the first (last) event of the current lane, returned as
        (lane, position) for the caller to select; with no event there, none stays
        selected, so `.` and `,` go on from the edge, not from the old selection."""
        self.pan_by(direction * (self.vp.hi - self.vp.lo) / max(self.vp.span, 1))
        self.cursor_t = float(self.vp.lo if direction < 0 else self.vp.hi)
        li = self.current_lane
        n = len(self.lanes.lanes[li].iv) if li is not None and self.lanes is not None else 0
        if li is None or n == 0:
            self.clear_selection()
            return None
        return li, (0 if direction < 0 else n - 1)

    def drag(self, columns: int) -> None:
        """The mouse dragged the time `columns` cells to the right."""
        self.vp = self.vp.pan_columns(-columns)

    def fit_all(self, columns: int) -> bool:
        """The whole trace in `columns` cells."""
        if self.lanes is None:
            return False
        self.zooming = False
        self.set_viewport(Viewport.fit(self.lanes.lo, self.lanes.hi, columns), True)
        return True

    def fit_selection(self) -> bool:
        """Zoom onto the marked range, else onto the selected event."""
        a, b = self.mark
        self.zooming = False
        if a is not None and b is not None:
            self.set_viewport(self.vp.fit_range(min(a, b), max(a, b), 0), push=True)
        elif self.selection is not None:
            self.set_viewport(self.vp.fit_range(self.selection.start, self.selection.end), True)
        else:
            return False
        return True

    def zoom_back(self) -> bool:
        vp = self.zooms.pop(self.vp)
        self.zooming = False
        if vp is None:
            return False
        self.vp = vp
        return True

    def can(self, action: str) -> bool | None:
        """Whether a timeline action applies now (None: greyed out)."""
        if self.lanes is None and action not in ("help", "quit"):
            return None
        if action == "fit_selection" and self.selection is None and None in self.mark:
            return None
        if action == "zoom_back" and len(self.zooms) == 0:
            return None
        return True

    # --- lanes ------------------------------------------------------------------------

    def move_lane(self, delta: int, page: int) -> bool:
        if not self.rows:
            return False
        self.row_cursor = min(max(self.row_cursor + delta, 0), len(self.rows) - 1)
        self.scroll_to_cursor(page)
        return True

    def scroll_to_cursor(self, page: int) -> None:
        """Keep the lane cursor among the `page` rows on screen."""
        if self.row_cursor < self.top:
            self.top = self.row_cursor
        elif self.row_cursor >= self.top + page:
            self.top = self.row_cursor - page + 1
        self.top = max(0, min(self.top, max(len(self.rows) - page, 0)))

    def toggle_group(self, page: int) -> bool:
        """Fold or unfold the group under the cursor; the cursor goes to its header."""
        row = self.current
        if row is None:
            return False
        self.collapsed ^= {row.group}
        assert self.lanes is not None
        self.layout.folded[self.lanes.groups[row.group].key] = row.group in self.collapsed
        self.rebuild_rows()
        self.row_cursor = self.rows.index(Row(row.group, None))
        self.scroll_to_cursor(page)
        return True

    # --- lane control: hide, pin, move (viewstate/layout.py) ---------------------------

    def hide_lane(self) -> str | None:
        """Hide the lane under the cursor: its label, None on a group header."""
        li = self.current_lane
        if li is None or self.base is None:
            return None
        L.hide(self.layout, self.base.lanes[li])
        r = self.row_cursor
        self.arrange()
        self.row_cursor = min(r, max(len(self.rows) - 1, 0))
        return self.base.lanes[li].label

    def show_hidden(self) -> int:
        """Show every hidden lane again: how many there were."""
        n = len(self.layout.hidden)
        if n:
            L.unhide(self.layout)
            self.arrange(keep=self.current_lane)
        return n

    def pin_lane(self) -> bool | None:
        """Pin the lane under the cursor to the top (True) or unpin it (False); None on a
        group header."""
        li = self.current_lane
        if li is None or self.base is None:
            return None
        pinned = L.toggle_pin(self.layout, self.base.lanes[li])
        self.arrange(keep=li)
        return pinned

    def move_in_group(self, delta: int) -> bool:
        """Move the lane under the cursor up (-1) or down (1) inside its group."""
        row = self.current
        if row is None or row.lane is None or self.lanes is None:
            return False
        if not L.move(self.layout, self.lanes, row.group, row.lane, delta):
            return False
        self.arrange(keep=row.lane)
        return True

    def goto_lane(self, li: int, page: int) -> None:
        """Put the lane cursor on lane `li`, unfolding its group."""
        assert self.lanes is not None and self.base is not None
        if not any(li in g.lanes for g in self.lanes.groups):  # hidden: shown again
            L.unhide(self.layout, self.base.lanes[li])
            self.arrange()
        group = next(gi for gi, g in enumerate(self.lanes.groups) if li in g.lanes)
        if group in self.collapsed:
            self.collapsed.discard(group)
            self.rebuild_rows()
        self.row_cursor = self.rows.index(Row(group, li))
        self.scroll_to_cursor(page)

    def row_at(self, y: int) -> int | None:
        """The row drawn on screen line `y`, or None (the ruler is line 0)."""
        r = self.top + y - 1
        return r if y >= 1 and r < len(self.rows) else None

    # --- events -----------------------------------------------------------------------

    def step_event(self, direction: int) -> tuple[int, int] | None:
        """(lane, position) of the next (previous) event on the current lane: after the
        selected one, else after the time cursor."""
        li = self.current_lane
        if li is None or self.lanes is None:
            return None
        iv = self.lanes.lanes[li].iv
        sel = self.selection
        if sel is not None and sel.lane == li and sel.pos is not None:
            pos: int | None = sel.pos + direction
            pos = pos if pos is not None and 0 <= pos < len(iv) else None
        elif direction > 0:
            pos = iv.next_after(self.cursor_t)
        else:
            pos = iv.prev_before(self.cursor_t)
        return None if pos is None else (li, pos)

    def event_at(self, li: int, t: float) -> int | None:
        """The position of the event of lane `li` drawn at time `t` (within a column)."""
        assert self.lanes is not None
        return self.lanes.lanes[li].iv.at(t, self.vp.ns_per_col)

    def event_of(self, li: int, pos: int) -> tuple[str, int]:
        """(table, row) of the event at position `pos` of lane `li`."""
        assert self.lanes is not None
        lane = self.lanes.lanes[li]
        return lane.table, int(lane.iv.rows[pos])

    def selected_under_cursor(self, li: int) -> bool:
        """The selection is on lane `li` and under the time cursor."""
        sel = self.selection
        return sel is not None and sel.lane == li and sel.start <= self.cursor_t <= sel.end

    def locate(self, table: str, row: int) -> Selection | None:
        """Where event `row` of `table` is drawn, or None (not on any lane)."""
        if self.lanes is None or self.trace is None:
            return None
        found = self.lanes.locate(self.trace, table, row)
        if found is None:
            return None
        li, pos = found
        iv = self.lanes.lanes[li].iv
        return Selection(table, row, li, pos, int(iv.starts[pos]), int(iv.ends[pos]))

    def select(
        self, table: str, row: int, page: int, partner: tuple[str, int] | None = None
    ) -> bool:
        """Make (table, row) the selection: its lane under the cursor, in view."""
        sel = self.locate(table, row)
        if sel is None:
            return False
        self.selection = sel
        self.partner = self.locate(*partner) if partner is not None else None
        if sel.lane is not None:
            self.goto_lane(sel.lane, page)
        self.cursor_t = float(sel.start)
        self.vp = self.vp.ensure_visible(sel.start, sel.end)
        self.zooming = False
        return True

    def set_partner(self, partner: tuple[str, int] | None) -> None:
        self.partner = self.locate(*partner) if partner is not None else None

    def clear_selection(self) -> None:
        self.selection = self.partner = None

    # --- the marked range ---------------------------------------------------------------

    def set_mark(self, which: int) -> None:
        """Mark the range's start (0) or end (1) at the time cursor."""
        self.mark[which] = self.cursor_t

    @property
    def marked_range(self) -> tuple[float, float] | None:
        """(lo, hi) of a range marked at both ends and not empty."""
        a, b = self.mark
        if a is None or b is None or a == b:
            return None
        return min(a, b), max(a, b)

    def clear_marks(self) -> bool:
        """Forget the marked range; False when nothing was marked."""
        if self.mark == [None, None]:
            return False
        self.mark = [None, None]
        return True

    def zoom_to_marks(self) -> bool:
        """Zoom onto the marked range and forget it; False without one."""
        span = self.marked_range
        if span is None:
            return False
        self.mark = [None, None]
        self.zooming = False
        self.set_viewport(self.vp.fit_range(span[0], span[1], 0), push=True)
        return True

    # --- drawing ----------------------------------------------------------------------

    def span(self, sel: Selection | None, li: int) -> tuple[int, int] | None:
        """The columns [c0, c1) that `sel` covers on lane `li` (at least one), or None."""
        if sel is None or sel.lane != li:
            return None
        c0 = self.vp.col_of(sel.start)
        c1 = max(self.vp.col_of(sel.end - 1e-9) + 1, c0 + 1)
        return c0, c1

    def marked_columns(self) -> np.ndarray | None:
        """Per column, whether it overlaps the marked range (a start alone: its column)."""
        a, b = self.mark
        if a is None:
            return None
        b = a if b is None else b
        lo, hi = min(a, b), max(a, b)
        edges = self.vp.edges()
        return (edges[1:] > lo) & (edges[:-1] <= hi)

    def time_at(self, col: int) -> float | None:
        """The time in the middle of column `col`, or None off the time columns."""
        return self.vp.time_of(col + 0.5) if 0 <= col < self.vp.columns else None
