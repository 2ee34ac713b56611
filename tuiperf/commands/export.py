"""`tuiperf export REPORT --table KIND`: the events table (or its per-name summary) as a file.

The same query code as the TUI's events table, and the same writer (`tuiperf.export`) as
its `e` key: raw units in the columns (`start_ns`, `duration_ns`, `bytes`), a header row,
UTF-8, `\\n`, no locale; written atomically; zero matching rows give a header-only file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tuiperf.commands.base import (
    Command,
    add_cache_args,
    end_progress,
    export_ahead,
    open_options,
)
from tuiperf.errors import UsageError
from tuiperf.export import write_file
from tuiperf.model.kinds import KINDS

if TYPE_CHECKING:  # the parser is built for every command: keep pyarrow off that path
    import pyarrow as pa

    from tuiperf.model import columns as cols
    from tuiperf.model.timeline.query import Query
    from tuiperf.model.trace import Trace

FORMATS = ("csv", "tsv", "json", "parquet", "perfetto")


def select_columns(table: pa.Table, wanted: list[str] | None) -> pa.Table:
    if not wanted:
        return table
    unknown = [c for c in wanted if c not in table.column_names]
    if unknown:
        raise UsageError(
            f"unknown column {unknown[0]!r}; choose from: {', '.join(table.column_names)}"
        )
    return table.select(wanted)


# -- the command -----------------------------------------------------------------------


def parse_sort(text: str | None) -> tuple[str | None, bool]:
    """`duration_ns:desc` -> ('duration_ns', True); `name` or `name:asc` -> ascending."""
    if not text:
        return None, False
    col, _, direction = text.partition(":")
    direction = direction.strip().lower()
    if direction not in ("", "asc", "desc"):
        raise UsageError(f"--sort {text!r}: the direction is asc or desc")
    return col.strip(), direction == "desc"


def parse_columns(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    names = [c.strip() for v in values for c in v.split(",") if c.strip()]
    return names or None


def build_query(args: argparse.Namespace) -> Query:
    from tuiperf.model.timeline.query import Query

    sort, desc = parse_sort(args.sort)
    window = None
    if args.start is not None or args.end is not None:
        lo = args.start if args.start is not None else -(2**63)
        hi = args.end if args.end is not None else 2**63 - 1
        if hi <= lo:
            raise UsageError("--end must be after --start")
        window = (lo, hi)
    if args.min_duration is not None and args.min_duration < 0:
        raise UsageError("--min-duration must be >= 0")
    q = Query(kind=args.table, text=args.filter or "", regex=args.regex,
              min_duration=args.min_duration or None, window=window)  # fmt: skip
    if sort and not args.summary:
        q = q.with_(sort=sort, descending=desc)
    return q


def export_table(args: argparse.Namespace, trace: Trace) -> pa.Table:
    """The rows (or the per-name summary) the arguments ask for, with raw values."""
    from tuiperf.model import columns as cols
    from tuiperf.model.timeline.query import Events

    query = build_query(args)
    table = Events(trace).table(args.table)
    view = table.run(query)
    wanted = parse_columns(args.columns)
    if args.summary:
        summary = table.summary(view)
        sort, desc = parse_sort(args.sort)
        specs = cols.summary_columns(args.table)
        if sort:
            summary = summary.sorted(_summary_key(specs, sort), desc)
        out = summary.to_arrow(specs)
        if args.limit is not None:
            out = out.slice(0, args.limit)
    else:
        out = view.to_arrow(cols.columns(args.table), limit=args.limit)
    return select_columns(out, wanted)


def _summary_key(specs: tuple[cols.SummaryColumn, ...], name: str) -> str:
    for c in specs:
        if name in (c.key, c.export):
            return c.key
    raise UsageError(
        f"the summary has no column {name!r}; choose from: {', '.join(c.export for c in specs)}"
    )


def _ns(text: str) -> int:
    from tuiperf.model.timeline.query import QueryError, parse_duration

    try:
        value = parse_duration(text)
    except QueryError as e:
        raise argparse.ArgumentTypeError(str(e)) from e
    return 0 if value is None else value


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument("report_path", metavar="REPORT", type=Path, help="the report to read")
    p.add_argument(
        "-t",
        "--table",
        "--view",
        dest="table",
        choices=KINDS,
        default="kernels",
        help="which events (default: kernels)",
    )
    f = p.add_argument_group("filter (as in the TUI's events table)")
    f.add_argument(
        "--filter",
        metavar="TEXT",
        help="keep names containing TEXT (case-insensitive); a leading ! inverts",
    )
    f.add_argument("--regex", action="store_true", help="TEXT is a regular expression")
    f.add_argument(
        "--min-duration",
        type=_ns,
        metavar="NS",
        help="keep events lasting >= NS (or with a unit: 10us, 1.5ms)",
    )
    f.add_argument("--start", type=int, metavar="NS", help="keep events ending after NS")
    f.add_argument("--end", type=int, metavar="NS", help="keep events starting before NS")
    o = p.add_argument_group("output")
    o.add_argument(
        "--sort",
        metavar="COL[:desc]",
        help="sort by a column (start_ns, duration_ns, name, ...; default: start)",
    )
    o.add_argument(
        "--summary",
        action="store_true",
        help="one row per name with total, instances, avg, median, min, max, stddev "
        "(the numbers of `tuiperf summary`) over the filtered events",
    )
    o.add_argument(
        "--columns", action="append", metavar="A,B,...", help="only these columns, in this order"
    )
    o.add_argument("--limit", type=int, metavar="N", help="at most N rows")
    o.add_argument("-f", "--format", choices=FORMATS, default="csv", help="default csv")
    o.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (default stdout)")
    o.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    add_cache_args(p)


def run(args: argparse.Namespace) -> int:
    from tuiperf.load.open import open_trace

    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be >= 0")
    if args.format == "parquet" and (args.output is None or str(args.output) == "-"):
        raise UsageError("parquet is binary: pass -o FILE")
    if args.format == "perfetto":
        return run_perfetto(args)
    build_query(args)  # bad arguments fail before the report is read
    export_ahead(args, args.report_path)
    trace = open_trace(args.report_path, open_options(args))
    end_progress(args)
    table = export_table(args, trace)
    n = write_file(args.output, table, args.format, overwrite=args.force)
    if args.output is not None and str(args.output) != "-" and not args.quiet:
        print(f"wrote {n:,} rows to {args.output}", file=sys.stderr)
    return 0


#: the events-table options a Perfetto trace (every lane, every event) does not take
_TABLE_ONLY = ("filter", "regex", "min_duration", "start", "end", "sort", "summary", "columns",
               "limit")  # fmt: skip


def run_perfetto(args: argparse.Namespace) -> int:
    """`--format perfetto -o FILE`: the whole report as a Chrome JSON trace (tuiperf.perfetto),
    written batch by batch into a temporary file renamed into place at the end."""
    from tuiperf.errors import TuiperfError
    from tuiperf.export import open_output
    from tuiperf.load.open import open_trace
    from tuiperf.perfetto import write_trace

    if args.output is None or str(args.output) == "-":
        raise UsageError("--format perfetto writes a trace file: pass -o FILE (e.g. run.json)")
    given = [f"--{k.replace('_', '-')}" for k in _TABLE_ONLY if getattr(args, k) not in
             (None, False)]  # fmt: skip
    if given:
        raise UsageError(f"--format perfetto writes every lane and event; {given[0]} is for "
                         "the events table (csv, tsv, json, parquet)")  # fmt: skip
    export_ahead(args, args.report_path)
    trace = open_trace(args.report_path, open_options(args))
    end_progress(args)
    try:
        with open_output(args.output, overwrite=args.force) as out:
            counts = write_trace(out, trace)
    except OSError as e:
        raise TuiperfError(f"{args.output}: cannot write ({e.strerror or e})") from e
    if not args.quiet:
        n = sum(v for k, v in counts.items()
                if not k.startswith(("flow", "memory", "budget", "dropped")))  # fmt: skip
        print(f"wrote {n:,} events and {counts['flow_start']:,} launch flows to {args.output} "
              "(open it in https://ui.perfetto.dev)", file=sys.stderr)  # fmt: skip
        if counts.get("dropped_no_process"):
            print(f"tuiperf: note: {counts['dropped_no_process']:,} rows without a process or "
                  "thread left out", file=sys.stderr)  # fmt: skip
    return 0


COMMAND = Command(
    name="export",
    help="the events table as CSV/TSV/JSON/Parquet, filtered and sorted; or the whole "
    "report as a Perfetto trace",
    description="Write one events table (kernels, memcpy, memset, graphs, api, nvtx, osrt) with\n"
    "raw units in the columns (start_ns, end_ns, duration_ns, bytes, ...), filtered and sorted\n"
    "as in the TUI. Zero matching rows give a header-only file; an existing FILE is kept\n"
    "unless --force.\n\n"
    "examples:\n"
    "  tuiperf export run.sqlite --table kernels --filter gemm --sort duration_ns:desc -o k.csv\n"
    "  tuiperf export run.sqlite --table api --summary --sort instances:desc\n"
    "  tuiperf export run.sqlite --table memcpy --min-duration 10000 --columns start_ns,bytes\n"
    "  tuiperf export run.nsys-rep --format perfetto -o run.json   (open in ui.perfetto.dev:\n"
    "      threads, GPU streams, NVTX, launch flows, memory and step-budget counters)",
    prepare=prepare,
    run=run,
)
