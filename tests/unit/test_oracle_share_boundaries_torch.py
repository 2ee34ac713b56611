"""The training-loop rules' `*_SHARE` thresholds at their boundaries (issue 32, item 1):
pytorch.DATA_IDLE_SHARE (and the error bar at 3x it), EVERY_STEP_SHARE,
PERIODIC_SHARE, and MIN_KERNEL_SHARE as the pageable-copy rule's warning bar. The loops
are test_oracle_share_boundaries' (1000 µs NVTX steps, step 0 the start-up, one kernel a
step running to the step's end, launched by a 10 µs call that ends where it starts).
Every expected number is worked out in the comments; each case names the comparison
mutant it kills."""

from __future__ import annotations

import pytest

from tests.support.loops import STEP, STEPS, US, at_step_end, loop_trace
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.rules import pytorch


def _starved(idle: list[int]) -> Ctx:
    """len(idle) steps; step s's kernel runs its last 990 µs - idle[s], so its launch call
    starts idle[s] after the step's start. With no data range, dataloader_starvation's
    window is each step's start up to its first launch: the GPU idles all of it (the
    kernel before ended at the step's start), idle[s] ns."""
    busy = [990 * US - i for i in idle]
    return Ctx(loop_trace(kernels=at_step_end(busy, steps=len(idle)), steps=len(idle)))


# -- pytorch.DATA_IDLE_SHARE ---------------------------------------------------------
@pytest.mark.parametrize(("last_idle", "fires"), [(100 * US, True), (100 * US - 1, False)])
def test_data_idle_share_boundary(last_idle: int, fires: bool) -> None:
    """Steps 1-3 wait 100 µs for their batch before the first launch, step 4 `last_idle`:
    300 µs + last_idle of the steady steps' 4000 µs. Exactly 10%: a warning (under 30%)
    (kills `share < DATA_IDLE_SHARE` -> `<=`); 1 ns less: none."""
    assert pytorch.DATA_IDLE_SHARE == 0.10
    ctx = _starved([100 * US] * 4 + [last_idle])
    found = pytorch.dataloader_starvation(ctx)
    assert bool(found) is fires
    if fires:
        (f,) = found
        assert f.severity.name == "WARNING"
        assert f.metrics["gpu_idle_ns"] == 400 * US and f.metrics["idle_share"] == 0.1
        assert f.est_saving_ns == 400 * US


@pytest.mark.parametrize(
    ("last_idle", "severity"), [(300 * US + 1, "ERROR"), (300 * US - 1, "WARNING")]
)
def test_data_idle_error_bar_around_30_percent(last_idle: int, severity: str) -> None:
    """The error bar is 3 x DATA_IDLE_SHARE: 900 µs + last_idle of 4000 µs. 1 ns over 30% is
    an error, 1 ns under a warning."""
    ctx = _starved([300 * US] * 4 + [last_idle])
    (f,) = pytorch.dataloader_starvation(ctx)
    assert f.metrics["gpu_idle_ns"] == 900 * US + last_idle
    assert f.severity.name == severity


def test_data_idle_of_exactly_30_percent_is_an_error() -> None:
    """300 µs in each of the 4 steady steps: 1200 / 4000 = 30% exactly, DATA_IDLE_ERROR
    (was a bug: the bar was 3 * 0.10 = 0.30000000000000004)."""
    assert pytorch.DATA_IDLE_ERROR == 0.30
    ctx = _starved([300 * US] * 5)
    (f,) = pytorch.dataloader_starvation(ctx)
    assert f.metrics["gpu_idle_ns"] == 1200 * US and f.metrics["idle_share"] == 0.3
    assert f.severity.name == "ERROR"


