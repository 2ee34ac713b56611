"""Oracle: a set of ranks put together (analysis.ranks.assemble) on hand-built ranks: the
ranks table and its JSON key by key, rank numbering, clock alignment, the "not one run"
warning and the verdict's wording. Every number is worked out by hand in the comments; the
straggler's own thresholds are in test_oracle_ranks_set.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tuiperf.analysis.ranks import assemble as AS
from tuiperf.analysis.ranks.assemble import (
    CLOCK_COLLECTIVE,
    CLOCK_ONE,
    CLOCK_SESSION,
    RankSet,
    assemble,
    different_runs,
)
from tuiperf.analysis.ranks.summary import STEP_COLUMNS, RankResult

US = 1000
MS = 1000 * US


def _rank(
    path: str,
    starts: list[int],
    walls: list[int],
    colls: list[tuple[int, int]],
    *,
    name_rank: int | None = None,
    meta_rank: int | None = None,
    labels: list[str] | None = None,
    source: str = "nvtx",
    comm: str = "kernels",
    cols: dict[str, list[int]] | None = None,
    collectives: dict[str, tuple[int, int]] | None = None,
    pid: int | None = None,
    proc: int | None = None,
    kernels: list[dict[str, Any]] | None = None,
) -> RankResult:
    """Steps [starts[i], starts[i] + walls[i]); collectives (start, end), by start; the
    other step columns from `cols` (zeros otherwise)."""
    n = len(starts)
    steps = {c: np.array((cols or {}).get(c, [0] * n), np.int64) for c in STEP_COLUMNS}
    steps["wall_ns"] = np.array(walls, np.int64)
    return RankResult(
        path=path,
        name_rank=name_rank,
        meta_rank=meta_rank,
        step_source=source,
        comm_source=comm,
        device=0,
        labels=labels if labels is not None else [f"step {i}" for i in range(n)],
        starts=np.array(starts, np.int64),
        steps=steps,
        coll_starts=np.array([c[0] for c in colls], np.int64),
        coll_ends=np.array([c[1] for c in colls], np.int64),
        collectives=collectives if collectives is not None else {"all_reduce": (n, 0)},
        comm_kernels=kernels or [],
        pid=pid,
        proc_index=proc,
    )


# --- A: two ranks, one waits for the other; every key of the table by hand ----------------

WALLS = [1000, 1200, 1100]
#: rank 0 counts on the common clock: steps at 0, 1000, 2200, collectives ending with them
#: (inside 200, 300, 200: median 200; between: 1900 - 1000, 3100 - 2200: 900)
COLLS_0 = [(800, 1000), (1900, 2200), (3100, 3300)]
#: rank 1's report starts 500 ns later: its times are the common clock's + 500; collectives
#: end at the same moments (1500, 2700, 3800 its own), 100 inside each; between: 2600 -
#: 1500 = 1100, 3700 - 2700 = 1000 (median 1050)
COLLS_1 = [(1400, 1500), (2600, 2700), (3700, 3800)]
KINDS = {"broadcast": (1, 10), "all_reduce": (3, 750)}


def _pair(**kw: Any) -> list[RankResult]:
    r0 = _rank("rank0.nsys-rep", [0, 1000, 2200], WALLS, COLLS_0, name_rank=0,
               cols={"compute_ns": [600, 700, 650], "comm_ns": [200, 300, 250],
                     "exposed_ns": [50, 60, 70], "copy_ns": [5, 6, 7],
                     "idle_ns": [345, 434, 373]},
               collectives=dict(KINDS), kernels=[{"device": 0, "kind": "all_reduce"}],
               **kw)  # fmt: skip
    r1 = _rank("rank1.nsys-rep", [500, 1500, 2700], WALLS, COLLS_1, name_rank=1, comm="",
               cols={"compute_ns": [500, 900, 700], "comm_ns": [100, 100, 400],
                     "exposed_ns": [0, 5, 10], "idle_ns": [500, 295, 390]},
               collectives={"all_reduce": (3, 300), "broadcast": (1, 5)}, pid=4242)  # fmt: skip
    return [r1, r0]  # given out of order: the set sorts them by rank


EVIDENCE_A = (
    "rank 1 works 1.05 µs between collectives (others 900 ns) and spends 100 ns inside each "
    "(others 200 ns: waiting for it); it reaches the collective last in 3 of 3 steps"
)
#: each rank's row is its median step, the third (1100 ns; steps 1000, 1200, 1100): rank 0
#: compute 650 + exposed 70 + copies 7 + idle 373; rank 1 700 + 10 + 0 + 390
ROWS_A = [
    {"rank": 0, "report": "rank0.nsys-rep", "pid": None, "steps": 3, "step_ns": 1100,
     "compute_ns": 650, "comm_ns": 250, "exposed_comm_ns": 70, "copy_ns": 7, "idle_ns": 373,
     "work_before_collective_ns": 900, "inside_collective_ns": 200, "comm_source": "kernels",
     "collectives": "all_reduce:3 broadcast:1", "clock_offset_ns": 0, "straggler": False},
    {"rank": 1, "report": "rank1.nsys-rep", "pid": 4242, "steps": 3, "step_ns": 1100,
     "compute_ns": 700, "comm_ns": 400, "exposed_comm_ns": 10, "copy_ns": 0, "idle_ns": 390,
     "work_before_collective_ns": 1050, "inside_collective_ns": 100, "comm_source": "none",
     "collectives": "all_reduce:3 broadcast:1", "clock_offset_ns": 500, "straggler": True},
]  # fmt: skip


def test_the_ranks_table_by_hand() -> None:
    """Offsets: rank 1's collective ends minus rank 0's, 500 each: 500. Straggler: rank 1
    works 1050 (over 1.1 x 900 = 990) and spends 100 inside (under 200); on the common
    clock it arrives at 900, 2100, 3200, after rank 0's 800, 1900, 3100: last in 3 of 3."""
    s = assemble(_pair(), ["rank0.nsys-rep", "rank1.nsys-rep"])
    assert [r.rank for r in s.ranks] == [0, 1]
    assert (s.rank_from, s.clock, s.offsets) == ("file name", CLOCK_COLLECTIVE, {0: 0, 1: 500})
    assert s.verdict == EVIDENCE_A and s.waits == []
    assert s.rows() == ROWS_A


