"""The Nsight Compute metrics pane scrolls (keys and wheel), jumps to a section by number or
name, and `?` there lists the screen's own keys."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Collapsible

from tests.support import needs
from tests.support.data import unxz
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.screens.help import HelpScreen
from tuiperf.tui.screens.ncu import NcuScreen
from tuiperf.tui.widgets.help import help_renderable
from tuiperf.tui.widgets.metrics_pane import MetricsPane

needs.module("ncu_report")

NCU = Path(__file__).resolve().parents[1] / "data" / "ncu"


@pytest.fixture(scope="module")
def vit_full() -> Path:
    return unxz(NCU / "vit_full.ncu-rep.xz")


@pytest.fixture(autouse=True)
def _still(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


async def _opened(pilot) -> MetricsPane:  # type: ignore[no-untyped-def]
    for _ in range(600):
        if isinstance(pilot.app.screen, NcuScreen):
            break
        await pilot.pause(0.05)
    await pilot.pause()
    return pilot.app.screen.query_one("#ncu-metrics", MetricsPane)


def _top_section(pane: MetricsPane) -> str:
    folds = list(pane.query(Collapsible))
    return str(folds[pane.current_section()].title)


def _title_in_view(pane: MetricsPane, title: str) -> bool:
    fold = next(c for c in pane.query(Collapsible) if str(c.title) == title)
    box = pane.content_region
    return fold.region.height > 0 and box.y <= fold.region.y < box.bottom


def _run(coro) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(coro)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_the_metrics_pane_scrolls_to_every_section(vit_full: Path, size: tuple[int, int]) -> None:
    async def go() -> None:
        app = TuiperfApp(None, OpenOptions(), name=vit_full.name, ncu_path=vit_full)
        async with app.run_test(size=size) as pilot:
            pane = await _opened(pilot)
            assert pane.max_scroll_y > 0  # was 0: nothing below the first screen was reachable
            await pilot.press("space")
            await pilot.pause()
            assert pane.scroll_y > 0
            await pilot.press("shift+up", "shift+up")
            await pilot.pause()
            assert pane.scroll_y == 0
            # Occupancy, the 11th section of a --set full report, in one key
            await pilot.press("o")
            await pilot.pause()
            await pilot.pause()
            assert _title_in_view(pane, "Occupancy")
            occupancy = next(c for c in pane.query(Collapsible) if str(c.title) == "Occupancy")
            assert not occupancy.collapsed
            assert pane.scroll_y > 0
            # by number: 4 is the fourth section in the report's order
            await pilot.press("4")
            await pilot.pause()
            await pilot.pause()
            assert _top_section(pane) == pane.section_titles()[3]
            assert _title_in_view(pane, pane.section_titles()[3])
            await pilot.press("right_square_bracket")
            await pilot.pause()
            await pilot.pause()
            assert _top_section(pane) == pane.section_titles()[4]

    _run(go())


def test_help_on_the_ncu_screen_lists_its_keys(vit_full: Path) -> None:
    async def go() -> None:
        app = TuiperfApp(None, OpenOptions(), name=vit_full.name, ncu_path=vit_full)
        async with app.run_test(size=(120, 40)) as pilot:
            await _opened(pilot)
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            assert app.screen.focused_scope == "ncu"
            console = Console(width=120, record=True, file=io.StringIO())
            console.print(help_renderable(app.screen.focused_scope))
            text = console.export_text()
            assert "Nsight Compute screen" in text and "Occupancy" in text
            assert "Timeline" not in text and "Details panel" not in text

    _run(go())
