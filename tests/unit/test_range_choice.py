"""Which range `R` is about (tui/viewstate/range.py), by hand: the marks when both ends are
marked and differ (outward to whole ns), else the selected event, else the visible window."""

from __future__ import annotations

from tests.support.tiny import kernels_trace
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.tui.viewstate.range import choose_range
from tuiperf.tui.viewstate.timeline import Selection, TimelineState


def _state() -> TimelineState:
    trace = kernels_trace([(100, 200, 0, 7, "a"), (300, 1000, 0, 7, "b")])
    s = TimelineState()
    s.set_data(trace, build_lanes(trace), 90)
    return s


def test_nothing_loaded_is_no_range() -> None:
    assert choose_range(TimelineState()) is None


def test_the_visible_window_without_marks_or_selection() -> None:
    s = _state()
    c = choose_range(s)
    assert c is not None and c.source == "visible window"
    assert (c.lo, c.hi) == (int(s.vp.start // 1), -int(-s.vp.end // 1))


def test_the_selection_when_no_range_is_marked() -> None:
    s = _state()
    s.selection = Selection("kernels", 1, None, None, 300, 1000)
    c = choose_range(s)
    assert c is not None and (c.lo, c.hi, c.source) == (300, 1000, "selected kernel b")
    s.mark = [500.0, None]  # one end only: still the selection
    assert choose_range(s) == c


def test_marks_win_and_round_outward() -> None:
    s = _state()
    s.selection = Selection("kernels", 1, None, None, 300, 1000)
    s.mark = [700.6, 250.2]  # marked end first
    c = choose_range(s)
    assert c is not None and (c.lo, c.hi, c.source) == (250, 701, "marked range")
    s.mark = [400.0, 400.0]  # an empty range is none
    c = choose_range(s)
    assert c is not None and c.source == "selected kernel b"
