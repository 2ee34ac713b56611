"""Allocator snapshots: peaks, live bytes by line, fragmentation and OOM details against
a replay written here (tests/support/snapshots.brute_peak), hand arithmetic and PyTorch's
own `torch.cuda._memory_viz` helpers."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from tests.support import needs
from tests.support.snapshots import Snap, brute_peak, frames
from tuiperf.analysis.gpumem.live import BEFORE
from tuiperf.analysis.gpumem.replay import MIN_BLOCK, SMALL_SIZE, block_size, round_size
from tuiperf.analysis.gpumem.summary import build
from tuiperf.load.gpumem.snapshot import load_snapshot

MB = 1 << 20
LEAK = frames("/proj/u/train.py", 41, "train_step")
TMP = frames("/proj/u/model.py", 12, "forward")
WEIGHTS = frames("/proj/u/train.py", 8, "main")


def leak_snapshot() -> Snap:
    """Weights once, then 6 steps: a 4 MB temporary freed each step, 2 MB kept each step."""
    s = Snap()
    s.segment(0x1000_0000, 64 * MB)
    s.alloc(0x1000_0000, 8 * MB, WEIGHTS)
    for k in range(6):
        tmp = 0x1000_0000 + 8 * MB + k * 2 * MB
        s.alloc(tmp, 4 * MB, TMP)
        s.alloc(0x1000_0000 + 40 * MB + k * 2 * MB, 2 * MB, LEAK)
        s.free(tmp)
    return s


def test_peak_and_sites_match_a_replay(tmp_path: Path) -> None:
    s = leak_snapshot()
    data = load_snapshot(s.dump(tmp_path / "leak.pickle"))
    rep = build(data)
    (d,) = rep.devices
    peak, at, held = brute_peak(s.traces[0])
    assert d.peak_allocated == peak == (8 + 4 + 12) * MB  # by hand: weights, tmp, 6 x 2 MB
    assert d.peak_reserved == 64 * MB
    assert d.curve.before_allocated == 0
    got = {(x.file, x.line, x.function): x.bytes for x in d.at.sites}
    assert got == held
    assert [x.bytes for x in d.at.sites] == sorted(held.values(), reverse=True)
    # the peak's time is its entry's: 10 us per entry from the first (builder's clock)
    assert d.at.time_ns == at * 10_000


def test_end_state_agrees_with_memory_viz(tmp_path: Path) -> None:
    """A complete recording: what the replay ends with is what the dump's segments hold,
    as PyTorch's own _memory_viz.calc_active sums it (so nothing is `before` it)."""
    viz = needs.module("torch.cuda._memory_viz")
    s = leak_snapshot()
    data = load_snapshot(s.dump(tmp_path / "leak.pickle"))
    (d,) = build(data).devices
    snap = s.snapshot()
    assert int(d.curve.allocated[-1]) == sum(viz.calc_active(g) for g in snap["segments"])
    assert d.curve.before_allocated == 0 and d.curve.before_reserved == 0


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_pickle_protocol_reads_the_same(tmp_path: Path, protocol: int) -> None:
    s = leak_snapshot()
    data = load_snapshot(s.dump(tmp_path / "p.pickle", protocol))
    want = [(e["action"], e["addr"], e["size"]) for e in s.traces[0]]
    ev = data.events
    got = list(zip(*(ev[k].to_pylist() for k in ("action", "addr", "size"))))
    assert got == want


def test_late_recording_counts_what_was_there(tmp_path: Path) -> None:
    """Recording starts after the weights: their bytes are live at the peak as `before`."""
    s = leak_snapshot()
    trace = s.traces[0]
    snap = s.snapshot()
    snap["device_traces"] = [trace[2:]]  # drop segment_alloc and the weights' alloc
    p = tmp_path / "late.pickle"
    p.write_bytes(pickle.dumps(snap))
    (d,) = build(load_snapshot(p)).devices
    assert d.curve.before_allocated == 8 * MB
    assert d.curve.before_reserved == 64 * MB
    assert d.peak_allocated == (8 + 4 + 12) * MB
    before = [x for x in d.at.sites if x.file == BEFORE]
    assert [x.bytes for x in before] == [8 * MB]


def test_fragmentation_largest_free_block(tmp_path: Path) -> None:
    """Two 20 MB segments; at the peak the live blocks leave holes of 6, 2 and 4 MB
    (by hand), and PyTorch's segments at the dump agree with the state replayed."""
    s = Snap()
    a, b = 0x2000_0000, 0x4000_0000
    s.segment(a, 20 * MB)
    s.segment(b, 20 * MB)
    s.alloc(a, 6 * MB, TMP)
    s.alloc(a + 6 * MB, 8 * MB, TMP)  # a: [0,6) [6,14) then 6 MB free
    s.alloc(b + 2 * MB, 14 * MB, LEAK)  # b: 2 MB free, [2,16), 4 MB free
    s.free(a)  # a: 6 MB hole at the start, then [6,14), then 6 MB
    data = load_snapshot(s.dump(tmp_path / "frag.pickle"))
    (d,) = build(data).devices
    assert d.peak_allocated == 28 * MB
    at_end = build(data, at_ns=10**15).devices[0].at
    assert at_end.allocated == 22 * MB and at_end.reserved == 40 * MB
    assert at_end.free_cached == 18 * MB
    assert at_end.largest_free == 6 * MB
    inactive = [
        blk["size"]
        for g in s.snapshot()["segments"]
        for blk in g["blocks"]
        if blk["state"] == "inactive"
    ]
    assert max(inactive) == at_end.largest_free


