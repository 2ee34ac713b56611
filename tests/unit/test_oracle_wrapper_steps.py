"""Without step ranges, DDP's and FSDP's forward ranges mark the iterations: each runs from
one outermost forward's start to the next; the last to the end of the thread's last range
or kernel launch. A capture of one FSDP forward is one iteration, not the repeats of its
layers' kernels."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import METHODS
from tuiperf.analysis.budget.steps import find_steps

US = 1000


def _d(values: Sequence[str]) -> pa.Array:
    return pa.array(list(values), pa.string()).dictionary_encode()


def _i(values: Sequence[int]) -> pa.Array:
    return pa.array(list(values), pa.int64())


def _ctx(ranges: Sequence[tuple[int, int, str]], kernels: int = 0) -> Ctx:
    """Ranges (start µs, end µs, text) on thread 1; `kernels` 1 µs kernels launched every
    10 µs from 0 (one name each, repeating with period 8: layers)."""
    n = len(ranges)
    nvtx = schema.conform(
        "nvtx",
        {
            "start": _i([r[0] * US for r in ranges]),
            "end": _i([r[1] * US for r in ranges]),
            "duration": _i([(r[1] - r[0]) * US for r in ranges]),
            "pid": _i([1] * n),
            "tid": _i([1] * n),
            "domain": _d(["user_annotation"] * n),
            "text": _d([r[2] for r in ranges]),
            "depth": pa.array([0] * n, pa.int32()),
        },
        n,
    )
    rows = [(k * 10 * US + 5 * US, k * 10 * US + 6 * US, 0, 7, f"layer_k{k % 8}")
            for k in range(kernels)]  # fmt: skip
    k = gpu_table("kernels", rows)
    api = schema.conform(
        "api",
        {
            "start": _i([r * 10 * US for r in range(kernels)]),
            "end": _i([r * 10 * US + 2 * US for r in range(kernels)]),
            "duration": _i([2 * US] * kernels),
            "pid": _i([1] * kernels),
            "tid": _i([1] * kernels),
            "correlation_id": _i(range(1, kernels + 1)),
            "name": _d(["cudaLaunchKernel"] * kernels),
        },
        kernels,
    )
    return Ctx(trace_of(nvtx=nvtx, kernels=k, api=api))


DDP = "DistributedDataParallel.forward"
FSDP = "FullyShardedDataParallel.forward"


def test_ddp_forwards_start_the_iterations() -> None:
    # forwards at 0, 1000, 2000 µs (300 µs each); a backward range ends at 2700 µs; the
    # last launch call (kernel 299 at 2990 µs) ends at 2992 µs: the last step ends there
    ctx = _ctx([(0, 300, DDP), (1000, 1300, DDP), (2000, 2300, DDP), (2300, 2700, "bwd")], 300)
    s = find_steps(ctx)
    assert s.source == "wrapper" and s.confidence == "medium"
    assert s.starts.tolist() == [0, 1000 * US, 2000 * US]
    assert s.ends.tolist() == [1000 * US, 2000 * US, 2992 * US]
    assert s.labels == ["iteration 1", "iteration 2", "iteration 3"]
    assert "DDP/FSDP" in s.reason and "DDP/FSDP forward" in METHODS["wrapper"]


def test_nested_fsdp_units_are_one_iteration_and_a_one_forward_capture_is_one_step() -> None:
    # one outer FSDP forward [0, 2000) holding two nested units; 270 kernels whose names
    # repeat every 8 (the layers) would be ~33 pattern "steps"; the last launch call ends
    # at 2692 µs, after the forward: the one iteration runs 0..2692 µs
    ranges = [(0, 2000, FSDP), (100, 900, FSDP), (1000, 1900, FSDP)]
    s = find_steps(_ctx(ranges, 270))
    assert s.source == "wrapper"
    assert s.starts.tolist() == [0] and s.ends.tolist() == [2692 * US]


def test_step_ranges_win_over_wrapper_forwards() -> None:
    ranges = [(0, 900, "step 0"), (1000, 1900, "step 1"), (0, 300, DDP), (1000, 1300, DDP)]
    s = find_steps(_ctx(ranges, 200))
    assert s.source == "nvtx" and s.labels == ["step 0", "step 1"]
