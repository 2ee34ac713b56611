"""Defects from the TUI audit, each pinned by a test: NO_COLOR, crashes and their exit
status, the palette keys, the maximised timeline's scale, lane labels of same-named
threads, the side panel at 100-119 columns, the help overlay's grouped keys, export
columns and file modes, ASCII scrollbars and a failing query worker."""

from __future__ import annotations

import csv
import io
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.pilot import Pilot

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import ready, record_notices, screen_lines, settle, sync
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.timeline.query import EventTable
from tuiperf.tui.actions import REGISTRY, for_scope
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.events_table import EventsTable, TableBody
from tuiperf.tui.widgets.help import help_renderable
from tuiperf.tui.widgets.side_panel import SidePanel
from tuiperf.tui.widgets.timeline import Timeline

SAMPLE = Path(__file__).resolve().parents[2] / "tuiperf" / "sample" / "vit_range"


@pytest.fixture
def umask_027() -> Iterator[None]:
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def make_app(ascii_only: bool = False, path: Path = SAMPLE) -> TuiperfApp:
    return TuiperfApp(path, OpenOptions(use_cache=False), ascii_only=ascii_only, name=path.name)


async def loaded(pilot: Pilot[int]) -> None:
    app = pilot.app
    for _ in range(400):
        if not app.loading:
            break
        assert app.error is None
        await pilot.pause(0.05)
    await pilot.pause()


# -- 1. NO_COLOR and crashes --------------------------------------------------------------------


class BareBody(App[None]):
    """A table body before its first rows arrive, as the events table is for a moment."""

    def compose(self) -> ComposeResult:
        yield TableBody()


@sync
async def test_no_color_draws_a_table_body_without_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = BareBody()
    async with app.run_test(size=(60, 8)) as pilot:  # the Monochrome filter crashed here
        await pilot.pause()
        body = app.query_one(TableBody)
        assert all(seg.style is not None for seg in body.render_line(0))
    assert not app.return_code


@sync
async def test_no_color_opens_the_viewer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(path=nsys_report("cnn_osrt"))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        assert any("Events" in line for line in screen_lines(app))
    assert not app.return_code


def test_a_crash_in_the_app_exits_70_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tuiperf import cli

    def boom(self: Timeline, y: int) -> None:
        raise RuntimeError("boom in render_line")

    run = TuiperfApp.run
    monkeypatch.setattr(TuiperfApp, "run", lambda self, **kw: run(self, headless=True, **kw))
    for stream in (sys.stdin, sys.stdout):  # as in a terminal (the app itself is headless)
        monkeypatch.setattr(stream, "isatty", lambda: True)
    monkeypatch.setattr(Timeline, "render_line", boom)
    rc = cli.main([str(SAMPLE), "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert rc == 70  # a bug, not a bad report (EX_SOFTWARE)
    assert err.startswith("tuiperf: internal error (RuntimeError: boom in render_line)")
    assert err.count("\n") == 1, err


# -- 2. the command palette ---------------------------------------------------------------------


@sync
async def test_ctrl_p_and_colon_open_the_command_palette() -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CommandPalette)
        await pilot.press("colon")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)


# -- 3. the maximised timeline keeps its window and scale -------------------------------------


@sync
async def test_the_maximised_timeline_still_shows_window_and_scale() -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        label = tl.scale_text
        assert "14–186 ms" in label and "/col" in label
        assert any(label in line for line in screen_lines(app))
        await pilot.press("1", "m")
        await pilot.pause()
        assert app.screen.maximized is tl
        label = tl.scale_text  # wider now: another scale, the same window
        assert "14–186 ms" in label
        assert any(label in line for line in screen_lines(app))
        await pilot.press("plus")
        await pilot.pause()
        assert tl.scale_text != label
        assert any(tl.scale_text in line for line in screen_lines(app))
        await pilot.press("m")
        await pilot.pause()
        assert app.screen.maximized is None


# -- 4. lane labels of threads that share a name ------------------------------------------------


def test_same_named_threads_get_their_tid_in_the_label() -> None:
    trace = open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False))
    ls = build_lanes(trace)
    for group in ls.groups:
        labels = [ls.lanes[i].label for i in group.lanes]
        assert len(labels) == len(set(labels)), labels
    labels = [lane.label for lane in ls.lanes]
    osrt = [lb for lb in labels if lb.startswith("python3 [") and lb.endswith("OS runtime")]
    assert len(osrt) > 10
    # a name used once keeps its plain label
    assert "pt_autograd_0 OS runtime" in labels


# -- 5. the side panel below 120 columns --------------------------------------------------------


