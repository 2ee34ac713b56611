"""The step budget's edges on hand-built traces (times in µs unless said, worked out in
the comments): no start-up, a one-kernel loop, which devices a budget covers and in what
order, the torch.compile note, blocking copies, a sync refill that does or does not fit,
the last gap of the report, DataLoader waits found from OS runtime calls (the loop's
thread, or the launching thread that waits the most for kernel-pattern steps), and a data
phase's first launch. Each kills step_budget survivors listed in bench/mutation.md."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.step_loop import US, Call, Op, budget_of, build
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import (
    Budget,
    DeviceBudget,
    Parts,
    StepParts,
    first_launch,
    step_budget,
)

ZERO = dict.fromkeys(("compute", "comm", "copy", "data", "sync", "cpu_bound", "other"), 0)


def _ns(**us: int) -> dict[str, int]:
    """Parts in ns from µs, the rest 0."""
    return {**ZERO, **{k: v * US for k, v in us.items()}}


def _steps_ns(b: Budget) -> list[dict[str, int]]:
    return [s.parts.ns for s in b.main.steps]


# -- no budget, one kernel, no start-up ------------------------------------------------
def test_no_budget_without_gpu_work_or_without_steps() -> None:
    steps = [(0, 1000), (1000, 2000)]
    assert step_budget(Ctx(build([], steps))) is None  # steps, no GPU op
    # GPU ops but no step range and too few kernels for a pattern
    assert step_budget(Ctx(build([Op(10, 20, (0, 5))], []))) is None


def test_one_step_one_kernel() -> None:
    """One step [0, 1000), its one kernel (call [100, 110), runs [110, 310)): the step is
    steady (one step is no start-up), the window [0, 1000) has no start-up before it (the
    report starts with the step). Idle [0, 110): the kernel was launched after the GPU
    went idle, CPU-bound; [310, 1000): no op closes it, other."""
    b = budget_of(build([Op(110, 310, (100, 110))], [(0, 1000)]))
    assert b.n_steady == 1 and b.main.startup is None
    assert _steps_ns(b) == [_ns(compute=200, cpu_bound=110, other=690)]
    assert (b.steady_labels, b.startup_labels) == ("step 0", "")
    doc = b.to_json()
    assert doc["startup_labels"] == "" and doc["startup_note"] == ""
    assert doc["kinds"]["startup"] is None and doc["devices"][0]["startup"] is None
    assert doc["step_ns"] == 1000 * US
    # the kernel starts as its call ends: no queue; it ends 690 µs before the step's end
    assert (doc["queue_depth_ns"], doc["gpu_lag_ns"]) == (0, -690 * US)


def _kineto(extra: list[Call]) -> Budget:
    """torch.profiler's three ProfilerStep ranges [1000 i, 1000 i + 1000), none slow: all
    steady, from the first. Each launches kernel (call [t+100, t+110), runs [t+110,
    t+310))."""
    ops = [Op(t + 110, t + 310, (t + 100, t + 110)) for t in (0, 1000, 2000)]
    steps = [(0, 1000), (1000, 2000), (2000, 3000)]
    labels = [f"ProfilerStep#{i}" for i in (2, 3, 4)]
    return budget_of(build(ops, steps, labels=labels, calls=extra))


def test_kineto_steps_all_steady_without_start_up() -> None:
    b = _kineto([])
    assert (b.method, b.method_text) == ("kineto", "Kineto ProfilerStep ranges")
    assert b.n_steady == 3 and b.main.startup is None
    assert b.startup_labels == "" and b.steady_labels == "ProfilerStep#2 … ProfilerStep#4"
    # [0, 110) and [1000, 1110) CPU-bound (each kernel launched after the GPU went idle)
    assert _steps_ns(b) == [
        _ns(compute=200, cpu_bound=110 + 690),
        _ns(compute=200, cpu_bound=110 + 690),
        _ns(compute=200, cpu_bound=110, other=690),
    ]


def test_a_start_up_of_one_ns() -> None:
    """In ns: two ProfilerSteps [0, 1e6), [1e6, 2e6), both steady, each launching a
    kernel at +100e3; a call 1 ns before the first step starts the report: the start-up is
    that 1 ns, GPU idle until the first kernel, launched after: CPU-bound."""
    ops = [Op(t + 110_000, t + 310_000, (t + 100_000, t + 110_000)) for t in (0, 10**6)]
    steps = [(0, 10**6), (10**6, 2 * 10**6)]
    labels = ["ProfilerStep#2", "ProfilerStep#3"]
    t = build(ops, steps, labels=labels, calls=[Call(-1, 5, "cudaGetDevice")], unit=1)
    b = budget_of(t)
    assert b.main.startup is not None
    assert (b.main.startup.wall_ns, b.main.startup.ns) == (1, {**ZERO, "cpu_bound": 1})


def test_a_budget_without_step_windows_in_json() -> None:
    """A Budget built without its StepTime: the step is the steady wall time over the
    number of steady steps, on the CPU ranges; no StepTime keys in the JSON."""
    ns = {**ZERO, "compute": 600, "other": 401}
    p = Parts(1001, ns, 7)
    s = StepParts("step 1", 1000, 2001, p)
    d = DeviceBudget(3, [s, s], Parts(2002, {k: 2 * v for k, v in ns.items()}, 14), ns, None)
    b = Budget("pattern", "repeat 1 … repeat 2", "", [d], confidence="low",
               confidence_reason="why")  # fmt: skip
    assert b.step_ns == 1001 and b.step_basis == "cpu_ranges"
    doc = b.to_json()
    assert list(doc) == [
        "method", "method_text", "step_ns", "step_basis", "confidence", "confidence_reason",
        "untraced_step_ns", "capture_adds_ns", "steady_steps", "steady_labels",
        "startup_labels", "startup_note", "device", "kinds", "steady_median_ns", "devices",
    ]  # fmt: skip
    assert doc["method_text"] == "the repeating GPU kernel pattern (no step markers)"
    assert (doc["step_ns"], doc["step_basis"], doc["device"]) == (1001, "cpu_ranges", 3)
    assert (doc["confidence"], doc["confidence_reason"]) == ("low", "why")
    assert doc["kinds"]["startup"] is None and doc["devices"][0]["startup"] is None
    # 600 / 1001 = 59.94005..%, 401 / 1001 = 40.05994..%
    steady = doc["kinds"]["steady"]
    assert steady["parts"]["compute"] == {"ns": 1200, "pct": 59.94}
    assert steady["parts"]["other"] == {"ns": 802, "pct": 40.06}
    assert (steady["overlap_ns"], steady["gpu_busy_ns"], steady["gpu_idle_ns"]) == (14, 1200, 802)
    # an unknown method is named as it is
    assert Budget("custom", "", "", [d]).method_text == "custom"


# -- which devices, in what order -----------------------------------------------------
def _four_steps(ops: list[Op]) -> Budget:
    """Steps [1000 i, 1000 i + 900), i = 0..3 (0 the start-up), each launching one kernel
    on device 0 (call [t+100, t+110), runs [t+110, t+310)), plus `ops`."""
    main = [Op(t + 110, t + 310, (t + 100, t + 110)) for t in (0, 1000, 2000, 3000)]
    return budget_of(build(main + ops, [(1000 * i, 1000 * i + 900) for i in range(4)]))


def test_devices_with_work_inside_the_steps() -> None:
    """Device 1: one op starting inside step 0 (the start-up step: still inside a step).
    Device 2: one op launched in steady step 1 that starts after its range ended (1950,
    in the gap to step 2). Device 5: one op before every step, launched there too: not
    the loop's. Device 0 has the most ops; 1 and 2 tie, the lower id first."""
    extra = [
        Op(500, 600, (400, 410), device=1),
        Op(1950, 1960, (1300, 1310), device=2),
        Op(-500, -400, (-600, -590), device=5),
    ]
    b = _four_steps(extra)
    assert [d.device for d in b.devices] == [0, 1, 2]
    # device 2's op [1950, 1960) in steady window [1000, 2000): 10 µs of compute
    assert [s.parts.ns["compute"] for s in b.devices[2].steps] == [10 * US, 0, 0]


