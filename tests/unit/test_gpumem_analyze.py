"""`analyze` runs the memory rules on a timeline's own memory events: a hand-built loop of
NVTX `step N` ranges whose every step cudaMallocs 2 MiB and never frees it."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
from tuiperf.analysis.engine import AnalyzeOptions, all_rule_ids, analyze
from tuiperf.analysis.gpumem import rules as R

MS = 1_000_000
MB = 1 << 20


def _loop(per_step: list[int]) -> pa.Table:
    n = len(per_step)
    nvtx = schema.conform(
        "nvtx",
        {
            "start": pa.array([i * MS for i in range(n)], pa.int64()),
            "end": pa.array([(i + 1) * MS - 1000 for i in range(n)], pa.int64()),
            "duration": pa.array([MS - 1000] * n, pa.int64()),
            "pid": pa.array([1] * n, pa.int64()),
            "tid": pa.array([1] * n, pa.int64()),
            "text": pa.array([f"step {i}" for i in range(n)]).dictionary_encode(),
            "depth": pa.array([0] * n, pa.int32()),
        },
        n,
    )
    mem = schema.conform(
        "gpu_memory",
        {
            "start": pa.array([i * MS + MS // 2 for i in range(n)], pa.int64()),
            "device": pa.array([0] * n, pa.int32()),
            "bytes": pa.array(per_step, pa.int64()),
            "address": pa.array([(i + 1) << 30 for i in range(n)], pa.int64()),
            "mem_kind": pa.array(["Device"] * n).dictionary_encode(),
            "operation": pa.array(["Allocation"] * n).dictionary_encode(),
        },
        n,
    )
    kernels = gpu_table("kernels", [(i * MS + 100, i * MS + 600_000, 0, 7, "k") for i in range(n)])
    return trace_of(nvtx=nvtx, gpu_memory=mem, kernels=kernels)


def test_creep_is_a_ranked_finding() -> None:
    assert R.RULE_CREEP in all_rule_ids() and R.RULE_FRAG in all_rule_ids()
    res = analyze(_loop([2 * MB] * 6), options=AnalyzeOptions(only=frozenset({R.RULE_CREEP})))
    (f,) = [f for f in res.findings if f.rule == R.RULE_CREEP]
    # reserved at the start of steps 1..5 (step 0 is start-up): 2, 4, 6, 8, 10 MiB
    assert f.metrics["growth_bytes"] == 8 * MB and f.metrics["steps"] == 5
    assert f.evidence.rows["bytes"].to_pylist() == [2 * MB, 4 * MB, 6 * MB, 8 * MB, 10 * MB]


def test_no_creep_under_the_minimum() -> None:
    # 4 steady steps of growth: (CREEP_MIN_BYTES // 4 rounded down) x 4 < the minimum
    step = R.CREEP_MIN_BYTES // 4 - 512
    res = analyze(_loop([step] * 6), options=AnalyzeOptions(only=frozenset({R.RULE_CREEP})))
    assert [f for f in res.findings if f.rule == R.RULE_CREEP] == []
    assert [c.status for c in res.checks if c.rule == R.RULE_CREEP] == ["clean"]


def test_skipped_without_memory_events() -> None:
    t = _loop([MB] * 4)
    del t.tables["gpu_memory"]
    res = analyze(t, options=AnalyzeOptions(only=frozenset({R.RULE_CREEP})))
    assert [c.status for c in res.checks if c.rule == R.RULE_CREEP] == ["skipped"]


def test_large_kineto_trace_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """analyze reads a torch.profiler trace's memory events again only up to REREAD_MAX
    bytes of file (at the boundary: the file's own size is read, one byte less is not)."""
    from pathlib import Path

    from tuiperf.analysis.gpumem import trace_rules
    from tuiperf.load.open import OpenOptions, open_trace

    path = Path(__file__).parents[1] / "data" / "kineto" / "kineto_vit.json.gz"
    size = path.stat().st_size
    statuses = []
    for cap in (size, size - 1):
        monkeypatch.setattr(trace_rules, "REREAD_MAX", cap)
        t = open_trace(path, OpenOptions(use_cache=False))
        res = analyze(t, options=AnalyzeOptions(only=frozenset({R.RULE_CREEP, R.RULE_FRAG})))
        statuses.append({c.rule: c.status for c in res.checks if c.rule.startswith("memory")})
    assert statuses[0] == {R.RULE_CREEP: "clean", R.RULE_FRAG: "clean"}
    assert statuses[1] == {R.RULE_CREEP: "skipped", R.RULE_FRAG: "skipped"}
