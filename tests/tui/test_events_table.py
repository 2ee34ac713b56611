"""The events table in a tiny app over a real report: sort, filter, summary, export, sync."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pyarrow as pa
import pytest
from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.pilot import Pilot

from tests.conftest import nsys_reference, nsys_report
from tests.tui.pilot_helpers import record_notices, screen_lines, settle, sync
from tuiperf import schema
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import columns as C
from tuiperf.model.timeline.query import Events, Query
from tuiperf.model.trace import Trace, TraceMeta
from tuiperf.tui.widgets.events_commands import EventsCommands
from tuiperf.tui.widgets.events_table import EventsTable, KindBar, PathPrompt, TableBody
from tuiperf.tui.widgets.prompts import ConfirmPrompt


@pytest.fixture(scope="module")
def trace() -> Trace:
    return open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False))


class EventsApp(App[None]):
    """Only the widget, as the lead's app will mount it."""

    COMMANDS = App.COMMANDS | {EventsCommands}

    def __init__(self, trace: Trace, ascii_only: bool | None = None) -> None:
        super().__init__()
        self.trace = trace
        self.ascii_only = bool(ascii_only)
        self.highlighted: list[tuple[str, int]] = []
        self.selected: list[tuple[str, int]] = []

    def compose(self) -> ComposeResult:
        yield EventsTable(self.trace, id="events-table")

    def on_mount(self) -> None:
        self.query_one(TableBody).focus()

    def on_events_table_row_highlighted(self, m: EventsTable.RowHighlighted) -> None:
        self.highlighted.append((m.kind, m.row))

    def on_events_table_row_selected(self, m: EventsTable.RowSelected) -> None:
        self.selected.append((m.kind, m.row))


def table(app: App[None]) -> EventsTable:
    return app.query_one(EventsTable)


def shown_rows(app: App[None]) -> list[int]:
    t = table(app)
    assert t.view is not None
    return t.view.indices.tolist()