def test_devices_when_one_device_works_inside_the_steps() -> None:
    b = _four_steps([Op(-500, -400, (-600, -590), device=5)])
    assert [d.device for d in b.devices] == [0]


def test_devices_when_no_op_is_inside_a_step() -> None:
    """Every op before the steps: the budget covers the devices of all ops (the busiest
    first), its steady steps all idle."""
    ops = [Op(-900 + 10 * k, -895 + 10 * k, (-950, -949), device=d)
           for k, d in enumerate([4, 4, 2, 4, 2, 7])]  # fmt: skip
    b = budget_of(build(ops, [(1000 * i, 1000 * i + 900) for i in range(3)]))
    assert [d.device for d in b.devices] == [4, 2, 7]
    # steady steps 1, 2: [1000, 2000) and [2000, 2900), no op closes their idle time
    assert _steps_ns(b) == [_ns(other=1000), _ns(other=900)]
    # no op launched in a steady step: no queue, no lag, the CPU ranges
    assert b.step is not None and (b.step.queue_ns, b.step.lag_ns) == (0, 0)
    assert b.step_basis == "cpu_ranges"


def test_the_loop_process_device_comes_first() -> None:
    """Device 0: the loop process's one kernel a step (4 ops). Device 1: another process
    (pid 2) runs 5 kernels a step inside the steps (20 ops, no API rows): more work, but
    the loop's own device leads."""
    other = [Op(t + 400 + 50 * j, t + 420 + 50 * j, None, device=1, pid=2)
             for t in (0, 1000, 2000, 3000) for j in range(5)]  # fmt: skip
    b = _four_steps(other)
    assert [d.device for d in b.devices] == [0, 1]
    assert b.main.device == 0 and b.to_json()["device"] == 0


