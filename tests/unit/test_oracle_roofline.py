"""Oracle: roofline numbers (analysis.ncu.roofline) of hand-made Nsight Compute kernels whose raw
metric values are chosen here, every FLOP/s, intensity and roof worked out by hand in the
comments from ncu's section definitions (the metric names are spelt out, not taken from the
module). Each kernel runs several precisions at once, so an intensity taken from their sum
instead of the kernel's own precision gives another number."""

from __future__ import annotations

import pytest

from tuiperf.analysis.ncu.roofline import kernel_roofline
from tuiperf.model.ncu.metrics import KernelMetrics, make_table

SMSP = "smsp__cycles_elapsed.avg.per_second"
SM = "sm__cycles_elapsed.avg.per_second"
OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
X = "derived__smsp__sass_thread_inst_executed_op_{}"
PEAK = "derived__sm__sass_thread_inst_executed_op_{}"
TENSOR_BF16 = "sm__ops_path_tensor_src_bf16_dst_fp32.sum.per_second"
TENSOR_FP16 = "sm__ops_path_tensor_src_fp16.sum.per_second"
TENSOR_PEAK = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"
DRAM = "dram__bytes.sum.per_second"
DRAM_PEAK = "dram__bytes.sum.peak_sustained"
DRAM_CLOCK = "dram__cycles_elapsed.avg.per_second"
L2 = "derived__lts__lts2xbar_bytes.sum.per_second"

#: kernel 0: tensor cores lead. SMSP clock 1 GHz.
#:   FP32 = (ffma x2 100 + fadd 20 + fmul 30) x 1e9 = 150e9
#:   FP16 = (hfma x4 400 + hadd x2 40 + hmul x2 60) x 1e9 = 500e9
#:   FP64 = (dfma x2 10 + dadd 0 + dmul 0) x 1e9 = 10e9
#:   Tensor = 2e12 + 1e12 = 3e12  -> the kernel's precision; the sum of all would be 3.66e12
#:   DRAM 1e12 B/s -> intensity 3e12 / 1e12 = 3.0 (not 3.66); L2 4e12 B/s -> 0.75
#:   roofs (SM clock 2 GHz): tensor peak 1024/cycle x 2e9 = 2.048e12 FLOP/s;
#:   DRAM peak 64 B/cycle x 1.5e9 = 96e9 B/s; at AI 3.0 the DRAM roof is 288e9: bound 288e9
K0 = {
    SMSP: 1e9, SM: 2e9,
    X.format("ffma_pred_on_x2"): 100.0, OP.format("fadd"): 20.0, OP.format("fmul"): 30.0,
    X.format("hfma_pred_on_x4"): 400.0, X.format("hadd_pred_on_x2"): 40.0,
    X.format("hmul_pred_on_x2"): 60.0,
    X.format("dfma_pred_on_x2"): 10.0, OP.format("dadd"): 0.0, OP.format("dmul"): 0.0,
    TENSOR_BF16: 2e12, TENSOR_FP16: 1e12,
    TENSOR_PEAK: 1024.0, PEAK.format("ffma_pred_on_x2"): 256.0,
    DRAM: 1e12, L2: 4e12, DRAM_PEAK: 64.0, DRAM_CLOCK: 1.5e9,
}  # fmt: skip
#: kernel 1: FP16 leads, no tensor metrics at all. SMSP clock 2 GHz.
#:   FP32 = (ffma x2 300 + fadd 0 + fmul 100) x 2e9 = 800e9
#:   FP16 = (hfma x4 500 + hadd x2 0 + hmul x2 0) x 2e9 = 1e12  -> the precision
#:   DRAM 250e9 B/s -> intensity 1e12 / 250e9 = 4.0 (the sum 1.8e12 would give 7.2)
#:   roofs (SM clock 1 GHz): FP16 peak 4096 x 1e9 = 4.096e12; FP32 peak 512 x 1e9 = 512e9;
#:   DRAM 100 B/cycle x 2e9 = 200e9 B/s; at AI 4.0: 800e9 < 4.096e12: bound 800e9
K1 = {
    SMSP: 2e9, SM: 1e9,
    X.format("ffma_pred_on_x2"): 300.0, OP.format("fadd"): 0.0, OP.format("fmul"): 100.0,
    X.format("hfma_pred_on_x4"): 500.0, X.format("hadd_pred_on_x2"): 0.0,
    X.format("hmul_pred_on_x2"): 0.0,
    PEAK.format("hfma_pred_on_x4"): 4096.0, PEAK.format("ffma_pred_on_x2"): 512.0,
    DRAM: 250e9, DRAM_PEAK: 100.0, DRAM_CLOCK: 2e9,
}  # fmt: skip
#: kernel 2: FP32 only, at a compute-bound intensity. SMSP clock 1 GHz.
#:   FP32 = (ffma x2 1000 + fadd 24 + fmul 0) x 1e9 = 1.024e12; DRAM 1e9 B/s -> AI 1024
#:   roofs (SM 1 GHz): FP32 peak 512 x 1e9 = 512e9; DRAM 10 B x 1e9 = 10e9 -> 10.24e12 at
#:   AI 1024: bound min(512e9, 10.24e12) = 512e9
K2 = {
    SMSP: 1e9, SM: 1e9,
    X.format("ffma_pred_on_x2"): 1000.0, OP.format("fadd"): 24.0, OP.format("fmul"): 0.0,
    PEAK.format("ffma_pred_on_x2"): 512.0,
    DRAM: 1e9, DRAM_PEAK: 10.0, DRAM_CLOCK: 1e9,
}  # fmt: skip
#: kernel 3: no FLOPs (a copy kernel): no precision, no intensity; kernel 4: FLOPs, no DRAM
K3 = {SMSP: 1e9, X.format("ffma_pred_on_x2"): 0.0, DRAM: 5e11}
K4 = {SMSP: 1e9, X.format("ffma_pred_on_x2"): 8.0}
#: kernel 5: one tensor metric of two (Tensor = 3.0 exactly, the missing one adds 0), DRAM
#: 1.5 B/s -> AI 2.0; a DRAM roof (10 x 1e9) but no tensor roof: no bound
K5 = {SMSP: 1e9, SM: 1e9, TENSOR_BF16: 3.0, DRAM: 1.5, DRAM_PEAK: 10.0, DRAM_CLOCK: 1e9}
#: kernel 6: FP32 = 4 x 1e9 = 4e9 under its roof (8 x 1e9), DRAM 1e9 B/s -> AI 4.0; the DRAM
#: clock without its peak gives no DRAM roof: no bound
K6 = {SMSP: 1e9, SM: 1e9, X.format("ffma_pred_on_x2"): 4.0,
      PEAK.format("ffma_pred_on_x2"): 8.0, DRAM: 1e9, DRAM_CLOCK: 1e9}  # fmt: skip