def test_step_rows_by_hand() -> None:
    s = assemble(_pair(), [])
    assert s.step_rows(s.ranks[1]) == {
        "rank": [1, 1, 1],
        "label": ["step 0", "step 1", "step 2"],
        "start_ns": [500, 1500, 2700],
        "aligned_start_ns": [0, 1000, 2200],
        "wall_ns": WALLS,
        "compute_ns": [500, 900, 700],
        "comm_ns": [100, 100, 400],
        "exposed_ns": [0, 5, 10],
        "copy_ns": [0, 0, 0],
        "idle_ns": [500, 295, 390],
    }
    assert s.step_rows(s.ranks[0])["aligned_start_ns"] == [0, 1000, 2200]


def test_the_json_key_by_key() -> None:
    s = assemble(_pair(), [])
    assert s.to_json() == {
        "ranks": ROWS_A,
        "rank_from": "file name",
        "clock": CLOCK_COLLECTIVE,
        "straggler": {
            "rank": 1,
            "work_between_collectives_ns": 1050,
            "others_work_between_collectives_ns": 900,
            "inside_collective_ns": 100,
            "others_inside_collective_ns": 200,
            "last_arrivals": 3,
            "steps": 3,
            "evidence": EVIDENCE_A,
        },
        "verdict": EVIDENCE_A,
        "waits": [],
        "comm_kernels": {"0": [{"device": 0, "kind": "all_reduce"}], "1": []},
    }
    none = assemble([_rank("a", [0], [10], []), _rank("b", [0], [10], [])], ["a", "b"])
    assert none.to_json()["straggler"] is None


def test_a_rank_missing_from_the_offsets_is_on_the_common_clock() -> None:
    """A RankSet built by hand with no offset for rank 1: its offset is 0, its aligned
    starts its own."""
    r0, r1 = sorted(_pair(), key=lambda r: r.path)
    r0.rank, r1.rank = 0, 1
    s = RankSet([r0, r1], "order", CLOCK_SESSION, {0: 7}, None, "")
    assert [row["clock_offset_ns"] for row in s.rows()] == [7, 0]
    assert s.step_rows(r1)["aligned_start_ns"] == [500, 1500, 2700]
    assert s.step_rows(r0)["aligned_start_ns"] == [-7, 993, 2193]


