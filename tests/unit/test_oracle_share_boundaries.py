"""Every `*_SHARE` decision threshold of the budget rules at its boundary (issue 32, item 1):
a hand-built loop whose share is exactly the constant, and one nanosecond past it, on
either side of the comparison. Each case names the operator mutant it kills: a boundary
case that fires kills `<` -> `<=` (or `>=` -> `>`); the case one unit short kills a bar
moved down or a comparison turned around.

The loop (`loop`): five 1000 µs NVTX steps `step 0` … `step 4` on thread 1 (step 0 is the
start-up; steps 1-4, [1000, 5000) µs, are the steady ones, 4000 µs of wall time). Each
GPU op is launched by a 10 µs call ending where the op starts, unless a case says
otherwise: the op that ends a GPU gap was launched after the gap began, so the gap is the
budget's `cpu_bound` part (the queue was empty). Ops end at their step's end at the latest,
so the CPU never runs ahead and the steps are measured over their CPU ranges.

The expected numbers are worked out in the comments; no expected value comes from tuiperf.
The builder is tests/support/loops.py, shared with the other boundary files."""

from __future__ import annotations

import pytest

from tests.support.loops import (
    AR,
    GEMM,
    STEP,
    STEPS,
    US,
    WALL,
    at_step_end,
    loop_trace,
)
from tuiperf.analysis.budget import steps as found_steps
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.rules import budget as budget_rules
from tuiperf.analysis.rules import comm as comm_rules


def _steady(ctx: Ctx) -> dict[str, int]:
    b = ctx.budget
    assert b is not None and b.n_steady == 4 and b.step_basis == "cpu_ranges"
    assert b.steady.wall_ns == WALL
    return b.steady.ns


# -- budget_rules.CPU_BOUND_SHARE --------------------------------------------------------
@pytest.mark.parametrize(("last_busy", "fires"), [(900 * US, True), (900 * US + 1, False)])
def test_cpu_bound_share_boundary(last_busy: int, fires: bool) -> None:
    """Steps 1-3 run a 900 µs kernel, step 4 one of `last_busy`: the GPU waits on the CPU
    100 µs + 100 µs + 100 µs + (1000 µs - last_busy). At 400 µs of 4000 µs that is exactly
    10%: a finding (kills `share < CPU_BOUND_SHARE` -> `<=`). At 399.999 µs it is 1 ns
    short: none (kills a bar moved below 10%, or the comparison turned around)."""
    assert budget_rules.CPU_BOUND_SHARE == 0.10
    ctx = Ctx(loop_trace(kernels=at_step_end([900 * US] * 4 + [last_busy])))
    ns = _steady(ctx)
    assert ns["cpu_bound"] == 3 * 100 * US + (STEP - last_busy)
    assert ns["compute"] == 3 * 900 * US + last_busy and ns["other"] == 0
    found = budget_rules.cpu_bound(ctx)
    assert bool(found) is fires
    if fires:
        assert found[0].metrics["cpu_bound_share"] == 0.1
        assert found[0].est_saving_ns == 400 * US


# -- budget_rules.HOT_OP_SHARE -----------------------------------------------------------
@pytest.mark.parametrize(("op_ns", "named"), [(50 * US, True), (50 * US - 1, False)])
def test_hot_op_share_boundary(op_ns: int, named: bool) -> None:
    """800 µs kernels: the GPU waits on the CPU 200 µs a step, 800 µs in the 4 steady steps
    (20%: the cpu_bound finding fires). One torch operator of `op_ns` host self time in
    every step (step 0's is start-up, not counted): 4 x op_ns / 4 steps a step. The bar is
    a quarter of the CPU-bound time a step, 800 µs / 4 / 4 = 50 µs: at 50 µs the operator
    is named (kills `>=` -> `>`); at 49.999 µs it is not."""
    assert budget_rules.HOT_OP_SHARE == 0.25
    ops = [(s * STEP + 10 * US, s * STEP + 10 * US + op_ns, "aten::copy_") for s in range(STEPS)]
    ctx = Ctx(loop_trace(kernels=at_step_end([800 * US] * STEPS), cpu_ops=ops))
    assert _steady(ctx)["cpu_bound"] == 800 * US
    (f,) = budget_rules.cpu_bound(ctx)
    assert ("hot_op_self_ns_per_step" in f.metrics) is named
    assert ("Most of that CPU time is one operator: aten::copy_" in f.message) is named
    if named:
        assert f.metrics["hot_op_self_ns_per_step"] == 50 * US


# -- budget_rules.GPU_BOUND_SHARE --------------------------------------------------------
@pytest.mark.parametrize(("last_busy", "fires"), [(800 * US, True), (800 * US - 1, False)])
def test_gpu_bound_share_boundary(last_busy: int, fires: bool) -> None:
    """Steps 1-3 compute 800 µs, step 4 `last_busy`: busy 2400 µs + last_busy of 4000 µs,
    compute the largest part (the rest, 800 µs at most, is CPU-bound). At 3200 µs the GPU is
    busy exactly 80%: the verdict (kills `busy < GPU_BOUND_SHARE * wall` -> `<=`); 1 ns less
    and it is not."""
    assert budget_rules.GPU_BOUND_SHARE == 0.80
    ctx = Ctx(loop_trace(kernels=at_step_end([800 * US] * 4 + [last_busy])))
    ns = _steady(ctx)
    assert ns["compute"] == 2400 * US + last_busy
    assert ns["cpu_bound"] == WALL - ns["compute"]
    found = budget_rules.gpu_bound(ctx)
    assert bool(found) is fires
    if fires:
        assert found[0].metrics["compute_share"] == 0.8
        assert found[0].severity.name == "INFO"


