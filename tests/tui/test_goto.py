"""`tuiperf REPORT --goto ID` (issue 36): the viewer opens at an event, a stretch of time or
a finding's first evidence row. Events checked against sqlite3 on the export."""

from __future__ import annotations

import sqlite3

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import ready, settle, sync
from tuiperf.analysis.ids import parse
from tuiperf.load.open import OpenOptions
from tuiperf.tui.goto import GotoApp
from tuiperf.tui.widgets.side_panel import SidePanel
from tuiperf.tui.widgets.timeline import Timeline


def _app(goto: str) -> GotoApp:
    return GotoApp(nsys_report("cnn_osrt"), OpenOptions(use_cache=False), name="cnn",
                   goto=parse(goto))  # fmt: skip


def _sqlite(sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{nsys_report('cnn_osrt')}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


async def _wait_went(pilot, app: GotoApp) -> None:  # type: ignore[no-untyped-def]
    for _ in range(200):
        if app.went is not None or app.goto_note:
            return
        await settle(pilot, 0.05)


@sync
async def test_goto_an_event_selects_it_and_zooms_to_it():
    """kernels:1000 is the 1001st kernel by start time in the export."""
    start, end, name = _sqlite(
        "SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName ORDER BY k.start LIMIT 1 OFFSET 1000"
    )[0]
    app = _app("kernels:1000")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        await _wait_went(pilot, app)
        tl = app.query_one(Timeline)
        sel = tl.selection
        assert sel is not None and (sel.table, sel.row) == ("kernels", 1000)
        assert (sel.start, sel.end) == (start, end)
        assert tl.vp.start <= start and end <= tl.vp.end  # in view, zoomed in:
        assert tl.vp.span < 10 * (end - start) and len(tl.zooms) == 1  # backspace goes back
        details = app.query_one(SidePanel).details
        assert details is not None and details.kind == "kernel"
        assert (details.table, details.row) == ("kernels", 1000) and details.title in name


@sync
async def test_goto_a_finding_opens_its_first_evidence_row():
    """pageable_h2d_in_steps' first row: the first pageable host-to-device copy inside
    the steady steps (step 2's start on), by start time in the export."""
    (step2,) = _sqlite(
        "SELECT n.start FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE coalesce(n.text, s.value) = 'step 2'"
    )[0]
    start, end = _sqlite(
        "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE srcKind = 0 AND copyKind = 1 "
        f"AND start >= {step2} ORDER BY start LIMIT 1"
    )[0]
    app = _app("pageable_h2d_in_steps")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        await _wait_went(pilot, app)
        sel = app.query_one(Timeline).selection
        assert app.goto_note == "" and sel is not None and sel.table == "memcpy"
        assert (sel.start, sel.end) == (start, end)


@sync
async def test_goto_a_stretch_of_time_zooms_to_it():
    (a, b) = _sqlite(
        "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE coalesce(n.text, s.value) = 'step 5'"
    )[0]
    app = _app(f"at:{a}+{b - a}")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        await _wait_went(pilot, app)
        vp = app.query_one(Timeline).vp
        assert vp.start <= a and b <= vp.end and vp.span < 2 * (b - a)


@sync
async def test_goto_what_is_not_there_says_so():
    n = _sqlite("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]
    for goto, says in ((f"kernels:{n}", f"the report has {n:,} kernels rows"),
                       ("no_such_rule", "no finding with that id")):  # fmt: skip
        app = _app(goto)
        async with app.run_test(size=(160, 48)) as pilot:
            await ready(pilot)
            await _wait_went(pilot, app)
            assert app.went is None and says in app.goto_note
            assert app.query_one(Timeline).selection is None
