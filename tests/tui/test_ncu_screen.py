"""The Nsight Compute screen: Pilot tests on vit_full / lstm_basic, alone and linked to
vit_range, and SVG snapshots at 80x24 and 160x48 (update with --snapshot-update)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Collapsible

from tests.conftest import nsys_path
from tests.support import needs
from tests.tui.pilot_helpers import ncu_report, ncu_reports, sync
from tuiperf.errors import UsageError
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu.metrics import speedup_words
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.screens.ncu import NcuScreen, NcuView, UnmatchedScreen
from tuiperf.tui.widgets.metrics_pane import MetricsPane
from tuiperf.tui.widgets.timeline import Timeline

needs.module("ncu_report")


@pytest.fixture(scope="module")
def ncu_dir() -> Path:
    return ncu_reports()


def rep(ncu_dir: Path, name: str) -> Path:
    return ncu_dir / ncu_report(name).name


def alone(ncu_dir: Path, name: str = "vit_full") -> TuiperfApp:
    path = rep(ncu_dir, name)
    return TuiperfApp(None, OpenOptions(), name=path.name, ncu_path=path)


def linked(ncu_dir: Path, nsys_dir: Path, ncu: str = "vit_full") -> TuiperfApp:
    trace = nsys_path(nsys_dir, "vit_range")
    return TuiperfApp(trace, OpenOptions(), name=trace.name, ncu_path=rep(ncu_dir, ncu))


async def ready(pilot, screen: bool = True) -> None:  # type: ignore[no-untyped-def]
    for _ in range(600):
        if screen and isinstance(pilot.app.screen, NcuScreen):
            break
        if not screen and not pilot.app.loading:
            break
        await pilot.pause(0.05)
    await pilot.pause()


def view(app: TuiperfApp) -> NcuView:
    return app.screen.query_one(NcuView)


def pane_text(app: TuiperfApp, width: int = 100) -> str:
    return app.screen.query_one("#ncu-metrics", MetricsPane).plain_text(width)


@sync
async def test_alone_lists_kernels_and_follows_the_cursor(ncu_dir: Path) -> None:
    app = alone(ncu_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        v = view(app)
        assert v.body.rows is not None and len(v.body.rows) == 7
        assert v.current() == 0
        await pilot.press("down", "down", "down")
        await pilot.pause()
        assert v.current() == 3
        text = pane_text(app)
        assert "ncu ID 3  implicit_convolve_sgemm" in text
        assert "Verdict: memory-bound" in text  # ncu: "High Memory Throughput"
        # sections in ncu's order, one collapsible each
        pane = app.screen.query_one("#ncu-metrics", MetricsPane)
        titles = [str(c.title) for c in pane.query(Collapsible)]
        assert titles == [s.name for s in app.ncu.sections(3, "header")]
        assert "Block limit registers" in text and "limits" in text
        assert "Top stall reasons" in text
        assert not v.check_action("jump", ())  # nothing to jump to without nsys


@sync
async def test_sort_and_filter(ncu_dir: Path) -> None:
    app = alone(ncu_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        v = view(app)
        await pilot.press("greater_than_sign", "greater_than_sign")  # ID -> Kernel -> Duration
        await pilot.pause()
        assert v.sort == "duration" and v.descending
        ids = [r["id"] for r in v.body.rows.records]  # type: ignore[union-attr]
        assert ids[0] == 3 and ids[-1] == 0
        await pilot.press("r")
        assert v.body.rows.records[0]["id"] == 0  # type: ignore[union-attr]
        await pilot.press("slash", *"implicit", "enter")
        await pilot.pause()
        assert [r["id"] for r in v.body.rows.records] == [3]  # type: ignore[union-attr]
        await pilot.press("slash", "ctrl+a", "exclamation_mark", "enter")
        await pilot.pause()
        assert len(v.body.rows) == 6  # type: ignore[arg-type]
        await pilot.press("escape")
        await pilot.pause()
        assert v.text == "" and len(v.body.rows) == 7  # type: ignore[arg-type]
        assert isinstance(app.screen, NcuScreen)  # opened alone: Esc does not leave it


@sync
async def test_collapse_sections(ncu_dir: Path) -> None:
    app = alone(ncu_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        pane = app.screen.query_one("#ncu-metrics", MetricsPane)
        folds = list(pane.query(Collapsible))
        assert not folds[0].collapsed and "Verdict:" in pane_text(app)
        await pilot.press("c")  # some open: fold them all
        await pilot.pause()
        assert all(c.collapsed for c in pane.query(Collapsible))
        assert "Verdict:" not in pane_text(app)
        await pilot.press("c")
        await pilot.pause()
        assert not any(c.collapsed for c in pane.query(Collapsible))
        # one section by its title: focus it and press Enter; the fold survives a new kernel
        first = pane.query(Collapsible).first()
        first.query_one("CollapsibleTitle").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert first.collapsed and pane.folded["SpeedOfLight"] is True
        view(app).body.focus()
        await pilot.press("down")
        await pilot.pause()
        assert pane.query(Collapsible).first().collapsed


@sync
async def test_rule_list_with_speedups(ncu_dir: Path) -> None:
    app = alone(ncu_dir, "lstm_basic")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        text = pane_text(app, 120)
        assert "Top rule results:" in text
        assert "OPT Small Grid" in text and "Est. Speedup" in text
        assert "points at: launch__waves_per_multiprocessor" in text
        rules = app.ncu.top_rules(0, 3)
        assert speedup_words(rules[0]) in text


@sync
async def test_baseline_compare(ncu_dir: Path) -> None:
    app = alone(ncu_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        await pilot.press("down", "down", "b", "down")
        await pilot.pause()
        v = view(app)
        assert v.baseline == 2 and v.current() == 3
        text = pane_text(app, 140)
        assert "compared with baseline ID 2" in text
        assert "ID 2" in text and "ID 3" in text and "delta" in text
        assert "+" in text and " pt" in text  # SM throughput: 5.3 % -> 63.6 %, in points
        await pilot.press("B")
        await pilot.pause()
        assert v.baseline is None and "compared with" not in pane_text(app, 140)


@sync
async def test_linked_jump_and_side_metrics(ncu_dir: Path, nsys_dir: Path) -> None:
    app = linked(ncu_dir, nsys_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot, screen=False)
        link = app.ncu_link
        assert link is not None and app.query_one(Timeline).ncu_marks is not None
        await pilot.press("K")
        await ready(pilot)
        v = view(app)
        await pilot.press("down", "down", "down", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, NcuScreen)
        timeline = app.query_one(Timeline)
        first = timeline.selection
        assert first is not None and first.table == "kernels"
        assert first.row == int(link.exact_rows_for(3)[0]) == int(link.jump_rows_for(3)[0])
        side = app.query_one("#side-metrics", MetricsPane)
        assert side.kernel_id == 3 and not app.query_one("#metrics").has_class("-empty")
        # Enter again on the same kernel: its next launch
        await pilot.press("K")
        await ready(pilot)
        assert view(app) is v and v.current() == 3
        await pilot.press("enter")
        await pilot.pause()
        assert timeline.selection is not None
        assert timeline.selection.row == int(link.jump_rows_for(3)[1])
        # a kernel without an ncu result empties the metrics section
        none = int(next(r for r in range(len(link.mask)) if not link.mask[r]))
        from tuiperf.tui.messages import EventSelected

        app.post_message(EventSelected("kernels", none, "test"))
        await pilot.pause()
        assert app.query_one("#metrics").has_class("-empty")


@sync
async def test_unmatched_are_listed(ncu_dir: Path, nsys_dir: Path) -> None:
    app = linked(ncu_dir, nsys_dir, "lstm_basic")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, screen=False)
        await pilot.press("K")
        await ready(pilot)
        assert app.ncu_link.unmatched_ncu  # the LSTM's GEMMs never ran in the ViT
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, UnmatchedScreen)
        body = str(app.screen.query_one("#unmatched-body").render())
        assert "ncu kernels with no launch in the nsys report" in body
        assert "nsys kernels with no ncu result" in body
        kid = app.ncu_link.unmatched_ncu[0]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, NcuScreen)
        v = view(app)
        while v.current() != kid:
            await pilot.press("down")
        assert app.ncu_link.note_for(kid) in pane_text(app, 400)
        await pilot.press("escape")  # linked: Esc goes back to the timeline
        await pilot.pause()
        assert not isinstance(app.screen, NcuScreen)


def test_split_reports_in_either_order(ncu_dir: Path, nsys_dir: Path) -> None:
    from tuiperf.commands.open_tui import split_reports

    ncu, nsys = rep(ncu_dir, "vit_full"), nsys_path(nsys_dir, "vit_range")
    assert split_reports(ncu, None) == (ncu, ncu)
    assert split_reports(nsys, None) == (nsys, None)
    assert split_reports(nsys, ncu) == (nsys, ncu)
    assert split_reports(ncu, nsys) == (nsys, ncu)
    with pytest.raises(UsageError):
        split_reports(nsys, nsys)


# --- snapshots --------------------------------------------------------------------------------


def _then(*keys: str):  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await ready(pilot)
        await pilot.press(*keys)
        # the metrics pane re-mounts its sections for each kernel: let that layout (and
        # the scrollbar it brings) settle before the picture
        for _ in range(3):
            await pilot.pause()
        # a toast lives 3 s: on a loaded machine the picture could come before or after it
        # went, so none is in the picture
        pilot.app.clear_notifications()
        await pilot.pause()

    return run


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_snapshot_ncu_screen(snap_compare, ncu_dir: Path, size) -> None:
    keys = ("down", "down", "down")
    assert snap_compare(alone(ncu_dir), terminal_size=size, run_before=_then(*keys))


def test_snapshot_compare(snap_compare, ncu_dir: Path) -> None:
    keys = ("down", "down", "b", "down")
    assert snap_compare(alone(ncu_dir), terminal_size=(160, 48), run_before=_then(*keys))


@sync
async def test_events_table_marks_kernels_with_ncu_results(ncu_dir: Path, nsys_dir: Path) -> None:
    from tuiperf.tui.widgets.events_table import EventsTable

    app = linked(ncu_dir, nsys_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot, screen=False)
        for _ in range(200):
            found = app.query(EventsTable)
            if found and found.first().view is not None:
                break
            await pilot.pause(0.05)
        table = app.query_one(EventsTable)
        body = table.body
        shown = body.columns()
        assert shown[0].key == "ncu"
        rows = body.rows
        assert rows is not None
        marks = [rows.cells(p, shown)[0] for p in range(min(len(rows), 40))]
        want = [bool(app.ncu_link.mask[rows.row_id(p)]) for p in range(len(marks))]
        assert [m == "◆" for m in marks] == want and any(want) and not all(want)
