"""Oracle: the straggler of a set of ranks (analysis.ranks_set) on hand-built ranks.

Each rank runs 4 steps; in each it works `work` ns, then sits `inside` ns in one blocking
collective, so its time between two collectives is `work` and inside one is `inside`. A
straggler is the rank that works longest (by STRAGGLER_WORK = 1.10 x the others' median or
more) while the others wait for it (its time inside is shorter than theirs). Every expected
number is worked out in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from tuiperf.analysis.ranks import STEP_COLUMNS, RankResult
from tuiperf.analysis.ranks_set import CLOCK_COLLECTIVE, STRAGGLER_WORK, assemble

STEPS = 4


def _rank(rank: int, work: int, inside: int, clock: int = 0) -> RankResult:
    """Steps [clock + i*(work+inside), +work+inside); the collective fills each step's end."""
    step = work + inside
    starts = clock + step * np.arange(STEPS, dtype=np.int64)
    coll_starts = starts + work
    steps = {c: np.zeros(STEPS, np.int64) for c in STEP_COLUMNS}
    steps["wall_ns"] = np.full(STEPS, step, np.int64)
    return RankResult(
        path=f"rank{rank}.nsys-rep",
        name_rank=rank,
        meta_rank=None,
        step_source="nvtx",
        comm_source="kernels",
        device=0,
        labels=[f"step {i}" for i in range(STEPS)],
        starts=starts,
        steps=steps,
        coll_starts=coll_starts,
        coll_ends=coll_starts + inside,
    )


def _set(*ranks: RankResult):  # type: ignore[no-untyped-def]
    return assemble(list(ranks), [r.path for r in ranks])


def test_threshold_is_ten_percent() -> None:
    assert STRAGGLER_WORK == 1.10


def test_the_rank_the_others_wait_for_is_named() -> None:
    # rank 1 works 1200 ns (others 1000: 1.2x) and spends 100 ns inside (others 300): every
    # step lasts 1300 ns on every rank, so the collectives end together; rank 2's report
    # starts 777 ns later on its own clock
    s = _set(_rank(0, 1000, 300), _rank(1, 1200, 100), _rank(2, 1000, 300, clock=777))
    assert s.clock == CLOCK_COLLECTIVE
    assert s.offsets == {0: 0, 1: 0, 2: 777}
    st = s.straggler
    assert st is not None
    assert (st.rank, st.work_ns, st.others_work_ns) == (1, 1200, 1000)
    assert (st.inside_ns, st.others_inside_ns) == (100, 300)
    # it reaches the collective at i*1300 + 1200, the others at i*1300 + 1000: last, 4 of 4
    assert (st.last_arrivals, st.steps) == (4, 4)
    assert [r["straggler"] for r in s.rows()] == [False, True, False]


def test_longest_work_without_waiting_names_no_straggler() -> None:
    # rank 1 works longest (1500 vs 1000) but the others do not wait for it: its own time
    # inside the collective (400) is as long as theirs or longer
    for inside in (300, 400):
        s = _set(_rank(0, 1000, 300), _rank(1, 1500, inside), _rank(2, 1000, 300))
        assert s.straggler is None, inside
        assert "do not wait for it" in s.verdict
        assert not any(r["straggler"] for r in s.rows())


@pytest.mark.parametrize(
    ("work", "named"),
    [(1099, False), (1100, True), (1101, True)],  # others' median 1000: the bar is 1100
)
def test_work_threshold_at_its_boundary(work: int, named: bool) -> None:
    s = _set(_rank(0, 1000, 300), _rank(1, work, 100), _rank(2, 1000, 300))
    assert (s.straggler is not None) == named
    if named:
        assert s.straggler is not None and s.straggler.rank == 1


@pytest.mark.parametrize(("inside", "named"), [(299, True), (300, False), (301, False)])
def test_waiting_at_its_boundary(inside: int, named: bool) -> None:
    # others spend 300 ns inside: the candidate must spend strictly less
    s = _set(_rank(0, 1000, 300), _rank(1, 2000, inside), _rank(2, 1000, 300))
    assert (s.straggler is not None) == named


def test_others_median_not_their_mean() -> None:
    # others work 1000, 1000 and 1110 (median 1000, mean 1036.7): rank 3 at 1120 is over
    # 1.1x their median (1100) though under 1.1x their mean (1140.3); inside: others 300
    s = _set(_rank(0, 1000, 300), _rank(1, 1000, 300), _rank(2, 1110, 300), _rank(3, 1120, 10))
    assert s.straggler is not None and s.straggler.rank == 3
    assert s.straggler.others_work_ns == 1000


def test_too_few_ranks_or_collectives() -> None:
    assert _set(_rank(0, 1000, 300)).straggler is None
    one = _rank(1, 2000, 10)
    one.coll_starts, one.coll_ends = one.coll_starts[:1], one.coll_ends[:1]
    s = _set(_rank(0, 1000, 300), one)
    assert s.straggler is None and "fewer than two ranks show collectives" in s.verdict
