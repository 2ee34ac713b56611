"""The events table's state without Textual: which query runs, sort/filter/summary
transitions, where the cursor lands, and what is exported, over a real report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import columns as C
from tuiperf.model import fmt
from tuiperf.model.timeline.query import Events, Query, QueryError
from tuiperf.tui.viewstate.events import (
    MIN_DURATION,
    EventsState,
    Keep,
    Result,
    clamp,
    compute,
    default_descending,
)


@pytest.fixture(scope="module")
def model(nsys_dir: Path) -> Events:
    return Events(open_trace(nsys_dir / "cnn_osrt.sqlite", OpenOptions(use_cache=False)))


def run(state: EventsState, model: Events, keep: Keep = None) -> int:
    """Do what the widget's worker does for the next request; the cursor it lands on."""
    phases: list[str] = []
    req = state.request(keep)
    result = compute(model, req, phases.append)
    assert result.gen == req.gen and (result.summary is not None) == state.summary_mode
    assert ("summarizing" in phases) == state.summary_mode
    cursor = state.accept(result)
    assert cursor is not None
    return cursor


def durations(model: Events, rows: list[int | None]) -> list[int]:
    table = model.table("kernels")
    return [int(table.value("duration", r)) for r in rows if r is not None]  # type: ignore[call-overload]


# -- which query runs -------------------------------------------------------------------------


def test_request_applies_the_window_only_while_it_filters() -> None:
    s = EventsState()
    assert s.set_window(100, 200) is False  # not filtering: no re-run due
    assert s.request(None).query.window is None
    s.toggle_window()
    assert s.window_only and s.request(None).query.window == (100, 200)
    assert s.set_window(300, 400) is True
    assert s.query.window is None  # the window is added per request, never stored
    s.clear()
    assert not s.window_only and s.request(None).query.window is None


def test_request_asks_for_a_summary_only_in_summary_mode() -> None:
    s = EventsState()
    assert s.request(None).summary_sort is None
    s.toggle_summary()
    assert s.request(None).summary_sort == ("total", True)


def test_a_stale_result_is_dropped(model: Events) -> None:
    s = EventsState()
    old = s.request(None)
    view = model.table("kernels").run(old.query)
    s.request(None)  # the user changed something meanwhile
    assert not s.is_current(old.gen)
    assert s.accept(Result(old.gen, view, None, None)) is None
    assert s.view is None


# -- the cursor across re-runs ----------------------------------------------------------------


def test_the_cursor_follows_its_row_across_a_sort(model: Events) -> None:
    s = EventsState()
    run(s, model)
    assert s.view is not None and len(s.view) > 10
    row = s.row_at(7)
    assert row is not None
    s.sort_by("duration", True)
    cursor = run(s, model, s.keep_at(7))
    assert s.row_at(cursor) == row
    ds = durations(model, [s.row_at(i) for i in range(len(s.view))])
    assert len(ds) == len(s.view) and ds == sorted(ds, reverse=True)


def test_a_row_the_filter_hides_puts_the_cursor_on_top(model: Events) -> None:
    s = EventsState()
    s.sort_by("duration", False)
    run(s, model)
    shortest = s.keep_at(0)
    assert isinstance(shortest, int)
    s.input_mode = MIN_DURATION
    q = s.edit(str(durations(model, [shortest])[0] + 1))
    assert q is not None
    s.set_query(q)
    assert run(s, model, shortest) == 0
    assert s.position_of(shortest) is None and s.shown_count() > 0


def test_the_summary_cursor_stays_on_its_name_across_a_resort(model: Events) -> None:
    s = EventsState()
    s.toggle_summary()
    run(s, model)
    assert s.showing_summary and s.shown_count() > 3
    name = s.name_at(2)
    s.sort_by("name", False)
    cursor = run(s, model, s.keep_at(2))
    assert s.name_at(cursor) == name
    assert s.row_at(cursor) is None  # no trace row under a summary cursor


def test_clamp_keeps_the_cursor_on_a_row() -> None:
    assert clamp(5, 3) == 2
    assert clamp(-4, 3) == 0
    assert clamp(1, 3) == 1
    assert clamp(9, 0) == 0  # no rows: the top


def test_positions_outside_the_rows_are_nothing(model: Events) -> None:
    s = EventsState()
    assert s.keep_at(0) is None  # nothing shown yet
    run(s, model)
    assert s.view is not None
    assert s.row_at(len(s.view)) is None and s.row_at(-1) is None
    assert s.name_at(0) is None  # events shown, not a summary


# -- sort ---------------------------------------------------------------------------------------


def test_sorts_are_per_kind_and_per_mode() -> None:
    s = EventsState()
    s.sort_by("duration", True)
    assert s.sort == ("duration", True)
    s.toggle_summary()
    assert s.sort == ("total", True)  # the summary keeps its own
    s.sort_by("count", False)
    assert s.summary_sort["kernels"] == ("count", False)
    s.toggle_summary()
    assert s.sort == ("duration", True)
    assert s.show_kind("memcpy") and not s.show_kind("memcpy")
    assert s.sort == ("start", False)  # another kind, its own query
    s.show_kind("kernels")
    assert s.sort == ("duration", True)


def test_next_sort_key_wraps_and_starts_from_the_sorted_column() -> None:
    s = EventsState()
    shown = ["start", "duration", "name"]
    assert s.next_sort_key(shown, 1) == "duration"
    assert s.next_sort_key(shown, -1) == "name"
    s.sort_by("name", False)
    assert s.next_sort_key(shown, 1) == "start"
    assert s.next_sort_key(["duration"], 1) == "duration"
    assert s.next_sort_key([], 1) is None
    s.sort_by("grid", False)  # a column that is not on screen: the first one next
    assert s.next_sort_key(shown, 1) == "start"