def test_oom_entry(tmp_path: Path) -> None:
    s = leak_snapshot()
    s.oom(100 * MB, 3 * MB, frames("/proj/u/train.py", 50, "train_step"))
    data = load_snapshot(s.dump(tmp_path / "oom.pickle"))
    (d,) = build(data).devices
    (o,) = d.ooms
    assert o.requested_bytes == 100 * MB and o.device_free_bytes == 3 * MB
    assert o.point.allocated == (8 + 12) * MB  # weights and the six kept 2 MB blocks
    assert o.point.reserved == 64 * MB
    held = {(x.file, x.line): x.bytes for x in o.point.sites}
    assert held == {("/proj/u/train.py", 41): 12 * MB, ("/proj/u/train.py", 8): 8 * MB}


def test_user_frame_skips_cpp_torch_and_stdlib(tmp_path: Path) -> None:
    s = Snap()
    s.segment(0, 2 * MB)
    stdlib = {"filename": "/usr/lib/python3.11/contextlib.py", "line": 81, "name": "inner"}
    s.alloc(0, MIN_BLOCK, [frames("", 0, "")[0], stdlib, *frames("/w/a.py", 3, "f")[1:]])
    (d,) = build(load_snapshot(s.dump(tmp_path / "s.pickle"))).devices
    assert [(x.file, x.line) for x in d.at.sites] == [("/w/a.py", 3)]


# -- the block an allocation takes: PyTorch's rounding and split rule, by hand --------
def test_round_size() -> None:
    assert round_size(1) == 512 and round_size(512) == 512 and round_size(513) == 1024


def test_large_block_split_boundary() -> None:
    req = 4 * MB
    assert block_size(req, req + SMALL_SIZE) == req + SMALL_SIZE  # 1 MB left: not split
    assert block_size(req, req + SMALL_SIZE + MIN_BLOCK) == req  # more than 1 MB: split


def test_small_block_split_boundary() -> None:
    assert block_size(1000, 1024) == 1024  # rounded to 1024, nothing left
    assert block_size(1000, 1536) == 1024  # 512 left: split
    assert block_size(100, 512) == 512


def test_unsplit_block_counts_whole_in_allocated(tmp_path: Path) -> None:
    """A 19 MB request from a 20 MB segment takes the segment whole (1 MB left is not
    over kSmallSize): allocated is 20 MB, what it asked for 19 MB."""
    s = Snap()
    s.segment(0, 20 * MB)
    s.alloc(0, 19 * MB, TMP)
    snap = s.snapshot()
    (seg,) = snap["segments"]
    seg["blocks"] = [{**seg["blocks"][0], "size": 20 * MB}]  # as PyTorch's dump has it
    p = tmp_path / "s.pickle"
    p.write_bytes(pickle.dumps(snap))
    (d,) = build(load_snapshot(p)).devices
    assert d.curve.before_allocated == 0  # the replay ends where the dump's blocks are
    assert int(d.curve.allocated[-1]) == 20 * MB
    from tuiperf.report.gpumem import json_report

    doc = json_report(build(load_snapshot(p)))
    assert doc["peak_allocated_bytes"] == 20 * MB and doc["peak_requested_bytes"] == 19 * MB
    assert int(d.curve.requested[-1]) == 19 * MB


def test_expandable_segments_map_and_unmap(tmp_path: Path) -> None:
    """segment_map / segment_unmap (expandable segments) move reserved like segment
    alloc / free: 20 + 40 - 20 MiB by hand."""
    s = Snap()
    s.segment(0, 20 * MB)
    trace = s.traces[0]
    trace[0]["action"] = "segment_map"
    trace.append({**trace[0], "addr": 20 * MB, "size": 40 * MB, "time_us": s.t + 10})
    trace.append({**trace[0], "action": "segment_unmap", "time_us": s.t + 20})
    snap = s.snapshot()
    snap["segments"] = [
        {
            **snap["segments"][0],
            "address": 20 * MB,
            "total_size": 40 * MB,
            "blocks": [
                {
                    "address": 20 * MB,
                    "size": 40 * MB,
                    "requested_size": 0,
                    "state": "inactive",
                    "frames": [],
                }
            ],
        }
    ]
    p = tmp_path / "x.pickle"
    p.write_bytes(pickle.dumps(snap))
    (d,) = build(load_snapshot(p)).devices
    assert d.curve.reserved.tolist() == [20 * MB, 60 * MB, 40 * MB]
    assert d.peak_reserved == 60 * MB and d.curve.before_reserved == 0
