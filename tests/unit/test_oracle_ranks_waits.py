"""Per-position waits on hand-built ranks: two ranks, four 10 ms steps, two collectives a
step. Both work the same between collectives (no straggler by work), but in every step's
second collective rank 0 spends 400-570 µs and rank 1 50 µs: rank 0 waits 350-520 µs
there, for rank 1. A median over all collectives would not show it."""

from __future__ import annotations

import numpy as np
import pytest

from tuiperf.analysis.ranks import waits as W
from tuiperf.analysis.ranks.assemble import assemble
from tuiperf.analysis.ranks.summary import STEP_COLUMNS, RankResult

US = 1000


def _rank(name_rank: int, second: list[int], first: int = 100) -> RankResult:
    """Steps at 0, 10, 20, 30 ms; collective 1 at +2 ms (first µs long), collective 2 at
    +6 ms (second[i] µs long)."""
    starts = np.arange(4, dtype=np.int64) * 10_000 * US
    c_s = np.sort(np.concatenate([starts + 2_000 * US, starts + 6_000 * US]))
    dur = np.array([v for s in second for v in (first, s)], np.int64) * US
    steps = {c: np.full(4, 10_000 * US if c == "wall_ns" else 0, np.int64) for c in STEP_COLUMNS}
    return RankResult(
        path=f"rank{name_rank}.sqlite", name_rank=name_rank, meta_rank=None,
        step_source="nvtx", comm_source="ranges", device=0,
        labels=[f"step {i}" for i in range(4)], starts=starts, steps=steps,
        coll_starts=c_s, coll_ends=c_s + dur,
    )  # fmt: skip


def test_the_second_collective_wait_is_named() -> None:
    r0, r1 = _rank(0, [400, 570, 450, 500]), _rank(1, [50, 50, 50, 50])
    r0.rank, r1.rank = 0, 1
    (w,) = W.waits([r0, r1])
    assert (w.rank, w.position, w.low_ns, w.high_ns, w.steps, w.of_steps, w.for_rank) == (
        0, 1, 350 * US, 520 * US, 4, 4, 1,
    )  # fmt: skip
    rs = assemble([_rank(0, [400, 570, 450, 500]), _rank(1, [50] * 4)], [])
    assert rs.straggler is None
    assert "rank 0 waits 350 µs–520 µs in collective 2 of the step in 4 of 4 steps" in (rs.verdict)
    assert "the others do not wait" not in rs.verdict
    assert rs.to_json()["waits"][0]["waits_for_rank"] == 1


@pytest.mark.parametrize(("extra", "named"), [(50, True), (49, False)])
def test_the_wait_threshold(extra: int, named: bool) -> None:
    # WAIT_MIN_NS is 50 µs: 50 µs longer inside than the quickest rank is a wait
    assert W.WAIT_MIN_NS == 50 * US
    r0, r1 = _rank(0, [50 + extra] * 4), _rank(1, [50] * 4)
    r0.rank, r1.rank = 0, 1
    assert bool(W.waits([r0, r1])) is named


@pytest.mark.parametrize(("hits", "named"), [(4, True), (3, False), (2, False)])
def test_the_share_of_steps(hits: int, named: bool) -> None:
    # WAIT_STEPS 0.8 of 4 steps is 3.2: a wait in 4 steps is named, in 3 it is not
    assert W.WAIT_STEPS == 0.8
    second = [400] * hits + [50] * (4 - hits)
    r0, r1 = _rank(0, second), _rank(1, [50] * 4)
    r0.rank, r1.rank = 0, 1
    assert bool(W.waits([r0, r1])) is named


def test_a_rank_with_no_collective_in_a_step_is_not_compared_there() -> None:
    r0, r1 = _rank(0, [400] * 4), _rank(1, [50] * 4)
    r0.rank, r1.rank = 0, 1
    grid = W.inside_by_position(r0)
    assert grid.tolist() == [[100 * US, 400 * US]] * 4
    r1.coll_starts, r1.coll_ends = r1.coll_starts[:6], r1.coll_ends[:6]  # step 3: none
    (w,) = W.waits([r0, r1])
    assert (w.steps, w.of_steps) == (3, 3)
