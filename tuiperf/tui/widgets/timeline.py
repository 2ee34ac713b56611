"""The zoomable timeline: a ruler and one row per lane, drawn with the line API.

What it shows (viewport, rows, lane and time cursors, selection, marked range, zoom stack)
is `tuiperf.tui.viewstate.timeline.TimelineState`, a plain object tested without Textual; the
viewport maths is in `tuiperf.model.timeline.viewport` and the per-lane indexes in
`tuiperf.model.timeline.lanes`. This widget draws that state and dispatches keys and mouse to it.
Every frame costs O(columns · log events) per visible lane.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from tuiperf.model import fmt
from tuiperf.model.fmt import clean
from tuiperf.model.timeline.lanes import Lane, LaneSet
from tuiperf.model.timeline.same_name import next_same_name
from tuiperf.model.timeline.viewport import Viewport, ZoomStack, scale_label, ticks
from tuiperf.model.trace import Trace
from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import UNICODE, Glyphs, asciify
from tuiperf.tui.messages import EventSelected, RangeMarked, SelectionCleared, ViewportChanged
from tuiperf.tui.viewstate.timeline import Row, Selection, TimelineState
from tuiperf.tui.widgets import lane_control
from tuiperf.tui.widgets.lane_render import (
    BUSY,
    CURSOR,
    EMPTY,
    Highlight,
    LaneStyles,
    flow_ends,
    frame_edges,
    lane_cells,
    to_segments,
)
from tuiperf.tui.widgets.metric_lane import metric_strip
from tuiperf.tui.widgets.sample_lane import ticks_strip
from tuiperf.tui.widgets.state_attr import InState
from tuiperf.tui.widgets.state_lane import state_strip

__all__ = ["Row", "Selection", "Timeline"]

#: a level lane's cells, from nothing to the peak (memory_lane.LEVELS + 1 of them)
BARS = " ▁▂▃▄▅▆▇█"
BARS_ASCII = " _.-:=+*#"


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
        "timeline--graph",
        "timeline--api",
        "timeline--nvtx",
        "timeline--osrt",
        "timeline--memory",
        "timeline--metric",
        "timeline--samples",
        "timeline--running",
        "timeline--selected",
        "timeline--partner",
        "timeline--cursor",
        "timeline--mark",
        "timeline--match",
    }

    trace = InState[Trace | None]()
    lanes = InState[LaneSet | None]()
    vp = InState[Viewport]()
    rows = InState[list[Row]]()
    collapsed = InState[set[int]]()
    row_cursor = InState[int]()
    top = InState[int]()
    cursor_t = InState[float]()
    selection = InState[Selection | None]()
    partner = InState[Selection | None]()
    mark = InState[list[float | None]]()
    zooms = InState[ZoomStack]()

    def __init__(self, glyphs: Glyphs = UNICODE, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.g = glyphs
        self.state = TimelineState()
        #: launches with an Nsight Compute result (`tuiperf.model.ncu.link.LaneMarks`), or None
        self.ncu_marks: Any = None
        #: rows the events table shows (`viewstate.matches.Matches`), highlighted; or None
        self.matches: Any = None
        #: GPU idle gaps coloured by cause (`gap_colours.GapColours`), or None
        self.gap_colours: Any = None
        self._cache: dict[int, Strip] = {}
        self._drag_x: int | None = None
        self._dragged = False

    # --- data ---------------------------------------------------------------------

    def set_data(self, trace: Trace, lanes: LaneSet) -> None:
        self.state.set_data(trace, lanes, self.columns, lane_control.load(trace))
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

    @property
    def current(self) -> Row | None:
        return self.state.current

    @property
    def current_lane(self) -> int | None:
        return self.state.current_lane

    def changed(self, viewport: bool = True) -> None:
        """Redraw, and tell the app what the status line should say."""
        self._cache.clear()
        self.refresh()
        if viewport and self.lanes is not None:
            name = self.state.lane_label()
            self.post_message(ViewportChanged(self.vp.start, self.vp.end, self.scale_text, name))
            # the status line is not on screen while the timeline is maximised: the window
            # and scale then sit in the bottom border (drawn only in that state, app.tcss)
            text = f"{self.scale_text} {self.g.sep} {clean(name)}" if name else self.scale_text
            self.border_subtitle = Content(asciify(text) if self.g.ascii else text)

    @property
    def scale_text(self) -> str:
        return scale_label(self.vp, self.g.ascii)

    def on_resize(self, event: events.Resize) -> None:
        self.state.resize(self.columns)
        self.state.scroll_to_cursor(self.lane_rows)
        self.changed()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.rows) + 1

    # --- drawing ------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        if self.state.resize(self.columns):  # resized, and Resize not handled yet
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
        where = f"{self.g.cursor} {fmt.time_point(self.cursor_t, vp.span, self.g.ascii)}"
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
        gaps = self.gap_colours
        if gaps is not None and gaps.applies_group(group, self.lanes):
            return self._gap_line(f"{mark} {group.label}", style, gaps)
        n = len(group.lanes)
        note = f"  ({n} lanes hidden)" if row.group in self.collapsed else ""
        text = clean(f"{mark} {group.label}{note}")[: self.size.width]
        if self.g.ascii:
            text = asciify(text)
        return Strip([Segment(text, style)]).extend_cell_length(self.size.width, self.rich_style)

    def _gap_line(self, label: str, style: Style, gaps: Any) -> Strip:
        """A GPU group's header row while idle gaps are painted: the causes by column."""
        chars, sids = gaps.cells(frame_edges(self.vp))
        empty = self._style("empty")
        styles = LaneStyles(empty, empty, empty, empty, empty, empty, self._style("mark"),
                            extra=gaps.styles)  # fmt: skip
        segs = self._label(label, style) + to_segments(chars, sids, None, styles)
        return Strip(segs, self.size.width)

    def _lane_line(self, li: int, current: bool) -> Strip:
        assert self.lanes is not None
        lane = self.lanes.lanes[li]
        if lane.counter is not None:
            return self._counter_line(lane, current)
        if lane.metric is not None:
            return metric_strip(self, lane, current)
        if lane.ticks is not None:
            return ticks_strip(self, lane, current)
        if lane.state is not None:
            return state_strip(self, lane, current)
        edges = frame_edges(self.vp)
        hl = Highlight(self.state.span(self.selection, li), self.state.span(self.partner, li))
        if self.matches is not None and lane.table == self.matches.table:
            hl.matches = self.matches.cells(li, lane.iv, edges)
        chars, sids = lane_cells(lane, self.vp, edges, self.g, hl)
        if self.ncu_marks is not None and lane.table == "kernels":
            marked = self.ncu_marks.columns(li, lane.iv.starts, lane.iv.rows, edges)
            for c in np.flatnonzero(marked).tolist():  # on event boxes (zoomed in) only
                if chars[c] == self.g.box_edge:
                    chars[c] = "*" if self.g.ascii else "◆"
        if hl.partner is not None or (hl.selected is not None and self.partner is not None):
            flow_ends(chars, hl, self.columns, self.g.ascii)  # the launch link's two ends
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
        )
        label = self._style("label-current" if current else "label")
        segs = self._label(f"  {lane.label}", label)
        segs += to_segments(chars, sids, self.state.marked_columns(), styles)
        return Strip(segs, self.size.width)

    def _counter_line(self, lane: Lane, current: bool) -> Strip:
        """A level lane (a GPU's memory): each column's highest level in eighths of the
        peak, the peak's column drawn in the mark style."""
        assert lane.counter is not None
        edges = frame_edges(self.vp)
        bars = BARS_ASCII if self.g.ascii else BARS
        levels = lane.counter.levels(edges)
        chars = [bars[v] for v in levels.tolist()]
        sids = np.where(levels > 0, BUSY, EMPTY).astype(np.int8)
        c = self.vp.col_of(self.cursor_t)
        if 0 <= c < self.columns and chars[c] == " ":
            chars[c] = self.g.cursor_line
            sids[c] = CURSOR
        peak = np.zeros(len(chars), bool)
        p = lane.counter.peak_column(edges)
        if p >= 0:
            peak[p] = True
        memory = self._style(lane.kind)
        empty = self._style("empty")
        styles = LaneStyles(
            empty, memory, memory, memory, memory, self._style("cursor"), self._style("mark")
        )
        label = self._style("label-current" if current else "label")
        what = {"allocated": "alloc"}.get(str(lane.place.get("level")), lane.place.get("level"))
        text = f"  {what or 'memory'} {fmt.size(lane.counter.peak)}"
        segs = self._label(text, label) + to_segments(chars, sids, peak, styles)
        return Strip(segs, self.size.width)

    # --- view changes -----------------------------------------------------------

    def set_viewport(self, vp: Viewport, push: bool = False) -> None:
        self.state.set_viewport(vp, push)
        self.changed()

    def zoom_by(self, zoom_in: bool, anchor: float | None = None) -> None:
        self.state.zoom_by(zoom_in, anchor)
        self.changed()

    def action_zoom_in(self) -> None:
        self.zoom_by(True)

    def action_zoom_out(self) -> None:
        self.zoom_by(False)

    def action_pan(self, direction: int) -> None:
        self.state.pan(direction)
        self.changed()

    def action_page(self, direction: int) -> None:
        self.state.page(direction)
        self.changed()

    def action_go_edge(self, direction: int) -> None:
        found = self.state.go_edge(direction)
        if found is not None:
            self._select_pos(*found, details=False)
        self.changed()

    def action_fit_all(self) -> None:
        if self.state.fit_all(self.columns):
            self.changed()

    def action_fit_selection(self) -> None:
        if self.state.fit_selection():
            self.changed()

    def action_zoom_back(self) -> None:
        if self.state.zoom_back():
            self.changed()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.state.can(action)

    # --- lanes ------------------------------------------------------------------

    def action_lane(self, delta: int) -> None:
        if self.state.move_lane(delta, self.lane_rows):
            self.changed()

    def action_toggle_group(self) -> None:
        if self.state.toggle_group(self.lane_rows):
            lane_control.saved(self)

    def action_hide_lane(self) -> None:
        lane_control.hide(self)

    def action_show_hidden(self) -> None:
        lane_control.show_hidden(self)

    def action_pin_lane(self) -> None:
        lane_control.pin(self)

    def action_move_lane(self, delta: int) -> None:
        lane_control.move(self, delta)

    # --- events -----------------------------------------------------------------

    def action_gap_causes(self) -> None:
        from tuiperf.tui.widgets.gap_colours import toggle

        toggle(self)

    def action_step_event(self, direction: int) -> None:
        found = self.state.step_event(direction)
        if found is not None:
            self._select_pos(*found, details=False)

    def action_same_name(self, direction: int) -> None:
        """The next (previous) event with the selected one's name: a kernel's next launch."""
        sel = self.state.selection
        if sel is None or self.trace is None:
            self.notify("Select an event first (. , or the mouse).", timeout=2)
            return
        row = next_same_name(self.trace, sel.table, sel.row, direction)
        if row is None:
            where = "after" if direction > 0 else "before"
            self.notify(f"No event of the same name {where} this one.", timeout=2)
            return
        self.post_message(EventSelected(sel.table, row, "timeline", False))
        self.show_selection(sel.table, row)

    def action_jump_partner(self) -> None:
        """`p`: from a launch call to the GPU work it launched, or back (issue 34 item 6)."""
        sel, partner = self.state.selection, self.state.partner
        if sel is None:
            self.notify("Select a launch call or a kernel first (. , or the mouse).", timeout=2)
            return
        if partner is None:
            what = "GPU work" if sel.table == "api" else "launch call"
            self.notify(f"No {what} linked to this event in the report.", timeout=2)
            return
        self.show_selection(partner.table, partner.row, (sel.table, sel.row))
        self.post_message(EventSelected(partner.table, partner.row, "timeline", False))

    def action_range_stats(self) -> None:
        from tuiperf.tui.widgets.range_stats import open_range

        open_range(self)

    async def action_memory(self) -> None:
        await self.run_action("app.memory_pane")

    def add_lanes(self) -> None:
        """Lanes were appended to the lane set (memory lanes read after the first frame)."""
        if self.state.base is not None:
            self.state.lanes_added()
            self.changed(viewport=False)

    def show_time(self, t: float, lane: int | None = None) -> None:
        """The time cursor at `t` (the memory pane's peak), in view, on `lane`."""
        if self.state.base is not None:
            self.state.show_time(t, lane, self.lane_rows)
            self.changed()

    def _select_pos(self, li: int, pos: int, details: bool) -> None:
        table, row = self.state.event_of(li, pos)
        self.post_message(EventSelected(table, row, "timeline", details))
        self.show_selection(table, row)

    def show_selection(self, table: str, row: int, partner: tuple[str, int] | None = None) -> None:
        """Make (table, row) the selection: move to its lane and bring it into view."""
        if self.state.select(table, row, self.lane_rows, partner):
            self.changed()

    def set_matches(self, matches: Any) -> None:
        """Highlight these events (the events table's filtered rows; None: nothing)."""
        self.matches = matches
        self.changed(viewport=False)

    def set_partner(self, partner: tuple[str, int] | None) -> None:
        self.state.set_partner(partner)
        self.changed(viewport=False)

    def clear_selection(self) -> None:
        self.state.clear_selection()
        self.changed(viewport=False)

    def action_mark(self, which: int) -> None:
        self.state.set_mark(which)
        self.post_message(RangeMarked(self.mark[0], self.mark[1]))
        self.changed(viewport=False)

    def action_enter(self) -> None:
        row = self.current
        if row is None or self.lanes is None:
            return
        if row.lane is None:
            self.action_toggle_group()
        elif self.state.zoom_to_marks():
            self.changed()
            self.post_message(RangeMarked(None, None))
        elif self.state.selected_under_cursor(row.lane):
            sel = self.selection
            assert sel is not None
            self.post_message(EventSelected(sel.table, sel.row, "timeline", True))
        else:
            pos = self.state.event_at(row.lane, self.cursor_t)
            if pos is not None:
                self._select_pos(row.lane, pos, details=True)

    def action_clear(self) -> None:
        if self.state.clear_marks():
            self.post_message(RangeMarked(None, None))
            self.changed(viewport=False)
        elif self.selection is not None:
            self.clear_selection()
            self.post_message(SelectionCleared("timeline"))

    # --- mouse ------------------------------------------------------------------

    def _time_at(self, x: int) -> float | None:
        return self.state.time_at(x - self.label_width - 1)

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
            self.state.drag(dx)
            self.changed()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self.release_mouse()
        dragged, self._drag_x = self._dragged, None
        if dragged:
            return
        t = self._time_at(event.x)
        r = self.state.row_at(event.y)
        if t is None or r is None:
            return
        self.row_cursor = r
        self.cursor_t = t
        lane = self.rows[r].lane
        if lane is None:
            self.action_toggle_group()
            return
        pos = self.state.event_at(lane, t)
        if pos is not None:
            self._select_pos(lane, pos, details=True)
        else:
            self.changed()