@sync
async def test_opens_on_kernels_in_start_order(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        assert t.border_title == "Events · Kernels (1,956)"
        assert shown_rows(app) == list(range(1956))
        assert app.highlighted[-1] == ("kernels", 0)


@sync
async def test_a_sort_shows_the_new_order_from_its_top(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*["pagedown"] * 3)
        t = table(app)
        assert t.body.cursor > 20
        await pilot.press("greater_than_sign")
        await settle(pilot)
        want = Events(trace).run(Query(sort="duration", descending=True)).indices.tolist()
        assert shown_rows(app) == want
        assert t.body.cursor == 0 and t.current_row() == want[0]
        assert t.body.scroll_y == 0


@sync
async def test_sort_keys_and_cursor_follows_its_event_when_asked(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "down", "down", "down", "F")
        t = table(app)
        row = t.current_row()
        assert row == 5
        await pilot.press("greater_than_sign")  # Start -> the next shown column: Duration
        await settle(pilot)
        assert (t.query_now.sort, t.query_now.descending) == ("duration", True)
        want = Events(trace).run(Query(sort="duration", descending=True)).indices.tolist()
        assert shown_rows(app) == want
        assert t.current_row() == row and t.body.cursor == want.index(row)
        assert "▼" in t.border_subtitle
        await pilot.press("r")
        await settle(pilot)
        assert t.query_now.descending is False
        assert t.current_row() == row
        assert shown_rows(app) == Events(trace).run(Query(sort="duration")).indices.tolist()
        await pilot.press("less_than_sign")
        await settle(pilot)
        assert t.query_now.sort == "start" and t.current_row() == row


@sync
async def test_header_click_sorts_and_reverses(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        body = table(app).body
        x = 0
        for col, w in zip(body.columns(), body._widths, strict=True):
            if col.key == "duration":
                break
            x += w + 1
        await pilot.click(TableBody, offset=(x + 2, 0))
        await settle(pilot)
        assert (table(app).query_now.sort, table(app).query_now.descending) == ("duration", True)
        await pilot.click(TableBody, offset=(x + 2, 0))
        await settle(pilot)
        assert table(app).query_now.descending is False


@sync
async def test_filter_invert_regex_and_escape(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        await pilot.press("slash", *"GEMM", "enter")
        await settle(pilot, 0.3)
        assert t.border_title == "Events · Kernels (filter: GEMM, 462 / 1,956)"
        assert shown_rows(app) == Events(trace).run(Query(text="gemm")).indices.tolist()
        await pilot.press("slash", "home", "exclamation_mark", "enter")
        await settle(pilot, 0.3)
        assert "1,494 / 1,956" in str(t.border_title)
        await pilot.press("slash", "ctrl+u", *"gemm|conv", "ctrl+r", "enter")
        await settle(pilot, 0.3)
        want = Events(trace).run(Query(text="gemm|conv", regex=True)).indices.tolist()
        assert t.query_now.regex and shown_rows(app) == want
        assert "re:gemm|conv" in str(t.border_title)
        await pilot.press("escape")
        await settle(pilot)
        assert t.border_title == "Events · Kernels (1,956)"


@sync
async def test_bad_regex_says_so_and_keeps_the_rows(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "ctrl+r", *"gemm(", "enter")
        await settle(pilot, 0.3)
        t = table(app)
        assert "regular expression" in str(t.border_subtitle)
        assert len(shown_rows(app)) == 1956


@sync
async def test_min_duration_and_window(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        await pilot.press("M", *"10us", "enter")
        await settle(pilot, 0.3)
        durs = trace.table("kernels")["duration"].to_pylist()
        rows = shown_rows(app)
        assert rows and all(durs[r] >= 10_000 for r in rows)
        assert len(rows) == sum(d >= 10_000 for d in durs)
        starts = trace.table("kernels")["start"].to_pylist()
        t.set_window(starts[100], starts[300])
        await pilot.press("w")
        await settle(pilot, 0.3)
        ends = trace.table("kernels")["end"].to_pylist()
        inside = shown_rows(app)
        assert inside and all(starts[r] < starts[300] and ends[r] > starts[100] for r in inside)
        assert "window" in str(t.border_title)
        await pilot.press("escape")
        await settle(pilot)
        assert len(shown_rows(app)) == 1956


@sync
async def test_summary_mode_and_enter_filters_to_the_name(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        await pilot.press("S")
        await settle(pilot)
        assert t.summary is not None
        assert str(t.border_title).startswith("Summary · Kernels (48 names")
        with open(nsys_reference("stats_cnn_osrt_cuda_gpu_kern_sum.csv")) as f:
            ref = list(csv.reader(f))[1:]
        s = t.summary
        assert [s.names[g] for g in s.order] == [r[-1] for r in ref]
        assert [int(s.total[g]) for g in s.order] == [int(r[1]) for r in ref]
        await pilot.press("down", "enter")
        await settle(pilot)
        assert not t.summary_mode and t.query_now.name == ref[1][-1]
        assert len(shown_rows(app)) == int(ref[1][2])
        assert f"{int(ref[1][2])} / 1,956" in str(t.border_title)


@sync
async def test_summary_sort_by_instances_keeps_the_name(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        await pilot.press("S")
        await settle(pilot)
        await pilot.press("down", "down", "F")  # follow the name through the sort
        rows = t.body.rows
        name = rows.name(t.body.cursor)  # type: ignore[union-attr]
        await pilot.press("greater_than_sign")  # Total (the default) -> Instances
        await settle(pilot)
        assert t.summary_sort["kernels"] == ("count", True)
        s = t.summary
        assert s is not None
        counts = [int(s.count[g]) for g in s.order]
        assert counts == sorted(counts, reverse=True)
        assert t.body.rows.name(t.body.cursor) == name  # type: ignore[union-attr]


@sync
async def test_kind_switching(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        await pilot.press("t")
        await settle(pilot)
        assert t.kind == "memcpy" and t.border_title == "Events · Memcpy (118)"
        await pilot.press("T", "T")
        await settle(pilot)
        assert t.kind == "osrt" and "18,999" in str(t.border_title)


@sync
async def test_select_event_and_messages(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        t.select_event("kernels", 700)
        await settle(pilot)
        assert t.current_row() == 700 and app.highlighted[-1] == ("kernels", 700)
        top = int(t.body.scroll_offset.y)
        assert top <= t.body.cursor < top + t.body.size.height
        await pilot.press("enter")
        await pilot.pause()
        assert app.selected == [("kernels", 700)]
        t.select_event("api", 42)
        await settle(pilot)
        assert t.kind == "api" and t.current_row() == 42


@sync
async def test_export_writes_the_visible_rows_and_asks_before_overwriting(
    trace: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = EventsApp(trace)
    notices = record_notices(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"elementwise", "enter")
        await settle(pilot, 0.3)
        await pilot.press("greater_than_sign")
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        out = tmp_path / "cnn_osrt.kernels.csv"
        assert out.exists()
        rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
        want = Events(trace).run(Query(text="elementwise", sort="duration", descending=True))
        # the table's full schema, as `tuiperf export` writes it, though 100 columns of
        # screen show no End, CorrID, PID, SMem, ... (issue 35 item 1)
        header = C.export_names(C.columns("kernels"))
        assert rows[0] == header and "end_ns" in header and "correlation_id" in header
        assert [int(r[0]) for r in rows[1:]] == want.to_arrow(C.columns("kernels"))[
            "start_ns"].to_pylist()  # fmt: skip
        assert any("Exported" in n.message and str(out) in n.message for n in notices)


@sync
async def test_export_never_overwrites_without_a_y(
    trace: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35 item 2: `e` Enter twice wrote over the first export. The second `e` now
    proposes a fresh name; a name that exists is overwritten only after `y` (Enter says no)."""
    monkeypatch.chdir(tmp_path)
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)

        async def export(*keys: str) -> None:
            await pilot.press("e")
            await pilot.pause()
            await pilot.press(*keys)
            await settle(pilot)

        out = tmp_path / "cnn_osrt.kernels.csv"
        await export("enter")
        assert out.read_text().startswith("start_ns,")
        out.write_text("precious\n")
        await export("enter")  # the proposed name is a new file
        second = tmp_path / "cnn_osrt.kernels-2.csv"
        assert out.read_text() == "precious\n" and second.read_text().startswith("start_ns,")
        await export("enter")
        assert (tmp_path / "cnn_osrt.kernels-3.csv").exists()
        assert out.read_text() == "precious\n"
        # typing the name of the first file asks: Enter, n and Esc keep it, y overwrites
        for answer in ("enter", "n", "escape", "y"):
            await export("ctrl+u", *str(out), "enter")
            assert isinstance(app.screen, ConfirmPrompt)
            assert "[y/N]" in "\n".join(screen_lines(app))
            await pilot.press(answer)
            await settle(pilot)
            kept = out.read_text() == "precious\n"
            assert kept == (answer != "y"), answer
        assert out.read_text().startswith("start_ns,")
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "cnn_osrt.kernels-2.csv", "cnn_osrt.kernels-3.csv", "cnn_osrt.kernels.csv"
        ]  # fmt: skip


@sync
async def test_copy_row_as_tsv(trace: Trace) -> None:
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("down", "y")
        await pilot.pause()
        first = trace.table("kernels").slice(1, 1).to_pylist()[0]
        fields = app.clipboard.split("\t")
        assert fields[:3] == [str(first["start"]), str(first["end"]), str(first["duration"])]
        assert fields[-1] == first["name"]


@sync
async def test_kind_bar_click_and_empty_tables() -> None:
    app = EventsApp(_evil_trace())
    async with app.run_test(size=(100, 12)) as pilot:
        await settle(pilot)
        await pilot.click(KindBar, offset=(12, 0))  # " Kernels " then " Memcpy "
        await settle(pilot)
        t = table(app)
        assert t.kind == "memcpy" and t.border_title == "Events · Memcpy (0)"
        header = "".join(seg.text for seg in t.body.render_line(0))
        assert "Size" in header
        await pilot.press("S")
        await settle(pilot)
        assert t.summary is not None and len(t.summary) == 0


@sync
async def test_palette_offers_export(
    trace: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = EventsApp(trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        # the palette opened (otherwise the `e` below would export straight from the table)
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"export: CSV")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert isinstance(app.screen, PathPrompt)
        await pilot.press("enter")
        await settle(pilot)
        assert (tmp_path / "cnn_osrt.kernels.csv").exists()


def _evil_trace() -> Trace:
    names = ["evil\x1b[31m[bold red]boom[/]\x07", "plain"]
    cols = {
        "start": pa.array([0, 10]),
        "end": pa.array([5, 20]),
        "duration": pa.array([5, 10]),
        "name": pa.array(names).dictionary_encode(),
        "stream": pa.array([7, 7]),
    }
    return Trace({"kernels": schema.conform("kernels", cols, 2)}, TraceMeta("evil.sqlite", "x"))


@sync
async def test_names_are_text_not_markup_or_escapes() -> None:
    app = EventsApp(_evil_trace())
    async with app.run_test(size=(100, 12)) as pilot:
        await settle(pilot)
        body = table(app).body
        line = "".join(seg.text for seg in body.render_line(1))
        assert "evil[bold red]boom[/]" in line and "\x1b" not in line and "\x07" not in line


@sync
async def test_ascii_mode_markers(trace: Trace) -> None:
    app = EventsApp(trace, ascii_only=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("greater_than_sign")
        await settle(pilot)
        header = "".join(seg.text for seg in table(app).body.render_line(0))
        assert "Duration v" in header and "▼" not in header


# -- snapshots ---------------------------------------------------------------------------


def _snap_app(trace: Trace) -> EventsApp:
    return EventsApp(trace)


async def _ready(pilot: Pilot[None]) -> None:
    await settle(pilot)


async def _summary(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("S")
    await settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_snapshot_events(trace: Trace, snap_compare, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(_snap_app(trace), terminal_size=size, run_before=_ready)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_snapshot_summary(trace: Trace, snap_compare, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(_snap_app(trace), terminal_size=size, run_before=_summary)


@sync
async def test_graphs_tab_lists_whole_graph_executions() -> None:
    """The default --cuda-graph-trace=graph capture (tests/data/graphs): each whole-graph
    execution is a row of the Graphs tab, with the cudaGraphLaunch that launched it."""
    import sqlite3

    from tests.conftest import DATA
    from tests.support.data import unxz

    db = unxz(DATA / "graphs" / "graphs_default.sqlite.xz")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    (n,) = con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE").fetchone()
    con.close()
    app = EventsApp(open_trace(db, OpenOptions(use_cache=False)))
    async with app.run_test(size=(140, 20)) as pilot:
        await settle(pilot)
        t = table(app)
        t.show_kind("graphs")
        await settle(pilot)
        assert t.kind == "graphs" and t.border_title == f"Events · Graphs ({n})"
        header = "".join(seg.text for seg in t.body.render_line(0))
        assert "Graph" in header and "Exec" in header and "Launched by" in header
        first = "".join(seg.text for seg in t.body.render_line(1))
        assert "cudaGraphLaunch" in first and "CUDA graph" in first
