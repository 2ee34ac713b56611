"""The bounded path for long snapshots: the trace spilled to disk a few entries at a time,
replayed in chunks of a few events, and the curve kept as each time bucket's extremes. The
real captures' oracles (PyTorch's peaks to the byte, the test's own replay of the trace for
what is live at the peak and at the out-of-memory, the planted leak) must hold on it as
they do on the in-memory path (test_gpumem_real.py, whose checks are run again here)."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.unit import test_gpumem_real as real
from tests.unit.test_gpumem_real import SNAPSHOTS, files  # noqa: F401 (the fixture)
from tuiperf.analysis.gpumem import curve
from tuiperf.analysis.gpumem.summary import build
from tuiperf.load.gpumem import snapshot
from tuiperf.load.gpumem.snapshot import load_snapshot

BUCKETS = 64


@pytest.fixture(autouse=True)
def streamed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(snapshot, "SPILL_AT", 3)
    monkeypatch.setattr(curve, "EXACT_MAX", 0)
    monkeypatch.setattr(curve, "CURVE_BUCKETS", BUCKETS)
    monkeypatch.setattr(curve, "CHUNK", 7)
    yield


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_peaks_are_pytorchs(files: Path, name: str) -> None:  # noqa: F811
    real.test_snapshot_peaks_are_pytorchs(files, name)


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_top_sites_are_the_replays(files: Path, name: str) -> None:  # noqa: F811
    real.test_top_sites_are_the_replays(files, name)


def test_oom_request_free_and_holders(files: Path) -> None:  # noqa: F811
    real.test_oom_request_free_and_holders(files)


def test_leak_by_hand_and_creep(files: Path) -> None:  # noqa: F811
    real.test_leak_top_sites_by_hand(files)
    real.test_creep_names_the_planted_leak_only(files, "leak")
    real.test_creep_is_silent_on_the_oom_and_fragmentation_runs(files)


def test_snapshot_on_the_kineto_clock_counts_steps(files: Path) -> None:  # noqa: F811
    real.test_snapshot_on_the_kineto_clock_counts_steps(files)


@pytest.mark.parametrize("name", ["leak", "fragmentation"])
def test_trace_is_spilled_and_the_curve_bounded(files: Path, name: str) -> None:  # noqa: F811
    path = files / f"{name}.pickle"
    trace = real.raw(files, name)["device_traces"][0]
    data = load_snapshot(path)
    assert data.events.num_rows == 0
    assert data.spill is not None and data.spill.events == len(trace)
    (d,) = build(data).devices
    m = d.curve
    assert len(m) == len(trace) and len(m.replayed.block) == 0
    chunks = -(-len(trace) // curve.CHUNK)
    # a bucket's highest and lowest allocated and reserved, highest requested, last event;
    # a bucket cut by a chunk's end counts once more
    assert len(m.time_ns) <= 6 * (BUCKETS + 1 + chunks)
    assert len(m.time_ns) < len(trace)
    assert (np.diff(m.time_ns) >= 0).all()
    # the curve's highest point is the peak, at its time (the test's own replay)
    r = real.replay_of(files, name)
    t0 = trace[0]["time_us"]
    assert int(m.allocated.max()) == r.peak
    assert int(m.time_ns[m.peak_index]) == (trace[r.peak_at]["time_us"] - t0) * 1000
    # and its last point is the end of the recording
    assert int(m.time_ns[-1]) == (trace[-1]["time_us"] - t0) * 1000


def test_spill_reads_back_what_was_written(tmp_path: Path) -> None:
    """Every entry's numbers come back from the spill file in order."""
    trace = [{"action": "alloc", "addr": 4096 * i, "size": 512 + i, "stream": 0,
              "time_us": 10 + i, "frames": []} for i in range(10)]  # fmt: skip
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": [trace]}, protocol=4))
    data = load_snapshot(path)
    assert data.spill is not None
    got = list(data.spill.chunks())
    assert [len(c["code"]) for c in got] == [3, 3, 3, 1]
    cat = {k: np.concatenate([c[k] for c in got]).tolist() for k in ("addr", "size", "time")}
    assert cat == {
        "addr": [4096 * i for i in range(10)],
        "size": [512 + i for i in range(10)],
        "time": [(10 + i) * 1000 for i in range(10)],
    }