# -- pytorch.PERIODIC_SHARE ----------------------------------------------------------
@pytest.mark.parametrize(("stall", "periodic"), [(500 * US, True), (500 * US - 1, False)])
def test_periodic_share_boundary(stall: int, periodic: bool) -> None:
    """13 steps, 12 steady (steps 1-12). Each waits 100 µs for its batch, but steps 4 and 9
    (steady positions 3 and 8, five apart) wait 500 µs and `stall`: stalls, over 4 x the
    median wait (100 µs). The wait is 10 x 100 + 500 µs + stall = 2000 µs (16.7% of
    12000 µs: a warning); the two stalls hold 500 µs + stall of it. At 1000 of 2000 µs,
    exactly half: 'every 5 steps (50% of it, in 2 stalls)' (kills `< PERIODIC_SHARE *
    total` -> `<=`); 999.999 of 1999.999 µs is under half: no period named."""
    assert pytorch.PERIODIC_SHARE == 0.5
    idle = [100 * US] * 13
    idle[4], idle[9] = 500 * US, stall
    (f,) = pytorch.dataloader_starvation(_starved(idle))
    assert f.severity.name == "WARNING"
    assert f.metrics["gpu_idle_ns"] == 1500 * US + stall
    said = "Most of the wait comes every 5 steps (50% of it, in 2 stalls)" in f.message
    assert said is periodic
    assert ("every 5 steps" in f.message) is periodic


# -- pytorch.EVERY_STEP_SHARE --------------------------------------------------------
@pytest.mark.parametrize(("synced", "fires"), [((0, 1, 2, 3, 4), True), ((0, 1, 2, 3), False)])
def test_every_step_share_boundary(synced: tuple[int, ...], fires: bool) -> None:
    """Six steps, five steady (steps 1-5); a cudaStreamSynchronize at +50 µs in step 0 (the
    start-up: never counted) and in the steps `synced` lists. Steady steps with a sync: 4 of
    5, exactly 80%: a finding (kills `len(hit_steps) < EVERY_STEP_SHARE * len(steady)` ->
    `<=`); 3 of 5: none (also kills counting the start-up step's sync)."""
    assert pytorch.EVERY_STEP_SHARE == 0.8
    syncs = [(s * STEP + 50 * US, s * STEP + 60 * US, "cudaStreamSynchronize") for s in synced]
    ctx = Ctx(loop_trace(kernels=at_step_end([800 * US] * 6, steps=6), calls=syncs, steps=6))
    found = pytorch.host_sync_per_step(ctx)
    assert bool(found) is fires
    if fires:
        (f,) = found
        assert (f.metrics["steps_with_sync"], f.metrics["steady_steps"]) == (4, 5)
        assert f.metrics["sync_calls"] == 4 and f.metrics["blocked_ns"] == 40 * US


# -- pytorch.MIN_KERNEL_SHARE as the pageable-copy rule's warning bar ----------------
@pytest.mark.parametrize(("last_copy", "severity"), [(10 * US, "WARNING"), (10 * US - 1, "INFO")])
def test_pageable_copy_warning_boundary(last_copy: int, severity: str) -> None:
    """A pageable host-to-device copy at +100 µs in each of the 5 steps: 10 µs in steps
    0-3, `last_copy` in step 4. The steady steps (1-4) count, the start-up's copy is
    start-up: 30 µs + last_copy against 1% of the 4 x 1000 µs steps with copies = 40 µs: at
    40 µs a warning (kills `>=` -> `>`), 1 ns less an info."""
    assert pytorch.MIN_KERNEL_SHARE == 0.01
    copies = [
        (s * STEP + 100 * US, s * STEP + 100 * US + (last_copy if s == 4 else 10 * US),
         "Host-to-Device", "Pageable", 1_000_000)
        for s in range(STEPS)
    ]  # fmt: skip
    ctx = Ctx(loop_trace(kernels=at_step_end([800 * US] * STEPS), copies=copies))
    (f,) = pytorch.pageable_h2d_in_steps(ctx)
    assert f.metrics["copies_in_steps"] == 4 and f.metrics["start_up_copies"] == 1
    assert f.severity.name == severity
