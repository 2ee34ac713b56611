"""The CPU op summary (`tuiperf summary TRACE --report ops`) on the Kineto fixtures."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from tuiperf.load.kineto.tables import load_kineto
from tuiperf.model.trace import Trace
from tuiperf.summaries import ops, reports

DATA = Path(__file__).resolve().parents[1] / "data" / "kineto"


@pytest.fixture(scope="module", params=("kineto_cnn", "kineto_vit"))
def case(request: pytest.FixtureRequest) -> tuple[Trace, dict]:
    path = DATA / f"{request.param}.json.gz"
    tables, meta = load_kineto(path, None)
    return Trace(tables, meta), json.loads(gzip.decompress(path.read_bytes()))


def events(raw: dict, cat: str) -> list[dict]:
    return [e for e in raw["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat]


def test_registered_under_ops() -> None:
    assert reports.resolve("ops") == "op_sum"
    assert reports.source_tables("op_sum") == ("nvtx",)


def test_calls_and_host_totals_match_the_trace(case) -> None:
    trace, raw = case
    want: dict[str, list[int]] = defaultdict(list)
    for e in events(raw, "cpu_op"):
        want[e["name"]].append(round(e["dur"] * 1000))
    rows = reports.compute(trace, "op_sum").data.to_pylist()
    assert {r["name"]: (r["count"], r["total_ns"]) for r in rows} == {
        n: (len(d), sum(d)) for n, d in want.items()
    }
    for r in rows:
        assert 0 <= r["self_ns"] <= r["total_ns"]
        assert r["gpu_self_ns"] <= r["gpu_total_ns"]
    selfs = [r["self_ns"] for r in rows]
    assert selfs == sorted(selfs, reverse=True)
    assert abs(sum(r["self_pct"] for r in rows) - 100.0) < 1e-6


def test_innermost_range_is_the_op_kineto_names(case) -> None:
    """Kineto's `External id` on a CUDA call names its innermost enclosing cpu_op:
    tuiperf finds the same op from times and nesting alone."""
    trace, raw = case
    by_ext = {e["args"]["External id"]: e["name"] for e in events(raw, "cpu_op")}
    calls = events(raw, "cuda_runtime") + events(raw, "cuda_driver")
    r = ops.cpu_ranges(trace)
    t0 = min(round(e["ts"] * 1000) for e in raw["traceEvents"] if isinstance(e.get("ts"), float))
    at = np.array([round(e["ts"] * 1000) - t0 for e in calls])
    pid = np.array([e["pid"] for e in calls])
    tid = np.array([e["tid"] for e in calls])
    owner = ops.innermost(r, pid, tid, at)
    checked = 0
    for e, o in zip(calls, owner.tolist(), strict=True):
        want = by_ext.get(e["args"].get("External id"))
        if want is None:
            continue
        assert o >= 0 and r.names[o] == want
        checked += 1
    assert checked > 100


def test_gpu_time_is_attributed_once(case) -> None:
    trace, _ = case
    r = ops.cpu_ranges(trace)
    own = ops.gpu_self(trace, r)
    gpu_total = sum(int(trace.table(t)["duration"].to_numpy().sum())
                    for t in ("kernels", "memcpy", "memset"))  # fmt: skip
    assert 0.9 * gpu_total < own.sum() <= gpu_total
    top = ops.subtree_totals(r, own)[r.depth == 0]
    assert top.sum() == own.sum()  # every owned ns reaches exactly one outermost range


def test_parents_contain_children(case) -> None:
    trace, _ = case
    r = ops.cpu_ranges(trace)
    kids = np.flatnonzero(r.parent >= 0)
    assert len(kids) > 0
    p = r.parent[kids]
    assert (r.start[p] <= r.start[kids]).all() and (r.thread[p] == r.thread[kids]).all()
    assert (r.depth[p] == r.depth[kids] - 1).all()


def test_nsys_trace_gives_an_empty_op_summary(nsys_dir: Path) -> None:
    from tuiperf.load.open import OpenOptions, open_trace

    trace = open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))
    assert reports.compute(trace, "op_sum").num_rows == 0