#: ops a step per device: ties (3, 3 and 1, 1, 1) and one device ahead; the busiest first,
#: ties by the lower device id
COUNTS = {0: 1, 1: 3, 2: 1, 3: 3, 4: 1, 5: 4, 6: 3, 7: 1}


def test_device_order_ties_go_to_the_lower_id() -> None:
    ops = [Op(t + 400 + 20 * j, t + 410 + 20 * j, (t + 300, t + 301), device=d)
           for t in (0, 1000, 2000, 3000) for d, n in COUNTS.items() for j in range(n)]  # fmt: skip
    b = budget_of(build(ops, [(1000 * i, 1000 * i + 900) for i in range(4)]))
    assert [d.device for d in b.devices] == [5, 1, 3, 6, 0, 2, 4, 7]


# -- the torch.compile note ---------------------------------------------------------------
NOTE = (
    "torch.compile in the capture: {before} kernels ran before the first steady step "
    "({triton} of them Triton kernels Inductor generated or autotuned), against {per} a "
    "steady step; those steps are compilation, not training."
)


def test_compile_note_one_triton_kernel_before_the_steps() -> None:
    """One kernel in the report, a Triton one launched before both steps: the budget's
    devices come from it (no op inside a step); 0 kernels a steady step."""
    ops = [Op(110, 200, (100, 110), name="triton_poi_fused_add_0")]
    b = budget_of(build(ops, [(1000, 2000), (2000, 3000)]))
    assert b.extra["startup_note"] == NOTE.format(before=1, triton=1, per=0)
    assert b.to_json()["startup_note"] == b.extra["startup_note"]


def test_compile_note_counts() -> None:
    """Step 0 launches three Triton kernels; step 1 (the one steady step) launches two
    GEMMs, the first at its very start (1000: not before it). 3 before, 2 a steady step."""
    ops = [Op(100 + 50 * j, 120 + 50 * j, (90 + 50 * j, 95 + 50 * j), name=f"triton_red_{j}")
           for j in range(3)]  # fmt: skip
    ops += [Op(1010, 1100, (1000, 1005)), Op(1110, 1200, (1100, 1105))]
    b = budget_of(build(ops, [(0, 900), (1000, 1900)]))
    assert b.n_steady == 1
    assert b.extra["startup_note"] == NOTE.format(before=3, triton=3, per=2)


def test_compile_note_per_steady_step() -> None:
    """Three steady steps of 2 GEMMs each after one Triton kernel: 6 / 3 = 2 a step."""
    ops = [Op(110, 120, (100, 105), name="triton_poi_0")]
    ops += [Op(t + 10 + 100 * j, t + 60 + 100 * j, (t + 100 * j, t + 5 + 100 * j))
            for t in (1000, 2000, 3000) for j in range(2)]  # fmt: skip
    b = budget_of(build(ops, [(0, 900), (1000, 1900), (2000, 2900), (3000, 3900)]))
    assert b.n_steady == 3
    assert b.extra["startup_note"] == NOTE.format(before=1, triton=1, per=2)


def test_no_compile_note_without_kernels_or_triton() -> None:
    ops = [Op(t + 100, t + 300, None, table="memcpy") for t in (0, 1000, 2000)]
    b = budget_of(build(ops, [(0, 1000), (1000, 2000), (2000, 3000)]))
    assert "startup_note" not in b.extra and b.to_json()["startup_note"] == ""
    assert "startup_note" not in _four_steps([]).extra  # kernels, none of them Triton


