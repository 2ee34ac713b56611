"""What every rule reads: the trace, the arrays derived from it (`TraceCtx`), and the
training steps and their time budget, each computed once per analysis."""

from __future__ import annotations

from functools import cached_property

from tuiperf.analysis.budget.step_budget import Budget, step_budget
from tuiperf.analysis.budget.steps import Steps, find_steps
from tuiperf.analysis.trace_ctx import GPU_TABLES, NSYS_GPU_TABLES, GpuOps, TraceCtx

__all__ = ["GPU_TABLES", "NSYS_GPU_TABLES", "Ctx", "GpuOps", "TraceCtx"]


class Ctx(TraceCtx):
    """The trace under analysis with its steps and step budget."""

    @cached_property
    def steps(self) -> Steps:
        return find_steps(self)

    @cached_property
    def budget(self) -> Budget | None:
        """The steady-state step budget (analysis.budget.step_budget), None without steps."""
        return step_budget(self, self.steps)
