"""GPU metrics in the advice (issue 34 item 2).

The pageable-copy finding: the PCIe RX share during the flagged copies, hand-built at the
saturation threshold (70 % of peak), and on the real capture (tests/data/cpu_samples/
metrics.sqlite: 256 MiB pageable copies at ~8 GB/s), where SQL finds the link far from full.

fp32_no_tensor_cores and gpu_bound: Tensor Active against GR Active over the steady steps,
hand-built at the "idle tensor cores" threshold (5% of the busy time), and on the captures
of tests/data/gpu_metrics (BERT in FP32, the same with bf16 + TF32, a bf16 ViT), where the
quoted means equal SQL's over the same steps."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.support.data import unxz
from tests.support.loops import STEPS, US, at_step_end, loop_trace
from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.rules import budget as budget_rules
from tuiperf.analysis.rules.link_metrics import SATURATED_PCT, pcie_rx_during, pcie_text
from tuiperf.analysis.rules.metrics_evidence import IDLE_TENSOR_SHARE, StepMetrics, steady_metrics
from tuiperf.analysis.rules.pytorch import fp32_no_tensor_cores
from tuiperf.analysis.trace_ctx import TraceCtx
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace

ROOT = Path(__file__).resolve().parents[2]


def _metrics(rows: list[tuple[int, int, str, float]]) -> pa.Table:
    cols = {
        "start": pa.array([r[0] for r in rows], pa.int64()),
        "device": pa.array([r[1] for r in rows], pa.int32()),
        "metric": pa.array([r[2] for r in rows]).dictionary_encode(),
        "unit": pa.array(["%"] * len(rows)).dictionary_encode(),
        "value": pa.array([r[3] for r in rows], pa.float64()),
    }
    return schema.conform("gpu_metrics", cols, len(rows))


@pytest.mark.parametrize(("inside", "saturated"), [((69.0, 70.98), False), ((70.0, 70.0), True)])
def test_saturation_at_the_threshold(inside: tuple[float, float], saturated: bool) -> None:
    """Two copies on GPU 0 ([100, 200) and [300, 400)); one RX sample inside each, others
    outside them, on GPU 1 or of another metric, which must not count."""
    memcpy = gpu_table("memcpy", [(100, 200, 0, 7, ""), (300, 400, 0, 7, "")])
    rx = "PCIe RX Throughput"
    t = _metrics([(50, 0, rx, 99.0), (150, 0, rx, inside[0]), (200, 0, rx, 99.0),
                  (350, 0, rx, inside[1]), (150, 1, rx, 0.0),
                  (150, 0, "SMs Active", 0.0)])  # fmt: skip
    got = pcie_rx_during(TraceCtx(trace_of(memcpy=memcpy, gpu_metrics=t)), np.array([0, 1]))
    assert got is not None
    n, mean, top = got
    assert n == 2 and mean == pytest.approx(sum(inside) / 2) and top == max(inside)
    assert (mean >= SATURATED_PCT) is saturated
    assert ("near full" in pcie_text(got)) is saturated
    assert ("not the limit" in pcie_text(got)) is not saturated


def test_no_metrics_no_sentence() -> None:
    memcpy = gpu_table("memcpy", [(100, 200, 0, 7, "")])
    assert pcie_rx_during(TraceCtx(trace_of(memcpy=memcpy)), np.array([0])) is None
    assert pcie_text(None) == ""


def test_real_pageable_copies_are_not_link_bound() -> None:
    path = unxz(ROOT / "tests/data/cpu_samples/metrics.sqlite.xz")
    trace = open_trace(path, OpenOptions(use_cache=False))
    found = [f for f in analyze(trace).findings if f.rule == "pageable_h2d_in_steps"]
    assert len(found) == 1
    f = found[0]
    # the flagged copies by SQL: host-to-device (copyKind 1) from pageable memory (srcKind 0)
    # inside steps 4 … 8 (step 3 is the start-up), the RX samples inside them
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        lo, hi = db.execute(
            "SELECT (SELECT start FROM NVTX_EVENTS WHERE text = 'step 4'), "
            "(SELECT end FROM NVTX_EVENTS WHERE text = 'step 8')"
        ).fetchone()
        n, mean, top = db.execute(
            "SELECT count(*), avg(g.value), max(g.value) FROM GPU_METRICS g "
            "JOIN TARGET_INFO_GPU_METRICS n ON n.typeId = g.typeId AND n.metricId = g.metricId "
            "JOIN CUPTI_ACTIVITY_KIND_MEMCPY c ON g.timestamp >= c.start AND g.timestamp < c.end "
            "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = c.correlationId "
            "WHERE n.metricName = 'PCIe RX Throughput [Throughput %]' AND c.copyKind = 1 "
            f"AND c.srcKind = 0 AND r.start >= {lo} AND r.start < {hi}").fetchone()  # fmt: skip
    assert n > 1000 and mean < SATURATED_PCT
    assert f.metrics["pcie_rx_mean_pct"] == pytest.approx(mean, abs=0.005)
    want = (f"PCIe RX averaged {mean:.0f}% of the link's peak during these copies "
            f"(highest {top:.0f}%, {n:,} samples): the link is not the limit")  # fmt: skip
    assert want in f.message


# -- tensor cores against a busy GPU (fp32_no_tensor_cores, gpu_bound) --------------------
#: an FP32 cuBLAS GEMM on the CUDA cores (ffma), as hf_bert_fp32's
FP32_GEMM = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_ffma_execute_kernel"
NAMES = {"tensor_active_pct": "Tensor Active", "gr_active_pct": "GR Active",
         "sm_active_pct": "SMs Active", "sm_issue_pct": "SM Issue",
         "dram_read_pct": "DRAM Read Bandwidth"}  # fmt: skip


def _loop_with_metrics(tensor_last: float) -> Trace:
    """tests/support/loops: five 1000 µs steps, each a 900 µs FP32 GEMM at its end (GPU-bound:
    90%); the steady steps are 1-4, [1000, 5000) µs. Samples of device 0 at 1000 (a window's
    start: in), 2000, 3000 and 4000 µs: GR Active 80, Tensor Active 4, 4, 4, `tensor_last`,
    SMs Active 70, SM Issue 50, DRAM read 10. Outside: 500 µs (start-up) and 5000 µs (the
    window's end: out), and device 1 at 2000 µs, all 99."""
    trace = loop_trace(kernels=at_step_end([900 * US] * STEPS, FP32_GEMM))
    inside = {"GR Active": [80.0] * 4, "Tensor Active": [4.0, 4.0, 4.0, tensor_last],
              "SMs Active": [70.0] * 4, "SM Issue": [50.0] * 4,
              "DRAM Read Bandwidth": [10.0] * 4}  # fmt: skip
    rows = []
    for metric, values in inside.items():
        rows += [(t * US, 0, metric, v) for t, v in zip((1000, 2000, 3000, 4000), values)]
        rows += [(500 * US, 0, metric, 99.0), (5000 * US, 0, metric, 99.0)]
        rows += [(2000 * US, 1, metric, 99.0)]
    return Trace({**trace.tables, "gpu_metrics": _metrics(rows)}, trace.meta)


@pytest.mark.parametrize(("tensor_last", "idle"), [(4.0, False), (3.96, True)])
def test_idle_tensor_cores_at_the_threshold(tensor_last: float, idle: bool) -> None:
    """Tensor Active's mean 4.0 is exactly 5% of GR Active's 80: not idle (kills `<` ->
    `<=`); 3.99 (4 + 4 + 4 + 3.96, / 4) is under it: idle."""
    assert IDLE_TENSOR_SHARE == 0.05
    ctx = Ctx(_loop_with_metrics(tensor_last))
    tensor = (12.0 + tensor_last) / 4
    for f in (fp32_no_tensor_cores(ctx)[0], budget_rules.gpu_bound(ctx)[0]):
        m = f.metrics
        assert m["metric_samples"] == 4 and m["tensor_idle"] is idle
        assert m["tensor_active_pct"] == pytest.approx(tensor, abs=1e-9)
        assert (m["gr_active_pct"], m["sm_active_pct"], m["sm_issue_pct"]) == (80, 70, 50)
        assert m["dram_read_pct"] == 10
        assert (f"tensor cores active {tensor:.1f}% of the time while the GPU is busy 80.0% "
                "(SMs active 70.0%, SM issue 50.0%, DRAM read 10.0%)") in f.message  # fmt: skip
        assert ("nearly idle" in f.message) is idle
    working = fp32_no_tensor_cores(ctx)[0].message
    assert ("the tensor cores work 5% of the busy time" in working) is not idle


def test_idle_needs_a_busy_gpu() -> None:
    """A GPU idle over the steps (GR Active 0) never has 'idle tensor cores'."""
    means = dict.fromkeys(NAMES, 0.0)
    assert not StepMetrics(3, means).idle_tensor
    assert StepMetrics(3, {**means, "gr_active_pct": 1.0}).idle_tensor


def test_no_metrics_no_tensor_sentence() -> None:
    ctx = Ctx(loop_trace(kernels=at_step_end([900 * US] * STEPS, FP32_GEMM)))
    for f in (fp32_no_tensor_cores(ctx)[0], budget_rules.gpu_bound(ctx)[0]):
        assert "GPU metrics" not in f.message and "tensor_active_pct" not in f.metrics


def _steady_sql(path: Path, trace: Trace) -> tuple[int, dict[str, float]]:
    """Samples and means of the five metrics over the step budget's steady steps, by SQL.
    The windows are the budget's (its steps, found from the kernel pattern, are tested
    elsewhere); the means over them are this query's."""
    b = Ctx(trace).budget
    assert b is not None and len(b.devices) == 1
    win = " OR ".join(f"(g.timestamp >= {s.start_ns} AND g.timestamp < {s.end_ns})"
                      for s in b.devices[0].steps)  # fmt: skip
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT n.metricName, count(*), avg(g.value) FROM GPU_METRICS g "
            "JOIN TARGET_INFO_GPU_METRICS n ON n.typeId = g.typeId AND n.metricId = g.metricId "
            f"WHERE ({win}) GROUP BY n.metricName").fetchall()  # fmt: skip
    got = {name: (n, mean) for name, n, mean in rows}
    counts = {got[f"{m} [Throughput %]"][0] for m in NAMES.values()}
    assert len(counts) == 1
    return counts.pop(), {k: got[f"{m} [Throughput %]"][1] for k, m in NAMES.items()}


