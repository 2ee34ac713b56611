"""Pilot tests of the fixes panel on the real cnn_osrt report (pageable copies, loss.item())."""

from __future__ import annotations

import functools

from tests.conftest import nsys_report
from tests.support import needs
from tests.tui.pilot_helpers import advice_app as make_app
from tests.tui.pilot_helpers import advice_ready as ready
from tests.tui.pilot_helpers import evidence_row, finding_no, ncu_report, plain, select, sync
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.findings import SOURCE_NCU, AnalysisResult
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.tui.actions import REGISTRY, by_id
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.advice import FIRST_ROWS, MORE_ROWS, AdvicePanel
from tuiperf.tui.widgets.events_table import EventsTable
from tuiperf.tui.widgets.side_panel import SidePanel
from tuiperf.tui.widgets.timeline import Timeline


@functools.cache
def analyzed() -> AnalysisResult:
    trace = open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False))
    return analyze(trace)


def expected_rules() -> list[str]:
    """What `tuiperf analyze` ranks for the same report (the panel must not re-rank)."""
    return [f.rule for f in analyzed().findings]


def title(adv: AdvicePanel) -> str:
    return str(adv.query_one("#advice-title").content)


def option_ids(adv: AdvicePanel) -> list[str]:
    return [o.id for o in adv.query_one("#advice-list").options if o.id]


def cards(adv: AdvicePanel) -> list[str]:
    """The rules of the finding cards, top to bottom."""
    assert adv.state.index is not None
    found = adv.state.index.findings
    return [found[int(i[1:])].rule for i in option_ids(adv) if i.startswith("f")]


async def highlight(pilot, adv: AdvicePanel, option_id: str) -> None:  # type: ignore[no-untyped-def]
    olist = adv.query_one("#advice-list")
    olist.highlighted = olist.get_option_index(option_id)
    await pilot.pause()


@sync
async def test_analysing_shows_until_the_worker_is_done() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = app.query_one(AdvicePanel)
        assert app.loading and "analysing" in title(adv)
        await ready(pilot)
        assert "analysing" not in title(adv)


@sync
async def test_report_findings_are_listed_ranked() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        assert not adv.is_open and not adv.display  # hidden until asked for
        await pilot.press("A")
        assert adv.is_open and adv.display and app.focused is adv.query_one("#advice-list")
        shown = cards(adv)
        assert shown == expected_rules()
        assert {"pageable_h2d_in_steps", "host_sync_per_step"} <= set(shown)
        assert title(adv) == f"Recommended fixes · {len(shown)} ranked"
        # each card carries severity as a word, the fix and the PyTorch snippet
        card = plain(adv.query_one("#advice-list").options[0].prompt)
        first = analyzed().findings[0]  # the ranked first finding (CPU-bound: an error)
        assert first.severity.word.upper() in card and "Fix:" in card and "saves ~" in card


@sync
async def test_a_pageable_copy_in_a_step_shows_its_findings() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        await pilot.press("A")
        table, row = evidence_row(adv, "pageable_h2d_in_steps")
        select(app, table, row)
        await pilot.pause()
        assert adv.selection == (table, row)
        assert "Fixes for this event" in title(adv)
        assert {"pageable_h2d_in_steps", "cuda_memcpy_async"} <= set(cards(adv))
        assert "host_sync_per_step" not in cards(adv)
        # the selected event's own evidence row is listed first, marked
        i = finding_no(adv, "pageable_h2d_in_steps")
        first = next(o for o in adv.query_one("#advice-list").options if o.id == f"e{i}:0")
        assert str(first.prompt)[:2] == " ●"  # no cursor (a card has it), then the mark
        # Esc on the timeline clears the selection: back to the whole report
        app.query_one(Timeline).focus()
        await pilot.press("escape")
        await pilot.pause()
        assert adv.selection is None and cards(adv) == expected_rules()


