"""The events table: one table per kind, sortable and filterable, with per-name summaries.

What it shows (per-kind queries, sorts, summary mode, window filter, the rows of the last
result) is `tuiperf.tui.viewstate.events.EventsState`, a plain object tested without Textual.
This widget renders that state and dispatches keys and mouse to it: queries and summaries
run in a thread worker (`tuiperf.model.timeline.query`); `TableBody` draws only the rows on screen,
straight from the query's Arrow view, through an LRU cache of formatted rows.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, ProgressBar, Static
from textual.worker import get_current_worker

from tuiperf.model import columns as cols
from tuiperf.model.fmt import clean
from tuiperf.model.timeline.query import Events, NameSummary, Query, QueryError, View
from tuiperf.model.trace import Trace
from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import asciify
from tuiperf.tui.viewstate.events import (
    MIN_DURATION,
    TEXT,
    EventsState,
    Keep,
    Request,
    Result,
    compute,
    default_descending,
)
from tuiperf.tui.widgets.prompts import ConfirmPrompt, PathPrompt
from tuiperf.tui.widgets.state_attr import InState
from tuiperf.tui.widgets.table_body import TableBody
from tuiperf.tui.widgets.table_rows import EventRows, StatsRows, SummaryRows, new_row_cache

if TYPE_CHECKING:
    import pyarrow as pa

    from tuiperf.summaries.stats import StatsTable

__all__ = ["EventsTable", "KindBar", "PathPrompt", "TableBody"]


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


# -- the pane ----------------------------------------------------------------------------------


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

    # what it shows, kept in `self.state` (EventsState)
    kind = InState[str]()
    query_now = InState[Query]("query")
    summary_mode = InState[bool]()
    summary_sort = InState[dict[str, tuple[str, bool]]]()
    view = InState[View | None]()
    summary = InState[NameSummary | None]()
    window = InState[tuple[int, int] | None]()
    window_only = InState[bool]()

    def __init__(self, trace: Trace, *, events_model: Events | None = None, kind: str = "kernels",
                 ascii_only: bool | None = None, id: str | None = None) -> None:  # fmt: skip
        super().__init__(id=id)
        self.trace = trace
        self.model = events_model or Events(trace)
        self.state = EventsState(kind)
        self._ascii = ascii_only
        self._cache = new_row_cache()
        #: base names that tell each table's names apart, by kind (built on the first `B`)
        self._base_maps: dict[str, dict[str, str]] = {}
        self._busy_timer: Timer | None = None
        self._debounce: Timer | None = None
        self._warmed: set[str] = set()
        #: the by-source-line summary (`L`) is shown instead of the kind's rows
        self.lines_mode = False
        self._lines_sort: tuple[str, bool] = ("", True)

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

    # -- running queries in a worker ---------------------------------------------------------
    def _run(self, keep: Keep) -> None:
        """Recompute the current view off the UI thread; `keep` is the row to stay on."""
        self.lines_mode = False
        self._set_busy("filtering")
        self._compute(self.state.request(keep))

    @work(thread=True, exclusive=True, group="events-query", exit_on_error=False)
    def _compute(self, req: Request) -> None:
        worker = get_current_worker()

        def say(phase: str) -> None:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._set_busy, phase)

        try:
            result = compute(self.model, req, say)
        except QueryError as e:  # the user's filter (a bad regex): said in the title line
            if not worker.is_cancelled:
                self.app.call_from_thread(self._failed, req.gen, str(e))
            return
        except Exception as e:  # a failure of the query itself: said, and the spinner stops
            if not worker.is_cancelled:
                what = (str(e).strip().splitlines() or [""])[0]
                message = f"query failed: {type(e).__name__}: {what}".rstrip(": ")
                self.app.call_from_thread(self._failed, req.gen, message, True)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._apply, result)

    @work(thread=True, group="events-warm", exit_on_error=False)
    def _warm(self, kind: str) -> None:
        """Read the kind's columns into numpy after the first frame, before the user sorts."""
        self.model.table(kind).warm([s for c in cols.columns(kind) for s in c.sources])

    # -- the by-line summary ---------------------------------------------------------------
    def action_toggle_lines(self) -> None:
        """GPU time and syncs by source line (Python stacks), or back to the events."""
        if self.lines_mode:
            self._run(None)
            return
        self.lines_mode = True
        self.state.gen += 1  # a query still running is stale now
        self._set_busy("summarizing")
        self._compute_lines(self.state.gen)

    @work(thread=True, exclusive=True, group="events-query", exit_on_error=False)
    def _compute_lines(self, gen: int) -> None:
        from tuiperf.summaries.reports import compute_cached

        worker = get_current_worker()
        try:
            table = compute_cached(self.trace, "by_line")
        except Exception as e:  # said, and the spinner stops
            what = (str(e).strip().splitlines() or [""])[0]
            if not worker.is_cancelled:
                self.app.call_from_thread(self._failed, gen, f"by line: {what}", True)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._apply_lines, gen, table)

    def _apply_lines(self, gen: int, table: StatsTable) -> None:
        if not self.state.is_current(gen) or not self.lines_mode:
            return
        self._set_busy(None)
        key, desc = self._lines_sort
        self.body.set_rows(StatsRows(table, key, desc), 0, key, desc)
        n = table.num_rows
        self.border_title = (
            f"By source line · GPU time and syncs ({n:,} lines)"
            if n
            else "By source line · no Python stacks in this report (nsys --python-backtrace=cuda"
            " exported with --include-json=true, or torch.profiler with_stack=True)"
        )
        self.border_subtitle = "L: back to the events"

    def _apply(self, done: Result) -> None:
        cursor = self.state.accept(done)
        if cursor is None:  # a newer query is running
            return
        self._set_busy(None)
        if done.summary is not None:
            key, desc = self.state.summary_sort[self.kind]
            summary = SummaryRows(done.summary, self.ascii_only)
            summary.base_names = self.state.base_names
            summary.base_map = self._base_map()
            self.body.set_rows(summary, cursor, key, desc)
        else:
            q = self.query_now
            self.body.set_rows(self._event_rows(done.view), cursor, q.sort, q.descending)
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
        rows.base_names = self.state.base_names
        rows.base_map = self._base_map()
        return rows

    def _base_map(self) -> dict[str, str]:
        """Base names that tell the current table's names apart (built on the first `B`)."""
        if not self.state.base_names:
            return {}
        found = self._base_maps.get(self.kind)
        if found is None:
            from tuiperf.model.ncu.base_names import base_names

            names = self.model.table(self.kind).names
            found = base_names(n for n in (*names.labels, *names.match_labels) if n)
            self._base_maps[self.kind] = found
        return found

    def action_toggle_base_names(self) -> None:
        """Long templated kernel names in full, or as base names (`elementwise_kernel<…>`);
        the details panel always shows the full name."""
        self.state.base_names = not self.state.base_names
        rows = self.body.rows
        if rows is not None:
            rows.base_names = self.state.base_names
            if isinstance(rows, EventRows | SummaryRows):
                rows.base_map = self._base_map()
            self.body.refresh()

    def _failed(self, gen: int, message: str, toast: bool = False) -> None:
        if not self.state.is_current(gen):
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
            self.border_subtitle = self.state.sort_text(self.ascii_only)
            return
        self.border_subtitle = f"{phase}…" if not self.ascii_only else f"{phase}..."
        if self._busy_timer is None:
            self._busy_timer = self.set_timer(0.15, lambda: self.add_class("-busy"))

    # -- titles ------------------------------------------------------------------------
    def _refresh_title(self) -> None:
        title = self.state.title()
        if self.state.view is None:
            self.border_title = title
            return
        self.border_title = asciify(title.replace("≥", ">=")) if self.ascii_only else title
        self.border_subtitle = self.state.sort_text(self.ascii_only)
        self._refresh_kindbar()

    def _refresh_kindbar(self) -> None:
        counts = {k: self.trace.table(k, ["start"]).num_rows for k in cols.KINDS}
        self.query_one(KindBar).show(self.kind, counts, self.summary_mode)

    # -- messages from the parts -------------------------------------------------------
    def on_table_body_cursor_moved(self, _event: TableBody.CursorMoved) -> None:
        self._announce_cursor()

    def _announce_cursor(self) -> None:
        row = self.current_row()
        if row is None and not self.lines_mode:  # a summary: its name's first event
            row = self.state.summary_event_at(self.body.cursor)
        if row is not None:
            self.post_message(self.RowHighlighted(self.kind, row))

    def on_table_body_activated(self, event: TableBody.Activated) -> None:
        if self.lines_mode:
            return
        if self.state.showing_summary:
            if self.state.drill(event.pos):
                self._run(self._keep())
            return
        row = self.current_row()
        if row is not None:
            self.post_message(self.RowSelected(self.kind, row))

    def on_table_body_header_clicked(self, event: TableBody.HeaderClicked) -> None:
        if event.key == self.state.sort[0]:
            self.action_reverse()
        else:
            self._sort_by(event.key)

    def on_kind_bar_picked(self, event: KindBar.Picked) -> None:
        self.show_kind(event.kind)

    def current_row(self) -> int | None:
        """The trace row under the cursor (events mode), or None."""
        if self.body.rows is None or self.lines_mode:
            return None
        return self.state.row_at(self.body.cursor)

    def _keep(self) -> Keep:
        """What the cursor is on: a trace row, or a name in summary mode."""
        if self.lines_mode:
            return None
        return self.state.keep_at(self.body.cursor) if self.body.rows is not None else None

    # -- public API for the app (timeline sync) --------------------------------------------
    def show_kind(self, kind: str) -> None:
        if self.state.show_kind(kind):
            self._refresh_kindbar()
            self._run(None)

    def select_event(self, kind: str, row: int) -> None:
        """Put the cursor on event `row` of `kind` (switching tables if needed)."""
        if kind not in cols.KINDS:
            return
        if self.state.show_events_of(kind):
            self._refresh_kindbar()
            self._run(row)
            return
        pos = self.state.position_of(row)
        if pos is None:
            self.notify("That event is hidden by the filter (Esc clears it).", markup=False)
            return
        body = self.body
        body.set_rows(body.rows, pos, body.sort_key, body.descending)  # type: ignore[arg-type]
        self._announce_cursor()

    def set_window(self, start: int, end: int) -> None:
        """The timeline's visible window; filters the table while `w` is on."""
        if self.state.set_window(start, end):
            if self._debounce is not None:
                self._debounce.stop()
            self._debounce = self.set_timer(0.25, lambda: self._run(self.current_row()))

    # -- actions -----------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_window" and self.window is None:
            return None
        if action == "clear":
            return self.has_class("-filtering") or self.state.is_filtered
        if action == "toggle_regex":
            return self.has_class("-filtering") and self.state.input_mode == TEXT
        return True

    def action_filter(self) -> None:
        self._open_input(TEXT, "filter names (! inverts, ctrl+r: regex, Enter: done, Esc: clear)")

    def action_min_duration(self) -> None:
        self._open_input(MIN_DURATION, "minimum duration, e.g. 10us, 1.5ms, 2000 (ns)")

    def _open_input(self, mode: str, placeholder: str) -> None:
        self.state.input_mode = mode
        box = self.query_one("#events-filter", Input)
        box.placeholder = placeholder
        box.value = self.state.input_value()
        self.add_class("-filtering")
        self._input_border()
        box.focus()

    def _input_border(self) -> None:
        box = self.query_one("#events-filter", Input)
        box.border_title = "regex" if self.state.regex_input else None

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
        try:
            q = self.state.edit(value)
        except QueryError as e:
            self.border_subtitle = clean(str(e), 80)
            return
        if q is not None:
            self._set_query(q)

    def _set_query(self, q: Query) -> None:
        keep = self._keep()
        self.state.set_query(q)
        self._run(keep)

    def action_toggle_regex(self) -> None:
        self.state.toggle_regex()
        self._input_border()
        self._run(self._keep())

    def action_clear(self) -> None:
        if self.has_class("-filtering"):
            self.remove_class("-filtering")
            self.body.focus()
            if self._debounce is not None:
                self._debounce.stop()
        keep = self._keep()
        self.state.clear()
        self._run(keep)

    def action_toggle_window(self) -> None:
        self.state.toggle_window()
        self._run(self._keep())

    def action_toggle_summary(self) -> None:
        self.state.toggle_summary()
        self._refresh_kindbar()
        self._run(None)

    def action_cycle_kind(self, step: int) -> None:
        self.show_kind(self.state.next_kind(step))

    # sorting
    def action_sort_column(self, step: int) -> None:
        key = self.state.next_sort_key([c.key for c in self.body.columns() if c.key != "ncu"], step)
        if key is not None:
            self._sort_by(key)

    def _sort_by(self, key: str, descending: bool | None = None) -> None:
        if self.lines_mode and isinstance(self.body.rows, StatsRows):
            desc = key != self._lines_sort[0] or not self._lines_sort[1]
            self._lines_sort = (key, desc if descending is None else descending)
            rows = StatsRows(self.body.rows.table, *self._lines_sort)
            self.body.set_rows(rows, 0, *self._lines_sort)
            return
        if descending is None:
            col = next((c for c in self.body.columns() if c.key == key), None)
            descending = default_descending(col.fmt if col is not None else None)
        # a new order shows from its top (the first rows are what the user sorted to see),
        # unless the user asked to follow the row under the cursor (`F`)
        keep = self._keep() if self.state.follow else None
        self.state.sort_by(key, descending)
        self._run(keep)

    def action_toggle_follow(self) -> None:
        self.state.follow = not self.state.follow
        said = "follows its row" if self.state.follow else "goes to the top"
        self.notify(f"After a sort the cursor {said}.", timeout=2)

    def action_reverse(self) -> None:
        if self.lines_mode:
            self._sort_by(self._lines_sort[0] or "gpu_ns", not self._lines_sort[1])
            return
        key, desc = self.state.sort
        self._sort_by(key, not desc)

    # export and copy
    def default_export_path(self) -> Path:
        name = self.state.export_name(self.trace.meta.source)
        if self.lines_mode:
            name = name.split(".")[0] + ".by_line.csv"
        return self.state.fresh_path(Path.cwd() / name)

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

    def export_table(self) -> pa.Table:
        """What `e` writes: the shown rows (filter, sort) with the table's full schema, the
        columns `tuiperf export` writes whatever the window's width shows, raw values
        (`duration_ns`, `bytes`), and `ncu` when kernels have Nsight Compute results."""
        rows = self.body.rows
        if isinstance(rows, StatsRows):
            return rows.table.data.take(rows.order)
        mask = rows.ncu_mask if isinstance(rows, EventRows) else None
        return self.state.export_table(self._export_keys(), mask)

    def _export_keys(self) -> list[str]:
        s = self.state
        if s.summary_mode and s.summary is not None:
            return [c.key for c in cols.summary_columns(s.kind)]
        return ["ncu", *(c.key for c in cols.columns(s.kind))]

    def _write(self, path: Path, overwrite: bool) -> None:
        self._export_worker(path, self.export_table(), overwrite)

    @work(thread=True, group="events-export", exit_on_error=False)
    def _export_worker(self, path: Path, table: pa.Table, overwrite: bool) -> None:
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
        if self.body.rows is None:
            return None
        return self.state.row_text(self.model, self.body.cursor)
