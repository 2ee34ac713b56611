"""The CPU-bound finding names where the CPU time goes (issue 34 item 1) and how long the
training thread was off its CPU (item 3).

On callsites_gpu (tests/data/callsites: a loop that spends ~27 ms a step in `torch.randn`
on the CPU) the shares are checked against SQL over the export, with the steady steps'
windows taken from the NVTX ranges in SQL too (steps 1-5; each to the next step's start,
the last to its end). The thresholds are checked at their boundaries on the hand-built loop
of tests/support/loops.py."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.support.data import unxz
from tests.support.loops import STEP, STEPS, US, at_step_end, loop_trace
from tuiperf import schema
from tuiperf.analysis.budget import descheduled as D
from tuiperf.analysis.budget import step_samples as SS
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import Budget
from tuiperf.analysis.rules import budget as budget_rules
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
CALLSITES = ROOT / "tests/data/callsites/callsites_gpu.sqlite.xz"
MAIN = 281487911944963  # globalTid of python3's main thread (pid 771, tid 771)


@pytest.fixture(scope="module")
def path() -> Path:
    return unxz(CALLSITES)


@pytest.fixture(scope="module")
def ctx(path: Path) -> Ctx:
    return Ctx(open_trace(path, OpenOptions(use_cache=False)))


def _sql(path: Path, query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(query).fetchall()


def _windows(path: Path) -> list[tuple[int, int]]:
    steps = _sql(
        path,
        "SELECT start, end FROM NVTX_EVENTS WHERE text LIKE 'step %' "
        "AND text != 'step 0' ORDER BY start",
    )
    return [(s, steps[i + 1][0] if i + 1 < len(steps) else e) for i, (s, e) in enumerate(steps)]


def _in_steps(path: Path, col: str = "c.start") -> str:
    return "(" + " OR ".join(f"({col} >= {a} AND {col} < {b})" for a, b in _windows(path)) + ")"


def _budget(ctx: Ctx) -> Budget:
    b = ctx.budget
    assert b is not None
    return b


def _cpu_bound(ctx: Ctx):
    (f,) = budget_rules.cpu_bound(ctx)
    return f


def test_randn_path_comes_first_with_its_sql_share(path: Path, ctx: Ctx) -> None:
    where = f"c.globalTid = {MAIN} AND {_in_steps(path)}"
    (n,) = _sql(path, f"SELECT count(*) FROM COMPOSITE_EVENTS c WHERE {where}")[0]
    by_leaf = dict(
        _sql(
            path,
            "SELECT f.value, count(*) FROM COMPOSITE_EVENTS c JOIN "
            "SAMPLING_CALLCHAINS s ON s.id = c.id AND s.stackDepth = 0 JOIN "
            f"StringIds f ON f.id = s.symbol WHERE {where} GROUP BY f.value",
        )
    )
    (stacked,) = _sql(
        path,
        f"SELECT count(*) FROM COMPOSITE_EVENTS c WHERE {where} AND "
        "(SELECT count(*) FROM SAMPLING_CALLCHAINS s WHERE s.id = c.id) > 1",
    )[0]
    (randn,) = _sql(
        path,
        f"SELECT count(DISTINCT c.id) FROM COMPOSITE_EVENTS c JOIN "
        "SAMPLING_CALLCHAINS s ON s.id = c.id JOIN StringIds f ON f.id = s.symbol "
        f"WHERE {where} AND f.value LIKE 'torch::autograd::THPVariable_randn(%'",
    )[0]
    got = SS.step_samples(ctx, _budget(ctx))
    assert got is not None and got.tid == MAIN & 0xFFFFFF
    assert got.samples == n and got.stacked == stacked and got.python_samples == 0
    first, second = got.top[0], got.top[1]
    assert "normal_kernel" in first.function and "CPUGeneratorImpl::random" in second.function
    want = sorted(by_leaf.values(), reverse=True)
    assert [h.self_samples for h in got.top[:2]] == want[:2]
    assert first.share == pytest.approx(by_leaf[first.function] / n, abs=0.03)
    assert got.entry is not None and "THPVariable_randn" in got.entry.function
    assert got.entry.share == pytest.approx(randn / stacked, abs=0.03)
    assert randn / stacked > 0.5  # the randn path dominates the sampled stacks
    f = _cpu_bound(ctx)
    assert "normal_kernel<at::CPUGeneratorImpl*> (libtorch_cpu.so) " in f.message
    assert "torch::autograd::THPVariable_randn (libtorch_python.so)" in f.message
    assert f.metrics["cpu_samples"] == n
    assert f.metrics["cpu_sample_functions"][0]["self_samples"] == max(by_leaf.values())


def test_descheduled_time_against_sql(path: Path, ctx: Ctx) -> None:
    """Off-CPU time of the main thread inside the steps, from the switch pairs in SQL,
    brute force on a 1 µs grid; the part outside the thread's CUDA and OS calls too."""
    sw = _sql(
        path, f"SELECT start, isSchedIn FROM SCHED_EVENTS WHERE globalTid = {MAIN} ORDER BY start"
    )
    off = [(a, b) for (a, i1), (b, i2) in itertools.pairwise(sw) if not i1 and i2]
    calls = _sql(
        path,
        f"SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid = "
        f"{MAIN} UNION ALL SELECT start, end FROM OSRT_API WHERE globalTid = {MAIN} "
        "AND eventClass = 27",
    )
    win = _windows(path)
    lo, hi = win[0][0], win[-1][1]
    grid = np.arange(lo, hi, 1000, dtype=np.int64)  # 1 µs cells, by their start
    in_step = np.zeros(len(grid), bool)
    is_off = np.zeros(len(grid), bool)
    in_call = np.zeros(len(grid), bool)
    for mask, spans in ((in_step, win), (is_off, off), (in_call, calls)):
        for a, b in spans:
            mask[(grid >= a) & (grid < b)] = True
    n = len(win)
    got = D.descheduled(ctx, _budget(ctx))
    assert got is not None
    assert got.waiting_ns == pytest.approx((in_step & is_off).sum() * 1000 / n, abs=1000)
    want_out = (in_step & is_off & ~in_call).sum() * 1000 / n
    assert got.outside_calls_ns == pytest.approx(want_out, abs=1000)
    assert got.waiting_ns > 1_000_000  # ~1.8 ms a step, nearly all of it in the syncs
    assert not got.matters
    f = _cpu_bound(ctx)
    assert f.metrics["descheduled_ns_per_step"] == round(got.waiting_ns)
    assert "descheduled" not in f.message


