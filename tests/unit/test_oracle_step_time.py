"""What a step costs, on hand-built traces whose every number is worked out in comments:
the CPU running ahead of the GPU (the GPU-side span, not the CPU ranges), the boundary of
AHEAD_SHARE, a last step the capture cut, and the savings modelled from the evidence
(misaligned GEMMs, pageable copies)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pytest

from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import AHEAD_SHARE, step_budget
from tuiperf.analysis.rules import kernels as kernel_rules
from tuiperf.analysis.rules import pytorch
from tuiperf.model.trace import Trace

US = 1000  # every time below is in µs


def _dict(values: Sequence[str]) -> pa.Array:
    return pa.array(list(values), pa.string()).dictionary_encode()


def _spans(table: str, spans: Sequence[tuple[int, int]], **cols: pa.Array) -> pa.Table:
    """Table `table` of [start µs, end µs) rows on process 1, thread 1, plus `cols`."""
    n = len(spans)
    return schema.conform(
        table,
        {
            "start": pa.array([a * US for a, _ in spans], pa.int64()),
            "end": pa.array([b * US for _, b in spans], pa.int64()),
            "duration": pa.array([(b - a) * US for a, b in spans], pa.int64()),
            "pid": pa.array([1] * n, pa.int64()),
            "tid": pa.array([1] * n, pa.int64()),
            **cols,
        },
        n,
    )


def _api(calls: Sequence[tuple[int, int, str]]) -> pa.Table:
    """Launch calls (start µs, end µs, name), correlation ids 1.. in order, thread 1."""
    ids = pa.array(range(1, len(calls) + 1), pa.int64())
    return _spans(
        "api", [c[:2] for c in calls], correlation_id=ids, name=_dict([c[2] for c in calls])
    )


def _nvtx(ranges: Sequence[tuple[int, int, str, int]]) -> pa.Table:
    """NVTX ranges (start µs, end µs, text, depth)."""
    return _spans(
        "nvtx",
        [r[:2] for r in ranges],
        domain=_dict([""] * len(ranges)),
        text=_dict([r[2] for r in ranges]),
        depth=pa.array([r[3] for r in ranges], pa.int32()),
    )


def _steps(ranges: Sequence[tuple[int, int]]) -> pa.Table:
    return _nvtx([(a, b, f"step {i}", 0) for i, (a, b) in enumerate(ranges)])


def _loop(kernels: Sequence[tuple[int, int]], launches: Sequence[tuple[int, int]],
          steps: Sequence[tuple[int, int]], extra_api: Sequence[tuple[int, int, str]] = ()
          ) -> Trace:  # fmt: skip
    """One kernel per launch (same order, correlation ids 1..), then any other API calls."""
    k = gpu_table("kernels", [(a * US, b * US, 0, 7, "gemm") for a, b in kernels])
    k = k.set_column(k.schema.get_field_index("tid"), "tid", pa.array([1] * len(kernels)))
    calls = [(a, b, "cudaLaunchKernel") for a, b in launches] + list(extra_api)
    return trace_of(kernels=k, api=_api(calls), nvtx=_steps(steps))


def _ahead() -> Trace:
    """Five 1 ms CPU steps each launching one 3 ms kernel (call at +100..+110 µs); step 4
    syncs (cudaDeviceSynchronize 4200..15120) and ends at 15200. The GPU runs the kernels
    back to back: k0 [110, 3110), k1 [3110, 6110), k2 [6110, 9110), k3 [9110, 12110),
    k4 [12110, 15110)."""
    launches = [(i * 1000 + 100, i * 1000 + 110) for i in range(5)]
    kernels = [(110 + 3000 * i, 3110 + 3000 * i) for i in range(5)]
    steps = [(i * 1000, (i + 1) * 1000) for i in range(4)] + [(4000, 15200)]
    return _loop(kernels, launches, steps, [(4200, 15120, "cudaDeviceSynchronize")])


def test_a_cpu_that_runs_ahead_pays_the_gpu_side_span() -> None:
    b = step_budget(Ctx(_ahead()))
    assert b is not None and b.n_steady == 4  # step 0 is start-up; steps 1-4 steady
    s = b.step
    assert s is not None and b.step_basis == "gpu_span"
    # the CPU ranges of steps 1..4 last 1000, 1000, 1000, 11200 µs: median 1000 µs
    assert s.cpu_median_ns == 1000 * US
    # GPU ends of the work each step launched: 6110, 9110, 12110, 15110 against CPU ends
    # 2000, 3000, 4000, 15200: lags 4110, 6110, 8110, -90, median (4110 + 6110) / 2
    assert s.lag_ns == 5110 * US
    # each step is from the end of the step before's GPU work (3110) to the end of its own
    assert s.starts.tolist() == [3110 * US, 6110 * US, 9110 * US, 12110 * US]
    assert s.ends.tolist() == [6110 * US, 9110 * US, 12110 * US, 15110 * US]
    assert b.step_ns == 3000 * US  # (15110 - 3110) / 4: the kernel, not the 1 ms CPU range
    # queue ahead of k1..k4: start - launch end = 2000, 4000, 6000, 8000: median 5000
    assert s.queue_ns == 5000 * US
    assert b.steady.ns["compute"] == b.steady.wall_ns == 12000 * US
    doc = b.to_json()
    assert (doc["step_ns"], doc["step_basis"]) == (3000 * US, "gpu_span")
    assert doc["cpu_step_median_ns"] == 1000 * US and doc["queue_depth_ns"] == 5000 * US


def _spaced(kernel_us: int) -> Trace:
    """Five 500 µs CPU steps every 2000 µs, each launching one kernel (call +100..+110)
    that runs `kernel_us` µs at once: it ends 110 + kernel_us - 500 µs after its step."""
    launches = [(i * 2000 + 100, i * 2000 + 110) for i in range(5)]
    kernels = [(i * 2000 + 110, i * 2000 + 110 + kernel_us) for i in range(5)]
    steps = [(i * 2000, i * 2000 + 500) for i in range(5)]
    return _loop(kernels, launches, steps)


@pytest.mark.parametrize(("kernel_us", "basis"), [(515, "cpu_ranges"), (516, "gpu_span")])
def test_ahead_share_boundary(kernel_us: int, basis: str) -> None:
    """The lag is kernel_us - 390 µs against a 500 µs median step: 125 µs is exactly
    AHEAD_SHARE (0.25) of it and stays on the CPU ranges; 126 µs is past it."""
    assert AHEAD_SHARE == 0.25
    b = step_budget(Ctx(_spaced(kernel_us)))
    assert b is not None and b.step is not None
    assert b.step.lag_ns == (kernel_us - 390) * US
    assert b.step_basis == basis
    if basis == "cpu_ranges":
        # steps 1..4, each to the next step's start, the last to its end: 2000 x 3 + 500
        assert b.step.starts.tolist() == [2000 * US, 4000 * US, 6000 * US, 8000 * US]
        assert b.step.ends.tolist() == [4000 * US, 6000 * US, 8000 * US, 8500 * US]
        assert b.step_ns == 6500 * US // 4
    else:  # GPU ends 2110 + 516 = 2626 ... 8626: four 2000 µs periods
        assert b.step_ns == 2000 * US
    busy = [p.parts.busy_ns for p in b.main.steps]  # one kernel of kernel_us per window,
    if basis == "cpu_ranges":  # but the last CPU window ends 500 µs in: 390 µs of its kernel
        assert busy == [kernel_us * US] * 3 + [390 * US]
    else:
        assert busy == [kernel_us * US] * 4


def test_a_step_the_capture_cut_is_left_out() -> None:
    """Steps 0-3 launch 4 kernels each; step 4 launches 1 (the capture stopped in it):
    under CUT_STEP_SHARE (half the median of 4), so steps 1-3 are the steady ones."""
    launches, kernels = [], []
    for i in range(5):
        for j in range(4 if i < 4 else 1):
            t = i * 1000 + 100 * j
            launches.append((t, t + 10))
            kernels.append((t + 10, t + 60))
    t = _loop(kernels, launches, [(i * 1000, i * 1000 + 900) for i in range(5)])
    ctx = Ctx(t)
    assert len(ctx.steps) == 4 and ctx.steps.labels[-1] == "step 3"
    b = step_budget(ctx)
    assert b is not None and b.n_steady == 3


def _devices(major: int) -> pa.Table:
    return schema.conform(
        "devices",
        {"device": pa.array([0], pa.int32()), "compute_major": pa.array([major], pa.int32())},
        1,
    )


MISALIGNED = "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>"
SM80 = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_execute_kernel"
SIMT = "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>"


def test_misaligned_and_fallback_gemms() -> None:
    """On an SM90 GPU: the cutlass_75 align1 kernel (300 µs) is misaligned and two
    generations old; the sm80 kernel (400 µs) is cuBLAS's own Hopper choice; the SIMT sgemm
    (200 µs) is align1 by design (the fp32 rule's); the align2 bf16 kernel (100 µs) is
    misaligned. Flagged: 300 + 100 = 400 µs of 1000 µs of compute; with aligned tiles 4x
    faster (ALIGNED_SPEEDUP) 3/4 of it is saved: 300 µs."""
    align2 = "cutlass_80_tensorop_bf16_s16816gemm_bf16_64x64_tn_align2"
    rows = [(0, 300, 0, 7, MISALIGNED), (300, 700, 0, 7, SM80), (700, 900, 0, 7, SIMT),
            (900, 1000, 0, 7, align2)]  # fmt: skip
    k = gpu_table("kernels", [(a * US, b * US, d, s, n) for a, b, d, s, n in rows])
    (f,) = kernel_rules.misaligned_gemm(Ctx(trace_of(kernels=k, devices=_devices(9))))
    assert f.metrics["time_ns"] == 400 * US
    assert f.metrics["share_of_compute_time"] == pytest.approx(0.4)
    assert kernel_rules.ALIGNED_SPEEDUP == 4.0
    assert f.est_saving_ns == 300 * US
    assert SM80 not in f.kernels and SIMT not in f.kernels
    # under MISALIGNED_SHARE (1%) of compute time: no finding
    small = gpu_table("kernels", [(0, 9 * US, 0, 7, MISALIGNED), (9 * US, 1000 * US, 0, 7, SM80)])
    assert kernel_rules.misaligned_gemm(Ctx(trace_of(kernels=small, devices=_devices(9)))) == []


def test_an_old_arch_kernel_alone_is_flagged_only_two_generations_back() -> None:
    old = "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn"  # aligned, built for SM75
    k = gpu_table("kernels", [(0, 500 * US, 0, 7, old), (500 * US, 1000 * US, 0, 7, SM80)])
    assert kernel_rules.misaligned_gemm(Ctx(trace_of(kernels=k, devices=_devices(8)))) == []
    (f,) = kernel_rules.misaligned_gemm(Ctx(trace_of(kernels=k, devices=_devices(9))))
    assert f.kernels == (old,) and f.est_saving_ns == 375 * US  # 3/4 of 500 µs


def test_pageable_copies_save_the_blocked_cpu_time_less_the_pinned_copy() -> None:
    """Two 100 MB pageable copies whose calls block the CPU 12 ms each, 10 ms on the GPU
    each; one 100 MB pinned copy runs 4 ms: the pinned rate is 25 GB/s, so the pageable
    bytes take 8 ms pinned. No steps, no budget: the saving is the blocked CPU time, 24 ms,
    less those 8 ms = 16 ms."""
    mb = 100_000_000
    mc = schema.conform(
        "memcpy",
        {
            "start": pa.array([1_000, 20_000, 40_000], pa.int64()) * US,
            "end": pa.array([11_000, 30_000, 44_000], pa.int64()) * US,
            "duration": pa.array([10_000, 10_000, 4_000], pa.int64()) * US,
            "device": pa.array([0, 0, 0], pa.int32()),
            "pid": pa.array([1, 1, 1], pa.int64()),
            "correlation_id": pa.array([1, 2, 3], pa.int64()),
            "bytes": pa.array([mb, mb, mb], pa.int64()),
            "copy_kind": _dict(["Host-to-Device"] * 3),
            "src_kind": _dict(["Pageable", "Pageable", "Pinned"]),
        },
        3,
    )
    api = _api([(0, 12_000, "cudaMemcpyAsync"), (19_000, 31_000, "cudaMemcpyAsync"),
                (39_000, 39_010, "cudaMemcpyAsync")])  # fmt: skip
    ctx = Ctx(trace_of(memcpy=mc, api=api))
    m = pytorch._pinned_model(ctx, np.array([0, 1]))
    assert m.blocked_ns == 24_000 * US and m.pinned_ns == 8_000 * US
    assert (m.part, m.saving_ns) == ("sync", 16_000 * US)


def test_a_data_stall_every_third_step_is_named_periodic() -> None:
    """Ten 2900 µs step ranges every 3000 µs; each fetches its batch, then launches one
    100 µs kernel. The fetch takes 50 µs, but 2500 µs at steps 3, 6 and 9 (an epoch of
    three steps). The GPU idles from the step before's end to the launch: 100 + 50 = 150
    µs, or 100 + 2500 = 2600 µs. Steady steps 1-9: 6 x 150 + 3 x 2600 = 8700 µs idle, the
    stalls 7800 / 8700 = 90% of it, every 3 steps."""
    wait = [2500 if i in (3, 6, 9) else 50 for i in range(10)]
    launches = [(i * 3000 + w, i * 3000 + w + 10) for i, w in enumerate(wait)]
    kernels = [(b, b + 100) for _, b in launches]
    t = _loop(kernels, launches, [(i * 3000, i * 3000 + 2900) for i in range(10)])
    (f,) = pytorch.dataloader_starvation(Ctx(t))
    assert f.metrics["gpu_idle_ns"] == 8700 * US
    assert "every 3 steps (90% of it, in 3 stalls)" in f.message
    assert "persistent_workers=True" in f.message
    # the same wait spread evenly (no stall is 4x the median): not periodic
    even = [967] * 10
    launches = [(i * 3000 + w, i * 3000 + w + 10) for i, w in enumerate(even)]
    t = _loop([(b, b + 100) for _, b in launches], launches,
              [(i * 3000, i * 3000 + 2900) for i in range(10)])  # fmt: skip
    (f,) = pytorch.dataloader_starvation(Ctx(t))
    assert "every" not in f.message


def test_a_data_phase_waits_only_until_its_first_launch() -> None:
    """Five 900 µs steps every 1000 µs, each with an NVTX `data` child [0, 400): the batch
    arrives at +300, then the phase itself launches two 20 µs kernels (calls +300..+310 and
    +350..+360; kernels [310, 330), [360, 380)), and the step a third at +600. Data wait a
    step: the idle from the phase's start to its first launch, 300 µs (the previous step's
    last kernel ended at -360). The 30 µs gap between the phase's own two kernels is launch
    overhead, not data (it was 300 + 30 + 20 = 350 µs of "data" when the whole phase
    counted)."""
    launches, kernels, ranges = [], [], []
    for i in range(5):
        t = i * 1000
        for c in (300, 350, 600):
            launches.append((t + c, t + c + 10))
            kernels.append((t + c + 10, t + c + 30))
        ranges += [(t, t + 900, f"step {i}", 0), (t, t + 400, "data", 1)]
    nv = _nvtx(ranges)
    t = _loop(kernels, launches, [(0, 1)])
    ctx = Ctx(trace_of(kernels=t.table("kernels"), api=t.table("api"), nvtx=nv))
    b = step_budget(ctx)
    assert b is not None and b.n_steady == 4
    assert [p.parts.ns["data"] for p in b.main.steps] == [300 * US] * 4
    (f,) = pytorch.dataloader_starvation(ctx)
    assert f.metrics["gpu_idle_ns"] == 4 * 300 * US


def test_a_dataloader_wait_inside_the_step_is_found_by_the_loop_threads_os_calls() -> None:
    """Five 900 µs steps every 1000 µs: a 20 µs kernel launched at +10 (call +10..+20,
    runs [20, 40)), then the loop thread waits in `read` [100, 600) for its batch (a
    DataLoader queue), then a 20 µs kernel at +610 (runs [620, 640)). The step's start-to-
    first-launch window sees 10 µs + the gap from the step before's end, but the GPU is idle
    all through the read: 500 µs a step, found from the OS runtime call."""
    launches, kernels, reads = [], [], []
    for i in range(5):
        t = i * 1000
        launches += [(t + 10, t + 20), (t + 610, t + 620)]
        kernels += [(t + 20, t + 40), (t + 620, t + 640)]
        reads.append((t + 100, t + 600))
    t = _loop(kernels, launches, [(i * 1000, i * 1000 + 900) for i in range(5)])
    osrt = _spans("osrt", reads, name=_dict(["read"] * len(reads)))
    ctx = Ctx(trace_of(kernels=t.table("kernels"), api=t.table("api"), nvtx=t.table("nvtx"),
                       osrt=osrt))  # fmt: skip
    b = step_budget(ctx)
    assert b is not None and [p.parts.ns["data"] for p in b.main.steps] == [500 * US] * 4
    (f,) = pytorch.dataloader_starvation(ctx)
    assert f.metrics["gpu_idle_ns"] == 4 * 500 * US
    assert "DataLoader waits" in f.metrics["windows"]


def test_a_gap_whose_closing_launch_ends_as_the_gpu_goes_idle_is_cpu_bound() -> None:
    """Steps every 1000 µs (ranges [t, t+900)): kernel A (call [t, t+10), runs [t+10,
    t+110)), kernel B (call [t+100, t+110), runs [t+160, t+210)). B's launch call ends at
    t+110, the very ns the GPU goes idle: the GPU waited for that launch, so the 50 µs gap
    is CPU-bound (step_budget's `closing_launch >= g0`; a `>` left it "other", a mutant no
    test killed). Each steady window [t, t+1000): busy 100 + 50, idle 10 + 50 + 790 = 850
    µs, all CPU-bound (the last gap closes with the next step's A, launched after it)."""
    launches, kernels = [], []
    for i in range(5):
        t = i * 1000
        launches += [(t, t + 10), (t + 100, t + 110)]
        kernels += [(t + 10, t + 110), (t + 160, t + 210)]
    b = step_budget(Ctx(_loop(kernels, launches, [(i * 1000, i * 1000 + 900) for i in range(5)])))
    assert b is not None
    for p in b.main.steps[:-1]:  # the last window ends at its range's end, not a next start
        assert p.parts.busy_ns == 150 * US
        assert (p.parts.ns["cpu_bound"], p.parts.ns["other"]) == (850 * US, 0)
