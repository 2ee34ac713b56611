"""Oracle: communication kernels hidden by compute (analysis.budget.comm.comm_by_device) on two
devices. Only compute on the *same* device hides a collective: device 1 runs one long
compute kernel that covers device 0's collectives in time, and must hide none of them.
The hand-built case is worked out in comments; the random ones against a brute force over
a nanosecond grid, device by device."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from tests.support.tiny import Gpu, busy_grid, gpu_table, kernels_trace, trace_of
from tuiperf import schema
from tuiperf.analysis.budget.comm import (
    collective_ranges,
    comm_by_device,
    comm_kernel_mask,
    loop_comm,
    overlap_by_step,
)
from tuiperf.analysis.budget.context import Ctx

AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
AG = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
RS = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
SR = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32"

#: (start, end, device, stream, name)
ROWS: list[Gpu] = [
    # device 0
    (100, 200, 0, 2, AR),  # hidden by the union [150, 180) of the two gemms: 30
    (300, 400, 0, 2, AR),  # hidden by [390, 450): 10
    (500, 600, 0, 2, AG),  # under SendRecv only (communication hides nothing): 0
    (550, 650, 0, 3, SR),  # under AllGather only: 0
    (150, 170, 0, 1, GEMM),
    (160, 180, 0, 1, GEMM),
    (390, 450, 0, 1, GEMM),
    # device 1: one compute kernel over all of device 0's collectives
    (0, 1000, 1, 1, GEMM),
    (700, 760, 1, 2, AR),  # inside [0, 1000): 60
    (1000, 1100, 1, 2, RS),  # starts where the compute ends: 0
]


def _rows(rows: list[Gpu]) -> list[tuple[int, str, int, int, int, int]]:
    out = comm_by_device(Ctx(kernels_trace(rows)))
    return [(r.device, r.collective, r.count, r.total_ns, r.overlapped_ns, r.exposed_ns)
            for r in out]  # fmt: skip


def test_two_devices_by_hand() -> None:
    assert _rows(ROWS) == [
        # device, collective, calls, total, hidden, exposed
        (0, "AllReduce", 2, 200, 40, 160),
        (0, "AllGather", 1, 100, 0, 100),
        (0, "SendRecv", 1, 100, 0, 100),
        (1, "ReduceScatter", 1, 100, 0, 100),
        (1, "AllReduce", 1, 60, 60, 0),
    ]


def test_compute_on_another_device_hides_nothing() -> None:
    # device 0 keeps only its collectives; device 1 computes over all of them
    alone = [r for r in ROWS if r[2] == 1 or r[4] != GEMM]
    assert [x[4] for x in _rows(alone) if x[0] == 0] == [0, 0, 0]


def _brute(rows: list[Gpu]) -> dict[tuple[int, str], tuple[int, int, int]]:
    """(device, collective) -> (calls, total ns, ns under same-device compute)."""
    out: dict[tuple[int, str], tuple[int, int, int]] = {}
    kinds = {AR: "AllReduce", AG: "AllGather", RS: "ReduceScatter", SR: "SendRecv"}
    for s, e, dev, _stream, name in rows:
        if name == GEMM:
            continue
        compute = [(a, b) for a, b, d, _, n in rows if d == dev and n == GEMM]
        hidden = int(busy_grid(compute, s, e).sum())
        n, t, h = out.get((dev, kinds[name]), (0, 0, 0))
        out[(dev, kinds[name])] = (n + 1, t + e - s, h + hidden)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_random_two_device_data_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = [AR, AG, RS, SR, GEMM, GEMM, GEMM]
    rows: list[Gpu] = []
    for _ in range(40):
        s = int(rng.integers(0, 2000))
        rows.append((s, s + int(rng.integers(1, 150)), int(rng.integers(0, 2)),
                     int(rng.integers(0, 4)), str(rng.choice(names))))  # fmt: skip
    got = {(d, c): (n, t, h) for d, c, n, t, h, _ in _rows(rows)}
    assert got == _brute(rows)


def test_null_device_and_unnamed_collective() -> None:
    k = gpu_table("kernels", [(0, 10, 0, 2, "ncclDevKernel_Generic"), (20, 50, 0, 2, AR)])
    dev = pa.array([None, None], pa.int32())
    k = k.set_column(k.schema.get_field_index("device"), "device", dev)
    rows = comm_by_device(Ctx(trace_of(kernels=k)))
    # no device recorded: -1; a kernel naming no collective: "other"
    assert [r.to_json() for r in rows] == [
        {"device": -1, "collective": "AllReduce", "count": 1, "total_ns": 30,
         "overlapped_ns": 0, "exposed_ns": 30, "bytes": None},
        {"device": -1, "collective": "other", "count": 1, "total_ns": 10,
         "overlapped_ns": 0, "exposed_ns": 10, "bytes": None},
    ]  # fmt: skip


def test_no_kernels_no_mask() -> None:
    mask = comm_kernel_mask(Ctx(trace_of()))
    assert mask.dtype == bool and len(mask) == 0
    assert comm_by_device(Ctx(trace_of())) == []


#: nvtx rows: (start, end or None, text, domain)
Range = tuple[int, "int | None", str, str]


def _ranges(rows: list[Range]) -> list[int]:
    nvtx = schema.conform(
        "nvtx",
        {
            "start": pa.array([r[0] for r in rows], pa.int64()),
            "end": pa.array([r[1] for r in rows], pa.int64()),
            "text": pa.array([r[2] for r in rows], pa.string()).dictionary_encode(),
            "domain": pa.array([r[3] for r in rows], pa.string()).dictionary_encode(),
        },
        len(rows),
    )
    got = collective_ranges(Ctx(trace_of(nvtx=nvtx)))
    assert got.dtype == np.int64
    return got.tolist()


def test_collective_ranges_by_hand() -> None:
    assert _ranges([]) == []
    assert _ranges([(5, 9, "ncclAllReduce", "NCCL")]) == [0]  # one row
    assert _ranges([(0, None, "ncclAllReduce", "NCCL")]) == []  # never ended, at 0 ns
    rows: list[Range] = [
        (0, 50, "ncclAllReduce", "NCCL"),  # 0: the outer one of a pair starting together
        (0, 100, "ncclAllGather", "NCCL"),  # 1: longer, so outermost: kept
        (10, 100, "allreduce bucket", ""),  # 2: ends with 1: inside it
        (200, 200, "ncclAllReduce", "NCCL"),  # 3: zero length: not a call
        (0, None, "ncclBroadcast", "NCCL"),  # 4: never ended: not a call
        (300, 400, "ncclCommInitRank", "NCCL"),  # 5: set-up, not a collective
        (500, 600, "step 3", ""),  # 6: not a collective
        (700, 800, "ncclReduceScatter", "NCCL"),  # 7: kept
    ]
    assert _ranges(rows) == [1, 7]


@pytest.mark.parametrize("backend", ["gloo", "nccl"])
def test_torch_backend_ranges_win(backend: str) -> None:
    rows: list[Range] = [
        (0, 100, "c10d::allreduce_", ""),  # queues the collective only
        (10, 90, f"{backend}:all_reduce", ""),  # the backend running it: the call
        (10, 90, f"{backend}:all_reduce", "gpu_user_annotation"),  # its GPU mirror: never
        (200, 300, "c10d::allgather_", ""),
        (400, 500, f"{backend}:all_gather", "gpu_user_annotation"),  # a mirror alone
    ]
    assert _ranges(rows) == [1]


def _fake_budget(ctx: Ctx, device: int, comm_exposed: list[int], tid: int | None = None) -> Ctx:
    """Steps [0, 100) and [100, 200) on `device`, with the budget's exposed comm per step
    given (loop_comm takes it from the budget as it is)."""
    steps = [
        SimpleNamespace(label=f"step {i}", start_ns=a, end_ns=a + 100, cpu_start_ns=a,
                        cpu_end_ns=a + 100, parts=SimpleNamespace(ns={"comm": x}))
        for i, (a, x) in enumerate(zip((0, 100), comm_exposed))
    ]  # fmt: skip
    main = SimpleNamespace(device=device, steps=steps)
    ctx.__dict__["budget"] = SimpleNamespace(main=main, devices=[main])
    ctx.__dict__["steps"] = SimpleNamespace(tid=tid)
    return ctx


def _null(table: pa.Table, column: str, row: int) -> pa.Table:
    """`table` with `column` null in `row` (a kernel with no device, a range with no tid)."""
    values = table[column].to_pylist()
    values[row] = None
    i = table.schema.get_field_index(column)
    return table.set_column(i, column, pa.array(values, table.schema.field(column).type))


@pytest.mark.parametrize("main", [0, 1])
def test_loop_comm_from_kernels_by_hand(main: int) -> None:
    rows: list[Gpu] = [
        (100, 110, main, 2, AR),  # on step 1's first ns: step 1
        (20, 40, main, 3, AG),  # inside the AllReduce below: the union of step 0 is 40
        (10, 50, main, 2, AR),  # by start it comes first, by end last
        (200, 210, main, 2, AR),  # where the last step ends: in no step
        (50, 60, main + 1, 2, AR),  # another device
        (60, 70, main, 2, AR),  # no device recorded (made null below): on no device
    ]
    kernels = _null(gpu_table("kernels", rows), "device", 5)
    lc = loop_comm(_fake_budget(Ctx(trace_of(kernels=kernels)), main, [7, 3]))
    assert lc is not None and (lc.source, lc.device, lc.found) == ("kernels", main, True)
    assert (lc.starts.tolist(), lc.ends.tolist()) == ([10, 20, 100, 200], [50, 40, 110, 210])
    assert lc.kinds.tolist() == ["AllReduce", "AllGather", "AllReduce", "AllReduce"]
    assert lc.by_kind() == {"AllReduce": (3, 60), "AllGather": (1, 20)}
    got = [(s.label, s.start_ns, s.end_ns, s.comm_ns, s.exposed_ns, s.calls) for s in lc.steps]
    assert got == [("step 0", 0, 100, 40, 7, 2), ("step 1", 100, 200, 10, 3, 1)]
    over = overlap_by_step(_fake_budget(Ctx(trace_of(kernels=kernels)), main, [5, 0]))
    assert [(o.comm_ns, o.exposed_ns) for o in over[main]] == [(40, 5), (10, 0)]


@pytest.mark.parametrize(
    ("tid", "kept"), [(0, [50, 300]), (1, [50, 300]), (7, [50, 120, 300, 400])]
)
def test_loop_comm_from_the_loop_threads_ranges_by_hand(tid: int, kept: list[int]) -> None:
    """Ranges on the loop's thread `tid` only; with none there (tid 7, every tid null):
    every range."""
    other = 1 - tid if tid < 2 else 6
    nvtx = schema.conform(
        "nvtx",
        {
            "start": pa.array([50, 120, 300, 400], pa.int64()),
            "end": pa.array([80, 150, 310, 420], pa.int64()),
            "tid": pa.array([tid, other, tid, tid], pa.int64()),
            "text": pa.array(["gloo:all_reduce", "gloo:all_reduce", "gloo:broadcast",
                              "gloo:barrier_all_reduce"]).dictionary_encode(),
        },
        4,
    )  # fmt: skip
    nvtx = _null(nvtx, "tid", 3)  # no thread recorded: never the loop's
    if tid == 7:
        nvtx = _null(_null(_null(nvtx, "tid", 0), "tid", 2), "tid", 1)
    # compute on device 0 covers [0, 60): the range [50, 80) is exposed for 20 ns
    kernels = gpu_table("kernels", [(0, 60, 0, 1, GEMM), (55, 65, 1, 1, GEMM)])
    ctx = _fake_budget(Ctx(trace_of(kernels=kernels, nvtx=nvtx)), 0, [0, 0], tid=tid)
    lc = loop_comm(ctx)
    assert lc is not None and (lc.source, lc.device) == ("ranges", 0)
    assert lc.starts.tolist() == kept
    # step 1 holds [120, 150) when it is kept: no compute there, all 30 ns exposed
    step1 = (30, 30, 1) if 120 in kept else (0, 0, 0)
    assert [(s.comm_ns, s.exposed_ns, s.calls) for s in lc.steps] == [(30, 20, 1), step1]


def test_loop_comm_without_collectives() -> None:
    ctx = _fake_budget(Ctx(kernels_trace([(0, 60, 0, 1, GEMM)])), 0, [0, 0])
    lc = loop_comm(ctx)
    assert lc is not None and (lc.source, lc.found, lc.device) == ("", False, 0)
    assert lc.starts.dtype == np.int64 and len(lc.starts) == 0 and lc.by_kind() == {}
    assert [(s.comm_ns, s.exposed_ns, s.calls) for s in lc.steps] == [(0, 0, 0), (0, 0, 0)]


def test_overlap_by_step_per_device() -> None:
    rows: list[Gpu] = [(10, 50, 0, 2, AR), (20, 40, 0, 3, AG), (150, 170, 1, 2, AR)]
    ctx = _fake_budget(Ctx(kernels_trace(rows)), 0, [5, 0])
    got = overlap_by_step(ctx)
    assert [(o.label, o.comm_ns, o.exposed_ns, o.overlapped_ns) for o in got[0]] == [
        ("step 0", 40, 5, 35),
        ("step 1", 0, 0, 0),
    ]
    assert set(got) == {0}  # device 1's collective: not a device of the budget
    no_comm = _fake_budget(Ctx(kernels_trace([(0, 60, 0, 1, GEMM)])), 0, [0, 0])
    assert overlap_by_step(no_comm) == {}


def test_a_call_naming_no_collective_type_is_other() -> None:
    nvtx = schema.conform(
        "nvtx",
        {
            "start": pa.array([10], pa.int64()),
            "end": pa.array([20], pa.int64()),
            "text": pa.array(["nccl:barrier"]).dictionary_encode(),
        },
        1,
    )
    lc = loop_comm(_fake_budget(Ctx(trace_of(nvtx=nvtx)), 0, [0, 0]))
    assert lc is not None and lc.kinds.tolist() == ["other"]
    assert lc.by_kind() == {"other": (1, 10)}
