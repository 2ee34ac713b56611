"""Issue 33 on the real H200 captures of tests/data/gpumem (README.md there): the peaks
against what PyTorch itself printed (expect_*.json), what is live at the peak against a
replay of the snapshot's trace written here, the nsys figure against SQL, and the memory
creep rule at its boundaries.

The replay here follows PyTorch's CUDACachingAllocator, not tuiperf's code: `allocated`
drops at `free_requested` (the allocator's free() lowers its allocated_bytes stat, then
records FREE_REQUESTED; torch/cuda/memory.py's TraceEntry: "the allocator received a call
to free memory"), and the block stays in its segment until `free_completed` ("the memory
... is now able to be used in future allocation calls"; later than free_requested only
when the block was used on other streams). In these captures the two are always
adjacent, which a test checks. A block is the request rounded up to 512 bytes; the free
block it is cut from (running from its address to the next block in use or awaiting its
free, or its segment's end) is split unless what is left is under 512 bytes (small pool,
requests up to 1 MiB, and any block of an expandable segment) or not over 1 MiB (large
pool): then the whole free block is taken. The replay's own peak must equal PyTorch's
max_memory_allocated() before its sites are compared."""

from __future__ import annotations

import bisect
import json
import lzma
import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import REPO
from tests.support.snapshots import CPP_FRAME, Snap, frames
from tuiperf import api
from tuiperf.analysis.gpumem import curve
from tuiperf.analysis.gpumem import rules as R
from tuiperf.analysis.gpumem.summary import StepMemory, build
from tuiperf.load.gpumem import snapshot
from tuiperf.load.gpumem.snapshot import load_snapshot
from tuiperf.report.gpumem import json_report

DATA = REPO / "tests/data/gpumem"
SNAPSHOTS = ("leak", "fragmentation", "fragmentation_expandable", "oom", "leak_kineto")
MB = 1 << 20
MIB_128 = 128 * MB


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gpumem")
    for packed in DATA.glob("*.xz"):
        (out / packed.name.removesuffix(".xz")).write_bytes(lzma.decompress(packed.read_bytes()))
    (out / "leak_kineto.json.gz").write_bytes((DATA / "leak_kineto.json.gz").read_bytes())
    return out


def expect(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"expect_{name}.json").read_text())


def report_json(path: Path) -> dict[str, Any]:
    return json_report(api.memory(path, use_cache=False))


def raw(files: Path, name: str) -> dict[str, Any]:
    """Our own capture, so plain pickle is fine here (tuiperf never unpickles)."""
    with open(files / f"{name}.pickle", "rb") as f:
        return pickle.load(f)


# -- the replay written here ------------------------------------------------------------
_LIB = re.compile(r"/lib/python3\.\d+/")


def user_frame(stack: list[dict[str, Any]]) -> tuple[str, int, str] | None:
    """The innermost Python frame outside site-packages and Python's own lib."""
    for f in stack:
        name = f["filename"]
        if name.endswith(".py") and "/site-packages/" not in name and not _LIB.search(name):
            return (name, f["line"], f["name"])
    return None


