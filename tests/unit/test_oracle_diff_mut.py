"""Oracle: the comparison of two reports (analysis.diff.compare) as its JSON, key by key, and the
evidence each budget part's reason cites, on stand-in sides and hand-built traces whose
every number is worked out in the comments (bench/mutation.md: these kill diff's
survivors in `to_json`, `Row.to_json`, `_evidence`, `_most`, `_with_devices`, `_notes`).

Times are ns; the steady windows are [0, 1e6), [1e6, 2e6), [2e6, 3e6) on both sides."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
from tuiperf.analysis.budget.step_budget import PARTS
from tuiperf.analysis.diff import compare
from tuiperf.model.trace import Trace

MS = 1_000_000
WINDOWS = [(0, MS), (MS, 2 * MS), (2 * MS, 3 * MS)]
T = (0, MS, 2 * MS)  # the windows' starts


def _device(dev: int, parts: dict[str, int]) -> SimpleNamespace:
    steps = [SimpleNamespace(start_ns=a, end_ns=b) for a, b in WINDOWS]
    steady = SimpleNamespace(ns={p: parts.get(p, 0) for p in PARTS})
    return SimpleNamespace(device=dev, steps=steps, steady=steady)


def _side(
    steps: list[int],
    parts: dict[str, int] | None = None,
    *,
    path: str = "x.nsys-rep",
    gpus: Sequence[str] = ("H100",),
    other_gpu: dict[str, int] | None = None,
    method: str = "nvtx",
    events: int = 1,
    tool: str = "",
) -> compare.Side:
    """A measured side with a stand-in budget: `parts` are the steady totals (3 steps) of
    device 0, `other_gpu` those of a device 1."""
    devices = [_device(0, parts or {})]
    if other_gpu is not None:
        devices.append(_device(1, other_gpu))
    budget: Any = SimpleNamespace(
        main=devices[0],
        devices=devices,
        steady=devices[0].steady,
        method=method,
        method_text={"nvtx": "NVTX step ranges", "pattern": "kernel pattern"}[method],
    )
    return compare.Side(
        path, budget if steps else None, steps, list(gpus), {}, {}, {}, {}, {}, events, tool
    )


def _kernels(rows: Sequence[tuple[int, int, str]]) -> pa.Table:
    return gpu_table("kernels", [(a, b, 0, 7, n) for a, b, n in rows])


def _api(rows: Sequence[tuple[int, int, str]]) -> pa.Table:
    n = len(rows)
    return schema.conform(
        "api",
        {
            "start": pa.array([r[0] for r in rows], pa.int64()),
            "end": pa.array([r[1] for r in rows], pa.int64()),
            "duration": pa.array([r[1] - r[0] for r in rows], pa.int64()),
            "pid": pa.array([1] * n, pa.int64()),
            "tid": pa.array([1] * n, pa.int64()),
            "correlation_id": pa.array(range(1, n + 1), pa.int64()),
            "name": pa.array([r[2] for r in rows], pa.string()).dictionary_encode(),
        },
        n,
    )


def _memcpy(rows: Sequence[tuple[int, int, str, int]]) -> pa.Table:
    """(start, end, copy kind, bytes)."""
    n = len(rows)
    return schema.conform(
        "memcpy",
        {
            "start": pa.array([r[0] for r in rows], pa.int64()),
            "end": pa.array([r[1] for r in rows], pa.int64()),
            "duration": pa.array([r[1] - r[0] for r in rows], pa.int64()),
            "device": pa.array([0] * n, pa.int32()),
            "bytes": pa.array([r[3] for r in rows], pa.int64()),
            "copy_kind": pa.array([r[2] for r in rows], pa.string()).dictionary_encode(),
        },
        n,
    )


def _each_step(dur: int, name: str, at: int = 0) -> list[tuple[int, int, str]]:
    """One `name` of `dur` ns in each window, starting `at` ns into it."""
    return [(t + at, t + at + dur, name) for t in T]


def _compare(
    b: compare.Side, a: compare.Side, tb: Trace | None = None, ta: Trace | None = None
) -> compare.Diff:
    return compare.compare(b, a, tb or trace_of(), ta or trace_of())


# -- the JSON, key by key -----------------------------------------------------------------
def _row(section: str, name: str, before: Any, after: Any, change: Any, pct: Any,
         status: str, unit: str = "ns", detail: str = "", counts: Any = (None, None),
         noise: float = 0.0) -> dict[str, Any]:  # fmt: skip
    return {
        "section": section,
        "name": name,
        "detail": detail,
        "unit": unit,
        "before": before,
        "after": after,
        "change": change,
        "change_pct": pct,
        "before_count": counts[0],
        "after_count": counts[1],
        "status": status,
        "noise": noise,
    }


def test_the_diff_json_key_by_key() -> None:
    """Before: steps 1.29, 1.30, 1.31 ms (median 1.3 ms, MAD 10 µs, IQR 1.305 - 1.295 =
    10 µs), compute 0.9 ms over the 3 steps, a 300 µs gemm a step. After: three 1.4 ms
    steps (MAD 0), compute 1.2 ms, data 30 µs, a 400 µs gemm a step. Slower: +100 µs >
    10 µs noise, 100 / 1300 = 7.6923..% of the step; compute +100 µs a step (+33.333..%)
    explains it, data +10 µs a step is within the noise."""
    b = _side([1_290_000, 1_300_000, 1_310_000], {"compute": 900_000}, path="before.nsys-rep")
    a = _side([1_400_000] * 3, {"compute": 1_200_000, "data": 30_000}, path="after.nsys-rep")
    tb = trace_of(kernels=_kernels(_each_step(300_000, "gemm")))
    ta = trace_of(kernels=_kernels(_each_step(400_000, "gemm")))
    doc = compare.to_json(_compare(b, a, tb, ta))

    def part(name: str, p: str, before: float, after: float, status: str) -> dict[str, Any]:
        pct = None if not before else round(100 * (after - before) / before, 3)
        return _row("budget", name, before, after, after - before, pct, status, detail=p,
                    noise=10_000.0)  # fmt: skip

    rows = [
        _row("step", "median step", 1_300_000.0, 1_400_000.0, 100_000.0, 7.692, "changed"),
        _row("step", "step MAD", 10_000.0, 0.0, -10_000.0, -100.0, "changed"),
        _row("step", "step IQR", 10_000.0, 0.0, -10_000.0, -100.0, "changed"),
        _row("step", "steady steps", 3, 3, 0, 0.0, "same", unit="count"),
        part("compute", "compute", 300_000.0, 400_000.0, "changed"),
        part("comm", "comm", 0.0, 0.0, "same"),
        part("copy", "copy", 0.0, 0.0, "same"),
        part("data wait", "data", 0.0, 10_000.0, "within noise"),
        part("host sync", "sync", 0.0, 0.0, "same"),
        part("CPU-bound", "cpu_bound", 0.0, 0.0, "same"),
        part("other", "other", 0.0, 0.0, "same"),
        # 900 µs / 3 steps -> 1.2 ms / 3: +100 µs a step, +33.333..%; one launch a step
        _row(
            "kernels", "gemm", 300_000.0, 400_000.0, 100_000.0, 33.333, "changed", counts=(1.0, 1.0)
        ),
    ]

    def side(path: str, median: float, mad: float) -> dict[str, Any]:
        return {"path": path, "gpus": ["H100"], "steps_method": "nvtx", "steady_steps": 3,
                "median_step_ns": median, "mad_ns": mad, "iqr_ns": mad}  # fmt: skip

    expected = {
        "verdict": "slower",
        "change_ns": 100_000.0,
        "change_pct": 7.692,
        "noise_ns": 10_000.0,
        "per_step": True,
        "reasons": [
            {
                "part": "compute",
                "change_ns": 100_000.0,
                "evidence": "most changed kernel: gemm 0.30 ms → 0.40 ms",
            },
        ],
        "notes": [],
        "before": side("before.nsys-rep", 1_300_000.0, 10_000.0),
        "after": side("after.nsys-rep", 1_400_000.0, 0.0),
        "rows": rows,
    }
    assert doc == expected
    assert list(doc) == list(expected)
    assert [list(r) for r in doc["rows"]] == [list(r) for r in rows]
    assert list(doc["before"]) == list(expected["before"])  # type: ignore[arg-type]


def test_the_json_of_a_side_without_steps_and_of_findings() -> None:
    """No steps before: unknown, no median, no steps method; findings rows carry the
    finding status (gone / new / changed beyond 1% of the step / same)."""
    b = _side([])
    b.findings = {"sync: x": ("Host sync", 5.0, 10), "gone rule": ("Old", 2.0, 5)}
    a = _side([1000] * 3)
    a.findings = {"sync: x": ("Host sync", 6.5, 13), "new rule": ("New", 1.0, 2)}
    doc = compare.to_json(_compare(b, a))
    assert (doc["verdict"], doc["change_ns"], doc["change_pct"], doc["noise_ns"]) == (
        "unknown", 0.0, None, 0.0,
    )  # fmt: skip
    assert doc["per_step"] is False and doc["reasons"] == []
    assert doc["before"] == {"path": "x.nsys-rep", "gpus": ["H100"], "steps_method": None,
                             "steady_steps": 0, "median_step_ns": None, "mad_ns": 0.0,
                             "iqr_ns": 0.0}  # fmt: skip
    got = [(r["name"], r["before"], r["after"], r["status"], r["detail"]) for r in doc["rows"]
           if r["section"] == "findings"]  # fmt: skip
    assert got == [
        ("gone rule", 2.0, None, "gone", "Old"),
        ("new rule", None, 1.0, "new", "New"),
        ("sync: x", 5.0, 6.5, "changed", "Host sync"),  # +1.5 % of the step > 1 %
    ]
    # the step rows cannot be compared without the before's steps
    steps = [(r["name"], r["before"], r["status"]) for r in doc["rows"] if r["section"] == "step"]
    assert steps == [("median step", None, "not comparable")]


# -- the evidence of each part ------------------------------------------------------------
BEFORE_STEPS = [1_290_000, 1_300_000, 1_310_000]  # MAD 10 µs
SLOWER_STEPS = [1_500_000] * 3


def _reason(part: str, tb: Trace, ta: Trace) -> tuple[str, float, str]:
    """The one reason when only `part` grew, by 600 µs over the 3 steps (+200 µs a step)."""
    d = _compare(_side(BEFORE_STEPS, {part: 300_000}), _side(SLOWER_STEPS, {part: 900_000}),
                 tb, ta)  # fmt: skip
    assert d.verdict == compare.SLOWER
    (r,) = d.reasons
    return r


def test_cpu_bound_and_other_cite_the_kernels_per_step() -> None:
    """Before one gemm a step, after two (and one NCCL kernel, counted too): 1 -> 3."""
    tb = trace_of(kernels=_kernels(_each_step(1000, "gemm")))
    ta = trace_of(kernels=_kernels(_each_step(1000, "gemm") + _each_step(1000, "gemm", 5000)
                                   + _each_step(1000, "ncclKernel_AllReduce", 9000)))  # fmt: skip
    for part in ("cpu_bound", "other"):
        assert _reason(part, tb, ta) == (part, 200_000.0, "kernels per step 1 → 3")


def test_compute_and_comm_cite_their_own_kernels() -> None:
    """A step's NCCL kernel grew 50 -> 400 µs (most), its gemm 100 -> 150 µs, a relu
    appeared (20 µs a step): compute cites the gemm (the compute kernel that changed most),
    comm the NCCL kernel, each per step in ms."""
    nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
    tb = trace_of(kernels=_kernels(_each_step(100_000, "gemm") + _each_step(50_000, nccl, 500_000)))
    ta = trace_of(kernels=_kernels(_each_step(150_000, "gemm") + _each_step(400_000, nccl, 500_000)
                                   + _each_step(20_000, "relu", 300_000)))  # fmt: skip
    assert _reason("compute", tb, ta)[2] == "most changed kernel: gemm 0.10 ms → 0.15 ms"
    assert _reason("comm", tb, ta)[2] == f"most changed kernel: {nccl} 0.05 ms → 0.40 ms"
    # a kernel only one side has: "none" on the other
    ta = trace_of(kernels=_kernels(_each_step(250_000, "gemm2")))
    tb = trace_of(kernels=_kernels(_each_step(100_000, "gemm")))
    ev = _reason("compute", tb, ta)[2]
    assert ev == "most changed kernel: gemm2 none → 0.25 ms"


def test_copy_and_sync_cite_copies_and_sync_calls() -> None:
    """Copies: a 1 MiB H2D copy a step 50 -> 100 µs. Calls: cudaLaunchKernel 10 -> 500 µs a
    step (changed most, not a sync), cudaStreamSynchronize_v3020 100 -> 200 µs (its version
    suffix dropped), cudaDeviceSynchronize 5 -> 6 µs."""
    mb = 1 << 20
    tb = trace_of(
        memcpy=_memcpy([(t, t + 50_000, "Host-to-Device", mb) for t in T]),
        api=_api(_each_step(10_000, "cudaLaunchKernel") +
                 _each_step(100_000, "cudaStreamSynchronize_v3020", 100_000) +
                 _each_step(5_000, "cudaDeviceSynchronize", 300_000)),
    )  # fmt: skip
    ta = trace_of(
        memcpy=_memcpy([(t, t + 100_000, "Host-to-Device", mb) for t in T]),
        api=_api(_each_step(500_000, "cudaLaunchKernel") +
                 _each_step(200_000, "cudaStreamSynchronize", 500_000) +
                 _each_step(6_000, "cudaDeviceSynchronize", 800_000)),
    )  # fmt: skip
    assert (
        _reason("copy", tb, ta)[2] == "most changed copies: Host-to-Device ≤1 MiB 0.05 ms → 0.10 ms"
    )
    assert (
        _reason("sync", tb, ta)[2]
        == "most changed sync call: cudaStreamSynchronize 0.10 ms → 0.20 ms"
    )


def test_data_cites_the_data_wait_per_step() -> None:
    """Data 300 -> 900 µs over 3 steps: 0.10 -> 0.30 ms a step."""
    assert _reason("data", trace_of(), trace_of())[2] == "data wait per step 0.10 ms → 0.30 ms"


def test_a_part_without_evidence_cites_nothing() -> None:
    """Compute grew but neither side has a kernel: no evidence."""
    assert _reason("compute", trace_of(), trace_of())[2] == ""


def test_each_gpu_of_a_multi_gpu_change() -> None:
    """Two GPUs: compute per step on GPU 0 +200 µs (0.3 -> 0.9 ms over 3 steps), on GPU 1
    -0.5 ms (3 -> 1.5 ms): the reason gives each."""
    b = _side(BEFORE_STEPS, {"compute": 300_000}, other_gpu={"compute": 3_000_000})
    a = _side(SLOWER_STEPS, {"compute": 900_000}, other_gpu={"compute": 1_500_000})
    (r,) = _compare(b, a).reasons
    assert r == ("compute", 200_000.0, "per GPU: GPU 0 +200 µs, GPU 1 −500 µs")
    tb = trace_of(kernels=_kernels(_each_step(100_000, "gemm")))
    ta = trace_of(kernels=_kernels(_each_step(300_000, "gemm")))
    (r,) = _compare(b, a, tb, ta).reasons
    assert (
        r[2] == "most changed kernel: gemm 0.10 ms → 0.30 ms; per GPU: GPU 0 +200 µs, GPU 1 −500 µs"
    )
    # one GPU on one side: no split
    (r,) = _compare(b, _side(SLOWER_STEPS, {"compute": 900_000})).reasons
    assert r[2] == ""


# -- notes ---------------------------------------------------------------------------------
def test_notes_say_what_cannot_be_compared() -> None:
    b = _side([], path="empty.nsys-rep", events=0, tool="Nsight Systems", gpus=())
    a = _side([1000] * 3, tool="torch.profiler (Kineto)", gpus=())
    assert _compare(b, a).notes == [
        "before (empty.nsys-rep) holds no GPU work or CUDA calls: nothing of it can be compared",
        "captured by different tools (Nsight Systems vs torch.profiler (Kineto)): kernels, "
        "copies and the GPU parts of the budget compare; host-side time (CPU-bound, CUDA API "
        "calls, so step time too) carries each profiler's own overhead (torch.profiler "
        "records every operator), and calls that only one tool records appear or vanish",
        "the GPU model of after is not recorded: whether the two ran on the same GPU cannot "
        "be told",
    ]
    b = _side([], gpus=("A100",))
    a = _side([1000] * 2, gpus=("A100",))
    assert _compare(a, b).notes == [
        "after has no steady steps (no step ranges and no repeating kernel pattern): step "
        "time and the budget cannot be compared; kernels, copies and calls are whole-report "
        "totals"
    ]
    b = _side([1000] * 3, gpus=("A100", "H100"))
    a = _side([1000] * 2, gpus=("H100",), method="pattern")
    assert _compare(b, a).notes == [
        "different GPUs (A100, H100 vs H100): kernel times compare the hardware as well as "
        "the change",
        "different step counts (3 vs 2 steady steps): figures are per step",
        "steps found differently (before: NVTX step ranges; after: kernel pattern): step "
        "time compares; where a step begins may differ, and a data wait is only seen with a "
        "data range",
    ]
    both = _side([], gpus=(), events=0)
    assert _compare(both, _side([], gpus=(), events=0)).notes == [
        "before (x.nsys-rep) holds no GPU work or CUDA calls: nothing of it can be compared",
        "after (x.nsys-rep) holds no GPU work or CUDA calls: nothing of it can be compared",
    ]


@pytest.mark.parametrize(
    ("after_ns", "after_n", "status"),
    [
        (102.0, 1.0, compare.WITHIN_NOISE),  # +2 % a launch: the same; launches the same
        (103.0, 1.0, "changed"),  # +3 %: changed
        (204.0, 2.0, compare.SAME_PER_LAUNCH),  # 102 a launch, one launch more a step
        (150.0, 1.5, compare.WITHIN_NOISE),  # 100 a launch, half a launch more (window totals)
    ],
)
def test_same_per_launch_at_two_percent(after_ns: float, after_n: float, status: str) -> None:
    assert compare.LAUNCH_SAME == 0.02
    r = compare.Row("kernels", "k", 100.0, after_ns, "ns", before_count=1.0, after_count=after_n)
    assert r.status == status
