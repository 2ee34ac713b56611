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


@sync
async def test_b_colours_the_idle_gaps_by_cause_on_the_timeline() -> None:
    from tuiperf.tui.widgets.timeline import Timeline

    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        tl.focus()
        ref = step_budget(Ctx(trace_of("cnn_osrt")))
        assert ref is not None
        step = ref.main.steps[2]
        assert tl.lanes is not None
        gpu = next(
            i
            for i, r in enumerate(tl.rows)
            if r.lane is not None and tl.lanes.lanes[r.lane].table == "kernels"
        )
        tl.set_viewport(tl.vp.fit_range(step.start_ns, step.end_ns))

        def lane_text() -> str:
            tl.top = max(gpu - 1, 0)
            tl._cache.clear()
            return "".join(seg.text for seg in tl.render_line(gpu - tl.top + 1))

        before = lane_text()
        await pilot.press("b")
        await pilot.pause()
        assert tl.gap_colours is not None
        after = lane_text()
        # the step's idle time shows as its causes: data wait and CPU-bound issue
        for part in ("data", "cpu_bound"):
            assert step.parts.ns[part] > 0
            assert GLYPH[part] in after and GLYPH[part] not in before
        await pilot.press("b")
        await pilot.pause()
        assert tl.gap_colours is None and lane_text() == before
