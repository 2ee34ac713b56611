"""Pilot test: the fixes panel shows the step budget as a stacked bar while no event is
selected, and hides it for a selected event."""

from __future__ import annotations

from tests.support.analysis import trace_of
from tests.tui.pilot_helpers import advice_app as make_app
from tests.tui.pilot_helpers import advice_ready as ready
from tests.tui.pilot_helpers import plain, select, sync
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import step_budget
from tuiperf.report.budget import GLYPH, cells


@sync
async def test_the_panel_shows_the_budget_bar_without_a_selection() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        await pilot.press("A")
        await pilot.pause()
        box = adv.query_one("#advice-budget")
        assert box.display
        text = plain(box.content)
        ref = step_budget(Ctx(trace_of("cnn_osrt")))
        assert ref is not None
        assert f"Step budget · {ref.n_steady} steady steps" in text
        bar_line = text.splitlines()[1]
        # the bar is the parts in order, each as wide as its share of the steps
        want = "".join(GLYPH[p] * k for p, k in cells(ref.steady, adv.size.width - 2))
        assert bar_line.rstrip() == want
        assert f"CPU-bound {ref.steady.pct('cpu_bound'):.1f}%" in text
        card = plain(adv.query_one("#advice-list").options[0].prompt)
        assert "% of steady-state step time)" in " ".join(card.split())  # wrapped
        # a selected event: the panel is about that event, the bar goes
        select(app, "nvtx", 0)
        await pilot.pause()
        assert not box.display
        app.query_one("#timeline").focus()
        await pilot.press("escape")
        await pilot.pause()
        assert box.display and "Step budget" in plain(box.content)


# `b` on the timeline (idle gaps by cause): tests/tui/test_gap_causes.py