# -- the thresholds on the hand-built loop --------------------------------------------------


def _with_waits(trace: Trace, spans: list[tuple[int, int]]) -> Trace:
    """Thread 1 waits (off its CPU) in `spans` and runs between them."""
    edges = [0, *[x for s in spans for x in s], STEPS * STEP]
    rows = [
        (edges[i], edges[i + 1], "running" if i % 2 == 0 else "waiting")
        for i in range(len(edges) - 1)
    ]
    n = len(rows)
    cols = {
        "start": pa.array([r[0] for r in rows], pa.int64()),
        "end": pa.array([r[1] for r in rows], pa.int64()),
        "duration": pa.array([r[1] - r[0] for r in rows], pa.int64()),
        "pid": pa.array([1] * n, pa.int64()),
        "tid": pa.array([1] * n, pa.int64()),
        "state": pa.array([r[2] for r in rows]).dictionary_encode(),
    }
    trace.tables["thread_state"] = schema.conform("thread_state", cols, n)
    return trace


@pytest.mark.parametrize(("wait", "said"), [(50 * US, True), (50 * US - 1, False)])
def test_descheduled_share_boundary(wait: int, said: bool) -> None:
    """800 µs kernels at each step's end (CPU-bound 20%: the finding fires). In each steady
    step the thread waits `wait` from 100 µs on, outside any call, and 30 µs inside a
    cudaStreamSynchronize at 400 µs. The bar is 5% of the 1000 µs step = 50 µs a step:
    at 50 µs the finding says it, at 49.999 µs it does not; the wait inside the call
    counts in the off-CPU time, never in the part the finding names."""
    assert D.DESCHEDULED_SHARE == 0.05
    syncs = [
        (s * STEP + 400 * US, s * STEP + 450 * US, "cudaStreamSynchronize") for s in range(STEPS)
    ]
    trace = loop_trace(kernels=at_step_end([800 * US] * STEPS), calls=syncs)
    waits = sorted(
        [(s * STEP + 100 * US, s * STEP + 100 * US + wait) for s in range(STEPS)]
        + [(s * STEP + 410 * US, s * STEP + 440 * US) for s in range(STEPS)]
    )
    ctx = Ctx(_with_waits(trace, waits))
    got = D.descheduled(ctx, _budget(ctx))
    assert got is not None
    assert got.outside_calls_ns == wait and got.waiting_ns == wait + 30 * US
    assert got.step_ns == STEP and got.matters is said
    f = _cpu_bound(ctx)
    assert ("The training thread was descheduled" in f.message) is said
    assert f.metrics["descheduled_outside_calls_ns_per_step"] == wait


