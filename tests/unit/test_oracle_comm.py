"""Oracle: communication kernels hidden by compute (analysis.comm.comm_by_device) on two
devices. Only compute on the *same* device hides a collective: device 1 runs one long
compute kernel that covers device 0's collectives in time, and must hide none of them.
The hand-built case is worked out in comments; the random ones against a brute force over
a nanosecond grid, device by device."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tests.support.tiny import Gpu, busy_grid, gpu_table, kernels_trace, trace_of
from tuiperf import schema
from tuiperf.analysis.comm import collective_ranges, comm_by_device, comm_kernel_mask
from tuiperf.analysis.context import Ctx

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
