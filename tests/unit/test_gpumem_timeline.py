"""Memory of timeline reports: nsys CUDA_GPU_MEMORY_USAGE_EVENTS against SQL over the
export, torch.profiler's [memory] events against the trace's own Total Allocated /
Total Reserved fields read straight from the JSON."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import DATA, nsys_report
from tests.support.cli import assert_one_line_error, run_cli
from tuiperf.analysis.gpumem.run import memory_report
from tuiperf.load.gpumem.open import open_memory
from tuiperf.load.open import OpenOptions

KINETO = DATA / "kineto"


def _open(path: Path):
    inp = open_memory(path, opts=OpenOptions(use_cache=False))
    return memory_report(inp.memory, inp.trace)


def test_nsys_reserved_peak_is_the_running_sum() -> None:
    """cudaMalloc'd device bytes (memKind 2 Device, 4 Managed, 3 Array) minus frees,
    as a running sum in SQL; static (5, 6) apart; host (0, 1) left out."""
    path = nsys_report("cnn_osrt")
    sql = """
        SELECT start, SUM(CASE memoryOperationType WHEN 0 THEN bytes ELSE -bytes END)
               OVER (ORDER BY start, rowid) AS running
        FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind IN (2, 3, 4)
        ORDER BY running DESC, start LIMIT 1"""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        peak_t, peak = db.execute(sql).fetchone()
        static = db.execute(
            "SELECT SUM(bytes) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind IN (5, 6)"
        ).fetchone()[0]
        rows = db.execute(
            "SELECT COUNT(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind NOT IN (0, 1)"
        ).fetchone()[0]
        t0 = db.execute("SELECT MIN(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    (d,) = _open(path).devices
    assert d.peak_reserved == peak == 1185205768
    assert d.peak_allocated is None  # nsys sees no allocations inside the segments
    assert d.curve.static_bytes == static == 12661
    assert len(d.curve) == rows == 929
    assert d.curve.time_ns[d.curve.peak_index] == peak_t  # nsys times stay the report's
    assert t0 is not None


@pytest.mark.parametrize("name", ["cnn", "lstm", "vit"])
def test_kineto_peaks_are_the_traces_totals(name: str) -> None:
    path = KINETO / f"kineto_{name}.json.gz"
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    mem = [
        e["args"]
        for e in events
        if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1
    ]
    (d,) = _open(path).devices
    assert d.peak_allocated == max(a["Total Allocated"] for a in mem)
    assert d.peak_reserved == max(a["Total Reserved"] for a in mem)
    assert len(d.curve) == len(mem)


def test_kineto_live_at_peak_pairs_by_address() -> None:
    """At the peak, the bytes allocated inside the window and not freed by then (paired by
    Addr, brute force here) plus what was allocated before the window = the peak."""
    path = KINETO / "kineto_vit.json.gz"
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    mem = sorted(
        (e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1),
        key=lambda e: e["ts"],
    )
    peak_i = max(range(len(mem)), key=lambda i: (mem[i]["args"]["Total Allocated"], -i))
    live: dict[int, int] = {}
    for e in mem[: peak_i + 1]:
        a = e["args"]
        if a["Bytes"] > 0:
            live[a["Addr"]] = a["Bytes"]
        else:
            live.pop(a["Addr"], None)
    (d,) = _open(path).devices
    assert sum(s.bytes for s in d.at.sites) == d.peak_allocated
    traced = sum(s.bytes for s in d.at.sites if not s.file.startswith("<allocated before"))
    assert traced == sum(live.values())


def test_kineto_step_start_memory() -> None:
    """Allocated at each ProfilerStep's start = Total Allocated of the last [memory]
    event before it (JSON, by hand)."""
    path = KINETO / "kineto_lstm.json.gz"
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    mem = sorted(
        (e["ts"], e["args"]["Total Allocated"])
        for e in events
        if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1
    )
    steps = sorted(
        e["ts"]
        for e in events
        if e.get("cat") == "user_annotation" and str(e.get("name")).startswith("ProfilerStep#")
    )
    want = []
    for s in steps:
        before = [a for t, a in mem if t < s]
        want.append(before[-1] if before else None)
    (d,) = _open(path).devices
    got = [x.allocated for x in d.steps]
    assert len(got) == len(steps)
    assert [g for g, w in zip(got, want) if w is not None] == [w for w in want if w is not None]


def test_report_without_memory_events_is_one_line() -> None:
    res = run_cli("memory", str(nsys_report("lstm")), "--no-cache")
    assert_one_line_error(res, 1)
    assert "--cuda-memory-usage=true" in res.stderr
    res = run_cli("memory", str(KINETO / "kineto_callsites_cpu.json.gz"), "--no-cache")
    assert_one_line_error(res, 1)
    assert "profile_memory=True" in res.stderr


def test_python_api(tmp_path: Path) -> None:
    import tuiperf
    from tests.support.snapshots import Snap, frames
    from tuiperf import api
    from tuiperf.errors import UsageError

    path = KINETO / "kineto_cnn.json.gz"
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    peak = max(
        e["args"]["Total Allocated"]
        for e in events
        if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1
    )
    main = tuiperf.open(path, use_cache=False).memory().main
    assert main is not None and main.peak_allocated == peak
    s = Snap()
    s.segment(0, 4 << 20)
    s.alloc(0, 3 << 20, frames("/w/t.py", 5, "f"))
    main = api.memory(s.dump(tmp_path / "s.pickle")).main
    assert main is not None and main.peak_allocated == 3 << 20
    with pytest.raises(UsageError, match="profile_memory"):
        tuiperf.open(KINETO / "kineto_callsites_cpu.json.gz", use_cache=False).memory()


def test_kineto_sites_are_the_outermost_op() -> None:
    """Live at the peak by operator: each allocation goes to the outermost cpu_op or
    record_function range around it on its thread (not the ProfilerStep), found here by
    brute force over the JSON."""
    path = KINETO / "kineto_vit.json.gz"
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    mem = sorted(
        (e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1),
        key=lambda e: e["ts"],
    )
    ops = [
        e
        for e in events
        if e.get("ph") == "X"
        and e.get("cat") in ("cpu_op", "user_annotation")
        and not str(e.get("name")).startswith("ProfilerStep#")
    ]
    peak_i = max(range(len(mem)), key=lambda i: (mem[i]["args"]["Total Allocated"], -i))
    live: dict[int, tuple[int, str]] = {}
    for e in mem[: peak_i + 1]:
        a = e["args"]
        if a["Bytes"] < 0:
            live.pop(a["Addr"], None)
            continue
        around = [
            o for o in ops if o["tid"] == e["tid"] and o["ts"] <= e["ts"] < o["ts"] + o["dur"]
        ]
        outer = min(around, key=lambda o: (o["ts"], -o["dur"]), default=None)
        live[a["Addr"]] = (a["Bytes"], f"<{outer['name']}>" if outer else "<no user frame>")
    want: dict[str, int] = {}
    for size, name in live.values():
        want[name] = want.get(name, 0) + size
    (d,) = _open(path).devices
    got = {s.file: s.bytes for s in d.at.sites if not s.file.startswith("<allocated before")}
    assert got == want


def test_kineto_sites_from_stacks(tmp_path: Path) -> None:
    """With with_stack=True the operator's user frame names the line: [memory] events put
    inside each `aten::to` of kineto_callsites_gpu (its README: the batch's `.to(device)`
    in `batch`, which Kineto records at the function's `def` line, train_gpu.py:21)."""
    doc = json.loads(
        gzip.decompress((DATA / "callsites" / "kineto_callsites_gpu.json.gz").read_bytes())
    )
    events = doc["traceEvents"]
    tos = [e for e in events if e.get("cat") == "cpu_op" and e.get("name") == "aten::to"]
    for k, e in enumerate(tos):
        args = {
            "Total Reserved": 64 << 20,
            "Total Allocated": (k + 1) << 20,
            "Bytes": 1 << 20,
            "Device Id": 0,
            "Device Type": 1,
            "Addr": 4096 * (k + 1),
        }
        events.append(
            {
                "ph": "i",
                "cat": "cpu_instant_event",
                "s": "t",
                "name": "[memory]",
                "pid": e["pid"],
                "tid": e["tid"],
                "ts": e["ts"] + e["dur"] / 2,
                "args": args,
            }
        )
    doc["profile_memory"] = 1
    path = tmp_path / "with_memory.json"
    path.write_text(json.dumps(doc))
    # brute force: an aten::to inside a `batch` call is the COPY_LINE's; the others run
    # in `main` (Kineto's frame for main, entered before profiling: train_gpu.py(62))
    calls = [
        e
        for e in events
        if e.get("cat") == "python_function" and e.get("name") == "train_gpu.py(21): batch"
    ]
    in_batch = sum(any(c["ts"] <= e["ts"] < c["ts"] + c["dur"] for c in calls) for e in tos)
    (d,) = _open(path).devices
    assert d.peak_allocated == len(tos) << 20
    got = {(s.file.rsplit("/", 1)[-1], s.line, s.function): s.bytes for s in d.at.sites}
    assert in_batch == 10  # two .to() a step, five steps recorded
    assert got == {
        ("train_gpu.py", 21, "batch"): in_batch << 20,
        ("train_gpu.py", 62, "main"): (len(tos) - in_batch) << 20,
    }


def test_kineto_memory_kept_in_the_cache_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second look at a trace's memory events reads the cache entry, not the JSON;
    a trace without them is remembered too."""
    from tuiperf.load.gpumem import timeline as TL
    from tuiperf.load.open import open_trace

    path = KINETO / "kineto_vit.json.gz"
    cpu = KINETO / "kineto_callsites_cpu.json.gz"
    first = TL.kineto_memory(open_trace(path), path)
    assert first is not None and TL.kineto_memory(open_trace(cpu), cpu) is None

    def refuse(p: Path) -> None:
        raise AssertionError(f"{p} read again")

    monkeypatch.setattr(TL, "from_kineto", refuse)
    again = TL.kineto_memory(open_trace(path), path)
    assert again is not None and again.events.equals(first.events)
    assert again.epoch_origin_ns == first.epoch_origin_ns is not None
    assert TL.kineto_memory(open_trace(cpu), cpu) is None