# -- copies, syncs ------------------------------------------------------------------------
def test_copies_without_kernels_or_api_rows() -> None:
    """Three steps [t, t+1000), each a memcpy [t+100, t+300) and a memset [t+300, t+350),
    no kernels, no API table: no launch call is in the report, so no gap reads as an empty
    queue (CPU-bound): every gap is other (before: launch = GPU start made them CPU-bound)."""
    ops = []
    for t in (0, 1000, 2000):
        ops += [Op(t + 100, t + 300, None, table="memcpy"),
                Op(t + 300, t + 350, None, table="memset")]  # fmt: skip
    b = budget_of(build(ops, [(0, 1000), (1000, 2000), (2000, 3000)]))
    assert _steps_ns(b) == [_ns(copy=250, other=750), _ns(copy=250, other=750)]


def test_the_only_api_row_is_a_sync() -> None:
    """Kernels [t+100, t+300) without API rows (their queue unknown: the gaps they close
    are other); the one API row is cudaDeviceSynchronize [1250, 1400). The GPU runs dry at
    1300 inside it: 100 µs held (sync); the refill [1400, 2100) does not fit in 150 µs of
    sync: CPU-bound. Step 1: [1000, 1100) other, [1300, 1400) sync, [1400, 2000) CPU-bound;
    step 2: [2000, 2100) CPU-bound, [2300, 3000) other."""
    ops = [Op(t + 100, t + 300, None) for t in (0, 1000, 2000)]
    calls = [Call(1250, 1400, "cudaDeviceSynchronize")]
    b = budget_of(build(ops, [(0, 1000), (1000, 2000), (2000, 3000)], calls=calls))
    assert _steps_ns(b) == [
        _ns(compute=200, sync=100, cpu_bound=600, other=100),
        _ns(compute=200, cpu_bound=100, other=700),
    ]


def test_blocking_copies() -> None:
    """Steps [t, t+1000), t = 0, 1000, 2000; each: a pageable H2D copy (call [t+190,
    t+260), runs [t+250, t+300); its API row is row 0 in step 0), kernel A (call [t+10,
    t+20), runs [t+20, t+100)), a pinned H2D copy whose async call happens to last [t+90,
    t+130) (runs [t+150, t+200)). The GPU goes idle at t+100 inside the pinned copy's call:
    an async call does not block, the copy was launched after: CPU-bound 50. It goes idle
    at t+200 inside the pageable copy's call, which blocks: sync 50 (50 held of 70
    blocked). Then idle to the next A: CPU-bound (other after the last)."""
    ops = []
    for t in (0, 1000, 2000):
        ops += [
            Op(t + 250, t + 300, (t + 190, t + 260), table="memcpy", src_kind="Pageable"),
            Op(t + 20, t + 100, (t + 10, t + 20)),
            Op(t + 150, t + 200, (t + 90, t + 130), table="memcpy"),
        ]
    b = budget_of(build(ops, [(0, 1000), (1000, 2000), (2000, 3000)]))
    middle = _ns(compute=80, copy=100, sync=50, cpu_bound=20 + 50 + 700)
    assert _steps_ns(b) == [middle, _ns(compute=80, copy=100, sync=50, cpu_bound=70, other=700)]
    assert b.main.startup is not None and b.main.startup.ns == middle


def _refill(sync: tuple[int, int], early_sync: bool = False) -> Budget:
    """Steps [t, t+1000), t = 0, 1000, 2000; kernel A (call [t+100, t+110), runs [t+110,
    t+430)), cudaStreamSynchronize at `sync` (+t), kernel B (call [t+500, t+510), runs
    [t+510, t+600)); with `early_sync` also a cudaEventSynchronize [t+50, t+80)."""
    ops, calls = [], []
    for t in (0, 1000, 2000):
        ops += [Op(t + 110, t + 430, (t + 100, t + 110)), Op(t + 510, t + 600, (t + 500, t + 510))]
        calls.append(Call(t + sync[0], t + sync[1], "cudaStreamSynchronize"))
        if early_sync:
            calls.append(Call(t + 50, t + 80, "cudaEventSynchronize"))
    return budget_of(build(ops, [(0, 1000), (1000, 2000), (2000, 3000)], calls=calls))


def test_a_refill_that_does_not_fit_in_the_sync_is_cpu_bound() -> None:
    """The sync [t+420, t+440) blocks 20 µs; the GPU runs dry at t+430 in it: held 10
    (sync), refill [t+440, t+510) 70: 10 + 70 > 20, CPU-bound."""
    b = _refill((420, 440))
    assert _steps_ns(b) == [
        _ns(compute=410, sync=10, cpu_bound=110 + 70 + 400),
        _ns(compute=410, sync=10, cpu_bound=110 + 70, other=400),
    ]


