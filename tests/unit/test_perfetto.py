"""`tuiperf export REPORT --format perfetto -o FILE`: the trace read back, track by track,
against sqlite3 on the nsys export (counts, summed durations, flows, counters)."""

from __future__ import annotations

import io
import json
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import nsys_report
from tuiperf import perfetto as P
from tuiperf.cli import main
from tuiperf.load.open import OpenOptions, open_trace

GPU_OPS = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def _sqlite(name: str, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{nsys_report(name)}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


def _ns(us: float) -> int:
    return round(us * 1000)


@pytest.fixture(scope="module", params=["cnn_osrt", "vit_amp"])
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    name = request.param
    out = tmp_path_factory.mktemp("perfetto") / f"{name}.json"
    assert main(["export", str(nsys_report(name)), "--format", "perfetto", "-o", str(out),
                 "-q"]) == 0  # fmt: skip
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    assert doc["displayTimeUnit"] == "ns"
    return name, doc["traceEvents"]


def _tracks(events: list[dict], cat: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(pid, tid) -> (slices, summed ns) of the X events of `cat`."""
    out: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for e in events:
        if e["ph"] == "X" and e["cat"] == cat:
            t = out[(e["pid"], e["tid"])]
            t[0] += 1
            t[1] += _ns(e["dur"])
    return {k: (v[0], v[1]) for k, v in out.items()}


@pytest.mark.parametrize(("table", "cat"), [("CUPTI_ACTIVITY_KIND_KERNEL", "kernel"),
                                            ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"),
                                            ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")])  # fmt: skip
def test_gpu_tracks_are_streams_with_the_exports_counts_and_durations(
    exported, table: str, cat: str
) -> None:  # type: ignore[no-untyped-def]
    name, events = exported
    want = _sqlite(name, f"SELECT deviceId, streamId, count(*), sum(end - start) FROM {table} "
                         "GROUP BY 1, 2")  # fmt: skip
    assert want
    assert _tracks(events, cat) == {(P.GPU_PID + d, s): (n, t) for d, s, n, t in want}


def test_kernel_times_and_names_are_exact(exported) -> None:  # type: ignore[no-untyped-def]
    name, events = exported
    want = sorted(_sqlite(name, "SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                "JOIN StringIds s ON s.id = k.demangledName"))  # fmt: skip
    got = sorted((_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e["name"]) for e in events
                 if e["ph"] == "X" and e["cat"] == "kernel")  # fmt: skip
    assert got == want


def test_thread_tracks_api_nvtx_osrt(exported) -> None:  # type: ignore[no-untyped-def]
    name, events = exported
    tid = "(globalTid >> 24) & 16777215, globalTid & 16777215"
    api = _sqlite(name, f"SELECT {tid}, count(*), sum(end - start) "
                        "FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1, 2")  # fmt: skip
    assert _tracks(events, "cuda_api") == {(p, t): (n, d) for p, t, n, d in api}
    nvtx = _sqlite(name, f"SELECT {tid}, count(*), sum(end - start) FROM NVTX_EVENTS "
                         "WHERE eventType = 59 GROUP BY 1, 2")  # push/pop ranges  # fmt: skip
    assert _tracks(events, "nvtx") == {(p, t + P.NVTX_TID): (n, d) for p, t, n, d in nvtx}
    # eventClass 31/32: a thread's zero-length start/finish markers, not calls
    osrt = _sqlite(name, f"SELECT {tid}, count(*), sum(end - start) FROM OSRT_API "
                         "WHERE eventClass NOT IN (31, 32) GROUP BY 1, 2")  # fmt: skip
    assert _tracks(events, "osrt") == {(p, t + P.OSRT_TID): (n, d) for p, t, n, d in osrt}


def test_flows_join_each_launch_to_its_gpu_work(exported) -> None:  # type: ignore[no-untyped-def]
    name, events = exported
    n = sum(_sqlite(name, f"SELECT count(*) FROM {t} g JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
                          "r.correlationId = g.correlationId AND "
                          "(r.globalTid >> 24) = (g.globalPid >> 24)")[0][0]
            for t in GPU_OPS)  # fmt: skip
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = [e for e in events if e["ph"] == "f"]
    assert len(ends) == n > 100 and len(starts) == n  # one launch each here
    assert {e["id"] for e in ends} == set(starts) and all(e["bp"] == "e" for e in ends)
    api = {(e["pid"], e["tid"], e["ts"]) for e in events if e.get("cat") == "cuda_api"}
    assert all((s["pid"], s["tid"], s["ts"]) in api for s in starts.values())
    gpu = {(e["pid"], e["tid"], e["ts"]) for e in events
           if e["ph"] == "X" and e["cat"] in ("kernel", "memcpy", "memset")}  # fmt: skip
    assert all((f["pid"], f["tid"], f["ts"]) in gpu for f in ends)


def test_steps_and_budget_counters(exported) -> None:  # type: ignore[no-untyped-def]
    name, events = exported
    steps = [e for e in events if e["ph"] == "X" and e["cat"] == "step"]
    counters = [e for e in events if e["ph"] == "C" and e["name"].startswith("step budget")]
    ranges = _sqlite(name, "SELECT coalesce(n.text, s.value), n.start FROM NVTX_EVENTS n "
                     "LEFT JOIN StringIds s ON s.id = n.textId "
                     "WHERE coalesce(n.text, s.value) LIKE 'step %' ORDER BY n.start")  # fmt: skip
    labels = {t: s for t, s in ranges}
    assert steps and all(e["pid"] == P.STEPS_PID for e in steps)
    if name == "cnn_osrt":  # steps 2 … 10 are the steady ones, each from its range's start
        assert [(e["name"], _ns(e["ts"])) for e in steps] == [(t, labels[t]) for t, _ in ranges[2:]]
    assert len(counters) == len(steps) + 1 and set(counters[-1]["args"].values()) == {0}
    for s, c in zip(steps, counters, strict=False):  # the parts add up to the step
        assert c["ts"] == s["ts"] and abs(sum(c["args"].values()) - s["dur"] / 1000) < 1e-3


def test_memory_counter_ends_at_what_was_allocated(exported) -> None:  # type: ignore[no-untyped-def]
    name, events = exported
    mem = [e for e in events if e["ph"] == "C" and e["name"] == "GPU memory"]
    tables = _sqlite(name, "SELECT name FROM sqlite_master WHERE type = 'table'")
    if ("CUDA_GPU_MEMORY_USAGE_EVENTS",) not in tables:  # vit_amp: captured without it
        assert mem == []
        return
    # the memory the timeline's memory lane draws: Device, Managed and Array allocations
    # (not Pinned host memory, not Device Static module globals), by nsys's own labels
    want = _sqlite(
        name,
        "SELECT deviceId, sum(CASE memoryOperationType WHEN 1 THEN -bytes "
        "ELSE bytes END), count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind IN "
        "(SELECT id FROM ENUM_CUDA_MEM_KIND WHERE label IN ('Device', 'Managed', 'Array')) "
        "GROUP BY 1",
    )
    assert want
    for dev, total, n in want:
        mine = [e for e in mem if e["pid"] == P.GPU_PID + dev]
        assert len(mine) == n and mine[-1]["args"]["allocated bytes"] == total


def test_every_track_is_named(exported) -> None:  # type: ignore[no-untyped-def]
    _, events = exported
    named = {(e["pid"], e.get("tid")) for e in events if e["ph"] == "M"}
    used = {(e["pid"], e["tid"]) for e in events if e["ph"] == "X" and e["cat"] != "step"}
    assert used <= named
    assert {(p, None) for p, _ in used} <= named


# -- streamed, atomic, bad input --------------------------------------------------------------


class _Counting(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, s: str) -> int:
        self.sizes.append(len(s))
        return super().write(s)


def test_written_in_bounded_pieces() -> None:
    out = _Counting()
    P.write_trace(out, open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False)))
    longest_event = max(len(line) for line in out.getvalue().splitlines())
    assert len(out.sizes) > 3 and sum(out.sizes) > 3 * P.FLUSH
    assert max(out.sizes) <= P.FLUSH + longest_event + 2


def test_an_existing_file_is_kept_and_a_failed_write_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.json"
    out.write_text("keep")
    rep = str(nsys_report("lstm"))
    assert main(["export", rep, "--format", "perfetto", "-o", str(out), "-q"]) == 2
    assert out.read_text() == "keep"

    def broken(stream, trace):  # type: ignore[no-untyped-def]
        stream.write('{"traceEvents":[')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(P, "write_trace", broken)
    new = tmp_path / "new.json"
    assert main(["export", rep, "--format", "perfetto", "-o", str(new), "-q"]) == 1
    assert capsys.readouterr().err.endswith("cannot write (No space left on device)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


BAD = [((), "pass -o FILE"), (("-o", "-"), "pass -o FILE"),
       (("-o", "x.json", "--filter", "gemm"), "--filter"),
       (("-o", "x.json", "--limit", "3"), "--limit")]  # fmt: skip


@pytest.mark.parametrize(("args", "says"), BAD)
def test_bad_arguments(capsys: pytest.CaptureFixture[str], args: tuple, says: str) -> None:
    code = main(["export", str(nsys_report("lstm")), "--format", "perfetto", *args, "-q"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and says in err


def test_memory_counter_subtracts_frees_per_device() -> None:
    """A hand-built trace: +100, +50 then -100 on GPU 0, +7 on GPU 1 (out of order); pinned
    host memory (+1000) and Device Static (+3) are not the GPU's memory (not counted)."""
    import pyarrow as pa

    from tuiperf import schema
    from tuiperf.model.trace import Trace, TraceMeta

    cols = {
        "start": pa.array([30, 10, 20, 5, 15, 16]),
        "device": pa.array([0, 0, 0, 1, 0, 0], pa.int32()),
        "bytes": pa.array([100, 100, 50, 7, 1000, 3]),
        "operation": pa.array(["Deallocation"] + ["Allocation"] * 5),
        "mem_kind": pa.array(["Device", "Device", "Managed", "Array", "Pinned", "Device Static"]),
    }
    t = Trace({"gpu_memory": schema.conform("gpu_memory", cols, 6)}, TraceMeta("x", "test"))
    out = io.StringIO()
    P.write_trace(out, t, steps=False)
    mem = [e for e in json.loads(out.getvalue())["traceEvents"] if e["ph"] == "C"]
    got = [(e["pid"] - P.GPU_PID, _ns(e["ts"]), e["args"]["allocated bytes"]) for e in mem]
    assert got == [(0, 10, 100), (0, 20, 150), (0, 30, 50), (1, 5, 7)]


def test_ranks_merged_keep_a_gpu_process_each(tmp_path: Path) -> None:
    """`ranks --merge` of two one-GPU ranks (both GPU 0): each rank's kernels on its own GPU
    process, per stream as in that rank's export."""
    import lzma

    from tests.conftest import DATA

    reports = []
    for i in (0, 1):
        p = tmp_path / f"r2_rank{i}.sqlite"
        p.write_bytes(lzma.decompress((DATA / "ranks" / f"r2_rank{i}.sqlite.xz").read_bytes()))
        reports.append(p)
    merged, out = tmp_path / "merged", tmp_path / "m.json"
    assert main(["ranks", *map(str, reports), "--merge", str(merged), "-q", "--no-cache"]) == 0
    assert main(["export", str(merged), "--format", "perfetto", "-o", str(out), "-q"]) == 0
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    gpu_of = {e["args"]["name"].rsplit("(", 1)[1].rstrip(")"): e["pid"] for e in events
              if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] >= P.GPU_PID
              and e["pid"] != P.STEPS_PID}  # fmt: skip
    assert len(gpu_of) == 2
    tracks = _tracks(events, "kernel")
    for r in reports:
        with sqlite3.connect(f"file:{r}?mode=ro", uri=True) as db:
            sql = ("SELECT (globalPid >> 24) & 16777215, streamId, count(*), sum(end - start) "
                   "FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1, 2")  # fmt: skip
            rows = db.execute(sql).fetchall()
        for pid, stream, n, total in rows:
            assert tracks[(gpu_of[str(pid)], stream)] == (n, total)


def test_memory_counter_kinds_are_the_memory_lanes() -> None:
    from tuiperf.model.timeline import memory_lane

    # one list of kinds for both (not a copy): the lane's, by nsys's labels
    assert memory_lane.RESERVED_KINDS == ("Device", "Managed", "Array")
    assert "RESERVED_KINDS" not in vars(P)  # imported where used, never redefined


def test_gpu_annotations_without_a_process_go_on_their_streams_gpu(tmp_path: Path) -> None:
    """torch.profiler's gpu_user_annotation events (no process: kineto's pid is the device,
    tid the stream) on a track of that GPU, never on a made-up 'process (0)'. Oracle: the
    kineto JSON itself."""
    import gzip

    from tests.conftest import DATA

    src = DATA / "budget" / "cpu_bound.kineto.json.gz"
    raw = json.loads(gzip.decompress(src.read_bytes()))["traceEvents"]
    ann = [e for e in raw if e.get("cat") == "gpu_user_annotation"]
    assert len(ann) == 15 and {(e["pid"], e["tid"]) for e in ann} == {(0, 7)}
    out = tmp_path / "cb.json"
    assert main(["export", str(src), "--format", "perfetto", "-o", str(out), "-q"]) == 0
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    track = (P.GPU_PID + 0, P.NVTX_TID + 7)  # device 0, stream 7
    mine = [e for e in events if e["ph"] == "X" and (e["pid"], e["tid"]) == track]
    assert sorted((e["name"], _ns(e["dur"])) for e in mine) == sorted(
        (e["name"], round(e["dur"] * 1000)) for e in ann
    )
    assert all(e["cat"] == "nvtx" for e in mine)
    assert not [e for e in events if e.get("pid") == 0]  # no event on a process 0
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events if e["ph"] == "M"}
    assert names[track] == "stream 7 · NVTX"
    assert not [n for n in names.values() if n.endswith("(0)")]


