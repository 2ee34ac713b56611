"""A snapshot beside a torch.profiler trace of the same run: put on the trace's clock
(epoch ns = baseTimeNanoseconds + ts), its memory at each ProfilerStep's start and the
creep across the steps come out, by hand; a trace of another time is not aligned."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.snapshots import Snap, frames
from tuiperf.analysis.gpumem import rules as R
from tuiperf.analysis.gpumem.run import memory_report
from tuiperf.load.gpumem.open import open_memory
from tuiperf.load.open import OpenOptions

MB = 1 << 20
BASE_NS = 1_700_000_000_000_000_000
LEAK = frames("/proj/u/train.py", 41, "train_step")
TMP = frames("/proj/u/model.py", 12, "forward")


def _trace(path: Path, base_ns: int) -> Path:
    """Five 900 us ProfilerSteps from ts 1000 us, two [memory] events."""
    ev: list[dict] = [
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": f"ProfilerStep#{k}",
            "pid": 1,
            "tid": 1,
            "ts": 1000.0 * (k + 1),
            "dur": 900.0,
            "args": {},
        }
        for k in range(5)
    ]
    for ts, b in ((1100.0, 512), (1200.0, -512)):
        args = {
            "Total Reserved": 2 * MB,
            "Total Allocated": max(b, 0),
            "Bytes": b,
            "Device Id": 0,
            "Device Type": 1,
            "Addr": 4096,
        }
        ev.append(
            {
                "ph": "i",
                "cat": "cpu_instant_event",
                "s": "t",
                "name": "[memory]",
                "pid": 1,
                "tid": 1,
                "ts": ts,
                "args": args,
            }
        )
    path.write_text(json.dumps({"baseTimeNanoseconds": base_ns, "traceEvents": ev}))
    return path


def _snapshot(path: Path) -> Path:
    """Each step k keeps 2 MiB from LEAK (at ts 1000k + 1500 us) and frees a temporary."""
    s = Snap(t0_us=BASE_NS // 1000)
    s.t = BASE_NS // 1000 + 1050
    s.segment(0, 64 * MB)
    for k in range(5):
        s.t = BASE_NS // 1000 + 1000 * (k + 1) + 400
        s.alloc(32 * MB, 4 * MB, TMP)
        s.alloc(k * 2 * MB, 2 * MB, LEAK)
        s.free(32 * MB)
    return s.dump(path)


def _report(tmp_path: Path, base_ns: int):
    inp = open_memory(
        _snapshot(tmp_path / "s.pickle"),
        _trace(tmp_path / "t.json", base_ns),
        OpenOptions(use_cache=False),
    )
    return memory_report(inp.memory, inp.trace, None, inp.timeline_memory)


def test_snapshot_on_the_traces_clock(tmp_path: Path) -> None:
    rep = _report(tmp_path, BASE_NS)
    (d,) = rep.devices
    # step k starts at ts 1000(k+1) us; by then k steps each kept 2 MiB
    assert [s.allocated for s in d.steps] == [0, 2 * MB, 4 * MB, 6 * MB, 8 * MB]
    assert [s.reserved for s in d.steps] == [0] + [64 * MB] * 4  # the segment at ts 1060
    # the peak: step 4's temporary (ts 5410 us) and its kept block (ts 5420 us) with the
    # four kept before: 14 MiB at 4420 us after the trace's time 0 (ts 1000 us)
    assert d.peak_allocated == 14 * MB and d.at.time_ns == 4_420_000
    creep = [f for f in rep.findings if f.rule == R.RULE_CREEP]
    assert {f.title for f in creep} == {"Memory grows every step", "Allocations never freed"}
    assert not rep.notes


def test_another_runs_trace_is_not_aligned(tmp_path: Path) -> None:
    rep = _report(tmp_path, BASE_NS + 3_600 * 10**9)  # an hour later
    (d,) = rep.devices
    assert d.steps == []
    assert any("do not overlap" in n for n in rep.notes)
