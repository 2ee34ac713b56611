"""The lanes of a big table restored from the cache entry's lane index are computed into
the entry's scratch files (Cache.scratch: file-backed, reclaimable), not the process's own
memory; they equal a build without any cache, array by array. The size rule at its edge."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import nsys_report
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import scratch
from tuiperf.model.timeline import lane_cache
from tuiperf.model.timeline import lanes as lanes_module
from tuiperf.model.timeline.lanes import build_lanes

FIELDS = ("starts", "ends", "rows", "max_end", "u_start", "u_end", "cum_busy")


def _file_backed(a: np.ndarray) -> bool:
    base = a
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return isinstance(getattr(base, "obj", None), mmap.mmap)  # np.frombuffer(mmap)


def _arrays(lanes) -> dict:  # type: ignore[no-untyped-def]
    return {lane.key: [getattr(lane.iv, f) for f in FIELDS] for lane in lanes.lanes}


@pytest.mark.parametrize("report", ["vit_amp", "cnn_osrt"])  # vit_amp: overlapping kernels
def test_restored_into_scratch_equal_a_fresh_build(report: str, tmp_path: Path, monkeypatch):
    opts = OpenOptions(cache_dir=tmp_path)
    build_lanes(open_trace(nsys_report(report), opts))  # the lane index into the entry
    monkeypatch.setattr(scratch, "SCRATCH_FROM", 0)  # every table "big"
    again = open_trace(nsys_report(report), opts)
    restored = build_lanes(again)
    fresh = _arrays(build_lanes(open_trace(nsys_report(report), OpenOptions(use_cache=False))))
    got = _arrays(restored)
    assert got.keys() == fresh.keys()
    split = [k for k in fresh if k[0] in lanes_module._SPECS]  # not the memory lanes
    assert len(split) > 3
    for key in fresh:
        for name, a, b in zip(FIELDS, fresh[key], got[key]):
            np.testing.assert_array_equal(a, b, err_msg=f"{key} {name}")
    for key in split:  # every restored lane's busy sums in a scratch file
        assert _file_backed(got[key][FIELDS.index("cum_busy")]), key


def test_the_size_rule(tmp_path: Path, monkeypatch) -> None:
    trace = open_trace(nsys_report("vit_range"), OpenOptions(cache_dir=tmp_path))
    rows = trace.table("api", ["start"]).num_rows
    monkeypatch.setattr(scratch, "SCRATCH_FROM", rows * 24)
    assert lane_cache.allocator(trace, rows) is np.empty  # at the limit: in memory
    alloc = lane_cache.allocator(trace, rows + 1)
    assert alloc is not np.empty and _file_backed(alloc(10, np.int64))
    no_cache = open_trace(nsys_report("vit_range"), OpenOptions(use_cache=False))
    assert lane_cache.allocator(no_cache, rows + 1) is np.empty  # nowhere to put files


def test_split_anew_into_scratch_equal_a_fresh_build(tmp_path: Path, monkeypatch) -> None:
    """A first open (no lane index stored yet) splits a big table straight into scratch."""
    monkeypatch.setattr(scratch, "SCRATCH_FROM", 0)
    trace = open_trace(nsys_report("vit_amp"), OpenOptions(cache_dir=tmp_path))
    assert not list(tmp_path.rglob("lane-index-*"))
    got = _arrays(build_lanes(trace, keep=False))
    fresh = _arrays(build_lanes(open_trace(nsys_report("vit_amp"), OpenOptions(use_cache=False))))
    assert got.keys() == fresh.keys()
    for key in fresh:
        for name, a, b in zip(FIELDS, fresh[key], got[key]):
            np.testing.assert_array_equal(a, b, err_msg=f"{key} {name}")
    split = [k for k in fresh if k[0] in lanes_module._SPECS]
    for key in split:
        for name in ("starts", "rows", "cum_busy"):
            assert _file_backed(got[key][FIELDS.index(name)]), (key, name)


def test_the_default_limit_follows_the_machine(monkeypatch) -> None:
    monkeypatch.setattr(scratch, "SCRATCH_FROM", None)
    monkeypatch.setattr(scratch.settings, "physical_memory", lambda: 64 << 30)
    assert scratch.scratch_from() == 4 << 30  # a sixteenth
    monkeypatch.setattr(scratch.settings, "physical_memory", lambda: 8 << 30)
    assert scratch.scratch_from() == 1 << 30  # at least 1 GiB
