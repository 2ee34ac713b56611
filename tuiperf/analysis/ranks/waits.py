"""Who waits in which collective of the step: per position in the step (its 1st, 2nd, …
collective), each rank's time inside it against the rank that spent the least there in the
same step. A median over every collective of the step hides a wait that happens in one of
them only (a pipeline's second send/recv, say)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tuiperf.analysis.ranks.summary import RankResult
from tuiperf.model import fmt

#: a rank waits in a collective when it spends at least this much longer inside it than the
#: quickest rank of that step …
WAIT_MIN_NS = 50_000
#: … in at least this share of the steps both have
WAIT_STEPS = 0.8


@dataclass(frozen=True)
class Wait:
    rank: int
    position: int  # 0: the step's first collective
    low_ns: int  # the least and most it waits (steps where it waits)
    high_ns: int
    steps: int  # steps in which it waits
    of_steps: int
    for_rank: int  # the rank that spent the least inside it (the one waited for)

    @property
    def text(self) -> str:
        span = fmt.duration(self.low_ns)
        if self.high_ns != self.low_ns:
            span += f"–{fmt.duration(self.high_ns)}"
        return (
            f"rank {self.rank} waits {span} in collective {self.position + 1} of the step in "
            f"{self.steps} of {self.of_steps} steps (for rank {self.for_rank}, which arrives "
            "last there)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "collective_in_step": self.position + 1,
            "wait_low_ns": self.low_ns,
            "wait_high_ns": self.high_ns,
            "steps": self.steps,
            "of_steps": self.of_steps,
            "waits_for_rank": self.for_rank,
            "text": self.text,
        }


def inside_by_position(r: RankResult) -> np.ndarray:
    """steps x positions: the time inside the step's k-th collective, -1 where none."""
    ends = r.starts + r.steps["wall_ns"]
    idx = np.searchsorted(r.starts, r.coll_starts, "right") - 1
    ok = (idx >= 0) & (r.coll_starts < ends[np.maximum(idx, 0)])
    idx, dur = idx[ok], (r.coll_ends - r.coll_starts)[ok]
    if len(idx) == 0:
        return np.full((len(r.starts), 0), -1, np.int64)
    first = np.searchsorted(idx, idx, "left")  # collectives are in start order
    pos = np.arange(len(idx)) - first
    out = np.full((len(r.starts), int(pos.max()) + 1), -1, np.int64)
    out[idx, pos] = dur
    return out


def waits(results: list[RankResult]) -> list[Wait]:
    """Ranks that wait in one collective position of the step, step after step."""
    if len(results) < 2:
        return []
    grids = {r.rank: inside_by_position(r) for r in results}
    n_steps = min(g.shape[0] for g in grids.values())
    n_pos = min(g.shape[1] for g in grids.values())
    if n_steps == 0 or n_pos == 0:
        return []
    ranks = sorted(grids)
    cube = np.stack([grids[k][:n_steps, :n_pos] for k in ranks])  # ranks x steps x positions
    out = []
    for p in range(n_pos):
        out += _waits_at(cube[:, :, p], ranks, p)
    return out


def _waits_at(inside: np.ndarray, ranks: list[int], p: int) -> list[Wait]:
    """inside: ranks x steps, -1 where a rank has no collective there."""
    have = (inside >= 0).all(axis=0)
    if not have.any():
        return []
    x = inside[:, have]
    quickest = x.argmin(axis=0)
    wait = x - x.min(axis=0)
    out = []
    for i, rank in enumerate(ranks):
        hit = wait[i] >= WAIT_MIN_NS
        if hit.sum() < WAIT_STEPS * x.shape[1]:
            continue
        for_rank = ranks[int(np.bincount(quickest[hit], minlength=len(ranks)).argmax())]
        w = wait[i][hit]
        out.append(Wait(rank, p, int(w.min()), int(w.max()), int(hit.sum()), x.shape[1], for_rank))
    return out
