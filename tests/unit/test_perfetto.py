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
    want = _sqlite(
        name,
        "SELECT deviceId, sum(CASE memoryOperationType WHEN 1 THEN -bytes "
        "ELSE bytes END), count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS GROUP BY 1",
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
    """A hand-built trace: +100, +50 then -100 on GPU 0, +7 on GPU 1 (out of order)."""
    import pyarrow as pa

    from tuiperf import schema
    from tuiperf.model.trace import Trace, TraceMeta

    cols = {
        "start": pa.array([30, 10, 20, 5]),
        "device": pa.array([0, 0, 0, 1], pa.int32()),
        "bytes": pa.array([100, 100, 50, 7]),
        "operation": pa.array(["Deallocation", "Allocation", "Allocation", "Allocation"]),
    }
    t = Trace({"gpu_memory": schema.conform("gpu_memory", cols, 4)}, TraceMeta("x", "test"))
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
