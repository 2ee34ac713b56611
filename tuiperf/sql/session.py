"""A read-only DuckDB session over one or more reports, one schema each.

DuckDB scans the registered Arrow tables in place (no copy); the views rename their columns
as the CSV export names them. The connection is locked down before any user SQL runs: no
file system or network access (`enable_external_access=false`: COPY, ATTACH, read_csv,
INSTALL and LOAD fail), no extension auto-loading, no scans of Python variables, and the
configuration locked so a query cannot turn any of it back on. Only one SELECT (or
EXPLAIN) statement runs per query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from tuiperf import schema
from tuiperf.errors import MissingToolError, UsageError
from tuiperf.sql import tables as T
from tuiperf.sql import views as V

if TYPE_CHECKING:
    from tuiperf.model.ncu.metrics import KernelMetrics
    from tuiperf.model.trace import Trace

MISSING = "tuiperf sql needs DuckDB, which is not installed: pip install 'tuiperf[sql]'"
#: the settings every session starts with, locked (docs/sql.md)
LOCKED_CONFIG = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,
    "lock_configuration": True,
}
_ALLOWED = ("SELECT", "EXPLAIN")
#: DuckDB's own catalogs and schemas: a report's schema of one of these names cannot be made
#: or makes every query that names it ambiguous (`memory.kernels`)
TAKEN = frozenset({"main", "temp", "memory", "system", "information_schema", "pg_catalog"})


#: DuckDB's integer types by width (the canonical types a narrow column is cast back to)
_SQL_INTS = {8: "TINYINT", 16: "SMALLINT", 32: "INTEGER", 64: "BIGINT"}


class SqlError(UsageError):
    """A query DuckDB rejected, as one line."""


@dataclass
class Source:
    """One report: a timeline (`trace`), an Nsight Compute report (`ncu`), or both."""

    trace: Trace | None = None
    ncu: KernelMetrics | None = None

    def views(self) -> list[str]:
        names: list[str] = []
        if self.trace is not None:
            names += [v.name for v in V.EVENT_VIEWS] + list(V.PLAIN_VIEWS)
            names += [n for n in V.DERIVED_VIEWS if n != "findings"]
        if self.trace is not None or self.ncu is not None:
            names.append("findings")
        if self.ncu is not None:
            names += list(V.NCU_VIEWS)
        return names


@dataclass
class Result:
    table: pa.Table
    truncated: bool  # more rows than the limit


def duckdb_module() -> Any:
    try:
        import duckdb
    except ImportError as e:
        raise MissingToolError(MISSING) from e
    return duckdb


def connect() -> Any:
    """An in-memory DuckDB connection with file, network and extension access off, locked."""
    return duckdb_module().connect(":memory:", config=dict(LOCKED_CONFIG))


def one_line(e: BaseException) -> str:
    """DuckDB's message on one line (the LINE/caret picture of a parser error dropped)."""
    lines = [s.strip() for s in str(e).splitlines()]
    keep = [s for s in lines if s and not s.startswith("LINE ") and set(s) != {"^"}]
    return " ".join(keep) or type(e).__name__