@sync
async def test_at_100_columns_the_side_panel_waits_for_a_selection() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        side, tl = app.query_one(SidePanel), app.query_one(Timeline)
        assert side.display is False or not side.region.width
        assert tl.region.width == 100
        await pilot.press("full_stop")
        await pilot.pause()
        assert side.region.width > 0 and tl.region.width > 0  # beside the timeline
        assert "Nothing selected" not in side.plain_text()
        await pilot.press("escape")  # clears the selection: collapsed again
        await pilot.pause()
        assert not side.region.width
        await pilot.press("i")  # the user opens it
        await pilot.pause()
        assert side.region.width > 0
        await pilot.press("i")
        await pilot.pause()
        assert not side.region.width


@sync
async def test_at_120_columns_the_side_panel_is_there_from_the_start() -> None:
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        assert app.query_one(SidePanel).region.width > 0


# -- 6. the help overlay lists each key once ----------------------------------------------------


def _help_text(scope: str) -> str:
    console = Console(width=120, record=True, color_system=None, file=io.StringIO())
    console.print(help_renderable(scope))
    return console.export_text()


@pytest.mark.parametrize("scope", ["timeline", "events"])
def test_help_lists_each_key_once_with_its_own_description(scope: str) -> None:
    text = _help_text(scope)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    for wrong in (". , Next event", "[ ] Mark range start", "n N Next match", "< > Sort", "t T"):
        assert not any(line.startswith(wrong) for line in lines), wrong
    for right in (
        ". Next event",
        ", Previous event",
        "[ Mark range start",
        "] Mark range end",
        "n Next match",
        "N Previous match",
    ):
        assert right in lines, right
    if scope == "events":
        assert "< Sort by the column left" in lines and "> Sort by the column right" in lines


def test_no_help_row_names_a_key_of_another_entry() -> None:
    for scope in {k.scope for k in REGISTRY}:
        keys = for_scope(scope)
        for k in keys:
            others = {t for o in keys if o is not k for t in o.own_key_text.split()}
            mine = set(k.own_key_text.split())
            assert not (set(k.help_key_text.split()) & others) - mine, (k.id, k.help_key_text)


# -- 7 and 8. what `e` writes: the table's full schema at any width, with the user's umask ------


async def _export_at(tmp_path: Path, size: tuple[int, int]) -> tuple[list[list[str]], int]:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        t = await ready(pilot)
        await pilot.press("2", "greater_than_sign")  # sort by the next column (duration)
        await settle(pilot)
        out = t.default_export_path()  # what `e` proposes (afterwards: the next free name)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        shown = len(t.body.columns())
        rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
        mode = stat.S_IMODE(out.stat().st_mode)
        out.unlink()
    assert mode == 0o640
    return rows, shown


@sync
async def test_export_writes_the_full_schema_at_any_width_with_the_umask_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_027: None
) -> None:
    """Issue 35 item 1: at 80x24 the table shows fewer columns than at 160x48; the file is
    the same: every column `tuiperf export --table kernels` writes, the view's order."""
    monkeypatch.chdir(tmp_path)
    narrow, shown_narrow = await _export_at(tmp_path, (80, 24))
    wide, shown_wide = await _export_at(tmp_path, (160, 48))
    from tuiperf.model import columns as C

    assert shown_narrow < shown_wide  # the screens differ …
    assert narrow == wide  # … the exports do not
    assert narrow[0] == C.export_names(C.columns("kernels"))
    assert "end_ns" in narrow[0] and "correlation_id" in narrow[0]
    durations = [int(r[narrow[0].index("duration_ns")]) for r in narrow[1:]]
    assert durations == sorted(durations, reverse=True)


# -- 9. --ascii scrollbars ----------------------------------------------------------------------


async def _scrolled_table(pilot: Pilot[int]) -> list[str]:
    """The screen with the events table scrolled to where its scrollbar thumb has a
    partial-block end (a third of the way down)."""
    t = await ready(pilot)
    assert t.body.show_vertical_scrollbar  # 2,560 kernels: the table scrolls
    t.body.scroll_to(y=1000, animate=False)
    await pilot.pause()
    return screen_lines(pilot.app)


@sync
async def test_ascii_mode_scrollbars_are_ascii() -> None:
    app = make_app(ascii_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        lines = await _scrolled_table(pilot)
        assert all(line.isascii() for line in lines), "\n".join(lines)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:  # and Unicode ones again otherwise
        lines = await _scrolled_table(pilot)
        assert any(ch in "".join(lines) for ch in "▁▂▃▄▅▆▇"), "\n".join(lines)


# -- 11. a failing query worker -----------------------------------------------------------------


@sync
async def test_a_failing_query_says_so_and_stops_the_spinner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: EventTable, *args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(EventTable, "run", broken)
    app = make_app()
    notices = record_notices(app)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        for _ in range(200):
            tables = app.query(EventsTable)
            if tables and "disk on fire" in str(tables.first().border_subtitle):
                break
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        t = app.query_one(EventsTable)
        assert "query failed: RuntimeError: disk on fire" in str(t.border_subtitle)
        assert not t.has_class("-busy")
        assert "filtering" not in str(t.border_subtitle)
        errors = [n for n in notices if n.severity == "error"]
        assert any("disk on fire" in n.message for n in errors)