def _with_samples(trace: Trace, per_step: int) -> Trace:
    """`per_step` samples of thread 1 in each steady step: the first in `other_fn`, the rest
    in `slow_fn` (module libx.so), with the stack main > other_fn or main > slow_fn."""
    stacks = schema.conform(
        "sample_stacks",
        {
            "node_id": pa.array([0, 1, 2], pa.int64()),
            "parent_id": pa.array([None, 0, 0], pa.int64()),
            "function": pa.array(["main", "slow_fn", "other_fn"]).dictionary_encode(),
            "module": pa.array(["libx.so"] * 3).dictionary_encode(),
        },
        3,
    )
    starts, leaf = [], []
    for s in range(1, STEPS):
        for i in range(per_step):
            starts.append(s * STEP + 10 * US + i * US)
            leaf.append(2 if i == 0 else 1)
    n = len(starts)
    samples = schema.conform(
        "cpu_samples",
        {
            "start": pa.array(starts, pa.int64()),
            "pid": pa.array([1] * n, pa.int64()),
            "tid": pa.array([1] * n, pa.int64()),
            "kind": pa.array(["native"] * n).dictionary_encode(),
            "stacked": pa.array([True] * n),
            "stack_id": pa.array(leaf, pa.int64()),
        },
        n,
    )
    trace.tables |= {"cpu_samples": samples, "sample_stacks": stacks}
    return trace


@pytest.mark.parametrize(("per_step", "named"), [(5, True), (4, False)])
def test_min_samples_boundary(per_step: int, named: bool) -> None:
    """20 samples in the 4 steady steps name the functions (MIN_SAMPLES); 16 do not. With
    5 a step, 16 of 20 are in slow_fn (80%), 4 in other_fn (20%)."""
    assert SS.MIN_SAMPLES == 20
    ctx = Ctx(_with_samples(loop_trace(kernels=at_step_end([800 * US] * STEPS)), per_step))
    f = _cpu_bound(ctx)
    assert ("slow_fn (libx.so) 80%, other_fn (libx.so) 20%" in f.message) is named
    assert ("cpu_samples" in f.metrics) is named


def test_python_functions_come_first() -> None:
    """With nsys Python samples too (kind python, 3 a steady step in `train_step` of
    train.py, 1 in `load`): the finding names the Python functions first, each as a share of
    the Python samples (75%, 25%), then the native ones (80%, 20% as above)."""
    trace = _with_samples(loop_trace(kernels=at_step_end([800 * US] * STEPS)), 5)
    stacks = trace.tables["sample_stacks"]
    py_nodes = schema.conform(
        "sample_stacks",
        {
            "node_id": pa.array([3, 4, 5], pa.int64()),
            "parent_id": pa.array([None, 3, 3], pa.int64()),
            "function": pa.array(["<module>", "train_step", "load"]).dictionary_encode(),
            "module": pa.array(["/w/train.py"] * 3).dictionary_encode(),
            "line": pa.array([40, 12, 30], pa.int32()),
            "python": pa.array([True] * 3),
        },
        3,
    )
    starts = [s * STEP + 500 * US + i * US for s in range(1, STEPS) for i in range(4)]
    leaf = [5 if i == 0 else 4 for _ in range(1, STEPS) for i in range(4)]
    n = len(starts)
    py = schema.conform(
        "cpu_samples",
        {
            "start": pa.array(starts, pa.int64()),
            "pid": pa.array([1] * n, pa.int64()),
            "tid": pa.array([1] * n, pa.int64()),
            "kind": pa.array(["python"] * n).dictionary_encode(),
            "stacked": pa.array([True] * n),
            "stack_id": pa.array(leaf, pa.int64()),
        },
        n,
    )
    samples = pa.concat_tables([trace.tables["cpu_samples"], py]).unify_dictionaries()
    trace.tables["cpu_samples"] = samples.sort_by("start")
    trace.tables["sample_stacks"] = pa.concat_tables([stacks, py_nodes]).unify_dictionaries()
    f = _cpu_bound(Ctx(trace))
    assert (
        "(36 samples, Python functions first, native below): train_step (train.py) 75%, "
        "load (train.py) 25%, slow_fn (libx.so) 80%, other_fn (libx.so) 20%." in f.message
    )
    kinds = [r["kind"] for r in f.metrics["cpu_sample_functions"]]
    assert kinds == ["python", "python", "native", "native"]
