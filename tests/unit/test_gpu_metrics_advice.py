"""GPU metrics in the pageable-copy finding (issue 34 item 2): the PCIe RX share during the
flagged copies, hand-built at the saturation threshold (70 % of peak), and on the real
capture (tests/data/cpu_samples/metrics.sqlite: 256 MiB pageable copies at ~8 GB/s), where
SQL finds the link far from full."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.support.data import unxz
from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.rules.link_metrics import SATURATED_PCT, pcie_rx_during, pcie_text
from tuiperf.analysis.trace_ctx import TraceCtx
from tuiperf.load.open import OpenOptions, open_trace

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
