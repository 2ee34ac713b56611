"""Pinning batches that DataLoader workers hand over: with pin_memory=True the pin-memory
thread, not the loop thread, receives each batch (recvmsg) and unmaps it when freed
(munmap), so the loop thread gets that time back on top of the copy calls' block. Measured
on the corpus' dataloader_heavy: the loop thread's munmap fell from 154.5 to 16.8 ms and
another thread's rose from 0.2 to 160.9 ms."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from tests.support.tiny import trace_of
from tuiperf import schema
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.steps import find_steps
from tuiperf.analysis.rules import pytorch

US = 1000


def _d(values: Sequence[str]) -> pa.Array:
    return pa.array(list(values), pa.string()).dictionary_encode()


def _i(values: Sequence[int]) -> pa.Array:
    return pa.array(list(values), pa.int64())


def _trace(os_calls: Sequence[tuple[int, int, int, str]]) -> Ctx:
    """Steps [0, 10 ms) and [10, 20 ms) on thread 1; each makes one pageable 10 MB copy
    (call 2000..3000 µs into the step, 800 µs on the GPU); `os_calls`: (start µs, end µs,
    tid, name)."""
    mc = schema.conform(
        "memcpy",
        {
            "start": _i([2_100 * US, 12_100 * US]),
            "end": _i([2_900 * US, 12_900 * US]),
            "duration": _i([800 * US, 800 * US]),
            "device": pa.array([0, 0], pa.int32()),
            "pid": _i([1, 1]),
            "correlation_id": _i([1, 2]),
            "bytes": _i([10_000_000] * 2),
            "copy_kind": _d(["Host-to-Device"] * 2),
            "src_kind": _d(["Pageable"] * 2),
        },
        2,
    )
    api = schema.conform(
        "api",
        {
            "start": _i([2_000 * US, 12_000 * US]),
            "end": _i([3_000 * US, 13_000 * US]),
            "duration": _i([1_000 * US] * 2),
            "pid": _i([1, 1]),
            "tid": _i([1, 1]),
            "correlation_id": _i([1, 2]),
            "name": _d(["cudaMemcpyAsync"] * 2),
        },
        2,
    )
    nvtx = schema.conform(
        "nvtx",
        {
            "start": _i([0, 10_000 * US]),
            "end": _i([10_000 * US, 20_000 * US]),
            "duration": _i([10_000 * US] * 2),
            "pid": _i([1, 1]),
            "tid": _i([1, 1]),
            "domain": _d(["", ""]),
            "text": _d(["step 0", "step 1"]),
            "depth": pa.array([0, 0], pa.int32()),
        },
        2,
    )
    n = len(os_calls)
    osrt = schema.conform(
        "osrt",
        {
            "start": _i([c[0] * US for c in os_calls]),
            "end": _i([c[1] * US for c in os_calls]),
            "duration": _i([(c[1] - c[0]) * US for c in os_calls]),
            "pid": _i([1] * n),
            "tid": _i([c[2] for c in os_calls]),
            "name": _d([c[3] for c in os_calls]),
        },
        n,
    )
    return Ctx(trace_of(memcpy=mc, api=api, nvtx=nvtx, osrt=osrt))


CALLS = [
    (500, 520, 1, "recvmsg"),  # step 0, loop thread: 20 µs
    (4_000, 4_700, 1, "munmap"),  # step 0, loop thread: 700 µs
    (14_000, 14_300, 1, "munmap"),  # step 1, loop thread: 300 µs
    (15_000, 15_900, 2, "munmap"),  # another thread: not the loop's
    (16_000, 16_400, 1, "poll"),  # waiting on workers: pinning does not remove it
    (25_000, 25_500, 1, "munmap"),  # after the last step
]


def test_the_loop_threads_receive_and_unmap_in_the_steps_is_the_hand_over() -> None:
    ctx = _trace(CALLS)
    steps = find_steps(ctx)
    rows = np.array([0, 1])
    # 20 + 700 + 300 µs: thread 2's munmap, the poll and the munmap after the steps are out
    assert pytorch._handover_ns(ctx, steps, np.array([0, 1]), rows) == 1_020 * US


def test_without_a_received_batch_unmapping_is_not_a_hand_over() -> None:
    ctx = _trace([c for c in CALLS if c[3] != "recvmsg"])
    steps = find_steps(ctx)
    assert pytorch._handover_ns(ctx, steps, np.array([0, 1]), np.array([0, 1])) == 0


def test_only_the_steps_with_copies_count() -> None:
    ctx = _trace(CALLS)
    steps = find_steps(ctx)
    # step 0 alone: 20 + 700 µs
    assert pytorch._handover_ns(ctx, steps, np.array([0]), np.array([0])) == 720 * US


def test_a_modelled_saving_may_pass_its_part_by_the_hand_over_only() -> None:
    """A pinning finding claims its copy part plus the hand-over beyond it, no more: with
    copy part C, hand-over H, a claim of C + H + 1 gets C + H, a claim of C + H - 1 keeps
    it; without hand-over the cap is C."""
    from tests.support.analysis import trace_of as fixture
    from tuiperf.analysis.budget.savings import rank_by_budget
    from tuiperf.analysis.budget.step_budget import step_budget
    from tuiperf.analysis.findings import Evidence, Finding, Fix, Scope, Severity

    b = step_budget(Ctx(fixture("cnn_osrt")))
    assert b is not None
    c, h = b.steady.ns["copy"], 5_000_000
    assert c > 0

    def mk(own: int, beyond: int) -> Finding:
        f = Finding("pageable_h2d_in_steps", "", Severity.WARNING, "", Fix(""),
                    Scope("report"), "tuiperf", 0, Evidence.empty(), own)  # fmt: skip
        f.modelled, f.beyond_part_ns = True, beyond
        return f

    for own, beyond, want in [
        (c + h + 1, h, c + h),
        (c + h - 1, h, c + h - 1),
        (c + h, 0, c),
    ]:
        f = mk(own, beyond)
        rank_by_budget([f], b, unexplained=False)
        assert f.est_saving_ns == want, (own, beyond)
