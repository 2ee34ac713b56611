"""One thread's running and waiting intervals (the data of state_lane's rows, apart from the
lane plumbing so that `lanes.Lane` can name its type without an import cycle)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UNKNOWN, RUNNING, WAITING = 0, 1, 2


@dataclass(frozen=True)
class ThreadStates:
    """One thread's running and waiting intervals, in time order, not overlapping."""

    pid: int
    tid: int
    start: np.ndarray
    end: np.ndarray
    running: np.ndarray  # bool per interval

    def _cumulative(self, mask: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Time spent in the intervals of `mask` from the first interval to each `t`."""
        dur = np.where(mask, self.end - self.start, 0)
        before = np.r_[0, np.cumsum(dur)]
        i = np.searchsorted(self.start, t, "right") - 1  # the last interval starting <= t
        j = np.maximum(i, 0)
        inside = np.clip(t - self.start[j], 0, dur[j])
        return np.where(i >= 0, before[j] + inside, 0)

    def shares(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(running ns, waiting ns) per column [edges[k], edges[k+1])."""
        e = np.asarray(edges, np.int64)
        run = np.diff(self._cumulative(self.running, e))
        wait = np.diff(self._cumulative(~self.running, e))
        return run, wait

    def states(self, edges: np.ndarray) -> np.ndarray:
        """Per column UNKNOWN, RUNNING (ran >= waited) or WAITING (waited longer)."""
        run, wait = self.shares(edges)
        out = np.where(run >= wait, RUNNING, WAITING)
        return np.where(run + wait > 0, out, UNKNOWN).astype(np.int64)

    def at(self, t: float) -> tuple[bool, int, int] | None:
        """(running, start, end) of the interval holding time `t`, None outside them all."""
        i = int(np.searchsorted(self.start, t, "right")) - 1
        if i < 0 or t >= self.end[i]:
            return None
        return bool(self.running[i]), int(self.start[i]), int(self.end[i])