@sync
async def test_a_start_up_copy_is_not_blamed_on_the_training_loop() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        assert adv.state.index is not None
        pageable = adv.state.index.findings[finding_no(adv, "pageable_h2d_in_steps")]
        n = pageable.evidence.rows.num_rows  # the copies of the steady steps
        in_steps = {evidence_row(adv, "pageable_h2d_in_steps", p)[1] for p in range(n)}
        f = adv.state.index.findings[finding_no(adv, "cuda_memcpy_async")]
        row = next(r for r in f.evidence.rows["row"].to_pylist() if r not in in_steps)
        select(app, "memcpy", row)
        await pilot.pause()
        assert "cuda_memcpy_async" in cards(adv)
        assert "pageable_h2d_in_steps" not in cards(adv)


@sync
async def test_an_event_no_rule_flagged_says_so_and_lists_the_report() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        select(app, "nvtx", 0)
        await pilot.pause()
        assert "none for this event" in title(adv)
        assert cards(adv) == expected_rules()


@sync
async def test_enter_on_evidence_selects_the_event_on_the_timeline() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        await pilot.press("A")
        i = finding_no(adv, "host_sync_per_step")
        table, row = evidence_row(adv, "host_sync_per_step", 1)
        await highlight(pilot, adv, f"e{i}:1")
        await pilot.press("enter")
        await pilot.pause()
        tl = app.query_one(Timeline)
        assert tl.selection is not None
        assert (tl.selection.table, tl.selection.row) == (table, row) == ("api", row)
        assert tl.vp.start <= tl.selection.start <= tl.vp.end
        side = app.query_one(SidePanel)
        assert side.details is not None and "cudaStreamSynchronize" in side.plain_text()
        # the panel keeps its list (it does not re-filter on its own jump) and its focus
        assert adv.selection is None and app.focused is adv.query_one("#advice-list")
        # the events table (mounted after the first frame) moves to the same call
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        table = app.query_one(EventsTable)
        assert table.kind == "api" and table.current_row() == row


@sync
async def test_enter_on_a_region_zooms_the_timeline_to_it() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        await pilot.press("A")
        i = finding_no(adv, "dataloader_starvation")
        assert adv.state.index is not None
        r = adv.state.index.findings[i].evidence.rows.slice(0, 1).to_pylist()[0]
        assert r["table"] == "" and r["row"] is None  # an idle window, not an event
        tl = app.query_one(Timeline)
        before = tl.vp.span
        await highlight(pilot, adv, f"e{i}:0")
        await pilot.press("enter")
        await pilot.pause()
        assert tl.vp.span < before / 100
        assert tl.vp.start <= r["start_ns"] and r["start_ns"] + r["duration_ns"] <= tl.vp.end


@sync
async def test_more_rows_on_enter() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        await pilot.press("A")
        i = finding_no(adv, "layout_conversion")
        rows = [o for o in option_ids(adv) if o.startswith(f"e{i}:")]
        assert len(rows) == FIRST_ROWS
        await highlight(pilot, adv, f"m{i}")
        await pilot.press("enter")
        rows = [o for o in option_ids(adv) if o.startswith(f"e{i}:")]
        assert len(rows) == FIRST_ROWS + MORE_ROWS
        olist = adv.query_one("#advice-list")
        assert olist.highlighted == olist.get_option_index(f"e{i}:{FIRST_ROWS}")


@sync
async def test_toggle_key_wide_and_narrow() -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        side = app.query_one(SidePanel)
        await pilot.press("i")  # details panel hidden: A brings it back with the fixes
        assert not side.display
        await pilot.press("A")
        assert side.display and adv.is_open
        await pilot.press("A")
        assert not adv.is_open and app.focused is app.query_one(Timeline)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        adv = await ready(pilot)
        side = app.query_one(SidePanel)
        assert not side.display
        await pilot.press("A")
        assert side.display and adv.display and side.has_class("-open")
        await pilot.press("A")
        assert not side.display and not adv.is_open


