"""The memory lane's levels per column against brute force, its peak against SQL over
the nsys export, and the lane under its GPU."""

from __future__ import annotations

import sqlite3
from itertools import pairwise

import numpy as np
import pyarrow as pa

from tests.conftest import nsys_report
from tests.support.tiny import trace_of
from tuiperf import schema
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.timeline.memory_lane import LEVELS, MemoryCounter, memory_counters


def brute_column_max(times: list[int], values: list[int], edges: list[int]) -> list[int]:
    out = []
    for a, b in pairwise(edges):
        held = [v for t, v in zip(times, values) if t < a]
        level = held[-1] if held else 0
        inside = [v for t, v in zip(times, values) if a <= t < b]
        out.append(max([level, *inside]))
    return out


def test_column_max_is_brute_force() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(0, 40))
        times = np.sort(rng.integers(0, 1000, n))
        values = np.cumsum(rng.integers(-5, 10, n))
        edges = np.unique(np.sort(rng.integers(-100, 1100, int(rng.integers(2, 30)))))
        if len(edges) < 2:
            continue
        got = MemoryCounter(times, values).column_max(edges).tolist()
        assert got == brute_column_max(times.tolist(), values.tolist(), edges.tolist())


def test_levels_in_eighths_of_the_peak() -> None:
    c = MemoryCounter(np.array([10, 20, 30, 40]), np.array([8, 1, 9, 800]))
    edges = np.array([0, 15, 25, 35, 45])
    # columns: [0,15) holds 8; [15,25) 8 then 1; [25,35) 1 then 9; [35,45) 800 (the peak)
    assert c.levels(edges).tolist() == [1, 1, 1, LEVELS]  # 8/800 and 9/800 round up to 1
    assert c.peak_column(edges) == 3
    assert c.peak_column(np.array([0, 15, 25])) == -1
    assert MemoryCounter(np.array([5]), np.array([0])).levels(edges).tolist() == [0, 0, 0, 0]


def test_counter_follows_allocations_and_frees() -> None:
    mem = schema.conform(
        "gpu_memory",
        {
            "start": pa.array([300, 100, 200, 400], pa.int64()),
            "device": pa.array([0, 0, 0, 1], pa.int32()),
            "bytes": pa.array([64, 256, 64, 9], pa.int64()),
            "mem_kind": pa.array(["Device", "Device", "Device", "Pinned"]).dictionary_encode(),
            "operation": pa.array(
                ["Deallocation", "Allocation", "Allocation", "Allocation"]
            ).dictionary_encode(),
        },
        4,
    )
    (c,) = memory_counters(trace_of(gpu_memory=mem)).values()  # device 1: host memory only
    assert c.times.tolist() == [100, 200, 300] and c.values.tolist() == [256, 320, 256]


def test_nsys_lane_under_its_gpu() -> None:
    path = nsys_report("cnn_osrt")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        (peak,) = db.execute(
            "SELECT MAX(r) FROM (SELECT SUM(CASE memoryOperationType WHEN 0 THEN bytes "
            "ELSE -bytes END) OVER (ORDER BY start, rowid) AS r "
            "FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind IN (2, 3, 4))"
        ).fetchone()
    ls = build_lanes(open_trace(path, OpenOptions(use_cache=False)))
    (lane,) = [x for x in ls.lanes if x.kind == "memory"]
    assert lane.group == "gpu:0" and lane.counter is not None
    assert lane.counter.peak == peak
    assert ls.groups[0].lanes[-1] == ls.lanes.index(lane)  # the last lane of GPU 0
