"""The events table: one table per kind, sortable and filterable, with per-name summaries.

Rendering uses the ScrollView line API: `render_line(y)` formats only the rows on screen,
straight from the query's Arrow view, through an LRU cache of formatted rows. Filtering,
sorting and summaries run in a thread worker (`tuiperf.model.query`); the widget only
renders and dispatches.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import ClassVar

import numpy as np
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widgets import Input, Label, ProgressBar, Static
from textual.worker import get_current_worker

from tuiperf.model import columns as cols
from tuiperf.model.fmt import clean
from tuiperf.model.query import (
    Events,
    NameSummary,
    Query,
    QueryError,
    View,
    parse_duration,
)
from tuiperf.model.trace import Trace
from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import asciify

_ROW_CACHE = 4096
_NUMERIC_DESC = {"duration", "bytes", "smem", "pct", "count"}


# -- what a table shows: columns and rows, for events or for the summary ------------------------


@dataclass(frozen=True)
class Col:
    key: str
    header: str
    width: int  # 0: takes the rest
    right: bool
    fmt: str


class RowCache:
    """Formatted rows (all columns of a kind) by (kind, base row); least recently used go."""

    def __init__(self, size: int = _ROW_CACHE) -> None:
        self.size = size
        self._rows: OrderedDict[tuple[str, int], list[str]] = OrderedDict()

    def get(self, key: tuple[str, int], make: Callable[[], list[str]]) -> list[str]:
        hit = self._rows.get(key)
        if hit is None:
            hit = make()
            self._rows[key] = hit
            if len(self._rows) > self.size:
                self._rows.popitem(last=False)
        else:
            self._rows.move_to_end(key)
        return hit


class EventRows:
    """Rows of a View; cells come from the Arrow view, formatted on first sight."""

    def __init__(self, view: View, cache: RowCache, ascii_only: bool) -> None:
        self.view = view
        self.kind = view.query.kind
        self.specs = cols.columns(self.kind)
        self.cache = cache
        self.ascii_only = ascii_only
        self._index = {s.key: i for i, s in enumerate(self.specs)}
        #: kernels with an Nsight Compute result (per trace row, `NcuLink.mask`), or None
        self.ncu_mask: np.ndarray | None = None

    def columns(self, width: int) -> list[Col]:
        shown = [Col(s.key, s.header, s.width, s.right, s.fmt) for s in cols.fit(self.specs, width)]
        if self.ncu_mask is not None and self.kind == "kernels":
            shown.insert(0, Col("ncu", "ncu", 3, False, "text"))
        return shown

    def __len__(self) -> int:
        return len(self.view)

    def row_id(self, pos: int) -> int:
        return self.view.row(pos)

    def cells(self, pos: int, shown: list[Col]) -> list[str]:
        row = self.view.row(pos)
        full = self.cache.get((self.kind, row), lambda: self._format(row))
        return [self._ncu(row) if c.key == "ncu" else full[self._index[c.key]] for c in shown]

    def _ncu(self, row: int) -> str:
        mask = self.ncu_mask
        has = mask is not None and 0 <= row < len(mask) and bool(mask[row])
        return ("*" if self.ascii_only else "◆") if has else ""

    def _format(self, row: int) -> list[str]:
        return self.view.events.cells(row, self.specs, self.ascii_only)


class SummaryRows:
    """Rows of a per-name summary, in its display order."""

    def __init__(self, summary: NameSummary, ascii_only: bool) -> None:
        self.summary = summary
        self.kind = summary.kind
        self.specs = cols.summary_columns(self.kind)
        self.ascii_only = ascii_only

    def columns(self, width: int) -> list[Col]:
        out = [Col(s.key, s.header, s.width, s.fmt != "name" and s.fmt != "text", s.fmt)
               for s in self.specs]  # fmt: skip
        while sum(c.width + 1 for c in out if c.width) + 24 > width and len(out) > 4:
            out.pop(-2 if out[-2].key in ("stdev", "style") else 3)
        return out

    def __len__(self) -> int:
        return len(self.summary)

    def row_id(self, pos: int) -> int:
        return int(self.summary.order[pos])

    def name(self, pos: int) -> str:
        return self.summary.names[self.row_id(pos)]

    def cells(self, pos: int, shown: list[Col]) -> list[str]:
        g = self.row_id(pos)
        specs = {s.key: s for s in self.specs}
        return [cols.summary_cell(specs[c.key], self.summary.value(c.key, g), self.ascii_only)
                for c in shown]  # fmt: skip


Rows = EventRows | SummaryRows


def _fit(text: str, width: int, right: bool, ellipsis: str) -> str:
    if cell_len(text) > width:
        text = set_cell_size(text, max(width - cell_len(ellipsis), 0)) + ellipsis
        return set_cell_size(text, width)
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


def layout(columns: list[Col], width: int) -> list[int]:
    """Cell widths: fixed columns as given, the flexible one gets the rest (at least 8)."""
    widths = [max(c.width, cell_len(c.header) + 2) if c.width else 0 for c in columns]
    fixed = sum(w + 1 for w in widths if w)
    return [w if w else max(width - fixed, 8) for w in widths]


# -- the scrolling body ------------------------------------------------------------------------


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
        self.set_reactive(TableBody.cursor, max(0, min(cursor, len(rows) - 1)))
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
        parts = [_fit(t, w, c.right, ell) for t, w, c in
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
            segs.append(Segment(_fit(label, w, c.right, "…" if not self.ascii_only else "..."),
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
        self.cursor = max(0, min(pos, len(self.rows) - 1))

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


# -- the kind bar ------------------------------------------------------------------------------


class KindBar(Static):
    """`Kernels  Memcpy  …`: the current kind highlighted; click one to switch."""

    DEFAULT_CSS = "KindBar { height: 1; width: 1fr; }"

    class Picked(Message):
        def __init__(self, kind: str) -> None:
            super().__init__()
            self.kind = kind

    def show(self, current: str, counts: dict[str, int], summary: bool) -> None:
        from rich.text import Text

        text = Text()
        for kind in cols.KINDS:
            label = f" {cols.KIND_TITLES[kind]} "
            style = (
                Style(reverse=True, bold=True)
                if kind == current
                else Style(dim=not counts.get(kind))
            )
            text.append(label, style + Style.from_meta({"@click": f"pick('{kind}')"}))
            text.append(" ")
        text.append(" summary " if summary else " events ", Style(italic=True))
        self.update(text)

    def action_pick(self, kind: str) -> None:
        self.post_message(self.Picked(kind))


# -- prompts -----------------------------------------------------------------------------------


class PathPrompt(ModalScreen[str | None]):
    """One line of input (an export path); Enter confirms, Esc cancels."""

    DEFAULT_CSS = """
    PathPrompt { align: center middle; }
    PathPrompt > Vertical { width: 80%; max-width: 100; height: auto; border: round $accent;
                            padding: 0 1; background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, value: str) -> None:
        super().__init__()
        self._title, self._value = title, value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._title, markup=False)
            yield Input(value=self._value, id="prompt-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class ConfirmPrompt(ModalScreen[bool]):
    """A yes/no question: `y` or Enter says yes; `n` or Esc says no."""

    DEFAULT_CSS = """
    ConfirmPrompt { align: center middle; }
    ConfirmPrompt > Label { width: auto; max-width: 90%; border: round $warning;
                            padding: 0 1; background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "dismiss(True)", "Yes"),
        Binding("n,escape", "dismiss(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self) -> ComposeResult:
        yield Label(self._question + "  [y/n]", markup=False)


# -- the pane ----------------------------------------------------------------------------------


@dataclass
class _Computed:
    gen: int
    view: View
    summary: NameSummary | None
    keep: int | str | None  # events: the trace row to stay on; summary: the name


class EventsTable(Vertical):
    """Events of one kind (kernels, memcpy, …) or their per-name summary."""

    DEFAULT_CSS = """
    EventsTable { height: 1fr; border: round $panel-lighten-2; }
    EventsTable:focus-within { border: round $accent; }
    EventsTable > #events-filter { display: none; height: 1; border: none; padding: 0 1; }
    EventsTable.-filtering > #events-filter { display: block; }
    EventsTable > #events-progress { display: none; height: 1; }
    EventsTable.-busy > #events-progress { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = bindings("events")  # keys: tuiperf.tui.actions

    class RowHighlighted(Message):
        """The cursor is on event `row` (a row number of the trace's `kind` table)."""

        def __init__(self, kind: str, row: int) -> None:
            super().__init__()
            self.kind, self.row = kind, row

    class RowSelected(Message):
        """Enter (or a double click) on event `row` of `kind`."""

        def __init__(self, kind: str, row: int) -> None:
            super().__init__()
            self.kind, self.row = kind, row

    class QueryChanged(Message):
        """The table now shows `view` (the rows matching `view.query`, in display order)."""

        def __init__(self, view: View) -> None:
            super().__init__()
            self.view = view

    def __init__(self, trace: Trace, *, events_model: Events | None = None, kind: str = "kernels",
                 ascii_only: bool | None = None, id: str | None = None) -> None:  # fmt: skip
        super().__init__(id=id)
        self.trace = trace
        self.model = events_model or Events(trace)
        self.kind = kind
        self.queries = {k: Query(kind=k) for k in cols.KINDS}
        self.summary_sort = {k: ("total", True) for k in cols.KINDS}
        self.summary_mode = False
        self.view: View | None = None
        self.summary: NameSummary | None = None
        self.window: tuple[int, int] | None = None
        self.window_only = False
        self._ascii = ascii_only
        self._cache = RowCache()
        self._gen = 0
        self._filter_mode = "text"
        self._busy_timer: Timer | None = None
        self._debounce: Timer | None = None
        self._warmed: set[str] = set()

    # -- composition -------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield KindBar(id="events-kinds")
        yield TableBody(id="events-body")
        yield ProgressBar(total=None, show_eta=False, show_percentage=False, id="events-progress")
        yield Input(id="events-filter")

    @property
    def body(self) -> TableBody:
        return self.query_one(TableBody)

    @property
    def ascii_only(self) -> bool:
        if self._ascii is not None:
            return self._ascii
        return bool(getattr(self.app, "ascii_only", False))

    def on_mount(self) -> None:
        if not self.query(TableBody):  # the app quit while the table was being mounted
            return
        self.body.ascii_only = self.ascii_only
        self._refresh_kindbar()
        self._run(None)

    @property
    def query_now(self) -> Query:
        return self.queries[self.kind]

    # -- running queries in a worker ---------------------------------------------------------
    def _run(self, keep: int | str | None) -> None:
        """Recompute the current view off the UI thread; `keep` is the row to stay on."""
        self._gen += 1
        q = self.query_now.with_(window=self.window if self.window_only else None)
        sort = self.summary_sort[self.kind] if self.summary_mode else None
        self._set_busy("filtering")
        self._compute(self._gen, q, sort, keep)

    @work(thread=True, exclusive=True, group="events-query", exit_on_error=False)
    def _compute(self, gen: int, q: Query, summary_sort: tuple[str, bool] | None,
                 keep: int | str | None) -> None:  # fmt: skip
        worker = get_current_worker()

        def say(phase: str) -> None:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._set_busy, phase)

        try:
            table = self.model.table(q.kind)
            view = table.run(q, progress=say)
            summary = None
            if summary_sort is not None:
                say("summarizing")
                summary = table.summary(view).sorted(*summary_sort)
        except QueryError as e:  # the user's filter (a bad regex): said in the title line
            if not worker.is_cancelled:
                self.app.call_from_thread(self._failed, gen, str(e))
            return
        except Exception as e:  # a failure of the query itself: said, and the spinner stops
            if not worker.is_cancelled:
                what = (str(e).strip().splitlines() or [""])[0]
                message = f"query failed: {type(e).__name__}: {what}".rstrip(": ")
                self.app.call_from_thread(self._failed, gen, message, True)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._apply, _Computed(gen, view, summary, keep))

    @work(thread=True, group="events-warm", exit_on_error=False)
    def _warm(self, kind: str) -> None:
        """Read the kind's columns into numpy after the first frame, before the user sorts."""
        self.model.table(kind).warm([s for c in cols.columns(kind) for s in c.sources])

    def _apply(self, done: _Computed) -> None:
        if done.gen != self._gen:
            return
        self._set_busy(None)
        self.view, self.summary = done.view, done.summary
        body = self.body
        if done.summary is not None:
            key, desc = self.summary_sort[self.kind]
            cursor = 0
            if isinstance(done.keep, str):
                names = [done.summary.names[g] for g in done.summary.order]
                cursor = names.index(done.keep) if done.keep in names else 0
            body.set_rows(SummaryRows(done.summary, self.ascii_only), cursor, key, desc)
        else:
            cursor = 0
            if isinstance(done.keep, int):
                found = done.view.position_of(done.keep)
                cursor = found if found is not None else 0
            q = self.query_now
            body.set_rows(self._event_rows(done.view), cursor, q.sort,
                          q.descending)  # fmt: skip
        self._refresh_title()
        if self.kind not in self._warmed:
            self._warmed.add(self.kind)
            self._warm(self.kind)
        self.post_message(self.QueryChanged(done.view))
        self._announce_cursor()

    def _event_rows(self, view: View) -> EventRows:
        rows = EventRows(view, self._cache, self.ascii_only)
        link = getattr(self.app, "ncu_link", None)  # issue 7: which kernels ncu profiled
        rows.ncu_mask = None if link is None else link.mask
        return rows

    def _failed(self, gen: int, message: str, toast: bool = False) -> None:
        if gen != self._gen:
            return
        self._set_busy(None)
        text = clean(message, 80)
        self.border_subtitle = Content(asciify(text) if self.ascii_only else text)  # not markup
        if toast:
            self.notify(clean(message, 300), title="Events table", severity="error",
                        markup=False)  # fmt: skip

    def _set_busy(self, phase: str | None) -> None:
        """Show the phase in the subtitle; the progress bar only if it lasts."""
        if phase is None:
            if self._busy_timer is not None:
                self._busy_timer.stop()
                self._busy_timer = None
            self.remove_class("-busy")
            self.border_subtitle = self._sort_text()
            return
        self.border_subtitle = f"{phase}…" if not self.ascii_only else f"{phase}..."
        if self._busy_timer is None:
            self._busy_timer = self.set_timer(0.15, lambda: self.add_class("-busy"))

    # -- titles ------------------------------------------------------------------------
    def _refresh_title(self) -> None:
        view = self.view
        what = "Summary" if self.summary_mode else "Events"
        title = f"{what} · {cols.KIND_TITLES[self.kind]}"
        if view is None:
            self.border_title = title
            return
        q = view.query
        shown = f"{len(view):,} / {view.total:,}" if q.is_filtered else f"{view.total:,}"
        if self.summary is not None:
            shown = f"{len(self.summary):,} names, {shown}"
        desc = q.describe()
        title = f"{title} ({'filter: ' + desc + ', ' if desc else ''}{shown})"
        self.border_title = asciify(title.replace("≥", ">=")) if self.ascii_only else title
        self.border_subtitle = self._sort_text()
        self._refresh_kindbar()

    def _sort_text(self) -> str:
        if self.summary_mode:
            key, desc = self.summary_sort[self.kind]
            header = next((c.header for c in cols.summary_columns(self.kind) if c.key == key), key)
        else:
            q = self.query_now
            key, desc = q.sort, q.descending
            spec = cols.find(self.kind, key)
            header = spec.header if spec else key
        arrow = ("v" if desc else "^") if self.ascii_only else ("▼" if desc else "▲")
        return f"sort: {header} {arrow}"

    def _refresh_kindbar(self) -> None:
        counts = {k: self.trace.table(k, ["start"]).num_rows for k in cols.KINDS}
        self.query_one(KindBar).show(self.kind, counts, self.summary_mode)

    # -- messages from the parts -------------------------------------------------------
    def on_table_body_cursor_moved(self, _event: TableBody.CursorMoved) -> None:
        self._announce_cursor()

    def _announce_cursor(self) -> None:
        row = self.current_row()
        if row is not None:
            self.post_message(self.RowHighlighted(self.kind, row))

    def on_table_body_activated(self, event: TableBody.Activated) -> None:
        rows = self.body.rows
        if isinstance(rows, SummaryRows):
            self.summary_mode = False
            self._set_query(self.query_now.with_(name=rows.name(event.pos)))
            return
        row = self.current_row()
        if row is not None:
            self.post_message(self.RowSelected(self.kind, row))

    def on_table_body_header_clicked(self, event: TableBody.HeaderClicked) -> None:
        if event.key == self._current_sort()[0]:
            self.action_reverse()
        else:
            self._sort_by(event.key)

    def on_kind_bar_picked(self, event: KindBar.Picked) -> None:
        self.show_kind(event.kind)

    def current_row(self) -> int | None:
        """The trace row under the cursor (events mode), or None."""
        rows = self.body.rows
        if not isinstance(rows, EventRows) or not len(rows):
            return None
        return rows.row_id(self.body.cursor)

    # -- public API for the app (timeline sync) --------------------------------------------
    def show_kind(self, kind: str) -> None:
        if kind == self.kind:
            return
        self.kind = kind
        self._refresh_kindbar()
        self._run(None)

    def select_event(self, kind: str, row: int) -> None:
        """Put the cursor on event `row` of `kind` (switching tables if needed)."""
        if kind not in cols.KINDS:
            return
        if kind != self.kind or self.summary_mode or self.view is None:
            self.kind, self.summary_mode = kind, False
            self._refresh_kindbar()
            self._run(row)
            return
        view = self.view
        pos = view.position_of(row) if view is not None else None
        if pos is None:
            self.notify("That event is hidden by the filter (Esc clears it).", markup=False)
            return
        self.body.set_rows(self.body.rows, pos, self.body.sort_key,  # type: ignore[arg-type]
                           self.body.descending)  # fmt: skip
        self._announce_cursor()

    def set_window(self, start: int, end: int) -> None:
        """The timeline's visible window; filters the table while `w` is on."""
        self.window = (int(start), int(end))
        if self.window_only:
            if self._debounce is not None:
                self._debounce.stop()
            self._debounce = self.set_timer(0.25, lambda: self._run(self.current_row()))

    # -- actions -----------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_window" and self.window is None:
            return None
        if action == "clear":
            return self.has_class("-filtering") or self.query_now.is_filtered or self.window_only
        if action == "toggle_regex":
            return self.has_class("-filtering") and self._filter_mode == "text"
        return True

    def action_filter(self) -> None:
        self._open_input(
            "text",
            self.query_now.text,
            "filter names (! inverts, ctrl+r: regex, Enter: done, Esc: clear)",
        )

    def action_min_duration(self) -> None:
        q = self.query_now
        self._open_input(
            "min",
            f"{q.min_duration}ns" if q.min_duration else "",
            "minimum duration, e.g. 10us, 1.5ms, 2000 (ns)",
        )

    def _open_input(self, mode: str, value: str, placeholder: str) -> None:
        self._filter_mode = mode
        box = self.query_one("#events-filter", Input)
        box.placeholder = placeholder
        box.value = value
        self.add_class("-filtering")
        self._input_border()
        box.focus()

    def _input_border(self) -> None:
        box = self.query_one("#events-filter", Input)
        regex = self.query_now.regex and self._filter_mode == "text"
        box.border_title = "regex" if regex else None

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "events-filter" or not self.has_class("-filtering"):
            return
        event.stop()
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(0.2, partial(self._apply_input, event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "events-filter":
            return
        event.stop()
        if self._debounce is not None:
            self._debounce.stop()
        self._apply_input(event.value)
        self.remove_class("-filtering")
        self.body.focus()

    def _apply_input(self, value: str) -> None:
        q = self.query_now
        if self._filter_mode == "min":
            try:
                q = q.with_(min_duration=parse_duration(value))
            except QueryError as e:
                self.border_subtitle = clean(str(e), 80)
                return
        else:
            q = q.with_(text=value)
        if q != self.query_now:
            self._set_query(q)

    def _set_query(self, q: Query) -> None:
        keep = self._keep()
        self.queries[self.kind] = q
        self._run(keep)

    def _keep(self) -> int | str | None:
        """What the cursor is on: a trace row, or a name in summary mode."""
        rows = self.body.rows
        if isinstance(rows, SummaryRows):
            return rows.name(self.body.cursor) if len(rows) else None
        return self.current_row()

    def action_toggle_regex(self) -> None:
        self.queries[self.kind] = self.query_now.with_(regex=not self.query_now.regex)
        self._input_border()
        self._run(self._keep())

    def action_clear(self) -> None:
        if self.has_class("-filtering"):
            self.remove_class("-filtering")
            self.body.focus()
            if self._debounce is not None:
                self._debounce.stop()
        q = self.query_now
        cleared = q.with_(text="", name=None, min_duration=None)
        self.window_only = False
        self._set_query(cleared)

    def action_toggle_window(self) -> None:
        self.window_only = not self.window_only
        self.queries[self.kind] = self.query_now.with_(window=None)
        self._run(self._keep())

    def action_toggle_summary(self) -> None:
        self.summary_mode = not self.summary_mode
        self._refresh_kindbar()
        self._run(None)

    def action_cycle_kind(self, step: int) -> None:
        i = cols.KINDS.index(self.kind)
        self.show_kind(cols.KINDS[(i + step) % len(cols.KINDS)])

    # sorting
    def _current_sort(self) -> tuple[str, bool]:
        if self.summary_mode:
            return self.summary_sort[self.kind]
        return self.query_now.sort, self.query_now.descending

    def action_sort_column(self, step: int) -> None:
        shown = [c.key for c in self.body.columns() if c.key != "ncu"]
        if not shown:
            return
        key = self._current_sort()[0]
        i = shown.index(key) if key in shown else -1
        self._sort_by(shown[(i + step) % len(shown)])

    def _sort_by(self, key: str, descending: bool | None = None) -> None:
        col = next((c for c in self.body.columns() if c.key == key), None)
        if descending is None:
            descending = col is not None and col.fmt in _NUMERIC_DESC
        if self.summary_mode:
            self.summary_sort[self.kind] = (key, descending)
            self._run(self._keep())
        else:
            self._set_query(self.query_now.with_(sort=key, descending=descending))

    def action_reverse(self) -> None:
        key, desc = self._current_sort()
        self._sort_by(key, not desc)

    # export and copy
    def default_export_path(self) -> Path:
        stem = Path(self.trace.meta.source or "report").name.split(".")[0] or "report"
        view = self.kind + ("-summary" if self.summary_mode else "")
        return Path.cwd() / f"{stem}.{view}.csv"

    def action_export(self) -> None:
        if self.view is None:
            return
        self.app.push_screen(PathPrompt("Export the visible rows to (.csv, .tsv, .json, .parquet):",
                                        str(self.default_export_path())),
                             self._export_to)  # fmt: skip

    def _export_to(self, value: str | None) -> None:
        if not value:
            return
        path = Path(value).expanduser()
        path = path if path.is_absolute() else Path.cwd() / path
        if path.exists():
            self.app.push_screen(ConfirmPrompt(f"{path} exists. Overwrite it?"),
                                 lambda yes: self._write(path, True) if yes else None)  # fmt: skip
            return
        self._write(path, False)

    def export_table(self):
        """What `e` writes: the shown rows and exactly the shown columns, in their order on
        screen, with raw values (`duration_ns`, `bytes`)."""
        shown = [c.key for c in self.body.columns()]
        if self.summary_mode and self.summary is not None:
            by_key = {c.key: c for c in cols.summary_columns(self.kind)}
            return self.summary.to_arrow(tuple(by_key[k] for k in shown if k in by_key))
        assert self.view is not None
        specs = tuple(spec for k in shown if (spec := cols.find(self.kind, k)) is not None)
        table = self.view.to_arrow(specs)
        rows = self.body.rows
        if "ncu" in shown and isinstance(rows, EventRows) and rows.ncu_mask is not None:
            import pyarrow as pa

            mask, idx = rows.ncu_mask, np.asarray(self.view.indices)
            has = np.zeros(len(idx), dtype=bool)
            ok = idx < len(mask)
            has[ok] = mask[idx[ok]].astype(bool)
            table = table.add_column(0, "ncu", pa.array(has))
        return table

    def _write(self, path: Path, overwrite: bool) -> None:
        table = self.export_table()
        self._export_worker(path, table, overwrite)

    @work(thread=True, group="events-export", exit_on_error=False)
    def _export_worker(self, path: Path, table, overwrite: bool) -> None:
        from tuiperf.errors import TuiperfError
        from tuiperf.export import write_file

        fmt = {".tsv": "tsv", ".json": "json", ".parquet": "parquet"}.get(path.suffix, "csv")
        try:
            n = write_file(path, table, fmt, overwrite=overwrite)
        except TuiperfError as e:
            self.app.call_from_thread(self.notify, str(e), severity="error", markup=False)
            return
        except Exception as e:  # never a silent failure: the worker would swallow it
            what = f"Export failed: {type(e).__name__}: {e}"
            self.app.call_from_thread(self.notify, what, severity="error", markup=False)
            return
        self.app.call_from_thread(self.notify, f"Exported {n:,} rows to {path}", markup=False)

    def action_copy(self) -> None:
        text = self.row_text()
        if text is None:
            return
        self.app.copy_to_clipboard(text)
        size = len(text.encode("utf-8"))
        self.notify(f"Copied 1 row ({size:,} B)", markup=False)

    def row_text(self) -> str | None:
        """The cursor row as tab-separated raw values (names cleaned)."""
        rows = self.body.rows
        if rows is None or not len(rows):
            return None
        if isinstance(rows, SummaryRows):
            one = self.summary.to_arrow(cols.summary_columns(self.kind))  # type: ignore[union-attr]
            values = one.slice(self.body.cursor, 1).to_pylist()[0]
        else:
            table = self.model.table(self.kind)
            idx = np.array([rows.row_id(self.body.cursor)], dtype=np.int64)
            values = table.export_table(idx, cols.columns(self.kind)).to_pylist()[0]
        return "\t".join("" if v is None else str(v) for v in values.values())


# -- command palette -----------------------------------------------------------------------------


class EventsCommands(Provider):
    """Palette entries (`group: verb`) for the events table, offered while one is on screen.

    Add it to the app: `COMMANDS = App.COMMANDS | {EventsCommands}`.
    """

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        tables = self.screen.query(EventsTable)
        if not tables:
            return []
        t = tables.first()
        mode = "events" if t.summary_mode else "summary"
        out: list[tuple[str, str, Callable[[], object]]] = [
            ("export: CSV of visible rows", "write the shown rows to a file", t.action_export),
            ("copy: row under the cursor", "to the clipboard (OSC 52)", t.action_copy),
            (f"view: per-name {mode}", "toggle the summary", t.action_toggle_summary),
            ("filter: names", "substring; ! inverts", t.action_filter),
            ("filter: minimum duration", "e.g. 10us", t.action_min_duration),
        ]
        if t.query_now.is_filtered or t.window_only:
            out.append(("filter: clear", "show every event", t.action_clear))
        for kind in cols.KINDS:
            if kind != t.kind:
                out.append((f"table: {cols.KIND_TITLES[kind]}", "switch the events table",
                            partial(t.show_kind, kind)))  # fmt: skip
        return out

    async def discover(self) -> Hits:
        for name, help_text, run in self._commands():
            yield DiscoveryHit(name, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, run in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), run, help=help_text)