def _real(name: str) -> tuple[Path, Trace]:
    path = unxz(ROOT / f"tests/data/gpu_metrics/{name}_metrics.sqlite.xz")
    return path, open_trace(path, OpenOptions(use_cache=False))


def _quoted(n: int, d: dict[str, float]) -> str:
    return (f"GPU metrics over the steady steps ({n:,} samples): tensor cores active "
            f"{d['tensor_active_pct']:.1f}% of the time while the GPU is busy "
            f"{d['gr_active_pct']:.1f}% (SMs active {d['sm_active_pct']:.1f}%, SM issue "
            f"{d['sm_issue_pct']:.1f}%, DRAM read {d['dram_read_pct']:.1f}%)")  # fmt: skip


def test_real_fp32_bert_tensor_cores_idle() -> None:
    """hf_bert_fp32 (FP32 GEMMs on the CUDA cores): 1,140 samples over 16 steps, tensor
    cores 1.3% against a GPU busy 80.7%, under 5% of it: the finding says so."""
    path, trace = _real("hf_bert_fp32")
    n, want = _steady_sql(path, trace)
    found = fp32_no_tensor_cores(Ctx(trace))
    assert len(found) == 1
    f = found[0]
    assert f.metrics["metric_samples"] == n == 1140
    for k, v in want.items():
        assert f.metrics[k] == pytest.approx(v, abs=5e-4)
    assert want["tensor_active_pct"] < 0.05 * want["gr_active_pct"] and f.metrics["tensor_idle"]
    assert _quoted(n, want) + ": the tensor cores sit nearly idle" in f.message