@dataclass
class Session:
    """Views over `sources` (schema name -> report); a single report's schema is `main`."""

    sources: dict[str, Source]
    empty: bool = False  # views over empty tables (for --schema: no data is read)
    con: Any = field(default=None, repr=False)
    _made: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        duckdb = duckdb_module()
        self.con = connect()
        for name in self.sources:
            if name == "main":
                continue
            try:
                self.con.execute(f"CREATE SCHEMA {V.quote(name)}")
            except duckdb.Error as e:
                raise SqlError(f"schema {name!r}: {one_line(e)}") from e

    # -- views -------------------------------------------------------------------------
    def ensure(self, names: set[str]) -> None:
        """Create the views `names` in every schema that offers them (once)."""
        for sch, src in self.sources.items():
            for view in src.views():
                if view in names and (sch, view) not in self._made:
                    self._create(sch, src, view)
                    self._made.add((sch, view))

    def ensure_all(self) -> None:
        self.ensure({v for s in self.sources.values() for v in s.views()})

    def _create(self, sch: str, src: Source, view: str) -> None:
        target = f"{V.quote(sch)}.{V.quote(view)}"
        event = next((v for v in V.EVENT_VIEWS if v.name == view), None)
        if event is not None:
            raw = self._canonical(sch, event.table, self._event_table(src, event.table))
            body = ", ".join(f"{e} AS {V.quote(n)}" for e, n in event.select())
            self.con.execute(f"CREATE VIEW {target} AS SELECT {body} FROM {raw}")
        elif view in V.NCU_VIEWS:
            self._create_ncu(sch, src, view, target)
        elif view in V.PLAIN_VIEWS:
            raw = self._register(sch, view, self._table(src, view))
            self.con.execute(f"CREATE VIEW {target} AS SELECT {V.plain_select(view)} FROM {raw}")
        else:
            raw = self._register(sch, view, self._table(src, view))
            self.con.execute(f"CREATE VIEW {target} AS SELECT * FROM {raw}")

    def _create_ncu(self, sch: str, src: Source, view: str, target: str) -> None:
        from tuiperf.model.ncu.metrics import SCHEMAS

        def part(name: str) -> pa.Table:
            if self.empty or src.ncu is None:
                return SCHEMAS[name].empty_table()
            return src.ncu.tables[name]

        kernels = self._register(sch, "ncu_kernels", part("kernels"))
        if view == "ncu_kernels":
            self.con.execute(f"CREATE VIEW {target} AS SELECT * FROM {kernels}")
            return
        metrics = self._register(sch, "ncu_metrics", part("metrics"))
        sql = T.NCU_METRICS_SQL.format(metrics=metrics, kernels=kernels)
        self.con.execute(f"CREATE VIEW {target} AS {sql}")

    def _register(self, sch: str, name: str, table: pa.Table) -> str:
        raw = f"_{sch}_{name}"
        self.con.register(raw, table)
        return V.quote(raw)

    def _canonical(self, sch: str, name: str, table: pa.Table) -> str:
        """Register `table` as held (a cache entry's narrow columns, perhaps no `duration`)
        and a view over it in the canonical types: DuckDB casts a vector at a time as it
        scans, where widening the columns first would copy them whole into memory."""
        raw = self._register(sch, f"{name}_held", table)
        canonical = schema.TABLES[name]
        cols = []
        for f in table.schema:
            at = canonical.get_field_index(f.name)
            want = canonical.field(at).type if at >= 0 else f.type
            if want != f.type and pa.types.is_integer(want):
                sql_type = _SQL_INTS[want.bit_width]
                cols.append(f"CAST({V.quote(f.name)} AS {sql_type}) AS {V.quote(f.name)}")
            else:
                cols.append(V.quote(f.name))
        if "duration" in canonical.names and "duration" not in table.column_names:
            cols.append('("end" - "start") AS duration')
        view = V.quote(f"_{sch}_{name}")
        self.con.execute(f"CREATE VIEW {view} AS SELECT {', '.join(cols)} FROM {raw}")
        return view

    def _event_table(self, src: Source, table: str) -> pa.Table:
        if self.empty or src.trace is None:
            t = schema.empty(table)
            if table == "graphs":
                t = t.append_column("launch", pa.array([], pa.string()))
            return V.named(table, t)
        t = src.trace.held(table)  # narrow as stored: widened by DuckDB as it scans
        if table == "graphs":  # with the API call that launched each execution
            from tuiperf.model.timeline.graph_launch import with_launch

            t = with_launch(src.trace, t)
        return V.named(table, t)

    def _table(self, src: Source, view: str) -> pa.Table:
        """A plain canonical table or a derived one (steps, budget, findings)."""
        if view in V.PLAIN_VIEWS:
            return schema.empty(view) if self.empty or src.trace is None else src.trace.table(view)
        empty = {"steps": T.STEPS, "budget": T.budget_schema(), "findings": T.FINDINGS}[view]
        if self.empty:
            return empty.empty_table()
        if view == "findings":
            return T.findings_table(src.trace, src.ncu)
        assert src.trace is not None
        return T.steps_table(src.trace) if view == "steps" else T.budget_table(src.trace)

    # -- queries -----------------------------------------------------------------------
    def query(self, sql: str, limit: int | None = None) -> Result:
        """Run one SELECT; at most `limit` rows (None: all), read batch by batch."""
        duckdb = duckdb_module()
        try:
            kinds = [s.type.name for s in self.con.extract_statements(sql)]
            if len(kinds) != 1:
                raise SqlError(f"give one SQL statement, not {len(kinds)}")
            if kinds[0] not in _ALLOWED:
                raise SqlError(f"only SELECT queries run here (read-only), not {kinds[0]}")
            if kinds[0] == "EXPLAIN":
                _explained_is_select(self.con, sql)
            self.ensure(_names(duckdb.get_table_names(sql)))
            reader = self.con.sql(sql).to_arrow_reader(10_000)
            return _read(reader, limit)
        except duckdb.CatalogException as e:
            raise SqlError(self._unknown(one_line(e))) from e
        except duckdb.Error as e:
            raise SqlError(one_line(e)) from e

    def _unknown(self, message: str) -> str:
        """A missing table named with the views there are (DuckDB's guess is a catalog
        table: the views are created when a query names them)."""
        m = re.search(r"Table with name (\S+) does not exist", message)
        if m is None:
            return message
        offered = sorted({v for s in self.sources.values() for v in s.views()})
        where = "" if list(self.sources) == ["main"] else f" in schemas {', '.join(self.sources)}"
        return f"no view {m.group(1)!r}; views{where}: {', '.join(offered)}"

    def describe(self) -> pa.Table:
        """One row per view and column: schema, view, column, type, unit, what the view is."""
        self.ensure_all()
        rows: list[dict[str, str]] = []
        about = {v.name: v.about for v in V.EVENT_VIEWS}
        about |= V.PLAIN_VIEWS | V.DERIVED_VIEWS | V.NCU_VIEWS
        for sch, src in self.sources.items():
            for view in src.views():
                desc = self.con.sql(f"DESCRIBE {V.quote(sch)}.{V.quote(view)}").fetchall()
                rows += [
                    {"schema": sch, "view": view, "column": c, "type": t, "unit": V.unit(c),
                     "about": about[view]} for c, t, *_ in desc
                ]  # fmt: skip
        return pa.Table.from_pylist(rows)