def test_one_or_no_collective_has_no_median_between() -> None:
    """One collective [10, 30): nothing between two (None), 20 inside; none: both None."""
    one = _rank("a", [0], [100], [(10, 30)], name_rank=0)
    zero = _rank("b", [0], [100], [], name_rank=1)
    rows = assemble([one, zero], []).rows()
    assert [(r["work_before_collective_ns"], r["inside_collective_ns"]) for r in rows] == [
        (None, 20), (None, None)]  # fmt: skip


def test_the_last_arrival_on_a_reports_first_ns_counts() -> None:
    """Rank 1's report starts 900 ns after rank 0's (offset -900): its first collective
    starts on its first ns, 0 [0, 100), 1200 [1200, 1300), 2300 [2300, 2400), in steps at
    0, 1100, 2300. Between: 1100, 1000 (median 1050), inside 100: the straggler; on the
    common clock it arrives at 900, 2100, 3200, after rank 0: last in 3 of 3 steps, the one
    starting at 0 ns included."""
    r0 = _rank("rank0", [0, 1000, 2200], WALLS, COLLS_0, name_rank=0)
    r1 = _rank("rank1", [0, 1100, 2300], WALLS, [(0, 100), (1200, 1300), (2300, 2400)],
               name_rank=1)  # fmt: skip
    s = assemble([r0, r1], [])
    assert s.offsets == {0: 0, 1: -900}
    st = s.straggler
    assert st is not None and (st.rank, st.last_arrivals, st.steps) == (1, 3, 3)


# --- B: rank numbers -----------------------------------------------------------------------


def _one(path: str, **kw: Any) -> RankResult:
    return _rank(path, [0], [100], [], **kw)


def test_ranks_from_distinct_file_names() -> None:
    s = assemble([_one("x", name_rank=3, meta_rank=0), _one("y", name_rank=1, meta_rank=1)],
                 ["y", "x"])  # fmt: skip
    assert s.rank_from == "file name"
    assert [(r.path, r.rank, r.rank_from) for r in s.ranks] == [
        ("y", 1, "file name"), ("x", 3, "file name")]  # fmt: skip


def test_ranks_from_the_reports_when_file_names_repeat() -> None:
    """Both files say rank 0: torch.profiler's distributedInfo (1 and 0) decides."""
    s = assemble([_one("x", name_rank=0, meta_rank=1), _one("y", name_rank=0, meta_rank=0)], [])
    said = "report (distributedInfo)"
    assert s.rank_from == said
    assert [(r.path, r.rank, r.rank_from) for r in s.ranks] == [("y", 0, said), ("x", 1, said)]


@pytest.mark.parametrize(
    ("names", "metas"),
    [((None, 1), (None, None)), ((2, 2), (5, None)), ((2, 2), (4, 4))],
    ids=["a name missing", "a rank missing in the report", "both repeat"],
)
def test_ranks_from_the_order_of_the_paths(names: tuple, metas: tuple) -> None:
    """Neither source gives every report a distinct rank: the order of the paths given
    (y first), not the order of the results (x first)."""
    x = _one("x", name_rank=names[0], meta_rank=metas[0])
    y = _one("y", name_rank=names[1], meta_rank=metas[1])
    s = assemble([x, y], ["y", "x"])
    assert s.rank_from == "order"
    assert [(r.path, r.rank, r.rank_from) for r in s.ranks] == [
        ("y", 0, "order"),
        ("x", 1, "order"),
    ]


def test_ranks_of_one_report_by_process_order() -> None:
    """`job` holds two processes (proc_index 1 and 0, given in that order) after `solo`
    in the paths: solo 0, job's process 0 rank 1, its process 1 rank 2."""
    p1, p0 = _one("job", proc=1, pid=20), _one("job", proc=0, pid=10)
    s = assemble([p1, p0, _one("solo")], ["solo", "job"])
    said = "process order in the report (by GPU, then pid)"
    assert s.rank_from == said
    assert [(r.path, r.pid, r.rank, r.rank_from) for r in s.ranks] == [
        ("solo", None, 0, said), ("job", 10, 1, said), ("job", 20, 2, said)]  # fmt: skip


