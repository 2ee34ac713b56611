"""Set operations on unions of intervals (idle ∩ data window, minus sync calls, …)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tuiperf.analysis.intervals import Union


def member(u: Union, t: np.ndarray) -> np.ndarray:
    """Whether each time t lies inside a piece of `u` (pieces are [start, end))."""
    if len(u.starts) == 0:
        return np.zeros(len(t), bool)
    k = np.searchsorted(u.starts, t, "right") - 1
    return (k >= 0) & (t < u.ends[np.maximum(k, 0)])


def combine(sets: list[Union], keep: Callable[..., np.ndarray]) -> Union:
    """The union of the elementary segments where `keep(in_set_0, in_set_1, …)` is true."""
    parts = [p for u in sets for p in (u.starts, u.ends)]
    points = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    if len(points) < 2:
        return Union.of(np.zeros(0, np.int64), np.zeros(0, np.int64))
    a, b = points[:-1], points[1:]
    mask = np.asarray(keep(*[member(u, a) for u in sets]), bool)
    return Union.of(a[mask], b[mask])


def complement(u: Union, lo: int, hi: int) -> Union:
    """[lo, hi) minus `u`."""
    s = np.concatenate([[lo], u.ends])
    e = np.concatenate([u.starts, [hi]])
    s, e = np.maximum(s, lo), np.minimum(e, hi)
    ok = e > s
    return Union.of(s[ok], e[ok])


def of_pairs(starts: np.ndarray, ends: np.ndarray) -> Union:
    """A union of intervals, dropping empty and reversed ones."""
    s, e = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    ok = e > s
    return Union.of(s[ok], e[ok])
