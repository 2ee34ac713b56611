"""CPU samples and thread state from nsys (issue 34 items 1 and 3), checked against SQL over
the real exports (tests/data/callsites, tests/data/graphs: nsys 2025.3.1 on an H200,
`--sample=process-tree`) and a hand-built export for nsys's Python sampling marks."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.data import unxz
from tuiperf.load.nsys.source import SqliteSource
from tuiperf.load.nsys.tables import NsysReader
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.cpu_samples import short_function
from tuiperf.model.trace import Trace
from tuiperf.summaries.cpu_samples import ALL, cpu_samples

ROOT = Path(__file__).resolve().parents[2]
REPORTS = {
    "callsites": ROOT / "tests/data/callsites/callsites_gpu.sqlite.xz",
    "pybt": ROOT / "tests/data/graphs/pybt.sqlite.xz",
}
NO_CACHE = OpenOptions(use_cache=False)


@pytest.fixture(scope="module", params=sorted(REPORTS))
def report(request: pytest.FixtureRequest) -> tuple[Path, Trace]:
    path = unxz(REPORTS[request.param])
    return path, open_trace(path, NO_CACHE)


def _sql(path: Path, query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(query).fetchall()


_NAMES = """
  JOIN StringIds f ON f.id = s.symbol JOIN StringIds m ON m.id = s.module"""


def test_every_sample_with_its_sampled_function(report) -> None:
    path, trace = report
    want = _sql(
        path,
        "SELECT c.start, (c.globalTid >> 24) & 16777215, c.globalTid & 16777215, c.cpu, "
        "f.value, m.value, (SELECT count(*) FROM SAMPLING_CALLCHAINS x WHERE x.id = c.id) "
        "FROM COMPOSITE_EVENTS c JOIN SAMPLING_CALLCHAINS s ON s.id = c.id AND s.stackDepth = 0"
        + _NAMES,
    )
    t = trace.table("cpu_samples")
    got = zip(*(t[c].to_pylist() for c in ("start", "pid", "tid", "cpu", "function",
                                            "module", "stacked")), strict=True)  # fmt: skip
    assert Counter(got) == Counter((*r[:6], r[6] > 1) for r in want)
    assert t.num_rows == _sql(path, "SELECT count(*) FROM COMPOSITE_EVENTS")[0][0]
    assert t["start"].to_pylist() == sorted(t["start"].to_pylist())
    assert set(t["kind"].to_pylist()) == {"native"}


def test_each_stack_walks_back_to_the_sql_call_chain(report) -> None:
    path, trace = report
    chains: dict[tuple[int, int], list[tuple[str, str]]] = defaultdict(list)
    rows = _sql(path, "SELECT c.start, c.globalTid & 16777215, f.value, m.value FROM "
                "COMPOSITE_EVENTS c JOIN SAMPLING_CALLCHAINS s ON s.id = c.id" + _NAMES
                + " ORDER BY c.id, s.stackDepth")  # fmt: skip
    for start, tid, fn, mod in rows:
        chains[(start, tid)].append((fn, mod))
    nodes = trace.table("sample_stacks").to_pylist()
    by_id = {n["node_id"]: n for n in nodes}
    t = trace.table("cpu_samples")
    for start, tid, leaf in zip(*(t[c].to_pylist() for c in ("start", "tid", "stack_id"))):
        walk, at = [], leaf
        while at is not None:
            walk.append((by_id[at]["function"], by_id[at]["module"]))
            at = by_id[at]["parent_id"]
        assert walk == chains[(start, tid)]
    # callers are shared: no two nodes with the same caller and frame
    keys = Counter((n["parent_id"], n["function"], n["module"]) for n in nodes)
    assert max(keys.values()) == 1


def _report_rows(trace: Trace, thread: str) -> dict[tuple[Any, Any], tuple[Any, Any]]:
    rows = cpu_samples(trace).head()
    return {(r["function"], r["module"]): (r["self"], r["total"]) for r in rows
            if r["thread"] == thread}  # fmt: skip


def test_self_and_total_against_sql(report) -> None:
    """Self: the sampled frame (stackDepth 0) per sample; total: the samples with that
    function anywhere on their chain, once per sample."""
    path, trace = report
    self_n = dict(((f, m), n) for f, m, n in _sql(
        path, "SELECT f.value, m.value, count(*) FROM SAMPLING_CALLCHAINS s" + _NAMES
        + " WHERE s.stackDepth = 0 GROUP BY f.value, m.value"))  # fmt: skip
    total_n = dict(((f, m), n) for f, m, n in _sql(
        path, "SELECT f.value, m.value, count(DISTINCT s.id) FROM SAMPLING_CALLCHAINS s"
        + _NAMES + " GROUP BY f.value, m.value"))  # fmt: skip
    got = _report_rows(trace, ALL)
    assert set(got) == set(total_n)
    assert got == {k: (self_n.get(k, 0), total_n[k]) for k in total_n}


def test_one_thread_and_percentages_against_sql(report) -> None:
    path, trace = report
    (gtid, n), *_ = _sql(path, "SELECT globalTid, count(*) FROM COMPOSITE_EVENTS "
                         "GROUP BY globalTid ORDER BY 2 DESC")  # fmt: skip
    want = dict(((f, m), k) for f, m, k in _sql(
        path, "SELECT f.value, m.value, count(*) FROM COMPOSITE_EVENTS c JOIN "
        "SAMPLING_CALLCHAINS s ON s.id = c.id AND s.stackDepth = 0" + _NAMES
        + f" WHERE c.globalTid = {gtid} GROUP BY f.value, m.value"))  # fmt: skip
    rows: list[dict[str, Any]] = [
        r for r in cpu_samples(trace).head() if r["tid"] == gtid & 0xFFFFFF
    ]
    assert {(r["function"], r["module"]): r["self"] for r in rows if r["self"]} == want
    top = rows[0]
    assert top["self"] == max(want.values())
    assert top["self_pct"] == pytest.approx(100 * top["self"] / n)
    assert top["total_pct"] == pytest.approx(100 * top["total"] / n)
    names = {r["thread"] for r in rows}
    assert len(names) == 1 and names != {ALL}


def test_thread_state_pairs_each_switch_in_with_the_next_switch_out(report) -> None:
    path, trace = report
    events = _sql(path, "SELECT globalTid & 16777215, start, isSchedIn FROM SCHED_EVENTS "
                  "ORDER BY globalTid, start")  # fmt: skip
    want: Counter[tuple] = Counter()
    for (t1, s1, in1), (t2, s2, in2) in itertools.pairwise(events):
        if t1 == t2 and in1 != in2:
            want[(t1, s1, s2, "running" if in1 else "waiting")] += 1
    t = trace.table("thread_state")
    got = Counter(zip(*(t[c].to_pylist() for c in ("tid", "start", "end", "state"))))
    assert got == want
    assert t["duration"].to_pylist() == [
        e - s for s, e in zip(t["start"].to_pylist(), t["end"].to_pylist())
    ]


def test_every_sample_falls_in_a_running_interval(report) -> None:
    """The two tables agree with each other: a thread is sampled only while it runs."""
    _, trace = report
    s, st = trace.table("cpu_samples"), trace.table("thread_state").to_pylist()
    running = defaultdict(list)
    for r in st:
        if r["state"] == "running":
            running[r["tid"]].append((r["start"], r["end"]))
    for tid, t0 in zip(s["tid"].to_pylist(), s["start"].to_pylist()):
        assert any(a <= t0 <= b for a, b in running[tid])


@pytest.mark.parametrize(
    ("name", "short"),
    [
        (
            "void at::native::(anonymous namespace)::normal_kernel<at::CPUGeneratorImpl*>"
            "(at::TensorBase const&, double)",
            "at::native::(anonymous namespace)::normal_kernel<at::CPUGeneratorImpl*>",
        ),
        ("at::CPUGeneratorImpl::random()", "at::CPUGeneratorImpl::random"),
        ("_PyEval_EvalFrameDefault", "_PyEval_EvalFrameDefault"),
        ("0x7fe7df1d5674", "0x7fe7df1d5674"),
        ("[Broken backtraces]", "[Broken backtraces]"),
        ("std::vector<int, std::allocator<int> > f(int)", "f"),
    ],
)
def test_short_function(name: str, short: str) -> None:
    assert short_function(name) == short


# -- nsys Python sampling: a hand-built export with the marks' layout -------------------

_PY_DOMAIN = "Python Periodic Sampling"


def _tiny_export(path: Path, json_payload: bool = True) -> None:
    """Two native samples and three Python samples of thread 7 of pid 5: strings 1..6."""
    gtid = (5 << 24) | 7
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE COMPOSITE_EVENTS (id INTEGER, start INTEGER, cpu INTEGER,"
        " threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER);"
        "CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER, symbol INTEGER, module INTEGER,"
        " stackDepth INTEGER);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER,"
        " rangeId INTEGER, text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER,"
        " jsonText TEXT, jsonTextId INTEGER);"
    )
    names = ["main", "/x/train.py", "step", "&lt;module&gt;", "randn_loop", "libfoo.so"]
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(names, 1)))
    db.executemany("INSERT INTO COMPOSITE_EVENTS VALUES (?, ?, 3, 1, ?, 1)",
                   [(1, 100, gtid), (2, 200, gtid)])  # fmt: skip
    db.executemany("INSERT INTO SAMPLING_CALLCHAINS VALUES (?, ?, ?, ?)",
                   [(1, 5, 6, 0), (1, 1, 6, 1), (2, 1, 6, 0)])  # fmt: skip

    def frames(*fs: tuple[int, int]) -> str | None:
        body = {"Frames": [{"Function": f, "File": 2, "Line": ln} for f, ln in fs]}
        return json.dumps({_PY_DOMAIN: body}) if json_payload else None

    db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, domainId) "
               f"VALUES (0, 75, '{_PY_DOMAIN}', 4)")  # fmt: skip
    marks = [(110, frames((3, 12), (4, 30))), (210, frames((5, 8), (3, 13), (4, 30))),
             (310, frames((3, 12), (4, 30)))]  # fmt: skip
    db.executemany("INSERT INTO NVTX_EVENTS (start, eventType, globalTid, domainId, jsonText) "
                   "VALUES (?, 34, ?, 4, ?)", [(s, gtid, j) for s, j in marks])  # fmt: skip
    db.commit()
    db.close()


def _read(path: Path) -> NsysReader:
    return NsysReader(SqliteSource(path))


def test_python_samples_from_the_sampling_marks(tmp_path: Path) -> None:
    _tiny_export(tmp_path / "t.sqlite")
    reader = _read(tmp_path / "t.sqlite")
    samples = reader.cpu_samples(0)
    stacks = reader.cpu_samples(1)
    assert samples is not None and stacks is not None
    rows = samples.to_pylist()
    assert [(r["start"], r["kind"], r["function"], r["tid"]) for r in rows] == [
        (100, "native", "randn_loop", 7),
        (110, "python", "step", 7),
        (200, "native", "main", 7),
        (210, "python", "randn_loop", 7),
        (310, "python", "step", 7),
    ]
    nodes = {n["node_id"]: n for n in stacks.to_pylist()}
    assert len(nodes) == 2 + 4  # native: main, main>randn_loop; Python: <module>,
    # <module>>step@12, <module>>step@13, <module>>step@13>randn_loop
    by_start = {r["start"]: r["stack_id"] for r in rows}
    assert by_start[110] == by_start[310]  # the same stack is one node

    def walk(at: int | None) -> list[tuple[str, int | None]]:
        out = []
        while at is not None:
            out.append((nodes[at]["function"], nodes[at]["line"]))
            at = nodes[at]["parent_id"]
        return out

    assert walk(by_start[210]) == [("randn_loop", 8), ("step", 13), ("<module>", 30)]
    assert all(nodes[n]["python"] for n in (by_start[110], by_start[210]))
    assert nodes[by_start[100]]["python"] is False


def test_python_samples_without_json_are_a_note(tmp_path: Path) -> None:
    _tiny_export(tmp_path / "t.sqlite", json_payload=False)
    reader = _read(tmp_path / "t.sqlite")
    samples = reader.cpu_samples(0)
    assert samples is not None and set(samples["kind"].to_pylist()) == {"native"}
    assert any("--include-json=true" in n for n in reader.notes)


def test_python_rows_come_first_in_the_report(tmp_path: Path) -> None:
    _tiny_export(tmp_path / "t.sqlite")
    trace = open_trace(tmp_path / "t.sqlite", NO_CACHE)
    rows: list[dict[str, Any]] = [r for r in cpu_samples(trace).head() if r["thread"] == ALL]
    assert [(r["kind"], r["function"], r["self"], r["total"]) for r in rows] == [
        ("python", "step", 2, 3),
        ("python", "randn_loop", 1, 1),
        ("python", "<module>", 0, 3),
        ("native", "main", 1, 2),
        ("native", "randn_loop", 1, 1),
    ]
    assert rows[0]["self_pct"] == pytest.approx(100 * 2 / 3)
    assert np.isclose(rows[3]["total_pct"], 100.0)


def test_a_damaged_export_reads_what_it_can(tmp_path: Path) -> None:
    """A sample without its thread counts in `all` only; a symbol missing from StringIds
    is a null name; a chain without its sample and a switch without its thread are left
    out; a sample without a chain has no stack."""
    path = tmp_path / "d.sqlite"
    db = sqlite3.connect(path)
    gtid = (5 << 24) | 7
    db.executescript(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "INSERT INTO StringIds VALUES (1, 'f'), (2, 'libx.so');"
        "CREATE TABLE COMPOSITE_EVENTS (id INTEGER, start INTEGER, cpu INTEGER,"
        " threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER);"
        "INSERT INTO COMPOSITE_EVENTS VALUES (1, 100, 0, 1, NULL, 1),"
        f" (2, 200, NULL, 1, {gtid}, 1), (3, 300, 1, 1, {gtid}, 1);"
        "CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER, symbol INTEGER, module INTEGER,"
        " stackDepth INTEGER);"
        "INSERT INTO SAMPLING_CALLCHAINS VALUES (1, 1, 2, 0), (2, 9, 2, 0), (2, 1, 2, 1),"
        " (7, 1, 2, 0);"
        "CREATE TABLE SCHED_EVENTS (start INTEGER, cpu INTEGER, isSchedIn INTEGER,"
        " globalTid INTEGER, threadState INTEGER, threadBlock INTEGER);"
        f"INSERT INTO SCHED_EVENTS VALUES (50, 0, 1, NULL, 0, NULL), (60, 0, 0, {gtid}, 0, NULL),"
        f" (70, 0, 1, {gtid}, 0, NULL), (400, 0, 0, {gtid}, 0, NULL);"
    )
    db.commit()
    db.close()
    trace = open_trace(path, NO_CACHE)
    rows = trace.table("cpu_samples").to_pylist()
    assert [(r["tid"], r["function"], r["stacked"], r["stack_id"] is None) for r in rows] == [
        (None, "f", False, False),
        (7, None, True, False),
        (7, None, False, True),
    ]
    states = trace.table("thread_state").to_pylist()
    assert [(r["start"], r["end"], r["state"], r["cpu"]) for r in states] == [
        (60, 70, "waiting", None),
        (70, 400, "running", 0),
    ]
    report = cpu_samples(trace).head()
    assert {r["thread"] for r in report} == {ALL, "7"}
    assert [(r["function"], r["self"], r["total"]) for r in report if r["thread"] == "7"] == [
        ("", 1, 1),  # the report writes a missing name as ''
        ("f", 0, 1),
    ]


def test_summary_command_csv_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    """`tuiperf summary REPORT --report samples` (the alias) as CSV and JSON: the first row
    is every thread's most sampled function, as SQL counts it."""
    from tuiperf.cli import main

    path = unxz(REPORTS["callsites"])
    (fn, mod, n), *_ = _sql(
        path,
        "SELECT f.value, m.value, count(*) FROM SAMPLING_CALLCHAINS s" + _NAMES
        + " WHERE s.stackDepth = 0 GROUP BY 1, 2 ORDER BY 3 DESC",
    )  # fmt: skip
    (total,) = _sql(path, "SELECT count(*) FROM COMPOSITE_EVENTS")[0]
    assert main(["summary", str(path), "--report", "samples", "--csv", "--no-cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Thread,PID,TID,Kind,Self,Self (%),Total,Total (%),Function,Module"
    pct = f"{100 * n / total:.1f}"
    assert lines[1].startswith(f"all,,,native,{n},{pct},") and lines[1].endswith(f",{fn},{mod}")
    assert main(["summary", str(path), "-r", "cpu_samples", "-f", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["report"] == "cpu_samples"
    first = doc["rows"][0]
    assert (first["thread"], first["function"], first["module"], first["self"]) == (ALL, fn, mod, n)
