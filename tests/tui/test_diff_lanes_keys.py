"""Issue 35 item 16, the diff view (`tuiperf BEFORE AFTER`) on data_bound against
data_bound_fixed: lanes say which GPU or process they are on (they had no group rows, so
both reports showed `python3 NVTX` and `stream 7 kernels` with no pid or device), both
steps zoom and pan together, and `q` says what it does: Quit in `tuiperf BEFORE AFTER`,
back to the viewer when the view was pushed over it. Devices and pids come from the
reports with sqlite3; windows are checked by hand arithmetic on the step spans."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from tests.support.data import unxz
from tests.tui.pilot_helpers import screen_lines, sync
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.timeline.viewport import STEP_FRACTION, ZOOM_FACTOR
from tuiperf.tui.screens.diff import DiffApp, DiffScreen, exit_code
from tuiperf.tui.viewstate.diff import DiffView

BUDGET = Path(__file__).resolve().parents[1] / "data" / "budget"
NAMES = ("data_bound", "data_bound_fixed")


def report(name: str) -> Path:
    return unxz(BUDGET / f"{name}.sqlite.xz")


def make_app() -> DiffApp:
    return DiffApp(report(NAMES[0]), report(NAMES[1]), OpenOptions(use_cache=False))


async def shown(pilot: Pilot[Any]) -> DiffScreen:
    for _ in range(600):
        if isinstance(pilot.app.screen, DiffScreen):
            break
        await pilot.pause(0.05)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, DiffScreen)
    return screen


def sql_places(path: Path) -> tuple[set[int], set[int]]:
    """(devices that ran kernels, pids of the processes) as nsys wrote them."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        devices = {
            r[0] for r in con.execute("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")
        }
        pids = {r[0] for r in con.execute("SELECT DISTINCT pid FROM PROCESSES")}
        return devices, pids
    finally:
        con.close()


@sync
async def test_lanes_carry_their_gpu_or_process() -> None:
    async with make_app().run_test(size=(160, 48)) as pilot:
        screen = await shown(pilot)
        lines = "\n".join(screen_lines(pilot.app))
        for which, name in enumerate(NAMES):
            devices, pids = sql_places(report(name))
            tl = screen.timeline(which)
            assert tl.lanes is not None and tl.rows
            labels = [tl.lanes.lanes[r.lane].label for r in tl.rows if r.lane is not None]
            on_screen = labels[tl.top : tl.top + tl.lane_rows]
            for label in on_screen:
                assert f"  {label}" in lines  # whole: the label column fits it
            for label in labels:
                where, _, rest = label.partition(" · ")
                kind, _, number = where.partition(" ")
                assert rest and number.isdigit(), label
                assert int(number) in (devices if kind == "GPU" else pids), label
                assert kind in ("GPU", "pid")
            assert any(lb.startswith("GPU ") for lb in labels)
            assert any(lb.startswith("pid ") for lb in labels)


@sync
async def test_zoom_and_pan_move_both_steps_together() -> None:
    async with make_app().run_test(size=(120, 36)) as pilot:
        screen = await shown(pilot)
        view = screen.view
        tls = screen.timeline(0), screen.timeline(1)
        s0, s1 = view.step(0), view.step(1)
        span = view.span_ns()
        assert s0 is not None and s1 is not None and span is not None
        whole = [tl.vp.span for tl in tls]
        starts = [tl.vp.start - s.start_ns for tl, s in zip(tls, (s0, s1), strict=True)]

        def rel() -> list[float]:
            return [tl.vp.start - s.start_ns for tl, s in zip(tls, (s0, s1), strict=True)]

        await pilot.press("left", "minus")  # at the whole span: nothing to pan or zoom out
        await pilot.pause()
        assert [tl.vp.span for tl in tls] == whole and rel() == starts
        await pilot.press("plus")
        await pilot.pause()
        want = whole[0] / ZOOM_FACTOR
        assert all(abs(tl.vp.span - want) < 1 for tl in tls)
        # zoomed about the middle: the window's middle is where the whole span's was
        mid = starts[0] + whole[0] / 2
        assert all(abs(r + want / 2 - mid) < 1 for r in rel())
        assert "showing +" in "\n".join(screen_lines(pilot.app))
        before = rel()
        await pilot.press("right")
        await pilot.pause()
        moved = [a - b for a, b in zip(rel(), before, strict=True)]
        assert all(abs(m - STEP_FRACTION * want) < 1 for m in moved)
        for _ in range(20):  # never past the end of the shared span
            await pilot.press("l")
        await pilot.pause()
        right_edge = starts[0] + whole[0]
        assert all(abs(r + want - right_edge) < 1 for r in rel())
        await pilot.press("0")
        await pilot.pause()
        assert [tl.vp.span for tl in tls] == whole and rel() == starts
        assert "showing +" not in "\n".join(screen_lines(pilot.app))


@sync
async def test_q_quits_the_standalone_view_and_says_so() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot)
        footer = screen_lines(app)[-1]
        assert "q Quit" in footer and "Leave" not in footer
        await pilot.press("escape")  # nothing marked: esc does not end the program
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen) and app.return_code is None
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 and exit_code(app, app.return_code) == 0


class Viewer(App[None]):
    """Stands for the viewer: the diff view opened over its screen."""

    def __init__(self, view: DiffView) -> None:
        super().__init__()
        self.view = view

    def on_mount(self) -> None:
        self.push_screen(DiffScreen(self.view, standalone=False))


@sync
async def test_q_goes_back_when_opened_over_the_viewer() -> None:
    traces = [open_trace(report(n), OpenOptions(use_cache=False)) for n in NAMES]
    view = DiffView.of(traces[0], traces[1], NAMES, [build_lanes(t) for t in traces])
    app = Viewer(view)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot)
        footer = screen_lines(app)[-1]
        assert "q Back to the viewer" in footer and "Quit" not in footer
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, DiffScreen)
        assert app.is_running and app.return_code is None
