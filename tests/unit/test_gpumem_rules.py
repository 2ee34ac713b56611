"""The memory findings at their thresholds, on hand-built snapshots and step lists, and
`tuiperf memory`'s JSON keys."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.support.cli import assert_one_line_error, run_cli
from tests.support.snapshots import Snap, frames
from tuiperf.analysis.findings import Severity
from tuiperf.analysis.gpumem import rules as R
from tuiperf.analysis.gpumem.summary import DeviceReport, StepMemory, build
from tuiperf.load.gpumem.snapshot import load_snapshot

MB = 1 << 20
LEAK = frames("/proj/u/train.py", 41, "train_step")
TMP = frames("/proj/u/model.py", 12, "forward")


def _steps(levels: list[int]) -> DeviceReport:
    d = build(load_snapshot_empty()).devices[0]
    d.steps = [StepMemory(f"step {i}", i * 100, v, v, True) for i, v in enumerate(levels)]
    return d


def load_snapshot_empty():
    import pickle
    import tempfile

    s = Snap()
    s.segment(0, 2 * MB)
    p = Path(tempfile.mkdtemp()) / "e.pickle"
    p.write_bytes(pickle.dumps(s.snapshot()))
    return load_snapshot(p)


# -- creep across steady steps ---------------------------------------------------------
def test_creep_by_steps_threshold() -> None:
    g = R.CREEP_MIN_BYTES
    assert R.creep_by_steps(_steps([0, g // 2, g]))  # grows exactly the minimum
    assert not R.creep_by_steps(_steps([0, g // 2, g - 1]))
    assert not R.creep_by_steps(_steps([0, 2 * g, g]))  # falls back once: not creep
    assert not R.creep_by_steps(_steps([0, g]))  # under CREEP_MIN_STEPS steps
    (f,) = R.creep_by_steps(_steps([0, g, 2 * g, 3 * g]))
    assert f.metrics["growth_bytes"] == 3 * g and f.count == 4


# -- creep by line (snapshot) ----------------------------------------------------------
def _leaky(tmp_path: Path, kept: int, steps: int = 6, size: int = MB) -> list:
    """`steps` steps, each a freed temporary; the first `kept` steps also keep `size`
    bytes from LEAK, spread evenly over the steps."""
    s = Snap()
    s.segment(0, 256 * MB)
    every = max(steps // max(kept, 1), 1)
    n = 0
    for k in range(steps):
        s.alloc(128 * MB, 4 * MB, TMP)
        if k % every == 0 and n < kept:
            s.alloc(n * 2 * MB, size, LEAK)
            n += 1
        s.free(128 * MB)
    rep = build(load_snapshot(s.dump(tmp_path / "l.pickle")))
    return R.creep_by_line(rep, rep.devices[0])


def test_creep_by_line_repeats_threshold(tmp_path: Path) -> None:
    (f,) = _leaky(tmp_path, R.CREEP_MIN_REPEATS)
    assert (f.metrics["file"], f.metrics["line"]) == ("/proj/u/train.py", 41)
    assert f.metrics["live_bytes"] == R.CREEP_MIN_REPEATS * MB
    assert not _leaky(tmp_path, R.CREEP_MIN_REPEATS - 1)


def test_creep_by_line_bytes_threshold(tmp_path: Path) -> None:
    per = R.CREEP_MIN_BYTES // 3
    per -= per % 512
    assert not _leaky(tmp_path, 3, size=per)  # 3 x per < the minimum
    assert _leaky(tmp_path, 3, size=per + 512 * 2)


def test_creep_by_line_needs_spread(tmp_path: Path) -> None:
    """Weights made once at the start (all in the first steps) are not creep."""
    s = Snap()
    s.segment(0, 256 * MB)
    for n in range(5):
        s.alloc(n * 2 * MB, MB, LEAK)
    for _ in range(20):
        s.alloc(128 * MB, 4 * MB, TMP)
        s.free(128 * MB)
    rep = build(load_snapshot(s.dump(tmp_path / "w.pickle")))
    m = rep.devices[0].curve
    # the five allocations are entries 1..5 of the trace: within one stretch of it
    assert R.CREEP_WINDOW * len(m) > 4
    assert not R.creep_by_line(rep, rep.devices[0])


# -- fragmentation ---------------------------------------------------------------------
def _frag(tmp_path: Path, used: int, reserved: int) -> list:
    s = Snap()
    s.segment(0, reserved)
    s.alloc(0, used, TMP)
    rep = build(load_snapshot(s.dump(tmp_path / "f.pickle")))
    return R.fragmentation(rep, rep.devices[0])


def test_fragmentation_thresholds(tmp_path: Path) -> None:
    floor = R.FRAG_MIN_BYTES
    reserved = 4 * floor  # free share 25% exactly at free == floor
    (f,) = _frag(tmp_path, reserved - floor, reserved)
    assert f.metrics["free_cached_bytes"] == floor
    assert R.EXPANDABLE in f.fix.snippet
    assert not _frag(tmp_path, reserved - floor + 512, reserved)  # 1 block under
    big = 8 * floor  # the bytes are there, the share is not: 1/8 < 25%
    assert not _frag(tmp_path, big - floor, big)


# -- out of memory ---------------------------------------------------------------------
def test_oom_fix_names_fragmentation_when_pieces_were_free(tmp_path: Path) -> None:
    s = Snap()
    s.segment(0, 40 * MB)
    s.alloc(0, 10 * MB, TMP)
    s.alloc(20 * MB, 10 * MB, LEAK)  # free: 10 MB + 10 MB, in two pieces
    s.oom(16 * MB, 0, TMP)
    rep = build(load_snapshot(s.dump(tmp_path / "o.pickle")))
    d = rep.devices[0]
    (o,) = d.ooms
    f = R.out_of_memory(rep, d, o)
    assert o.point.free_cached == 20 * MB and o.point.largest_free == 10 * MB
    assert R.EXPANDABLE in f.fix.snippet
    s.oom(32 * MB, 0, TMP)  # more than all that is free: lower the peak
    s.oom(20 * MB, 0, TMP)  # exactly what is free, in no one piece: fragmentation
    s.oom(10 * MB, 0, TMP)  # as large as the largest piece: it would have fit
    s.oom(20 * MB + 512, 0, TMP)  # one block more than is free
    rep = build(load_snapshot(s.dump(tmp_path / "o2.pickle")))
    d = rep.devices[0]
    fixes = [R.out_of_memory(rep, d, o).fix for o in d.ooms[1:]]
    assert "checkpoint" in fixes[0].snippet and "12.58 MB more" in fixes[0].text
    assert R.EXPANDABLE in fixes[1].snippet
    assert "checkpoint" in fixes[2].snippet and "less memory" in fixes[2].text
    assert "checkpoint" in fixes[3].snippet and "512 B more" in fixes[3].text


def test_memory_json_keys(tmp_path: Path) -> None:
    s = Snap()
    s.segment(0, 64 * MB)
    for k in range(4):
        s.alloc(k * 4 * MB, 2 * MB, LEAK)
    s.oom(100 * MB, 5 * MB, TMP)
    p = s.dump(tmp_path / "s.pickle")
    res = run_cli("memory", str(p), "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["peak_allocated_bytes"] == 8 * MB and out["peak_reserved_bytes"] == 64 * MB
    assert out["peak_ns"] == 40_000  # segment at 0, the allocs at 10, 20, 30, 40 us
    assert out["top_sites"] == [
        {
            "file": "/proj/u/train.py",
            "line": 41,
            "function": "train_step",
            "bytes": 8 * MB,
            "count": 4,
        }
    ]
    assert out["oom"]["requested_bytes"] == 100 * MB
    assert out["oom"]["device_free_bytes"] == 5 * MB
    assert out["oom"]["held_by"][0]["bytes"] == 8 * MB
    rules = {f["rule"] for f in out["findings"]}
    assert R.RULE_OOM in rules
    csv = run_cli("memory", str(p), "--format", "csv")
    assert csv.stdout.splitlines()[1] == f"0,/proj/u/train.py,41,train_step,{8 * MB},4"


def test_at_time(tmp_path: Path) -> None:
    s = Snap()
    s.segment(0, 64 * MB)
    s.alloc(0, 2 * MB, LEAK)  # t = 10 us
    s.alloc(4 * MB, 6 * MB, TMP)  # t = 20 us
    s.free(4 * MB)
    p = s.dump(tmp_path / "s.pickle")
    out = json.loads(run_cli("memory", str(p), "--at", "15us", "--format", "json").stdout)
    assert out["allocated_bytes"] == 2 * MB and out["peak_allocated_bytes"] == 8 * MB
    assert [x["bytes"] for x in out["top_sites"]] == [2 * MB]
    bad = run_cli("memory", str(p), "--at", "soon")
    assert_one_line_error(bad, 2)


def test_trend_is_least_squares() -> None:
    from tuiperf.analysis.gpumem.summary import trend

    levels = [3, 5, 4, 8]
    steps = [StepMemory("", 0, v, v, True) for v in levels]
    assert trend(steps) == np.polyfit(np.arange(4), levels, 1)[0]
    assert trend(steps[:2]) is None


def _holes(tmp_path: Path, holes: list[int]) -> list:
    """A 1 GiB segment; blocks between `holes` free bytes each, seen at the end."""
    s = Snap()
    s.segment(0, 1024 * MB)
    at, freed = 0, []
    for h in holes:
        s.alloc(at, h, TMP)  # what becomes the hole
        freed.append(at)
        at += h
        s.alloc(at, 64 * MB, LEAK)
        at += 64 * MB
    s.alloc(at, 1024 * MB - at, LEAK)  # the rest in use
    for a in freed:
        s.free(a)
    rep = build(load_snapshot(s.dump(tmp_path / "h.pickle")), at_ns=10**15)
    return R.fragmentation(rep, rep.devices[0])


def test_fragmented_only_when_no_piece_holds_half(tmp_path: Path) -> None:
    (f,) = _holes(tmp_path, [128 * MB, 128 * MB])  # 256 MiB free, 25%; largest = half
    assert f.metrics["free_cached_bytes"] == 256 * MB and f.severity == Severity.INFO
    (g,) = _holes(tmp_path, [128 * MB - 512, 128 * MB - 512, 1024])  # largest under half
    assert g.metrics["largest_free_bytes"] == 128 * MB - 512
    assert g.severity == Severity.WARNING and g.title == "Fragmented allocator cache"
