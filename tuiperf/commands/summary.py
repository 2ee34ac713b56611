"""`tuiperf summary REPORT --report NAME`: the `nsys stats` reports, exactly."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tuiperf import settings
from tuiperf.commands.base import (
    Command,
    add_cache_args,
    add_second_report,
    end_progress,
    export_ahead,
    open_options,
    timeline_and_ncu,
)
from tuiperf.commands.width import width
from tuiperf.errors import UsageError
from tuiperf.summaries.names import GRAPHLESS_REPORTS, RANGE_NAMES, REPORT_NAMES, resolve

if TYPE_CHECKING:
    from tuiperf.model.trace import Trace
    from tuiperf.summaries.rows import ReportRows, StoredReport
    from tuiperf.summaries.stats import StatsTable

#: tuiperf's own reports, beside the `nsys stats` ones
_OWN = ("op_sum", "step_budget", "by_line", "cpu_samples", "gpu_metrics")
_NAMES = " ".join(n for n in REPORT_NAMES if n not in _OWN)


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument("report_path", metavar="REPORT", type=Path, help="the report to read")
    add_second_report(
        p, "an Nsight Compute report: cuda_gpu_kern_sum (table, json) gains its ncu IDs"
    )
    p.add_argument(
        "-r",
        "--report",
        default="cuda_gpu_kern_sum",
        metavar="NAME",
        help=f"one of: {_NAMES} (aliases: kern, api, mem, memsize, nvtx, osrt, "
        "trace, ops); tuiperf's own: step_budget (alias budget: each training step's time "
        "by part: GPU busy by kind, GPU idle by cause), by_line (alias lines: GPU time and "
        "syncs by source line, from Python stacks), cpu_samples (alias samples: CPU samples "
        "by function, self and total, per thread and overall), gpu_metrics (alias metrics: "
        "each GPU metric's mean over the report and over the steady steps), range "
        "(everything inside a time window, see below); default cuda_gpu_kern_sum",
    )
    p.add_argument("-f", "--format", choices=("table", "csv", "json"), default="table")
    p.add_argument(
        "--csv", dest="format", action="store_const", const="csv", help="same as --format csv"
    )
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    p.add_argument(
        "--top",
        type=int,
        default=20,
        metavar="N",
        help="rows in the table format (0 = all; default 20)",
    )
    p.add_argument("--width", type=width, metavar="COLS", help="table width (default: terminal)")
    w = p.add_argument_group(
        "time window (range statistics)",
        "the report over [START, END) of the report's clock (ns, or with a unit: 1.5s, 20ms): "
        "kern, api, mem, memsize, nvtx, osrt, trace count the events overlapping it; "
        "--report range gives everything inside it (GPU busy and the step budget's parts "
        "per device, kernel, API, memory, NVTX and OS runtime sums) in one table",
    )
    w.add_argument("--start", type=_ns, metavar="T", help="window start (default: report start)")
    w.add_argument("--end", type=_ns, metavar="T", help="window end (default: report end)")
    w.add_argument(
        "--nvtx",
        metavar="TEXT",
        help="the window of the first NVTX range named TEXT (a step: 'step 5'); "
        "TEXT#N: its N-th (from 1)",
    )
    w.add_argument(
        "--clip",
        action="store_true",
        help="count only the part of each event inside the window (default: events "
        "overlapping an edge count whole)",
    )
    add_cache_args(p)


def _ns(text: str) -> int:
    from tuiperf.model.timeline.query import QueryError, parse_duration

    try:
        value = parse_duration(text)
    except QueryError as e:
        raise argparse.ArgumentTypeError(str(e)) from e
    if value is None:
        raise argparse.ArgumentTypeError("give a time (ns, or 1.5s, 20ms)")
    return value


def run(args: argparse.Namespace) -> int:
    if args.report.strip().lower() in RANGE_NAMES or _windowed(args):
        from tuiperf.commands.summary_window import run_window

        return run_window(args)
    name = resolve(args.report)
    if name is None:
        raise UsageError(f"unknown report {args.report!r}; choose one of: {_NAMES}")
    if args.top < 0:
        raise UsageError(f"--top {args.top}: give a number of rows, or 0 for all")
    path, ncu = timeline_and_ncu(args.report_path, args.second_path)
    if path is None:
        raise UsageError(f"{args.report_path}: an Nsight Compute report; use `tuiperf ncu`")
    stored = _stored(args, path, name) if ncu is None else None
    table: ReportRows
    note = ""
    if stored is not None:
        table, empty, source = stored, stored.empty, stored.source
    else:
        export_ahead(args, path)  # a .nsys-rep: nsys works while the summaries are imported
        if args.export_ahead is not None:
            _import_writers(args)  # and the writers
        table, empty, source, note = _computed(args, path, ncu, name)
    end_progress(args)
    _write(args, name, table, empty, source, note)
    if args.format == "table" and args.top and table.num_rows > args.top:
        print(
            f"note: showing {args.top} of {table.num_rows:,} rows; pass --top 0 for all",
            file=sys.stderr,
        )
    return 0


def _windowed(args: argparse.Namespace) -> bool:
    return args.start is not None or args.end is not None or args.clip or bool(args.nvtx)


def _stored(args: argparse.Namespace, path: Path, name: str) -> StoredReport | None:
    """The report as an earlier run computed it, from the cache entry (no table loaded)."""
    if args.no_cache or settings.no_cache():
        return None
    from tuiperf.summaries.stored import entry_of, read, table_rows

    entry = entry_of(path, args.cache_dir)
    if entry is None:
        return None
    if args.format == "table" and name in GRAPHLESS_REPORTS and table_rows(entry, "graphs"):
        return None  # its note on CUDA graphs needs the graphs table
    return read(entry, name)


def _computed(
    args: argparse.Namespace, path: Path, ncu: Path | None, name: str
) -> tuple[ReportRows, bool, str, str]:
    """(the report, whether its tables are empty, the source, a note to print under its
    table) from the report's tables."""
    from tuiperf.analysis.budget import metrics_report
    from tuiperf.analysis.budget import rows as budget_report
    from tuiperf.load.open import open_trace
    from tuiperf.summaries.reports import compute_cached, graph_note, report_is_empty

    # the step budget is analysis (a floor above the summaries): offered from here
    budget_report.offer()
    metrics_report.offer()
    trace = open_trace(path, open_options(args))
    table = compute_cached(trace, name)
    if ncu is not None and args.format != "csv":  # the CSV stays exactly nsys stats'
        table = _with_ncu_ids(table, trace, ncu, args)
    note = graph_note(trace, name) if args.format == "table" else ""
    return table, report_is_empty(trace, name), trace.meta.source, note


