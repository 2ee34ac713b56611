"""The step budget's numbers on hand-built traces, every one worked out in the comments:
one loop whose steady steps hold all seven parts (compute, exposed comm, copy, data, sync,
CPU-bound, other), and the JSON of the budget against an explicit expected document, key
by key (bench/mutation.md: these kill step_budget's survivors in `Parts`, `StepParts`,
`DeviceBudget` and `Budget.to_json`, `_measure`, `_busy_sets` and `_op_kind`).

Times below are µs (US ns each). Helpers build the tables themselves: an op is a GPU
row with its launching API call (correlation ids 1.. in the order given), on process 1,
thread 1 unless said."""

from __future__ import annotations

import pytest

from tests.support.step_loop import US, Call, Op, budget_of, build
from tuiperf.analysis.budget.step_budget import Parts
from tuiperf.model.trace import Trace

NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"


def seven_parts(n_steps: int = 4) -> Trace:
    """Steps [t, t+900) every 1000 µs, t = 1000 i. In each:

    * NVTX `data` [t, t+100): the batch; the first launch is at t+100
    * kernel A: call [t+100, t+110), runs [t+110, t+310)       compute 200
    * NCCL kernel: call [t+120, t+130), runs [t+310, t+360)    comm 50 (queued)
    * H2D pinned memcpy: call [t+140, t+150), runs [t+400, t+430)  copy 30; the gap
      [t+360, t+400) closes with an op launched long before: other 40
    * kernel C: call [t+150, t+160), runs [t+200, t+250) on another stream, under A:
      overlap 50, no busy time of its own
    * cudaStreamSynchronize [t+420, t+500): the GPU runs dry at t+430 inside it
    * kernel B: call [t+500, t+510), runs [t+510, t+600)       compute 90

    The idle gap [t+430, t+510): 70 µs held in the sync plus a 10 µs refill; 80 µs fit
    in the 80 µs the sync blocked the CPU in the step: sync 80. The gap before A (from the
    step before's B at t-400, or from the start) is data up to t+100, then CPU-bound
    [t+100, t+110) (A's call ends after the GPU went idle). The gap after B, to the next
    step's A: CPU-bound; after the last step's B no op closes it: other."""
    ops: list[Op] = []
    calls: list[Call] = []
    phases = []
    for i in range(n_steps):
        t = 1000 * i
        ops += [
            Op(t + 110, t + 310, (t + 100, t + 110)),
            Op(t + 310, t + 360, (t + 120, t + 130), name=NCCL, stream=9),
            Op(t + 400, t + 430, (t + 140, t + 150), table="memcpy", stream=8),
            Op(t + 200, t + 250, (t + 150, t + 160), stream=10),
            Op(t + 510, t + 600, (t + 500, t + 510)),
        ]
        calls.append(Call(t + 420, t + 500, "cudaStreamSynchronize"))
        phases.append((t, t + 100, "data"))
    steps = [(1000 * i, 1000 * i + 900) for i in range(n_steps)]
    return build(ops, steps, calls=calls, phases=phases)


#: the parts of a window [t, t+1000) that the next step's ops close (µs), and of the last
#: window [t, t+900): after B nothing is launched, so [t+600, t+900) is "other"
MIDDLE = {"compute": 290, "comm": 50, "copy": 30, "data": 100, "sync": 80,
          "cpu_bound": 10 + 400, "other": 40}  # fmt: skip
LAST = {**MIDDLE, "cpu_bound": 10, "other": 40 + 300}


