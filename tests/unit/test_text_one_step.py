"""Issue 35 item 15: one steady step is "1 steady-state step", not "1 … steps" (a
torch.profiler cycle with one active step). Hand-built loop of two steps: step 0 is the
start-up, step 1 the one steady step."""

from __future__ import annotations

from tests.support.loops import US, at_step_end, loop_trace
from tuiperf.analysis import engine
from tuiperf.report.budget import headline, step_line


def _one_step() -> engine.AnalysisResult:
    return engine.analyze(loop_trace(kernels=at_step_end([100 * US] * 2, steps=2), steps=2))


def test_budget_lines_say_one_step() -> None:
    b = _one_step().budget
    assert b is not None and b.n_steady == 1
    assert "· 1 steady-state step (step 1; " in headline(b)
    assert "the steady span over 1 step," in step_line(b) + ","
    assert "1 steady-state steps" not in headline(b) + step_line(b)


def test_findings_scope_says_one_step() -> None:
    (cpu,) = [f for f in _one_step().findings if f.rule == "cpu_bound"]
    assert "(1 steady-state step, " in cpu.scope.label
