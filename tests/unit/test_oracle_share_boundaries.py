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
The builder is shared with the other test_oracle_share_boundaries_* files."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pytest

from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
from tuiperf.analysis import budget_rules, comm_rules
from tuiperf.analysis import steps as found_steps
from tuiperf.analysis.context import Ctx
from tuiperf.model.trace import Trace

US = 1000  # ns
STEP = 1000 * US
STEPS = 5
#: the steady steps' wall time: steps 1-4
WALL = 4 * STEP

#: a kernel: (GPU start ns, GPU end ns, name); its launch call is [start - 10 µs, start)
Kernel = tuple[int, int, str]
#: a kernel launched earlier: (call start ns, call end ns, GPU start ns, GPU end ns, name)
Queued = tuple[int, int, int, int, str]
#: a copy: (GPU start ns, GPU end ns, copy kind, source kind, bytes); called like a kernel
Copy = tuple[int, int, str, str, int]
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_tn"
AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def _d(values: Sequence[str]) -> pa.Array:
    return pa.array(list(values), pa.string()).dictionary_encode()


def _i(values: Sequence[int]) -> pa.Array:
    return pa.array(list(values), pa.int64())


def _called(start: int, end: int, name: str) -> Queued:
    return (start - 10 * US, start, start, end, name)


def _cpu_table(table: str, spans: Sequence[tuple[int, int]], **cols: pa.Array) -> pa.Table:
    n = len(spans)
    return schema.conform(
        table,
        {
            "start": _i([a for a, _ in spans]),
            "end": _i([b for _, b in spans]),
            "duration": _i([b - a for a, b in spans]),
            "pid": _i([1] * n),
            "tid": _i([1] * n),
            **cols,
        },
        n,
    )


def loop_trace(
    kernels: Sequence[Kernel] = (),
    queued: Sequence[Queued] = (),
    copies: Sequence[Copy] = (),
    calls: Sequence[tuple[int, int, str]] = (),
    cpu_ops: Sequence[tuple[int, int, str]] = (),
    phases: Sequence[tuple[int, int, str]] = (),
    steps: int = STEPS,
    graphs: Sequence[tuple[int, int]] = (),
) -> Trace:
    """`steps` 1000 µs steps; `kernels` (called 10 µs before they start) and `queued` ones
    on device 0, stream 7; `copies` launched by cudaMemcpyAsync 10 µs before they start;
    `calls`: other API calls (start, end, name) of thread 1; `cpu_ops`: torch operators
    (start, end, name) inside the steps; `phases`: NVTX ranges (start, end, text) inside
    the steps; `graphs`: whole CUDA graph executions (start, end), launched like kernels."""
    ks = [_called(a, b, n) for a, b, n in kernels] + list(queued)
    k = gpu_table("kernels", [(r[2], r[3], 0, 7, r[4]) for r in ks])
    k = k.set_column(k.schema.get_field_index("tid"), "tid", _i([1] * len(ks)))
    launches = [(r[0], r[1], "cudaLaunchKernel") for r in ks]
    n_copy = len(copies)
    corr = range(len(ks) + 1, len(ks) + n_copy + 1)
    mc = schema.conform(
        "memcpy",
        {
            "start": _i([c[0] for c in copies]),
            "end": _i([c[1] for c in copies]),
            "duration": _i([c[1] - c[0] for c in copies]),
            "device": pa.array([0] * n_copy, pa.int32()),
            "stream": _i([7] * n_copy),
            "pid": _i([1] * n_copy),
            "correlation_id": _i(corr),
            "bytes": _i([c[4] for c in copies]),
            "copy_kind": _d([c[2] for c in copies]),
            "src_kind": _d([c[3] for c in copies]),
        },
        n_copy,
    )
    launches += [(c[0] - 10 * US, c[0], "cudaMemcpyAsync") for c in copies]
    n_graph = len(graphs)
    g_corr = range(len(ks) + n_copy + 1, len(ks) + n_copy + n_graph + 1)
    g = schema.conform(
        "graphs",
        {
            "start": _i([a for a, _ in graphs]),
            "end": _i([b for _, b in graphs]),
            "duration": _i([b - a for a, b in graphs]),
            "device": pa.array([0] * n_graph, pa.int32()),
            "stream": _i([7] * n_graph),
            "pid": _i([1] * n_graph),
            "correlation_id": _i(g_corr),
            "graph_id": _i([1] * n_graph),
            "name": _d(["graph 1"] * n_graph),
        },
        n_graph,
    )
    launches += [(a - 10 * US, a, "cudaGraphLaunch") for a, _ in graphs]
    n_launch = len(launches)
    all_calls = launches + list(calls)
    api = _cpu_table(
        "api",
        [c[:2] for c in all_calls],
        correlation_id=_i(list(range(1, n_launch + 1)) + [-1] * len(calls)),
        name=_d([c[2] for c in all_calls]),
    )
    # with torch operators, the steps are torch.profiler's record_function ranges (the
    # operators' parents: Kineto's `user_annotation`), else plain NVTX ranges
    dom = "user_annotation" if cpu_ops else ""
    ranges = [(s * STEP, (s + 1) * STEP, f"step {s}", dom, 0) for s in range(steps)]
    ranges += [(a, b, t, "", 1) for a, b, t in phases]
    ranges += [(a, b, t, "cpu_op", 1) for a, b, t in cpu_ops]
    nvtx = _cpu_table(
        "nvtx",
        [r[:2] for r in ranges],
        text=_d([r[2] for r in ranges]),
        domain=_d([r[3] for r in ranges]),
        depth=pa.array([r[4] for r in ranges], pa.int32()),
    )
    return trace_of(kernels=k, memcpy=mc, graphs=g, api=api, nvtx=nvtx)


def at_step_end(busy: Sequence[int], name: str = GEMM, steps: int = STEPS) -> list[Kernel]:
    """One kernel a step, running its last busy[s] ns (step s): the GPU idles from the step's
    start (where the kernel before ended) until it starts, a gap the kernel's launch closes
    after it began, so `cpu_bound`."""
    return [((s + 1) * STEP - busy[s], (s + 1) * STEP, name) for s in range(steps)]


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