def test_every_part_of_every_steady_step() -> None:
    b = budget_of(seven_parts())
    assert b.n_steady == 3  # step 0 is start-up
    got = [(s.label, s.start_ns, s.end_ns, s.parts.ns, s.parts.overlap_ns) for s in b.main.steps]
    us = {p: v * US for p, v in MIDDLE.items()}
    last = {p: v * US for p, v in LAST.items()}
    assert got == [
        ("step 1", 1000 * US, 2000 * US, us, 50 * US),
        ("step 2", 2000 * US, 3000 * US, us, 50 * US),
        ("step 3", 3000 * US, 3900 * US, last, 50 * US),
    ]
    assert [s.parts.wall_ns for s in b.main.steps] == [1000 * US, 1000 * US, 900 * US]
    assert [(s.cpu_start_ns, s.cpu_end_ns) for s in b.main.steps] == [
        (1000 * US, 2000 * US), (2000 * US, 3000 * US), (3000 * US, 3900 * US),
    ]  # fmt: skip
    # the start-up [0, 1000): the GPU idle from the start to A is data, then CPU-bound
    assert b.main.startup is not None
    assert b.main.startup.wall_ns == 1000 * US
    assert b.main.startup.ns == us and b.main.startup.overlap_ns == 50 * US
    # busy 290 + 50 + 30 = 370 a window; idle the rest
    assert [s.parts.busy_ns for s in b.main.steps] == [370 * US] * 3
    assert [s.parts.idle_ns for s in b.main.steps] == [630 * US, 630 * US, 530 * US]
    assert [s.parts.largest() for s in b.main.steps] == ["cpu_bound", "cpu_bound", "other"]


#: the steady total over steps 1-3 (µs): 2 x MIDDLE + LAST, wall 1000 + 1000 + 900
STEADY = {"compute": 870, "comm": 150, "copy": 90, "data": 300, "sync": 240,
          "cpu_bound": 410 + 410 + 10, "other": 40 + 40 + 340}  # fmt: skip
#: their percentages of 2900 µs, rounded to 3 decimals by hand: 870/29 = 30, 150/29 =
#: 5.17241.., 90/29 = 3.10344.., 300/29 = 10.34482.., 240/29 = 8.27586.., 830/29 =
#: 28.62068.., 420/29 = 14.48275..; busy 1110/29 = 38.27586.., idle 1790/29 = 61.72413..
STEADY_PCT = {"compute": 30.0, "comm": 5.172, "copy": 3.103, "data": 10.345, "sync": 8.276,
              "cpu_bound": 28.621, "other": 14.483}  # fmt: skip
#: a middle window's percentages of 1000 µs, and the last one's of 900 µs (10/9 =
#: 1.11111.., 340/9 = 37.77777.., 290/9 = 32.22222.., 50/9 = 5.55555.., 30/9 = 3.33333..,
#: 100/9 = 11.11111.., 80/9 = 8.88888..; busy 370/9 = 41.11111.., idle 530/9 = 58.88888..)
MIDDLE_PCT = {p: v / 10 for p, v in MIDDLE.items()}
LAST_PCT = {"compute": 32.222, "comm": 5.556, "copy": 3.333, "data": 11.111, "sync": 8.889,
            "cpu_bound": 1.111, "other": 37.778}  # fmt: skip
ORDER = ("compute", "comm", "copy", "data", "sync", "cpu_bound", "other")


def _parts(wall: int, ns: dict[str, int], pct: dict[str, float], busy: int, busy_pct: float,
           idle_pct: float, overlap: int) -> dict[str, object]:  # fmt: skip
    """The JSON of one window's parts, every value given (µs) by the caller."""
    return {
        "wall_ns": wall * US,
        "gpu_busy_ns": busy * US,
        "gpu_busy_pct": busy_pct,
        "gpu_idle_ns": (wall - busy) * US,
        "gpu_idle_pct": idle_pct,
        "overlap_ns": overlap * US,
        "parts": {p: {"ns": ns[p] * US, "pct": pct[p]} for p in ORDER},
    }


MIDDLE_JSON = _parts(1000, MIDDLE, MIDDLE_PCT, 370, 37.0, 63.0, 50)
LAST_JSON = _parts(900, LAST, LAST_PCT, 370, 41.111, 58.889, 50)
STEADY_JSON = _parts(2900, STEADY, STEADY_PCT, 1110, 38.276, 61.724, 150)


