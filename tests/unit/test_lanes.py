"""Lanes from a real report, and the per-lane index against brute force."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as pa_ipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.lanes import Intervals, build_lanes, display_name
from tuiperf.model.timeline.viewport import Viewport
from tuiperf.model.trace import Trace


@pytest.fixture(scope="module")
def vit(nsys_dir: Path) -> Trace:
    return open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))


@pytest.fixture(scope="module")
def cnn(nsys_dir: Path) -> Trace:
    return open_trace(nsys_dir / "cnn_osrt.sqlite", OpenOptions(use_cache=False))


def labels(trace: Trace) -> list[str]:
    ls = build_lanes(trace)
    return [ls.lanes[i].label for g in ls.groups for i in g.lanes]


def test_groups_gpu_first_then_processes(vit):
    ls = build_lanes(vit)
    assert [g.label for g in ls.groups] == ["GPU 0 · NVIDIA H200", "python3 (12522)"]
    assert labels(vit) == [
        "stream 7 kernels",
        "stream 7 DtoD",
        "stream 7 DtoH",
        "stream 7 HtoD",
        "stream 7 memset",
        "python3 CUDA API",
        "python3 NVTX",
        "python3 NVTX 1",
        "pt_data_pin CUDA API",
        "pt_autograd_0 CUDA API",
    ]


def test_every_event_is_in_exactly_one_lane(vit):
    ls = build_lanes(vit)
    for table in ("kernels", "memcpy", "memset", "api", "nvtx"):
        rows = np.concatenate([ln.iv.rows for ln in ls.lanes if ln.table == table])
        assert sorted(rows.tolist()) == list(range(vit.table(table).num_rows))


def test_lanes_are_sorted_and_busy_matches_durations(vit):
    ls = build_lanes(vit)
    kern = ls.lanes[0]
    assert np.all(np.diff(kern.iv.starts) >= 0)
    # real kernels on one stream may overlap by a few ns: busy time is their union
    spans = sorted(
        zip(
            vit.table("kernels")["start"].to_pylist(),
            vit.table("kernels")["end"].to_pylist(),
            strict=False,
        )
    )
    union, reach = 0, -1
    for s, e in spans:
        union += max(0, e - max(s, reach))
        reach = max(reach, e)
    assert kern.iv.busy_total == union
    assert union < pc.sum(vit.table("kernels")["duration"]).as_py()


def test_osrt_lanes_and_thread_names(cnn):
    got = labels(cnn)
    assert any(label.endswith("OS runtime") for label in got)
    assert "pt_autograd_0 CUDA API" in got


def test_locate_round_trips(vit):
    ls = build_lanes(vit)
    for table, row in (("kernels", 17), ("api", 1000), ("memcpy", 3), ("nvtx", 4)):
        lane, pos = ls.locate(vit, table, row)
        assert ls.lanes[lane].table == table
        assert int(ls.lanes[lane].iv.rows[pos]) == row


def test_locate_from_a_cache_entry_reads_its_keys_as_stored(nsys_dir: Path, tmp_path: Path):
    """The same lanes and positions as a cache-less open, and the key columns a cache entry
    holds narrow stay narrow (one row's keys never widen the whole columns)."""
    report = nsys_dir / "vit_range.sqlite"
    plain = open_trace(report, OpenOptions(use_cache=False))
    open_trace(report, OpenOptions(cache_dir=tmp_path))
    held = open_trace(report, OpenOptions(cache_dir=tmp_path))
    want, got = build_lanes(plain), build_lanes(held)
    before = {t: held.tables[t].schema for t in ("kernels", "api", "memcpy", "nvtx")}
    for table, row in (("kernels", 17), ("api", 1000), ("memcpy", 3), ("nvtx", 4)):
        assert got.locate(held, table, row) == want.locate(plain, table, row) is not None
    assert {t: held.tables[t].schema for t in before} == before
    assert before["api"].field("tid").type != pa.int64()  # narrow: the check above can fail
    assert got.locate(held, "devices", 0) is None


def test_names_of_boxes(vit):
    ls = build_lanes(vit)
    api = next(ln for ln in ls.lanes if ln.kind == "api")
    names = api.names_at(0, 3)
    assert names[0] == "cuProfilerStart"
    assert not any(n.endswith(("_v3020", "_v10000")) for n in names)
    assert display_name("api", "cudaLaunchKernel_v7000") == "cudaLaunchKernel"


def test_a_frame_of_the_real_report(vit):
    ls = build_lanes(vit)
    v = Viewport.fit(ls.lo, ls.hi, 120)
    edges = v.edges().astype(np.int64)
    busy = ls.lanes[0].iv.busy(edges)
    assert busy.shape == (120,) and busy.min() >= 0 and busy.max() <= 1
    assert ls.lanes[0].iv.starts_in(edges).sum() == 2560


intervals = st.lists(
    st.tuples(st.integers(0, 1000), st.integers(0, 200)), min_size=0, max_size=60
).map(lambda xs: sorted((s, s + d) for s, d in xs))


def brute_busy(ivs, lo, hi) -> int:
    covered = np.zeros(2000, dtype=bool)
    for s, e in ivs:
        covered[s:e] = True
    return int(covered[lo:hi].sum())


@settings(max_examples=200, deadline=None)
@given(ivs=intervals, cols=st.integers(1, 50), lo=st.integers(0, 500), span=st.integers(50, 1500))
def test_busy_fraction_is_exact(ivs, cols, lo, span):
    iv = Intervals(
        np.array([s for s, _ in ivs], dtype=np.int64),
        np.array([e for _, e in ivs], dtype=np.int64),
        np.arange(len(ivs)),
    )
    edges = np.linspace(lo, lo + span, cols + 1).astype(np.int64)
    got = iv.busy_before(edges)
    want = [brute_busy(ivs, 0, int(e)) for e in edges]
    assert got.tolist() == want


@settings(max_examples=200, deadline=None)
@given(ivs=intervals, t0=st.integers(0, 1200), w=st.integers(1, 400))
def test_window_finds_every_overlapping_event(ivs, t0, w):
    iv = Intervals(
        np.array([s for s, _ in ivs], dtype=np.int64),
        np.array([e for _, e in ivs], dtype=np.int64),
        np.arange(len(ivs)),
    )
    i0, i1 = iv.window(t0, t0 + w)
    inside = {k for k in range(i0, i1) if iv.ends[k] > t0 or iv.starts[k] >= t0}
    want = {k for k in range(len(ivs)) if iv.starts[k] < t0 + w and iv.ends[k] > t0}
    assert want <= inside


def test_at_finds_the_innermost_covering_event():
    iv = Intervals(np.array([0, 10, 12, 50]), np.array([100, 20, 15, 60]), np.arange(4))
    assert iv.at(13) == 2
    assert iv.at(18) == 1
    assert iv.at(70) == 0
    assert iv.next_after(10) == 2 and iv.prev_before(10) == 0
    assert iv.position_of(3, 50) == 3


def test_unsorted_and_reversed_input_is_repaired():
    iv = Intervals(np.array([30, 10]), np.array([40, 5]), np.array([0, 1]))
    assert iv.starts.tolist() == [10, 30]
    assert iv.ends.tolist() == [10, 40]
    assert iv.rows.tolist() == [1, 0]


def _lane_arrays(trace: Trace) -> dict[str, list[np.ndarray]]:
    ls = build_lanes(trace)
    fields = ("starts", "ends", "rows", "max_end", "u_start", "u_end", "cum_busy")
    return {lane.key: [getattr(lane.iv, f) for f in fields] for lane in ls.lanes}


@pytest.mark.parametrize("report", ["cnn_osrt.sqlite", "vit_amp.sqlite"])
def test_lane_index_from_the_cache_equals_a_fresh_build(nsys_dir: Path, tmp_path: Path, report):
    fresh = _lane_arrays(open_trace(nsys_dir / report, OpenOptions(use_cache=False)))
    opts = OpenOptions(cache_dir=tmp_path)
    first = _lane_arrays(open_trace(nsys_dir / report, opts))  # builds and stores the index
    stored = list((tmp_path).rglob("lane-index-*.arrow"))
    assert stored, "the lane index was not kept in the cache entry"
    again = open_trace(nsys_dir / report, opts)
    assert again.meta.from_cache
    restored = _lane_arrays(again)
    assert fresh.keys() == first.keys() == restored.keys()
    for key in fresh:
        for a, b, c in zip(fresh[key], first[key], restored[key]):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)


def test_a_damaged_lane_index_is_rebuilt(nsys_dir: Path, tmp_path: Path):
    opts = OpenOptions(cache_dir=tmp_path)
    want = _lane_arrays(open_trace(nsys_dir / "vit_range.sqlite", opts))
    damaged = sorted(tmp_path.rglob("lane-index-*.arrow"))
    assert damaged, "no lane index in the cache entry: nothing to damage"
    for p in damaged:
        p.write_bytes(b"not arrow")
    again = open_trace(nsys_dir / "vit_range.sqlite", opts)
    assert again.meta.from_cache  # the tables come from the entry whose index is damaged
    got = _lane_arrays(again)
    for p in damaged:  # rebuilt and stored again, whole
        assert p.exists() and p.read_bytes() != b"not arrow", f"{p.name} was not rebuilt"
        assert b"lanes" in (pa_ipc.open_file(p).schema.metadata or {}), p.name
    assert want and got.keys() == want.keys()
    for key in want:
        for a, b in zip(want[key], got[key]):
            np.testing.assert_array_equal(a, b)