def test_null_ids_name_nothing() -> None:
    """A hand-built trace: a call without a correlation id and a kernel with correlation id
    0 (the old fill), a call and a kernel both without a process (correlation 5), a kernel
    without a correlation id, and one known pair (pid 1, correlation 9): only the known
    pair is joined by a flow; the call without a process is left out (counted); the
    kernel's missing correlation id is written as null."""
    import pyarrow as pa

    from tuiperf import schema
    from tuiperf.model.trace import Trace, TraceMeta

    api = {
        "start": pa.array([10, 20, 30]),
        "end": pa.array([11, 21, 31]),
        "duration": pa.array([1, 1, 1]),
        "pid": pa.array([1, None, 1]),
        "tid": pa.array([2, 2, 2]),
        "correlation_id": pa.array([None, 5, 9]),
        "name": pa.array(["cudaLaunchKernel"] * 3),
    }
    kernels = {
        "start": pa.array([40, 50, 60, 70]),
        "end": pa.array([41, 51, 61, 71]),
        "duration": pa.array([1, 1, 1, 1]),
        "pid": pa.array([1, None, 1, 1]),
        "device": pa.array([0, 0, 0, 0], pa.int32()),
        "stream": pa.array([7, 7, 7, 7]),
        "correlation_id": pa.array([0, 5, 9, None]),
        "name": pa.array(["k0", "k5", "k9", "kn"]),
    }
    tables = {
        "api": schema.conform("api", api, 3),
        "kernels": schema.conform("kernels", kernels, 4),
    }
    out = io.StringIO()
    counts = P.write_trace(out, Trace(tables, TraceMeta("x", "test")), steps=False)
    events = json.loads(out.getvalue())["traceEvents"]
    flows = [e for e in events if e["ph"] in ("s", "f")]
    assert [(e["ph"], _ns(e["ts"])) for e in flows] == [("f", 60), ("s", 30)]
    assert counts["dropped_no_process"] == 1 and counts["cuda_api"] == 2
    corr = {e["name"]: e["args"]["correlation_id"] for e in events if e.get("cat") == "kernel"}
    assert corr == {"k0": 0, "k5": 5, "k9": 9, "kn": None}
    gpus = {e["pid"] for e in events if e.get("cat") == "kernel"}
    assert gpus == {P.GPU_PID}  # one process's GPU 0: the pid-less kernel makes no other
    assert not [e for e in events if e["ph"] != "M" and e["pid"] == 0]