# --- C: clocks -----------------------------------------------------------------------------


def test_ranks_in_one_report_share_its_clock() -> None:
    """Two processes of one report: one clock, offsets 0, though their collectives end 500
    ns apart."""
    a = _rank("job", [0, 1000, 2200], WALLS, COLLS_0, proc=0)
    b = _rank("job", [500, 1500, 2700], WALLS, COLLS_1, proc=1)
    s = assemble([a, b], ["job"])
    assert (s.clock, s.offsets) == (CLOCK_ONE, {0: 0, 1: 0})


def test_without_collectives_on_the_first_rank_each_keeps_its_clock() -> None:
    a = _rank("a", [0, 1000, 2200], WALLS, [], name_rank=0)
    b = _rank("b", [500, 1500, 2700], WALLS, COLLS_1, name_rank=1)
    s = assemble([a, b], [])
    assert (s.clock, s.offsets) == (CLOCK_SESSION, {0: 0, 1: 0})


def test_no_step_with_collectives_on_both_keeps_each_clock() -> None:
    """Rank 1's collectives lie outside its steps (after 5000): no step of both has one."""
    a = _rank("a", [0, 1000, 2200], WALLS, COLLS_0, name_rank=0)
    b = _rank("b", [500, 1500, 2700], WALLS, [(5000, 5100), (6000, 6100)], name_rank=1)
    s = assemble([a, b], [])
    assert (s.clock, s.offsets) == (CLOCK_SESSION, {0: 0, 1: 0})


def test_one_shared_step_aligns() -> None:
    """Only `step 1` is in both (rank 1 has steps 1, 7): 2700 - 2200 = 500."""
    a = _rank("a", [0, 1000, 2200], WALLS, COLLS_0, name_rank=0)
    b = _rank("b", [2000, 9000], [1200, 100], [(2600, 2700)], name_rank=1,
              labels=["step 1", "step 7"])  # fmt: skip
    s = assemble([a, b], [])
    assert (s.clock, s.offsets) == (CLOCK_COLLECTIVE, {0: 0, 1: 500})


def test_steps_with_other_labels_align_by_position() -> None:
    """Rank 1 names its steps `iteration 1-3`: none shared, so step k with step k."""
    b = _rank("b", [500, 1500, 2700], WALLS, COLLS_1, name_rank=1,
              labels=["iteration 1", "iteration 2", "iteration 3"])  # fmt: skip
    s = assemble([_rank("a", [0, 1000, 2200], WALLS, COLLS_0, name_rank=0), b], [])
    assert (s.clock, s.offsets) == (CLOCK_COLLECTIVE, {0: 0, 1: 500})


def test_a_step_without_a_collective_on_one_side_is_left_out() -> None:
    """Rank 1 has no collective in step 1: ends 1500 and 3810 against 1000 and 3300:
    offsets 500 and 510, median 505 (step 1's -1 would pull it to 500)."""
    b = _rank("b", [500, 1500, 2700], WALLS, [(1400, 1500), (3700, 3810)], name_rank=1)
    s = assemble([_rank("a", [0, 1000, 2200], WALLS, COLLS_0, name_rank=0), b], [])
    assert (s.clock, s.offsets) == (CLOCK_COLLECTIVE, {0: 0, 1: 505})


def test_a_collective_ending_on_the_first_ns_is_a_time() -> None:
    """End 0 is a time (-1 is none): a zero-length collective [0, 0) at 0 on either side
    aligns with the other's at 300."""
    zero = _rank("a", [0], [100], [(0, 0)], name_rank=0)
    late = _rank("b", [200], [200], [(250, 300)], name_rank=1)
    assert assemble([zero, late], []).offsets == {0: 0, 1: 300}
    zero.name_rank, late.name_rank = 1, 0
    assert assemble([zero, late], []).offsets == {0: 0, 1: -300}


def test_matched_indices_are_integers_even_when_empty() -> None:
    a, b = AS._matched(["x"], np.array([5]), [], np.zeros(0, np.int64))
    assert a.dtype == np.int64 and b.dtype == np.int64 and len(a) == len(b) == 0


