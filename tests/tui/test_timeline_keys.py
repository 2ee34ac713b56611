"""Timeline keys: `>`/`<` step through the launches of the selected kernel; `g`/`G` move the
selection with the view."""

from __future__ import annotations

from pathlib import Path

from tests.tui.pilot_helpers import ready, screen_lines, select, settle, sync
from tuiperf.load.open import OpenOptions
from tuiperf.model.timeline.same_name import next_same_name
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.timeline import Timeline

SAMPLE = Path(__file__).resolve().parents[2] / "tuiperf" / "sample" / "vit_range"


@sync
async def test_next_launch_of_the_selected_kernel() -> None:
    app = TuiperfApp(SAMPLE, OpenOptions(use_cache=False), name="vit_range")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        tl.focus()
        select(app, "kernels", 100)
        await settle(pilot)
        expected = next_same_name(tl.trace, "kernels", 100, 1)
        assert expected is not None
        await pilot.press("greater_than_sign")
        await settle(pilot)
        assert tl.state.selection is not None
        assert (tl.state.selection.table, tl.state.selection.row) == ("kernels", expected)
        await pilot.press("less_than_sign")
        await settle(pilot)
        assert tl.state.selection.row == 100


@sync
async def test_start_and_end_keys_move_the_selection() -> None:
    app = TuiperfApp(SAMPLE, OpenOptions(use_cache=False), name="vit_range")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        tl.focus()
        select(app, "kernels", 100)
        await settle(pilot)
        lane = tl.state.selection.lane
        await pilot.press("g")
        await settle(pilot)
        assert tl.state.selection is not None and tl.state.selection.pos == 0
        await pilot.press("full_stop")
        await settle(pilot)
        assert (tl.state.selection.lane, tl.state.selection.pos) == (lane, 1)


@sync
async def test_3_focuses_the_fixes_list_when_it_shows() -> None:
    """`3` landed on the side panel's frame; with the fixes shown, their list is where Enter
    acts (a finding, an evidence row)."""
    app = TuiperfApp(SAMPLE, OpenOptions(use_cache=False), name="vit_range")
    async with app.run_test(size=(90, 30)) as pilot:
        await ready(pilot)
        await pilot.press("A")
        await settle(pilot, 0.2)
        await pilot.press("1", "3")
        await settle(pilot)
        assert app.focused is not None and app.focused.id == "advice-list"
        assert "enter" in {
            k for k, b in app.screen.active_bindings.items() if b.node is app.focused
        }


@sync
async def test_base_names_toggle_in_the_events_table() -> None:
    """`B`: `void at::native::elementwise_kernel<128, 2, …>(int, T3)` read three times in a
    row; as base names the table shows `elementwise_kernel<…, …>` with the functor that
    tells the kernels apart (tests/tui/test_summary_names.py: the cutlass GEMMs)."""
    app = TuiperfApp(SAMPLE, OpenOptions(use_cache=False), name="vit_range")
    async with app.run_test(size=(160, 48)) as pilot:
        table = await ready(pilot)
        await pilot.press("2")
        full = "\n".join(_table_rows(app))
        assert "void at::native::" in full and "elementwise_kernel<…, " not in full
        await pilot.press("B")
        await settle(pilot)
        short = "\n".join(_table_rows(app))
        assert "elementwise_kernel<…, " in short and "void at::" not in short
        await pilot.press("S")  # the summary too
        await settle(pilot)
        assert "elementwise_kernel<…, " in "\n".join(screen_lines(app))
        assert table.state.base_names


def _table_rows(app: TuiperfApp) -> list[str]:
    """The events table's rows on screen (they start with a start time in seconds)."""
    return [ln for ln in screen_lines(app) if ln.lstrip("│ ").startswith("0.0")]


@sync
async def test_first_esc_in_the_events_table_clears_the_filter() -> None:
    """The key list says `esc Clear filter`: the first Esc clears the filter, and the
    selection (the event shown in the details) stays."""
    app = TuiperfApp(SAMPLE, OpenOptions(use_cache=False), name="vit_range")
    async with app.run_test(size=(100, 30)) as pilot:
        table = await ready(pilot)
        await pilot.press("2", "slash", *"gemm", "enter")
        await settle(pilot, 0.3)
        await pilot.press("down", "enter")
        await settle(pilot)
        tl = app.query_one(Timeline)
        assert table.state.query.text == "gemm" and tl.state.selection is not None
        await pilot.press("escape")
        await settle(pilot)
        assert table.state.query.text == ""
        assert tl.state.selection is not None
