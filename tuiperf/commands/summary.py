"""`tuiperf summary REPORT --report NAME`: the `nsys stats` reports, exactly."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tuiperf.commands.base import Command, add_cache_args, end_progress, open_options
from tuiperf.errors import UsageError

_NAMES = (
    "cuda_gpu_kern_sum cuda_api_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum "
    "nvtx_sum osrt_sum cuda_gpu_trace"
)


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument("report_path", metavar="REPORT", type=Path, help="the report to read")
    p.add_argument(
        "-r",
        "--report",
        default="cuda_gpu_kern_sum",
        metavar="NAME",
        help=f"one of: {_NAMES} (aliases: kern, api, mem, memsize, nvtx, osrt, "
        "trace, ops); default cuda_gpu_kern_sum",
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
    p.add_argument("--width", type=int, metavar="COLS", help="table width (default: terminal)")
    add_cache_args(p)


def run(args: argparse.Namespace) -> int:
    from tuiperf.load.open import open_trace
    from tuiperf.model.summaries import compute_cached, report_is_empty, resolve

    name = resolve(args.report)
    if name is None:
        raise UsageError(f"unknown report {args.report!r}; choose one of: {_NAMES}")
    trace = open_trace(args.report_path, open_options(args))
    end_progress(args)
    table = compute_cached(trace, name)
    from tuiperf.export import open_output, write_csv, write_json

    with open_output(args.output) as out:
        if args.format == "csv":
            if report_is_empty(trace, name):
                return 0  # nsys stats writes a 0-byte file when the table is missing
            from tuiperf.model.cells import csv_rows

            header, rows = csv_rows(table)
            write_csv(out, header, rows)
        elif args.format == "json":
            write_json(
                out,
                {"report": name, "source": str(args.report_path), "rows": table.data.to_pylist()},
            )
        else:
            from tuiperf.report import print_stats

            print_stats(out, table, top=args.top, width=args.width, title=_title(trace, name))
    if args.format == "table" and args.top and table.num_rows > args.top:
        print(
            f"note: showing {args.top} of {table.num_rows:,} rows; pass --top 0 for all",
            file=sys.stderr,
        )
    return 0


def _title(trace: object, name: str) -> str:
    src = Path(getattr(getattr(trace, "meta", None), "source", "") or "").name
    return f"{name} · {src}"


COMMAND = Command(
    name="summary",
    help="per-name statistics, the same numbers as `nsys stats`",
    description="Print one of the `nsys stats` reports. `--format csv` is byte-for-byte what\n"
    "`nsys stats --format csv --report NAME` prints for the same report.\n\n"
    "example:\n  tuiperf summary run.sqlite --report nvtx_sum --csv -o nvtx.csv",
    prepare=prepare,
    run=run,
)