@sync
async def test_narrow_jump_hands_the_screen_back_to_the_timeline() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        adv = await ready(pilot)
        await pilot.press("A")
        i = finding_no(adv, "pageable_h2d_in_steps")
        await highlight(pilot, adv, f"e{i}:0")
        await pilot.press("enter")
        await pilot.pause()
        tl = app.query_one(Timeline)
        assert tl.display and app.focused is tl
        assert tl.selection is not None and tl.selection.table == "memcpy"
        await pilot.press("A")  # and A comes back to the same list
        assert adv.is_open and cards(adv) == expected_rules()


def test_the_key_is_in_the_registry_with_a_palette_entry() -> None:
    key = by_id("app.advice")
    assert key.palette_name == "advice: toggle panel" and key.description
    app_keys = [k for k in REGISTRY if k.scope == "app"]
    used = [part for k in app_keys for part in k.keys.split(",")]
    assert used.count("A") == 1


@sync
async def test_ascii_mode_has_no_unicode_in_the_panel() -> None:
    app = make_app(ascii_only=True)
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        await pilot.press("A")
        text = "".join(plain(o.prompt) for o in adv.query_one("#advice-list").options[:12])
        text += title(adv)
        assert "WARNING" in text and text.isascii(), [c for c in text if not c.isascii()]


@sync
async def test_ncu_findings_for_a_profiled_kernel() -> None:
    """With an Nsight Compute report beside the trace (`app.ncu`), a profiled kernel's
    launch lists the ncu rules about that kernel."""
    needs.module("ncu_report")
    app = TuiperfApp(
        nsys_report("vit_range"),
        OpenOptions(use_cache=False),
        name="vit_range",
        ncu_path=ncu_report("vit_full"),
    )
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        assert app.ncu is not None and adv.ncu is app.ncu
        assert adv.state.index is not None
        found = adv.state.index.findings
        ncu = [(i, f) for i, f in enumerate(found) if f.source == SOURCE_NCU]
        on_timeline = [(i, f) for i, f in ncu if f.evidence.rows["table"][0].as_py() == "kernels"]
        assert on_timeline, "vit_full's kernels are launched in vit_range"
        i, f = on_timeline[0]
        row = f.evidence.rows["row"][0].as_py()
        select(app, "kernels", row)
        await pilot.pause()
        assert "Fixes for this kernel" in title(adv)
        assert f"f{i}" in option_ids(adv)
        assert "ncu rule" in plain(adv.query_one("#advice-list").get_option(f"f{i}").prompt)


@sync
async def test_a_huge_report_is_analysed_over_a_sample_and_says_so(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tuiperf.analysis import sample

    trace = open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False))
    monkeypatch.setattr(sample, "DEFAULT_MAX_EVENTS", sample.n_events(trace) // 2)
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        adv = await ready(pilot)
        await pilot.press("A")
        part = adv.state.result.sample if adv.state.result is not None else None
        assert part is not None and part.events < part.total_events
        assert title(adv).endswith(" ranked · over a sample")
        lead = adv.query_one("#advice-list").options[0]
        assert lead.disabled and plain(lead.prompt).startswith("Analysed over a sample of the run")
        assert "--max-events 0" in plain(lead.prompt)
        # an evidence row of the sample jumps to the report's own event (same start)
        i = finding_no(adv, "cuda_api_sync")
        table, row = evidence_row(adv, "cuda_api_sync", 0)
        start = adv.state.index.findings[i].evidence.rows["start_ns"][0].as_py()
        await highlight(pilot, adv, f"e{i}:0")
        await pilot.press("enter")
        await pilot.pause()
        tl = app.query_one(Timeline)
        assert tl.selection is not None and (tl.selection.table, tl.selection.row) == (table, row)
        assert trace.table(table)["start"][row].as_py() == start == tl.selection.start
