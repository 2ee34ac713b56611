"""The viewer's events area: the events table, mounted after the first timeline frame, and
its links to the other panes.

- Selection is shared. Moving the table's cursor (while the table has focus) selects the
  event everywhere; Enter also zooms the timeline to it and opens the details. An event
  selected elsewhere (timeline, `n`/`N`) moves the table's cursor onto its row, switching
  tables if needed (not in summary mode, and not onto a row the filter hides).
- The table's rows are the matches that `n`/`N` step through on the timeline, in time
  order, and that the timeline highlights while a filter is on.
- The timeline's window reaches the table's "window only" filter at most 4 times a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import work
from textual.containers import Container
from textual.timer import Timer
from textual.worker import get_current_worker

from tuiperf.model import columns as cols
from tuiperf.model.trace import Trace
from tuiperf.tui.messages import EventSelected, MatchesChanged
from tuiperf.tui.viewstate.matches import Matches

if TYPE_CHECKING:  # the table's code is imported when it is mounted, after the first frame
    from tuiperf.model.timeline.query import View
    from tuiperf.tui.widgets.events_table import EventsTable

#: the timeline's window is passed on at most this often (seconds)
WINDOW_INTERVAL = 0.25


class EventsPane(Container):
    """`#events`: holds the EventsTable; follows and shares the selection."""

    ALLOW_MAXIMIZE = True  # `m` in the table maximises the whole pane

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="follows-selection")
        self.matches: Matches | None = None
        self._window: tuple[int, int] | None = None
        self._window_timer: Timer | None = None
        #: the event selected last, wherever it was selected
        self._selected: tuple[str, int] | None = None

    @property
    def table(self) -> EventsTable | None:
        found = self.query("#events-table")  # by id: its class is imported once mounted
        return cast("EventsTable", found.first()) if found else None

    def start(self, trace: Trace) -> None:
        """Replace the placeholder with the table (it reads its columns lazily)."""
        if self.table is not None:
            return
        from tuiperf.tui.widgets.events_table import EventsTable

        self.remove_children()
        table = EventsTable(trace, id="events-table")
        if self._window is not None:
            table.set_window(*self._window)
        self.mount(table)

    # -- selection -------------------------------------------------------------------
    def follow_selection(self, table: str, row: int) -> None:
        """Called by the app when an event was selected elsewhere."""
        self._selected = (table, row)
        t = self.table
        if t is None or table not in cols.KINDS or t.summary_mode:
            return
        if t.kind == table and t.view is not None and t.view.position_of(row) is None:
            return  # hidden by the table's filter: leave the cursor where it is
        t.select_event(table, row)

    def _in_table(self) -> bool:
        from tuiperf.tui.widgets.table_body import TableBody

        return isinstance(self.screen.focused, TableBody)

    def on_events_table_row_highlighted(self, msg: EventsTable.RowHighlighted) -> None:
        msg.stop()
        if not self._in_table() or (msg.kind, msg.row) == self._selected:
            return  # the app moved the cursor, or the user is elsewhere (typing a filter)
        self._selected = (msg.kind, msg.row)
        self.post_message(EventSelected(msg.kind, msg.row, "events"))

    def on_events_table_row_selected(self, msg: EventsTable.RowSelected) -> None:
        msg.stop()
        self._selected = (msg.kind, msg.row)
        self.post_message(EventSelected(msg.kind, msg.row, "events", details=True))

    # -- matches -----------------------------------------------------------------------
    def on_events_table_query_changed(self, msg: EventsTable.QueryChanged) -> None:
        msg.stop()
        self._build_matches(msg.view)

    @work(thread=True, exclusive=True, group="events-matches", exit_on_error=False)
    def _build_matches(self, view: View) -> None:
        matches = Matches.from_view(view)
        lanes = getattr(self.app, "lanes", None)
        if lanes is not None:
            matches.prepare(lanes.lanes)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._set_matches, matches)

    def _set_matches(self, matches: Matches) -> None:
        self.matches = matches
        self.post_message(MatchesChanged(matches if matches.filtered else None))

    def step_match(self, has_selection: bool, t: float, direction: int) -> None:
        """Select the next (previous) match after the selected event, else after time t."""
        m = self.matches
        if m is None:
            self.notify("The events table is not ready yet.", timeout=2)
            return
        row = None
        if has_selection and self._selected is not None and self._selected[0] == m.table:
            row = self._selected[1]
            t = m.start_of(row)
        found, wrapped = m.step(t, row, direction)
        if found is None:
            self.notify("No event matches the table's filter.", timeout=2)
            return
        if wrapped:
            where = "first" if direction > 0 else "last"
            self.notify(f"Search wrapped to the {where} match.", timeout=2)
        self.post_message(EventSelected(m.table, found, "search"))

    # -- the timeline's window -----------------------------------------------------------
    def set_window(self, start: float, end: float) -> None:
        self._window = (int(start), int(end))
        if self._window_timer is None:
            self._window_timer = self.set_timer(WINDOW_INTERVAL, self._send_window)

    def _send_window(self) -> None:
        self._window_timer = None
        t = self.table
        if t is not None and self._window is not None:
            t.set_window(*self._window)
