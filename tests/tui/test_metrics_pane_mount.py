"""The metrics pane shown (or cleared) in the same turn it is mounted: before its children
are composed it defers the call to after the next refresh instead of failing to find its
head (a race the linked-launch goto hit on a loaded CI machine)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tests.support import needs
from tests.support.data import unxz
from tests.tui.pilot_helpers import sync
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.tui.widgets.metrics_pane import MetricsPane

needs.module("ncu_report")

NCU = Path(__file__).resolve().parents[1] / "data" / "ncu"


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Vertical(id="box")


@pytest.mark.parametrize("call", ["show", "clear"])
def test_show_in_the_turn_it_is_mounted(call: str, tmp_path: Path) -> None:
    _mount_then(call, tmp_path)


@sync
async def _mount_then(call: str, tmp_path: Path) -> None:
    km = open_ncu(unxz(NCU / "vit_full.ncu-rep.xz"), OpenOptions(cache_dir=tmp_path))
    kid = km.kernel_ids()[0]
    app = _Host()
    async with app.run_test(size=(120, 40)) as pilot:
        pane = MetricsPane(id="side-metrics")
        app.query_one("#box", Vertical).mount(pane)
        if call == "show":
            pane.show(km, kid)  # not awaited: the pane's children do not exist yet
        else:
            pane.clear("No ncu result for this kernel.")
        for _ in range(20):
            await pilot.pause()
        sections = pane.query_one("#metrics-sections", Vertical).children
        if call == "show":
            assert pane.kernel_id == kid and len(sections) > 0
        else:
            head = pane.query_one("#metrics-head", Static)
            assert pane.kernel_id is None and "No ncu result" in str(head.render())
