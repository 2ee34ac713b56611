"""fp32_no_tensor_cores in a run that already autocasts (issue 31: no finding advises what
the run already does). Hand-built loop: in each step a bf16 tensor-core GEMM of `low` µs
and an FP32 SIMT GEMM of `high` µs; run_facts.ALREADY_SHARE (0.8) of the GEMM time in bf16
is "already low precision". At the bar the fix is TF32 for the GEMMs left in FP32, never
"use autocast"; one µs a step below it, autocast is the lever."""

from __future__ import annotations

import pytest

from tests.support.loops import GEMM, STEP, US, loop_trace
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.rules import pytorch as rules
from tuiperf.analysis.rules import run_facts

SGEMM = "volta_sgemm_128x64_nn"


def _trace(low: int, high: int):
    kernels = []
    for s in range(5):
        a = s * STEP + 100 * US
        kernels += [(a, a + low * US, GEMM), (a + low * US, a + (low + high) * US, SGEMM)]
    return loop_trace(kernels=kernels)


@pytest.mark.parametrize(("low", "high", "already"), [(800, 200, True), (799, 201, False)])
def test_fix_for_gemms_left_in_fp32_at_the_already_bar(low: int, high: int, already: bool):
    assert run_facts.ALREADY_SHARE == 0.8
    (f,) = rules.fp32_no_tensor_cores(Ctx(_trace(low, high)))
    # the numbers do not depend on the wording: 5 FP32 kernels of `high` µs
    assert f.metrics["kernels"] == 5 and f.metrics["time_ns"] == 5 * high * US
    if already:
        assert f.fix.text.startswith("The run already runs 80% of its GEMM/conv time")
        assert "autocast(" not in f.fix.snippet
        assert "allow_tf32 = True" in f.fix.snippet
    else:
        assert f.fix.text.startswith("These FP32 GEMM/conv kernels run on the CUDA cores")
        assert "torch.autocast(" in f.fix.snippet