def _km(kernels: list[dict[str, float]]) -> KernelMetrics:
    kid, names, values = [], [], []
    for i, metrics in enumerate(kernels):
        for name, value in metrics.items():
            kid.append(i)
            names.append(name)
            values.append(value)
    table = make_table("metrics", {"kernel_id": kid, "metric": names, "value": values})
    ids = make_table("kernels", {"id": list(range(len(kernels)))})
    return KernelMetrics({"kernels": ids, "metrics": table})


@pytest.fixture(scope="module")
def km() -> KernelMetrics:
    return _km([K0, K1, K2, K3, K4, K5, K6])


def test_flops_per_precision_by_hand(km: KernelMetrics) -> None:
    r0, r1, r2 = (kernel_roofline(km, k) for k in (0, 1, 2))
    assert r0.flops == pytest.approx({"FP32": 150e9, "FP16": 500e9, "FP64": 10e9, "Tensor": 3e12})
    assert r1.flops == pytest.approx({"FP32": 800e9, "FP16": 1e12})
    assert r2.flops == pytest.approx({"FP32": 1.024e12})
    assert (r0.precision, r1.precision, r2.precision) == ("Tensor", "FP16", "FP32")
    assert (r0.achieved, r1.achieved, r2.achieved) == pytest.approx((3e12, 1e12, 1.024e12))


def test_intensity_per_kernel_by_hand(km: KernelMetrics) -> None:
    r0, r1, r2 = (kernel_roofline(km, k) for k in (0, 1, 2))
    assert r0.intensity() == pytest.approx(3.0, rel=1e-12)  # not 3.66 (every precision)
    assert r0.intensity("DRAM") == pytest.approx(3.0, rel=1e-12)
    assert r0.intensity("L2") == pytest.approx(0.75, rel=1e-12)
    assert r1.intensity() == pytest.approx(4.0, rel=1e-12)  # not 7.2
    assert r2.intensity() == pytest.approx(1024.0, rel=1e-12)
    assert r1.intensity("L2") is None  # no L2 traffic reported


def test_roof_at_the_intensity_by_hand(km: KernelMetrics) -> None:
    r0, r1, r2 = (kernel_roofline(km, k) for k in (0, 1, 2))
    assert r0.ceiling("FP16/BF16 tensor").value == pytest.approx(2.048e12)  # type: ignore[union-attr]
    assert r0.ceiling("DRAM").value == pytest.approx(96e9)  # type: ignore[union-attr]
    assert r0.bound() == pytest.approx(288e9)  # memory-bound: 96e9 x 3.0
    assert r1.bound() == pytest.approx(800e9)  # 200e9 x 4.0, under the FP16 roof
    assert r2.bound() == pytest.approx(512e9)  # compute-bound: the FP32 roof


def test_no_flops_or_no_traffic_gives_no_intensity(km: KernelMetrics) -> None:
    r3, r4 = kernel_roofline(km, 3), kernel_roofline(km, 4)
    assert r3.flops == {"FP32": 0.0} and r3.precision is None and r3.achieved == 0.0
    assert r3.intensity() is None and r3.bound() is None
    assert r4.flops == pytest.approx({"FP32": 8e9}) and r4.intensity() is None
    assert r4.ceilings == []  # no SM clock, no peaks: no roof


def test_a_missing_roof_gives_no_bound(km: KernelMetrics) -> None:
    r5, r6 = kernel_roofline(km, 5), kernel_roofline(km, 6)
    assert r5.flops == {"Tensor": 3.0} and r5.intensity() == 2.0
    assert [(c.name, c.value) for c in r5.ceilings] == [("DRAM", 10e9)]
    assert r5.bound() is None  # no tensor roof
    assert r6.flops == {"FP32": 4e9} and r6.intensity() == 4.0
    assert [(c.name, c.value) for c in r6.ceilings] == [("FP32", 8e9)]
    assert r6.bound() is None  # no DRAM roof
