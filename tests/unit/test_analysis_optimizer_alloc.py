"""tiny_optimizer_kernels and alloc_churn on two real torch.profiler traces of one loop.

tests/data/kineto/make_optimizer_traces.py made both on an H200: `sgd_per_param` updates 60
small parameters one by one (SGD, foreach=False) and empties the CUDA cache every step;
`sgd_foreach` is the same loop with a foreach SGD and no empty_cache(). The expected figures
are counted here from the trace JSON itself, not through tuiperf.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
from functools import cache
from typing import Any

import pytest

from tests.conftest import DATA
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.rules.pytorch import (
    ALLOC_PER_STEP,
    MANY_OPTIMIZER_KERNELS,
    RULES,
    TINY_KERNEL_NS,
)
from tuiperf.load.open import OpenOptions, open_trace

PER_PARAM, FOREACH = "sgd_per_param", "sgd_foreach"
_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_ALLOC = {"cudaMalloc", "cudaFree"}


@cache
def _events(name: str) -> list[dict[str, Any]]:
    raw = gzip.decompress((DATA / "kineto" / f"kineto_{name}.json.gz").read_bytes())
    return [e for e in json.loads(raw)["traceEvents"] if e.get("ph") == "X"]


def _spans(name: str, pattern: str) -> list[tuple[float, float]]:
    """CPU-side annotation ranges whose name matches, as (start, end) in µs."""
    return sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in _events(name)
        if e.get("cat") == "user_annotation" and re.search(pattern, e["name"])
    )


def _steady_steps(name: str) -> list[tuple[float, float]]:
    """ProfilerStep ranges, the first left out when it is warm-up: over 1.5x the median of
    the others (torch.profiler records after its own warm-up phase)."""
    steps = _spans(name, _STEP.pattern)
    assert len(steps) >= 3, "the loop needs a warm-up step and two steady ones"
    dur = [b - a for a, b in steps]
    return steps[1:] if dur[0] > 1.5 * statistics.median(dur[1:]) else steps


def _inside(ts: float, spans: list[tuple[float, float]]) -> bool:
    return any(a <= ts < b for a, b in spans)


def _optimizer_kernels(name: str) -> list[float]:
    """Durations (ns) of the kernels launched inside steady-state Optimizer.step ranges."""
    steady = _steady_steps(name)
    opt = [s for s in _spans(name, r"^Optimizer\.step#") if _inside(s[0], steady)]
    launch = {
        e["args"]["correlation"]: e["ts"]
        for e in _events(name)
        if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    return [
        e["dur"] * 1000
        for e in _events(name)
        if e.get("cat") == "kernel" and _inside(launch.get(e["args"]["correlation"], -1), opt)
    ]


def _steady_alloc_calls(name: str) -> int:
    steady = _steady_steps(name)
    return sum(
        1
        for e in _events(name)
        if e.get("cat") == "cuda_runtime" and e["name"] in _ALLOC and _inside(e["ts"], steady)
    )


@cache
def _ctx(name: str) -> Ctx:
    path = DATA / "kineto" / f"kineto_{name}.json.gz"
    return Ctx(open_trace(path, OpenOptions(use_cache=False)))


def test_per_parameter_sgd_fires_tiny_optimizer_kernels() -> None:
    kernels = _optimizer_kernels(PER_PARAM)
    steps = len(_steady_steps(PER_PARAM))
    assert len(kernels) / steps >= MANY_OPTIMIZER_KERNELS  # the trace has the problem
    (f,) = RULES["tiny_optimizer_kernels"](_ctx(PER_PARAM))
    assert f.rule == "tiny_optimizer_kernels" and f.severity.word == "warning"
    assert f.count == len(kernels)
    assert f.metrics["median_kernel_ns"] == pytest.approx(statistics.median(kernels), abs=1)
    assert f.metrics["median_kernel_ns"] < TINY_KERNEL_NS
    assert f.metrics["kernels_per_step"] >= MANY_OPTIMIZER_KERNELS
    assert {r["table"] for r in f.evidence.rows.to_pylist()} == {"kernels"}
    assert f.est_saving_ns and f.est_saving_ns > 0


def test_tiny_optimizer_kernels_per_step_is_per_optimizer_step() -> None:
    """Optimizer.zero_grad ranges and the GPU-side copies of the annotations were counted as
    optimizer steps too: the figure was a third of the real one."""
    kernels = _optimizer_kernels(PER_PARAM)
    (f,) = RULES["tiny_optimizer_kernels"](_ctx(PER_PARAM))
    assert f.metrics["kernels_per_step"] == len(kernels) / len(_steady_steps(PER_PARAM))


def test_foreach_sgd_does_not_fire_tiny_optimizer_kernels() -> None:
    kernels = _optimizer_kernels(FOREACH)
    assert kernels, "the foreach optimizer launches kernels in its steps"
    assert len(kernels) / len(_steady_steps(FOREACH)) < MANY_OPTIMIZER_KERNELS
    assert RULES["tiny_optimizer_kernels"](_ctx(FOREACH)) == []


def test_empty_cache_every_step_fires_alloc_churn() -> None:
    calls, steps = _steady_alloc_calls(PER_PARAM), len(_steady_steps(PER_PARAM))
    assert calls / steps >= ALLOC_PER_STEP  # the trace has the problem
    (f,) = RULES["alloc_churn"](_ctx(PER_PARAM))
    assert f.rule == "alloc_churn" and f.severity.word == "warning"
    assert f.metrics["calls"] == f.count == calls
    assert f.metrics["calls_per_step"] == pytest.approx(calls / steps, abs=0.01)
    assert {r["table"] for r in f.evidence.rows.to_pylist()} == {"api"}


def test_caching_allocator_left_alone_does_not_fire_alloc_churn() -> None:
    assert _steady_alloc_calls(FOREACH) == 0
    assert len(_steady_steps(FOREACH)) == len(_steady_steps(PER_PARAM))
    assert RULES["alloc_churn"](_ctx(FOREACH)) == []
