"""Issue 35 item 7: the Nsight Compute screen opened alone (`tuiperf X.ncu-rep`) has no
timeline, so it neither offers `⏎ Show on timeline` nor swallows Enter: the footer leaves
the key out, the title says no timeline is linked, and Enter says how to link one. Linked
to vit_range, the same key is offered and jumps."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import nsys_path
from tests.support import needs
from tests.tui.pilot_helpers import ncu_report, record_notices, screen_lines, sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.screens.ncu import NcuScreen, NcuView

needs.module("ncu_report")


async def ready(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(600):
        if isinstance(pilot.app.screen, NcuScreen):
            break
        await pilot.pause(0.05)
    await pilot.pause()


def footer(app: TuiperfApp) -> str:
    return screen_lines(app)[-1]


@sync
async def test_alone_enter_is_not_offered_and_says_how_to_link() -> None:
    path = ncu_report("vit_full")
    app = TuiperfApp(None, OpenOptions(), name=path.name, ncu_path=path)
    notices = record_notices(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        assert app.screen.query_one(NcuView).link is None
        line = footer(app)
        assert "Filter" in line  # the footer is drawn
        assert "timeline" not in line.lower() and "⏎" not in line
        assert "enter" not in app.screen.active_bindings
        assert "no timeline linked" in screen_lines(app)[0]
        await pilot.press("enter")
        await pilot.pause()
        said = [n.message for n in notices]
        assert any("tuiperf RUN.nsys-rep THIS.ncu-rep" in m for m in said), said
        assert isinstance(app.screen, NcuScreen)  # nothing else happened


@sync
async def test_linked_enter_is_offered(nsys_dir: Path) -> None:
    trace = nsys_path(nsys_dir, "vit_range")
    app = TuiperfApp(trace, OpenOptions(), name=trace.name, ncu_path=ncu_report("vit_full"))
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(600):
            if not app.loading:
                break
            await pilot.pause(0.05)
        await pilot.press("K")
        await ready(pilot)
        assert app.screen.query_one(NcuView).link is not None
        assert "⏎ Show on timeline" in footer(app)
        assert "no timeline linked" not in screen_lines(app)[0]
