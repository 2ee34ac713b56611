"""Call sites and the step budget on a real GPU capture (tests/data/callsites, H200): the
same program under nsys with Python backtraces and under torch.profiler with stacks. The
planted lines are found by their marks in examples/callsites/train_gpu.py."""

from __future__ import annotations

import ast
import gzip
import json
import re
import statistics
from pathlib import Path

import pytest

from tests.support.data import unxz
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import step_budget
from tuiperf.analysis.engine import analyze
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/data/callsites"
SCRIPT = ROOT / "examples/callsites/train_gpu.py"
NO_CACHE = OpenOptions(use_cache=False)


def _marked(mark: str) -> tuple[int, str, int]:
    """(line of the mark, the function holding it, that function's def line)."""
    text = SCRIPT.read_text()
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.endswith(f"# {mark}"))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or 0):
            return line, node.name, node.lineno
    raise AssertionError(f"no function holds {mark}")


@pytest.fixture(scope="module")
def nsys() -> Trace:
    return open_trace(unxz(DATA / "callsites_gpu.sqlite.xz"), NO_CACHE)


@pytest.fixture(scope="module")
def kineto() -> Trace:
    return open_trace(DATA / "kineto_callsites_gpu.json.gz", NO_CACHE)


def _finding(trace: Trace, rule: str):
    return next(f for f in analyze(trace).findings if f.rule == rule)


def _sites(f) -> set[tuple[str, int, str]]:
    return {(Path(c["file"]).name, c["line"], c["function"]) for c in f.metrics["call_sites"]}


def test_nsys_names_the_copy_and_sync_lines(nsys: Trace) -> None:
    copy_line, copy_fn, _ = _marked("COPY_LINE")
    sync_line, sync_fn, _ = _marked("SYNC_LINE")
    sync = _finding(nsys, "host_sync_per_step")
    # the pageable .to() syncs too, right after its copy: that sync is the copy's (pinned
    # memory + non_blocking removes it), so the host-sync finding names the .item() alone
    assert _sites(sync) == {("train_gpu.py", sync_line, sync_fn)}
    assert f"train_gpu.py:{sync_line} ({sync_fn})" in sync.message
    assert "follow host-to-device copies" in sync.message
    pageable = _finding(nsys, "pageable_h2d_in_steps")
    assert _sites(pageable) == {("train_gpu.py", copy_line, copy_fn)}
    assert f"train_gpu.py:{copy_line} ({copy_fn})" in pageable.message


def test_kineto_names_the_functions_holding_them(kineto: Trace) -> None:
    """Kineto records functions at their def line: the finding names the function."""
    _, copy_fn, copy_def = _marked("COPY_LINE")
    _, sync_fn, sync_def = _marked("SYNC_LINE")
    sync = _finding(kineto, "host_sync_per_step")
    assert ("train_gpu.py", sync_def, sync_fn) in _sites(sync)
    pageable = _finding(kineto, "pageable_h2d_in_steps")
    assert _sites(pageable) == {("train_gpu.py", copy_def, copy_fn)}


def _runtime_calls() -> list[tuple[str, int, int]]:
    """(name, start, duration) of the raw trace's CUDA calls, ns on the raw clock."""
    with gzip.open(DATA / "kineto_callsites_gpu.json.gz", "rt") as f:
        events = json.load(f)["traceEvents"]
    cats = ("cuda_runtime", "cuda_driver")
    return [
        (e["name"], round(e["ts"] * 1000), round(e["dur"] * 1000))
        for e in events
        if e.get("cat") in cats
    ]


