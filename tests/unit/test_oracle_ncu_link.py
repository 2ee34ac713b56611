"""Oracle: which Nsight Compute result links to which kernel launch (model.ncu.link), on
hand-built traces and ncu reports. Every choice, level and row list below is worked out
by hand in the comments from the rules in the module's docstring (name, grid/block,
NVTX context on the launching thread at the API call, launch order within one range
instance), never by calling other tuiperf code."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tuiperf import schema
from tuiperf.model.ncu import link as L
from tuiperf.model.ncu.metrics import KernelMetrics, make_table
from tuiperf.model.trace import Trace, TraceMeta

I64 = pa.int64()


def _dict(values: list) -> pa.Array:
    return pa.array(values, pa.string()).dictionary_encode()


def _table(name: str, cols: dict[str, list], n: int) -> pa.Table:
    arrays = {}
    for k, v in cols.items():
        if k in ("name", "short_name", "mangled_name", "text", "style", "domain"):
            arrays[k] = _dict(v)
        else:
            arrays[k] = pa.array(v, I64)
    return schema.conform(name, arrays, n)


#: a kernel launch: (start, tid, name, mangled, grid_x, block_x, API start or None)
def _kernels(rows: list[tuple], pid: int = 1) -> pa.Table:
    n = len(rows)
    cols = {
        "start": [r[0] for r in rows],
        "end": [r[0] + 10 for r in rows],
        "duration": [10] * n,
        "device": [0] * n,
        "stream": [7] * n,
        "pid": [pid] * n,
        "tid": [r[1] for r in rows],
        "correlation_id": list(range(100, 100 + n)),
        "name": [r[2] for r in rows],
        "short_name": [r[2] for r in rows],
        "mangled_name": [r[3] for r in rows],
        "grid_x": [r[4] for r in rows],
        "grid_y": [1] * n,
        "grid_z": [1] * n,
        "block_x": [r[5] for r in rows],
        "block_y": [1] * n,
        "block_z": [1] * n,
    }
    return _table("kernels", cols, n)


def _api(rows: list[tuple], pid: int = 1) -> pa.Table:
    """The launch calls of `rows` that have an API start, listed in reverse order (the
    join is by correlation id, not by position)."""
    calls = [(r[6], r[1], 100 + i) for i, r in enumerate(rows) if r[6] is not None][::-1]
    n = len(calls)
    cols = {
        "start": [c[0] for c in calls],
        "end": [c[0] + 5 for c in calls],
        "duration": [5] * n,
        "pid": [pid] * n,
        "tid": [c[1] for c in calls],
        "correlation_id": [c[2] for c in calls],
        "name": ["cudaLaunchKernel"] * n,
    }
    return _table("api", cols, n)


#: an NVTX range: (start, end or None, pid, tid, text, style, depth)
def _nvtx(ranges: list[tuple]) -> pa.Table:
    n = len(ranges)
    cols = {
        "start": [r[0] for r in ranges],
        "end": [r[1] for r in ranges],
        "duration": [None if r[1] is None else r[1] - r[0] for r in ranges],
        "pid": [r[2] for r in ranges],
        "tid": [r[3] for r in ranges],
        "text": [r[4] for r in ranges],
        "style": [r[5] for r in ranges],
        "depth": [r[6] for r in ranges],
    }
    return _table("nvtx", cols, n)


def _trace(**tables: pa.Table) -> Trace:
    return Trace(dict(tables), TraceMeta(source="tiny", format="test"))


#: an ncu result: (id, name, demangled, mangled, grid_x or None, block_x, nvtx stack)
def _ncu(kernels: list[tuple]) -> KernelMetrics:
    cols = {
        "id": [k[0] for k in kernels],
        "name": [k[1] for k in kernels],
        "demangled": [k[2] for k in kernels],
        "mangled": [k[3] for k in kernels],
        "grid_x": [k[4] for k in kernels],
        "grid_y": [None if k[4] is None else 1 for k in kernels],
        "grid_z": [None if k[4] is None else 1 for k in kernels],
        "block_x": [k[5] for k in kernels],
        "block_y": [1] * len(kernels),
        "block_z": [1] * len(kernels),
        "duration_ns": [1000.0] * len(kernels),
        "nvtx_push_pop": [[{"domain": None, "name": t} for t in k[6]] or None for k in kernels],
    }
    return KernelMetrics({"kernels": make_table("kernels", cols)})


# --- A: by mangled name, NVTX contexts and launch order ----------------------------------

GEMM, RELU, OTHER = "_Z4gemmv", "_Z4reluv", "_Z5otherv"
#: (start, tid, name, mangled, grid_x, block_x, API start)
ROWS_A = [
    (200, 10, "gemm", GEMM, 4, 128, 150),  # r0  step 2 > forward
    (300, 10, "gemm", GEMM, 4, 128, 250),  # r1
    (400, 10, "relu", RELU, 8, 256, 350),  # r2
    (500, 10, "gemm", GEMM, 4, 128, 450),  # r3
    (950, 10, "gemm", GEMM, 4, 128, 850),  # r4  runs after forward ends, launched inside it
    (1200, 10, "gemm", GEMM, 4, 128, 1150),  # r5  step 3 > forward
    (1300, 10, "relu", RELU, 8, 256, None),  # r6  no API call: its own start, 1300
    (1400, 10, "gemm", GEMM, 4, 128, 1350),  # r7
    (1500, 10, "relu", RELU, 8, 256, 1450),  # r8
    (1600, 10, "gemm", GEMM, 4, 128, 1550),  # r9
    (1700, 10, "gemm", GEMM, 4, 128, 1650),  # r10
    (1750, 10, "gemm", GEMM, 2, 128, 1720),  # r11 another grid: similar only
    (1800, 11, "gemm", GEMM, 4, 128, 1790),  # r12 autograd thread: no ranges there
    (1950, 10, "other", OTHER, 1, 32, 1940),  # r13 no ncu result of this name
]
#: (start, end, pid, tid, text, style, depth)
NVTX_A = [
    (0, 1000, 1, 10, "step 2", "PushPop", 0),
    (100, 900, 1, 10, "forward", "PushPop", 1),
    (1000, 2000, 1, 10, "step 3", "PushPop", 0),
    (1100, 1900, 1, 10, "forward", "PushPop", 1),
    (0, 5000, 1, 10, "whole run", "StartEnd", 0),  # not push/pop: no context
    (1000, None, 1, 10, "never closed", "PushPop", 2),  # no end: covers nothing
    (0, 5000, 2, 10, "other process", "PushPop", 0),  # same tid, another pid
    (0, 5000, 1, 12, "other thread", "PushPop", 0),
]
FWD3 = ("step 3", "forward")
NCU_A = [
    (0, "gemm", "void gemm()", GEMM, 4, 128, FWD3),
    (1, "gemm", "void gemm()", GEMM, 4, 128, FWD3),
    (2, "gemm", "void gemm()", GEMM, 4, 128, FWD3),
    (3, "relu", "void relu()", RELU, 8, 256, FWD3),
    (4, "copy", "void copy()", "_Z4copyv", 1, 32, FWD3),  # not in the trace
]


def _link_a() -> L.NcuLink:
    trace = _trace(kernels=_kernels(ROWS_A), api=_api(ROWS_A), nvtx=_nvtx(NVTX_A))
    return L.build_link(trace, _ncu(NCU_A))


# By hand:
# * gemm, grid 4: step 2 > forward (launch times 150, 250, 450, 850; loose match, numbers
#   ignored, innermost range starts at 100): r0, r1, r3, r4 -> the first three by start
#   to ncu 0, 1, 2 (ORDER), r4 to all three (NVTX_LOOSE). step 3 > forward (exact,
#   innermost at 1100): r5, r7, r9, r10 -> r5, r7, r9 to 0, 1, 2 (ORDER), r10 to all
#   three (NVTX). r12 (no ranges on thread 11) matches only the configuration and is left
#   out because others matched their context; r11 (grid 2) is similar only.
# * relu, one result: r2 matches loosely (no order for one result: NVTX_LOOSE); r6, r8 in
#   step 3 > forward exactly: the first, r6, is the profiled one (ORDER), r8 NVTX.
# * choices in the order assigned: (0,), (1,), (2,), (0, 1, 2), (3,)
CHOICE_A = [0, 1, 4, 2, 3, 0, 4, 1, 4, 2, 3, -1, -1, -1]
OR, LO, NV, NO = L.ORDER, L.NVTX_LOOSE, L.NVTX, L.NONE
LEVEL_A = [OR, OR, LO, OR, LO, OR, OR, OR, NV, OR, NV, NO, NO, NO]


def test_choices_and_levels_by_hand() -> None:
    link = _link_a()
    assert link.matched_on == "mangled name"
    assert link.choices == [(0,), (1,), (2,), (0, 1, 2), (3,)]
    assert link.choice_of_row.tolist() == CHOICE_A
    assert link.level_of_row.tolist() == LEVEL_A
    assert link.choice_of_row.dtype == np.int64 and link.level_of_row.dtype == np.int8
    assert {k: v.tolist() for k, v in link.rows_of.items()} == {
        0: [0, 4, 5, 10],
        1: [1, 4, 7, 10],
        2: [3, 4, 9, 10],
        3: [2, 6, 8],
    }
    assert link.by_name == {"gemm": (0, 1, 2), "relu": (3,)}
    assert link.unmatched_ncu == [4]
    assert link.unmatched_nsys == ["other"]
    assert {k: v.tolist() for k, v in link.similar_of.items()} == {0: [11], 1: [11], 2: [11]}
    assert link.linked_ids == [0, 1, 2, 3]
    assert link.mask.tolist() == [True] * 11 + [False] * 3


def test_consecutive_results_take_consecutive_launches_in_a_range_instance() -> None:
    """Issue 35 item 9 with NVTX contexts: ncu 0, 1, 2 are the 1st, 2nd, 3rd gemm launch
    of each `step N > forward` (r0, r1, r3 and r5, r7, r9)."""
    link = _link_a()
    assert [link.exact_rows_for(k).tolist() for k in (0, 1, 2)] == [[0, 5], [1, 7], [3, 9]]
    assert link.exact_rows_for(3).tolist() == [6]
    assert link.exact_rows_for(4).tolist() == []
    assert link.jump_rows_for(0).tolist() == [0, 5, 4, 10]
    assert link.jump_rows_for(3).tolist() == [6, 2, 8]
    assert link.jump_rows_for(0).dtype == np.int64


def test_sentences_and_lookups() -> None:
    link = _link_a()
    assert link.count_line(5) == (
        "4 of 5 ncu results linked to 11 of 14 launches (same mangled name and grid/block)"
    )
    assert link.count_line(1234) == (
        "4 of 1,234 ncu results linked to 11 of 14 launches (same mangled name and grid/block)"
    )
    assert link.note_for(0) == "4 launches in the nsys report; Enter jumps to them"
    assert link.note_for(4) == "no launch of this kernel in the nsys report (unmatched)"
    assert link.describe(10) == (
        "3 ncu results: IDs 0, 1, 2 (same launch configuration and NVTX ranges)"
    )
    assert link.describe(0) == "ncu ID 0 (same NVTX range instance and launch order)"
    assert link.describe(2) == (
        "ncu ID 3 (same launch configuration and NVTX ranges (numbers ignored))"
    )
    assert link.describe(11) == "no ncu result"
    assert link.ids_for_row(4) == (0, 1, 2) and link.best_for_row(4) == 0
    assert link.ids_for_row(13) == () and link.best_for_row(13) is None
    assert link.ids_for_row(14) == () and link.ids_for_row(-1) == ()
    assert link.level(8) == L.NVTX and link.level(13) == L.NONE
    assert link.level(14) == L.NONE and link.level(-1) == L.NONE
    assert link.has(0) and not link.has(12) and not link.has(14) and not link.has(-1)
    assert link.similar_for(0).tolist() == [11]
    assert link.similar_for(3).tolist() == [] and link.similar_for(3).dtype == np.int64
    assert link.rows_for(4).tolist() == [] and link.rows_for(4).dtype == np.int64


# --- B: by kernel name (no mangled names), no NVTX at all ---------------------------------

ADD_NSYS = "void at::native::add_kernel<(int)4>(float*)"
ADD_NCU = "void at::add_kernel<4>(float*)"
#: (start, tid, name, mangled, grid_x, block_x, API start)
ROWS_B = [
    (100, 10, ADD_NSYS, None, 1, 64, 50),  # a0
    (200, 10, ADD_NSYS, None, 1, 64, 150),  # a1
    (300, 10, ADD_NSYS, None, 1, 64, 250),  # a2
    (400, 10, ADD_NSYS, None, 2, 64, 350),  # a3: a grid no result has
    (500, 10, "scale", None, 3, 32, 450),  # s0
    (600, 10, "scale", None, 5, 32, 550),  # s1
    (700, 10, "unknown", None, 1, 32, 650),  # u0
]
NCU_B = [
    (0, "add_kernel", ADD_NCU, None, 1, 64, ()),
    (1, "add_kernel", ADD_NCU, None, 1, 64, ()),
    (2, "scale", None, None, None, 32, ()),  # no grid recorded: any launch configuration
    (3, "add_kernel", ADD_NCU, None, 9, 64, ()),  # a grid no launch has: similar only
]


def _link_b() -> L.NcuLink:
    trace = _trace(kernels=_kernels(ROWS_B), api=_api(ROWS_B))
    return L.build_link(trace, _ncu(NCU_B))


def test_by_kernel_name_without_contexts() -> None:
    """`add`: normalized names agree (casts and at::native:: dropped); a0-a2 have ncu 0
    and 1's grid, and no NVTX anywhere: the run is the one instance, so by start a0 is
    ncu 0 and a1 ncu 1 (LAUNCH_ORDER, issue 35 item 9), a2 either (LAUNCH); ncu 3's grid 9
    has no launch, a3's grid 2 no result: similar. `scale` has no grid in ncu: s0 and s1
    (two configurations) are both its launches, the first of them (s0) the profiled one.
    Choices in the order assigned: (0,), (1,), (0, 1), (2,)."""
    link = _link_b()
    assert link.matched_on == "kernel name"
    assert link.choices == [(0,), (1,), (0, 1), (2,)]
    assert link.choice_of_row.tolist() == [0, 1, 2, -1, 3, 3, -1]
    lo, la, no = L.LAUNCH_ORDER, L.LAUNCH, L.NONE
    assert link.level_of_row.tolist() == [lo, lo, la, no, lo, la, no]
    assert {k: v.tolist() for k, v in link.rows_of.items()} == {
        0: [0, 2],
        1: [1, 2],
        2: [4, 5],
    }
    assert link.by_name == {ADD_NSYS: (0, 1), "scale": (2,)}
    assert link.unmatched_ncu == [3] and link.unmatched_nsys == ["unknown"]
    assert {k: v.tolist() for k, v in link.similar_of.items()} == {0: [3], 1: [3], 3: [3]}
    assert link.count_line(4) == (
        "3 of 4 ncu results linked to 5 of 7 launches (same name and grid/block); "
        "1 more similar, not linked"
    )
    assert link.note_for(3) == (
        "not linked: 1 launches in the nsys report are similar (the same short name, or the "
        "same kernel with another grid/block), not this launch"
    )
    assert link.describe(2) == "2 ncu results: IDs 0, 1 (same name and launch configuration)"
    assert link.describe(0) == (
        "ncu ID 0 (same name and launch configuration, and launch order (no NVTX context))"
    )
    assert link.exact_rows_for(2).tolist() == [4]
    assert link.jump_rows_for(2).tolist() == [4, 5]


def test_consecutive_results_take_consecutive_launches_without_ranges() -> None:
    """Issue 35 item 9: ncu 0 and 1 (one kernel, one configuration, no NVTX) are its 1st
    and 2nd launch, a0 and a1; Enter steps from there to a2, which either may be."""
    link = _link_b()
    assert link.exact_rows_for(0).tolist() == [0]
    assert link.exact_rows_for(1).tolist() == [1]
    assert link.jump_rows_for(0).tolist() == [0, 2]
    assert link.jump_rows_for(1).tolist() == [1, 2]


# --- LaneMarks ------------------------------------------------------------------------------


def test_lane_marks_by_hand() -> None:
    """mask: rows 0, 2, 3 linked; row 7 lies beyond the mask (not linked). Starts of the
    linked rows: 10, 30, 40. Columns [0,10) [10,25) [25,35) [35,45) [45,60): 10 falls in
    the second (a start on an edge belongs to the column it opens)."""
    marks = L.LaneMarks(np.array([True, False, True, True]))
    rows = np.array([0, 1, 2, 3, 7, 4])  # 4 and 7: beyond the mask
    starts = np.array([10, 20, 30, 40, 50, 60])
    edges = np.array([0, 10, 25, 35, 45, 60])
    assert marks.starts(5, starts, rows).tolist() == [10, 30, 40]
    assert marks.columns(5, starts, rows, edges).tolist() == [False, True, True, True, False]
    # cached per key: other starts for the same lane are not looked at again
    assert marks.starts(5, starts + 1000, rows).tolist() == [10, 30, 40]
    # another lane (key) has its own starts: one linked launch at 12
    cols = marks.columns(6, np.array([12, 22]), np.array([0, 1]), edges)
    assert cols.tolist() == [False, True, False, False, False] and cols.dtype == bool
    none = L.LaneMarks(np.zeros(4, bool))
    cols = none.columns(1, starts, rows, edges)
    assert cols.tolist() == [False] * 5 and cols.dtype == bool
    assert none.columns(2, starts, rows, np.zeros(0, np.int64)).tolist() == []
    assert none.columns(3, starts, rows, np.array([5])).tolist() == []


# --- C: one NVTX range, null ids and styles, null grid dimensions -------------------------

#: (start, tid, name, mangled, grid_x, block_x, API start); thread 1 of process 1
ROWS_C = [
    (100, 1, "k", None, 4, 32, 50),  # c0: API call at index 0 (listed first), in `fwd`
    (200, 1, "k", None, 4, 32, 150),  # c1
    (300, 1, "k", None, 4, 32, 250),  # c2: grid_y, grid_z null below: not (4, 1, 1)
]
NCU_C = [(0, "k", "k", None, 4, 32, ("fwd",)), (1, "k", "k", None, 4, 32, ("fwd",))]


def test_one_range_null_ids_and_null_grid() -> None:
    """`fwd` [0, 1000) on (1, 1) is the only range that counts: a range with no style, one
    with no pid and one with no tid (on the same thread were a null read as 1) are not
    push/pop ranges of (1, 1). The launches run at 100 and 200 (API calls at 50 and 150):
    ncu 0 and 1 in order (ORDER). c2 has null grid_y and grid_z: not ncu's (4, 1, 1), so
    similar, not linked."""
    kt = _kernels(ROWS_C)
    i = kt.column_names.index("grid_y")
    nulls = pa.array([1, 1, None], pa.int32())
    kt = kt.set_column(i, "grid_y", nulls)
    kt = kt.set_column(kt.column_names.index("grid_z"), "grid_z", nulls)
    calls = _api(ROWS_C).to_pylist()
    api = pa.Table.from_pylist([calls[-1], *calls[:-1]], schema=_api(ROWS_C).schema)
    nvtx = _nvtx(
        [
            (0, 1000, 1, 1, "fwd", "PushPop", 0),
            (0, 1000, 1, 1, "no style", None, 0),
            (0, 1000, None, 1, "no pid", "PushPop", 0),
            (0, 1000, 1, None, "no tid", "PushPop", 0),
        ]
    )
    link = L.build_link(_trace(kernels=kt, api=api, nvtx=nvtx), _ncu(NCU_C))
    assert link.choices == [(0,), (1,)]
    assert link.choice_of_row.tolist() == [0, 1, -1]
    assert link.level_of_row.tolist() == [L.ORDER, L.ORDER, L.NONE]
    assert {k: v.tolist() for k, v in link.similar_of.items()} == {0: [2], 1: [2]}
    # the same with `fwd` alone: one NVTX row
    only = _nvtx([(0, 1000, 1, 1, "fwd", "PushPop", 0)])
    link = L.build_link(_trace(kernels=kt, api=api, nvtx=only), _ncu(NCU_C))
    assert link.level_of_row.tolist() == [L.ORDER, L.ORDER, L.NONE]


def test_api_call_at_index_0_sets_the_launch_time() -> None:
    """c0 runs at 1100, after `fwd` [0, 1000) ends; its API call (the first API row) at 50
    is inside: c0 is in the range and the first of it (ncu 0)."""
    rows = [(1100, 1, "k", None, 4, 32, 50), (200, 1, "k", None, 4, 32, None)]
    api = _api(rows)
    assert api["correlation_id"].to_pylist() == [100]  # one call, row 0 of the API table
    nvtx = _nvtx([(0, 1000, 1, 1, "fwd", "PushPop", 0)])
    link = L.build_link(_trace(kernels=_kernels(rows), api=api, nvtx=nvtx), _ncu(NCU_C))
    # both in `fwd` (c1 by its own start, 200): by start, c1 first (ncu 0), c0 second
    assert link.choice_of_row.tolist() == [1, 0]
    assert link.level_of_row.tolist() == [L.ORDER, L.ORDER]


# --- D: range edges, threads without ranges, contexts that match nothing --------------------

NCU_D = [(0, "k", "k", None, 4, 32, ("fwd",)), (1, "b", "b", None, 4, 32, ())]


def _link_d(rows: list[tuple], ranges: list[tuple], ncu: list[tuple] = NCU_D) -> L.NcuLink:
    trace = _trace(kernels=_kernels(rows), api=_api(rows), nvtx=_nvtx(ranges))
    return L.build_link(trace, _ncu(ncu))


def test_a_call_on_the_range_start_is_inside_it() -> None:
    """One launch (API call at 100, `fwd` [100, 200)) and one ncu result: in the range
    instance, the first launch: ORDER."""
    link = _link_d([(150, 1, "k", None, 4, 32, 100)], [(100, 200, 1, 1, "fwd", "PushPop", 0)],
                   NCU_D[:1])  # fmt: skip
    assert link.choice_of_row.tolist() == [0] and link.level_of_row.tolist() == [L.ORDER]
    # choice 0 is a choice: `k` has ncu 0
    assert link.by_name == {"k": (0,)} and link.unmatched_nsys == []


def test_a_call_on_the_range_end_is_outside_it() -> None:
    """`fwd` [100, 200): row 0's call at 200 is outside (no range: configuration only, left
    out because row 1's call at 100 matched the context); row 1 is ncu 0's launch. Row 0
    comes first in the table, so its bucket is met first and must be skipped, not end
    the loop."""
    rows = [(210, 1, "k", None, 4, 32, 200), (110, 1, "k", None, 4, 32, 100)]
    link = _link_d(rows, [(100, 200, 1, 1, "fwd", "PushPop", 0)])
    assert link.choice_of_row.tolist() == [-1, 0]
    assert link.level_of_row.tolist() == [L.NONE, L.ORDER]


def test_no_ranges_on_either_side_order_over_the_run() -> None:
    """ncu 1 (`b`) was profiled with an empty NVTX stack (the capture has stacks: ncu 0
    has one). Its launches from thread 2 (no ranges at all) and thread 3 (its range [0, 10)
    closed before the call at 40) have empty stacks too: the same context (NVTX), and the
    run is their instance: the first by start (row 1, at 50) is the profiled one (ORDER),
    row 0 (at 60) NVTX."""
    rows = [(60, 2, "b", None, 4, 32, 50), (50, 3, "b", None, 4, 32, 40)]
    link = _link_d(rows, [(0, 10, 1, 3, "x", "PushPop", 0)])
    assert link.choice_of_row.tolist() == [0, 0] and link.choices == [(1,)]
    assert link.level_of_row.tolist() == [L.NVTX, L.ORDER]
    assert link.exact_rows_for(1).tolist() == [1]
    assert link.unmatched_ncu == [0]


def test_a_context_that_matches_no_result_is_not_ordered() -> None:
    """Both launches run in `other` (no ncu result has it, not even loosely): configuration
    only, both results for both launches (LAUNCH), not ORDER."""
    rows = [(110, 1, "k", None, 4, 32, 100), (160, 1, "k", None, 4, 32, 150)]
    ncu = [(0, "k", "k", None, 4, 32, ("fwd",)), (1, "k", "k", None, 4, 32, ("fwd",))]
    link = _link_d(rows, [(0, 1000, 1, 1, "other", "PushPop", 0)], ncu)
    assert link.choices == [(0, 1)]
    assert link.level_of_row.tolist() == [L.LAUNCH, L.LAUNCH]


def test_mangled_names_on_the_ncu_side_only_match_by_name() -> None:
    """Case B with mangled names in the ncu report but none in the trace: by name, the
    same links."""
    ncu = [(k[0], k[1], k[2], f"_Z{k[0]}", *k[4:]) for k in NCU_B]
    link = L.build_link(_trace(kernels=_kernels(ROWS_B), api=_api(ROWS_B)), _ncu(ncu))
    assert link.matched_on == "kernel name"
    assert link.choice_of_row.tolist() == [0, 1, 2, -1, 3, 3, -1]


def test_nothing_to_match() -> None:
    """No kernels, or no ncu results: nothing linked, and the sentence says mangled names
    (the default)."""
    link = L.build_link(_trace(), _ncu(NCU_D))
    assert link.matched_on == "mangled name" and link.unmatched_ncu == [0, 1]
    assert link.count_line(2) == (
        "0 of 2 ncu results linked to 0 of 0 launches (same mangled name and grid/block)"
    )
    link = L.build_link(_trace(kernels=_kernels(ROWS_B)), _ncu([]))
    assert link.matched_on == "mangled name" and link.choice_of_row.tolist() == [-1] * 7
    assert link.unmatched_nsys == sorted({ADD_NSYS, "scale", "unknown"})


# --- E: a null pid, tid or correlation id names no process, thread or call ----------------


def _one_launch(kpid, ktid, kcorr, kstart: int, apid, acorr, npid=1, ntid=1) -> int:
    """The level of a single launch of `k` (kernel running at `kstart`) with one API call
    at 50 and `fwd` [0, 1000) open on process `npid`, thread `ntid` (1, 1)."""
    kt = schema.conform(
        "kernels",
        {
            "start": pa.array([kstart], I64),
            "end": pa.array([kstart + 10], I64),
            "pid": pa.array([kpid], I64),
            "tid": pa.array([ktid], I64),
            "correlation_id": pa.array([kcorr], I64),
            "name": _dict(["k"]),
            "grid_x": pa.array([4], I64),
            "grid_y": pa.array([1], I64),
            "grid_z": pa.array([1], I64),
            "block_x": pa.array([32], I64),
            "block_y": pa.array([1], I64),
            "block_z": pa.array([1], I64),
        },
        1,
    )
    api = _table(
        "api",
        {"start": [50], "end": [55], "pid": [apid], "tid": [1], "correlation_id": [acorr]},
        1,
    )
    nvtx = _nvtx([(0, 1000, npid, ntid, "fwd", "PushPop", 0)])
    link = L.build_link(_trace(kernels=kt, api=api, nvtx=nvtx), _ncu(NCU_D[:1]))
    return link.level(0)


def test_null_ids_name_no_process_thread_or_call() -> None:
    """A launch is in `fwd` only when its own process and thread hold the range at its
    launch time: through its API call (same process and correlation id, both known) at 50,
    or its own start when inside [0, 1000). In the range: ORDER; else configuration only
    (LAUNCH). Nulls match nothing (not process 1, thread 1 or correlation id 1)."""
    assert _one_launch(1, 1, 1, 2000, 1, 1) == L.ORDER  # the call at 50 is in `fwd`
    assert _one_launch(1, 1, 1, 500, 1, 1) == L.ORDER
    assert _one_launch(None, 1, 5, 500, 1, 6) == L.LAUNCH  # no process: no ranges
    assert _one_launch(1, None, 5, 500, 1, 6) == L.LAUNCH  # no thread: no ranges
    assert _one_launch(1, 1, None, 2000, 1, 1) == L.LAUNCH  # no call: runs at 2000
    assert _one_launch(1, 1, 7, 2000, None, 7) == L.LAUNCH  # the call is no process's
    assert _one_launch(1, 1, 1, 2000, 1, None) == L.LAUNCH  # the call has no id


def test_two_null_ids_are_not_the_same_id() -> None:
    """A null id is unknown (Kineto leaves a kernel's pid and tid null when its launching
    call is missing; nsys a kernel's tid when no call has its correlation id): two unknown
    ids are not known to be one process, thread or call, so nulls on both sides match
    nothing either. Each case would be in `fwd` (ORDER) were two nulls equal."""
    # both correlation ids null: the call at 50 is not this launch's; it runs at 2000
    assert _one_launch(1, 1, None, 2000, 1, None) == L.LAUNCH
    # kernel, call and range all without a process
    assert _one_launch(None, 1, 7, 2000, None, 7, npid=None) == L.LAUNCH
    assert _one_launch(None, 1, 7, 500, 1, 8, npid=None) == L.LAUNCH
    # kernel and range without a thread (the kernel runs inside the range's time)
    assert _one_launch(1, None, 5, 500, 1, 6, ntid=None) == L.LAUNCH
    assert _one_launch(None, None, 5, 500, 1, 6, npid=None, ntid=None) == L.LAUNCH
    # nor id 0 (a real thread, call or process id here)
    assert _one_launch(1, 1, None, 2000, 1, 0) == L.LAUNCH
    assert _one_launch(1, 1, 0, 2000, 1, None) == L.LAUNCH
    assert _one_launch(None, 1, 7, 2000, 0, 7, npid=0) == L.LAUNCH
    assert _one_launch(1, None, 5, 500, 1, 6, ntid=0) == L.LAUNCH
    assert _one_launch(1, 0, 5, 500, 1, 6, ntid=None) == L.LAUNCH
    # a null pid on one side, process 0 on the other: the call, the range
    assert _one_launch(0, 1, 7, 2000, None, 7, npid=0) == L.LAUNCH
    assert _one_launch(None, 1, 7, 500, 0, 8, npid=0) == L.LAUNCH
    assert _one_launch(0, 1, 7, 500, 0, 8, npid=None) == L.LAUNCH
    # the same launches with the ids known: in `fwd`
    assert _one_launch(0, 1, 7, 500, 0, 8, npid=0) == L.ORDER
    assert _one_launch(1, 1, 0, 2000, 1, 0) == L.ORDER
    assert _one_launch(0, 1, 7, 2000, 0, 7, npid=0) == L.ORDER
    assert _one_launch(1, 0, 5, 500, 1, 6, ntid=0) == L.ORDER
    assert _one_launch(1, 1, 7, 2000, 1, 7) == L.ORDER
    assert _one_launch(1, 1, 5, 500, 1, 6) == L.ORDER


def test_a_launch_from_an_unknown_thread_has_an_unknown_context() -> None:
    """ncu recorded stacks (ncu 0 in `fwd`), ncu 1 (`b`) an empty one. A launch of `b`
    from thread 2, which has no ranges, has an empty stack too: the run's first, ORDER. The
    same launch with a null tid has an unknown context, which equals no recorded one, not
    even the empty stack: configuration only (LAUNCH)."""
    kt = _kernels([(500, 2, "b", None, 4, 32, 450)])
    api = _api([(500, 2, "b", None, 4, 32, 450)])
    link = L.build_link(_trace(kernels=kt, api=api), _ncu(NCU_D))
    assert link.level_of_row.tolist() == [L.ORDER] and link.exact_rows_for(1).tolist() == [0]
    kt = kt.set_column(kt.column_names.index("tid"), "tid", pa.array([None], I64))
    link = L.build_link(_trace(kernels=kt, api=api), _ncu(NCU_D))
    assert link.level_of_row.tolist() == [L.LAUNCH] and link.choices == [(1,)]


def test_no_push_pop_ranges_at_all() -> None:
    """Only a start/end range: no push/pop context anywhere, so the one launch of ncu 0
    (profiled in `fwd`) matches by configuration only."""
    rows = [(150, 1, "k", None, 4, 32, 100)]
    link = _link_d(rows, [(0, 1000, 1, 1, "fwd", "StartEnd", 0)], NCU_D[:1])
    assert link.choice_of_row.tolist() == [0] and link.level_of_row.tolist() == [L.LAUNCH]


def test_launches_that_start_together_keep_their_row_order() -> None:
    """60 launches in one `fwd` instance, 60 ncu results: by start, and among launches that
    start on the same ns, in row order (a stable sort). Rows 1, 3, ..., 59 start at 1003,
    rows 0, 2, ..., 58 at 1005: row 2i+1 is ncu i, row 2i is ncu 30 + i."""
    rows = [(1005 if r % 2 == 0 else 1003, 1, "k", None, 4, 32, 100) for r in range(60)]
    ncu = [(i, "k", "k", None, 4, 32, ("fwd",)) for i in range(60)]
    link = _link_d(rows, [(0, 2000, 1, 1, "fwd", "PushPop", 0)], ncu)
    want = [30 + r // 2 if r % 2 == 0 else r // 2 for r in range(60)]
    assert [link.ids_for_row(r) for r in range(60)] == [(k,) for k in want]
    assert set(link.level_of_row.tolist()) == {L.ORDER}


def test_two_results_in_a_loosely_matched_instance_are_ordered() -> None:
    """ncu 0 and 1 of `k` were profiled in `step 3 > fwd`; the trace has `k` three times in
    `step 2 > fwd` only (numbers ignored: NVTX_LOOSE). Several results are ordered in any
    matched instance: rows 0, 1 are ncu 0, 1 (ORDER), row 2 either (NVTX_LOOSE)."""
    rows = [(100 * i, 1, "k", None, 4, 32, 100 * i - 10) for i in (2, 3, 4)]
    ranges = [(0, 1000, 1, 1, "step 2", "PushPop", 0), (50, 900, 1, 1, "fwd", "PushPop", 1)]
    ncu = [(i, "k", "k", None, 4, 32, ("step 3", "fwd")) for i in (0, 1)]
    link = _link_d(rows, ranges, ncu)
    assert link.choices == [(0,), (1,), (0, 1)]
    assert link.level_of_row.tolist() == [L.ORDER, L.ORDER, L.NVTX_LOOSE]


# --- F: no NVTX context to compare vs a context that matches nothing (issue 35 item 9) ----


def test_a_capture_without_nvtx_orders_over_the_whole_run() -> None:
    """ncu 0-2 of `k` recorded no NVTX (no `--nvtx`); the trace runs `k` twice in `step 1`
    [0, 1000) and twice in `step 2` [1000, 2000). ncu took the first three launches of the
    run, whatever ranges were open: rows 0, 1, 2 (starts 100, 200, 1100) are ncu 0, 1, 2
    (LAUNCH_ORDER), row 3 any of them (LAUNCH). Ordering per range instance would give
    row 2 ncu 0 instead."""
    rows = [(100 * s, 1, "k", None, 4, 32, 100 * s - 50) for s in (1, 2, 11, 12)]
    ranges = [(0, 1000, 1, 1, "step 1", "PushPop", 0), (1000, 2000, 1, 1, "step 2", "PushPop", 0)]
    ncu = [(i, "k", "k", None, 4, 32, ()) for i in range(3)]
    link = _link_d(rows, ranges, ncu)
    assert link.choices == [(0,), (1,), (2,), (0, 1, 2)]
    assert link.choice_of_row.tolist() == [0, 1, 2, 3]
    lo = L.LAUNCH_ORDER
    assert link.level_of_row.tolist() == [lo, lo, lo, L.LAUNCH]
    assert [link.exact_rows_for(k).tolist() for k in range(3)] == [[0], [1], [2]]
    facts_text = L.LEVEL_TEXT[link.level(0)]
    assert facts_text == "same name and launch configuration, and launch order (no NVTX context)"
    assert L.LEVEL_SHORT[lo] == "+ launch order"


def test_results_outnumbering_the_launches_are_not_ordered() -> None:
    """Three results of `k` without NVTX and two launches in the trace: ncu did not profile
    this run's first launches (there are too few), so both launches may be any of the
    three (LAUNCH); with as many launches as results (the boundary) they are ordered."""
    ncu = [(i, "k", "k", None, 4, 32, ()) for i in range(3)]
    two = [(100, 1, "k", None, 4, 32, 50), (200, 1, "k", None, 4, 32, 150)]
    link = _link_d(two, [], ncu)
    assert link.choices == [(0, 1, 2)] and link.level_of_row.tolist() == [L.LAUNCH] * 2
    three = [*two, (300, 1, "k", None, 4, 32, 250)]
    link = _link_d(three, [], ncu)
    assert link.choice_of_row.tolist() == [0, 1, 2]
    assert link.level_of_row.tolist() == [L.LAUNCH_ORDER] * 3


def test_launch_configurations_are_ordered_apart() -> None:
    """ncu 0 (grid 4), 1 (grid 8), 2 (grid 4), no NVTX; launches g4, g8, g4, g4, g8 (rows
    0-4 by start). Grid 4: rows 0, 2 are ncu 0, 2, row 3 either; grid 8: row 1 is ncu 1,
    row 4 ncu 1 too (the only candidate, LAUNCH). Choices in the order assigned: grid 4's
    bucket first (the lower configuration code): (0,), (2,), (0, 2), then (1,)."""
    grids = [4, 8, 4, 4, 8]
    rows = [(100 * (i + 1), 1, "k", None, g, 32, 100 * (i + 1) - 50) for i, g in enumerate(grids)]
    ncu = [(0, "k", "k", None, 4, 32, ()), (1, "k", "k", None, 8, 32, ()),
           (2, "k", "k", None, 4, 32, ())]  # fmt: skip
    link = _link_d(rows, [], ncu)
    assert link.choices == [(0,), (2,), (0, 2), (1,)]
    assert link.choice_of_row.tolist() == [0, 3, 1, 2, 3]
    lo, la = L.LAUNCH_ORDER, L.LAUNCH
    assert link.level_of_row.tolist() == [lo, lo, lo, la, la]
    assert [link.exact_rows_for(k).tolist() for k in range(3)] == [[0], [1], [2]]


def test_a_result_without_a_grid_is_ordered_once_over_its_configurations() -> None:
    """ncu 0 recorded no grid and no NVTX; its launches run with grids 8 (row 0, at 300)
    and 4 (row 1, at 100). One result, one profiled launch: the run's first, row 1
    (LAUNCH_ORDER); row 0 is its launch too (LAUNCH), not a second first launch."""
    rows = [(300, 1, "k", None, 8, 32, 250), (100, 1, "k", None, 4, 32, 50)]
    link = _link_d(rows, [], [(0, "k", "k", None, None, 32, ())])
    assert link.choice_of_row.tolist() == [0, 0]
    assert link.level_of_row.tolist() == [L.LAUNCH, L.LAUNCH_ORDER]
    assert link.exact_rows_for(0).tolist() == [1]


def test_empty_stacks_are_ordered_and_a_foreign_context_is_left_out() -> None:
    """The capture recorded stacks (ncu 2 was profiled in `fwd`); ncu 0 and 1 of `k` were
    profiled with empty stacks. Row 0 (at 100) runs in `other` [0, 150) (a context neither
    has: never ordered, and left out since other launches match theirs); rows 1-3 (at 200,
    300, 400) run outside every range, as ncu 0 and 1 were: the run is their instance, rows
    1 and 2 are ncu 0 and 1 (ORDER), row 3 either (NVTX)."""
    rows = [(100 * i, 1, "k", None, 4, 32, 100 * i - 10) for i in (1, 2, 3, 4)]
    ncu = [(0, "k", "k", None, 4, 32, ()), (1, "k", "k", None, 4, 32, ()),
           (2, "f", "f", None, 1, 32, ("fwd",))]  # fmt: skip
    link = _link_d(rows, [(0, 150, 1, 1, "other", "PushPop", 0)], ncu)
    assert link.choices == [(0,), (1,), (0, 1)]
    assert link.choice_of_row.tolist() == [-1, 0, 1, 2]
    assert link.level_of_row.tolist() == [L.NONE, L.ORDER, L.ORDER, L.NVTX]
    # without the empty-stack launches, `other` (now holding two launches, at 100 and
    # 120) matches no result: configuration only, both results for both, not ordered
    two = [rows[0], (120, 1, "k", None, 4, 32, 110)]
    link = _link_d(two, [(0, 150, 1, 1, "other", "PushPop", 0)], ncu)
    assert link.choices == [(0, 1)] and link.level_of_row.tolist() == [L.LAUNCH] * 2