def test_the_budget_json_key_by_key() -> None:
    doc = budget_of(seven_parts()).to_json()
    # the median step per part: compute 290, comm 50, copy 30, data 100, sync 80,
    # CPU-bound median(410, 410, 10) = 410, other median(40, 40, 340) = 40
    median = {p: v * US for p, v in MIDDLE.items()}
    per_step = [
        {"label": "step 1", "start_ns": 1000 * US, "end_ns": 2000 * US, **MIDDLE_JSON},
        {"label": "step 2", "start_ns": 2000 * US, "end_ns": 3000 * US, **MIDDLE_JSON},
        {"label": "step 3", "start_ns": 3000 * US, "end_ns": 3900 * US, **LAST_JSON},
    ]
    device = {
        "device": 0,
        "steady": STEADY_JSON,
        "steady_median_ns": median,
        "startup": MIDDLE_JSON,  # [0, 1000) is split like a middle window
        "per_step": per_step,
    }
    expected = {
        "method": "nvtx",
        "method_text": "NVTX/record_function step ranges",
        # the steady windows span [1000, 3900): 2900 µs over 3 steps, floored in ns
        "step_ns": 2_900_000 // 3,
        "step_basis": "cpu_ranges",
        "step_basis_text": "the steps' CPU ranges, each to the next step's start",
        "cpu_step_median_ns": 900 * US,
        # start - launch call end of A, NCCL, memcpy, C, B: 0, 180, 250, 40, 0 a step;
        # the median of the 15 values (6 zeros, three 40s, ...) is the 8th: 40
        "queue_depth_ns": 40 * US,
        # each step's GPU work ends at t+600, its CPU range at t+900
        "gpu_lag_ns": -300 * US,
        "confidence": "high",
        "confidence_reason": "",
        "untraced_step_ns": None,  # no tuiperf.torch timing in this trace
        "capture_adds_ns": 0,
        "steady_steps": 3,
        "steady_labels": "step 1 … step 3",
        "startup_labels": "step 0",
        "startup_note": "",
        "device": 0,
        "kinds": {"steady": STEADY_JSON, "startup": MIDDLE_JSON},
        "steady_median_ns": median,
        "devices": [device],
    }
    assert doc == expected
    assert list(doc) == list(expected)  # the order of the keys too
    assert list(doc["devices"][0]) == list(device)
    assert list(doc["devices"][0]["per_step"][0]) == list(per_step[0])


@pytest.mark.parametrize(
    ("part", "pct"),
    [("busy", 100 * 370 / 900), ("idle", 100 * 530 / 900), ("other", 100 * 340 / 900)],
)
def test_pct_of_a_window(part: str, pct: float) -> None:
    p = Parts(900, {**LAST})
    assert p.pct(part) == pytest.approx(pct, rel=1e-12)


def test_pct_of_an_empty_window_is_zero() -> None:
    p = Parts(0, dict.fromkeys(ORDER, 0))
    assert [p.pct(k) for k in (*ORDER, "busy", "idle")] == [0.0] * 9
    assert p.to_json()["gpu_busy_pct"] == 0.0


def _pieces(u: tuple[object, object]) -> list[tuple[int, int]]:
    s, e = u
    return list(zip(s.tolist(), e.tolist(), strict=True))  # type: ignore[attr-defined]


def test_the_idle_causes_drawn_over_the_whole_report() -> None:
    """The device's idle time by cause, over [lo, hi): lo is 1 ns before the first event
    (t0 = 0: the first step's start), hi 1 ns after the last steady window (3900 µs, after
    the last op's end at 3600). Per step t = 0, 1000, 2000, 3000: data [t, t+100); sync
    [t+430, t+510) (the 10 µs refill fits in every window, the start-up's included);
    other [t+360, t+400) (queued memcpy); after the last B, [3600 µs, 3900 µs + 1 ns) is
    other (no op closes it). CPU-bound: [-1 ns, 0) before the data phase, [t+100, t+110),
    and [t+600, t+1000) before the next step's data phase, for t < 3000."""
    d = budget_of(seven_parts()).main
    assert sorted(d.idle_causes) == sorted(["data", "sync", "cpu_bound", "other"])
    ts = [0, 1000, 2000, 3000]
    assert _pieces(d.idle_causes["data"]) == [(t * US, (t + 100) * US) for t in ts]
    assert _pieces(d.idle_causes["sync"]) == [((t + 430) * US, (t + 510) * US) for t in ts]
    other = [((t + 360) * US, (t + 400) * US) for t in ts] + [(3600 * US, 3900 * US + 1)]
    assert _pieces(d.idle_causes["other"]) == other
    cpu = [(-1, 0)]
    for t in ts:
        cpu.append(((t + 100) * US, (t + 110) * US))
        if t < 3000:
            cpu.append(((t + 600) * US, (t + 1000) * US))
    assert _pieces(d.idle_causes["cpu_bound"]) == cpu
