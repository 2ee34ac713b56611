"""A kernel's variants (tile shapes, operand layouts, stages) are one family in every
finding: top_kernel gives the family's share beside the one variant's, the same grouping
misaligned_gemm sums over."""

from __future__ import annotations

import pytest

from tests.support.tiny import kernels_trace
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.kernel_levers import kernel_family
from tuiperf.analysis.rules import pytorch

FWD = "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1>(T1::Params)"
DGRAD = (
    "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>(T1::Params)"
)
WGRAD = (
    "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x256_nt_align1>(T1::Params)"
)
OTHER = "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>>()"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (FWD, DGRAD, True),
        (FWD, WGRAD, True),
        ("sm90_xmma_gemm_f32f32_tilesize32x32x8_stage3_warpsize1x2x1_nn",
         "sm90_xmma_gemm_f32f32_tilesize64x64x8_stage4_warpsize2x2x1_tn", True),
        (FWD, FWD.replace("align1", "align8"), False),  # alignment is not a variant
        (FWD, FWD.replace("bf16_s1688", "f16_s1688"), False),  # nor the precision
        (FWD, OTHER, False),
    ],
)  # fmt: skip
def test_variants_are_one_family(a: str, b: str, same: bool) -> None:
    assert (kernel_family(a) == kernel_family(b)) is same


def test_top_kernel_gives_its_familys_share() -> None:
    # FWD 600 µs (2 launches), DGRAD 300 µs, WGRAD 100 µs, OTHER 500 µs: kernel time
    # 1500 µs; FWD is the top kernel (40%), its family 1000 µs (66.7%)
    rows = [(0, 300_000, 0, 7, FWD), (300_000, 600_000, 0, 7, FWD),
            (600_000, 900_000, 0, 7, DGRAD), (900_000, 1_000_000, 0, 7, WGRAD),
            (1_000_000, 1_500_000, 0, 7, OTHER)]  # fmt: skip
    (f,) = pytorch.top_kernel(Ctx(kernels_trace(rows)))
    assert f.kernel == FWD
    assert f.metrics["share_of_kernel_time"] == pytest.approx(600 / 1500, abs=1e-4)
    assert f.metrics["family_share_of_kernel_time"] == pytest.approx(1000 / 1500, abs=1e-4)
    assert f.metrics["family_variants"] == 3
    assert "With its 2 other variant(s)" in f.message and "66.7%" in f.message
    # FWD's one launch (300 µs) and OTHER (500 µs): OTHER is the top, alone in its family
    (g,) = pytorch.top_kernel(Ctx(kernels_trace(rows[:1] + rows[4:])))
    assert g.kernel == OTHER and g.metrics["family_variants"] == 1
    assert "other variant" not in g.message
