"""Interval maths the rules stand on, checked against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tuiperf.analysis.intervals import Union, overlap_sum
from tuiperf.model.arrays import join_keys, like

spans = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 50)), min_size=0, max_size=30)


def _arrays(xs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    s = np.array([a for a, _ in xs], np.int64)
    return s, s + np.array([d for _, d in xs], np.int64)


@settings(max_examples=200, deadline=None)
@given(spans, st.integers(0, 260), st.integers(0, 260))
def test_union_busy_matches_brute_force(xs: list[tuple[int, int]], a: int, b: int) -> None:
    s, e = _arrays(xs)
    a, b = min(a, b), max(a, b)
    covered = np.zeros(300, bool)
    for lo, hi in zip(s, e, strict=True):
        covered[lo:hi] = True
    assert Union.of(s, e).busy(np.array([a]), np.array([b]))[0] == covered[a:b].sum()


@settings(max_examples=200, deadline=None)
@given(spans, st.integers(0, 260), st.integers(0, 260))
def test_overlap_sum_counts_overlaps_twice(xs: list[tuple[int, int]], a: int, b: int) -> None:
    s, e = _arrays(xs)
    a, b = min(a, b), max(a, b)
    want = sum(max(0, min(hi, b) - max(lo, a)) for lo, hi in zip(s, e, strict=True))
    assert overlap_sum(s, e, np.array([a]), np.array([b]))[0] == want


def test_join_keys_keeps_duplicates() -> None:
    li, rj = join_keys(np.array([1, 2, 3]), np.array([3, 1, 1, 9]))
    assert sorted(zip(li.tolist(), rj.tolist(), strict=True)) == [(0, 1), (0, 2), (2, 0)]


def test_like_is_sql_like() -> None:
    p = like("cudaMemcpy%Async%")
    assert p.match("cudaMemcpyAsync_v3020") and p.match("CUDAMEMCPY2DASYNC")
    assert not p.match("cudaMemcpy_v3020") and not p.match("xcudaMemcpyAsync")
