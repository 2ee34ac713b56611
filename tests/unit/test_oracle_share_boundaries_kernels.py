"""The `*_SHARE` thresholds read off kernel names and GPU time shares, at their boundaries
(issue 32, item 1): run_facts.ALREADY_SHARE, kernel_rules.GRAPH_SHARE, and
pytorch.MIN_KERNEL_SHARE / WARN_KERNEL_SHARE in the kernel-name rules. Kernels-only
traces of a few ns each, so each share is a ratio of small integers worked out in the
comments; each case names the comparison mutant it kills."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.support.tiny import Gpu, gpu_table, kernels_trace, trace_of
from tuiperf import schema
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.rules import kernels as kernel_rules
from tuiperf.analysis.rules import pytorch, run_facts

#: a bf16 tensor-core GEMM (GEMM by `xmma`/`gemm`, low precision by `bf16`)
BF16 = "sm90_xmma_gemm_bf16bf16_bf16f32_tn"
#: an fp32 GEMM on the CUDA cores (`sgemm`; no low-precision word in it)
SGEMM = "volta_sgemm_128x64_nn"
#: not a GEMM: its time is no part of the GEMM share
ELEMENTWISE = "vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
#: a cuDNN layout transpose (rules.pytorch's layout_conversion)
LAYOUT = "nchwToNhwcKernel"


def _ctx(*kernels: tuple[str, int]) -> Ctx:
    """Kernels (name, duration ns) back to back on device 0 from t = 0."""
    rows: list[Gpu] = []
    t = 0
    for name, dur in kernels:
        rows.append((t, t + dur, 0, 7, name))
        t += dur
    return Ctx(kernels_trace(rows))


# -- run_facts.ALREADY_SHARE -------------------------------------------------------------
@pytest.mark.parametrize(("bf16", "already"), [(800, True), (799, False)])
def test_already_share_boundary(bf16: int, already: bool) -> None:
    """GEMM time 1000 ns: `bf16` of it bf16, the rest fp32 SIMT; a 5000 ns elementwise
    kernel is no GEMM (the share is 800/1000, not 800/6000). 800 ns is exactly 80%: the run
    already uses a low precision (kills `>=` -> `>`); 799 ns is not (kills a bar moved
    down)."""
    assert run_facts.ALREADY_SHARE == 0.8
    ctx = _ctx((BF16, bf16), (SGEMM, 1000 - bf16), (ELEMENTWISE, 5000))
    facts = run_facts.run_facts(ctx)
    assert (facts.gemm_ns, facts.low_precision_ns) == (1000, bf16)
    assert facts.fp32_simt_ns == 1000 - bf16
    assert facts.low_precision is already
    # the elementwise kernel (5000 ns) runs longest: the top kernel is it, and its fix
    # still says whether the GEMMs already run in a low precision
    (top,) = pytorch.top_kernel(ctx)
    assert top.kernel == ELEMENTWISE
    said = "already computes its matrix products in a low precision" in top.fix.text
    assert said is already


# -- kernel_rules.GRAPH_SHARE ------------------------------------------------------------
def _with_graph(kernel_ns: int, graph_ns: int) -> Ctx:
    """One kernel of `kernel_ns`, then one whole CUDA graph execution of `graph_ns`."""
    k = gpu_table("kernels", [(0, kernel_ns, 0, 7, BF16)])
    g = schema.conform(
        "graphs",
        {
            "start": pa.array([kernel_ns], pa.int64()),
            "end": pa.array([kernel_ns + graph_ns], pa.int64()),
            "duration": pa.array([graph_ns], pa.int64()),
            "device": pa.array([0], pa.int32()),
            "pid": pa.array([1], pa.int64()),
            "correlation_id": pa.array([2], pa.int64()),
            "graph_id": pa.array([1], pa.int64()),
            "name": pa.array(["graph 1"], pa.string()).dictionary_encode(),
        },
        1,
    )
    return Ctx(trace_of(kernels=k, graphs=g))


@pytest.mark.parametrize(("kernel_ns", "fires"), [(900, True), (901, False)])
def test_graph_share_boundary(kernel_ns: int, fires: bool) -> None:
    """A 100 ns graph execution beside `kernel_ns` of kernels: 100 / 1000 is exactly 10% of
    GPU compute time (kernels + graphs): a finding (kills `share < GRAPH_SHARE` -> `<=`);
    100 / 1001 is under it: none."""
    assert kernel_rules.GRAPH_SHARE == 0.10
    ctx = _with_graph(kernel_ns, 100)
    assert ctx.compute_time_ns == kernel_ns + 100
    found = kernel_rules.graphs_untraced(ctx)
    assert bool(found) is fires
    if fires:
        assert found[0].metrics == {"graph_ns": 100, "share_of_compute_time": 0.1}
        assert "The kernel findings see only the other 90%" in found[0].message


# -- pytorch.MIN_KERNEL_SHARE / WARN_KERNEL_SHARE (the kernel-name rules) ------------
@pytest.mark.parametrize(
    ("layout", "gemm", "severity"),
    [
        (10, 990, "INFO"),  # 10 / 1000: exactly 1%, a finding (kills `<` -> `<=`)
        (10, 991, None),  # 10 / 1001: under 1%, none
        (50, 950, "WARNING"),  # 50 / 1000: exactly 5%, a warning (kills `>=` -> `>`)
        (50, 951, "INFO"),  # 50 / 1001: under 5%, an info
    ],
)
def test_kernel_share_boundaries(layout: int, gemm: int, severity: str | None) -> None:
    """layout_conversion over `layout` ns of NCHW->NHWC transposes and `gemm` ns of GEMM:
    its share of kernel time decides whether it fires (MIN_KERNEL_SHARE, 1%) and whether
    it is a warning (WARN_KERNEL_SHARE, 5%)."""
    assert pytorch.MIN_KERNEL_SHARE == 0.01
    assert pytorch.WARN_KERNEL_SHARE == 0.05
    ctx = _ctx((LAYOUT, layout), (BF16, gemm))
    assert ctx.compute_time_ns == layout + gemm
    found = pytorch.layout_conversion(ctx)
    assert [f.severity.name for f in found] == ([severity] if severity else [])
    if found:
        assert found[0].metrics["time_ns"] == layout
        # the rule claims all of the transposes' time (channels_last removes them)
        assert found[0].est_saving_ns == layout


# -- kernel_rules.MISALIGNED_SHARE (and its warning bar, a literal 0.05) -----------------
ALIGN1 = "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align1"


@pytest.mark.parametrize(
    ("align1", "gemm", "severity"),
    [
        (10, 990, "INFO"),  # 10 / 1000: exactly 1%, a finding (kills `<` -> `<=`)
        (10, 991, None),  # 10 / 1001: under 1%, none
        (50, 950, "WARNING"),  # 50 / 1000: exactly 5%, a warning (kills `>=` -> `>`)
        (50, 951, "INFO"),  # 50 / 1001: under 5%, an info
    ],
)
def test_misaligned_share_boundaries(align1: int, gemm: int, severity: str | None) -> None:
    """`align1` ns of a tensor-core GEMM for operands aligned to 1 element beside `gemm` ns
    of an aligned one: its share of GPU compute time decides the finding and its severity.
    The saving is its time x (1 - 1/4)."""
    assert kernel_rules.MISALIGNED_SHARE == 0.01
    ctx = _ctx((ALIGN1, align1), (BF16, gemm))
    found = kernel_rules.misaligned_gemm(ctx)
    assert [f.severity.name for f in found] == ([severity] if severity else [])
    if found:
        assert found[0].metrics["time_ns"] == align1
        assert found[0].est_saving_ns == align1 * 3 // 4
