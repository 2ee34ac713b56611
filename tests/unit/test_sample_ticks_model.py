"""The CPU samples lane's levels and names (model/timeline/sample_lane.py) on hand-built
samples, at the decision boundaries: a column of 8 sampling periods shows density, one
nanosecond narrower shows ticks; a share of exactly a third is level 1, one sample more
level 2; a Python sample within `near` wins over a nearer native one, one beyond it does not."""

from __future__ import annotations

import numpy as np

from tuiperf.model.timeline.sample_lane import TICK, Named, SampleTicks

P = 1000  # the sampling period (ns)


def _ticks(times: list[int], py: list[int] | None = None) -> SampleTicks:
    t = np.array(times, np.int64)
    native = Named(t, np.zeros(len(t), np.int64), ["native_fn"])
    pt = np.array(py or [], np.int64)
    python = Named(pt, np.zeros(len(pt), np.int64), ["make_tokens (slow.py:35)"])
    return SampleTicks(1, 1, t, float(P), native, python)


def test_ticks_below_eight_periods_a_column_density_from_there() -> None:
    s = _ticks([0, 10, 8 * P + 5])
    narrow = np.array([0, 8 * P - 1, 2 * (8 * P - 1)], np.int64)  # 7999 ns a column
    assert s.levels(narrow).tolist() == [TICK, TICK]
    wide = np.array([0, 8 * P, 16 * P], np.int64)  # 8000 ns: 2 samples = 1/4 -> 1
    assert s.levels(wide).tolist() == [1, 1]


def test_density_in_thirds_rounded_up() -> None:
    width = 9 * P
    third = _ticks([k * 10 for k in range(3)])  # 3 x 1000 / 9000 = 1/3 exactly
    edges = np.array([0, width], np.int64)
    assert third.levels(edges).tolist() == [1]
    assert _ticks([k * 10 for k in range(4)]).levels(edges).tolist() == [2]
    assert _ticks([k * 10 for k in range(7)]).levels(edges).tolist() == [3]  # 7/9
    assert _ticks([k * 10 for k in range(30)]).levels(edges).tolist() == [3]  # capped
    assert _ticks([width]).levels(edges).tolist() == [0]  # [start, end): not in it


def test_python_first_within_near_else_native() -> None:
    s = _ticks([1000], py=[1500])
    assert s.name_at(1000, near=500) == "make_tokens (slow.py:35)"  # 500 away: within
    assert s.name_at(999, near=500) == "native_fn"  # 501 away: the native one
    assert s.name_at(3000, near=500) is None
    assert _ticks([]).name_at(0, near=1e9) is None
