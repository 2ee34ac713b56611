"""A hand-built training loop for the boundary oracles (tests/unit/test_oracle_share_
boundaries*.py): five 1000 µs NVTX steps `step 0` … `step 4` on thread 1 (step 0 is the
start-up; steps 1-4, [1000, 5000) µs, are the steady ones, 4000 µs of wall time). Each GPU
op is launched by a 10 µs call ending where the op starts, unless a case says otherwise."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
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
