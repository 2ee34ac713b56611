"""step_budget(ctx, steps) measures the steps it is given, not the ones it would find
(hand-built loop: five 1000 µs steps, step 0 the start-up, steps 1-4 steady)."""

from __future__ import annotations

from tests.support.loops import US, at_step_end, loop_trace
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import step_budget
from tuiperf.analysis.budget.steps import find_steps


def test_the_given_steps_are_the_ones_measured() -> None:
    ctx = Ctx(loop_trace(kernels=at_step_end([100 * US] * 5)))
    found = step_budget(ctx)
    fewer = step_budget(ctx, find_steps(ctx).without_last())
    assert found is not None and fewer is not None
    assert [s.label for s in found.main.steps] == ["step 1", "step 2", "step 3", "step 4"]
    assert [s.label for s in fewer.main.steps] == ["step 1", "step 2", "step 3"]
