"""Python call sites (issue 22.1) on real captures: a torch.profiler CPU trace recorded with
`with_stack=True` (examples/callsites/train_cpu.py) and an nsys report with Python
backtraces (tests/data/graphs/pybt.sqlite.xz). Expected values come from the raw JSON /
SQL, computed here without tuiperf's code."""

from __future__ import annotations

import ast
import gzip
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.data import unxz
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.rules.pytorch import host_sync_per_step
from tuiperf.load.kineto.stacks import parse_frame
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline import callsites as C
from tuiperf.summaries.by_line import by_line
from tuiperf.summaries.reports import compute

ROOT = Path(__file__).resolve().parents[2]
CPU_TRACE = ROOT / "tests/data/kineto/kineto_callsites_cpu.json.gz"
CPU_SCRIPT = ROOT / "examples/callsites/train_cpu.py"
PYBT = ROOT / "tests/data/graphs/pybt.sqlite.xz"
NO_CACHE = OpenOptions(use_cache=False)


# -- the user frame ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "user"),
    [
        ("/work/main/examples/graphs/programs.py", True),  # a path as data
        ("train_cpu.py", True),
        ("<stdin>", True),
        ("/opt/torch/lib/python3.12/site-packages/torch/nn/module.py", False),  # a path as data
        ("/usr/lib/python3/dist-packages/numpy/core/numeric.py", False),
        ("/usr/lib/python3.12/threading.py", False),
        ("torch/nn/modules/module.py", False),
        ("typing.py", False),
        ("logging/__init__.py", False),
        ("<frozen os>", False),
        ("<built-in>", False),
        ("", False),
        (str(ROOT / "tuiperf/torch.py"), False),
    ],
)
def test_is_user_file(path: str, user: bool) -> None:
    assert C.is_user_file(path) is user


def test_parse_frame() -> None:
    assert parse_frame("torch/nn/modules/module.py(1782): _call_impl") == (
        "torch/nn/modules/module.py", 1782, "_call_impl")  # fmt: skip
    assert parse_frame("<built-in method item of Tensor object at 0x7fcc2b778200>") == (
        "<built-in>", 0, "<built-in method item of Tensor object>")  # fmt: skip
    assert parse_frame("nn.Module: Linear_0") == ("", 0, "nn.Module: Linear_0")