def reserved(name: str, con: Any | None = None) -> bool:
    """`name` cannot be a report's schema: one of DuckDB's own (TAKEN), or a keyword that
    does not parse unquoted before a view (`order.kernels`, `select.kernels`)."""
    if name.lower() in TAKEN:
        return True
    duckdb = duckdb_module()
    try:
        (con or connect()).extract_statements(f"SELECT * FROM {name}.kernels")
    except duckdb.Error:
        return True
    return False


def _explained_is_select(con: Any, sql: str) -> None:
    """EXPLAIN ANALYZE runs the statement it explains: that statement must be a SELECT.
    It is the longest tail of the query, from a token after EXPLAIN on, that parses alone
    (`EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1` -> `CREATE TABLE t AS SELECT 1`)."""
    duckdb = duckdb_module()
    text = con.extract_statements(sql)[0].query
    for offset, _ in duckdb.tokenize(text)[1:]:
        try:
            inner = con.extract_statements(text[offset:])
        except duckdb.Error:
            continue
        kind = inner[0].type.name if len(inner) == 1 else "several statements"
        if kind == "SELECT":
            return
        raise SqlError(f"EXPLAIN runs only over a SELECT here (read-only), not {kind}")
    raise SqlError("EXPLAIN: the explained statement is not a SELECT")


def _names(found: set[str]) -> set[str]:
    """View names from DuckDB's list of referenced tables (`r1.kernels AS k` -> kernels)."""
    return {re.split(r"\s+AS\s+", n, flags=re.IGNORECASE)[0].split(".")[-1].strip('"').lower()
            for n in found}  # fmt: skip


def _read(reader: Any, limit: int | None) -> Result:
    batches: list[pa.RecordBatch] = []
    n = 0
    truncated = False
    for batch in reader:
        if limit is not None and n + batch.num_rows > limit:
            batches.append(batch.slice(0, limit - n))
            truncated = True
            break
        batches.append(batch)
        n += batch.num_rows
    table = pa.Table.from_batches(batches, schema=reader.schema)
    return Result(unique_names(plain_numbers(table)), truncated)


def unique_names(table: pa.Table) -> pa.Table:
    """Column names made distinct in order (`SELECT 1 AS a, 2 AS a` -> a, a_1), so that
    every format keeps every column (a JSON object keeps one value per key)."""
    names = table.column_names
    if len(set(names)) == len(names):
        return table
    used: set[str] = set()
    out: list[str] = []
    for name in names:
        new, k = name, 0
        while new in used or (new != name and new in names):
            k += 1
            new = f"{name}_{k}"
        used.add(new)
        out.append(new)
    return table.rename_columns(out)


def _plain_type(t: pa.DataType, nested: bool) -> bool:
    """A type the CSV writer (or, with `nested`, JSON) writes as it is."""
    if nested and (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t)
                   or pa.types.is_struct(t) or pa.types.is_fixed_size_list(t)):  # fmt: skip
        return all(_plain_type(t.field(i).type, True) for i in range(t.num_fields))
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
            or pa.types.is_boolean(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_timestamp(t)
            or pa.types.is_null(t))  # fmt: skip


def as_text(table: pa.Table, nested: bool = False) -> pa.Table:
    """Columns that CSV (or JSON, `nested`) cannot write as they are (LIST, MAP, STRUCT,
    INTERVAL, BLOB, BIT, UNION) cast to text by DuckDB (`[1, 2]`, `{a=1}`, `1 month`)."""
    odd = [f.name for f in table.schema if not _plain_type(f.type, nested)]
    if not odd:
        return table
    con = connect()
    con.register("_result", table)
    cols = ", ".join(
        f"CAST({V.quote(n)} AS VARCHAR) AS {V.quote(n)}" if n in odd else V.quote(n)
        for n in table.column_names
    )
    out = con.sql(f"SELECT {cols} FROM _result").to_arrow_table()
    return plain_numbers(out)


def plain_numbers(table: pa.Table) -> pa.Table:
    """DuckDB's SUM of BIGINT is a HUGEINT (Arrow decimal128(38, 0)): whole decimals become
    int64 where they fit, others float64, so JSON writes numbers, not strings."""
    for i, f in enumerate(table.schema):
        if not pa.types.is_decimal(f.type):
            continue
        col = table.column(i)
        try:
            new = col.cast(pa.int64()) if f.type.scale == 0 else col.cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            new = col.cast(pa.float64())
        table = table.set_column(i, f.name, new)
    return table
