"""The diff view's state (`tuiperf.tui.viewstate.diff`), without a terminal: real pairs
of tests/data/budget."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from tests.support.data import unxz
from tuiperf.analysis.diff.compare import FASTER, UNKNOWN
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.lanes import LaneSet, build_lanes
from tuiperf.model.timeline.viewport import Viewport
from tuiperf.model.trace import Trace
from tuiperf.tui.viewstate.diff import SECTIONS, DiffView, by_change, lanes_to_show

BUDGET = Path(__file__).resolve().parent.parent / "data" / "budget"


@functools.cache
def loaded(name: str) -> tuple[Trace, LaneSet]:
    t = open_trace(unxz(BUDGET / f"{name}.sqlite.xz"), OpenOptions(use_cache=False))
    return t, build_lanes(t)


def view(before: str, after: str) -> DiffView:
    (tb, lb), (ta, la) = loaded(before), loaded(after)
    return DiffView.of(tb, ta, (before, after), [lb, la])


def test_the_shown_steps_are_typical_and_share_one_scale() -> None:
    v = view("cpu_bound", "cpu_bound_fixed")
    assert v.diff.verdict == FASTER and v.lanes is not None
    for which, side in enumerate((v.diff.before, v.diff.after)):
        step = v.step(which)
        assert step is not None and step.count == side.n_steps
        # no steady step is nearer the median
        gap = abs(step.wall_ns - side.median_ns)
        assert all(gap <= abs(w - side.median_ns) for w in side.steps_ns)
    vps = [v.viewport(w, v.lanes[w], 100) for w in (0, 1)]
    assert vps[0].span == pytest.approx(vps[1].span) == pytest.approx(v.span_ns())
    steps = [v.step(0), v.step(1)]
    cols = [vp.col_of(s.start_ns) for vp, s in zip(vps, steps, strict=True) if s]
    assert len(cols) == 2 and cols[0] == cols[1] and 0 <= cols[0] < 5  # after a margin


def test_steps_stop_at_both_ends() -> None:
    v = view("data_bound", "data_bound_fixed")
    while v.move_step(1):
        pass
    last = [v.step(0), v.step(1)]
    assert all(s is not None and s.index == s.count - 1 for s in last)
    assert not v.move_step(1)
    while v.move_step(-1):
        pass
    assert all(s is not None and s.index == 0 for s in (v.step(0), v.step(1)))


def test_swap_compares_the_other_way_and_swaps_the_lanes() -> None:
    v = view("data_bound", "data_bound_fixed")
    assert v.lanes is not None
    lanes, before = list(v.lanes), v.diff
    v.swap()
    assert v.lanes == lanes[::-1] and v.traces[0] is loaded("data_bound_fixed")[0]
    assert v.diff.change_ns == -before.change_ns
    assert v.diff.reasons[0][0] == before.reasons[0][0] == "data"
    assert v.title(0).startswith("baseline: data_bound_fixed ·")


def test_tables_are_sorted_by_change_and_columns_fit() -> None:
    v = view("data_bound", "data_bound_fixed")
    for _ in SECTIONS:
        rows = v.rows()
        assert rows == by_change(rows)
        changes = [abs(r.change) for r in rows]
        assert changes == sorted(changes, reverse=True)
        v.cycle_section(1)
    assert v.section_key == SECTIONS[0][0]
    wide = [c.key for c in v.columns(120)]
    narrow = [c.key for c in v.columns(60)]
    assert "pct" in wide and "pct" not in narrow and "name" in narrow
    assert sum(c.width + 1 for c in v.columns(60)) + 20 <= 60
    cells = v.cells(0, wide)
    assert cells[wide.index("change")].startswith(("-", "+"))


def test_lanes_to_show_put_kernels_first_and_skip_idle_lanes() -> None:
    v = view("data_bound", "data_bound_fixed")
    assert v.lanes is not None
    lanes = v.lanes[0]
    vp = v.viewport(0, lanes, 80)
    shown = lanes_to_show(lanes, vp.start, vp.end)
    assert lanes.lanes[shown[0]].kind == "kernel"
    assert all(lanes.lanes[i].iv.count_in(int(vp.start), int(vp.end)) for i in shown)
    assert len(shown) < len(lanes.lanes)


def test_a_report_without_steps_shows_all_of_it(tmp_path: Path) -> None:
    cpu = tmp_path / "cpu_only.json"
    event = {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1}
    cpu.write_text(json.dumps({"traceEvents": [{**event, "ts": 1.0, "dur": 2.0}]}))
    t = open_trace(cpu, OpenOptions(use_cache=False))
    lanes = build_lanes(t)
    tb, lb = loaded("cpu_bound")
    v = DiffView.of(t, tb, ("cpu_only", "cpu_bound"), [lanes, lb])
    assert v.diff.verdict == UNKNOWN and v.step(0) is None
    assert v.viewport(0, lanes, 80) == Viewport.fit(lanes.lo, lanes.hi, 80)
    assert "no steady steps" in v.title(0)
    assert v.step(1) is not None and v.move_step(1)


def test_each_event_is_counted_in_one_row_at_most() -> None:
    """The events a row marks: the names that row counts, no two rows sharing one."""
    v = view("cpu_bound", "cpu_bound_fixed")
    for key in ("kernels", "copies", "api"):
        while v.section_key != key:
            v.cycle_section(1)
        for which, side in enumerate((v.diff.before, v.diff.after)):
            seen: dict[str, set[int]] = {}
            for pos, r in enumerate(v.rows()):
                found = v.events_of(pos, which)
                assert found is not None
                table, rows = found
                mine = set(rows.tolist())
                assert not mine & seen.setdefault(table, set()), (key, r.name)
                seen[table] |= mine
                present = r.before if which == 0 else r.after
                if present is not None:  # counted inside the steady steps: all of them here
                    count = r.before_count if which == 0 else r.after_count
                    assert count is not None and len(mine) >= count * side.n_steps - 1e-6
    v.cycle_section(1)  # budget parts: no events of their own
    assert v.section_key == "budget" and v.events_of(0, 0) is None
