"""Issue 35 item 5: the fixes pane's own keys on the real cnn_osrt report. j/k move as the
arrows do, `?` lists this pane's keys (not the timeline's), the row under the cursor carries
a glyph, the fix's code is wrapped whole (the cpu_bound fix *is* `fused=True`, which was cut
at the panel's edge) and `y` copies it. The snippets compared with are `tuiperf analyze`'s
findings of the same report, not the panel's text."""

from __future__ import annotations

import functools
import re
from typing import Any

from textual.pilot import Pilot

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import advice_app, advice_ready, plain, screen_lines, sync
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.findings import AnalysisResult
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.tui.screens.help import HelpScreen
from tuiperf.tui.widgets.advice import AdvicePanel, FixesList


@functools.cache
def analyzed() -> AnalysisResult:
    return analyze(open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False)))


async def opened(pilot: Pilot[Any]) -> FixesList:
    await advice_ready(pilot)
    await pilot.press("A")
    await pilot.pause()
    olist = pilot.app.query_one(FixesList)
    assert pilot.app.focused is olist
    return olist


def next_enabled(olist: FixesList, at: int, step: int) -> int:
    """The option a move lands on: the next one that is not a note (hand-walked)."""
    i = at + step
    while olist.options[i].disabled:
        i += step
    return i


@sync
async def test_j_and_k_move_as_the_arrows_do() -> None:
    app = advice_app()
    async with app.run_test(size=(160, 48)) as pilot:
        olist = await opened(pilot)
        start = olist.highlighted
        assert start == 0  # the first card
        walk = [start]
        for _ in range(4):
            walk.append(next_enabled(olist, walk[-1], 1))
        for key, back in (("j", "k"), ("down", "up")):
            for want in walk[1:]:
                await pilot.press(key)
                assert olist.highlighted == want, key
            for want in reversed(walk[:-1]):
                await pilot.press(back)
                assert olist.highlighted == want, back
        await pilot.press("G")
        assert olist.highlighted == next_enabled(olist, olist.option_count, -1)
        await pilot.press("g")
        assert olist.highlighted == start


@sync
async def test_help_lists_this_panes_keys() -> None:
    app = advice_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(screen_lines(app))
        assert "Fixes pane" in shown and "Copy the fix's code" in shown
        assert "↓ j" in shown and "Row down" in shown
        assert "Lane down" not in shown and "Fit all" not in shown  # the timeline's keys


def evidence_lines(app: Any) -> list[str]:
    """The panel's part of the screen lines that show the cpu_bound finding's first two
    evidence rows (steps 2 and 3: start, duration, step)."""
    panel = [ln[ln.rindex("│") + 1 :] for ln in screen_lines(app) if "│" in ln]
    return [p for p in panel if re.search(r"\d s +[\d.]+ ms +step [23] ", p)]


@sync
async def test_the_cursor_row_carries_a_glyph() -> None:
    app = advice_app()
    async with app.run_test(size=(160, 48)) as pilot:
        olist = await opened(pilot)
        await pilot.press("j")  # from the first card onto its first evidence row
        await pilot.pause()
        row = olist.options[olist.highlighted or 0]
        assert (row.id or "").startswith("e0:")
        panel = evidence_lines(app)
        assert len(panel) == 2, panel
        assert panel[0].startswith(" ▶") and panel[1].startswith("  "), panel
        await pilot.press("j")
        await pilot.pause()
        panel = evidence_lines(app)
        assert panel[0].startswith("  ") and panel[1].startswith(" ▶"), panel


@sync
async def test_ascii_cursor_glyph() -> None:
    app = advice_app(ascii_only=True)
    async with app.run_test(size=(160, 48)) as pilot:
        olist = await opened(pilot)
        await pilot.press("j")
        await pilot.pause()
        assert str(olist.options[olist.highlighted or 0].prompt).startswith(">")


@sync
async def test_the_fixs_code_is_whole_and_y_copies_it() -> None:
    app = advice_app()
    async with app.run_test(size=(160, 48)) as pilot:
        olist = await opened(pilot)
        adv = app.query_one(AdvicePanel)
        findings = analyzed().findings
        first = findings[0]
        assert first.rule == "cpu_bound" and "fused=True" in first.fix.snippet
        # at the panel's width, every word of the code is on screen whole, nothing cut
        card = plain(olist.options[0].prompt)
        words = card.split()
        for token in first.fix.snippet.split():
            assert token in words, token
        assert "fus…" not in card and "#…" not in card
        shown = "\n".join(screen_lines(app))
        assert "fused=True)" in shown and adv.size.width < 80
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == first.fix.snippet
        # on an evidence row of the second finding: that finding's code
        i = olist.get_option_index("f1")
        olist.highlighted = next_enabled(olist, i, 1)
        await pilot.pause()
        assert (olist.highlighted_option.id or "").startswith("e1:")  # type: ignore[union-attr]
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == findings[1].fix.snippet
