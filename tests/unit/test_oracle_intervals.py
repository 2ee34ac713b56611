"""Oracle: interval unions (analysis.intervals) and their set operations
(analysis.interval_sets) against a brute force over a nanosecond grid: every set is a bool
per ns, so union, membership, complement and elementary segments are numpy one-liners."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tiny import busy_grid
from tuiperf.analysis import interval_sets as S
from tuiperf.analysis.intervals import Union, overlap_sum

GRID = 300
spans = st.lists(st.tuples(st.integers(0, 250), st.integers(0, 40)), min_size=0, max_size=25)


def _union(xs: list[tuple[int, int]]) -> tuple[Union, np.ndarray]:
    s = np.array([a for a, _ in xs], np.int64)
    e = s + np.array([d for _, d in xs], np.int64)
    return Union.of(s, e), busy_grid(list(zip(s.tolist(), e.tolist())), 0, GRID)


def _grid_of(u: Union) -> np.ndarray:
    return busy_grid(list(zip(u.starts.tolist(), u.ends.tolist())), 0, GRID)


@settings(max_examples=150, deadline=None)
@given(spans)
def test_pieces_are_sorted_disjoint_and_cover_the_grid(xs: list[tuple[int, int]]) -> None:
    u, grid = _union(xs)
    assert (_grid_of(u) == grid).all()
    assert (u.ends >= u.starts).all() and (u.starts[1:] > u.ends[:-1]).all()  # touching: merged
    assert u.cum.tolist() == [0, *np.cumsum(u.ends - u.starts).tolist()]


@settings(max_examples=150, deadline=None)
@given(spans, st.lists(st.integers(-5, GRID + 5), min_size=1, max_size=8))
def test_busy_before_idle_and_member(xs: list[tuple[int, int]], ts: list[int]) -> None:
    u, grid = _union(xs)
    t = np.array(ts, np.int64)
    before = [int(grid[: max(min(x, GRID), 0)].sum()) for x in ts]
    assert u.busy_before(t).tolist() == before
    inside = [0 <= x < GRID and bool(grid[x]) for x in ts]
    assert S.member(u, t).tolist() == inside
    a, b = np.minimum(t, t[::-1]), np.maximum(t, t[::-1])
    busy = [int(grid[max(x, 0) : max(min(y, GRID), 0)].sum()) for x, y in zip(a, b)]
    assert u.busy(a, b).tolist() == busy
    assert u.idle(a, b).tolist() == [int(y - x) - k for x, y, k in zip(a, b, busy)]


@settings(max_examples=150, deadline=None)
@given(spans, st.integers(0, GRID), st.integers(0, GRID))
def test_complement_in_a_window(xs: list[tuple[int, int]], lo: int, hi: int) -> None:
    u, grid = _union(xs)
    lo, hi = min(lo, hi), max(lo, hi)
    want = np.zeros(GRID, bool)
    want[lo:hi] = ~grid[lo:hi]
    assert (_grid_of(S.complement(u, lo, hi)) == want).all()


@settings(max_examples=150, deadline=None)
@given(spans, spans)
def test_segments_mark_each_set(xs: list[tuple[int, int]], ys: list[tuple[int, int]]) -> None:
    (u, gu), (v, gv) = _union(xs), _union(ys)
    a, b, (in_u, in_v) = S.segments([u, v])
    assert (a < b).all() and (a[1:] == b[:-1]).all()  # consecutive, no gap, no repeat
    edges = sorted({*u.starts.tolist(), *u.ends.tolist(), *v.starts.tolist(), *v.ends.tolist()})
    assert a.tolist() == edges[:-1] and b.tolist() == edges[1:]
    assert in_u.tolist() == [bool(gu[x]) for x in a] and in_v.tolist() == [bool(gv[x]) for x in a]
    both = S.pieces(a, b, in_u & in_v)  # the intersection, and the union minus v
    assert (_grid_of(both) == (gu & gv)).all()
    assert (_grid_of(S.pieces(a, b, in_u & ~in_v)) == (gu & ~gv)).all()


def test_by_hand() -> None:
    # [10, 20) ∪ [15, 30) ∪ [30, 35) ∪ [40, 41): pieces [10, 35) and [40, 41)
    u = Union.of(np.array([15, 10, 40, 30]), np.array([30, 20, 41, 35]))
    assert (u.starts.tolist(), u.ends.tolist(), u.cum.tolist()) == ([10, 40], [35, 41], [0, 25, 26])
    assert u.busy(np.array([0, 34, 35, 20]), np.array([100, 41, 40, 40])).tolist() == [26, 2, 0, 15]
    assert [g.tolist() for g in u.gaps()] == [[35], [40]]
    c = S.complement(u, 12, 45)  # [35, 40) and [41, 45)
    assert (c.starts.tolist(), c.ends.tolist()) == ([35, 41], [40, 45])
    p = S.of_pairs(np.array([5, 9, 20]), np.array([5, 3, 25]))  # empty and reversed dropped
    assert (p.starts.tolist(), p.ends.tolist()) == ([20], [25])


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single(n: int) -> None:
    u = Union.of(np.arange(n, dtype=np.int64) * 10, np.arange(n, dtype=np.int64) * 10 + 5)
    assert u.busy(np.array([0]), np.array([100])).tolist() == [5 * n]
    assert S.member(u, np.array([0, 4, 5])).tolist() == [n == 1, n == 1, False]
    assert S.segments([])[0].tolist() == []


def test_results_are_exact_integer_ns() -> None:
    """Busy times stay int64 (a float would round past 2**53 ns), empty inputs too."""
    s, e = np.array([0, 10], np.int64), np.array([5, 20], np.int64)
    a, b = np.array([1, 2]), np.array([15, 30])
    for u in (Union.of(s, e), Union.of(s[:0], e[:0])):
        assert u.cum.dtype == np.int64
        assert u.busy_before(np.array([3])).dtype == np.int64
    assert overlap_sum(s, e, a, b).dtype == np.int64
    assert overlap_sum(s, e, a, b).tolist() == [4 + 5, 3 + 10]
    assert S.segments([])[0].dtype == np.int64


def test_gaps_between_three_pieces() -> None:
    u = Union.of(np.array([0, 10, 20]), np.array([5, 15, 25]))
    assert [g.tolist() for g in u.gaps()] == [[5, 15], [10, 20]]


def test_complement_touching_the_window_edges_has_no_empty_piece() -> None:
    u = Union.of(np.array([10, 20]), np.array([15, 30]))
    c = S.complement(u, 10, 30)  # only [15, 20): no [10, 10) nor [30, 30)
    assert (c.starts.tolist(), c.ends.tolist()) == ([15], [20])
