"""The timeline's state without Textual: zoom and pan with the cursors, lanes and groups,
selection, marked ranges, over the lanes of a real report."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.lanes import LaneSet, build_lanes
from tuiperf.model.timeline.viewport import STEP_FRACTION, ZOOM_FACTOR
from tuiperf.model.trace import Trace
from tuiperf.tui.viewstate.timeline import Row, TimelineState

COLUMNS = 120
PAGE = 6


@pytest.fixture(scope="module")
def data(nsys_dir: Path) -> tuple[Trace, LaneSet]:
    trace = open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))
    return trace, build_lanes(trace)


@pytest.fixture
def st(data: tuple[Trace, LaneSet]) -> TimelineState:
    s = TimelineState()
    s.set_data(*data, COLUMNS)
    return s


def busiest_lane(s: TimelineState) -> int:
    assert s.lanes is not None
    return max(range(len(s.lanes.lanes)), key=lambda li: len(s.lanes.lanes[li].iv))  # type: ignore[union-attr]


# -- data ---------------------------------------------------------------------------------------


def test_a_new_timeline_shows_everything_with_the_cursor_on_the_first_lane(st: TimelineState):
    assert st.lanes is not None
    assert (st.vp.start, st.vp.end) == (st.lanes.lo, st.lanes.hi) and st.vp.columns == COLUMNS
    assert st.cursor_t == (st.lanes.lo + st.lanes.hi) / 2
    assert st.rows[0] == Row(0, None) and st.row_cursor == 1 and st.current_lane is not None
    lanes = sum(len(g.lanes) for g in st.lanes.groups)
    assert len(st.rows) == lanes + len(st.lanes.groups)
    assert st.can("zoom_back") is None and st.can("fit_selection") is None
    assert TimelineState().can("zoom_in") is None  # no data yet
    assert TimelineState().can("help") is True


def test_resizing_keeps_the_whole_trace_whole(st: TimelineState):
    assert not st.resize(COLUMNS)
    assert st.resize(80) and st.vp.is_full and st.vp.columns == 80


# -- zoom and pan -------------------------------------------------------------------------------


def test_a_burst_of_zooms_is_one_step_back(st: TimelineState):
    full = (st.vp.start, st.vp.end)
    col = st.vp.col_of(st.cursor_t)
    for _ in range(3):
        st.zoom_by(True)
    assert st.vp.span == pytest.approx((full[1] - full[0]) / ZOOM_FACTOR**3)
    assert abs(st.vp.col_of(st.cursor_t) - col) <= 1  # zoomed about the cursor
    assert len(st.zooms) == 1 and st.can("zoom_back")
    st.pan(1)  # ends the burst
    st.zoom_by(True)
    assert len(st.zooms) == 2
    assert st.zoom_back() and st.zoom_back()
    assert (st.vp.start, st.vp.end) == pytest.approx(full)
    assert not st.zoom_back()


def test_zoom_anchors_on_the_middle_when_the_cursor_is_off_screen(st: TimelineState):
    st.zoom_by(True)
    st.zoom_by(True)
    st.cursor_t = st.vp.end + st.vp.span  # off to the right
    mid = (st.vp.start + st.vp.end) / 2
    assert st.anchor() == mid
    st.zoom_by(True)
    assert (st.vp.start + st.vp.end) / 2 == pytest.approx(mid)


def test_panning_keeps_the_cursor_on_its_column_and_stops_at_the_edges(st: TimelineState):
    for _ in range(6):
        st.zoom_by(True)
    col = st.vp.col_of(st.cursor_t)
    start = st.vp.start
    st.pan(1)
    assert st.vp.start == pytest.approx(start + STEP_FRACTION * st.vp.span)
    assert st.vp.col_of(st.cursor_t) == col and not st.zooming
    st.go_edge(-1)
    assert st.vp.start == st.vp.lo
    st.page(-1)
    assert st.vp.start == st.vp.lo  # clamped
    st.go_edge(1)
    assert st.vp.end == st.vp.hi
    before = st.vp.start
    st.drag(-10)  # dragging the time to the left shows later times, none here
    assert st.vp.start == before
    st.drag(10)
    assert st.vp.start == pytest.approx(before - 10 * st.vp.ns_per_col)


def test_fit_all_goes_back_to_the_whole_trace(st: TimelineState):
    st.zoom_by(True)
    assert st.fit_all(COLUMNS)
    assert st.vp.is_full and len(st.zooms) == 2
    assert not TimelineState().fit_all(COLUMNS)


def test_time_at_a_column(st: TimelineState):
    assert st.time_at(-1) is None and st.time_at(COLUMNS) is None
    t = st.time_at(3)
    assert t is not None and st.vp.col_of(t) == 3


# -- lanes and groups ---------------------------------------------------------------------------


def test_the_lane_cursor_is_clamped_and_kept_on_screen(st: TimelineState):
    assert st.move_lane(-100, PAGE) and st.row_cursor == 0 and st.top == 0
    st.move_lane(10**6, PAGE)
    assert st.row_cursor == len(st.rows) - 1
    assert st.top <= st.row_cursor < st.top + PAGE
    assert st.top == max(len(st.rows) - PAGE, 0)
    st.move_lane(-(PAGE + 1), PAGE)
    assert st.top == st.row_cursor  # scrolled up to it
    assert st.row_at(1) == st.top and st.row_at(0) is None  # line 0 is the ruler
    assert st.row_at(len(st.rows) + 1) is None
    assert not TimelineState().move_lane(1, PAGE)


def test_folding_a_group_hides_its_lanes(st: TimelineState):
    assert st.lanes is not None
    group = st.current.group  # type: ignore[union-attr]
    n = len(st.lanes.groups[group].lanes)
    before = len(st.rows)
    assert st.toggle_group(PAGE)
    assert len(st.rows) == before - n and st.current == Row(group, None)
    assert group in st.collapsed and st.lane_label() == ""
    st.toggle_group(PAGE)
    assert len(st.rows) == before and group not in st.collapsed


# -- selection ----------------------------------------------------------------------------------


def test_selecting_an_event_unfolds_its_group_and_brings_it_into_view(st: TimelineState):
    assert st.lanes is not None and st.trace is not None
    li = busiest_lane(st)
    lane = st.lanes.lanes[li]
    group = next(gi for gi, g in enumerate(st.lanes.groups) if li in g.lanes)
    st.collapsed.add(group)
    st.rebuild_rows()
    for _ in range(12):
        st.zoom_by(True)
    pos = len(lane.iv) - 1  # the last event: out of view after zooming about the middle
    table, row = st.event_of(li, pos)
    assert st.select(table, row, PAGE)
    sel = st.selection
    assert sel is not None and (sel.lane, sel.pos) == (li, pos)
    assert st.current_lane == li and group not in st.collapsed
    assert st.top <= st.row_cursor < st.top + PAGE
    assert st.vp.start <= sel.start < st.vp.end and st.cursor_t == sel.start
    assert st.selected_under_cursor(li) and st.event_at(li, st.cursor_t) is not None
    c0, c1 = st.span(sel, li)  # type: ignore[misc]
    assert c1 > c0 and st.vp.col_of(sel.start) == c0
    assert st.span(sel, li + 1) is None
    assert st.can("fit_selection")
    assert not st.select("kernels", 10**9, PAGE)  # no such event: nothing changes
    assert st.selection == sel


def test_stepping_from_the_selection_and_from_the_cursor(st: TimelineState):
    assert st.lanes is not None
    li = busiest_lane(st)
    st.goto_lane(li, PAGE)
    iv = st.lanes.lanes[li].iv
    st.cursor_t = float(iv.starts[0]) - 1
    assert st.step_event(1) == (li, 0)  # the first event after the cursor
    assert st.step_event(-1) is None
    st.select(*st.event_of(li, 0), PAGE)
    assert st.step_event(1) == (li, 1)
    assert st.step_event(-1) is None  # before the first one: nothing
    st.select(*st.event_of(li, len(iv) - 1), PAGE)
    assert st.step_event(1) is None
    st.clear_selection()
    assert st.selection is None and st.partner is None


def test_fit_selection_zooms_onto_the_event(st: TimelineState):
    li = busiest_lane(st)
    st.select(*st.event_of(li, 0), PAGE)
    sel = st.selection
    assert sel is not None and st.fit_selection()
    assert st.vp.start <= sel.start and sel.end <= st.vp.end
    assert st.vp.span < (st.vp.hi - st.vp.lo) / 10


# -- marks --------------------------------------------------------------------------------------


def test_marking_a_range_and_zooming_onto_it(st: TimelineState):
    assert st.marked_columns() is None and st.marked_range is None
    lo = st.vp.time_of(30)
    hi = st.vp.time_of(60)
    st.cursor_t = hi
    st.set_mark(0)
    marked = st.marked_columns()
    assert marked is not None and marked.sum() == 1  # the start alone: one column
    st.cursor_t = lo
    st.set_mark(1)  # marked backwards: still [lo, hi]
    assert st.marked_range == (lo, hi)
    marked = st.marked_columns()
    assert marked is not None and 30 <= marked.sum() <= 31
    assert st.can("fit_selection")
    assert st.zoom_to_marks()
    assert (st.vp.start, st.vp.end) == pytest.approx((lo, hi))
    assert st.mark == [None, None] and not st.zoom_to_marks()
    assert st.zoom_back() and st.vp.is_full


def test_clearing_marks(st: TimelineState):
    assert not st.clear_marks()
    st.set_mark(0)
    st.set_mark(1)
    assert st.marked_range is None  # both at the same time: empty, nothing to zoom to
    assert st.clear_marks() and st.mark == [None, None]


def test_start_and_end_move_the_selection_too(st: TimelineState):
    """`g`/`G` used to move the view only: `.` then went on from the old selection."""
    first = st.go_edge(-1)
    assert first is not None
    lane, pos = first
    assert pos == 0 and st.cursor_t == st.vp.lo
    st.select(*st.event_of(lane, pos), page=20)
    assert st.step_event(1) == (lane, 1)  # the next one after the first, not after the old
    last = st.go_edge(1)
    assert last == (lane, len(st.lanes.lanes[lane].iv) - 1) and st.cursor_t == st.vp.hi
    st.select(*st.event_of(*last), page=20)
    assert st.step_event(-1) == (lane, last[1] - 1)
