"""A scrolling table drawn with the line API: a header line, then only the rows on screen.

Rows come from any object with the `tuiperf.tui.widgets.table_rows` interface (the events
table's `EventRows` / `SummaryRows`, the ncu screen's kernels); the body owns the cursor and
scrolling, and says what happened through messages.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tuiperf.tui.actions import bindings
from tuiperf.tui.viewstate.events import clamp
from tuiperf.tui.widgets.table_rows import Col, Rows, fit_cell, layout


class TableBody(ScrollView, can_focus=True):
    """Header line plus rows, drawn with the line API (only the rows on screen)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "table-body--header",
        "table-body--cursor",
        "table-body--sorted",
    }
    DEFAULT_CSS = """
    TableBody { overflow-x: hidden; overflow-y: auto; height: 1fr; }
    TableBody > .table-body--header { text-style: bold; background: $panel; }
    TableBody > .table-body--cursor { background: $accent 40%; }
    TableBody:focus > .table-body--cursor { background: $accent; color: $text; }
    TableBody > .table-body--sorted { text-style: bold; color: $accent; }
    """
    BINDINGS: ClassVar[list[BindingType]] = bindings("rows")

    class CursorMoved(Message):
        def __init__(self, pos: int) -> None:
            super().__init__()
            self.pos = pos

    class Activated(Message):
        def __init__(self, pos: int) -> None:
            super().__init__()
            self.pos = pos

    class HeaderClicked(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: Rows | None = None
        self.sort_key = ""
        self.descending = False
        self.ascii_only = False
        self._shown: list[Col] = []
        self._widths: list[int] = []
        self._shown_for = -1

    # -- data ----------------------------------------------------------------------
    def set_rows(self, rows: Rows, cursor: int, sort_key: str, descending: bool) -> None:
        self.rows, self.sort_key, self.descending = rows, sort_key, descending
        self._shown_for = -1
        self.virtual_size = Size(self._width(), len(rows) + 1)
        self.set_reactive(TableBody.cursor, clamp(cursor, len(rows)))
        self._scroll_to_cursor(center=True)
        self.refresh()

    def columns(self) -> list[Col]:
        width = self._width()
        if self.rows is not None and width != self._shown_for:
            self._shown = self.rows.columns(width)
            self._widths = layout(self._shown, width)
            self._shown_for = width
        return self._shown

    def _width(self) -> int:
        return max(self.scrollable_content_region.width, 20)

    def on_resize(self, _event: events.Resize) -> None:
        if self.rows is not None:
            self.virtual_size = Size(self._width(), len(self.rows) + 1)
        self._shown_for = -1

    # -- rendering -----------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self._width()
        if self.rows is None:  # a blank strip needs a real style (NO_COLOR's filter reads it)
            return Strip.blank(width, self.rich_style)
        shown = self.columns()
        if y == 0:
            return self._header(shown, width)
        pos = int(self.scroll_offset.y) + y - 1
        if pos >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        style = self.rich_style
        if pos == self.cursor:
            style = style + self.get_component_rich_style("table-body--cursor")
        cells = self.rows.cells(pos, shown)
        return self._strip(cells, shown, style, width)

    def _strip(self, cells: list[str], shown: list[Col], style: Style, width: int) -> Strip:
        ell = "..." if self.ascii_only else "…"
        parts = [fit_cell(t, w, c.right, ell) for t, w, c in
                 zip(cells, self._widths, shown, strict=True)]  # fmt: skip
        text = set_cell_size(" ".join(parts), width)
        return Strip([Segment(text, style)], width)

    def _header(self, shown: list[Col], width: int) -> Strip:
        base = self.rich_style + self.get_component_rich_style("table-body--header")
        sorted_style = base + self.get_component_rich_style("table-body--sorted")
        segs: list[Segment] = []
        for i, (c, w) in enumerate(zip(shown, self._widths, strict=True)):
            label, style = c.header, base
            if c.key == self.sort_key:
                mark = (
                    ("v" if self.descending else "^")
                    if self.ascii_only
                    else ("▼" if self.descending else "▲")
                )
                label, style = f"{label} {mark}", sorted_style
            segs.append(Segment(fit_cell(label, w, c.right, "…" if not self.ascii_only else "..."),
                                style))  # fmt: skip
            if i < len(shown) - 1:
                segs.append(Segment(" ", base))
        used = sum(s.cell_length for s in segs)
        if used < width:
            segs.append(Segment(" " * (width - used), base))
        return Strip(segs).crop(0, width)

    # -- cursor and scrolling ------------------------------------------------------
    def _page(self) -> int:
        return max(self.scrollable_content_region.height - 1, 1)

    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_to_cursor()
        self.refresh()
        if self.rows is not None and len(self.rows) and old != new:
            self.post_message(self.CursorMoved(new))

    def _set_cursor(self, pos: int) -> None:
        if self.rows is None or not len(self.rows):
            return
        self.cursor = clamp(pos, len(self.rows))

    def _scroll_to_cursor(self, center: bool = False) -> None:
        page = self._page()
        top = int(self.scroll_offset.y)
        if center and not top <= self.cursor < top + page:
            self.scroll_to(y=max(self.cursor - page // 2, 0), animate=False)
        elif self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + page:
            self.scroll_to(y=self.cursor - page + 1, animate=False)

    def action_move(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._set_cursor(self.cursor + direction * self._page())

    def action_half(self, direction: int) -> None:
        self._set_cursor(self.cursor + direction * max(self._page() // 2, 1))

    def action_jump(self, where: int) -> None:
        self._set_cursor(0 if where == 0 else (len(self.rows) - 1 if self.rows else 0))

    #: False where Enter has nothing to open (the ncu screen with no timeline): its key is
    #: then neither shown nor run
    can_activate = True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "activate":
            return self.can_activate
        return True

    def action_activate(self) -> None:
        if self.rows is not None and len(self.rows):
            self.post_message(self.Activated(self.cursor))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.rows is None:
            return
        if offset.y == 0:
            key = self._column_at(offset.x)
            if key:
                self.post_message(self.HeaderClicked(key))
            return
        pos = int(self.scroll_offset.y) + offset.y - 1
        if pos < len(self.rows):
            self._set_cursor(pos)
            if event.chain >= 2:
                self.post_message(self.Activated(pos))

    def _column_at(self, x: int) -> str | None:
        left = 0
        for c, w in zip(self.columns(), self._widths, strict=True):
            if left <= x < left + w + 1:
                return c.key
            left += w + 1
        return None
