"""The diff view (`tuiperf BEFORE AFTER`) on a real before/after pair: data_bound against
data_bound_fixed (tests/data/budget, H200 captures; the fix: more DataLoader workers and
pinned memory)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.support.cli import assert_one_line_error, run_cli
from tests.support.data import unxz
from tests.tui.pilot_helpers import screen_lines, sync
from tuiperf.analysis.diff.compare import FASTER, SAME, SLOWER, api_name
from tuiperf.errors import TuiperfError
from tuiperf.load.open import OpenOptions
from tuiperf.tui.screens.diff import DiffApp, DiffHelp, DiffScreen, DiffTable, exit_code

BUDGET = Path(__file__).resolve().parents[1] / "data" / "budget"


def report(name: str) -> Path:
    return unxz(BUDGET / f"{name}.sqlite.xz")


def make_app(before: str = "data_bound", after: str = "data_bound_fixed") -> DiffApp:
    return DiffApp(report(before), report(after), OpenOptions(use_cache=False))


async def shown(pilot: Pilot[Any]) -> DiffScreen:
    """Wait for both reports to load and the view to be on screen."""
    app = pilot.app
    for _ in range(600):
        if isinstance(app.screen, DiffScreen):
            break
        assert app.error is None  # type: ignore[attr-defined]
        await pilot.pause(0.05)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, DiffScreen)
    return screen


def text(pilot: Pilot[Any]) -> str:
    return "\n".join(screen_lines(pilot.app))


def first_row(screen: DiffScreen) -> list[str]:
    table = screen.query_one(DiffTable)
    assert table.rows is not None
    return table.rows.cells(0, table.columns())


@sync
async def test_the_view_opens_with_the_verdict_the_steps_and_the_largest_change() -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        screen = await shown(pilot)
        view = screen.view
        assert view.diff.verdict == FASTER
        lines = screen_lines(pilot.app)
        assert lines[0].startswith("verdict: faster")
        top = " ".join(lines[:4])
        assert "data wait" in top  # the change that was made, named first
        assert len(view.diff.notes) == 1 and "[1 note: ? shows]" in top
        assert "baseline: data_bound.sqlite" in text(pilot)
        assert "compared: data_bound_fixed.sqlite" in text(pilot)
        # the table: every by-name row, the largest change first
        rows = view.rows()
        assert {r.section for r in rows} == {"kernels", "copies", "api"}
        assert len(rows) == len(view.diff.kernels) + len(view.diff.copies) + len(view.diff.api)
        assert abs(rows[0].change) == max(abs(r.change) for r in rows)
        assert first_row(screen)[1].rstrip("…") in text(pilot)
        # one steady step of each from its start, on one time scale
        tl0, tl1 = screen.timeline(0), screen.timeline(1)
        s0, s1 = view.step(0), view.step(1)
        assert s0 is not None and s1 is not None
        assert tl0.vp.span == tl1.vp.span >= max(s0.wall_ns, s1.wall_ns)
        assert tl0.vp.col_of(s0.start_ns) == tl1.vp.col_of(s1.start_ns)
        # the slower step (before: waiting for data) reaches further right
        assert s0.wall_ns > s1.wall_ns
        assert tl0.vp.col_of(s0.end_ns) > tl1.vp.col_of(s1.end_ns)
        assert tl0.rows and tl0.lanes is not None
        assert tl0.lanes.lanes[tl0.rows[0].lane].kind == "kernel"  # type: ignore[index]


@sync
async def test_swap_makes_the_other_report_the_baseline() -> None:
    async with make_app().run_test(size=(100, 30)) as pilot:
        screen = await shown(pilot)
        fwd = screen.view.diff
        first = screen.view.rows()[0]
        await pilot.press("b")
        await pilot.pause()
        back = screen.view.diff
        assert back.verdict == SLOWER and back.change_ns == -fwd.change_ns
        assert back.before.path == fwd.after.path and back.after.path == fwd.before.path
        assert screen_lines(pilot.app)[0].startswith("verdict: slower")
        assert "baseline: data_bound_fixed.sqlite" in text(pilot)
        row = screen.view.rows()[0]
        assert (row.section, row.name) == (first.section, first.name)
        assert row.change == -first.change and row.change > 0
        assert first_row(screen)[4].startswith("+")
        # the timelines changed places with their reports
        assert screen.timeline(0).trace is screen.view.traces[0] is not None
        await pilot.press("b")
        await pilot.pause()
        assert screen.view.diff.verdict == FASTER


@sync
async def test_steps_move_together_and_tables_cycle() -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        screen = await shown(pilot)
        view = screen.view
        s0, s1 = view.step(0), view.step(1)
        assert s0 is not None and s1 is not None
        await pilot.press("right_square_bracket")
        await pilot.pause()
        n0, n1 = view.step(0), view.step(1)
        assert n0 is not None and n1 is not None
        assert (n0.index, n1.index) == (s0.index + 1, s1.index + 1)
        tl0, tl1 = screen.timeline(0), screen.timeline(1)
        for tl, step in ((tl0, n0), (tl1, n1)):  # from its start, after a small margin
            assert tl.vp.start < step.start_ns < tl.vp.start + tl.vp.span * 0.05
        assert tl0.vp.col_of(n0.start_ns) == tl1.vp.col_of(n1.start_ns)
        assert f"({n0.index + 1} of {n0.count} steady)" in text(pilot)
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert view.step(0) == s0 and view.step(1) == s1
        # the mouse neither zooms nor selects: the two keep one scale
        vp = tl0.vp
        await pilot.click("#diff-timeline-0", offset=(40, 2))
        await pilot.pause()
        assert tl0.vp == vp and tl0.selection is None
        await pilot.press("t")
        await pilot.pause()
        assert view.section_key == "kernels"
        assert {r.section for r in view.rows()} == {"kernels"}
        assert "kernels (per steady step)" in text(pilot)
        await pilot.press("T", "T")
        await pilot.pause()
        assert view.section_key == "findings"
        gone = [r for r in view.rows() if r.name == "dataloader_starvation"]
        assert gone and gone[0].after is None  # the finding the fix removed


@sync
async def test_enter_marks_the_rows_events_on_both_timelines() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await shown(pilot)
        view = screen.view
        row = view.rows()[0]
        await pilot.press("enter")
        await pilot.pause()
        for which in (0, 1):
            found = view.events_of(0, which)
            assert found is not None
            table, rows = found
            marks = screen.timeline(which).matches
            assert marks is not None and marks.table == table == "api"
            assert len(marks) == len(rows) > 0
            # every marked call is one of the row's name (the _vNNNN suffix dropped)
            names = view.traces[which].table("api", ["name"]).column("name").to_pylist()
            assert {api_name(names[r]) for r in rows.tolist()} == {row.name}
            assert marks.mask.sum() == len(rows)
        await pilot.press("enter")  # again: unmarked
        await pilot.pause()
        assert screen.timeline(0).matches is None and screen.timeline(1).matches is None
        await pilot.press("enter", "escape")  # esc unmarks first, then leaves
        await pilot.pause()
        assert screen.timeline(0).matches is None and app.screen is screen
        await pilot.press("T", "enter")  # findings: nothing to mark
        await pilot.pause()
        assert screen.timeline(0).matches is None
        await pilot.press("escape")
        await pilot.pause()
    assert exit_code(app, app.return_code) == 0


@sync
async def test_kineto_pair_marks_where_a_vanished_kernel_ran() -> None:
    """torch.profiler traces, per-parameter SGD then foreach: the first kernel row is a
    per-parameter kernel that vanished; Enter marks its launches in the baseline only."""
    kineto = BUDGET.parent / "kineto"
    app = DiffApp(
        kineto / "kineto_sgd_per_param.json.gz",
        kineto / "kineto_sgd_foreach.json.gz",
        OpenOptions(use_cache=False),
    )
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await shown(pilot)
        assert screen.view.diff.verdict == FASTER
        assert "CPU-bound" in " ".join(screen_lines(app)[:3])
        step = screen.view.step(0)
        assert step is not None and "ProfilerStep" in step.label
        await pilot.press("t", "enter")
        await pilot.pause()
        row = screen.view.rows()[0]
        assert row.section == "kernels" and row.status == "vanished"
        before, after = screen.timeline(0).matches, screen.timeline(1).matches
        assert before is not None and after is not None
        assert row.before_count is not None
        assert len(before) >= row.before_count * screen.view.diff.before.n_steps > 0
        assert len(after) == 0


@sync
async def test_ascii_mode_draws_only_ascii() -> None:
    before, after = report("data_bound"), report("data_bound_fixed")
    app = DiffApp(before, after, OpenOptions(use_cache=False), ascii_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot)
        for keys in ((), ("t", "t"), ("question_mark",)):  # the copies' sizes; the help
            await pilot.press(*keys)
            await pilot.pause()
            lines = screen_lines(app)
            bad = {ch for line in lines for ch in line if not ch.isascii()}
            assert not bad, bad


@sync
async def test_a_report_against_itself_is_the_same() -> None:
    async with make_app("data_bound", "data_bound").run_test(size=(80, 24)) as pilot:
        screen = await shown(pilot)
        assert screen.view.diff.verdict == SAME
        assert screen_lines(pilot.app)[0].startswith("verdict: same")
        assert "+0.00 ms per step" in text(pilot)
        assert all(r.change == 0 for r in screen.view.rows())
        assert first_row(screen)[-1] == "same"


@sync
async def test_help_lists_the_diff_keys_and_q_leaves() -> None:
    app = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        d = (await shown(pilot)).view.diff
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, DiffHelp)
        assert "Swap baseline" in text(pilot) and "Next step" in text(pilot)
        assert "Zoom in" in text(pilot) and "Pan left" in text(pilot)
        # q quits here (`tuiperf BEFORE AFTER`): the help does not offer going back
        assert "Quit" in text(pilot) and "Back to the viewer" not in text(pilot)
        assert "Row up" in text(pilot) and "Show on timeline" not in text(pilot)
        # first, what the comparison cannot do: the two reports' steady steps differ in number
        assert d.before.n_steps != d.after.n_steps
        assert f"note: different step counts ({d.before.n_steps} vs {d.after.n_steps}" in text(
            pilot
        )
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen)
        await pilot.press("q")
        await pilot.pause()
    assert exit_code(app, app.return_code) == 0


@sync
async def test_a_damaged_second_report_ends_with_its_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    app = DiffApp(report("data_bound"), bad, OpenOptions(use_cache=False))
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(200):
            if app.error is not None:
                break
            await pilot.pause(0.05)
    assert app.error is not None and app.return_code == 1
    with pytest.raises(TuiperfError):
        exit_code(app, app.return_code)


def test_cli_two_timeline_reports_and_bad_input(tmp_path: Path) -> None:
    before, after = str(report("data_bound")), str(report("data_bound_fixed"))
    junk = tmp_path / "junk.json"
    junk.write_text("not a trace")
    assert_one_line_error(run_cli(before, str(junk), "--no-cache"), 1)
    assert_one_line_error(run_cli(before, str(tmp_path / "nope.sqlite"), "--no-cache"), 2)
    # no terminal: the hint names the batch command for the same pair
    res = run_cli(before, after, "--no-cache")
    assert_one_line_error(res, 2)
    assert f"tuiperf diff {before} {after}" in res.stderr


def test_snapshot_80x24(snap_compare: Any) -> None:
    async def ready(pilot: Pilot[Any]) -> None:
        await shown(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=ready)
