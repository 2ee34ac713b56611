"""CPU samples, Python samples and thread state on a real capture with a known slow Python
function in the step (issue 34 items 1 and 3): tests/data/cpu_samples/slow.sqlite.xz, nsys
2025.3.1 `--sample=process-tree --backtrace=dwarf --python-sampling=true
--cpuctxsw=process-tree` of examples/cpu_samples/slow_python.py (each step calls the
pure-Python `make_tokens` 40 times, then a small transformer step on the GPU).

Every expected number is SQL over the export (sqlite3's JSON functions for the Python
frames). The steady steps are taken from the NVTX `step N` ranges in SQL as tuiperf defines
them (analysis/budget/steps.py): the first step (`step 0`) is start-up, and so is any step
right after it that takes 1.5x the median of the later steps or longer (none here), so the
steady steps are `step 1` … `step 22`; each is measured from its start to the next step's
start, the last to its own end."""

from __future__ import annotations

import html
import itertools
import sqlite3
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.data import unxz
from tuiperf.analysis.budget import descheduled as D
from tuiperf.analysis.budget import step_samples as SS
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.rules import budget as budget_rules
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace
from tuiperf.summaries.cpu_samples import ALL, cpu_samples

ROOT = Path(__file__).resolve().parents[2]
SLOW = ROOT / "tests/data/cpu_samples/slow.sqlite.xz"
DOMAIN = "Python Periodic Sampling"
#: the JSON path of a Python sample's frames (innermost first)
FRAMES = f'$."{DOMAIN}".Frames'


@pytest.fixture(scope="module")
def path() -> Path:
    return unxz(SLOW)


@pytest.fixture(scope="module")
def trace(path: Path) -> Trace:
    return open_trace(path, OpenOptions(use_cache=False))


@pytest.fixture(scope="module")
def ctx(trace: Trace) -> Ctx:
    return Ctx(trace)