def block_of(requested: int, extent: int | None, expandable: bool) -> int:
    rounded = 512 if requested < 512 else -(-requested // 512) * 512
    if extent is None or extent < rounded:
        return rounded
    left = extent - rounded
    if rounded <= MB or expandable:
        return rounded if left >= 512 else extent
    return rounded if left > MB else extent


class Replay:
    """Allocated bytes after each entry, the first entry at its maximum, and the
    allocations live there (address -> (block, user frame))."""

    def __init__(self, trace: list[dict[str, Any]], expandable: bool, stop: int = -1) -> None:
        mapped: list[tuple[int, int]] = []  # (start, end) of segments and mapped pages
        used: list[int] = []  # addresses of blocks in use or awaiting free_completed
        live: dict[int, tuple[int, tuple | None]] = {}
        self.allocated = self.peak = self.requested = self.peak_requested = 0
        self.peak_at, self.at_peak = -1, dict(live)
        req: dict[int, int] = {}
        for i, e in enumerate(trace):
            act, a = e["action"], int(e.get("addr") or 0)
            if act == "alloc":
                b = block_of(e["size"], self._extent(mapped, used, a), expandable)
                bisect.insort(used, a)
                live[a], req[a] = (b, user_frame(e["frames"])), e["size"]
                self.allocated += b
                self.requested += e["size"]
            elif act == "free_requested":
                self.allocated -= live.pop(a)[0]
                self.requested -= req.pop(a)
            elif act == "free_completed":
                used.remove(a)
            elif act in ("segment_alloc", "segment_map"):
                bisect.insort(mapped, (a, a + e["size"]))
            elif act in ("segment_free", "segment_unmap"):
                mapped.remove((a, a + e["size"]))
            self.peak_requested = max(self.peak_requested, self.requested)
            if self.allocated > self.peak:
                self.peak, self.peak_at, self.at_peak = self.allocated, i, dict(live)
            if i == stop:
                break
        self.live = live

    @staticmethod
    def _extent(mapped: list[tuple[int, int]], used: list[int], a: int) -> int | None:
        k = bisect.bisect_right(mapped, (a, 1 << 62)) - 1
        if k < 0 or a >= mapped[k][1]:
            return None
        end = mapped[k][1]
        while k + 1 < len(mapped) and mapped[k + 1][0] == end:  # pages mapped end to end
            k += 1
            end = mapped[k][1]
        j = bisect.bisect_right(used, a)
        return min(used[j] if j < len(used) else end, end) - a


def by_frame(live: dict[int, tuple[int, tuple | None]]) -> dict[tuple | None, int]:
    out: dict[tuple | None, int] = {}
    for b, site in live.values():
        out[site] = out.get(site, 0) + b
    return out


def tuiperf_sites(sites: list[dict[str, Any]]) -> dict[tuple | None, int]:
    """tuiperf's sites keyed as the replay keys them (no user frame: None)."""
    return {(s["file"], s["line"], s["function"]) if s["line"] else None: s["bytes"] for s in sites}


def replay_of(files: Path, name: str, stop: int = -1) -> Replay:
    snap = raw(files, name)
    expandable = bool(snap["allocator_settings"].get("expandable_segments"))
    return Replay(snap["device_traces"][0], expandable, stop)


# -- 1. peaks -------------------------------------------------------------------------
@pytest.mark.parametrize("name", SNAPSHOTS)
def test_snapshot_peaks_are_pytorchs(files: Path, name: str) -> None:
    got, want = report_json(files / f"{name}.pickle"), expect(name)
    assert got["peak_allocated_bytes"] == want["max_memory_allocated"]
    assert got["peak_reserved_bytes"] == want["max_memory_reserved"]
    assert got["peak_requested_bytes"] == want["requested_bytes_peak"]


def test_kineto_trace_peaks_are_pytorchs(files: Path) -> None:
    got, want = report_json(files / "leak_kineto.json.gz"), expect("leak_kineto")
    assert got["peak_allocated_bytes"] == want["max_memory_allocated"] == 201_843_200
    assert got["peak_reserved_bytes"] == want["max_memory_reserved"] == 207_618_048
    assert got["peak_requested_bytes"] is None  # the trace has block sizes only


def test_oom_request_free_and_holders(files: Path) -> None:
    want = expect("oom")
    # "Tried to allocate 128.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which
    # 136.37 GiB is free. ... 2.69 GiB is allocated by PyTorch, and 8.87 MiB is reserved
    # by PyTorch but unallocated."
    m = re.search(r"Tried to allocate ([\d.]+) MiB.* of which ([\d.]+) GiB is free", want["error"])
    assert m and float(m[1]) * MB == MIB_128
    held = re.search(r"([\d.]+) GiB is allocated .* ([\d.]+) MiB is reserved", want["error"])
    assert held
    oom = report_json(files / "oom.pickle")["oom"]
    assert oom["requested_bytes"] == MIB_128
    assert round(oom["device_free_bytes"] / (1 << 30), 2) == float(m[2])
    assert round(oom["allocated_bytes"] / (1 << 30), 2) == float(held[1])
    assert round(oom["free_cached_bytes"] / MB, 2) == float(held[2])
    assert oom["allocated_bytes"] == want["max_memory_allocated"]  # the peak was just before
    # what held it: the replay stopped at the oom entry, grouped by user frame
    snap = raw(files, "oom")
    trace = snap["device_traces"][0]
    (at,) = [i for i, e in enumerate(trace) if e["action"] == "oom"]
    assert trace[at]["device_free"] == oom["device_free_bytes"]
    r = replay_of(files, "oom", stop=at)
    assert r.allocated == oom["allocated_bytes"]
    assert tuiperf_sites(oom["held_by"]) == by_frame(r.live)
    assert sum(s["bytes"] for s in oom["held_by"]) == oom["allocated_bytes"]


# -- 2. what is live at the peak --------------------------------------------------------
@pytest.mark.parametrize("name", SNAPSHOTS)
def test_top_sites_are_the_replays(files: Path, name: str) -> None:
    trace = raw(files, name)["device_traces"][0]
    frees = [i for i, e in enumerate(trace) if e["action"] == "free_requested"]
    assert all(trace[i + 1]["action"] == "free_completed" for i in frees)
    r = replay_of(files, name)
    want = expect(name)
    assert r.peak == want["max_memory_allocated"]  # the replay itself is PyTorch's
    assert r.peak_requested == want["requested_bytes_peak"]
    got = report_json(files / f"{name}.pickle")
    sites = tuiperf_sites(got["top_sites"])
    assert sites == by_frame(r.at_peak)
    assert [s["bytes"] for s in got["top_sites"]] == sorted(sites.values(), reverse=True)
    assert got["peak_ns"] == (trace[r.peak_at]["time_us"] - trace[0]["time_us"]) * 1000


def test_leak_top_sites_by_hand(files: Path) -> None:
    """The planted leak's figures, read off the replay: the leaked outputs of line 63 and
    the inputs they keep alive (line 57), 12 steps of each."""
    r = replay_of(files, "leak")
    held = by_frame(r.at_peak)
    leak = expect("leak")["leak_file"]  # where it was captured
    assert expect("leak")["leak_line"] == 63
    assert held[(leak, 57, "train")] == 12 * 64 * 1024 * 4  # 12 kept x = randn(64, 1024)


# -- 4. memory creep ---------------------------------------------------------------------
def creep_lines(path: Path) -> set[tuple[str, int]]:
    rep = api.memory(path, use_cache=False)
    return {
        (f.metrics["file"], f.metrics["line"])
        for f in rep.findings
        if f.rule == R.RULE_CREEP and "line" in f.metrics
    }


@pytest.mark.parametrize("name", ["leak", "leak_kineto"])
def test_creep_names_the_planted_leak_only(files: Path, name: str) -> None:
    want = expect(name)
    leak = want["leak_file"]
    assert creep_lines(files / f"{name}.pickle") == {(leak, want["leak_line"]), (leak, 57)}


def test_creep_is_silent_on_the_oom_and_fragmentation_runs(files: Path) -> None:
    """oom.py keeps nothing across steps: at its end the failing step's activations and
    gradients are live, made in that step."""
    for name in ("oom", "fragmentation", "fragmentation_expandable"):
        assert creep_lines(files / f"{name}.pickle") == set()


def test_no_text_reads_colon_zero(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tuiperf.cli import main

    for name in ("leak", "oom"):
        assert main(["memory", str(files / f"{name}.pickle"), "--no-cache"]) == 0
        out = capsys.readouterr().out
        assert ":0 (" not in out and " :0" not in out
        assert "<no user frame: autograd engine / C++>" in out


LEAK = frames("/proj/u/train.py", 41, "train_step")
TMP = frames("/proj/u/model.py", 12, "forward")


def _creep(tmp_path: Path, groups: list[int], gap: int = 10, fr: Any = LEAK) -> list:
    """`groups[k]` 1 MiB allocations from `fr` kept, made one after another, then `gap`
    temporaries (3 entries each) made and freed."""
    s = Snap()
    s.segment(0, 512 * MB)
    n = 0
    for g in groups:
        for _ in range(g):
            s.alloc(n * MB, MB, fr)
            n += 1
        for _ in range(gap):
            s.alloc(256 * MB, 4 * MB, TMP)
            s.free(256 * MB)
    rep = build(load_snapshot(s.dump(tmp_path / "c.pickle")))
    return R.creep_by_line(rep, rep.devices[0])


def test_creep_needs_min_periods(tmp_path: Path) -> None:
    assert R.CREEP_MIN_PERIODS == 3
    (f,) = _creep(tmp_path, [1, 1, 1])
    assert f.metrics["periods"] == 3 and f.metrics["most_in_one_period"] == 1
    assert not _creep(tmp_path, [2, 2])  # two stretches: state + the last step's


def test_creep_most_in_one_period_boundary(tmp_path: Path) -> None:
    assert R.CREEP_MAX_PERIOD_SHARE == 0.5
    (f,) = _creep(tmp_path, [2, 1, 1])  # 2 of 4: half
    assert f.metrics["allocations"] == 4
    assert not _creep(tmp_path, [1, 1, 3])  # 3 of 5 in the last step
    assert not _creep(tmp_path, [1, 1, 1, 1, 5])  # many stretches, most in the last


def test_creep_the_real_class(tmp_path: Path) -> None:
    """One early workspace and the last step's gradients (the leak capture's `no user
    frame` line): made in two stretches, not a leak; the same kept every step is one."""
    assert not _creep(tmp_path, [1, 0, 0, 0, 12])
    assert not _creep(tmp_path, [12, 0, 0, 0, 0])  # made once at the start
    assert len(_creep(tmp_path, [1] * 12)) == 1


def test_creep_window_boundary(tmp_path: Path) -> None:
    """Without steps, a stretch is CREEP_WINDOW of the entries from its first allocation:
    an allocation `window` entries later opens the next one, one entry earlier does not."""
    s = Snap()
    s.segment(0, 512 * MB)
    for _ in range(33):  # 1 + 99 entries
        s.alloc(256 * MB, 4 * MB, TMP)
        s.free(256 * MB)
    (d,) = build(load_snapshot(s.dump(tmp_path / "w.pickle"))).devices
    assert len(d.curve) == 100 and R.CREEP_WINDOW * 100 == 10
    got = R.periods(d, np.array([0, 9, 10, 19, 20, 31, 40]))
    assert got.tolist() == [0, 0, 1, 1, 2, 3, 3]


def test_creep_counts_steps_when_the_report_has_them(tmp_path: Path) -> None:
    """On a trace's clock the periods are its steps: three kept allocations made in one
    step are one period, however far apart their entries."""
    s = Snap()
    s.segment(0, 512 * MB)
    for k in range(3):
        s.alloc(k * MB, MB, LEAK)
        for _ in range(20):
            s.alloc(256 * MB, 4 * MB, TMP)
            s.free(256 * MB)
    rep = build(load_snapshot(s.dump(tmp_path / "s.pickle")))
    (d,) = rep.devices
    assert len(R.creep_by_line(rep, d)) == 1  # three stretches without steps
    end = int(d.curve.time_ns[-1]) + 1
    d.steps = [StepMemory("step 0", 0, 0, 0, True), StepMemory("step 1", end, 0, 0, True)]
    assert R.creep_by_line(rep, d) == []
    kept = d.curve.time_ns[d.curve.replayed.block == MB].tolist()
    assert len(kept) == 3
    d.steps = [StepMemory(f"step {k}", t, 0, 0, True) for k, t in enumerate(kept)]
    (f,) = R.creep_by_line(rep, d)
    assert f.metrics["periods_are_steps"] and f.metrics["periods"] == 3


def test_creep_without_a_user_frame_reads_as_such(tmp_path: Path) -> None:
    (f,) = _creep(tmp_path, [1, 1, 1], fr=[CPP_FRAME])
    assert "no Python frame" in f.message and ":0" not in f.message
    assert "autograd engine" in f.message


# -- 3. nsys: the process's cudaMalloc, not PyTorch's reserved ---------------------------
_NSYS_LEVEL = """
SELECT max(level) FROM (
  SELECT sum(CASE o.label WHEN 'Allocation' THEN e.bytes ELSE -abs(e.bytes) END)
         OVER (ORDER BY e.start, e.rowid ROWS UNBOUNDED PRECEDING) AS level
  FROM CUDA_GPU_MEMORY_USAGE_EVENTS e
  JOIN ENUM_CUDA_MEM_KIND k ON k.id = e.memKind
  JOIN ENUM_CUDA_DEV_MEM_EVENT_OPER o ON o.id = e.memoryOperationType
  WHERE k.label IN ('Device', 'Array', 'Managed'))
"""
_NSYS_MALLOCS = """
SELECT e.bytes, t.value
FROM CUDA_GPU_MEMORY_USAGE_EVENTS e
JOIN ENUM_CUDA_MEM_KIND k ON k.id = e.memKind AND k.label = 'Device'
JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = e.correlationId
JOIN ThreadNames n ON n.globalTid = r.globalTid
JOIN StringIds t ON t.id = n.nameId
ORDER BY e.start
"""


def test_nsys_peak_is_every_cudamalloc_of_the_process(files: Path) -> None:
    import sqlite3

    path = files / "leak_nsys.sqlite"
    with sqlite3.connect(path) as db:
        (level,) = db.execute(_NSYS_LEVEL).fetchone()
        mallocs = db.execute(_NSYS_MALLOCS).fetchall()
    got = report_json(path)
    assert got["peak_reserved_bytes"] == level == 342_099_968
    assert got["peak_allocated_bytes"] is None and got["reserved_is"] == "cudamalloc"
    assert any("cannot tell apart" in n for n in got["notes"])
    # what it holds beyond PyTorch's reserved: the caching allocator's segments are those of
    # the snapshot of the same loop (leak.pickle, another run), in the same order; the rest
    # are 1 KiB + 128 KiB + 64 MiB at each thread's first cuBLAS call, just before
    # PyTorch's 32 MiB cuBLAS workspace (a segment of its own in the snapshot)
    trace = raw(files, "leak")["device_traces"][0]
    segs = [e["size"] for e in trace if e["action"] == "segment_alloc"]
    assert sum(segs) == expect("leak_nsys")["max_memory_reserved"] == 207_618_048
    rest, it = [], iter(segs)
    want = next(it)
    for size, thread in mallocs:
        if size == want:
            want = next(it, None)
        else:
            rest.append((size, thread))
    assert want is None  # every segment found, in order
    assert rest == [(s, t) for t in ("python3", "pt_autograd_0") for s in (1024, 131072, 64 * MB)]
    assert level - expect("leak_nsys")["max_memory_reserved"] == sum(s for s, _ in rest)


def test_nsys_text_says_what_its_level_is(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tuiperf.cli import main

    assert main(["memory", str(files / "leak_nsys.sqlite"), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "peak device memory 342.10 MB  (cudaMalloc'd by the process)" in out
    assert "peak reserved" not in out and "reserved 342" not in out


# -- 5. the torch.profiler trace: def lines, pattern steps ------------------------------
def test_kineto_sites_are_def_lines(files: Path) -> None:
    """torch.profiler's Python events name a function at its def line, and only the file's
    name: the sites say so (a note), and each line with a number is a `def`."""
    got = report_json(files / "leak_kineto.json.gz")
    src = Path(expect("leak_kineto")["leak_file"]).name  # leak.py, beside common.py
    numbered = [s for s in got["top_sites"] if s["line"]]
    assert {(s["file"], s["line"]) for s in numbered} == {(src, 50), ("common.py", 21)}
    for s in numbered:
        text = (REPO / "examples/memory" / s["file"]).read_text().splitlines()[s["line"] - 1]
        assert text.lstrip().startswith(f"def {s['function']}(")
    assert any("line of its def" in n for n in got["notes"])


def test_kineto_steps_are_pattern_repeats(files: Path) -> None:
    """No ProfilerStep# (the loop never calls prof.step()) and no NVTX in the trace: the
    steps are repeats of a kernel pattern, one per loop iteration but the last (it has no
    next occurrence to end it), each holding exactly one of the loop's randn kernels."""
    import gzip

    ev = json.loads(gzip.decompress((files / "leak_kineto.json.gz").read_bytes()))["traceEvents"]
    assert not [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
    t0 = min(e["ts"] for e in ev if isinstance(e.get("ts"), (int, float)))
    launch = {
        e["args"]["correlation"]: round(e["ts"] * 1000) - round(t0 * 1000)
        for e in ev
        if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    randn = sorted(
        launch[e["args"]["correlation"]]
        for e in ev
        if e.get("cat") == "kernel" and "distribution_elementwise" in e["name"]
    )
    iterations = expect("leak_kineto")["steps"]
    assert len(randn) == iterations == 12
    got = report_json(files / "leak_kineto.json.gz")
    steps = got["steps"]
    assert got["steps_source"] == "pattern"
    assert [s["label"] for s in steps] == [f"repeat {i}" for i in range(1, iterations)]
    starts = [s["start_ns"] for s in steps]
    for a, b in zip(starts, [*starts[1:], float("inf")]):
        assert sum(a <= t < b for t in randn) == 1
    assert randn[0] < starts[0]  # the first iteration's start-up, before its repeat begins


def test_snapshot_on_the_kineto_clock_counts_steps(files: Path) -> None:
    rep = api.memory(files / "leak_kineto.pickle", files / "leak_kineto.json.gz", use_cache=False)
    creep = [f for f in rep.findings if f.rule == R.RULE_CREEP and "line" in f.metrics]
    want = expect("leak_kineto")
    assert {(f.metrics["file"], f.metrics["line"]) for f in creep} == {
        (want["leak_file"], want["leak_line"]),
        (want["leak_file"], 57),
    }
    assert all(f.metrics["periods_are_steps"] for f in creep)


# -- the bounded path ------------------------------------------------------------------
# Long snapshots: the trace spilled to disk a few entries at a time, replayed in chunks of a
# few events, the curve kept as each time bucket's extremes (the `streamed` fixture forces
# it on these small captures). The oracles above must hold on it as on the in-memory path.
BUCKETS = 64


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(snapshot, "SPILL_AT", 3)
    monkeypatch.setattr(curve, "EXACT_MAX", 0)
    monkeypatch.setattr(curve, "CURVE_BUCKETS", BUCKETS)
    monkeypatch.setattr(curve, "CHUNK", 7)
    yield


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_peaks_are_pytorchs_streamed(files: Path, name: str, streamed: None) -> None:
    test_snapshot_peaks_are_pytorchs(files, name)


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_top_sites_are_the_replays_streamed(files: Path, name: str, streamed: None) -> None:
    test_top_sites_are_the_replays(files, name)


def test_oom_request_free_and_holders_streamed(files: Path, streamed: None) -> None:
    test_oom_request_free_and_holders(files)


def test_leak_by_hand_and_creep_streamed(files: Path, streamed: None) -> None:
    test_leak_top_sites_by_hand(files)
    test_creep_names_the_planted_leak_only(files, "leak")
    test_creep_is_silent_on_the_oom_and_fragmentation_runs(files)


def test_snapshot_on_the_kineto_clock_counts_steps_streamed(files: Path, streamed: None) -> None:
    test_snapshot_on_the_kineto_clock_counts_steps(files)


@pytest.mark.parametrize("name", ["leak", "fragmentation"])
def test_trace_is_spilled_and_the_curve_bounded_streamed(
    files: Path, name: str, streamed: None
) -> None:
    path = files / f"{name}.pickle"
    trace = raw(files, name)["device_traces"][0]
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
    r = replay_of(files, name)
    t0 = trace[0]["time_us"]
    assert int(m.allocated.max()) == r.peak
    assert int(m.time_ns[m.peak_index]) == (trace[r.peak_at]["time_us"] - t0) * 1000
    # and its last point is the end of the recording
    assert int(m.time_ns[-1]) == (trace[-1]["time_us"] - t0) * 1000


def test_spill_reads_back_what_was_written(tmp_path: Path, streamed: None) -> None:
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
