"""What the capture adds to a step, measured: tuiperf.torch.profile_steps times `timed`
steps with nothing recording and leaves the mean in the trace (torch.profiler metadata, or
an NVTX mark as Nsight Systems' capture starts); the budget says how much the capture adds
and the CPU-bound finding's saving leaves it out (issue 31, item 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.loops import STEP, US, at_step_end, loop_trace
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.savings import rank_by_budget
from tuiperf.analysis.rules import budget as budget_rules
from tuiperf.load.kineto.tables import UNTRACED_KEY as LOADER_KEY
from tuiperf.load.open import OpenOptions, open_trace


def _ctx(untraced_us: int | None) -> Ctx:
    """Five 1000 µs steps, each kernel runs the step's last 600 µs: the GPU waits on the
    CPU 400 µs a steady step (steps 1-4: 1600 µs). The mark, when given, says a step took
    `untraced_us` with nothing recording."""
    phases = [] if untraced_us is None else [
        (10 * US, 10 * US, f"tuiperf_untraced_step_ns={untraced_us * US}")
    ]  # fmt: skip
    return Ctx(loop_trace(kernels=at_step_end([600 * US] * 5), phases=phases))


@pytest.mark.parametrize(
    ("untraced_us", "adds_us", "saving_us"),
    [(None, 0, 1600), (900, 100, 1200), (600, 400, 0), (1200, 0, 1600)],
)
def test_the_capture_cost_comes_off_the_cpu_bound_saving(
    untraced_us: int | None, adds_us: int, saving_us: int
) -> None:
    # a 1000 µs step that took 900 µs untraced: the capture adds 100 µs a step, 400 µs over
    # the 4 steady steps, off the 1600 µs CPU-bound saving; 600 µs untraced: all of it; a
    # step faster here than untraced (1200): nothing to take off
    ctx = _ctx(untraced_us)
    b = ctx.budget
    assert b is not None and b.step_ns == STEP and b.n_steady == 4
    assert b.untraced_step_ns == (None if untraced_us is None else untraced_us * US)
    assert b.capture_adds_ns == adds_us * US
    assert b.to_json()["capture_adds_ns"] == adds_us * US
    (f,) = budget_rules.cpu_bound(ctx)
    rank_by_budget([f], b, unexplained=False)
    assert f.est_saving_ns == saving_us * US
    if untraced_us is not None:
        assert "Timed with nothing recording (tuiperf.torch)" in f.message


def test_profile_steps_writes_the_untraced_step_into_the_trace(tmp_path: Path) -> None:
    """A real torch.profiler run (CPU): 3 timed steps of >= 10 ms sleep; the trace's
    metadata holds their mean, and the loader reads the same number."""
    torch = pytest.importorskip("torch")
    import time

    import tuiperf.torch as tt

    assert tt.UNTRACED_KEY == LOADER_KEY
    out = tmp_path / "t.pt.trace.json"
    with tt.profile_steps(out, steps=2, timed=3) as prof:
        assert prof.total_steps == 1 + 3 + 1 + 2
        while not prof.done:
            torch.ones(8).sum()
            time.sleep(0.01)
            prof.step()
    ns = prof.untraced_step_ns
    assert ns is not None and 10_000_000 <= ns < 200_000_000
    assert int(json.loads(out.read_text())[LOADER_KEY]) == ns
    assert open_trace(out, OpenOptions(use_cache=False)).meta.untraced_step_ns == ns