def _import_writers(args: argparse.Namespace) -> None:
    """What `_write` imports (Rich for a table: ~25 ms), while nsys works, not after."""
    import tuiperf.export

    if args.format == "table":
        import tuiperf.report.tables  # noqa: F401


def _write(
    args: argparse.Namespace, name: str, table: ReportRows, empty: bool, source: str, note: str
) -> None:
    from tuiperf.export import open_output, write_csv, write_json

    with open_output(args.output) as out:
        if args.format == "csv":
            if empty:
                return  # nsys stats writes a 0-byte file when the table is missing
            write_csv(out, *_csv_rows(table))
        elif args.format == "json":
            src = str(args.report_path)
            write_json(out, {"report": name, "source": src, "rows": table.head()})
        else:
            from tuiperf.report.tables import print_stats

            title = f"{name} · {Path(source or '').name}"
            if name == "step_budget" and table.num_rows:
                from tuiperf.analysis.budget.rows import for_display

                table = for_display(table)
            print_stats(out, table, top=args.top, width=args.width, title=title)
            if note:
                out.write(note + "\n")


def _csv_rows(table: ReportRows) -> tuple[list[str], list[list[str]]]:
    from tuiperf.summaries.rows import StoredReport, csv_rows

    if isinstance(table, StoredReport):
        return csv_rows(table)
    from tuiperf.summaries.cells import csv_rows as arrow_csv_rows  # vectorized, for long reports

    return arrow_csv_rows(table)  # type: ignore[arg-type]


def _with_ncu_ids(
    table: StatsTable, trace: Trace, ncu: Path, args: argparse.Namespace
) -> StatsTable:
    """cuda_gpu_kern_sum with a column of the ncu IDs that describe each kernel name."""
    from dataclasses import replace

    import pyarrow as pa

    from tuiperf.load.ncu.open import open_ncu
    from tuiperf.model.ncu.link import build_link
    from tuiperf.summaries.stats import Column

    if table.report != "cuda_gpu_kern_sum" or "name" not in table.data.column_names:
        print(f"note: ncu IDs are added to cuda_gpu_kern_sum only, not {table.report}",
              file=sys.stderr)  # fmt: skip
        return table
    link = build_link(trace, open_ncu(ncu, open_options(args)))
    ids = [", ".join(map(str, link.by_name.get(n, ()))) for n in table.data["name"].to_pylist()]
    data = table.data.append_column("ncu_ids", pa.array(ids, pa.string()))
    columns = [*table.columns[:-1], Column("ncu IDs", "ncu_ids", "str"), table.columns[-1]]
    return replace(table, columns=columns, data=data)


COMMAND = Command(
    name="summary",
    help="per-name statistics, the same numbers as `nsys stats`",
    description="Print one of the `nsys stats` reports. `--format csv` is byte-for-byte what\n"
    "`nsys stats --format csv --report NAME` prints for the same report.\n\n"
    "example:\n  tuiperf summary run.sqlite --report nvtx_sum --csv -o nvtx.csv",
    prepare=prepare,
    run=run,
)
