"""CUDA graphs (issue 26.2), on real H200 captures (tests/data/graphs): in nsys's default
graph-trace mode whole-graph executions are only in CUPTI_ACTIVITY_KIND_GRAPH_TRACE; they
are GPU work (table, lanes, launch links, GPU busy) while `summary` stays nsys stats'.
With `--cuda-graph-trace=node` the node kernels link to their cudaGraphLaunch."""

from __future__ import annotations

import lzma
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import run_cli
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import BUSY_PARTS
from tuiperf.analysis.engine import analyze
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import fmt
from tuiperf.model.timeline.attribution import partner_of
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.trace import Trace

GRAPHS = Path(__file__).resolve().parents[1] / "data" / "graphs"
_PID_TID = 0xFFFFFF


def _unpack(tmp: pytest.TempPathFactory, name: str) -> Path:
    out = tmp.mktemp(name) / f"{name}.sqlite"
    out.write_bytes(lzma.decompress((GRAPHS / f"{name}.sqlite.xz").read_bytes()))
    return out


@pytest.fixture(scope="module")
def default_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _unpack(tmp_path_factory, "graphs_default")


@pytest.fixture(scope="module")
def node_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _unpack(tmp_path_factory, "graphs_node")


@pytest.fixture(scope="module")
def default_trace(default_db: Path) -> Trace:
    return open_trace(default_db, OpenOptions(use_cache=False))


def _graph_trace(db: Path) -> list[tuple]:
    """GRAPH_TRACE rows with their launching call's thread and name, by start."""
    con = sqlite3.connect(db)
    return con.execute(
        "SELECT g.start, g.end, g.streamId, g.correlationId, g.graphId, g.graphExecId, "
        "r.globalTid, s.value FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE g "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId "
        "JOIN StringIds s ON s.id = r.nameId ORDER BY g.start"
    ).fetchall()


def test_graph_executions_are_read(default_db: Path, default_trace: Trace) -> None:
    want = _graph_trace(default_db)
    assert len(want) == 20 and {w[7] for w in want} == {"cudaGraphLaunch_v10000"}
    got = default_trace.table("graphs").sort_by("start").to_pylist()
    assert len(got) == len(want)
    for g, (start, end, stream, corr, graph, exe, gtid, _) in zip(got, want, strict=True):
        assert (g["start"], g["end"], g["duration"]) == (start, end, end - start)
        assert (g["stream"], g["correlation_id"]) == (stream, corr)
        assert (g["graph_id"], g["graph_exec_id"]) == (graph, exe)
        assert (g["pid"], g["tid"]) == ((gtid >> 24) & _PID_TID, gtid & _PID_TID)
        assert g["name"] == f"CUDA graph {graph}"