# --- D: reports that may not be ranks of one run, and the verdict's wording ---------------


def _med(path: str, wall: int, **kw: Any) -> RankResult:
    return _rank(path, [0], [wall], [], **kw)


def test_one_rank_is_one_run() -> None:
    assert different_runs([_med("a", 100, source="pattern")]) == ""


def test_ranks_alike_are_one_run() -> None:
    assert different_runs([_med("a", 1000), _med("b", 2000)]) == ""  # exactly 2x: alike


@pytest.mark.parametrize(
    ("b", "why"),
    [
        (_med("b", 1000, collectives={"all_reduce": (1, 0), "broadcast": (1, 0)}),
         "their collectives differ"),
        (_med("b", 1000, source="pattern"), "their steps come from different markers"),
        (_med("b", 2001), "their median steps differ 2.0x"),
    ],
    ids=["collectives", "markers", "2.001x"],
)  # fmt: skip
def test_each_reason_word_for_word(b: RankResult, why: str) -> None:
    assert different_runs([_med("a", 1000), b]) == (
        f"These reports may not be ranks of one run ({why}): compare them with tuiperf diff "
        "instead."
    )


def test_every_reason_and_the_step_ratio() -> None:
    """Medians 1 and 3 ns (a rank with no steps has none): 3.0x; every reason, in order."""
    odd = _med("b", 3, source="kineto", collectives={})
    no_steps = _rank("c", [], [], [], collectives={})
    assert different_runs([_med("a", 1), no_steps, odd]) == (
        "These reports may not be ranks of one run (their collectives differ; their steps "
        "come from different markers; their median steps differ 3.0x): compare them with "
        "tuiperf diff instead."
    )


def test_a_median_step_of_0_ns_gives_no_ratio() -> None:
    assert different_runs([_med("a", 0), _med("b", 5)]) == ""


def test_the_warning_leads_the_verdict() -> None:
    """The pair of A with rank 1's collectives all-reduce only: the warning, then the
    straggler's evidence."""
    r1, r0 = _pair()
    r1.collectives = {"all_reduce": (3, 300)}
    s = assemble([r0, r1], [])
    assert s.verdict == (
        "These reports may not be ranks of one run (their collectives differ): compare them "
        f"with tuiperf diff instead. {EVIDENCE_A}"
    )
    assert s.straggler is not None and s.straggler.evidence == EVIDENCE_A


def _two_waits(path: str, first: int, second: int, name_rank: int) -> RankResult:
    """Steps at 0, 10, 20, 30 ms (10 ms each): collective 1 at +2 ms for `first` µs,
    collective 2 at +6 ms for `second` µs."""
    starts = [10 * MS * i for i in range(4)]
    colls = [
        (s + off, s + off + d * US)
        for s in starts
        for off, d in ((2 * MS, first), (6 * MS, second))
    ]
    return _rank(path, starts, [10 * MS] * 4, colls, name_rank=name_rank)


def test_no_straggler_but_waits_word_for_word() -> None:
    """Rank 0: collective 1 100 µs, 2 400 µs; rank 1: 300 and 50 µs. Between collectives:
    rank 0 3900 (6000 - 2100) and 5600 (12000 - 6400) µs, median of 3900 x4, 5600 x3:
    3.9 ms; rank 1 3700 and 5950: 3.7 ms. Rank 0 works longest but under 1.1 x 3.7 ms: no
    straggler. Rank 1 waits 300 - 100 = 200 µs in collective 1 (for rank 0) every step,
    rank 0 400 - 50 = 350 µs in collective 2 (for rank 1): both waits follow the verdict,
    whose "the others do not wait for it" they replace."""
    s = assemble([_two_waits("a", 100, 400, 0), _two_waits("b", 300, 50, 1)], [])
    assert s.straggler is None
    assert s.verdict == (
        "no straggler: rank 0 works longest between collectives (3.9 ms, others 3.7 ms); "
        "but rank 1 waits 200 µs in collective 1 of the step in 4 of 4 steps (for rank 0, "
        "which arrives last there); rank 0 waits 350 µs in collective 2 of the step in 4 "
        "of 4 steps (for rank 1, which arrives last there)"
    )
    assert [w.rank for w in s.waits] == [1, 0]
