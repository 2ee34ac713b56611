"""The step budget on the real fixtures: parts add up, GPU busy is the interval union,
the bottleneck is named, and findings are ranked by the share of step time they remove."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.analysis import FIXTURES, kineto_trace, trace_of, without
from tests.support.intervals import gpu_spans, union_ns
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.savings import PART_OF_RULE, rank_by_budget
from tuiperf.analysis.budget.step_budget import IDLE_PARTS, PARTS, Budget, step_budget
from tuiperf.analysis.engine import AnalyzeOptions, analyze
from tuiperf.analysis.findings import Evidence, Finding, Fix, Scope, Severity
from tuiperf.model.trace import Trace

KINETO = ("cnn", "vit", "lstm")


def _trace(name: str) -> Trace:
    return kineto_trace(name[2:]) if name.startswith("k:") else trace_of(name)


def _budget(name: str) -> Budget:
    b = step_budget(Ctx(_trace(name)))
    assert b is not None
    return b


ALL = [*FIXTURES, "h100_2gpu_1s", *(f"k:{k}" for k in KINETO)]


@pytest.mark.parametrize("name", ALL)
def test_parts_add_up_to_the_step(name: str) -> None:
    b = _budget(name)
    for d in b.devices:
        for s in d.steps:
            assert sum(s.parts.ns.values()) == s.parts.wall_ns == s.end_ns - s.start_ns
            assert all(v >= 0 for v in s.parts.ns.values()), s.parts.ns
        wall = sum(s.end_ns - s.start_ns for s in d.steps)
        assert abs(sum(d.steady.ns.values()) - wall) <= 0.001 * wall
        assert sum(d.steady.pct(p) for p in PARTS) == pytest.approx(100, abs=0.1)


@pytest.mark.parametrize("name", ALL)
def test_gpu_busy_is_the_union_of_gpu_intervals(name: str) -> None:
    b = _budget(name)
    for d in b.devices:  # each GPU of a multi-GPU report on its own
        spans = gpu_spans(_trace(name), d.device)
        for s in d.steps:
            assert s.parts.busy_ns == union_ns(*spans, s.start_ns, s.end_ns), s.label
    starts, ends = gpu_spans(_trace(name), b.main.device)
    # overlap: the sum of clipped durations minus the union
    s = b.main.steps[0]
    clipped = sum(
        max(0, min(e, s.end_ns) - max(a, s.start_ns)) for a, e in zip(starts, ends, strict=True)
    )
    assert s.parts.overlap_ns == clipped - s.parts.busy_ns


@pytest.mark.parametrize(
    ("name", "method"),
    [*((n, "nvtx") for n in FIXTURES), *((f"k:{k}", "kineto") for k in KINETO)],
)
def test_steps_say_how_they_were_found(name: str, method: str) -> None:
    b = _budget(name)
    steps = Ctx(_trace(name)).steps
    assert b.method == method
    # start-up (the first step and before) is kept apart from the steady steps; the
    # torch.profiler fixtures record ProfilerStep#2-#4 after its wait/warm-up phases, all
    # three steady (none is 1.5x the median of the others)
    first = int(steps.steady()[0])
    assert first == 0 if method == "kineto" else first >= 1
    assert b.n_steady == len(steps) - first
    assert b.main.steps[0].cpu_start_ns == int(steps.starts[first])
    if first:
        assert b.main.startup is not None
        assert b.main.startup.wall_ns > 0


@pytest.mark.parametrize("name", ["vit_amp", "cnn_osrt", "lstm"])
def test_steps_without_nvtx_come_from_the_kernel_pattern(name: str) -> None:
    ctx = Ctx(without(trace_of(name), "nvtx"))
    b = step_budget(ctx)
    assert b is not None and b.method == "pattern"
    assert abs(len(ctx.steps) - len(Ctx(trace_of(name)).steps)) <= 1  # as many as NVTX marks


def test_vit_amp_is_cpu_bound() -> None:
    """The issue's program: GPU busy ~15-20% of a steady step, the rest waiting for the
    CPU to issue ~500 kernels a step."""
    b = _budget("vit_amp")
    st = b.steady
    assert st.largest() == "cpu_bound"
    assert 10 <= st.pct("busy") <= 25
    assert st.pct("cpu_bound") > 50
    res = analyze(trace_of("vit_amp"))
    top = res.findings[0]
    assert top.rule == "cpu_bound" and top.budget_part == "cpu_bound"
    assert top.est_saving_ns == st.ns["cpu_bound"]
    assert top.est_saving_pct == pytest.approx(st.pct("cpu_bound"), abs=0.01)
    m = top.metrics
    assert 400 <= m["kernels_per_step"] <= 600
    assert m["cpu_ns_per_kernel"] > 3 * m["mean_kernel_ns"]  # the CPU is the slow side
    fix = top.fix.text
    levers = ["bigger batch", "reduce-overhead", "fused", "small ops"]
    assert [fix.index(w) for w in levers] == sorted(fix.index(w) for w in levers)
    assert f"{m['kernels_per_step']:,.0f} launches" in fix


def test_cnn_data_wait_is_the_data_phase() -> None:
    b = _budget("cnn_osrt")
    res = analyze(trace_of("cnn_osrt"))
    (f,) = [f for f in res.findings if f.rule == "dataloader_starvation"]
    assert f.budget_part == "data" and f.est_saving_ns == b.steady.ns["data"]
    assert b.steady.pct("data") > 10
    assert b.steady.ns["copy"] > 0.05 * b.steady.wall_ns  # pageable batch copies


@pytest.mark.parametrize("name", FIXTURES)
def test_findings_share_each_part_without_double_counting(name: str) -> None:
    res = analyze(trace_of(name))
    b = res.budget
    assert b is not None
    by_part: dict[str, int] = {}
    beyond: dict[str, int] = {}  # a pinning finding's batch hand-over, outside its part
    for f in res.findings:
        if f.budget_part:
            by_part[f.budget_part] = by_part.get(f.budget_part, 0) + (f.est_saving_ns or 0)
            beyond[f.budget_part] = beyond.get(f.budget_part, 0) + f.beyond_part_ns
    for part, got in by_part.items():
        assert got <= b.steady.ns[part] + beyond[part], part
    savings = [f.est_saving_ns for f in res.findings if f.est_saving_ns is not None]
    assert savings == sorted(savings, reverse=True)
    # the findings account for most of the idle time, or one says what is left
    explained = sum(f.est_saving_ns or 0 for f in res.findings if f.budget_part in IDLE_PARTS)
    left = [f for f in res.findings if f.rule == "idle_unexplained"]
    assert explained >= 0.8 * b.steady.idle_ns or left
    if left:  # it names no change: it claims no saving, it says how much is left
        assert left[0].est_saving_ns is None
        assert left[0].metrics["unexplained_ns"] == b.steady.idle_ns - explained


def test_two_findings_on_one_part_share_it() -> None:
    b = _budget("cnn_osrt")

    def mk(rule: str, own: int) -> Finding:
        return Finding(rule, rule, Severity.WARNING, "", Fix(""), Scope("report"), "tuiperf",
                       0, Evidence.empty(), own)  # fmt: skip

    a, c = mk("host_sync_per_step", 1_000), mk("alloc_churn", 3_000)
    ranked = rank_by_budget([a, c], b, unexplained=False)
    assert ranked == [c, a]
    sync = b.steady.ns["sync"]
    assert a.est_saving_ns == sync // 4 and c.est_saving_ns == 3 * sync // 4
    assert a.own_saving_ns == 1_000
    # nsys analyze's twin of a tuiperf finding (same cause, same fix) claims nothing
    a, t = mk("host_sync_per_step", 1_000), mk("cuda_api_sync", 3_000)
    assert rank_by_budget([t, a], b, unexplained=False) == [a, t]
    assert a.est_saving_ns == sync and t.est_saving_ns is None and t.budget_part == "sync"
    # busy parts: each keeps its own estimate, capped at the part
    big = mk("layout_conversion", 10 * b.steady.wall_ns)
    rank_by_budget([big], b, unexplained=False)
    assert big.est_saving_ns == b.steady.ns["compute"]
    assert PART_OF_RULE["cpu_bound"] == "cpu_bound"


def test_what_stays_unexplained_is_said() -> None:
    """With only a kernel rule run, the idle time is all left unexplained."""
    only = frozenset({"layout_conversion", "idle_unexplained"})
    res = analyze(trace_of("cnn_osrt"), options=AnalyzeOptions(only=only))
    b = res.budget
    assert b is not None
    (f,) = [f for f in res.findings if f.rule == "idle_unexplained"]
    assert f.est_saving_ns is None  # no change named, no saving claimed
    assert f.metrics["unexplained_ns"] == b.steady.idle_ns
    assert "unexplained" in f.message and "CPU-bound" in f.message


def test_budget_parts_are_known() -> None:
    assert set(PART_OF_RULE.values()) <= set(PARTS)
    assert np.isin(list(IDLE_PARTS), list(PARTS)).all()


def test_two_gpus_copying_from_pinned_memory_are_copy_bound() -> None:
    """h100_2gpu_1s moves 64 MiB pinned host-to-device batches on both GPUs all the time."""
    res = analyze(trace_of("h100_2gpu_1s"))
    b = res.budget
    assert b is not None and len(b.devices) == 2
    for d in b.devices:
        assert d.steady.largest() == "copy"
    top = res.findings[0]  # a verdict: first when nothing saves 2% of the step, no saving
    assert top.rule == "copy_bound" and top.budget_part == "copy"
    assert top.est_saving_ns is None
    assert top.metrics["main_kind"] == "Host-to-Device"
    # one device's bytes a step (not both ranks' copies)
    memcpy = trace_of("h100_2gpu_1s").table("memcpy")
    on0 = np.asarray(memcpy["device"].to_numpy()) == b.main.device
    total = int(np.asarray(memcpy["bytes"].to_numpy())[on0].sum())
    assert top.metrics["bytes_per_step"] <= total / b.n_steady
    # pageable copies are the pageable rule's, not this one
    assert "copy_bound" not in {f.rule for f in analyze(trace_of("cnn_osrt")).findings}
