"""Proof on programs with a known bottleneck (tests/data/budget, captured on an H200 from
examples/budget/programs.py): the budget and the first finding name the planted cause."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from tests.support.data import unxz
from tests.support.intervals import gpu_spans as _gpu_spans
from tests.support.intervals import union_ns as _union_ns
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import BUSY_PARTS, IDLE_PARTS, PARTS, Budget, step_budget
from tuiperf.analysis.engine import analyze
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace

BUDGET = Path(__file__).resolve().parent.parent / "data" / "budget"
#: planted cause -> (rules whose finding names it, the budget part it shows in)
PLANTED = {
    "cpu_bound": ({"cpu_bound", "tiny_optimizer_kernels"}, "cpu_bound"),
    "data_bound": ({"dataloader_starvation"}, "data"),
    "sync_bound": ({"host_sync_per_step", "cuda_api_sync", "cuda_memcpy_sync"}, "sync"),
    "gpu_bound": ({"gpu_bound"}, "compute"),
    "copy_bound": ({"pageable_h2d_in_steps", "cuda_memcpy_async"}, "copy"),
    # cpu_bound's program without markers: its per-parameter Adam is found after the
    # backward pass's launches (rules/optimizer_phase.py), as the marked one's is
    "no_nvtx": ({"cpu_bound", "tiny_optimizer_kernels"}, "cpu_bound"),
}
KINETO = ("cpu_bound", "data_bound", "sync_bound", "gpu_bound", "copy_bound")


@functools.cache
def planted(name: str) -> Trace:
    return open_trace(unxz(BUDGET / f"{name}.sqlite.xz"), OpenOptions(use_cache=False))


@functools.cache
def planted_kineto(name: str) -> Trace:
    return open_trace(BUDGET / f"{name}.kineto.json.gz", OpenOptions(use_cache=False))


def _budget(trace: Trace) -> Budget:
    b = step_budget(Ctx(trace))
    assert b is not None
    return b


def _named_part(b: Budget, part: str) -> str:
    """The part the budget points at: the largest idle cause, or the largest busy part."""
    pool = IDLE_PARTS if part in IDLE_PARTS else BUSY_PARTS
    return max(pool, key=lambda p: b.steady.ns[p])


@pytest.mark.parametrize("name", list(PLANTED))
def test_the_first_finding_names_the_planted_cause(name: str) -> None:
    rules, part = PLANTED[name]
    res = analyze(planted(name))
    assert res.budget is not None
    top = res.findings[0]
    assert top.rule in rules, [(f.rule, f.est_saving_pct) for f in res.findings[:4]]
    assert top.budget_part == part
    assert _named_part(res.budget, part) == part
    # its saving is a share of steady-state step time, from the part it explains; a
    # verdict on the whole step (GPU-bound) names no change and claims none
    if top.rule == "gpu_bound":
        assert top.est_saving_ns is None
        assert all((f.est_saving_ns or 0) < 0.02 * res.budget.steady.wall_ns for f in res.findings)
    else:
        assert 0 < top.est_saving_ns <= res.budget.steady.ns[part]  # type: ignore[operator]


@pytest.mark.parametrize("name", list(PLANTED))
def test_planted_parts_add_up_and_busy_is_the_union(name: str) -> None:
    trace = planted(name)
    b = _budget(trace)
    wall = sum(s.parts.wall_ns for s in b.main.steps)
    assert abs(sum(b.steady.ns.values()) - wall) <= 0.001 * wall
    starts, ends = _gpu_spans(trace, b.main.device)
    for s in b.main.steps:
        assert sum(s.parts.ns.values()) == s.end_ns - s.start_ns
        assert s.parts.busy_ns == _union_ns(starts, ends, s.start_ns, s.end_ns), s.label


@pytest.mark.parametrize("name", KINETO)
def test_kineto_traces_of_the_same_programs(name: str) -> None:
    """torch.profiler traces: 3 recorded steps; the budget names the same part.
    (sync_bound's FP32 GEMMs make the tensor-core finding rank first there: both real.)"""
    trace = planted_kineto(name)
    b = _budget(trace)
    _, part = PLANTED[name]
    assert _named_part(b, part) == part
    starts, ends = _gpu_spans(trace, b.main.device)
    for s in b.main.steps:
        assert sum(s.parts.ns.values()) == s.end_ns - s.start_ns
        assert s.parts.busy_ns == _union_ns(starts, ends, s.start_ns, s.end_ns)


def test_steps_are_found_without_nvtx() -> None:
    """no_nvtx is the cpu_bound program with no markers: the kernel pattern finds as many
    steps as cpu_bound's NVTX ranges less one (the 18th repeat has no 19th to end it: the
    capture cuts it), about as long, each of the 641 kernels of a steady step (counted
    with nsys stats: 11,285 kernels = 747 in step 0 + 17 x 641 + the start-up's)."""
    ctx = Ctx(planted("no_nvtx"))
    ref = Ctx(planted("cpu_bound")).steps
    steps = ctx.steps
    assert steps.source == "pattern"
    assert len(steps) == len(ref) - 1
    counts = np.bincount(steps.index_of(ctx.launch_time("kernels")) + 1)[1:]
    assert counts[1:].tolist() == [641] * (len(ref) - 2)
    assert steps.confidence in ("medium", "high")
    med = float(np.median(np.diff(steps.starts)))
    ref_med = float(np.median(ref.ends - ref.starts))
    assert 0.75 * ref_med <= med <= 1.25 * ref_med
    b = step_budget(ctx)
    assert b is not None and b.method == "pattern"
    assert b.steady.largest() == "cpu_bound"


def test_the_fixed_programs_show_the_fix_in_the_budget() -> None:
    slow, fixed = _budget(planted("cpu_bound")), _budget(planted("cpu_bound_fixed"))
    assert fixed.steady.pct("busy") > 2 * slow.steady.pct("busy")
    assert fixed.steady.pct("cpu_bound") < slow.steady.pct("cpu_bound")
    slow, fixed = _budget(planted("data_bound")), _budget(planted("data_bound_fixed"))
    assert slow.steady.pct("data") > 50 > 10 > fixed.steady.pct("data")
    res = analyze(planted("data_bound_fixed"))
    assert "dataloader_starvation" not in {f.rule for f in res.findings}


def test_planted_parts_are_known() -> None:
    assert {p for _, p in PLANTED.values()} <= set(PARTS)