# -- Kineto with_stack on the CPU ------------------------------------------------------------
def _raw_events() -> list[dict[str, Any]]:
    with gzip.open(CPU_TRACE, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def _ns(e: dict[str, Any]) -> tuple[int, int]:
    s = round(e["ts"] * 1000)
    return s, s + round(e["dur"] * 1000)


def _sync_function() -> tuple[str, int]:
    """The function of train_cpu.py holding the `# SYNC_LINE` mark, and its def line."""
    text = CPU_SCRIPT.read_text()
    mark = next(i for i, line in enumerate(text.splitlines(), 1) if line.endswith("# SYNC_LINE"))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.lineno <= mark <= (node.end_lineno or 0):
            return node.name, node.lineno
    raise AssertionError("no function holds the SYNC_LINE")


def _expected_lines() -> dict[tuple[int, str], list[int]]:
    """By (line, function) of train_cpu.py: [calls, call ns] of the cpu_ops called from
    Python (no other op between them and their innermost Python call), brute force."""
    evs = _raw_events()
    py = [e for e in evs if e.get("cat") == "python_function"]
    ops = [e for e in evs if e.get("cat") == "cpu_op"]
    by_id = {e["args"]["Python id"]: e for e in py}

    def inside(a: dict[str, Any], b: dict[str, Any]) -> bool:
        (s1, e1), (s2, e2) = _ns(a), _ns(b)
        return a["tid"] == b["tid"] and s2 <= s1 and e1 <= e2 and a is not b

    out: dict[tuple[int, str], list[int]] = {}
    for op in ops:
        around = [p for p in py if inside(op, p)]
        if not around:
            continue
        frame = max(around, key=lambda p: (_ns(p)[0], -_ns(p)[1]))
        if any(inside(op, o) and _ns(o)[0] >= _ns(frame)[0] for o in ops):
            continue  # called by another op
        while not frame["name"].startswith("train_cpu.py("):
            frame = by_id[frame["args"]["Python parent id"]]
        m = re.match(r"train_cpu\.py\((\d+)\): (.*)$", frame["name"])
        assert m is not None
        row = out.setdefault((int(m.group(1)), m.group(2)), [0, 0])
        row[0] += 1
        row[1] += _ns(op)[1] - _ns(op)[0]
    return out


def test_kineto_stacks_are_read() -> None:
    trace = open_trace(CPU_TRACE, NO_CACHE)
    evs = _raw_events()
    n_py = sum(e.get("cat") == "python_function" for e in evs)
    assert trace.table("frames").num_rows == n_py
    assert "with_stack" in trace.meta.capture
    calls = trace.table("callsites")
    names = Counter(calls["name"].to_pylist())
    assert names["aten::item"] == sum(e["name"] == "aten::item" for e in evs) > 0


def test_kineto_item_user_frame_is_the_sync_function() -> None:
    """Kineto records a function at its first line: `.item()` shows as the function that
    holds the SYNC_LINE, at its def line."""
    trace = open_trace(CPU_TRACE, NO_CACHE)
    calls = trace.table("callsites")
    rows = np.flatnonzero(np.array(calls["name"].to_pylist()) == "aten::item")
    sites = C.sites_of(trace, "callsites", rows)
    name, line = _sync_function()
    assert [(s.file, s.line, s.function, n) for s, n in sites] == [
        ("train_cpu.py", line, name, len(rows))
    ]


def test_kineto_by_line_matches_the_raw_trace() -> None:
    trace = open_trace(CPU_TRACE, NO_CACHE)
    table = compute(trace, "by_line")
    got = {
        (int(r["site"].rsplit(":", 1)[1]), r["function"]): [r["calls"], r["call_ns"]]
        for r in table.head()
    }
    assert got == _expected_lines()
    assert all(r["launches"] == r["syncs"] == 0 for r in table.head())  # a CPU trace
    assert {r["file"] for r in table.head()} == {"train_cpu.py"}


def test_no_stacks_no_rows() -> None:
    trace = open_trace(ROOT / "tests/data/kineto/kineto_sgd_foreach.json.gz", NO_CACHE)
    assert not C.has_stacks(trace)
    assert by_line(trace).num_rows == 0
    assert (C.site_rows(trace, "kernels") == C.NONE).all()


# -- nsys Python backtraces ------------------------------------------------------------------
def _sql(query: str) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(f"file:{unxz(PYBT)}?mode=ro", uri=True)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def _innermost_user_line(text: str, files: dict[int, str]) -> int:
    """The Line of the first frame (innermost first) in the program, not in site-packages."""
    frames = json.loads(text)["Python Backtrace on CUDA"]["Frames"]
    return next(f["Line"] for f in frames if files[f["File"]].endswith("/programs.py"))


def _marked_calls() -> list[tuple[str, int, int, int, int]]:
    """(API name, user line, start, end, correlationId) of each backtraced runtime call."""
    files = dict(_sql("SELECT id, value FROM StringIds"))
    rows = _sql(
        "SELECT s.value, n.jsonText, r.start, r.end, r.correlationId FROM NVTX_EVENTS n "
        "JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.text = 'Python Backtrace on CUDA' "
        "AND d.domainId = n.domainId "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.start = n.start AND r.globalTid = n.globalTid "
        "JOIN StringIds s ON s.id = r.nameId WHERE n.eventType = 34"
    )
    return [(name, _innermost_user_line(j, files), s, e, c) for name, j, s, e, c in rows]


def test_nsys_backtraces_join_their_api_calls() -> None:
    trace = open_trace(unxz(PYBT), NO_CACHE)
    calls = trace.table("callsites")
    marked = _marked_calls()
    assert calls.num_rows == len(marked) == _sql(
        "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34")[0][0]  # fmt: skip
    assert sorted(calls["correlation_id"].to_pylist()) == sorted(m[4] for m in marked)
    api = trace.table("api")
    lines = C.site_texts(trace, "api", np.arange(api.num_rows))
    got = Counter(t for t in lines if t)
    want = Counter(f"programs.py:{m[1]} " for m in marked)
    assert {k.split("(")[0]: v for k, v in got.items()} == want


def test_nsys_sync_finding_names_item_and_cpu_lines() -> None:
    """The host-sync finding names the lines whose cudaStreamSynchronize calls it counts:
    `.cpu()` and `.item()` of programs.py (139 and 140 as captured)."""
    trace = open_trace(unxz(PYBT), NO_CACHE)
    [found] = host_sync_per_step(Ctx(trace))
    steps = _sql("SELECT start, end FROM NVTX_EVENTS WHERE eventType = 59 AND text LIKE 'step %' "
                 "AND text != 'step 0'")  # fmt: skip
    want = Counter(
        line
        for name, line, s, _e, _c in _marked_calls()
        if name == "cudaStreamSynchronize" and any(a <= s <= b for a, b in steps)
    )
    assert set(want) == {139, 140}
    got = {(c["line"], c["function"]): c["count"] for c in found.metrics["call_sites"]}
    assert got == {(line, "pybt"): n for line, n in want.items()}
    assert "programs.py:140 (pybt)" in found.message
    assert "programs.py:139 (pybt)" in found.message
    site = found.evidence.rows["site"].to_pylist()
    assert Counter(s for s in site if s) == Counter(
        f"programs.py:{k} (pybt)" for k in want.elements()
    )


def test_nsys_by_line_matches_sql() -> None:
    trace = open_trace(unxz(PYBT), NO_CACHE)
    table = by_line(trace)
    got = {int(r["site"].rsplit(":", 1)[1]): r for r in table.head()}
    sync = re.compile(
        r"^(cudaStreamSynchronize|cudaDeviceSynchronize|cudaEventSynchronize|cudaMemcpy)$"
    )
    query = (
        "SELECT correlationId, count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "GROUP BY correlationId"
    )
    kernels = {c: (n, t) for c, n, t in _sql(query)}
    want: dict[int, list[int]] = {}
    for name, line, s, e, corr in _marked_calls():
        row = want.setdefault(line, [0, 0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += e - s
        n, t = kernels.get(corr, (0, 0))
        row[2] += n
        row[3] += t
        if sync.match(name):
            row[4] += 1
            row[5] += e - s
    keys = ("calls", "call_ns", "launches", "gpu_ns", "syncs", "sync_ns")
    assert {k: [r[c] for c in keys] for k, r in got.items()} == want
    assert got[140]["syncs"] > 0 and got[140]["function"] == "pybt"


def test_nsys_without_json_says_how_to_export(tmp_path: Path) -> None:
    copy = tmp_path / "nojson.sqlite"
    copy.write_bytes(unxz(PYBT).read_bytes())
    db = sqlite3.connect(copy)
    db.execute("UPDATE NVTX_EVENTS SET jsonText = NULL")
    db.commit()
    db.close()
    trace = open_trace(copy, NO_CACHE)
    assert not trace.has("callsites")
    assert any("--include-json=true" in d for d in trace.meta.diagnostics)


def test_kineto_modules_of_linear_ops() -> None:
    """The nn.Module around each aten::linear, as the innermost `nn.Module: X` python_function
    enclosing it in the raw trace."""
    evs = _raw_events()
    mods = [
        e for e in evs if e.get("cat") == "python_function" and e["name"].startswith("nn.Module: ")
    ]
    want: Counter[str] = Counter()
    for op in (e for e in evs if e.get("cat") == "cpu_op" and e["name"] == "aten::linear"):
        (s, e) = _ns(op)
        around = [m for m in mods if m["tid"] == op["tid"] and _ns(m)[0] <= s and e <= _ns(m)[1]]
        want[max(around, key=lambda m: _ns(m)[0])["name"].removeprefix("nn.Module: ")] += 1
    trace = open_trace(CPU_TRACE, NO_CACHE)
    nvtx = trace.table("nvtx")
    rows = np.flatnonzero(np.array(nvtx["text"].to_pylist()) == "aten::linear")
    assert len(want) >= 2
    assert dict(C.modules_of(trace, "nvtx", rows)) == dict(want)


def test_details_pane_fields() -> None:
    from tuiperf.model.timeline.attribution import describe

    trace = open_trace(unxz(PYBT), NO_CACHE)
    api = trace.table("api")
    start = {s: i for i, s in enumerate(api["start"].to_pylist())}
    _name, line, s, _e, _c = next(
        m for m in _marked_calls() if m[0] == "cudaStreamSynchronize" and m[1] == 140
    )
    [(path,)] = _sql("SELECT f.value FROM StringIds f WHERE f.value LIKE '%/programs.py'")
    fields = dict(describe(trace, "api", start[s]).fields)
    assert fields["Source"] == f"{path}:{line} in pybt"
    assert fields["Called by"].startswith("programs.py:")
    assert "Source" not in dict(
        describe(
            open_trace(ROOT / "tests/data/kineto/kineto_sgd_foreach.json.gz", NO_CACHE),
            "kernels",
            0,
        ).fields
    )


def test_summary_cli_by_line(tmp_path: Path) -> None:
    """`tuiperf summary REPORT --report by_line --csv` (twice: computed, then from the cache)
    writes the by_line rows; the `.cpu()` and `.item()` lines have their syncs."""
    import csv
    import io

    from tests.support.cli import run_cli

    report = unxz(PYBT)
    args = ("summary", str(report), "--report", "lines", "--csv", "--cache-dir", str(tmp_path))
    outs = [run_cli(*args) for _ in range(2)]
    assert all(o.returncode == 0 for o in outs), outs[0].stderr
    assert outs[0].stdout == outs[1].stdout
    rows = list(csv.DictReader(io.StringIO(outs[0].stdout)))
    want = by_line(open_trace(report, NO_CACHE)).head()
    assert [r["Source Line"] for r in rows] == [w["site"] for w in want]
    syncs = {r["Source Line"]: int(r["Syncs"]) for r in rows}
    assert syncs["programs.py:140"] > 0 and syncs["programs.py:139"] > 0


def test_junk_python_events_load(tmp_path: Path) -> None:
    """python_function events with junk ids, names or a parent loop load (junk ids dropped)
    and the by_line summary still runs."""
    from tuiperf.load.kineto.tables import load_kineto

    def py(ts: float, name: object, pyid: object, parent: object) -> dict[str, Any]:
        args = {"Python id": pyid, "Python parent id": parent}
        return {"ph": "X", "cat": "python_function", "name": name, "pid": 1, "tid": 1,
                "ts": ts, "dur": 10.0, "args": args}  # fmt: skip

    op = {"ph": "X", "cat": "cpu_op", "name": "aten::item", "pid": 1, "tid": 1, "ts": 4.0,
          "dur": 1.0, "args": {"External id": 5}}  # fmt: skip
    events = [
        py(1.0, "a.py(3): f", 1, 2),
        py(2.0, ["junk"], 2, 1),
        py(3.0, "b.py(x): g", "abc", None),
        op,
    ]
    path = tmp_path / "junk.json"
    path.write_text(json.dumps({"traceEvents": events}))
    tables, _meta = load_kineto(path)
    assert tables["frames"]["frame_id"].to_pylist() == [1, 2]
    trace = open_trace(path, NO_CACHE)
    table = by_line(trace)
    assert [r["site"] for r in table.head()] == ["a.py:3"]
    assert C.modules_of(trace, "nvtx", np.arange(trace.table("nvtx").num_rows)) == []


def test_nsys_cpu_bound_names_the_launching_lines() -> None:
    """The CPU-bound finding names the lines whose backtraced calls launched the steady
    steps' kernels, counted from SQL (a kernel's launch: the first runtime row of its
    correlation id; steady steps: `step 1` on)."""
    from tuiperf.analysis.rules.budget import cpu_bound

    trace = open_trace(unxz(PYBT), NO_CACHE)
    [found] = cpu_bound(Ctx(trace))
    steps = _sql("SELECT start, end FROM NVTX_EVENTS WHERE eventType = 59 AND text LIKE 'step %' "
                 "AND text != 'step 0'")  # fmt: skip
    launches = _sql(
        "SELECT (SELECT min(r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "WHERE r.correlationId = k.correlationId), k.correlationId "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k"
    )
    line_of = {corr: line for _n, line, _s, _e, corr in _marked_calls()}
    want = Counter(
        line_of[corr]
        for launch, corr in launches
        if corr in line_of and any(a <= launch < b for a, b in steps)
    )
    assert want
    got = {c["line"]: c["count"] for c in found.metrics["call_sites"]}
    assert got == dict(want)
    top = want.most_common(1)[0][0]
    assert f"programs.py:{top} (pybt)" in found.message