def _sql(path: Path, query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(query).fetchall()


def _main_tid(path: Path) -> int:
    """The globalTid of the thread whose NVTX ranges are the steps."""
    ((gtid,),) = _sql(path, "SELECT DISTINCT globalTid FROM NVTX_EVENTS WHERE text LIKE 'step %'")
    return int(gtid)


def _windows(path: Path) -> list[tuple[int, int]]:
    """The steady steps' windows, by the module docstring's definition."""
    steps = _sql(
        path,
        "SELECT start, end, text FROM NVTX_EVENTS WHERE eventType = 59 AND text LIKE 'step %' "
        "ORDER BY start",
    )
    dur = [e - s for s, e, _ in steps]
    median = statistics.median(dur[1:])
    first = 1
    while first < len(steps) // 2 and dur[first] > 1.5 * median:
        first += 1
    steady = steps[first:]
    assert [t for _, _, t in steady] == [f"step {i}" for i in range(1, 23)]
    nxt = [s for s, _, _ in steady[1:]] + [steady[-1][1]]
    return [(s, b) for (s, _, _), b in zip(steady, nxt, strict=True)]


def _in_steps(path: Path, col: str) -> str:
    return "(" + " OR ".join(f"({col} >= {a} AND {col} < {b})" for a, b in _windows(path)) + ")"


def _py_marks(path: Path) -> str:
    """The Python sampling marks: NVTX marks (34) in the domain created (75) as DOMAIN."""
    return (
        "SELECT n.* FROM NVTX_EVENTS n WHERE n.eventType = 34 AND n.domainId IN (SELECT "
        f"domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = '{DOMAIN}')"
    )


# -- the export's layout (docs/formats-cpu-samples.md) -------------------------------------


def test_python_samples_are_marks_of_their_own_domain_keyed_by_its_name(path: Path) -> None:
    """Every mark of the domain has a JSON object whose only top-level key is the domain's
    name and which holds `Frames` (Function, File as StringIds ids; Line); no other NVTX
    mark carries frames; the payload is in `jsonText`, never `jsonTextId`."""
    ((n, keyed, framed, by_id),) = _sql(
        path,
        "SELECT count(*), sum((SELECT group_concat(key) FROM json_each(m.jsonText)) = "
        f"'{DOMAIN}'), sum(json_array_length(m.jsonText, '{FRAMES}') > 0), "
        f"count(m.jsonTextId) FROM ({_py_marks(path)}) m",
    )
    assert n > 10_000 and keyed == n and framed == n and by_id == 0
    ((other,),) = _sql(
        path,
        f"SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND jsonText IS NOT NULL "
        f"AND start NOT IN (SELECT start FROM ({_py_marks(path)}))",
    )
    assert other == 0
    ((unnamed,),) = _sql(
        path,
        f"SELECT count(*) FROM ({_py_marks(path)}) m, json_each(m.jsonText, '{FRAMES}') f "
        "WHERE json_extract(f.value, '$.Function') NOT IN (SELECT id FROM StringIds) "
        "OR json_extract(f.value, '$.File') NOT IN (SELECT id FROM StringIds) "
        "OR json_type(f.value, '$.Line') != 'integer'",
    )
    assert unnamed == 0


def test_every_python_sample_with_its_innermost_frame(path: Path, trace: Trace) -> None:
    want = _sql(
        path,
        "SELECT m.start, (m.globalTid >> 24) & 16777215, m.globalTid & 16777215, f.value, "
        f"g.value FROM ({_py_marks(path)}) m "
        f"JOIN StringIds f ON f.id = json_extract(m.jsonText, '{FRAMES}[0].Function') "
        f"JOIN StringIds g ON g.id = json_extract(m.jsonText, '{FRAMES}[0].File')",
    )
    want = [(*r[:3], html.unescape(r[3]), html.unescape(r[4])) for r in want]
    t = trace.table("cpu_samples")
    cols = ("kind", "start", "pid", "tid", "function", "module")
    got = [r[1:] for r in zip(*(t[c].to_pylist() for c in cols)) if r[0] == "python"]
    assert Counter(got) == Counter(want)


# -- issue 34's test: the slow function comes first, with its SQL share --------------------


def test_make_tokens_comes_first_within_a_few_points_of_sql(path: Path, ctx: Ctx) -> None:
    main = _main_tid(path)
    where = f"m.globalTid = {main} AND {_in_steps(path, 'm.start')}"
    by_fn = dict(
        _sql(
            path,
            f"SELECT f.value, count(*) FROM ({_py_marks(path)}) m JOIN StringIds f ON "
            f"f.id = json_extract(m.jsonText, '{FRAMES}[0].Function') WHERE {where} "
            "GROUP BY f.value",
        )
    )
    n = sum(by_fn.values())
    ((native,),) = _sql(path, f"SELECT count(*) FROM COMPOSITE_EVENTS m WHERE {where}")
    assert max(by_fn, key=by_fn.__getitem__) == "make_tokens"
    share = by_fn["make_tokens"] / n
    assert 0.70 < share < 0.80  # ~75%: the program's known slow function
    b = ctx.budget
    assert b is not None and b.steady_labels == "step 1 … step 22"
    got = SS.step_samples(ctx, b)
    assert got is not None and got.tid == main & 0xFFFFFF
    assert got.python_samples == n and got.samples == native
    first = got.top[0]
    assert (first.kind, first.function) == ("python", "make_tokens")
    assert first.module.endswith("examples/cpu_samples/slow_python.py")
    assert first.share == pytest.approx(share, abs=0.03)
    (f,) = budget_rules.cpu_bound(ctx)
    assert f.rule == "cpu_bound"
    assert "samples, Python functions first, native below): make_tokens (slow_python.py) " in (
        f.message
    )
    assert f.metrics["cpu_samples"] == n + native


# -- the cpu_samples summary ---------------------------------------------------------------


def _rows(trace: Trace, thread: str, kind: str) -> dict[tuple[Any, Any], tuple[Any, Any]]:
    return {
        (r["function"], r["module"]): (r["self"], r["total"])
        for r in cpu_samples(trace).head()
        if r["thread"] == thread and r["kind"] == kind
    }


def test_summary_python_rows_against_sql(path: Path, trace: Trace) -> None:
    """Self: the innermost frame (`Frames[0]`); total: the samples with the function
    anywhere in `Frames`, once per sample (a recursive function counts once)."""
    self_n = {
        (html.unescape(f), html.unescape(m)): k
        for f, m, k in _sql(
            path,
            f"SELECT f.value, g.value, count(*) FROM ({_py_marks(path)}) m "
            f"JOIN StringIds f ON f.id = json_extract(m.jsonText, '{FRAMES}[0].Function') "
            f"JOIN StringIds g ON g.id = json_extract(m.jsonText, '{FRAMES}[0].File') "
            "GROUP BY 1, 2",
        )
    }
    total_n = {
        (html.unescape(f), html.unescape(m)): k
        for f, m, k in _sql(
            path,
            "SELECT f.value, g.value, count(DISTINCT m.start * 1000 + (m.globalTid & 1023)) "
            f"FROM ({_py_marks(path)}) m, json_each(m.jsonText, '{FRAMES}') x "
            "JOIN StringIds f ON f.id = json_extract(x.value, '$.Function') "
            "JOIN StringIds g ON g.id = json_extract(x.value, '$.File') GROUP BY 1, 2",
        )
    }
    ((marks, distinct),) = _sql(
        path, f"SELECT count(*), count(DISTINCT start * 1000 + (globalTid & 1023)) FROM "
        f"({_py_marks(path)})"
    )  # fmt: skip
    assert marks == distinct  # the count(DISTINCT …) key above is one per sample
    got = _rows(trace, ALL, "python")
    assert got == {k: (self_n.get(k, 0), total_n[k]) for k in total_n}
    top: dict[str, Any] = cpu_samples(trace).head()[0]
    assert (top["thread"], top["kind"], top["function"]) == (ALL, "python", "make_tokens")
    assert top["self_pct"] == pytest.approx(100 * top["self"] / marks)


def test_summary_native_rows_of_the_main_thread_against_sql(path: Path, trace: Trace) -> None:
    main = _main_tid(path)
    names = " JOIN StringIds f ON f.id = s.symbol JOIN StringIds m ON m.id = s.module"
    self_n = {
        (f, m): k
        for f, m, k in _sql(
            path,
            "SELECT f.value, m.value, count(*) FROM COMPOSITE_EVENTS c JOIN SAMPLING_CALLCHAINS "
            f"s ON s.id = c.id AND s.stackDepth = 0 {names} WHERE c.globalTid = {main} "
            "GROUP BY 1, 2",
        )
    }
    total_n = {
        (f, m): k
        for f, m, k in _sql(
            path,
            "SELECT f.value, m.value, count(DISTINCT c.id) FROM COMPOSITE_EVENTS c JOIN "
            f"SAMPLING_CALLCHAINS s ON s.id = c.id {names} WHERE c.globalTid = {main} "
            "GROUP BY 1, 2",
        )
    }
    rows = [r for r in cpu_samples(trace).head() if r["tid"] == main & 0xFFFFFF]
    got = {(r["function"], r["module"]): (r["self"], r["total"]) for r in rows
           if r["kind"] == "native"}  # fmt: skip
    assert got == {k: (self_n.get(k, 0), total_n[k]) for k in total_n}
    assert rows[0]["kind"] == "python"  # Python rows first within a thread


# -- thread state (SCHED_EVENTS, --cpuctxsw=process-tree) ----------------------------------


def test_thread_state_against_sql(path: Path, trace: Trace) -> None:
    main = _main_tid(path)
    sw = _sql(path, f"SELECT start, isSchedIn FROM SCHED_EVENTS WHERE globalTid = {main} "
              "ORDER BY start")  # fmt: skip
    want = Counter(
        (a, b, "running" if i1 else "waiting")
        for (a, i1), (b, i2) in itertools.pairwise(sw)
        if bool(i1) != bool(i2)
    )
    t = trace.table("thread_state")
    mine = [
        (r["start"], r["end"], r["state"])
        for r in t.to_pylist()
        if r["tid"] == main & 0xFFFFFF and r["pid"] == (main >> 24) & 0xFFFFFF
    ]
    assert Counter(mine) == want
    assert len(mine) == len(sw) - 1  # in, out, in, … alternate: every pair is one interval


def test_descheduled_time_in_the_steps_against_sql(path: Path, ctx: Ctx) -> None:
    """Off-CPU time of the main thread inside the steady steps from the switch pairs in SQL,
    on a 1 µs grid; the part outside its CUDA and OS runtime calls too."""
    main = _main_tid(path)
    sw = _sql(path, f"SELECT start, isSchedIn FROM SCHED_EVENTS WHERE globalTid = {main} "
              "ORDER BY start")  # fmt: skip
    off = [(a, b) for (a, i1), (b, i2) in itertools.pairwise(sw) if not i1 and i2]
    calls = _sql(
        path,
        f"SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid = {main} "
        f"UNION ALL SELECT start, end FROM OSRT_API WHERE globalTid = {main} "
        "AND eventClass = 27",
    )
    win = _windows(path)
    grid = np.arange(win[0][0], win[-1][1], 1000, dtype=np.int64)
    masks = {k: np.zeros(len(grid), bool) for k in ("step", "off", "call")}
    for key, spans in (("step", win), ("off", off), ("call", calls)):
        for a, b in spans:
            masks[key][np.searchsorted(grid, a) : np.searchsorted(grid, b)] = True
    b = ctx.budget
    assert b is not None
    got = D.descheduled(ctx, b)
    assert got is not None
    n = len(win)
    step_off = masks["step"] & masks["off"]
    assert got.waiting_ns == pytest.approx(step_off.sum() * 1000 / n, abs=1000)
    outside = (step_off & ~masks["call"]).sum() * 1000 / n
    assert got.outside_calls_ns == pytest.approx(outside, abs=1000)


# -- the cpu_bound fix for this class: the user's function first ---------------------------


def test_fix_leads_with_make_tokens_and_models_its_saving(path: Path, ctx: Ctx) -> None:
    """make_tokens is the user's code (examples/…, not site-packages): the fix's first
    lever names it with the line its samples are on (SQL: Frames[0].Line), its share of
    the Python samples in the steps (SQL), and a saving of that share of the CPU-bound time
    a step. The native call Python made holds 1% of the sampled stacks here (under
    ENTRY_SHARE): that sentence is left out."""
    main = _main_tid(path)
    lines = _sql(
        path,
        f"SELECT json_extract(m.jsonText, '{FRAMES}[0].Line'), count(*) FROM "
        f"({_py_marks(path)}) m JOIN StringIds f ON f.id = json_extract(m.jsonText, "
        f"'{FRAMES}[0].Function') WHERE f.value = 'make_tokens' AND m.globalTid = {main} AND "
        f"{_in_steps(path, 'm.start')} GROUP BY 1 ORDER BY 2 DESC",
    )
    ((n,),) = _sql(
        path,
        f"SELECT count(*) FROM ({_py_marks(path)}) m WHERE m.globalTid = {main} AND "
        f"{_in_steps(path, 'm.start')}",
    )
    line = lines[0][0]
    share = sum(k for _, k in lines) / n
    (f,) = budget_rules.cpu_bound(ctx)
    lead = (
        f"Most of the step's CPU time is one function of your code: make_tokens "
        f"(slow_python.py:{line}) holds {share:.0%} of the training thread's Python samples"
    )
    assert f.fix.text.startswith(lead)
    assert " In order: 1) take make_tokens out of the step: run it in DataLoader workers" in (
        f.fix.text
    )
    assert f.metrics["user_function_share"] == pytest.approx(share, abs=0.03)
    per_step = f.metrics["cpu_bound_ns_per_step"]
    assert f.metrics["user_function_saving_ns_per_step"] == pytest.approx(
        share * per_step, abs=0.03 * per_step
    )
    assert f.metrics["python_entry_share"] < budget_rules.ENTRY_SHARE
    assert "the native call Python made" not in f.message