def test_a_sync_that_starts_as_the_gpu_goes_idle() -> None:
    """The sync [t+430, t+500) starts the ns A ends; with the earlier 30 µs event sync the
    step blocked 100 µs: held 70 + refill [t+500, t+510) 10 fit, sync 80. The GPU is idle
    during the event sync [t+50, t+80) too: sync 30 (idle while the CPU is blocked in a
    sync), the rest of the gap before A CPU-bound: [t, t+50) + [t+80, t+110)."""
    b = _refill((430, 500), early_sync=True)
    middle = _ns(compute=410, sync=30 + 80, cpu_bound=50 + 30 + 400)
    assert _steps_ns(b) == [middle, _ns(compute=410, sync=30 + 80, cpu_bound=50 + 30, other=400)]
    assert b.main.startup is not None and b.main.startup.ns == middle


# -- what closes a gap --------------------------------------------------------------------
def test_a_zero_length_launch_call_that_ended_before_the_gpu_went_idle() -> None:
    """In ns, steps [t, t+1e6), t = 0, 1e6, 2e6: kernel A (call [t+100e3, t+110e3), runs
    [t+110e3, t+200e3)); kernel B launched by a 0 ns call at t+199_999 (1 ns before A
    ends), runs [t+300e3, t+400e3): the gap [t+200e3, t+300e3) had B queued: other."""
    ops = []
    for t in (0, 10**6, 2 * 10**6):
        ops += [Op(t + 110_000, t + 200_000, (t + 100_000, t + 110_000)),
                Op(t + 300_000, t + 400_000, (t + 199_999, t + 199_999))]  # fmt: skip
    b = budget_of(build(ops, [(0, 10**6), (10**6, 2 * 10**6), (2 * 10**6, 3 * 10**6)], unit=1))
    assert [(p["other"], p["cpu_bound"]) for p in _steps_ns(b)] == [
        (100 * US, 110 * US + 600 * US),
        (100 * US + 600 * US, 110 * US),
    ]


def test_the_gap_no_op_closes() -> None:
    """Steps [0, 1000), [1000, 2000): kernel 0 (call [100, 110), runs [110, 120)), kernel 1
    (call [1100, 1150), runs [1110, 1120): it ends before its launch call returns). The
    gap [120, 1110) closes with kernel 1, launched after: CPU-bound. The gap after it, to
    the end, is closed by no op: other, though kernel 1's call ended after the GPU went
    idle."""
    ops = [Op(110, 120, (100, 110)), Op(1110, 1120, (1100, 1150))]
    b = budget_of(build(ops, [(0, 1000), (1000, 2000)]))
    assert _steps_ns(b) == [_ns(compute=10, cpu_bound=110, other=880)]
    assert b.main.startup is not None
    assert b.main.startup.ns == _ns(compute=10, cpu_bound=110 + 880)


# -- DataLoader waits from OS runtime calls -----------------------------------------------
def _os_loop(osrt: list[Call], step_tid: int | None = 1) -> Budget:
    """NVTX steps [t, t+1000) on thread `step_tid`, t = 0, 1000, 2000. Each: kernel A
    (call [t+10, t+20), runs [t+20, t+40)), kernel B (call [t+610, t+620), runs [t+620,
    t+640)) on thread 1, kernel C launched by thread 2 (call [t+700, t+710), runs [t+710,
    t+720))."""
    ops = []
    for t in (0, 1000, 2000):
        ops += [Op(t + 20, t + 40, (t + 10, t + 20)), Op(t + 620, t + 640, (t + 610, t + 620)),
                Op(t + 710, t + 720, (t + 700, t + 710), tid=2)]  # fmt: skip
    steps = [(0, 1000), (1000, 2000), (2000, 3000)]
    return budget_of(build(ops, steps, osrt=osrt, step_tid=step_tid))


def test_dataloader_waits_of_the_loop_thread_only() -> None:
    """Thread 1 (the steps' thread) reads [t+100, t+600): data 500. Thread 2 polls [t+650,
    t+700) while the GPU is idle: not the loop's, CPU-bound (C was launched after). Per
    middle step: compute 50, data 500, CPU-bound [t, t+20) + [t+40, t+100) + [t+600,
    t+620) + [t+640, t+710) + [t+720, t+1000) = 450."""
    osrt = [Call(t + a, t + b, n, tid=k) for t in (0, 1000, 2000)
            for a, b, n, k in ((100, 600, "read", 1), (650, 700, "poll", 2))]  # fmt: skip
    b = _os_loop(osrt)
    assert _steps_ns(b) == [
        _ns(compute=50, data=500, cpu_bound=450),
        _ns(compute=50, data=500, cpu_bound=170, other=280),
    ]


