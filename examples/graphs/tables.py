"""Write the schema and a few sample rows of the CUDA-graph and Python-backtrace tables of
the SQLite exports in tests/data/graphs, as plain text (tests/data/graphs/*_tables.txt).

usage: python examples/graphs/tables.py tests/data/graphs
"""

from __future__ import annotations

import lzma
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path


def open_xz(path: Path, tmp: Path) -> sqlite3.Connection:
    out = tmp / path.name.removesuffix(".xz")
    with lzma.open(path) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return sqlite3.connect(out)


def dump(con: sqlite3.Connection, sql: str, limit: int = 4) -> list[str]:
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    lines = ["    " + " | ".join(cols)]
    for row in cur.fetchmany(limit):
        lines.append("    " + " | ".join(str(v)[:400] for v in row))
    return lines


def schema(con: sqlite3.Connection, pattern: str) -> list[str]:
    out = []
    q = "SELECT name, sql FROM sqlite_master WHERE type='table' AND name LIKE ? ORDER BY name"
    for name, sql in con.execute(q, (pattern,)):
        n = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
        out += [f"-- {name}: {n} rows", sql, ""]
    return out


def graphs(data: Path, tmp: Path) -> list[str]:
    out: list[str] = []
    for name in ("graphs_default", "graphs_node"):
        con = open_xz(data / f"{name}.sqlite.xz", tmp)
        out += [f"===== {name}.sqlite: SELECT sql FROM sqlite_master WHERE name LIKE '%GRAPH%'", ""]
        out += schema(con, "%GRAPH%")
        kcount = con.execute(
            "SELECT count(*), count(graphNodeId) FROM CUPTI_ACTIVITY_KIND_KERNEL"
        ).fetchone()
        out.append(f"kernels: {kcount[0]}, of which with graphNodeId: {kcount[1]}")
        if name == "graphs_default":
            out.append("\nCUDA_GRAPH_EVENTS with names:")
            out += dump(
                con,
                "SELECT e.start, e.eventClass, e.graphId, e.originalGraphId, e.graphExecId, "
                "s.value AS name FROM CUDA_GRAPH_EVENTS e JOIN StringIds s ON s.id = e.nameId "
                "ORDER BY e.start",
                10,
            )
            out.append("\nGRAPH_TRACE rows joined to their launch (correlationId -> RUNTIME):")
            out += dump(
                con,
                "SELECT g.start, g.end - g.start AS dur, g.streamId, g.correlationId, g.graphId, "
                "g.graphExecId, s.value AS api FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE g "
                "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId "
                "JOIN StringIds s ON s.id = r.nameId ORDER BY g.start",
                6,
            )
        else:
            out.append("\nCUDA_GRAPH_NODE_EVENTS sample (graphNodeId repeats for cloned nodes):")
            out += dump(
                con,
                "SELECT e.*, s.value AS name FROM CUDA_GRAPH_NODE_EVENTS e "
                "JOIN StringIds s ON s.id = e.nameId ORDER BY e.start",
                4,
            )
            out.append("\nnode kernels per launching API (kernel.correlationId -> RUNTIME):")
            out += dump(
                con,
                "SELECT s.value AS api, count(*) AS kernels, count(DISTINCT k.correlationId) "
                "AS launches, count(DISTINCT k.graphNodeId) AS nodes "
                "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                "ON r.correlationId = k.correlationId JOIN StringIds s ON s.id = r.nameId "
                "WHERE k.graphNodeId IS NOT NULL GROUP BY 1",
            )
            out += dump(
                con,
                "SELECT k.start, k.end - k.start AS dur, k.correlationId, k.graphNodeId, "
                "k.graphNodeId >> 32 AS high32, k.graphNodeId & 4294967295 AS low32 "
                "FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.graphNodeId IS NOT NULL "
                "ORDER BY k.start",
                4,
            )
        out.append("")
    return out


def pybt(data: Path, tmp: Path) -> list[str]:
    con = open_xz(data / "pybt.sqlite.xz", tmp)
    out = ["===== pybt.sqlite: Python backtraces (NVTX marks with a JSON payload)", ""]
    out += schema(con, "NVTX_PAYLOAD%")
    out += schema(con, "CUDA_CALLCHAINS")
    out.append("NVTX_EVENTS rows by domain and type (75 = NvtxDomainCreate, 34 = NvtxMark):")
    out += dump(
        con,
        "SELECT domainId, eventType, count(*), min(text) AS domain_name_if_any "
        "FROM NVTX_EVENTS GROUP BY 1, 2",
        10,
    )
    out.append("\nOne backtrace joined to its CUDA API call (same start and globalTid):")
    out += dump(
        con,
        "SELECT r.start, s.value AS api, r.correlationId, r.callchainId, n.jsonText "
        "FROM NVTX_EVENTS n JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "ON r.start = n.start AND r.globalTid = n.globalTid "
        "JOIN StringIds s ON s.id = r.nameId WHERE n.eventType = 34 "
        "AND s.value LIKE 'cudaStreamSynchronize%' ORDER BY r.start DESC",
        1,
    )
    return out


def main() -> None:
    data = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        (data / "graph_tables.txt").write_text("\n".join(graphs(data, tmp)) + "\n")
        (data / "pybt_tables.txt").write_text("\n".join(pybt(data, tmp)) + "\n")


if __name__ == "__main__":
    main()
