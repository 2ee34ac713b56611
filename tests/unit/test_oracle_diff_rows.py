"""diff's row statuses and per-GPU reasons, by hand: a budget part that moved less than the
step noise is "within noise"; a kernel whose time per launch held within LAUNCH_SAME and
whose launches per step moved by a fraction of one (a window total over its steps) is
"within noise", by one or more "same per launch"; a part that rose on one GPU and fell on
the other says so per GPU."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tuiperf.analysis.budget.step_budget import PARTS
from tuiperf.analysis.diff import compare


def _kernel(before: float, after: float, nb: float, na: float) -> compare.Row:
    return compare.Row("kernels", "k", before, after, "ns", before_count=nb, after_count=na)


@pytest.mark.parametrize(
    ("change", "noise", "status"),
    [(100.0, 100.0, "within noise"), (100.5, 100.0, "changed"), (-100.0, 100.0, "within noise"),
     (0.0, 100.0, "same"), (1.0, 0.0, "changed")],
)  # fmt: skip
def test_a_budget_part_within_the_step_noise(change: float, noise: float, status: str) -> None:
    assert (
        compare.Row("budget", "idle", 1000.0, 1000.0 + change, "ns", noise=noise).status == status
    )


def test_a_kernel_the_same_per_launch_with_a_fraction_of_a_launch_more_is_noise() -> None:
    # before: 25 launches over 10 steps = 2.5 a step of 10 µs = 25 µs a step; after: 33
    # over 11 steps = 3.0 a step, 10.2 µs each (2% more: the boundary) = 30.6 µs a step
    assert _kernel(25_000, 30_600, 2.5, 3.0).status == "within noise"
    # 10.21 µs a launch: 2.1% more per launch, changed
    assert _kernel(25_000, 30_630, 2.5, 3.0).status == "changed"
    # one whole launch more a step, same per launch
    assert _kernel(25_000, 35_000, 2.5, 3.5).status == "same per launch"
    # without counts there is nothing per launch to judge: changed
    assert _kernel(25_000, 30_600, 0, 3.0).status == "changed"


def _budget(per_device: dict[int, dict[str, int]], steps: int) -> Any:
    devs = [
        SimpleNamespace(device=d, steps=[None] * steps, steady=SimpleNamespace(ns=ns))
        for d, ns in per_device.items()
    ]
    return SimpleNamespace(devices=devs, main=devs[0], steady=devs[0].steady)


def test_a_part_that_rose_on_one_gpu_and_fell_on_the_other_is_told_per_gpu() -> None:
    # comm over 4 steps: GPU 0 4 ms -> 12 ms (+2 ms a step), GPU 1 8 ms -> 4 ms (-1 ms)
    ms = 1_000_000
    zero = {p: 0 for p in PARTS}
    b = _budget({0: {**zero, "comm": 4 * ms}, 1: {**zero, "comm": 8 * ms}}, 4)
    a = _budget({0: {**zero, "comm": 12 * ms}, 1: {**zero, "comm": 4 * ms}}, 4)
    d: Any = SimpleNamespace(before=SimpleNamespace(budget=b), after=SimpleNamespace(budget=a))
    assert compare._device_changes(d, "comm") == [(0, 2 * ms), (1, -1 * ms)]
    assert compare._with_devices(d, "comm", "x") == "x; per GPU: GPU 0 +2 ms, GPU 1 −1 ms"
    one = _budget({0: {**zero, "comm": 4 * ms}}, 4)
    d1: Any = SimpleNamespace(before=SimpleNamespace(budget=one), after=SimpleNamespace(budget=a))
    assert compare._with_devices(d1, "comm", "x") == "x"
