"""Oracle: the straggler of a set of ranks (analysis.ranks.assemble) on hand-built ranks.

Each rank runs 4 steps; in each it works `work` ns, then sits `inside` ns in one blocking
collective, so its time between two collectives is `work` and inside one is `inside`. A
straggler is the rank that works longest (by STRAGGLER_WORK = 1.10 x the others' median or
more) while the others wait for it (its time inside is shorter than theirs). Every expected
number is worked out in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from tuiperf.analysis.ranks.assemble import CLOCK_COLLECTIVE, STRAGGLER_WORK, assemble
from tuiperf.analysis.ranks.summary import STEP_COLUMNS, RankResult

STEPS = 4


def _rank(rank: int, work: int, inside: int, clock: int = 0, n: int = STEPS) -> RankResult:
    """Steps [clock + i*(work+inside), +work+inside); the collective fills each step's end."""
    step = work + inside
    starts = clock + step * np.arange(n, dtype=np.int64)
    return _ranked(rank, starts, starts + work, starts + step)


def _ranked(rank: int, starts: np.ndarray, coll_starts: np.ndarray, ends: np.ndarray) -> RankResult:
    """A rank whose step i starts at starts[i] and ends when its one collective ends."""
    n = len(starts)
    steps = {c: np.zeros(n, np.int64) for c in STEP_COLUMNS}
    steps["wall_ns"] = ends - starts
    return RankResult(
        path=f"rank{rank}.nsys-rep",
        name_rank=rank,
        meta_rank=None,
        step_source="nvtx",
        comm_source="kernels",
        device=0,
        labels=[f"step {i}" for i in range(n)],
        starts=starts,
        steps=steps,
        coll_starts=coll_starts,
        coll_ends=ends,
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


def test_verdicts_word_for_word() -> None:
    assert _set(_rank(0, 1000, 300)).verdict == "one rank: nothing to compare"
    one = _rank(1, 2000, 10, n=1)  # one collective: no work between two
    s = _set(_rank(0, 1000, 300), one)
    assert s.verdict == "no straggler named: fewer than two ranks show collectives"
    s = _set(_rank(0, 1000, 300), _rank(1, 1500, 300), _rank(2, 1000, 300))
    assert s.verdict == (
        "no straggler: rank 1 works longest between collectives (1.5 µs, others 1 µs) "
        "but the others do not wait for it"
    )


def test_two_ranks_with_two_collectives_each_are_enough() -> None:
    s = _set(_rank(0, 1000, 300, n=2), _rank(1, 1200, 100, n=2))
    assert s.straggler is not None and (s.straggler.rank, s.straggler.steps) == (1, 2)


def test_last_arrivals_on_aligned_clocks_by_hand() -> None:
    """Step i spans [1000 i, 1000 i + 900) on the common clock; every rank's collective ends
    at 1000 i + 900; rank 1's report counts from 5000 ns earlier, rank 2's from 300."""
    arrive = {0: [100, 100, 100, 100], 1: [600, 500, 100, 700], 2: [650, 200, 100, 200]}
    ranks = _arrivals(arrive, {0: 0, 1: 5000, 2: 300})
    s = _set(*ranks)
    assert s.offsets == {0: 0, 1: 5000, 2: 300}
    st = s.straggler
    # work between collectives = next arrival + 100: rank 1 600, 200, 800 (median 600);
    # others' medians 200 and 300 -> 250; inside: rank 1 350, others 800 and 700 -> 750
    assert st is not None and st.rank == 1
    assert (st.work_ns, st.others_work_ns, st.inside_ns, st.others_inside_ns) == (
        600, 250, 350, 750)  # fmt: skip
    # last: step 0 no (600 < 650), 1 yes (500 > 200), 2 no (a tie at 100), 3 yes (700 > 200)
    assert (st.last_arrivals, st.steps) == (2, 4)


def _arrivals(arrive: dict[int, list[int]], clock: dict[int, int]) -> list[RankResult]:
    ranks = []
    for r, a in arrive.items():
        base = 1000 * np.arange(len(a), dtype=np.int64) + clock[r]
        ranks.append(_ranked(r, base, base + np.array(a), base + 900))
    return ranks


def test_last_arrivals_count_only_steps_both_sides_have() -> None:
    clock = {0: 0, 1: 5000, 2: 300}
    # the others lack step 3: rank 1 is last in step 1 of steps 0-2 (step 2: a tie)
    short = {0: [100, 100, 100], 1: [600, 500, 100, 700], 2: [650, 200, 100]}
    st = _set(*_arrivals(short, clock)).straggler
    assert st is not None and (st.rank, st.last_arrivals, st.steps) == (1, 1, 3)
    # rank 1 has no collective in step 4 (its fifth step): steps 0-3 count
    ranks = _arrivals({0: [100] * 5, 1: [600, 500, 100, 700, 100], 2: [650, 200, 100, 200, 100]},
                      clock)  # fmt: skip
    ranks[1].coll_starts, ranks[1].coll_ends = ranks[1].coll_starts[:4], ranks[1].coll_ends[:4]
    st = _set(*ranks).straggler
    assert st is not None and (st.rank, st.last_arrivals, st.steps) == (1, 2, 4)
