"""`tuiperf sql REPORT [REPORT ...] "SELECT ..."`: SQL over the report's tables (DuckDB).

Read-only, in memory, over the cached Arrow tables without a copy; views named and columned
as the CSV export names them (docs/sql.md). Several reports: one schema each.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tuiperf.commands.base import Command, add_cache_args, end_progress, open_options
from tuiperf.commands.width import width
from tuiperf.errors import UsageError

if TYPE_CHECKING:
    import pyarrow as pa

    from tuiperf.sql.session import Source

FORMATS = ("table", "csv", "json", "markdown")
DEFAULT_LIMIT = 1000
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "args",
        metavar="REPORT ... SQL",
        nargs="+",
        help="one or more reports (NAME=PATH names its schema), then one SELECT "
        "(- reads it from stdin); with --schema, reports only",
    )
    p.add_argument("--schema", action="store_true", help="list the views, columns and units")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="default table")
    p.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"at most N rows (default {DEFAULT_LIMIT}; 0: all)",
    )
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (default stdout)")
    p.add_argument("--width", type=width, metavar="COLS", help="table width (default: terminal)")
    add_cache_args(p)
    intermixed(p)


def intermixed(p: argparse.ArgumentParser) -> None:
    """Options may come between the reports and the query (`REPORT --limit 0 "SELECT"`):
    the subparser parses as argparse's parse_known_intermixed_args does."""
    plain = p.parse_known_args

    def parse(args: Any = None, namespace: Any = None) -> Any:
        p.parse_known_args = plain  # type: ignore[method-assign]
        try:
            return p.parse_known_intermixed_args(args, namespace)
        finally:
            p.parse_known_args = parse  # type: ignore[method-assign]

    p.parse_known_args = parse  # type: ignore[method-assign]


def split_args(args: argparse.Namespace) -> tuple[list[str], str | None]:
    """(the report arguments, the SQL) from the positional arguments."""
    if args.schema:
        return list(args.args), None
    if len(args.args) < 2:
        raise UsageError('give a report and a query: tuiperf sql REPORT "SELECT ..."')
    *reports, sql = args.args
    if sql == "-":
        sql = sys.stdin.read()
    if not sql.strip():
        raise UsageError("the query is empty")
    return reports, sql


def schema_names(
    reports: list[str], reserved: Callable[[str], bool] = lambda _: False
) -> list[tuple[str, Path]]:
    """(schema, path) per report: `main` for one; else NAME= or the file's stem, made an
    identifier (`r1-before.sqlite` -> r1_before), `_2` added where two would clash. A name
    DuckDB reserves (`reserved`: temp, memory, order, ...) is refused after NAME=, and a
    stem that is one gets `r_` before it, as one that is no identifier does."""
    named: list[tuple[str, Path]] = []
    for i, text in enumerate(reports):
        name, sep, rest = text.partition("=")
        if sep and _IDENT.match(name) and not Path(text).exists():
            if reserved(name):
                raise UsageError(f"{name}=: DuckDB reserves the name {name!r}; "
                                 "give the report another NAME=")  # fmt: skip
            named.append((name.lower(), Path(rest)))
            continue
        path = Path(text)
        stem = re.sub(r"[^A-Za-z0-9_]", "_", path.name.split(".")[0]).lower() or f"r{i + 1}"
        ok = _IDENT.match(stem) and not reserved(stem)
        named.append((stem if ok else f"r_{stem}", path))
    if len(named) == 1 and not re.match(r"^[A-Za-z_]\w*=", reports[0]):
        return [("main", named[0][1])]
    seen: dict[str, int] = {}
    out = []
    for name, path in named:
        seen[name] = seen.get(name, 0) + 1
        out.append((name if seen[name] == 1 else f"{name}_{seen[name]}", path))
    if len({n for n, _ in out}) != len(out):
        raise UsageError("two reports would share a schema name; name them NAME=PATH")
    return out


def open_source(path: Path, args: argparse.Namespace) -> Source:
    from tuiperf.load import detect as det
    from tuiperf.sql.session import Source

    opts = open_options(args)
    if det.detect(path) in (det.NCU_REP, det.NCU_CSV):
        from tuiperf.load.ncu.open import open_ncu

        return Source(ncu=open_ncu(path, opts))
    from tuiperf.load.open import open_trace

    return Source(trace=open_trace(path, opts))


def write(args: argparse.Namespace, table: pa.Table, schema: bool = False) -> None:
    from tuiperf.export import open_output, write_table
    from tuiperf.report.sql import print_schema, print_table, write_markdown
    from tuiperf.sql.session import as_text

    if args.format in ("csv", "json"):  # LIST, MAP, INTERVAL, BLOB, ...: as text, first
        table = as_text(table, nested=args.format == "json")
    with open_output(args.output) as out:
        if args.format == "table" and schema:
            print_schema(out, table, args.width)
        elif args.format == "table":
            print_table(out, table, args.width)
        elif args.format == "markdown":
            write_markdown(out, table)
        else:
            write_table(out, table, args.format)


def run(args: argparse.Namespace) -> int:
    from tuiperf.sql.session import Session, connect, duckdb_module, reserved

    if args.limit < 0:
        raise UsageError("--limit must be 0 (all rows) or more")
    reports, sql = split_args(args)
    duckdb_module()  # a missing DuckDB says so before any report is read
    con = connect()
    named = schema_names(reports, lambda name: reserved(name, con))
    sources = {name: open_source(path, args) for name, path in named}
    end_progress(args)
    if sql is None:
        write(args, Session(sources, empty=True).describe(), schema=True)
        return 0
    result = Session(sources).query(sql, args.limit or None)
    write(args, result.table)
    if result.truncated:
        print(f"tuiperf: note: showing the first {args.limit:,} rows; pass --limit 0 for all",
              file=sys.stderr)  # fmt: skip
    return 0


COMMAND = Command(
    name="sql",
    help="ask the report anything in SQL (DuckDB, read-only; pip install 'tuiperf[sql]')",
    description="Run one SELECT over the report's tables with DuckDB, in memory and read-only\n"
    "(no file, network or extension access). Views: kernels, copies, memsets, graphs, api,\n"
    "nvtx, osrt (columns as `tuiperf export` names them: start_ns, end_ns, duration_ns, name,\n"
    "device, stream, ...), sync, gpu_memory, devices, processes, threads, streams, and the\n"
    "analysis: steps, budget, findings; an Nsight Compute report gives ncu_kernels and\n"
    "ncu_metrics. Several reports: one schema each (the file's stem, or NAME=PATH).\n"
    "--schema lists every view with its columns, types and units. See docs/sql.md.\n\n"
    "examples:\n"
    '  tuiperf sql run.sqlite "SELECT name, count(*), sum(duration_ns) AS total_ns\n'
    '      FROM kernels GROUP BY name ORDER BY total_ns DESC LIMIT 10"\n'
    "  tuiperf sql run.sqlite --schema\n"
    '  tuiperf sql before=a.sqlite after=b.sqlite "SELECT (SELECT sum(duration_ns) FROM\n'
    '      after.kernels) - (SELECT sum(duration_ns) FROM before.kernels) AS change_ns"\n\n'
    "Exit codes: 0; 1 a bad report; 2 usage or a query DuckDB rejects; 3 DuckDB missing.",
    prepare=prepare,
    run=run,
)