def test_page_reader_and_sqlite3_agree(
    default_db: Path, default_trace: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUIPERF_NO_PAGE_READER", "1")
    plain = open_trace(default_db, OpenOptions(use_cache=False)).table("graphs")
    assert plain.num_rows > 0 and plain.equals(default_trace.table("graphs"))


def test_graph_lanes_and_launch_links(default_db: Path, default_trace: Trace) -> None:
    ls = build_lanes(default_trace)
    lanes = [lane for lane in ls.lanes if lane.kind == "graph"]
    streams = {w[2] for w in _graph_trace(default_db)}
    assert sorted(lane.label for lane in lanes) == sorted(f"stream {s} graphs" for s in streams)
    assert all(lane.group.startswith("gpu:") for lane in lanes)
    assert sum(len(lane.iv.starts) for lane in lanes) == default_trace.table("graphs").num_rows
    api = default_trace.table("api")
    graphs = default_trace.table("graphs")
    for row in range(graphs.num_rows):
        assert ls.locate(default_trace, "graphs", row) is not None
        partner = partner_of(default_trace, "graphs", row)
        assert partner is not None and partner[0] == "api"
        call = api.slice(partner[1], 1).to_pylist()[0]
        assert call["name"] == "cudaGraphLaunch_v10000"
        assert call["correlation_id"] == graphs["correlation_id"][row].as_py()
        assert partner_of(default_trace, "api", partner[1]) == ("graphs", row)


def _union_ns(starts: np.ndarray, ends: np.ndarray, a: int, b: int) -> int:
    """Time in [a, b) covered by the intervals, by a plain sweep."""
    s, e = np.clip(starts, a, b), np.clip(ends, a, b)
    total, cur_s, cur_e = 0, None, None
    for x, y in sorted(zip(s.tolist(), e.tolist(), strict=True)):
        if y <= x:
            continue
        if cur_e is None or x > cur_e:
            total += 0 if cur_e is None else cur_e - cur_s
            cur_s, cur_e = x, y
        else:
            cur_e = max(cur_e, y)
    return total + (0 if cur_e is None else cur_e - cur_s)


def _gpu_intervals(db: Path, tables: list[str]) -> tuple[np.ndarray, np.ndarray]:
    con = sqlite3.connect(db)
    rows = [r for t in tables for r in con.execute(f"SELECT start, end FROM {t}")]
    arr = np.array(rows, np.int64)
    return arr[:, 0], arr[:, 1]


def test_budget_counts_graph_time_as_gpu_busy(default_db: Path, default_trace: Trace) -> None:
    budget = Ctx(default_trace).budget
    assert budget is not None
    plain = [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ]
    every = _gpu_intervals(default_db, [*plain, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"])
    without = _gpu_intervals(default_db, plain)
    graph_ns = 0
    for step in budget.main.steps:
        busy = sum(step.parts.ns[p] for p in BUSY_PARTS)
        assert busy == _union_ns(*every, step.start_ns, step.end_ns), step.label
        graph_ns += busy - _union_ns(*without, step.start_ns, step.end_ns)
    # the graphs are most of the steady GPU time, and the CPU-bound share is what is left
    assert graph_ns > budget.main.steady.busy_ns / 2
    assert budget.main.steady.ns["cpu_bound"] < budget.main.steady.busy_ns


def test_cpu_bound_while_graphs_run_names_no_graphs_to_add(default_trace: Trace) -> None:
    """Between the two graph replays and the two .item() syncs of each step the loop's
    Python (the data phase's launches) leaves the GPU idle: CPU-bound, but the lever is
    capturing more of the step in the graphs it already replays, not "use CUDA graphs"."""
    result = analyze(default_trace)
    assert result.budget is not None
    (f,) = [f for f in result.findings if f.rule == "cpu_bound"]
    assert "the CUDA graphs the run already replays" in f.fix.text
    assert "reduce-overhead" not in f.fix.text and "torch.compile" not in f.fix.snippet


@pytest.mark.parametrize("report", ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_trace"])
def test_summary_csv_stays_nsys_stats(default_db: Path, report: str, tmp_path: Path) -> None:
    ref = GRAPHS / f"stats_graphs_default_{report}.csv"
    text = (
        ref.read_text()
        if ref.exists()
        else lzma.decompress(Path(f"{ref}.xz").read_bytes()).decode()
    )
    res = run_cli("summary", str(default_db), "-r", report, "--csv", "--cache-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stdout == text


def test_summary_table_notes_the_graphs(default_db: Path, tmp_path: Path) -> None:
    want = _graph_trace(default_db)
    ns = sum(end - start for start, end, *_ in want)
    note = (
        f"note: {len(want)} CUDA graph executions are not in this report "
        f"({fmt.duration(ns)} of GPU time), as in nsys stats"
    )
    cache = ["--cache-dir", str(tmp_path)]
    for _ in range(2):  # computed, then from the cache entry
        res = run_cli("summary", str(default_db), "--top", "0", "--width", "120", *cache)
        assert res.returncode == 0, res.stderr
        assert res.stdout.rstrip().endswith(note)
    res = run_cli("summary", str(default_db), "-r", "cuda_api_sum", "--width", "120", *cache)
    assert res.returncode == 0 and "CUDA graph" not in res.stdout


def test_node_kernels_link_to_their_graph_launch(node_db: Path) -> None:
    trace = open_trace(node_db, OpenOptions(use_cache=False))
    assert trace.table("graphs").num_rows == 0  # node mode: no GRAPH_TRACE table
    con = sqlite3.connect(node_db)
    (n_nodes,) = con.execute(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId IS NOT NULL"
    ).fetchone()
    k = trace.table("kernels")
    nodes = np.flatnonzero(k["graph_node_id"].is_valid().to_numpy(zero_copy_only=False))
    assert len(nodes) == n_nodes > 0
    api = trace.table("api")
    rows = Ctx(trace).api_rows("kernels")[nodes]
    assert (rows >= 0).all()
    names = api["name"].to_pylist()
    assert {names[r] for r in rows.tolist()} == {"cudaGraphLaunch_v10000"}
    for row in nodes[:: max(len(nodes) // 10, 1)].tolist():
        partner = partner_of(trace, "kernels", row)
        assert partner is not None and partner[0] == "api"
        assert names[partner[1]] == "cudaGraphLaunch_v10000"
        assert api["correlation_id"][partner[1]] == k["correlation_id"][row]
