"""Oracle: the events table's time window (model.query) on hand-built events that the
window cuts through at both edges, on three devices, with marks (zero-length events) on
the edges. The expected rows are listed by hand; the random cases use a brute force
written here (an event is kept when it shares a nanosecond with [lo, hi), a mark when it
lies in [lo, hi))."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tests.support.tiny import Gpu, gpu_table, kernels_trace, trace_of
from tuiperf import schema
from tuiperf.model.timeline.query import Events, Query

LO, HI = 100, 200
#: (start, end, device, stream, name); the comment says whether [100, 200) keeps it
ROWS: list[Gpu] = [
    (50, 100, 0, 7, "a"),  # 0: ends where the window starts: out
    (50, 101, 0, 7, "b"),  # 1: straddles the start by 1 ns: in
    (90, 250, 1, 7, "a"),  # 2: covers the whole window: in
    (100, 100, 1, 8, "m"),  # 3: a mark on the start: in
    (120, 130, 2, 7, "a"),  # 4: inside: in
    (199, 300, 2, 8, "b"),  # 5: straddles the end by 1 ns: in
    (200, 210, 0, 7, "a"),  # 6: starts where the window ends: out
    (150, 150, 0, 8, "m"),  # 7: a mark inside: in
    (200, 200, 1, 8, "m"),  # 8: a mark on the end: out
    (10, 20, 2, 7, "a"),  # 9: before: out
    (99, 100, 2, 7, "b"),  # 10: ends on the start: out
]
#: kept, by start: 1 (50), 2 (90), 3 (100), 4 (120), 7 (150), 5 (199)
KEPT = [1, 2, 3, 4, 7, 5]


def _rows(events: Events, query: Query) -> list[int]:
    view = events.run(query)
    return [view.row(i) for i in range(len(view))]


def test_window_keeps_events_cut_at_both_edges() -> None:
    ev = Events(kernels_trace(ROWS))
    assert _rows(ev, Query(window=(LO, HI))) == KEPT


def test_window_per_name_summary_counts_the_cut_events() -> None:
    ev = Events(kernels_trace(ROWS))
    t = ev.table("kernels")
    s = t.summary(t.run(Query(window=(LO, HI))))
    count = dict(zip(s.names, s.count.tolist()))
    total = dict(zip(s.names, s.total.tolist()))
    # a: rows 2 (160 ns), 4 (10 ns); b: rows 1 (51 ns), 5 (101 ns); m: rows 3, 7 (0 ns)
    assert count == {"a": 2, "b": 2, "m": 2}
    assert total == {"a": 170, "b": 152, "m": 0}


def test_window_one_ns_wide_on_an_edge() -> None:
    ev = Events(kernels_trace(ROWS))
    # [100, 101): rows 1 (50-101), 2 (90-250), 3 (mark at 100)
    assert sorted(_rows(ev, Query(window=(100, 101)))) == [1, 2, 3]
    # [199, 200): rows 2 and 5; the mark at 200 is outside
    assert sorted(_rows(ev, Query(window=(199, 200)))) == [2, 5]


def test_window_with_duration_and_name_filters() -> None:
    ev = Events(kernels_trace(ROWS))
    # ≥ 51 ns inside the window: rows 1 (51), 2 (160), 5 (101)
    assert _rows(ev, Query(window=(LO, HI), min_duration=51)) == [1, 2, 5]
    assert _rows(ev, Query(window=(LO, HI), text="b")) == [1, 5]
    assert _rows(ev, Query(window=(LO, HI), text="!b")) == [2, 3, 4, 7]


def test_unended_nvtx_range_counts_as_a_mark_at_its_start() -> None:
    nvtx = schema.conform(
        "nvtx",
        {
            "start": pa.array([80, 120, 90, 200], pa.int64()),
            "end": pa.array([None, None, 110, None], pa.int64()),
            "text": pa.array(["open", "open", "closed", "open"]).dictionary_encode(),
        },
        4,
    )
    ev = Events(trace_of(nvtx=nvtx))
    # row 0 starts before the window with no end: out; 1 inside: in; 2 straddles: in;
    # 3 on the end: out
    assert sorted(_rows(ev, Query(kind="nvtx", window=(LO, HI)))) == [1, 2]


def _brute(rows: list[Gpu], lo: int, hi: int) -> list[int]:
    keep = []
    for i, (s, e, *_rest) in enumerate(rows):
        overlap = min(e, hi) - max(s, lo)
        if overlap > 0 or (s == e and lo <= s < hi):
            keep.append(i)
    return keep


@pytest.mark.parametrize("seed", range(5))
def test_random_windows_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 60
    start = rng.integers(0, 1000, n)
    dur = np.where(rng.random(n) < 0.2, 0, rng.integers(1, 200, n))
    rows: list[Gpu] = [
        (int(s), int(s + d), int(rng.integers(0, 3)), int(rng.integers(0, 2)), f"k{i % 4}")
        for i, (s, d) in enumerate(zip(start, dur))
    ]
    for table in ("kernels", "memcpy"):
        ev = Events(trace_of(**{table: gpu_table(table, rows)}))
        # windows on event edges (cutting others), and windows between them
        edges = sorted({r[0] for r in rows} | {r[1] for r in rows})
        for _ in range(30):
            lo = int(rng.choice(edges)) + int(rng.integers(-1, 2))
            hi = lo + int(rng.integers(1, 300))
            got = sorted(_rows(ev, Query(kind=table, window=(lo, hi))))
            assert got == _brute(rows, lo, hi), (table, lo, hi)