# -- budget_rules.COPY_BOUND_SHARE -------------------------------------------------------
@pytest.mark.parametrize(("late", "fires"), [(0, True), (1, False)])
def test_copy_bound_share_boundary(late: int, fires: bool) -> None:
    """Each step: idle 200 µs (CPU-bound), a kernel [200, 500) µs, then a pinned 1 MB
    host-to-device copy [500, 1000) µs; step 4's copy starts `late` ns late. Copies
    4 x 500 µs - late of 4000 µs, the largest part (compute 1200 µs, CPU-bound 800 µs +
    late). At exactly 50%: copy-bound (kills `share < COPY_BOUND_SHARE` -> `<=`); 1 ns
    less: not."""
    assert budget_rules.COPY_BOUND_SHARE == 0.50
    kernels = [(s * STEP + 200 * US, s * STEP + 500 * US, GEMM) for s in range(STEPS)]
    copies = [
        (s * STEP + 500 * US + (late if s == 4 else 0), (s + 1) * STEP, "Host-to-Device",
         "Pinned", 1_000_000)
        for s in range(STEPS)
    ]  # fmt: skip
    ctx = Ctx(loop_trace(kernels=kernels, copies=copies))
    ns = _steady(ctx)
    assert (ns["copy"], ns["compute"]) == (2000 * US - late, 1200 * US)
    assert ns["cpu_bound"] == 800 * US + late
    found = budget_rules.copy_bound(ctx)
    assert bool(found) is fires
    if fires:
        assert found[0].metrics["copy_share"] == 0.5
        assert found[0].metrics["bytes_per_step"] == 1_000_000


# -- comm_rules.EXPOSED_SHARE (and its warning bar, EXPOSED_WARNING) ---------------------
def _comm(ar_us: int, short: int) -> Ctx:
    """Each step: CPU-bound 100 µs, a GEMM to (1000 - ar_us) µs, then an all-reduce to the
    step's end (nothing hides it); step 4's all-reduce starts `short` ns late."""
    kernels = []
    for s in range(STEPS):
        mid = s * STEP + (1000 - ar_us) * US
        kernels += [(s * STEP + 100 * US, mid, GEMM),
                    (mid + (short if s == 4 else 0), (s + 1) * STEP, AR)]  # fmt: skip
    return Ctx(loop_trace(kernels=kernels))


@pytest.mark.parametrize(("short", "fires"), [(0, True), (1, False)])
def test_exposed_share_boundary(short: int, fires: bool) -> None:
    """100 µs of exposed all-reduce a step, 400 µs - short of 4000 µs: at exactly 10% a
    finding, an info (under 25%) (kills `share < EXPOSED_SHARE` -> `<=`); 1 ns less, none."""
    assert comm_rules.EXPOSED_SHARE == 0.10
    ctx = _comm(100, short)
    assert _steady(ctx)["comm"] == 400 * US - short
    found = comm_rules.exposed_comm(ctx)
    assert bool(found) is fires
    if fires:
        assert found[0].severity.name == "INFO"
        assert found[0].metrics["exposed_share"] == 0.1
        assert found[0].est_saving_ns == 400 * US


@pytest.mark.parametrize(("short", "severity"), [(0, "WARNING"), (1, "INFO")])
def test_exposed_warning_boundary(short: int, severity: str) -> None:
    """250 µs a step, 1000 µs - short of 4000 µs: exactly 25% is a warning (kills `>=` ->
    `>`), 1 ns less an info."""
    assert comm_rules.EXPOSED_WARNING == 0.25
    ctx = _comm(250, short)
    assert _steady(ctx)["comm"] == 1000 * US - short
    (f,) = comm_rules.exposed_comm(ctx)
    assert f.severity.name == severity


# -- steps.CUT_STEP_SHARE ----------------------------------------------------------------
@pytest.mark.parametrize(("last", "kept"), [(2, True), (1, False)])
def test_cut_step_share_boundary(last: int, kept: bool) -> None:
    """Steps 0-3 launch 4 kernels each (50 µs at +100, +300, +500, +700 µs), step 4 `last`
    of them. Half the median of the others is 2: a last step with 2 is kept (kills
    `counts[-1] < CUT_STEP_SHARE * median` -> `<=`), one with 1 was cut by the capture
    and is left out: steps 1-3 are the steady ones."""
    assert found_steps.CUT_STEP_SHARE == 0.5
    kernels = [
        (s * STEP + (100 + 200 * j) * US, s * STEP + (150 + 200 * j) * US, GEMM)
        for s in range(STEPS)
        for j in range(4 if s < 4 else last)
    ]
    ctx = Ctx(loop_trace(kernels=kernels))
    assert len(ctx.steps) == (5 if kept else 4)
    b = ctx.budget
    assert b is not None and b.n_steady == (4 if kept else 3)
    assert b.steady_labels == ("step 1 … step 4" if kept else "step 1 … step 3")