def test_budget_charges_syncs_no_more_than_they_blocked(kineto: Trace) -> None:
    """A CPU-bound loop with a tiny sync per step: the GPU gap after `.item()` is the CPU
    making the next batch, not the sync. The sync part of each step is at most the time
    the CPU spent in sync/copy calls (every call named *Synchronize* or *Memcpy* in the
    raw trace: an upper bound), and the top finding is the CPU-bound one."""
    budget = step_budget(Ctx(kineto))
    assert budget is not None
    calls = _runtime_calls()
    # tuiperf's clock starts at the trace's first event: line the raw calls up with it
    offset = min(s for _, s, _ in calls) - int(min(kineto.table("api")["start"].to_pylist()))
    steps = budget.main.steps
    assert len(steps) == budget.n_steady >= 3
    for step in steps:
        a, b = step.start_ns + offset, step.end_ns + offset
        bound = sum(d for n, s, d in calls if a <= s < b and re.search(r"Synchronize|Memcpy", n))
        assert 0 < step.parts.ns["sync"] <= bound + 1000, step.label  # ns rounding
    assert budget.steady.largest() == "cpu_bound"
    assert analyze(kineto).findings[0].rule == "cpu_bound"


def test_a_rule_the_budget_cannot_see_says_so(nsys: Trace) -> None:
    """The batch is made on the CPU at each step's start with no data-phase range: the
    data-starvation rule sees the idle time, the budget (which needs such a range or a
    DataLoader wait) cannot, and the message says that instead of 'idles 0 ns on data'."""
    found = _finding(nsys, "dataloader_starvation")
    assert found.est_saving_ns == 0
    assert "idles 0 ns" not in found.message
    assert "finds no GPU idle time waiting for data" in found.message


def _holds(d: dict, c: dict) -> bool:
    return bool(d["ts"] <= c["ts"] and c["ts"] + c["dur"] <= d["ts"] + d["dur"])


def _steady_self_times() -> tuple[dict[str, int], int]:
    """Host self time per cpu_op name inside the steady ProfilerSteps of the raw trace (brute
    force: each op less its direct children on its thread), and the number of steps."""
    with gzip.open(DATA / "kineto_callsites_gpu.json.gz", "rt") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    steps = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")
    )
    # torch.profiler records after its own warm-up: the first profiled step is start-up
    # only when it takes over 1.5x the median of the others
    if steps[0][1] - steps[0][0] > 1.5 * statistics.median(t - s for s, t in steps[1:]):
        steps = steps[1:]
    ranges = [e for e in events if e.get("cat") in ("cpu_op", "user_annotation")]
    out: dict[str, int] = {}
    for op in (e for e in ranges if e.get("cat") == "cpu_op"):
        a, b = op["ts"], op["ts"] + op["dur"]
        if not any(s <= a < t for s, t in steps):
            continue
        inner = [
            c for c in ranges
            if c is not op and c["tid"] == op["tid"] and a <= c["ts"] and c["ts"] + c["dur"] <= b
        ]  # fmt: skip
        direct = [c for c in inner if not any(d is not c and _holds(d, c) for d in inner)]
        own = op["dur"] - sum(c["dur"] for c in direct)
        out[op["name"]] = out.get(op["name"], 0) + round(max(own, 0) * 1000)
    return out, len(steps)


def test_cpu_bound_names_the_operator_that_takes_the_cpu(kineto: Trace) -> None:
    """The loop's CPU time is torch.randn on the CPU in `batch`: the finding names the op
    with the most host self time (from the raw trace) and the line calling it."""
    self_ns, n_steps = _steady_self_times()
    top = max(self_ns, key=lambda k: self_ns[k])
    found = _finding(kineto, "cpu_bound")
    _, copy_fn, copy_def = _marked("COPY_LINE")  # batch() makes the data, then copies it
    assert f"one operator: {top} takes" in found.message
    assert f"called from train_gpu.py:{copy_def} ({copy_fn})" in found.message
    got = found.metrics["hot_op_self_ns_per_step"]
    assert abs(got - self_ns[top] / n_steps) <= 2000 * n_steps  # µs rounding of the JSON
    assert found.fix.text.startswith("The GPU waits on CPU work in the step")
    assert top in found.fix.text
