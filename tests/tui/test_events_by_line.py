"""The events table's by-source-line summary (`L`, issue 22.1) over the real pybt report."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult

from tests.support.data import unxz
from tests.tui.pilot_helpers import settle, sync
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace
from tuiperf.summaries.by_line import by_line
from tuiperf.tui.widgets.events_table import EventsTable, TableBody
from tuiperf.tui.widgets.table_rows import StatsRows

PYBT = Path(__file__).resolve().parents[2] / "tests/data/graphs/pybt.sqlite.xz"


class LinesApp(App[None]):
    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace
        self.ascii_only = False

    def compose(self) -> ComposeResult:
        yield EventsTable(self.trace, id="events-table")

    def on_mount(self) -> None:
        self.query_one(TableBody).focus()


@sync
async def test_l_shows_the_by_line_summary_and_back() -> None:
    trace = open_trace(unxz(PYBT), OpenOptions(use_cache=False))
    want = by_line(trace)
    app = LinesApp(trace)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        t = app.query_one(EventsTable)
        await pilot.press("L")
        await settle(pilot)
        rows = t.body.rows
        assert isinstance(rows, StatsRows)
        assert len(rows) == want.num_rows > 0
        assert t.border_title == f"By source line · GPU time and syncs ({want.num_rows:,} lines)"
        first = rows.cells(0, rows.columns(140))
        assert first[0] == want.head(1)[0]["site"]
        assert t.current_row() is None  # no trace row under the cursor in this mode
        assert t.export_table().equals(want.data)
        await pilot.press("L")
        await settle(pilot)
        assert not t.lines_mode
        assert t.border_title.startswith("Events · Kernels")
