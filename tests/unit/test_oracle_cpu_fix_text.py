"""The cpu_bound fix's text, by hand: its levers are numbered without a gap when the run
already has one of them (a fused optimizer), and a flat CPU-sample profile says so instead
of an empty list."""

from __future__ import annotations

import re

from tuiperf.analysis.budget.step_samples import SHOWN_SHARE, StepSamples
from tuiperf.analysis.rules.budget import _cpu_fix, _sampled
from tuiperf.analysis.rules.run_facts import RunFacts

NUMS = {
    "cpu_ns_per_kernel": 50_000.0,
    "mean_kernel_ns": 10_000.0,
    "kernels_per_step": 100.0,
    "optimizer_kernels_per_step": 40.0,
    "small_kernel_share": 0.5,
    "launch_call_ns": 5_000.0,
    "gpu_busy_share": 0.2,
    "cpu_bound_share": 0.7,
}


def _facts(fused: bool) -> RunFacts:
    return RunFacts(
        gemm_ns=1, low_precision_ns=1, fp32_simt_ns=0, compiled=False, graph_ns=0,
        graph_kernels=0, fused_optimizer=fused, backward=True, optimizer=True,
    )  # fmt: skip


def _numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"(?:^|; |: )(\d)\) ", text)]


def test_levers_are_numbered_without_a_gap() -> None:
    fused = _cpu_fix(NUMS, facts=_facts(True)).text
    assert "foreach/fused" not in fused
    assert _numbers(fused) == [1, 2, 3]  # bigger batch, graphs, fewer small ops
    plain = _cpu_fix(NUMS, facts=_facts(False)).text
    assert _numbers(plain) == [1, 2, 3, 4]
    assert "3) foreach/fused optimizers: the optimizer issues 40 kernels a step;" in plain


def test_a_flat_profile_says_so() -> None:
    assert SHOWN_SHARE == 0.05
    nums: dict[str, float] = {}
    text = _sampled(StepSamples(1, 400, 100, 0, [], None), nums)
    assert text.endswith(
        "(400 samples, native code): a flat profile, no function holds 5% of them."
    )
    assert nums["cpu_samples"] == 400
