"""`tuiperf summary REPORT --report NAME`: the `nsys stats` reports, exactly."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tuiperf.commands.base import (
    Command,
    add_cache_args,
    add_second_report,
    end_progress,
    open_options,
    timeline_and_ncu,
)
from tuiperf.errors import UsageError

_NAMES = (
    "cuda_gpu_kern_sum cuda_api_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum "
    "nvtx_sum osrt_sum cuda_gpu_trace"
)


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
    if args.top < 0:
        raise UsageError(f"--top {args.top}: give a number of rows, or 0 for all")
    if args.width is not None and args.width < 40:
        raise UsageError(f"--width {args.width}: tables need at least 40 columns")
    path, ncu = timeline_and_ncu(args.report_path, args.second_path)
    if path is None:
        raise UsageError(f"{args.report_path}: an Nsight Compute report; use `tuiperf ncu`")
    trace = open_trace(path, open_options(args))
    table = compute_cached(trace, name)
    if ncu is not None and args.format != "csv":  # the CSV stays exactly nsys stats'
        table = _with_ncu_ids(table, trace, ncu, args)
    end_progress(args)
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


def _with_ncu_ids(table, trace, ncu: Path, args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """cuda_gpu_kern_sum with a column of the ncu IDs that describe each kernel name."""
    from dataclasses import replace

    import pyarrow as pa

    from tuiperf.load.ncu_open import open_ncu
    from tuiperf.model.ncu_link import build_link
    from tuiperf.model.stats import Column

    if table.report != "cuda_gpu_kern_sum" or "name" not in table.data.column_names:
        print(f"note: ncu IDs are added to cuda_gpu_kern_sum only, not {table.report}",
              file=sys.stderr)  # fmt: skip
        return table
    link = build_link(trace, open_ncu(ncu, open_options(args)))
    ids = [", ".join(map(str, link.by_name.get(n, ()))) for n in table.data["name"].to_pylist()]
    data = table.data.append_column("ncu_ids", pa.array(ids, pa.string()))
    columns = [*table.columns[:-1], Column("ncu IDs", "ncu_ids", "str"), table.columns[-1]]
    return replace(table, columns=columns, data=data)


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
