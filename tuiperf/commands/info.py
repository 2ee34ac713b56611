"""`tuiperf info REPORT`: what the report holds, where it is cached."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tuiperf.commands.base import Command, add_cache_args, end_progress, open_options


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument("report_path", metavar="REPORT", type=Path)
    p.add_argument("-f", "--format", choices=("table", "json"), default="table")
    p.add_argument("--json", dest="format", action="store_const", const="json")
    add_cache_args(p)


def describe(trace: Any) -> dict[str, Any]:
    """Plain facts about a trace (also used by the TUI header)."""
    from tuiperf.model.describe import describe_trace

    return describe_trace(trace)


def run(args: argparse.Namespace) -> int:
    import sys

    from tuiperf.export import write_json
    from tuiperf.load import detect as det
    from tuiperf.load.open import open_trace

    if det.detect(args.report_path) in (det.NCU_REP, det.NCU_CSV):
        from tuiperf.load.ncu_open import describe_ncu

        info = describe_ncu(args.report_path, open_options(args))
    else:
        info = describe(open_trace(args.report_path, open_options(args)))
    end_progress(args)

    if args.format == "json":
        write_json(sys.stdout, info)
        return 0
    from tuiperf.report import make_console, print_info

    print_info(make_console(sys.stdout), info)
    return 0


COMMAND = Command(
    name="info",
    help="format, devices, processes, time range, row counts, cache location",
    description="Describe a report.\n\nexample:\n  tuiperf info run.nsys-rep --json",
    prepare=prepare,
    run=run,
)
