"""`tuiperf sql` and `Profile.sql`: every answer checked against sqlite3 over the nsys export
(or the CSV export / the ncu CSV page), and the sandbox checked to refuse file access."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import nsys_report
from tests.support import needs
from tests.support.ncu_data import close, decompress, page
from tuiperf.cli import main
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import columns as C
from tuiperf.sql.session import Session, Source, SqlError
from tuiperf.sql.views import EVENT_VIEWS

duckdb = needs.module("duckdb")

REPORTS = ("cnn_osrt", "vit_amp", "lstm")


def _sqlite(name: str, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{nsys_report(name)}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["sql", "-q", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    code, out, err = _cli(capsys, *args, "-f", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def session() -> Session:
    trace = open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False))
    return Session({"main": Source(trace)})


# -- answers against sqlite3 on the export ----------------------------------------------


@pytest.mark.parametrize("name", REPORTS)
def test_per_name_kernel_sums_match_sqlite(capsys: pytest.CaptureFixture[str], name: str) -> None:
    want = _sqlite(name, """
        SELECT s.value, count(*), sum(k.end - k.start), min(k.start), max(k.end)
        FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
        GROUP BY s.value""")  # fmt: skip
    got = _json(capsys, str(nsys_report(name)), "--limit", "0",
                "SELECT name, count(*) AS n, sum(duration_ns) AS total_ns, min(start_ns) AS lo,"
                " max(end_ns) AS hi FROM kernels GROUP BY name")  # fmt: skip
    assert len(want) > 10
    assert {r["name"]: (r["n"], r["total_ns"], r["lo"], r["hi"]) for r in got} == {
        w[0]: tuple(w[1:]) for w in want
    }


@pytest.mark.parametrize("name", REPORTS)
def test_copies_by_kind_match_sqlite(capsys: pytest.CaptureFixture[str], name: str) -> None:
    want = _sqlite(name, """
        SELECT e.label, count(*), sum(m.bytes), sum(m.end - m.start)
        FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind
        GROUP BY e.label""")  # fmt: skip
    got = _json(capsys, str(nsys_report(name)),
                "SELECT name, count(*) n, sum(bytes) b, sum(duration_ns) d FROM copies "
                "GROUP BY name")  # fmt: skip
    assert want
    assert {r["name"]: (r["n"], r["b"], r["d"]) for r in got} == {
        f"[CUDA memcpy {w[0]}]": tuple(w[1:]) for w in want
    }


def test_api_names_drop_the_version_suffix_as_nsys_stats_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = _sqlite("cnn_osrt", """
        SELECT s.value, r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r
        JOIN StringIds s ON s.id = r.nameId""")  # fmt: skip
    want: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for value, dur in rows:
        w = want[re.sub(r"_v\d{4}$", "", value)]
        w[0] += 1
        w[1] += dur
    got = _json(capsys, str(nsys_report("cnn_osrt")),
                "SELECT name, count(*) n, sum(duration_ns) d FROM api GROUP BY name")  # fmt: skip
    assert any(re.search(r"_v\d{4}$", v) for v, _ in rows)  # the suffix is there to drop
    assert {r["name"]: [r["n"], r["d"]] for r in got} == dict(want)


def test_osrt_and_nvtx_match_sqlite(capsys: pytest.CaptureFixture[str]) -> None:
    # eventClass 31/32: zero-length start/finish markers of a thread, not calls
    osrt = _sqlite("cnn_osrt", """
        SELECT s.value, count(*), sum(o.end - o.start) FROM OSRT_API o
        JOIN StringIds s ON s.id = o.nameId WHERE o.eventClass NOT IN (31, 32)
        GROUP BY s.value""")  # fmt: skip
    got = _json(capsys, str(nsys_report("cnn_osrt")),
                "SELECT name, count(*) n, sum(duration_ns) d FROM osrt GROUP BY name")  # fmt: skip
    assert {r["name"]: (r["n"], r["d"]) for r in got} == {w[0]: w[1:] for w in osrt}
    nvtx = _sqlite("cnn_osrt", """
        SELECT coalesce(n.text, s.value), n.start, n.end FROM NVTX_EVENTS n
        LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType = 59""")  # fmt: skip
    got = _json(
        capsys,
        str(nsys_report("cnn_osrt")),
        "SELECT name, start_ns, end_ns FROM nvtx ORDER BY start_ns, end_ns, name",
    )
    assert [(r["name"], r["start_ns"], r["end_ns"]) for r in got] == sorted(
        nvtx, key=lambda r: (r[1], r[2], r[0])
    )


def test_steps_are_the_nvtx_step_ranges(capsys: pytest.CaptureFixture[str]) -> None:
    """cnn_osrt marks its 11 steps with NVTX `step N` ranges; `analyze` reads steps 2 … 10
    as the steady ones (the first two are the start-up). Each steady step's window runs from
    its range's start to the next range's start (the last: to its own end)."""
    ranges = _sqlite("cnn_osrt", """
        SELECT coalesce(n.text, s.value), n.start, n.end FROM NVTX_EVENTS n
        LEFT JOIN StringIds s ON s.id = n.textId
        WHERE coalesce(n.text, s.value) LIKE 'step %' ORDER BY n.start""")  # fmt: skip
    got = _json(capsys, str(nsys_report("cnn_osrt")), "SELECT * FROM steps ORDER BY cpu_start_ns")
    assert len(ranges) == 11 and len(got) == 9
    ends = [s for _, s, _ in ranges[3:]] + [ranges[-1][2]]
    want = [(t, s, e) for (t, s, _), e in zip(ranges[2:], ends, strict=True)]
    assert [(r["step"], r["cpu_start_ns"], r["cpu_end_ns"]) for r in got] == want
    assert all(r["duration_ns"] == r["end_ns"] - r["start_ns"] > 0 for r in got)


def test_several_reports_are_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    counts = {n: _sqlite(n, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]
              for n in ("cnn_osrt", "lstm")}  # fmt: skip
    got = _json(capsys, f"a={nsys_report('cnn_osrt')}", str(nsys_report("lstm")),
                "SELECT (SELECT count(*) FROM a.kernels) AS a, "
                "(SELECT count(*) FROM lstm.kernels) AS b")  # fmt: skip
    assert got == [{"a": counts["cnn_osrt"], "b": counts["lstm"]}]
    code, _, err = _cli(capsys, str(nsys_report("lstm")), str(nsys_report("lstm")),
                        "SELECT count(*) FROM lstm_2.kernels")  # fmt: skip
    assert code == 0, err


def test_python_api_answers_the_same(tmp_path: Path) -> None:
    import tuiperf

    want = _sqlite("lstm", "SELECT sum(end - start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    p = tuiperf.open(nsys_report("lstm"), cache_dir=tmp_path)
    t = p.sql("SELECT sum(duration_ns) AS s, count(*) AS n FROM kernels")
    assert [(r["s"], r["n"]) for r in t.to_pylist()] == want
    assert t.schema.field("s").type == "int64"  # DuckDB's HUGEINT sum, as a plain integer
    assert p.sql("SELECT * FROM kernels", limit=3).num_rows == 3
    assert p.sql("SELECT count(*) AS n FROM kernels").to_pylist() == [{"n": want[0][1]}]
    assert "kernels" in set(p.sql_schema()["view"].to_pylist())


def test_ncu_metrics_match_the_raw_csv_page(
    capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    raw = page(decompress(tmp_path_factory), "lstm_basic", "raw")
    rows = list(csv.reader(io.StringIO(raw.read_text(encoding="utf-8"))))
    header, units, body = rows[0], rows[1], rows[2:]
    col = header.index("gpu__time_duration.sum")
    assert units[col] == "us"
    got = _json(capsys, str(raw), "--limit", "0",
                "SELECT kernel_id, name, unit, value FROM ncu_metrics "
                "WHERE metric = 'gpu__time_duration.sum' ORDER BY kernel_id")  # fmt: skip
    assert [r["kernel_id"] for r in got] == [int(r[0]) for r in body]
    assert [r["name"] for r in got] == [r[header.index("Kernel Name")] for r in body]
    for r, b in zip(got, body, strict=True):
        assert r["unit"] == "ns" and close(r["value"] / 1000, float(b[col]), 0.01), (r, b[col])


# -- names, schema, formats, limits ------------------------------------------------------


@pytest.mark.parametrize("view", EVENT_VIEWS, ids=lambda v: v.name)
def test_event_views_begin_with_the_csv_export_columns(
    capsys: pytest.CaptureFixture[str], view, tmp_path: Path
) -> None:
    out = tmp_path / "e.csv"
    assert main(["export", str(nsys_report("cnn_osrt")), "-q", "--table", view.table,
                 "-o", str(out)]) == 0  # fmt: skip
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == C.export_names(C.columns(view.table))
    code, text, err = _cli(capsys, str(nsys_report("cnn_osrt")), "-f", "csv", "--limit", "1",
                           f"SELECT * FROM {view.name}")  # fmt: skip
    assert code == 0, err
    assert text.splitlines()[0].split(",")[: len(header)] == header


def test_kernel_rows_equal_the_csv_export(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "k.csv"
    assert main(["export", str(nsys_report("lstm")), "-q", "-o", str(out)]) == 0
    want = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    cols = ", ".join(want[0])
    code, text, err = _cli(
        capsys,
        str(nsys_report("lstm")),
        "-f",
        "csv",
        "--limit",
        "0",
        f"SELECT {cols} FROM kernels ORDER BY start_ns, correlation_id",
    )
    assert code == 0, err
    got = list(csv.reader(io.StringIO(text)))
    assert len(got) == len(want) > 100
    assert sorted(got[1:]) == sorted(want[1:]) and got[0] == want[0]


def test_schema_lists_every_view_with_units(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, str(nsys_report("cnn_osrt")), "--schema")
    views = {r["view"] for r in rows}
    assert views == {"kernels", "copies", "memsets", "graphs", "api", "nvtx", "osrt", "sync",
                     "gpu_memory", "devices", "processes", "threads", "streams", "steps",
                     "budget", "findings"}  # fmt: skip
    kernels = [r for r in rows if r["view"] == "kernels"]
    assert [r["column"] for r in kernels][:3] == ["start_ns", "end_ns", "duration_ns"]
    assert all(r["unit"] == "ns" for r in rows if r["column"].endswith("_ns"))
    assert {r["unit"] for r in rows if r["column"] == "bytes"} == {"bytes"}
    code, text, _ = _cli(capsys, str(nsys_report("cnn_osrt")), "--schema")
    assert code == 0 and "kernels: GPU kernels" in text and "budget:" in text


def test_formats_agree(capsys: pytest.CaptureFixture[str]) -> None:
    q = "SELECT name, count(*) AS n FROM copies GROUP BY name ORDER BY name"
    rep = str(nsys_report("cnn_osrt"))
    js = _json(capsys, rep, q)
    _, text, _ = _cli(capsys, rep, "-f", "csv", q)
    assert list(csv.DictReader(io.StringIO(text))) == [
        {"name": r["name"], "n": str(r["n"])} for r in js
    ]
    _, md, _ = _cli(capsys, rep, "-f", "markdown", q)
    lines = md.splitlines()
    assert lines[:2] == ["| name | n |", "|:---|---:|"]
    assert lines[2:] == [f"| {r['name']} | {r['n']} |" for r in js]
    _, table, _ = _cli(capsys, rep, "--width", "120", q)
    assert all(r["name"] in table and str(r["n"]) in table for r in js)


def test_markdown_escapes_pipes(capsys: pytest.CaptureFixture[str]) -> None:
    _, md, _ = _cli(capsys, str(nsys_report("lstm")), "-f", "markdown", "SELECT 'a|b' AS x")
    assert md.splitlines()[2] == "| a\\|b |"


@pytest.mark.parametrize(("limit", "truncated"), [("4", True), ("5", False), ("0", False)])
def test_limit_at_its_boundary(
    capsys: pytest.CaptureFixture[str], limit: str, truncated: bool
) -> None:
    q = "SELECT * FROM range(5) t(i)"
    code, out, err = _cli(capsys, str(nsys_report("lstm")), "-f", "csv", "--limit", limit, q)
    assert code == 0
    assert len(out.splitlines()) - 1 == (4 if truncated else 5)
    assert ("showing the first 4 rows" in err) is truncated


def test_the_default_limit_is_1000(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sql", str(nsys_report("lstm")), "-f", "csv", "SELECT * FROM range(1001)"])
    out, err = capsys.readouterr()
    assert code == 0 and len(out.splitlines()) == 1001
    assert "showing the first 1,000 rows; pass --limit 0 for all" in err
    main(["sql", str(nsys_report("lstm")), "-f", "csv", "SELECT * FROM range(1000)"])
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1001 and "note" not in err


# -- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("SELECT * FROM kernls", "no view 'kernls'; views: api, budget"),
        ("SELEC 1", "Parser Error"),
        ("SELECT nope FROM kernels", "nope"),
        ("SELECT 1; SELECT 2", "give one SQL statement, not 2"),
        ("CREATE TABLE t AS SELECT 1", "only SELECT queries run here (read-only), not CREATE"),
        ("", "the query is empty"),
    ],
)
def test_bad_sql_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], sql: str, says: str
) -> None:
    code, out, err = _cli(capsys, str(nsys_report("lstm")), sql)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tuiperf: error: ") and says in err
    assert "Traceback" not in err


def test_missing_report_and_missing_query(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(capsys, "/nonexistent.sqlite", "SELECT 1")
    assert code == 2 and err == "tuiperf: error: /nonexistent.sqlite: no such file or directory\n"
    code, _, err = _cli(capsys, str(nsys_report("lstm")))
    assert code == 2 and "give a report and a query" in err
    code, _, err = _cli(capsys, str(nsys_report("lstm")), "--limit", "-1", "SELECT 1")
    assert code == 2 and "--limit" in err


@pytest.mark.parametrize(
    "sql",
    [
        "COPY (SELECT 1) TO '{dir}/out.csv'",
        "ATTACH '{dir}/other.duckdb' AS other",
        "SELECT * FROM read_csv('{dir}/in.csv')",
        "SELECT * FROM read_parquet('{dir}/in.parquet')",
        "SELECT * FROM glob('{dir}/*')",
        "INSTALL httpfs",
        "LOAD httpfs",
        "EXPORT DATABASE '{dir}/db'",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
    ],
)
def test_no_file_access_even_on_the_connection_itself(
    session: Session, tmp_path: Path, sql: str
) -> None:
    """Refused by the statement check and, below it, by DuckDB's locked configuration."""
    (tmp_path / "in.csv").write_text("a\n1\n")
    before = sorted(tmp_path.iterdir())
    q = sql.format(dir=tmp_path)
    with pytest.raises(SqlError):
        session.query(q)
    with pytest.raises(duckdb.Error):
        session.con.execute(q)
    assert sorted(tmp_path.iterdir()) == before
    assert session.query("SELECT count(*) AS n FROM kernels").table.num_rows == 1


