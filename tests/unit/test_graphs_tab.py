"""The events table's Graphs kind and `tuiperf export --table graphs`, on the real H200
capture of tests/data/graphs (nsys's default --cuda-graph-trace=graph: 20 whole-graph
executions, each launched by a cudaGraphLaunch). Every figure is read from the SQLite
export with SQL here."""

from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.support.data import unxz
from tuiperf.cli import main
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import columns as C
from tuiperf.model.timeline.query import Events, Query

DEFAULT = DATA / "graphs" / "graphs_default.sqlite.xz"
NODE = DATA / "graphs" / "graphs_node.sqlite.xz"


def _sql(db: Path, query: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _graph_rows(db: Path) -> list[list[str]]:
    """GRAPH_TRACE with its launching runtime call's name, as the export writes them."""
    rows = _sql(
        db,
        "SELECT g.start, g.end, g.end - g.start, g.deviceId, g.streamId, g.graphId, "
        "g.graphExecId, g.correlationId, s.value, (g.globalPid >> 24) & 16777215, "
        "'CUDA graph ' || g.graphId "
        "FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE g "
        "LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId "
        "AND r.globalTid >> 24 = g.globalPid >> 24 "
        "LEFT JOIN StringIds s ON s.id = r.nameId ORDER BY g.start",
    )
    return [["" if v is None else str(v) for v in r] for r in rows]


def _export(report: Path, *args: str) -> list[list[str]]:
    out = report.parent / "graphs-export.csv"
    out.unlink(missing_ok=True)
    assert main(["export", str(report), "-q", "--no-cache", "--table", "graphs", *args,
                 "-o", str(out)]) == 0  # fmt: skip
    return list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))


def test_export_lists_every_graph_execution_with_its_launch() -> None:
    db = unxz(DEFAULT)
    rows = _export(db)
    assert rows[0] == C.export_names(C.columns("graphs"))
    want = _graph_rows(db)
    assert len(want) == 20 and all(r[8].startswith("cudaGraphLaunch") for r in want)
    assert rows[1:] == want


def test_export_summary_per_graph() -> None:
    db = unxz(DEFAULT)
    rows = _export(db, "--summary")
    header, body = rows[0], rows[1:]
    got = {r[header.index("name")]: (int(r[header.index("instances")]),
                                     int(r[header.index("total_ns")])) for r in body}  # fmt: skip
    want = _sql(db, "SELECT graphId, COUNT(*), SUM(end - start) "
                    "FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE GROUP BY graphId")  # fmt: skip
    assert got == {f"CUDA graph {g}": (n, total) for g, n, total in want}


def test_node_mode_has_no_graph_executions() -> None:
    """With --cuda-graph-trace=node the graph's kernels are kernels: the Graphs table is empty
    and its export is a header-only file."""
    rows = _export(unxz(NODE))
    assert rows == [C.export_names(C.columns("graphs"))]


@pytest.fixture(scope="module")
def events() -> Events:
    return Events(open_trace(unxz(DEFAULT), OpenOptions(use_cache=False)))


def test_the_events_table_filters_and_sorts_graphs(events: Events) -> None:
    db = unxz(DEFAULT)
    view = events.run(Query(kind="graphs", text="graph 4", sort="duration", descending=True))
    want = _sql(db, "SELECT end - start FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE graphId = 4 "
                    "ORDER BY end - start DESC")  # fmt: skip
    specs = list(C.columns("graphs"))
    cells = [view.cells(i, specs, ascii_only=True) for i in range(len(view))]
    keys = [s.key for s in specs]
    assert [row[keys.index("graph_id")] for row in cells] == ["4"] * len(want)
    assert [view.events.value("duration", view.row(i)) for i in range(len(view))] == [
        d for (d,) in want
    ]
    assert {row[keys.index("launch")] for row in cells} == {"cudaGraphLaunch_v10000"}


def test_graphs_is_a_kind_of_the_table() -> None:
    assert "graphs" in C.KINDS and C.KIND_TITLES["graphs"] == "Graphs"
    assert C.KINDS.index("graphs") == C.KINDS.index("memset") + 1