def test_one_dataloader_wait() -> None:
    """The loop thread's one read [1100, 1600), in steady step 1: data 500 there only."""
    b = _os_loop([Call(1100, 1600, "read")])
    assert [p["data"] for p in _steps_ns(b)] == [500 * US, 0]


@pytest.mark.parametrize("step_tid", [0, 1])
def test_a_wait_without_a_thread_is_not_the_loops(step_tid: int) -> None:
    """A read with no thread id [1100, 1600) is no thread's: not data, whichever thread
    (0 or 1) the steps are on."""
    b = _os_loop([Call(1100, 1600, "read", tid=None)], step_tid=step_tid)
    assert [p["data"] for p in _steps_ns(b)] == [0, 0]


def test_a_wait_without_a_thread_is_not_an_unknown_loop_threads() -> None:
    """The step ranges and the read [1100, 1600) both lack a thread id: two unknown
    threads are not known to be one, so the read is still no thread's (not data); a read
    of thread 1 is not the loop's either (the loop's thread is unknown)."""
    for tid in (None, 1):
        b = _os_loop([Call(1100, 1600, "read", tid=tid)], step_tid=None)
        assert [p["data"] for p in _steps_ns(b)] == [0, 0], tid


NAMES = [f"layer{j}_kernel" for j in range(8)]


def _pattern_with_one_known_launcher(osrt: list[Call]) -> Budget:
    """`_pattern`'s kernels, every launch call without a thread id but thread 2's (the
    report's first API row, `init`)."""
    ops = [Op(-95, -90, (-100, -95), name="init", tid=2)]
    ops += [Op(t + 10 * j + 5, t + 10 * j + 10, (t + 10 * j, t + 10 * j + 5), name=NAMES[j],
               tid=None) for t in range(0, 5000, 1000) for j in range(8)]  # fmt: skip
    b = budget_of(build(ops, [], osrt=osrt))
    assert b.method == "pattern" and b.n_steady == 3
    return b


def _pattern(osrt: list[Call], api: bool = True, tid: int | None = 1) -> Budget:
    """No step ranges: eight kernels a period repeat five times, the periods 1000 µs
    apart (t = 1000 p): kernel j called [t+10j, t+10j+5) by thread 1, runs [t+10j+5,
    t+10j+10). The steps are the periods (4: the last repeat has no end), steady 1-3.
    Thread 2's one launch, the report's first API row, is a kernel (call [-100, -95),
    runs [-95, -90)) before them. Without `api`, no API table: launch = GPU start; `tid`
    None: every launch without a thread id."""
    ops = [Op(-95, -90, (-100, -95), name="init", tid=2 if tid is not None else None)]
    ops += [Op(t + 10 * j + 5, t + 10 * j + 10, (t + 10 * j, t + 10 * j + 5), name=NAMES[j],
               tid=tid) for t in range(0, 5000, 1000) for j in range(8)]  # fmt: skip
    if not api:
        ops = [Op(o.start, o.end, None, name=o.name, tid=o.tid) for o in ops]
    b = budget_of(build(ops, [], osrt=osrt))
    assert b.method == "pattern" and b.n_steady == 3
    return b


def test_pattern_steps_read_the_waits_of_the_launching_thread_that_waits_most() -> None:
    """Thread 2 (launches one kernel) reads [t+200, t+700) each period and writes
    [t+750, t+790) (not a DataLoader wait); thread 1 polls twice, [t+100, t+150) and
    [t+800, t+850) (more calls, less time). The launching thread that waits the most is
    thread 2: data 500 a step, its write and thread 1's polls are not. Idle per step
    between the kernels 7 x 5 and [t+80, t+1005) less the data: CPU-bound."""
    osrt = []
    for t in range(0, 5000, 1000):
        osrt += [
            Call(t + 200, t + 700, "read", tid=2),
            Call(t + 750, t + 790, "write", tid=2),
            Call(t + 100, t + 150, "poll", tid=1),
            Call(t + 800, t + 850, "poll", tid=1),
        ]
    b = _pattern(osrt)
    # windows [t+0, t+1000) from the anchor kernel's launch: busy 8 x 5 = 40; idle 960:
    # data 500, CPU-bound the rest (the next anchor was launched after the GPU went idle)
    assert _steps_ns(b) == [_ns(compute=40, data=500, cpu_bound=460)] * 3
    assert b.confidence == "medium"
    assert b.confidence_reason == "no backward and optimizer kernels in the repeats"
    doc = b.to_json()
    assert (doc["confidence"], doc["confidence_reason"]) == ("medium", b.confidence_reason)


