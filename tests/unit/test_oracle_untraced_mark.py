"""The NVTX mark tuiperf.torch leaves as Nsight Systems' capture starts
(`tuiperf_untraced_step_ns=N`): read back as the untraced step time when N is a positive
whole number of ns, else not at all (never a crash on a mark someone else wrote)."""

from __future__ import annotations

import pytest

from tests.support.loops import loop_trace
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import UNTRACED_MARK, untraced_step_ns


@pytest.mark.parametrize(
    ("value", "want"),
    [("1", 1), ("21000000", 21_000_000), ("0", None), ("-5", None), ("abc", None), ("", None)],
)
def test_the_mark_alone_in_the_report(value: str, want: int | None) -> None:
    # the mark is the report's only NVTX row (no step ranges: steps=0)
    assert UNTRACED_MARK == "tuiperf_untraced_step_ns="
    trace = loop_trace(phases=[(0, 10, UNTRACED_MARK + value)], steps=0)
    assert trace.table("nvtx").num_rows == 1
    assert untraced_step_ns(Ctx(trace)) == want


def test_no_mark_no_value() -> None:
    assert untraced_step_ns(Ctx(loop_trace(phases=[(0, 10, "tuiperf_other=5")], steps=0))) is None
    assert untraced_step_ns(Ctx(loop_trace(steps=0))) is None
