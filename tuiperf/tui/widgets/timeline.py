"""The zoomable timeline: a ruler and one row per lane, drawn with the line API.

The widget keeps view state only (viewport, lane cursor, selection, marked range); the
maths is in `tuiperf.model.timeline` and the per-lane indexes in `tuiperf.model.lanes`.
Every frame costs O(columns · log events) per visible lane.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from tuiperf.model.fmt import clean
from tuiperf.model.lanes import LaneSet
from tuiperf.model.timeline import (
    PAGE_FRACTION,
    STEP_FRACTION,
    Viewport,
    ZoomStack,
    format_time,
    scale_label,
    ticks,
)
from tuiperf.model.trace import Trace
from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import UNICODE, Glyphs, asciify
from tuiperf.tui.messages import EventSelected, RangeMarked, SelectionCleared, ViewportChanged
from tuiperf.tui.widgets.lane_render import (
    CURSOR,
    Highlight,
    LaneStyles,
    frame_edges,
    lane_cells,
    to_segments,
)


@dataclass(frozen=True)
class Row:
    """A visible row: a group header (lane = None) or a lane."""

    group: int
    lane: int | None


@dataclass(frozen=True)
class Selection:
    table: str
    row: int
    lane: int | None
    pos: int | None
    start: int
    end: int


class Timeline(Widget, can_focus=True):
    """Lanes of busy cells over a time ruler; keys and mouse zoom, pan and select."""

    BINDINGS = bindings("timeline")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--ruler",
        "timeline--tick",
        "timeline--label",
        "timeline--label-current",
        "timeline--group",
        "timeline--empty",
        "timeline--kernel",
        "timeline--memcpy",
        "timeline--memset",
        "timeline--api",
        "timeline--nvtx",
        "timeline--osrt",
        "timeline--selected",
        "timeline--partner",
        "timeline--cursor",
        "timeline--mark",
        "timeline--match",
    }

    def __init__(self, glyphs: Glyphs = UNICODE, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.g = glyphs
        self.trace: Trace | None = None
        self.lanes: LaneSet | None = None
        self.vp = Viewport.fit(0, 1, 1)
        self.rows: list[Row] = []
        self.collapsed: set[int] = set()
        self.row_cursor = 0
        self.top = 0
        self.cursor_t = 0.0
        self.selection: Selection | None = None
        self.partner: Selection | None = None
        #: launches with an Nsight Compute result (`tuiperf.model.ncu_link.LaneMarks`), or None
        self.ncu_marks: Any = None
        #: rows the events table shows (`tuiperf.tui.matches.Matches`), highlighted; or None
        self.matches: Any = None
        #: GPU idle gaps coloured by cause (`gap_colours.GapColours`), or None
        self.gap_colours: Any = None
        self.mark: list[float | None] = [None, None]
        self.zooms = ZoomStack()
        self._zooming = False
        self._cache: dict[int, Strip] = {}
        self._drag_x: int | None = None
        self._dragged = False

    # --- data ---------------------------------------------------------------------

    def set_data(self, trace: Trace, lanes: LaneSet) -> None:
        self.trace, self.lanes = trace, lanes
        self.vp = Viewport.fit(lanes.lo, lanes.hi, self.columns)
        self.cursor_t = (self.vp.start + self.vp.end) / 2
        self._rebuild_rows()
        self.changed()

    @property
    def label_width(self) -> int:
        return min(max(self.size.width // 4, 12), 28)

    @property
    def columns(self) -> int:
        return max(self.size.width - self.label_width - 1, 1)

    @property
    def lane_rows(self) -> int:
        return max(self.size.height - 1, 1)

    def _rebuild_rows(self) -> None:
        assert self.lanes is not None
        self.rows = []
        for gi, group in enumerate(self.lanes.groups):
            self.rows.append(Row(gi, None))
            if gi not in self.collapsed:
                self.rows += [Row(gi, li) for li in group.lanes]
        self.row_cursor = min(self.row_cursor, max(len(self.rows) - 1, 0))
        if self.row_cursor == 0 and len(self.rows) > 1:
            self.row_cursor = 1

    @property
    def current(self) -> Row | None:
        return self.rows[self.row_cursor] if self.rows else None

    @property
    def current_lane(self) -> int | None:
        row = self.current
        return None if row is None else row.lane

    def changed(self, viewport: bool = True) -> None:
        """Redraw, and tell the app what the status line should say."""
        self._cache.clear()
        self.refresh()
        if viewport and self.lanes is not None:
            lane = self.current_lane
            name = self.lanes.lanes[lane].label if lane is not None else ""
            self.post_message(ViewportChanged(self.vp.start, self.vp.end, self.scale_text, name))
            # the status line is not on screen while the timeline is maximised: the window
            # and scale then sit in the bottom border (drawn only in that state, app.tcss)
            text = f"{self.scale_text} {self.g.sep} {clean(name)}" if name else self.scale_text
            self.border_subtitle = Content(asciify(text) if self.g.ascii else text)

    @property
    def scale_text(self) -> str:
        return scale_label(self.vp, self.g.ascii)

    def on_resize(self, event: events.Resize) -> None:
        self.vp = self.vp.with_columns(self.columns)
        self._scroll_to_cursor()
        self.changed()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.rows) + 1

    # --- drawing ------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        if self.vp.columns != self.columns:  # resized, and Resize not handled yet
            self.vp = self.vp.with_columns(self.columns)
            self._cache.clear()
        strip = self._cache.get(y)
        if strip is None:
            strip = self._draw_line(y)
            self._cache[y] = strip
        return strip

    def _draw_line(self, y: int) -> Strip:
        width = self.size.width
        if self.lanes is None:
            return Strip.blank(width, self.rich_style)
        if y == 0:
            return self._ruler()
        r = self.top + y - 1
        if r >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        row = self.rows[r]
        if row.lane is None:
            return self._group_line(row, r == self.row_cursor)
        return self._lane_line(row.lane, r == self.row_cursor)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"timeline--{name}")

    def _label(self, text: str, style: Style) -> list[Segment]:
        w = self.label_width
        text = asciify(clean(text)) if self.g.ascii else clean(text)
        if len(text) > w:
            text = text[: w - 1] + self.g.ellipsis
        return [Segment(text.ljust(w), style), Segment(self.g.sep, self._style("ruler"))]

    def _ruler(self) -> Strip:
        vp, cols = self.vp, self.columns
        chars = [" "] * cols
        for t in ticks(vp, self.g.ascii):
            chars[t.col] = self.g.tick
            for i, ch in enumerate(t.label):
                if t.col + 1 + i < cols:
                    chars[t.col + 1 + i] = ch
        for i, m in enumerate(self.mark):
            c = vp.col_of(m) if m is not None else -1
            if 0 <= c < cols:
                chars[c] = self.g.mark_start if i == 0 else self.g.mark_end
        c = vp.col_of(self.cursor_t)
        where = f"{self.g.cursor} {format_time(self.cursor_t, vp.span, self.g.ascii)}"
        segs = self._label(where, self._style("ruler"))
        ruler, cursor = self._style("tick"), self._style("cursor")
        if 0 <= c < cols:
            if chars[c] in (" ", self.g.tick):  # never hide a tick label's digits
                chars[c] = self.g.cursor
            segs += [
                Segment("".join(chars[:c]), ruler),
                Segment(chars[c], cursor),
                Segment("".join(chars[c + 1 :]), ruler),
            ]
        else:
            segs.append(Segment("".join(chars), ruler))
        return Strip(segs, self.size.width)

    def _group_line(self, row: Row, current: bool) -> Strip:
        assert self.lanes is not None
        group = self.lanes.groups[row.group]
        mark = self.g.closed_group if row.group in self.collapsed else self.g.open_group
        style = self._style("label-current" if current else "group")
        n = len(group.lanes)
        note = f"  ({n} lanes hidden)" if row.group in self.collapsed else ""
        text = clean(f"{mark} {group.label}{note}")[: self.size.width]
        if self.g.ascii:
            text = asciify(text)
        return Strip([Segment(text, style)]).extend_cell_length(self.size.width, self.rich_style)

    def _lane_line(self, li: int, current: bool) -> Strip:
        assert self.lanes is not None
        lane = self.lanes.lanes[li]
        edges = frame_edges(self.vp)
        hl = Highlight(self._span(self.selection, li), self._span(self.partner, li))
        if self.matches is not None and lane.table == self.matches.table:
            hl.matches = self.matches.cells(li, lane.iv, edges)
        chars, sids = lane_cells(lane, self.vp, edges, self.g, hl)
        gaps = self.gap_colours if self.gap_colours and self.gap_colours.applies(lane) else None
        if gaps is not None:
            gaps.paint(edges, chars, sids)
        if self.ncu_marks is not None and lane.table == "kernels":
            marked = self.ncu_marks.columns(li, lane.iv.starts, lane.iv.rows, edges)
            for c in np.flatnonzero(marked).tolist():  # on event boxes (zoomed in) only
                if chars[c] == self.g.box_edge:
                    chars[c] = "*" if self.g.ascii else "◆"
        c = self.vp.col_of(self.cursor_t)
        if 0 <= c < self.columns and chars[c] == " ":
            chars[c] = self.g.cursor_line
            sids[c] = CURSOR
        styles = LaneStyles(
            self._style("empty"),
            self._style(lane.kind),
            self._style(lane.kind) + Style(reverse=True),
            self._style("selected"),
            self._style("partner"),
            self._style("cursor"),
            self._style("mark"),
            self._style(lane.kind) + self._style("match"),
            gaps.styles if gaps is not None else {},
        )
        label = self._style("label-current" if current else "label")
        segs = self._label(f"  {lane.label}", label)
        segs += to_segments(chars, sids, self._marked(), styles)
        return Strip(segs, self.size.width)

    def _span(self, sel: Selection | None, li: int) -> tuple[int, int] | None:
        if sel is None or sel.lane != li:
            return None
        c0 = self.vp.col_of(sel.start)
        c1 = max(self.vp.col_of(sel.end - 1e-9) + 1, c0 + 1)
        return c0, c1

    def _marked(self) -> np.ndarray | None:
        a, b = self.mark
        if a is None:
            return None
        b = a if b is None else b
        lo, hi = min(a, b), max(a, b)
        edges = self.vp.edges()
        return (edges[1:] > lo) & (edges[:-1] <= hi)

    # --- view changes -----------------------------------------------------------

    def set_viewport(self, vp: Viewport, push: bool = False) -> None:
        if push:
            self.zooms.push(self.vp)
        self.vp = vp
        self.changed()

    def _anchor(self) -> float:
        if self.vp.start <= self.cursor_t <= self.vp.end:
            return self.cursor_t
        return (self.vp.start + self.vp.end) / 2

    def zoom_by(self, zoom_in: bool, anchor: float | None = None) -> None:
        if not self._zooming:  # one zoom-stack entry per burst of +/- presses
            self.zooms.push(self.vp)
        anchor = self._anchor() if anchor is None else anchor
        self.vp = self.vp.zoom_in(anchor) if zoom_in else self.vp.zoom_out(anchor)
        self._zooming = True
        self.changed()

    def pan_by(self, fraction: float) -> None:
        col = self.vp.col_of(self.cursor_t)
        self.vp = self.vp.pan(fraction)
        self._zooming = False
        if 0 <= col < self.columns:
            self.cursor_t = self.vp.time_of(col + 0.5)
        self.changed()

    def action_zoom_in(self) -> None:
        self.zoom_by(True)

    def action_zoom_out(self) -> None:
        self.zoom_by(False)

    def action_pan(self, direction: int) -> None:
        self.pan_by(direction * STEP_FRACTION)

    def action_page(self, direction: int) -> None:
        self.pan_by(direction * PAGE_FRACTION)

    def action_go_edge(self, direction: int) -> None:
        self.pan_by(direction * (self.vp.hi - self.vp.lo) / max(self.vp.span, 1))

    def action_fit_all(self) -> None:
        if self.lanes is not None:
            self._zooming = False
            self.set_viewport(Viewport.fit(self.lanes.lo, self.lanes.hi, self.columns), True)

    def action_fit_selection(self) -> None:
        a, b = self.mark
        self._zooming = False
        if a is not None and b is not None:
            self.set_viewport(self.vp.fit_range(min(a, b), max(a, b), 0), push=True)
        elif self.selection is not None:
            self.set_viewport(self.vp.fit_range(self.selection.start, self.selection.end), True)

    def action_zoom_back(self) -> None:
        vp = self.zooms.pop(self.vp)
        self._zooming = False
        if vp is not None:
            self.vp = vp
            self.changed()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.lanes is None and action not in ("help", "quit"):
            return None
        if action == "fit_selection" and self.selection is None and None in self.mark:
            return None
        if action == "zoom_back" and len(self.zooms) == 0:
            return None
        return True

    # --- lanes ------------------------------------------------------------------

    def action_lane(self, delta: int) -> None:
        if not self.rows:
            return
        self.row_cursor = min(max(self.row_cursor + delta, 0), len(self.rows) - 1)
        self._scroll_to_cursor()
        self.changed()

    def _scroll_to_cursor(self) -> None:
        if self.row_cursor < self.top:
            self.top = self.row_cursor
        elif self.row_cursor >= self.top + self.lane_rows:
            self.top = self.row_cursor - self.lane_rows + 1
        self.top = max(0, min(self.top, max(len(self.rows) - self.lane_rows, 0)))

    def action_toggle_group(self) -> None:
        row = self.current
        if row is None:
            return
        self.collapsed ^= {row.group}
        self._rebuild_rows()
        self.row_cursor = self.rows.index(Row(row.group, None))
        self._scroll_to_cursor()
        self.changed(viewport=False)

    # --- events -----------------------------------------------------------------

    def action_gap_causes(self) -> None:
        from tuiperf.tui.widgets.gap_colours import toggle

        toggle(self)

    def action_step_event(self, direction: int) -> None:
        li = self.current_lane
        if li is None or self.lanes is None:
            return
        iv = self.lanes.lanes[li].iv
        sel = self.selection
        if sel is not None and sel.lane == li and sel.pos is not None:
            pos: int | None = sel.pos + direction
            pos = pos if pos is not None and 0 <= pos < len(iv) else None
        elif direction > 0:
            pos = iv.next_after(self.cursor_t)
        else:
            pos = iv.prev_before(self.cursor_t)
        if pos is not None:
            self._select_pos(li, pos, details=False)

    def _select_pos(self, li: int, pos: int, details: bool) -> None:
        assert self.lanes is not None
        lane = self.lanes.lanes[li]
        row = int(lane.iv.rows[pos])
        self.post_message(EventSelected(lane.table, row, "timeline", details))
        self.show_selection(lane.table, row)

    def show_selection(self, table: str, row: int, partner: tuple[str, int] | None = None) -> None:
        """Make (table, row) the selection: move to its lane and bring it into view."""
        sel = self._locate(table, row)
        if sel is None:
            return
        self.selection = sel
        self.partner = self._locate(*partner) if partner is not None else None
        if sel.lane is not None:
            self._goto_lane(sel.lane)
        self.cursor_t = float(sel.start)
        self.vp = self.vp.ensure_visible(sel.start, sel.end)
        self._zooming = False
        self.changed()

    def set_matches(self, matches: Any) -> None:
        """Highlight these events (the events table's filtered rows; None: nothing)."""
        self.matches = matches
        self.changed(viewport=False)

    def set_partner(self, partner: tuple[str, int] | None) -> None:
        self.partner = self._locate(*partner) if partner is not None else None
        self.changed(viewport=False)

    def _locate(self, table: str, row: int) -> Selection | None:
        if self.lanes is None or self.trace is None:
            return None
        found = self.lanes.locate(self.trace, table, row)
        if found is None:
            return None
        li, pos = found
        iv = self.lanes.lanes[li].iv
        return Selection(table, row, li, pos, int(iv.starts[pos]), int(iv.ends[pos]))

    def _goto_lane(self, li: int) -> None:
        assert self.lanes is not None
        group = next(gi for gi, g in enumerate(self.lanes.groups) if li in g.lanes)
        if group in self.collapsed:
            self.collapsed.discard(group)
            self._rebuild_rows()
        self.row_cursor = self.rows.index(Row(group, li))
        self._scroll_to_cursor()

    def clear_selection(self) -> None:
        self.selection = self.partner = None
        self.changed(viewport=False)

    def action_mark(self, which: int) -> None:
        self.mark[which] = self.cursor_t
        self.post_message(RangeMarked(self.mark[0], self.mark[1]))
        self.changed(viewport=False)

    def action_enter(self) -> None:
        row = self.current
        a, b = self.mark
        if row is None or self.lanes is None:
            return
        if row.lane is None:
            self.action_toggle_group()
        elif a is not None and b is not None and a != b:
            self.mark = [None, None]
            self._zooming = False
            self.set_viewport(self.vp.fit_range(min(a, b), max(a, b), 0), push=True)
            self.post_message(RangeMarked(None, None))
        else:
            sel = self.selection
            if sel is not None and sel.lane == row.lane and sel.start <= self.cursor_t <= sel.end:
                self.post_message(EventSelected(sel.table, sel.row, "timeline", True))
                return
            pos = self.lanes.lanes[row.lane].iv.at(self.cursor_t, self.vp.ns_per_col)
            if pos is not None:
                self._select_pos(row.lane, pos, details=True)

    def action_clear(self) -> None:
        if self.mark != [None, None]:
            self.mark = [None, None]
            self.post_message(RangeMarked(None, None))
            self.changed(viewport=False)
        elif self.selection is not None:
            self.clear_selection()
            self.post_message(SelectionCleared("timeline"))

    # --- mouse ------------------------------------------------------------------

    def _time_at(self, x: int) -> float | None:
        col = x - self.label_width - 1
        return self.vp.time_of(col + 0.5) if 0 <= col < self.columns else None

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.zoom_by(True, self._time_at(event.x))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.zoom_by(False, self._time_at(event.x))

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._drag_x, self._dragged = event.x, False
        self.capture_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._drag_x is None or not event.button:
            return
        dx = event.x - self._drag_x
        if dx:
            self._dragged = True
            self._drag_x = event.x
            self.vp = self.vp.pan_columns(-dx)
            self.changed()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self.release_mouse()
        dragged, self._drag_x = self._dragged, None
        if dragged:
            return
        t = self._time_at(event.x)
        r = self.top + event.y - 1
        if t is None or not 0 <= r < len(self.rows):
            return
        self.row_cursor = r
        self.cursor_t = t
        lane = self.rows[r].lane
        if lane is None:
            self.action_toggle_group()
            return
        assert self.lanes is not None
        pos = self.lanes.lanes[lane].iv.at(t, self.vp.ns_per_col)
        if pos is not None:
            self._select_pos(lane, pos, details=True)
        else:
            self.changed()
