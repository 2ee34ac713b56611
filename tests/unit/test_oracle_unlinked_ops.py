"""GPU ops whose launch call is not in the report (launched before the capture began, or
by a process whose API was not traced): their queue is unknown, not empty. Hand-built loop
(tests/support/loops.py): 1000 µs steps, one 100 µs kernel at the end of each step; the
kernels of the steady steps 1 and 2 are then cut from their launch calls. Expected values
by hand."""

from __future__ import annotations

import pyarrow as pa

from tests.support.loops import STEP, US, at_step_end, loop_trace
from tests.support.tiny import trace_of
from tuiperf.analysis.budget.context import Ctx
from tuiperf.model.trace import Trace


def _cut(trace: Trace, kernels: set[int]) -> Trace:
    """`trace` with the launch calls of these kernel rows unlinked (correlation ids that
    match nothing): the kernels stay, their calls say nothing about them."""
    api = trace.table("api")
    corr = api.column("correlation_id").to_pylist()
    k_corr = trace.table("kernels").column("correlation_id").to_pylist()
    cut = {k_corr[i] for i in kernels}
    new = pa.array([c + 10**9 if c in cut else c for c in corr], pa.int64())
    api = api.set_column(api.schema.get_field_index("correlation_id"), "correlation_id", new)
    names = ("kernels", "memcpy", "graphs", "nvtx")
    return trace_of(api=api, **{n: trace.table(n) for n in names})


def _loop(cut: set[int]) -> Trace:
    return _cut(loop_trace(kernels=at_step_end([100 * US] * 5)), cut)


def test_an_idle_gap_closed_by_an_unlinked_kernel_is_not_cpu_bound() -> None:
    # each steady step: GPU idle 900 µs, then its kernel. Linked, the launch call ends where
    # the kernel starts, after the gap began: the queue was empty, cpu_bound. Unlinked
    # (steps 1, 2): nothing says when it was launched: other.
    b = Ctx(_loop({1, 2})).budget
    assert [s.label for s in b.main.steps] == ["step 1", "step 2", "step 3", "step 4"]
    by_step = [(s.parts.ns["cpu_bound"], s.parts.ns["other"]) for s in b.main.steps]
    assert by_step == [(0, 900 * US), (0, 900 * US), (900 * US, 0), (900 * US, 0)]


def test_all_linked_every_gap_is_cpu_bound() -> None:
    b = Ctx(_loop(set())).budget
    assert [s.parts.ns["cpu_bound"] for s in b.main.steps] == [900 * US] * 4


def test_queue_median_leaves_unlinked_ops_out() -> None:
    # linked kernels start as their call ends (wait 0); a kernel whose call is cut would have
    # been taken as launched at its own start: no wait either. Queue the linked ones 40 µs
    # (their calls end 40 µs before they start) and cut two: the median is over the linked.
    queued = [
        ((s + 1) * STEP - 150 * US, (s + 1) * STEP - 140 * US, (s + 1) * STEP - 100 * US,
         (s + 1) * STEP, "sm90_xmma_gemm_bf16bf16_bf16f32_tn")
        for s in range(5)
    ]  # fmt: skip
    trace = _cut(loop_trace(queued=queued), {1, 2})
    b = Ctx(trace).budget
    assert b.step is not None and b.step.queue_ns == 40 * US


def test_pattern_steps_leave_out_kernels_launched_before_the_capture() -> None:
    # no step markers; 80 kernels `a`..`h` repeating (period 8), kernel i on the GPU at
    # [10 i, 10 i + 1) µs; the CPU runs 40 kernels ahead: kernel i's call is [10 (i - 40) - 5,
    # 10 (i - 40)) µs, so kernels 0-39 were launched before the capture (their calls cut).
    # Sorted by launch with their GPU starts standing in, the two halves would interleave;
    # the steps are the linked kernels' repeats: anchored on kernel 40, every 8 kernels.
    names = "abcdefgh"
    queued = [
        (10 * (i - 40) * US - 5 * US, 10 * (i - 40) * US, 10 * i * US, (10 * i + 1) * US,
         names[i % 8])
        for i in range(80)
    ]  # fmt: skip
    trace = _cut(loop_trace(queued=queued, steps=0), set(range(40)))
    from tuiperf.analysis.budget.steps import find_steps

    steps = find_steps(Ctx(trace))
    assert steps.source == "pattern"
    # boundaries at the calls of kernels 40, 48, ..., 72 (the last repeat, 72-79, has no
    # next one to end it): call starts 10 (i - 40) - 5 µs
    assert [int(s) for s in steps.starts] == [(80 * j - 5) * US for j in range(4)]
    assert [int(e - s) for s, e in zip(steps.starts, steps.ends, strict=True)] == [80 * US] * 4


def test_a_launch_call_of_zero_duration_is_linked() -> None:
    # a call recorded with no duration (start == end) is in the report: its op is linked,
    # the gap it closes is CPU-bound (the queue was empty), its wait counts in the median
    queued = [
        ((s + 1) * STEP - 130 * US, (s + 1) * STEP - 130 * US, (s + 1) * STEP - 100 * US,
         (s + 1) * STEP, "sm90_xmma_gemm_bf16bf16_bf16f32_tn")
        for s in range(5)
    ]  # fmt: skip
    b = Ctx(loop_trace(queued=queued)).budget
    assert b.step is not None and b.step.queue_ns == 30 * US
    assert [s.parts.ns["cpu_bound"] for s in b.main.steps] == [900 * US] * 4