def test_real_bf16_vit_tensor_cores_work() -> None:
    """healthy (bf16 ViT, GPU-bound): the gpu_bound verdict quotes tensor cores 33.7% of a
    GPU busy 99.8%: not idle."""
    path, trace = _real("healthy")
    n, want = _steady_sql(path, trace)
    found = budget_rules.gpu_bound(Ctx(trace))
    assert len(found) == 1
    f = found[0]
    assert f.metrics["metric_samples"] == n == 861 and not f.metrics["tensor_idle"]
    for k, v in want.items():
        assert f.metrics[k] == pytest.approx(v, abs=5e-4)
    share = want["tensor_active_pct"] / want["gr_active_pct"]
    assert _quoted(n, want) + f": the tensor cores work {share:.0%} of the busy time." in f.message


def test_real_fix_raises_tensor_active() -> None:
    """hf_bert_fp32 --fix (bf16 autocast + TF32): no FP32 GEMM finding, and the tensor cores
    do far more of the busy time than in the FP32 run (SQL: 10.3% of 41.5% against 1.3% of
    80.7%); the means tuiperf takes equal SQL's."""
    path, trace = _real("hf_bert_fp32_fix")
    n, fix = _steady_sql(path, trace)
    ctx = Ctx(trace)
    assert fp32_no_tensor_cores(ctx) == []
    m = steady_metrics(ctx)
    assert m is not None and m.samples == n == 785 and not m.idle_tensor
    for k, v in fix.items():
        assert m.means[k] == pytest.approx(v, rel=1e-12)
    base_path, base_trace = _real("hf_bert_fp32")
    _, base = _steady_sql(base_path, base_trace)
    assert fix["tensor_active_pct"] > 5 * base["tensor_active_pct"]
    ratio = fix["tensor_active_pct"] / fix["gr_active_pct"]
    assert ratio > 10 * base["tensor_active_pct"] / base["gr_active_pct"]