def test_pattern_steps_without_dataloader_waits() -> None:
    b = _pattern([Call(t + 200, t + 700, "write", tid=1) for t in range(0, 5000, 1000)])
    assert [p["data"] for p in _steps_ns(b)] == [0, 0, 0]


def test_pattern_steps_without_api_rows_know_no_launching_thread() -> None:
    b = _pattern([Call(t + 200, t + 700, "read", tid=0) for t in range(0, 5000, 1000)], api=False)
    assert [p["data"] for p in _steps_ns(b)] == [0, 0, 0]


# -- first_launch -------------------------------------------------------------------------
def test_first_launch_of_a_data_phase() -> None:
    """Launches at 100, 300, 500 µs (calls' starts). Phase [0, 200): first launch 100.
    [400, 600): 500, the last launch. [450, 480): none before its end, its end. [600,
    700): after every launch, its end. [300, 400): a launch at its very start."""
    ops = [Op(a + 5, a + 50, (a, a + 5)) for a in (100, 300, 500)]
    ctx = Ctx(build(ops, [(0, 1000)]))
    a = np.array([0, 400, 450, 600, 300]) * US
    b = np.array([200, 600, 480, 700, 400]) * US
    assert first_launch(ctx, a, b).tolist() == [100 * US, 500 * US, 480 * US, 700 * US, 300 * US]
    no_gpu = Ctx(build([], [(0, 1000)]))
    assert first_launch(no_gpu, a, b).tolist() == b.tolist()


def test_pattern_steps_launches_without_a_thread_name_no_thread() -> None:
    """Every launch call lacks its thread id: no launching thread is known, so neither
    thread 0's nor thread 1's reads are the loop's."""
    osrt = [Call(t + 200, t + 700, "read", tid=k) for t in range(0, 5000, 1000) for k in (0, 1)]
    b = _pattern(osrt, tid=None)
    assert [p["data"] for p in _steps_ns(b)] == [0, 0, 0]
    # reads without a thread id either: an unknown thread is not an unknown launcher's
    osrt = [Call(t + 200, t + 700, "read", tid=None) for t in range(0, 5000, 1000)]
    b = _pattern(osrt, tid=None)
    assert [p["data"] for p in _steps_ns(b)] == [0, 0, 0]
    # one launch call of thread 2 among those without a thread id: thread 2 launches, and
    # its reads are data (500 a step) while the unknown thread's are not
    osrt += [Call(t + 200, t + 700, "read", tid=2) for t in range(0, 5000, 1000)]
    ops_tid2 = _pattern_with_one_known_launcher(osrt)
    assert [p["data"] for p in _steps_ns(ops_tid2)] == [500 * US] * 3


# -- which op closes a gap: the first of those starting together, in table order ---------
def test_ops_starting_together_close_a_gap_in_table_order() -> None:
    """One step [0, 1000); kernels in table order: #0 [200, 250) called [160, 170), #1
    [100, 150) called [10, 20), #2 [200, 240) called [30, 40), #3 [300, 350) called [260,
    270), #4 [100, 140) called [50, 60). The gap [150, 200) closes with #0 and #2 at once;
    the first in table order, #0, was launched after the GPU went idle: CPU-bound (numpy's
    default sort, not stable, puts #2 first here: launched before, "other"). Idle [0,
    100) and [250, 300) CPU-bound too, [350, 1000) other."""
    ops = [Op(200, 250, (160, 170), stream=1), Op(100, 150, (10, 20), stream=2),
           Op(200, 240, (30, 40), stream=3), Op(300, 350, (260, 270), stream=4),
           Op(100, 140, (50, 60), stream=5)]  # fmt: skip
    b = budget_of(build(ops, [(0, 1000)]))
    assert _steps_ns(b) == [_ns(compute=150, cpu_bound=100 + 50 + 50, other=650)]


