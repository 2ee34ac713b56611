"""One lane's events as sorted arrays (`Intervals`), and a window's events as column spans
(`Boxes`): what `lanes` builds for every lane and `lane_cache` restores from the cache entry.

Below both (lanes imports lane_cache to keep its index), so neither imports the other for
the class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tuiperf.model.scratch import Alloc


@dataclass(frozen=True)
class Boxes:
    """The events of a window, as column spans (for drawing them one by one)."""

    first: int  # position in the lane of the first event
    c0: np.ndarray  # first column of each event (clipped to the window)
    c1: np.ndarray  # one past its last column (>= c0 + 1)


class Intervals:
    """Sorted [start, end) intervals of one lane, with `rows` into the source table."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray) -> None:
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.maximum(np.ascontiguousarray(ends, dtype=np.int64), starts)
        self._index(starts, ends, np.ascontiguousarray(rows))

    @classmethod
    def owned(
        cls, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray, alloc: Alloc = np.empty
    ) -> Intervals:
        """Intervals over arrays the caller gives away: int64, contiguous, writable, every
        end at or after its start (lane_split builds them so). Nothing is copied unless the
        starts need sorting; the busy sums (and an overlapping lane's running maxima) go
        into arrays from `alloc` (a cache entry's scratch files for a big table)."""
        self = cls.__new__(cls)
        self._index(starts, ends, rows, alloc)
        return self

    def _index(
        self, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray, alloc: Alloc = np.empty
    ) -> None:
        if len(starts) > 1 and np.any(starts[1:] < starts[:-1]):
            order = np.argsort(starts, kind="stable")
            starts, ends, rows = starts[order], ends[order], rows[order]
        self.starts = starts
        self.ends = ends
        self.rows = rows
        disjoint = len(starts) < 2 or bool(np.all(ends[:-1] <= starts[1:]))
        if disjoint:  # the common case (a stream, a thread's API calls): share the arrays
            self.max_end = ends
            self.u_start, self.u_end = starts, ends
        else:
            self.max_end = np.maximum.accumulate(ends, out=alloc(len(ends), ends.dtype))
            self.u_start, self.u_end = _union(starts, self.max_end)
        #: busy ns up to the end of each union interval: running sums, inclusive (the
        #: lane index in the cache stores them so, restored without a copy)
        busy = np.subtract(self.u_end, self.u_start, out=alloc(len(self.u_end), np.int64))
        self.cum_busy = np.cumsum(busy, out=busy)

    @classmethod
    def restored(cls, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray,
                 max_end: np.ndarray, u_start: np.ndarray, u_end: np.ndarray,
                 cum_busy: np.ndarray) -> Intervals:  # fmt: skip
        """Intervals from arrays computed earlier (the cache's lane index), as they are:
        memory-mapped views, no copy (a copy would read every page of a 20M-event lane)."""
        self = cls.__new__(cls)
        self.starts, self.ends, self.rows, self.max_end = starts, ends, rows, max_end
        self.u_start, self.u_end, self.cum_busy = u_start, u_end, cum_busy
        return self

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def busy_total(self) -> int:
        return int(self.cum_busy[-1]) if len(self.cum_busy) else 0

    def busy_before(self, t: np.ndarray) -> np.ndarray:
        """Busy ns in (-inf, t) for each t (int64 array)."""
        if len(self.u_start) == 0:
            return np.zeros(len(t), dtype=np.int64)
        j = np.searchsorted(self.u_start, t, side="right") - 1
        jj = np.maximum(j, 0)
        length = self.u_end[jj] - self.u_start[jj]
        part = np.clip(t - self.u_start[jj], 0, length)
        return np.where(j >= 0, self.cum_busy[jj] - length + part, 0)

    def busy(self, edges: np.ndarray) -> np.ndarray:
        """Fraction of each column [edges[i], edges[i+1]) covered by some event."""
        b = self.busy_before(edges)
        width = np.diff(edges).astype(np.float64)
        return np.diff(b) / np.maximum(width, 1.0)

    def starts_in(self, edges: np.ndarray) -> np.ndarray:
        """How many events start in each column."""
        return np.diff(np.searchsorted(self.starts, edges, side="left"))

    def window(self, t0: int, t1: int) -> tuple[int, int]:
        """Positions [i0, i1) of the events that may overlap [t0, t1)."""
        i0 = int(np.searchsorted(self.max_end, t0, side="right"))
        i1 = int(np.searchsorted(self.starts, t1, side="left"))
        return i0, max(i0, i1)

    def boxes(self, start: float, ns_per_col: float, columns: int) -> Boxes:
        """Column spans of the events in the window; each event is at least one column."""
        t0, t1 = int(np.floor(start)), int(np.ceil(start + ns_per_col * columns))
        i0, i1 = self.window(t0, t1)
        s = (self.starts[i0:i1] - start) / ns_per_col
        e = (self.ends[i0:i1] - start) / ns_per_col
        c0 = np.clip(np.floor(s), 0, columns - 1).astype(np.int64)
        c1 = np.clip(np.ceil(e), 1, columns).astype(np.int64)
        keep = (self.ends[i0:i1] > t0) | (self.starts[i0:i1] >= t0)
        c1 = np.maximum(c1, c0 + 1)
        if not keep.all():
            c0, c1 = np.where(keep, c0, -1), np.where(keep, c1, -1)
        return Boxes(i0, c0, c1)

    def count_in(self, t0: int, t1: int) -> int:
        i0, i1 = self.window(t0, t1)
        return i1 - i0

    def at(self, t: float, tolerance: float = 0.0) -> int | None:
        """Position of the (innermost) event covering t, else the nearest within tolerance."""
        n = len(self.starts)
        if n == 0:
            return None
        i = int(np.searchsorted(self.starts, t, side="right")) - 1
        k = i
        while k >= 0 and self.max_end[k] > t:  # walk back over events that may cover t
            if self.ends[k] > t:
                return k
            k -= 1
            if i - k > 64:
                break
        best, dist = None, tolerance
        for c in (i, i + 1):
            if 0 <= c < n:
                d = max(self.starts[c] - t, t - self.ends[c], 0)
                if d <= dist:
                    best, dist = c, d
        return best

    def next_after(self, t: float) -> int | None:
        i = int(np.searchsorted(self.starts, t, side="right"))
        return i if i < len(self.starts) else None

    def prev_before(self, t: float) -> int | None:
        i = int(np.searchsorted(self.starts, t, side="left")) - 1
        return i if i >= 0 else None

    def position_of(self, row: int, start: int) -> int | None:
        """Where the event of table row `row` (starting at `start`) sits in this lane."""
        i = int(np.searchsorted(self.starts, start, side="left"))
        while i < len(self.starts) and self.starts[i] == start:
            if self.rows[i] == row:
                return i
            i += 1
        return None


def _union(starts: np.ndarray, max_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge overlapping sorted intervals (max_end = running max of their ends)."""
    new = np.empty(len(starts), dtype=bool)
    new[0] = True
    new[1:] = starts[1:] > max_end[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(starts) - 1)
    return starts[first], max_end[last]
