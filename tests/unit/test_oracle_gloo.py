"""gloo_staging on a hand-built DDP-over-gloo loop: four 10 ms steps (step 0 is start-up);
in each, the autograd thread copies a bucket out to pinned host memory and a gloo run-loop
thread copies it back; the loop thread's own copies and a pageable copy out are not gloo's."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pytest

from tests.support.tiny import trace_of
from tuiperf import schema
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.rules import gloo as gloo_rules

US = 1000
THREADS = {1: "python3", 2: "pt_autograd_0", 3: "pt_gloo_runloop"}


def _d(values: Sequence[str]) -> pa.Array:
    return pa.array(list(values), pa.string()).dictionary_encode()


def _i(values: Sequence[int]) -> pa.Array:
    return pa.array(list(values), pa.int64())


#: per step, at offset (µs): (offset, GPU µs, launching tid, kind, dst kind, bytes)
COPIES = [
    (1_000, 300, 2, "Device-to-Host", "Pinned", 4_000_000),  # out: gloo staging (300)
    (2_000, 200, 3, "Host-to-Device", "Device", 4_000_000),  # back: gloo's thread (200)
    (3_000, 100, 1, "Host-to-Device", "Device", 1_000_000),  # the loop's batch: not gloo
    (4_000, 50, 2, "Device-to-Host", "Pageable", 8),  # pageable out (a .item()): not gloo
]


def _ctx(steps: int = 4, gloo_name: str = "pt_gloo_runloop") -> Ctx:
    rows = [(s * 10_000 + c[0], *c[1:]) for s in range(steps) for c in COPIES]
    n = len(rows)
    mc = schema.conform(
        "memcpy",
        {
            "start": _i([(r[0] + 10) * US for r in rows]),
            "end": _i([(r[0] + 10 + r[1]) * US for r in rows]),
            "duration": _i([r[1] * US for r in rows]),
            "device": pa.array([0] * n, pa.int32()),
            "pid": _i([1] * n),
            "correlation_id": _i(range(1, n + 1)),
            "bytes": _i([r[5] for r in rows]),
            "copy_kind": _d([r[3] for r in rows]),
            "dst_kind": _d([r[4] for r in rows]),
        },
        n,
    )
    api = schema.conform(
        "api",
        {
            "start": _i([r[0] * US for r in rows]),
            "end": _i([(r[0] + 5) * US for r in rows]),
            "duration": _i([5 * US] * n),
            "pid": _i([1] * n),
            "tid": _i([r[2] for r in rows]),
            "correlation_id": _i(range(1, n + 1)),
            "name": _d(["cudaMemcpyAsync"] * n),
        },
        n,
    )
    nvtx = schema.conform(
        "nvtx",
        {
            "start": _i([s * 10_000 * US for s in range(steps)]),
            "end": _i([(s + 1) * 10_000 * US for s in range(steps)]),
            "duration": _i([10_000 * US] * steps),
            "pid": _i([1] * steps),
            "tid": _i([1] * steps),
            "domain": _d([""] * steps),
            "text": _d([f"step {s}" for s in range(steps)]),
            "depth": pa.array([0] * steps, pa.int32()),
        },
        steps,
    )
    names = {**THREADS, 3: gloo_name}
    threads = schema.conform(
        "threads",
        {"pid": _i([1] * 3), "tid": _i(list(names)), "name": pa.array(list(names.values()))},
        3,
    )
    return Ctx(trace_of(memcpy=mc, api=api, nvtx=nvtx, threads=threads))


def test_the_staging_copies_of_the_steady_steps_are_the_saving() -> None:
    (f,) = gloo_rules.gloo_staging(_ctx())
    # steps 1-3 steady: 3 x (300 + 200) µs; per step 4 MB out + 4 MB back
    assert f.own_saving_ns is None and f.est_saving_ns == 1_500 * US
    assert f.metrics == {"bytes_per_step": 8_000_000, "copies": 6, "copy_ns": 1_500 * US}
    assert "3 device-to-host and 3 host-to-device copies in 3 steps" in f.message
    assert (f.budget_part, f.modelled, f.beyond_part_ns) == ("copy", True, 1_500 * US)


def test_without_gloo_threads_nothing_is_gloo() -> None:
    assert gloo_rules.gloo_staging(_ctx(gloo_name="pt_nccl_watchdog")) == []


@pytest.mark.parametrize(("share", "fires"), [(0.05, True), (0.0501, False)])
def test_the_staging_share_boundary(monkeypatch: pytest.MonkeyPatch, share: float,
                                    fires: bool) -> None:  # fmt: skip
    # 1500 µs of staging in 30 ms of steady steps: exactly 5%, so a bar of 5% still fires
    monkeypatch.setattr(gloo_rules, "STAGING_SHARE", share)
    assert bool(gloo_rules.gloo_staging(_ctx())) is fires