def test_numbers_sort_largest_first() -> None:
    fmts = {c.key: c.fmt for c in C.columns("kernels")}
    assert default_descending(fmts["duration"])
    assert not default_descending(fmts["name"])
    assert not default_descending(fmts["start"])
    assert not default_descending(None)


# -- filter -------------------------------------------------------------------------------------


def test_editing_the_filter_text() -> None:
    s = EventsState()
    assert s.edit("") is None  # unchanged: nothing to run
    q = s.edit("gemm")
    assert q == Query(kind="kernels", text="gemm")
    s.set_query(q)  # type: ignore[arg-type]
    assert s.input_value() == "gemm" and s.is_filtered
    assert not s.regex_input
    s.toggle_regex()
    assert s.query.regex and s.regex_input


def test_editing_the_minimum_duration() -> None:
    s = EventsState()
    s.input_mode = MIN_DURATION
    assert s.input_value() == ""
    q = s.edit("10us")
    assert q is not None and q.min_duration == 10_000
    s.set_query(q)
    assert s.input_value() == "10000ns"
    assert s.edit("10000") is None  # the same duration
    assert not s.regex_input  # ctrl+r only means something for names
    with pytest.raises(QueryError):
        s.edit("ten")


def test_clear_drops_filters_but_keeps_the_sort() -> None:
    s = EventsState()
    s.set_query(s.query.with_(text="!gemm", name="x", min_duration=5, sort="name"))
    s.toggle_window()
    s.clear()
    assert s.query == Query(kind="kernels", sort="name")
    assert not s.is_filtered


def test_filtered_rows_are_those_of_the_query(model: Events) -> None:
    s = EventsState()
    run(s, model)
    assert s.view is not None
    total = len(s.view)
    s.set_query(s.edit("!") or s.query)  # `!` alone filters nothing
    run(s, model)
    assert len(s.view) == total
    all_durations = model.table("kernels").column("duration").values
    cut = int(np.median(all_durations))
    s.input_mode = MIN_DURATION
    q = s.edit(f"{cut}ns")
    assert q is not None
    s.set_query(q)
    run(s, model)
    shown = durations(model, [s.row_at(i) for i in range(len(s.view))])
    want = int(np.sum(all_durations >= cut))
    assert 0 < want < total and len(shown) == want and min(shown) >= cut
    assert f"filter: ≥ {fmt.duration(cut)}, {want:,} / {total:,})" in s.title()


# -- summary ------------------------------------------------------------------------------------


def test_enter_on_a_summary_name_shows_its_events(model: Events) -> None:
    s = EventsState()
    s.toggle_summary()
    run(s, model)
    assert s.summary is not None
    name = s.name_at(0)
    count = int(s.summary.count[int(s.summary.order[0])])
    assert s.drill(0)
    assert not s.summary_mode and s.query.name == name
    run(s, model)
    assert not s.showing_summary and s.shown_count() == count
    assert not s.drill(0)  # not on a summary any more


def test_following_an_event_leaves_the_summary(model: Events) -> None:
    s = EventsState()
    assert s.show_events_of("kernels")  # nothing shown yet: run
    run(s, model)
    assert not s.show_events_of("kernels")  # shown already: just move the cursor
    s.toggle_summary()
    assert s.show_events_of("kernels") and not s.summary_mode
    assert s.show_events_of("memcpy") and s.kind == "memcpy"


def test_titles_and_sort_text(model: Events) -> None:
    s = EventsState()
    assert s.title() == "Events · Kernels"  # before the first result
    run(s, model)
    assert s.view is not None
    assert s.title() == f"Events · Kernels ({s.view.total:,})"
    assert s.sort_text() == "sort: Start (s) ▲"
    s.sort_by("duration", True)
    assert s.sort_text(ascii_only=True) == "sort: Duration v"
    s.toggle_summary()
    run(s, model)
    assert s.title().startswith(f"Summary · Kernels ({s.shown_count():,} names, ")
    assert s.sort_text() == "sort: Total ▼"
    assert s.next_kind(1) == "memcpy" and s.next_kind(-1) == C.KINDS[-1]


# -- data out -----------------------------------------------------------------------------------


def test_export_has_the_shown_columns_and_the_ncu_mark(model: Events) -> None:
    s = EventsState()
    s.set_query(s.query.with_(sort="duration", descending=True))
    run(s, model)
    assert s.view is not None
    mask = np.zeros(s.view.total, dtype=bool)
    mask[s.view.row(0)] = True
    table = s.export_table(["ncu", "name", "duration"], mask)
    assert table.column_names[0] == "ncu" and table.num_rows == len(s.view)
    assert table["ncu"].to_pylist()[:2] == [True, False]
    dur = table.column(2).to_pylist()
    assert dur == sorted(dur, reverse=True)
    assert "ncu" not in s.export_table(["ncu", "name"], None).column_names
    assert s.export_name("/x/run.v2.sqlite") == "run.kernels.csv"
    s.toggle_summary()
    run(s, model)
    summary = s.export_table(["name", "total", "count"])
    assert summary.num_rows == s.shown_count()
    assert s.export_name(None) == "report.kernels-summary.csv"


def test_row_text_is_the_raw_row(model: Events) -> None:
    s = EventsState()
    run(s, model)
    text = s.row_text(model, 0)
    assert text is not None
    row = s.row_at(0)
    assert str(durations(model, [row])[0]) in text.split("\t")
    assert s.row_text(model, 10**9) is None
    s.toggle_summary()
    run(s, model)
    text = s.row_text(model, 0)
    assert text is not None and s.name_at(0) in text.split("\t")