# -- the GPU-side windows when the CPU runs ahead ------------------------------------------
def test_gpu_span_from_the_first_step_when_it_is_steady() -> None:
    """Three ProfilerSteps [0, 1000), [1000, 2000), [2000, 3000), all steady; each
    launches a 3000 µs kernel at +100..+110, run back to back: [110, 3110), [3110, 6110),
    [6110, 9110). Lags 2110, 4110, 6110 (median 4110 > 1000 / 4): the GPU-side span, the
    first window from the first step's own first op (110: no step before it)."""
    ops = [Op(110 + 3000 * i, 3110 + 3000 * i, (1000 * i + 100, 1000 * i + 110)) for i in range(3)]
    labels = [f"ProfilerStep#{i}" for i in (5, 6, 7)]
    b = budget_of(build(ops, [(0, 1000), (1000, 2000), (2000, 3000)], labels=labels))
    s = b.step
    assert s is not None and s.basis == "gpu_span" and b.n_steady == 3
    assert s.starts.tolist() == [110 * US, 3110 * US, 6110 * US]
    assert s.ends.tolist() == [3110 * US, 6110 * US, 9110 * US]
    # queue: start - call end = 0, 2000, 4000
    assert (s.lag_ns, s.queue_ns, b.step_ns) == (4110 * US, 2000 * US, 3000 * US)
    # before the first window: [0, 110) idle, k0 launched after: CPU-bound
    assert b.main.startup is not None and b.main.startup.ns == _ns(cpu_bound=110)


def test_gpu_span_with_steps_that_launch_nothing() -> None:
    """Steps [1000 i, 1000 i + 1000), i = 0..3, steady 1-3. Step 0 launches nothing; step 1
    kernel k1 (call [1100, 1110), runs [1110, 4110)), step 2 nothing, step 3 k3 (call [3100,
    3110), queued, runs [4110, 7110)). Also: a kernel on device 1 launched in step 1 that
    runs to 20000 (not the main device's), and one launched after the steps (call [4500,
    4510), runs [7110, 9000): in no step). GPU ends per step: -, 4110, -, 7110; lags
    4110 - 2000 and 7110 - 4000: median 2610. Windows: the first from k1's start (the step
    before ended no GPU work), then each to the running end: [1110, 4110), [4110, 4110),
    [4110, 7110)."""
    ops = [Op(1110, 4110, (1100, 1110)), Op(4110, 7110, (3100, 3110)),
           Op(7110, 9000, (4500, 4510)), Op(1130, 20000, (1120, 1130), device=1)]  # fmt: skip
    b = budget_of(build(ops, [(1000 * i, 1000 * i + 1000) for i in range(4)]))
    s = b.step
    assert s is not None and s.basis == "gpu_span" and [d.device for d in b.devices] == [0, 1]
    assert s.starts.tolist() == [1110 * US, 4110 * US, 4110 * US]
    assert s.ends.tolist() == [4110 * US, 4110 * US, 7110 * US]
    # queue: k1 0, k3 4110 - 3110 = 1000: median 500
    assert (s.lag_ns, s.queue_ns, b.step_ns) == (2610 * US, 500 * US, 2000 * US)
    assert [p["compute"] for p in _steps_ns(b)] == [3000 * US, 0, 3000 * US]


def test_gpu_span_after_a_step_whose_work_ends_at_0_ns() -> None:
    """Steps [-3000, -2000), [-2000, -1000), [-1000, 0), [0, 1000); k0 (call [-2900,
    -2890)) runs [-2890, 0): step 0's GPU work ends at 0 ns, a time like any other. k1
    (call [-1900, -1890)) runs [500, 3500), k2 (call [-900, -890)) [3500, 6500), k3 (call
    [100, 110)) [6500, 9500): lags 4500, 6500, 8500. The first window starts where step 0's
    work ended, 0 (not at k1's start, 500)."""
    ops = [Op(-2890, 0, (-2900, -2890)), Op(500, 3500, (-1900, -1890)),
           Op(3500, 6500, (-900, -890)), Op(6500, 9500, (100, 110))]  # fmt: skip
    b = budget_of(build(ops, [(1000 * i - 3000, 1000 * i - 2000) for i in range(4)]))
    s = b.step
    assert s is not None and s.basis == "gpu_span" and s.lag_ns == 6500 * US
    assert s.starts.tolist() == [0, 3500 * US, 6500 * US]


def test_the_lag_of_a_step_whose_work_ends_at_0_ns() -> None:
    """Steps [-4000, -3000), ..., [-1000, 0); k0 [-3890, -3500); steady step 1's k1 ends at
    0 ns, k2 [0, 3000), k3 [3000, 6000), called 100 µs into their steps: lags 0 + 2000,
    3000 + 1000, 6000 - 0: median 4000."""
    ops = [Op(-3890, -3500, (-3900, -3890)), Op(-2890, 0, (-2900, -2890)),
           Op(0, 3000, (-1900, -1890)), Op(3000, 6000, (-900, -890))]  # fmt: skip
    b = budget_of(build(ops, [(1000 * i - 4000, 1000 * i - 3000) for i in range(4)]))
    assert b.step is not None and b.step.lag_ns == 4000 * US and b.step_basis == "gpu_span"
