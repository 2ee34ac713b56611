"""Every Nsight Compute finding names a PyTorch-level change for its kind of kernel, and the
kernel with the most GPU time always gets a line."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.support.data import unxz
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.kernel_levers import category, fix_for_kernel, kernel_kind
from tuiperf.analysis.ncu import rules as ncu_rules
from tuiperf.analysis.rules.pytorch import top_kernel
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions, open_trace

NCU = Path(__file__).resolve().parents[1] / "data" / "ncu"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, (int)128>(...)", "conv"),
        ("void implicit_convolve_sgemm<__half, __half, (int)128>(int)", "conv"),
        ("void cudnn::engines_precompiled::nchwToNhwcKernel<float>(...)", "conv"),
        ("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_kernel__5x_cublas", "gemm"),
        ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", "gemm"),
        ("void at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>()", "elementwise"),
        ("triton_poi_fused_add_relu_0", "triton"),
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)", "nccl"),
        ("my_custom_kernel", "other"),
    ],
)  # fmt: skip
def test_kernel_kinds(name: str, kind: str) -> None:
    assert kernel_kind(name) == kind


def test_a_small_cudnn_grid_gets_channels_last_not_cuda_graphs() -> None:
    """The issue's case: cuDNN batch-norm with ncu's Small Grid rule."""
    assert category("LaunchConfiguration") == "launch"
    fix = fix_for_kernel("LaunchConfiguration", "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float>()")
    assert "channels_last" in fix.text and "reduce-overhead" not in fix.text
    assert "cuDNN library code" in fix.text and "channels_last" in fix.snippet


@pytest.mark.parametrize("report", ["vit_full", "lstm_basic"])
def test_every_ncu_finding_names_a_pytorch_change(report: str) -> None:
    km = open_ncu(unxz(NCU / f"{report}.ncu-rep.xz"), OpenOptions(use_cache=False))
    found = [f for rule in ncu_rules.RULES.values() for f in _run(rule, km)]
    assert found
    for f in found:
        assert f.fix.text.startswith("It is "), (f.rule, f.fix.text)
        assert "See ncu's" not in f.fix.text and "names the metric to" not in f.fix.text


def _run(rule, km):  # type: ignore[no-untyped-def]
    try:
        return rule(km, None)
    except Exception:  # a Skip: this rule has nothing to read in this report
        return []


@pytest.mark.parametrize("name", ["cnn_osrt", "vit_amp", "lstm", "vit_range"])
def test_the_top_kernel_always_has_a_line(name: str, nsys_dir: Path) -> None:
    trace = open_trace(nsys_dir / f"{name}.sqlite", OpenOptions(use_cache=False))
    k = trace.table("kernels", ["name", "duration"])
    by = pa.table({"n": k["name"].cast(pa.string()), "d": k["duration"]}).group_by("n")
    sums = by.aggregate([("d", "sum")]).sort_by([("d_sum", "descending")])
    (f,) = top_kernel(Ctx(trace))
    assert f.kernel == sums["n"][0].as_py()
    assert f.count == int(
        pa.compute.sum(pa.compute.equal(k["name"].cast(pa.string()), f.kernel)).as_py()
    )
    assert f.fix.text.startswith("It is ")
    assert any(x.rule == "top_kernel" for x in analyze(trace).findings)


def test_step_titles_agree_with_their_counts(nsys_dir: Path) -> None:
    """A title said "in every training step" over a message saying "inside 1 of 30"."""
    from tuiperf.analysis.rules.pytorch import steps_title

    assert steps_title("X", 30, 30) == "X in every training step"
    assert steps_title("X", 1, 30) == "X in 1 of 30 training steps"
    trace = open_trace(nsys_dir / "cnn_osrt.sqlite", OpenOptions(use_cache=False))
    for f in analyze(trace).findings:
        if "copies_in_steps" in f.metrics or "steps_with_sync" in f.metrics:
            every = "in every training step" in f.title
            m = f.metrics
            hit, of = (
                (m["steps_with_sync"], m["steady_steps"])
                if "steps_with_sync" in m
                else (None, None)
            )
            if hit is not None:
                assert every == (hit == of), (f.title, hit, of)
            assert (" of " in f.message) and (every or " of " in f.title), f.title
