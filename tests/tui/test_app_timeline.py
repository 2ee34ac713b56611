"""Pilot tests of the viewer on the bundled sample (the real vit_range report)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.tui.pilot_helpers import sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.actions import REGISTRY
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.side_panel import SidePanel
from tuiperf.tui.widgets.timeline import Timeline

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tuiperf" / "sample" / "vit_range"


def make_app(ascii_only: bool = False, path: Path = SAMPLE) -> TuiperfApp:
    return TuiperfApp(path, OpenOptions(use_cache=False), ascii_only=ascii_only, name="vit_range")


async def loaded(pilot) -> None:  # type: ignore[no-untyped-def]
    app = pilot.app
    for _ in range(200):
        if not app.loading or app.error is not None:
            break
        await pilot.pause(0.05)
    await pilot.pause()
    assert not app.loading


def line(tl: Timeline, y: int) -> str:
    return tl.render_line(y).text


def lane_row(tl: Timeline, label: str) -> int:
    return next(
        i
        for i, r in enumerate(tl.rows)
        if r.lane is not None and tl.lanes.lanes[r.lane].label == label
    )


@sync
async def test_first_screen_shows_lanes_ruler_and_scale():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        assert app.focused is tl
        assert "20 ms" in line(tl, 0) or "50 ms" in line(tl, 0)
        assert tl.vp.is_full
        labels = [tl.lanes.lanes[r.lane].label for r in tl.rows if r.lane is not None]
        assert "stream 7 kernels" in labels and "pt_autograd_0 CUDA API" in labels
        status = str(app.query_one("#status").content)
        assert "14–186 ms" in status and "/col" in status


@sync
async def test_zoom_changes_the_ruler_and_fit_all_restores_everything():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        before, scale = line(tl, 0), tl.vp.ns_per_col
        await pilot.press("plus", "w", "equals_sign")
        assert tl.vp.ns_per_col == pytest.approx(scale / 1.5**3)
        assert line(tl, 0) != before
        await pilot.press("minus")
        assert tl.vp.ns_per_col == pytest.approx(scale / 1.5**2)
        await pilot.press("l", "l", "0")
        assert tl.vp.is_full

        def labels(text: str) -> list[str]:
            return [w.strip("┬▼") for w in text[tl.label_width + 1 :].split() if "ms" not in w]

        assert labels(line(tl, 0)) == labels(before) == ["50", "100", "150"]


@sync
async def test_pan_keeps_the_scale_and_backspace_pops_the_zoom_stack():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        await pilot.press("plus", "plus", "plus")
        zoomed = tl.vp
        await pilot.press("right", "d", "L")
        assert tl.vp.start > zoomed.start and tl.vp.span == pytest.approx(zoomed.span)
        await pilot.press("H", "h")
        assert tl.vp.start < zoomed.start + 3 * zoomed.span
        await pilot.press("backspace")
        assert tl.vp.is_full


@sync
async def test_selecting_a_kernel_fills_the_panel_and_marks_its_launch():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        assert tl.lanes.lanes[tl.current_lane].label == "stream 7 kernels"
        await pilot.press("full_stop", "enter")
        await pilot.pause()
        sel = tl.selection
        assert sel is not None and sel.table == "kernels"
        details = app.query_one(SidePanel).plain_text()
        name = tl.trace.table("kernels")["short_name"][sel.row].as_py()
        assert name in details and "Launched by" in details and "NVTX" in details
        # the launch is marked on the CPU thread's API lane
        assert tl.partner is not None and tl.partner.table == "api"
        api_lane = tl.lanes.lanes[tl.partner.lane]
        assert api_lane.label == "python3 CUDA API"
        partner_style = tl.get_component_rich_style("timeline--partner")
        row = tl.rows.index(next(r for r in tl.rows if r.lane == tl.partner.lane))
        strip = tl.render_line(row - tl.top + 1)
        assert any(seg.style == partner_style for seg in strip)
        selected_style = tl.get_component_rich_style("timeline--selected")
        kern = tl.render_line(tl.row_cursor - tl.top + 1)
        assert any(seg.style == selected_style for seg in kern)


@sync
async def test_next_and_previous_event_step_along_the_lane():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        await pilot.press("full_stop", "full_stop", "full_stop")
        third = tl.selection
        await pilot.press("comma")
        assert tl.selection.pos == third.pos - 1
        assert tl.selection.start < third.start


@sync
async def test_lanes_move_and_groups_collapse():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        n = len(tl.rows)
        await pilot.press("k")  # onto the GPU group header
        assert tl.current.lane is None
        await pilot.press("c")
        assert len(tl.rows) < n and "lanes hidden" in line(tl, 1)
        await pilot.press("enter")
        assert len(tl.rows) == n
        await pilot.press("j", "j", "down")
        assert tl.lanes.lanes[tl.current_lane].label == "stream 7 DtoH"


@sync
async def test_mark_a_range_and_zoom_to_it():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        await pilot.press("left_square_bracket", "l", "l", "l", "right_square_bracket")
        a, b = tl.mark
        assert a is not None and b is not None and b > a
        assert "Enter zooms" in str(app.query_one("#status").content)
        await pilot.press("enter")
        assert tl.vp.start == pytest.approx(a) and tl.vp.end == pytest.approx(b)
        assert tl.mark == [None, None]
        await pilot.press("backspace")
        assert tl.vp.is_full


@sync
async def test_fit_selection_zooms_onto_the_event():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        await pilot.press(*"jjjjjjj", "full_stop", "f")
        sel = tl.selection
        assert tl.lanes.lanes[sel.lane].kind == "nvtx"
        assert tl.vp.start <= sel.start and tl.vp.end >= sel.end
        assert tl.vp.span < 1.2 * (sel.end - sel.start)
        # zoomed in this far, the range's name is written inside its box
        text = tl.trace.table("nvtx")["text"][sel.row].as_py()
        assert text.startswith("step") and text in line(tl, tl.row_cursor - tl.top + 1)


@sync
async def test_mouse_click_selects_and_wheel_zooms():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        nvtx = lane_row(tl, "python3 NVTX")
        x = tl.label_width + 1 + tl.vp.col_of(30e6)
        await pilot.click(Timeline, offset=(x, nvtx - tl.top + 1))
        await pilot.pause()
        assert tl.selection is not None and tl.selection.table == "nvtx"
        scale = tl.vp.ns_per_col
        await pilot.mouse_down(Timeline, offset=(x, 2))
        await pilot.mouse_up(Timeline, offset=(x, 2))
        tl.zoom_by(True, tl.vp.time_of(x - tl.label_width - 1))
        assert tl.vp.ns_per_col < scale


@sync
async def test_help_and_palette_come_from_the_registry():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        from rich.console import Console

        from tuiperf.tui.screens.help import HelpScreen
        from tuiperf.tui.widgets.help import help_renderable

        assert isinstance(app.screen, HelpScreen) and app.screen.focused_scope == "timeline"
        console = Console(width=120, record=True, color_system=None, file=io.StringIO())
        console.print(help_renderable("timeline"))
        text = console.export_text()
        for key in REGISTRY:
            if key.scope == "timeline":
                assert key.description in text
        await pilot.press("escape")
        assert app.query_one(Timeline) is app.focused
        from tuiperf.tui.commands import TuiperfCommands

        provider = TuiperfCommands(app.screen)
        names = [hit.text for hit in [h async for h in provider.discover()]]
        assert "timeline: zoom in" in names and "app: quit" in names
        # nothing selected yet: fitting the selection is not offered
        assert "timeline: fit the selection or range" not in names


@sync
async def test_narrow_terminal_collapses_the_panel_and_enter_opens_it():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        side = app.query_one(SidePanel)
        assert side.display is False or not side.region.width
        await pilot.press("full_stop", "enter")
        await pilot.pause()
        assert side.has_class("-open") and side.region.width > 40
        await pilot.press("escape")
        await pilot.pause()
        assert not side.has_class("-open")
        await pilot.press("m")
        assert app.screen.maximized is app.query_one(Timeline)
        await pilot.press("m")
        assert app.screen.maximized is None


@sync
async def test_ascii_mode_draws_only_ascii():
    app = make_app(ascii_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        text = "".join(line(tl, y) for y in range(len(tl.rows) + 1))
        assert text.isascii()
        assert "#" in text or "=" in text or "." in text


@sync
async def test_a_damaged_report_ends_with_an_error(tmp_path):
    bad = tmp_path / "broken.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    app = make_app(path=bad)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(100):
            if app.error is not None:
                break
            await pilot.pause(0.05)
    assert app.error is not None and app.return_code == 1
