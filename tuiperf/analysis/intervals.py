"""Busy/idle time over sets of intervals, by prefix sums (O(log n) per query)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Union:
    """The union of intervals [start, end) as sorted disjoint pieces with a prefix sum."""

    starts: np.ndarray
    ends: np.ndarray
    cum: np.ndarray  # cum[k] = busy time of pieces 0..k-1

    @classmethod
    def of(cls, starts: np.ndarray, ends: np.ndarray) -> Union:
        if len(starts) == 0:
            z = np.zeros(0, np.int64)
            return cls(z, z, np.zeros(1, np.int64))
        order = np.argsort(starts, kind="stable")
        s = starts[order].astype(np.int64)
        e = np.maximum.accumulate(ends[order].astype(np.int64))
        # a new piece begins where a start lies after every earlier end
        new = np.ones(len(s), bool)
        new[1:] = s[1:] > e[:-1]
        first = np.flatnonzero(new)
        last = np.append(first[1:] - 1, len(s) - 1)
        ps, pe = s[first], e[last]
        cum = np.concatenate([[0], np.cumsum(pe - ps)])
        return cls(ps, pe, cum)

    def busy_before(self, t: np.ndarray) -> np.ndarray:
        """Busy time in (-inf, t) for each t."""
        t = np.asarray(t, np.int64)
        k = np.searchsorted(self.starts, t, "right")  # pieces starting before or at t
        partial = np.zeros(len(t), np.int64)
        has = k > 0
        j = k[has] - 1
        partial[has] = np.minimum(t[has], self.ends[j]) - self.starts[j]
        return self.cum[np.maximum(k - 1, 0)] * (k > 0) + partial

    def busy(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Busy time inside [a, b) for each pair."""
        return np.maximum(self.busy_before(b) - self.busy_before(a), 0)

    def idle(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.maximum(np.asarray(b) - np.asarray(a), 0) - self.busy(a, b)

    def gaps(self) -> tuple[np.ndarray, np.ndarray]:
        """Idle stretches between pieces: (gap start, gap end)."""
        return self.ends[:-1], self.starts[1:]


def overlap_sum(starts: np.ndarray, ends: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ over intervals of |[s, e) ∩ [a, b)| for each window (overlaps add up, no union)."""
    s = np.sort(starts.astype(np.int64))
    e = np.sort(ends.astype(np.int64))
    cs = np.concatenate([[0], np.cumsum(s)])
    ce = np.concatenate([[0], np.cumsum(e)])

    def f(t: np.ndarray) -> np.ndarray:
        # Σ_i clamp(t - s_i, 0, e_i - s_i) = Σ_{s_i<t}(t - s_i) - Σ_{e_i<t}(t - e_i)
        ns = np.searchsorted(s, t, "left")
        ne = np.searchsorted(e, t, "left")
        return (ns * t - cs[ns]) - (ne * t - ce[ne])

    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    return f(b) - f(a)
