"""Set operations on unions of intervals (idle ∩ data window, minus sync calls, …)."""

from __future__ import annotations

import numpy as np

from tuiperf.analysis.intervals import Union


def member(u: Union, t: np.ndarray) -> np.ndarray:
    """Whether each time t lies inside a piece of `u` (pieces are [start, end))."""
    if len(u.starts) == 0:
        return np.zeros(len(t), bool)
    k = np.searchsorted(u.starts, t, "right") - 1
    return (k >= 0) & (t < u.ends[np.maximum(k, 0)])


def segments(sets: list[Union]) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The elementary segments [a, b) between all the sets' boundaries, and for each set
    whether each segment lies inside it."""
    parts = [p for u in sets for p in (u.starts, u.ends)]
    points = np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    if len(points):  # distinct values (a sort beats np.unique's hashing on big arrays)
        points = points[np.concatenate([[True], points[1:] != points[:-1]])]
    a, b = points[:-1], points[1:]
    return a, b, [member(u, a) for u in sets]


def pieces(a: np.ndarray, b: np.ndarray, keep: np.ndarray) -> Union:
    """The union of the segments [a, b) that `keep` marks."""
    return Union.of(a[keep], b[keep])


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