def test_python_variables_are_not_tables(session: Session) -> None:
    secret = session.sources  # noqa: F841 — DuckDB's replacement scans would find it
    with pytest.raises(SqlError, match="no view 'secret'"):
        session.query("SELECT * FROM secret")


def test_docs_list_every_view_and_column(tmp_path_factory: pytest.TempPathFactory) -> None:
    """docs/sql.md's views table names each view with all its columns, in order."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "sql.md").read_text(encoding="utf-8")
    trace = open_trace(nsys_report("lstm"), OpenOptions(use_cache=False))
    raw = page(decompress(tmp_path_factory), "lstm_basic", "raw")
    from tuiperf.load.ncu.open import open_ncu

    src = Source(trace, open_ncu(raw, OpenOptions(use_cache=False)))
    d = Session({"main": src}, empty=True).describe().to_pylist()
    for view in dict.fromkeys(r["view"] for r in d):
        line = next((s for s in doc.splitlines() if s.startswith(f"| `{view}` |")), None)
        assert line is not None, view
        want = [r["column"] + (f" ({r['unit']})" if r["unit"] else "") for r in d
                if r["view"] == view]  # fmt: skip
        assert line.rstrip(" |").split(" | ")[-1].split(", ") == want, view


def test_findings_view_has_the_analyze_ids(capsys: pytest.CaptureFixture[str]) -> None:
    main(["analyze", str(nsys_report("cnn_osrt")), "-f", "json", "-q"])
    want = [
        (i + 1, f["id"], f["rule"])
        for i, f in enumerate(json.loads(capsys.readouterr().out)["findings"])
    ]
    got = _json(capsys, str(nsys_report("cnn_osrt")), "SELECT rank, id, rule FROM findings")
    assert [(r["rank"], r["id"], r["rule"]) for r in got] == want and len(want) > 5


# -- strict and whole output (review of issue 36) -----------------------------------------


def _strict(text: str) -> list[dict]:
    def refuse(name: str) -> None:
        raise AssertionError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_json_writes_null_for_non_finite_floats(capsys: pytest.CaptureFixture[str]) -> None:
    q = "SELECT 1/0 AS r, -1/0 AS m, 'nan'::DOUBLE AS n, 2.5 AS x, [1.5, 'inf'::DOUBLE] AS l"
    code, out, err = _cli(capsys, str(nsys_report("lstm")), "-f", "json", q)
    assert code == 0, err
    assert _strict(out) == [{"r": None, "m": None, "n": None, "x": 2.5, "l": [1.5, None]}]


def test_csv_writes_lists_maps_intervals_and_blobs_as_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    q = ("SELECT [1, 2] AS l, MAP {'k': 1} AS m, INTERVAL 1 MONTH AS i, '\\xAB'::BLOB AS b, "
         "{'x': 1} AS s, 7 AS n")  # fmt: skip
    code, out, err = _cli(capsys, str(nsys_report("lstm")), "-f", "csv", q)
    assert code == 0 and err == ""
    # DuckDB's own text forms (docs: LIST [1, 2], MAP {k=1}, INTERVAL '1 month', BLOB \xAB)
    assert list(csv.reader(io.StringIO(out))) == [
        ["l", "m", "i", "b", "s", "n"],
        ["[1, 2]", "{k=1}", "1 month", "\\xAB", "{'x': 1}", "7"],
    ]
    code, out, _ = _cli(capsys, str(nsys_report("lstm")), "-f", "json", q)
    assert code == 0
    row = _strict(out)[0]  # JSON keeps lists as arrays; INTERVAL and BLOB as text
    assert (row["l"], row["i"], row["b"], row["n"]) == ([1, 2], "1 month", "\\xAB", 7)


@pytest.mark.parametrize("fmt", ["json", "csv", "markdown", "table"])
def test_duplicate_column_names_are_made_unique(
    capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    q = "SELECT 1 AS a, 2 AS a, 3 AS b, 4 AS a"
    code, out, _ = _cli(capsys, str(nsys_report("lstm")), "-f", fmt, q)
    assert code == 0
    if fmt == "json":
        assert _strict(out) == [{"a": 1, "a_1": 2, "b": 3, "a_2": 4}]
    elif fmt == "csv":
        assert out.splitlines() == ["a,a_1,b,a_2", "1,2,3,4"]
    elif fmt == "markdown":
        assert out.splitlines()[0] == "| a | a_1 | b | a_2 |"
    else:
        assert re.search(r"^a\s+a_1\s+b\s+a_2$", out, flags=re.M)


def test_a_made_name_skips_one_the_query_already_has() -> None:
    import pyarrow as pa

    from tuiperf.sql.session import unique_names

    t = pa.table([[1], [2], [3]], names=["a", "a", "a_1"])
    assert unique_names(t).column_names == ["a", "a_2", "a_1"]


@pytest.mark.parametrize(
    "sql",
    ["EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1", "EXPLAIN (ANALYZE) CREATE TABLE t AS SELECT 1",
     "EXPLAIN /* c */ ANALYSE INSERT INTO t VALUES (1)", "EXPLAIN ANALYZE DROP VIEW kernels"],
)  # fmt: skip
def test_explain_analyze_runs_only_a_select(session: Session, sql: str) -> None:
    with pytest.raises(SqlError, match="EXPLAIN runs only over a SELECT here"):
        session.query(sql)
    made = session.con.sql("SELECT count(*) FROM duckdb_tables() WHERE table_name = 't'")
    assert made.fetchall() == [(0,)]
    plan = session.query("EXPLAIN ANALYZE SELECT count(*) FROM kernels").table
    assert plan.num_rows >= 1  # a SELECT is still explained, analyzed


@pytest.mark.parametrize("name", ["information_schema", "pg_catalog", "temp", "system",
                                  "memory", "main", "order", "select"])  # fmt: skip
def test_reserved_schema_names_are_refused(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = _cli(capsys, f"{name}={nsys_report('lstm')}",
                          str(nsys_report("vit_range")), "SELECT 1 AS x")  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"DuckDB reserves the name {name!r}" in err


def test_a_reserved_file_stem_gets_r_before_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import shutil

    paths = []
    for stem in ("order", "memory"):
        paths.append(tmp_path / f"{stem}.sqlite")
        shutil.copy(nsys_report("lstm"), paths[-1])
    (n,) = _sqlite("lstm", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0]
    q = ("SELECT (SELECT count(*) FROM r_order.kernels) AS a, "
         "(SELECT count(*) FROM r_memory.kernels) AS b")  # fmt: skip
    assert _json(capsys, *map(str, paths), q) == [{"a": n, "b": n}]


def test_schema_ddl_errors_are_one_line() -> None:
    with pytest.raises(SqlError, match=r"schema 'MAIN': .*already exists"):  # main, twice
        Session({"main": Source(), "MAIN": Source()})


# -- a cache entry's narrow columns -------------------------------------------------------


@pytest.mark.parametrize("name", ["lstm", "h100_2gpu_1s"])
def test_views_over_a_cache_entry_equal_those_over_a_fresh_conversion(
    name: str, tmp_path: Path
) -> None:
    """Every event view, read from a cache entry (ids and codes stored narrow, `duration`
    not stored), gives the same rows and types as over the report converted without a cache;
    DuckDB casts as it scans, so the trace's stored columns are never widened."""
    fresh = Session({"main": Source(open_trace(nsys_report(name), OpenOptions(use_cache=False)))})
    open_trace(nsys_report(name), OpenOptions(cache_dir=tmp_path))
    trace = open_trace(nsys_report(name), OpenOptions(cache_dir=tmp_path))
    assert trace.meta.from_cache
    held = {t: trace.tables[t].schema for t in ("api", "kernels")}
    cached = Session({"main": Source(trace)})
    for view in EVENT_VIEWS:
        q = f"SELECT * FROM {view.name}"
        a, b = fresh.query(q).table, cached.query(q).table
        assert b.schema == a.schema, view.name
        keys = [(c, "ascending") for c in a.column_names if "name" not in c][:6]
        assert b.sort_by(keys).equals(a.sort_by(keys)), view.name
    for t, before in held.items():  # details joined, nothing widened
        now = trace.tables[t].schema
        assert all(now.field(f.name).type == f.type for f in before), t
