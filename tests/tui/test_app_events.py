"""The events table inside the viewer (issue 6), on the bundled sample (the real vit_range
report): it appears after the timeline, shares the selection with the timeline and the
details panel, drives n/N and the timeline's match highlights, and exports what it shows."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from tests.tui.pilot_helpers import ready, settle, sync
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import columns as C
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.timeline.query import Events, Query
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.viewstate.matches import Matches
from tuiperf.tui.widgets.events_pane import EventsPane
from tuiperf.tui.widgets.events_table import TableBody
from tuiperf.tui.widgets.side_panel import SidePanel
from tuiperf.tui.widgets.timeline import Timeline

SAMPLE = Path(__file__).resolve().parents[2] / "tuiperf" / "sample" / "vit_range"


def make_app(ascii_only: bool = False) -> TuiperfApp:
    return TuiperfApp(SAMPLE, OpenOptions(use_cache=False), ascii_only=ascii_only, name="vit_range")


def name_of(trace, table: str, row: int) -> str:  # type: ignore[no-untyped-def]
    return str(trace.table(table)["name"][row].as_py())


@sync
async def test_the_table_appears_after_the_timeline_with_the_kernel_count():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        t = await ready(pilot)
        assert not app.query("#events-placeholder")
        kernels = app.trace.table("kernels").num_rows
        assert kernels > 0 and f"Kernels ({kernels:,})" in str(t.border_title)
        assert app.focused is app.query_one(Timeline)  # the timeline keeps the focus
        await pilot.press("2")
        assert isinstance(app.focused, TableBody)
        await pilot.press("1")
        assert app.focused is app.query_one(Timeline)
        await pilot.press("tab")
        assert isinstance(app.focused, TableBody)


@sync
async def test_moving_in_the_table_moves_the_timeline_and_the_details():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        t = await ready(pilot)
        tl = app.query_one(Timeline)
        await pilot.press("2", "greater_than_sign")  # sort by duration, longest first
        await settle(pilot)
        await pilot.press("g", "down", "down", "down")  # the cursor stayed on its event
        await settle(pilot)
        row = t.current_row()
        assert row is not None and t.body.cursor == 3
        assert tl.selection is not None and (tl.selection.table, tl.selection.row) == (
            "kernels",
            row,
        )
        side = app.query_one(SidePanel)
        assert side.details is not None and side.details.kind == "kernel"
        start = int(app.trace.table("kernels")["start"][row].as_py())
        assert tl.selection.start == start and tl.vp.start <= start <= tl.vp.end
        # Enter: the timeline zooms to the event (backspace goes back)
        span = tl.vp.span
        await pilot.press("enter")
        await settle(pilot)
        assert tl.vp.span < span and len(tl.zooms) == 1
        assert tl.vp.start <= tl.selection.start and tl.selection.end <= tl.vp.end
        assert isinstance(app.focused, TableBody) and t.current_row() == row


@sync
async def test_selecting_on_the_timeline_moves_the_table_cursor():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        t = await ready(pilot)
        tl = app.query_one(Timeline)
        await pilot.press(*["full_stop"] * 5)
        await settle(pilot)
        sel = tl.selection
        assert sel is not None and sel.table == "kernels"
        assert t.kind == "kernels" and t.current_row() == sel.row
        # a CUDA API lane: the table switches to the API calls
        api = next(
            i
            for i, r in enumerate(tl.rows)
            if r.lane is not None and tl.lanes.lanes[r.lane].table == "api"
        )
        await pilot.press(*["down"] * (api - tl.row_cursor), "full_stop")
        await settle(pilot)
        sel = tl.selection
        assert sel is not None and sel.table == "api"
        assert t.kind == "api" and t.current_row() == sel.row
        assert app.focused is tl


@sync
async def test_filter_then_n_steps_through_the_matches_on_the_timeline():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        t = await ready(pilot)
        tl = app.query_one(Timeline)
        await pilot.press("2", "slash", *"gemm", "enter")
        await settle(pilot, 0.3)
        assert t.view is not None and 0 < len(t.view) < t.view.total
        want = sorted(t.view.indices.tolist())  # kernels are stored in start order
        assert tl.matches is not None and tl.matches.rows.tolist() == want
        await pilot.press("1")
        starts = app.trace.table("kernels")["start"].to_numpy()
        after = [r for r in want if starts[r] > tl.cursor_t]  # no selection: from the cursor
        await pilot.press("n")
        await settle(pilot)
        assert tl.selection is not None and tl.selection.row == after[0]
        assert "gemm" in name_of(app.trace, "kernels", after[0]).casefold()
        assert t.current_row() == after[0]  # the table follows
        await pilot.press("n", "n")
        await settle(pilot)
        assert tl.selection.row == after[2]
        await pilot.press("N")
        await settle(pilot)
        assert tl.selection.row == after[1]
        # the matches light up on the kernels lane
        lane = tl.selection.lane
        assert lane is not None
        edges = np.floor(tl.vp.edges()).astype(np.int64)
        cells = tl.matches.cells(lane, tl.lanes.lanes[lane].iv, edges)
        assert cells is not None and cells.any() and not cells.all()
        # Esc in the table clears the filter: nothing is highlighted any more
        await pilot.press("2", "escape")
        await settle(pilot)
        assert tl.matches is None


@sync
async def test_window_only_follows_the_timeline():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        t = await ready(pilot)
        total = t.view.total
        await pilot.press("2", "w")
        await settle(pilot, 0.3)
        assert len(t.view) == total  # the whole profile is in view
        await pilot.press("1", *["plus"] * 6)
        await settle(pilot, 0.4)
        tl = app.query_one(Timeline)
        assert t.window == (int(tl.vp.start), int(tl.vp.end))
        assert 0 < len(t.view) < total
        starts = np.asarray(app.trace.table("kernels")["start"].to_numpy())[t.view.indices]
        assert starts.min() < tl.vp.end


@sync
async def test_export_key_writes_the_csv_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        t = await ready(pilot)
        await pilot.press("2", "e")
        await pilot.pause()
        out = t.default_export_path()  # the name proposed (a fresh one: nothing is there yet)
        assert not out.exists()
        await pilot.press("enter")
        await settle(pilot)
        assert out.parent == tmp_path and out.name.endswith(".kernels.csv")
        rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
        assert rows[0] == C.export_names(C.columns("kernels"))  # the full schema, any width
        assert len(rows) - 1 == app.trace.table("kernels").num_rows


@sync
async def test_help_palette_and_maximise_in_the_events_pane():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("2", "question_mark")
        await pilot.pause()
        from tuiperf.tui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen) and app.screen.focused_scope == "events"
        await pilot.press("escape", "m")
        await pilot.pause()
        assert app.screen.maximized is app.query_one(EventsPane)
        await pilot.press("m")
        assert app.screen.maximized is None
        from tuiperf.tui.widgets.events_commands import EventsCommands

        names = [h.text async for h in EventsCommands(app.screen).discover()]
        assert "export: CSV of visible rows" in names


# -- the matches themselves (no terminal) -------------------------------------------------


@pytest.fixture(scope="module")
def sample():  # type: ignore[no-untyped-def]
    trace = open_trace(SAMPLE, OpenOptions(use_cache=False))
    return trace, build_lanes(trace)


def test_step_goes_in_time_order_and_wraps(sample) -> None:  # type: ignore[no-untyped-def]
    trace, _ = sample
    view = Events(trace).run(Query(text="elementwise", sort="duration", descending=True))
    m = Matches.from_view(view)
    starts = trace.table("kernels")["start"].to_numpy()
    assert m.filtered and sorted(view.indices.tolist()) == m.rows.tolist()
    assert np.all(np.diff(starts[m.rows]) >= 0)
    first, last = int(m.rows[0]), int(m.rows[-1])
    assert m.step(-1, None, 1) == (first, False)
    assert m.step(m.start_of(first), first, 1) == (int(m.rows[1]), False)
    assert m.step(m.start_of(first), first, -1) == (last, True)
    assert m.step(m.start_of(last), last, 1) == (first, True)
    assert not Matches.from_view(Events(trace).run(Query())).filtered


def test_cells_mark_only_columns_with_a_match(sample) -> None:  # type: ignore[no-untyped-def]
    trace, lanes = sample
    view = Events(trace).run(Query(text="gemm"))
    m = Matches.from_view(view)
    li = next(i for i, lane in enumerate(lanes.lanes) if lane.table == "kernels")
    iv = lanes.lanes[li].iv
    for columns in (80, 4000):  # busy cells (starts only), then exact spans
        edges = np.linspace(lanes.lo, lanes.hi, columns + 1).astype(np.int64)
        cells = m.cells(li, iv, edges)
        assert cells is not None
        starts = iv.starts[m.mask[iv.rows]]
        want = np.zeros(columns, dtype=bool)
        col = np.clip(np.searchsorted(edges, starts, side="right") - 1, 0, columns - 1)
        want[col] = True
        assert np.all(cells[want])  # every matching start is marked
        assert cells.sum() < columns


# -- snapshots -------------------------------------------------------------------------------


def _filter_then_next(*extra: str):  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await ready(pilot)
        await pilot.press("2", "slash", *"gemm", "enter")
        await settle(pilot, 0.3)
        await pilot.press("1", "n", *extra)
        await settle(pilot)

    return run


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_snapshot_filter_matches_on_the_timeline(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    app = TuiperfApp(SAMPLE, OpenOptions(use_cache=False), name="vit_range (bundled sample)")
    assert snap_compare(app, terminal_size=size, run_before=_filter_then_next())


def test_snapshot_events_pane_maximised_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = TuiperfApp(SAMPLE, OpenOptions(use_cache=False), name="vit_range (bundled sample)")
    assert snap_compare(app, terminal_size=(80, 24), run_before=_filter_then_next("2", "m"))
