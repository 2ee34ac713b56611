"""`tuiperf info REPORT`: what the report holds, where it is cached."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tuiperf.commands.base import (
    Command,
    add_cache_args,
    add_second_report,
    end_progress,
    open_options,
    timeline_and_ncu,
)
from tuiperf.errors import UsageError


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument("report_path", metavar="REPORT", type=Path)
    add_second_report(p, "an Nsight Compute report beside a timeline report (or the reverse)")
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

    if args.second_path is not None:
        return _run_pair(args)
    if det.detect(args.report_path) in (det.NCU_REP, det.NCU_CSV):
        from tuiperf.load.ncu.open import describe_ncu

        info = describe_ncu(args.report_path, open_options(args))
    else:
        info = describe(open_trace(args.report_path, open_options(args)))
    end_progress(args)

    if args.format == "json":
        write_json(sys.stdout, info)
        return 0
    from tuiperf.report.tables import make_console, print_info

    print_info(make_console(sys.stdout), info)
    return 0


def _run_pair(args: argparse.Namespace) -> int:
    """A timeline report and an Nsight Compute report: both, and how they link."""
    import sys

    from tuiperf.export import write_json
    from tuiperf.load.ncu.open import describe_metrics, open_ncu
    from tuiperf.load.open import open_trace
    from tuiperf.model.ncu.link_facts import link_facts

    timeline, ncu = timeline_and_ncu(args.report_path, args.second_path)
    if timeline is None or ncu is None:
        raise UsageError("give one timeline report and one Nsight Compute report")
    opts = open_options(args)
    trace, km = open_trace(timeline, opts), open_ncu(ncu, opts)
    facts = link_facts(trace, km)
    end_progress(args)
    info = {"timeline": describe(trace), "ncu": describe_metrics(km), "link": facts.as_json()}
    if args.format == "json":
        write_json(sys.stdout, info)
        return 0
    from rich.text import Text

    from tuiperf.report.tables import make_console, print_info, print_link

    console = make_console(sys.stdout)
    print_info(console, info["timeline"])
    console.print(Text(""))
    print_info(console, info["ncu"])
    console.print(Text(""))
    print_link(console, facts, km)
    return 0


COMMAND = Command(
    name="info",
    help="format, devices, processes, time range, row counts, cache location",
    description="Describe a report.\n\nexample:\n  tuiperf info run.nsys-rep --json",
    prepare=prepare,
    run=run,
)
