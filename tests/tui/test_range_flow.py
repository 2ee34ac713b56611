"""Range statistics (`[` `]` then `R`, `c`, `e`) and the launch link (`p`) in the viewer
(issue 34 items 5 and 6), on the real vit_range export. Oracles: SQL over the same SQLite
file with the same window, and the correlation ids of the launch and its kernel."""

from __future__ import annotations

import csv
import math
import sqlite3
from pathlib import Path

import pyarrow.compute as pc
import pytest

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import ready, screen_lines, select, settle, sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.lane_render import FLOW
from tuiperf.tui.widgets.range_stats import RangeStatsScreen
from tuiperf.tui.widgets.timeline import Timeline


def _sql(query: str, *params: object) -> list[tuple]:
    con = sqlite3.connect(f"file:{nsys_report('vit_range')}?mode=ro", uri=True)
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()


def _kernel_sums(lo: int, hi: int, clip: bool) -> dict[str, tuple[int, int]]:
    dur = "MIN(k.end, ?) - MAX(k.start, ?)" if clip else "k.end - k.start"
    params = (hi, lo, hi, lo) if clip else (hi, lo)
    rows = _sql(
        f"SELECT s.value, COUNT(*), SUM({dur}) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
        "StringIds s ON s.id = k.demangledName WHERE k.start < ? AND k.end > ? GROUP BY 1",
        *params,
    )
    return {r[0]: (r[1], r[2]) for r in rows}


def _shown_kernels(screen: RangeStatsScreen) -> dict[str, tuple[int, int]]:
    assert screen.table is not None
    rows = screen.table.data.to_pylist()
    return {r["name"]: (r["count"], r["total_ns"]) for r in rows if r["section"] == "kernels"}


def _app() -> TuiperfApp:
    return TuiperfApp(nsys_report("vit_range"), OpenOptions(use_cache=False), name="vit_range")


@sync
async def test_marked_range_statistics_whole_clipped_and_exported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ks = _sql("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start")
    a, b = ks[len(ks) // 3], ks[len(ks) // 2]
    t0, t1 = (a[0] + a[1]) / 2 + 0.25, (b[0] + b[1]) / 2 + 0.25  # the edges cut a kernel each
    lo, hi = math.floor(t0), math.ceil(t1)
    app = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        tl.focus()
        tl.state.cursor_t = t1  # the end first: the keys mark either end
        await pilot.press("right_square_bracket")
        tl.state.cursor_t = t0
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert "R statistics" in str(app.query_one("#status").content)
        await pilot.press("R")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RangeStatsScreen)
        assert (screen.choice.lo, screen.choice.hi, screen.choice.source) == (
            lo, hi, "marked range"
        )  # fmt: skip
        assert _shown_kernels(screen) == _kernel_sums(lo, hi, False)
        assert "counted whole" in "\n".join(screen_lines(app))
        await pilot.press("c")
        await settle(pilot)
        clipped = _kernel_sums(lo, hi, True)
        assert _shown_kernels(screen) == clipped
        assert clipped != _kernel_sums(lo, hi, False)  # the edges do cut kernels
        assert "clipped to the range" in "\n".join(screen_lines(app))
        await pilot.press("e")
        await settle(pilot)
        await pilot.press("enter")  # the proposed name
        await settle(pilot)
        with (tmp_path / "vit_range.range.csv").open(newline="") as f:
            rows = list(csv.DictReader(f))
        got = {r["name"]: (int(r["count"]), int(r["total_ns"])) for r in rows
               if r["section"] == "kernels"}  # fmt: skip
        assert got == clipped
        gpu = [r for r in rows if r["section"] == "gpu"]
        assert gpu[0]["name"] == "GPU busy"
        assert sum(int(r["total_ns"]) for r in gpu[1:]) == hi - lo  # the parts add up
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, RangeStatsScreen)


@sync
async def test_the_selected_nvtx_step_is_the_range_without_marks() -> None:
    (start, end) = _sql(
        "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE COALESCE(n.text, s.value) = 'step 5'"
    )[0]
    app = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        nv = tl.trace.table("nvtx")
        row = pc.index(nv["start"], start).as_py()
        assert nv["text"][row].as_py() == "step 5"
        tl.focus()
        select(app, "nvtx", row)
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RangeStatsScreen)
        assert (screen.choice.lo, screen.choice.hi) == (start, end)
        assert screen.choice.source == "selected NVTX range step 5"
        assert _shown_kernels(screen) == _kernel_sums(start, end, False)


@sync
async def test_p_jumps_from_a_launch_to_its_kernel_and_back() -> None:
    # a launch call and its kernel, joined on the correlation id by SQL
    (corr, api_start, k_start, k_end) = _sql(
        "SELECT r.correlationId, r.start, k.start, k.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId "
        "ORDER BY r.start LIMIT 1 OFFSET 500"
    )[0]
    app = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        api = tl.trace.table("api")
        row = pc.index(api["start"], api_start).as_py()
        assert api["correlation_id"][row].as_py() == corr
        tl.focus()
        select(app, "api", row)
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        sel = tl.state.selection
        assert sel is not None and sel.table == "kernels"
        assert tl.trace.table("kernels")["correlation_id"][sel.row].as_py() == corr
        assert (sel.start, sel.end) == (k_start, k_end)
        assert tl.state.partner is not None
        assert (tl.state.partner.table, tl.state.partner.row) == ("api", row)
        marked = [line for line in screen_lines(app) if FLOW in line]
        assert len(marked) == 2  # the call's lane and the kernel's lane
        await pilot.press("p")
        await settle(pilot)
        sel = tl.state.selection
        assert sel is not None and (sel.table, sel.row) == ("api", row)


@sync
async def test_p_without_a_link_says_so() -> None:
    app = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        tl.focus()
        await pilot.press("p")
        await settle(pilot)
        assert tl.state.selection is None
        nv = tl.trace.table("nvtx")
        select(app, "nvtx", 0)
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        sel = tl.state.selection
        assert sel is not None and (sel.table, sel.row) == ("nvtx", 0)
        assert nv.num_rows > 0
