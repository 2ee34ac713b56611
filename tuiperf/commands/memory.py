"""`tuiperf memory REPORT [OTHER]`: GPU memory, its peak, what holds it, why it ran out."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from tuiperf.commands.base import Command, add_cache_args, end_progress, open_options
from tuiperf.errors import UsageError

if TYPE_CHECKING:
    from tuiperf.analysis.findings import Finding
    from tuiperf.model.trace import Trace

FORMATS = ("table", "csv", "json")
#: the timeline rule that finds cudaMalloc/cudaFree inside steady steps
CHURN = "alloc_churn"


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "report_path",
        metavar="REPORT",
        type=Path,
        help="a PyTorch allocator snapshot (_dump_snapshot pickle), a torch.profiler trace "
        "recorded with profile_memory=True, or an nsys report recorded with "
        "--cuda-memory-usage=true",
    )
    p.add_argument(
        "other_path",
        metavar="OTHER",
        type=Path,
        nargs="?",
        help="optional: a snapshot and a timeline report of the same run, either order "
        "(the snapshot is reported; the timeline adds its CUDA calls, and a torch.profiler "
        "trace puts the snapshot on its clock, so its steps apply)",
    )
    p.add_argument(
        "--at",
        default="peak",
        metavar="peak|TIME",
        help="the moment reported: the peak (default) or a time from the report's start "
        "(2.5s, 1500ms, 20us or ns)",
    )
    p.add_argument("-f", "--format", choices=FORMATS, default="table")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    p.add_argument("--ascii", action="store_true", help="ASCII marks only")
    add_cache_args(p)


def _at(text: str) -> int | None:
    from tuiperf.model.timeline.query import QueryError, parse_duration

    if text.strip().lower() == "peak":
        return None
    try:
        t = parse_duration(text)
    except QueryError as e:
        raise UsageError(f"--at: {e}") from None
    if t is None:
        raise UsageError("--at: give `peak` or a time such as 2.5s")
    return t


def _with_churn(findings: list[Finding], trace: Trace) -> list[Finding]:
    """The memory findings and the timeline's cudaMalloc/cudaFree churn, worst first."""
    from tuiperf.analysis.engine import AnalyzeOptions, analyze

    churn = analyze(trace, options=AnalyzeOptions(only=frozenset({CHURN}))).findings
    return sorted([*findings, *churn], key=lambda f: -int(f.severity))


def run(args: argparse.Namespace) -> int:
    from tuiperf.analysis.gpumem.run import memory_report
    from tuiperf.export import open_output, write_csv, write_json
    from tuiperf.load.gpumem.open import open_memory
    from tuiperf.report.gpumem import CSV_HEADER, csv_rows, json_report, write_text

    at = _at(args.at)
    inputs = open_memory(args.report_path, args.other_path, open_options(args))
    end_progress(args)
    rep = memory_report(inputs.memory, inputs.trace, at, inputs.timeline_memory)
    if inputs.trace is not None:
        rep.findings = _with_churn(rep.findings, inputs.trace)
    with open_output(args.output) as out:
        if args.format == "json":
            write_json(out, json_report(rep))
        elif args.format == "csv":
            write_csv(out, CSV_HEADER, csv_rows(rep))
        else:
            write_text(out, rep, ascii_only=args.ascii)
    return 0


COMMAND = Command(
    name="memory",
    help="GPU memory: peak allocated/reserved, what is live at the peak by source line, "
    "fragmentation, per-step memory, out-of-memory details",
    description="GPU memory from a PyTorch allocator snapshot\n"
    "(torch.cuda.memory._record_memory_history() + _dump_snapshot), torch.profiler's\n"
    "[memory] events (profile_memory=True) or nsys --cuda-memory-usage=true: peak allocated\n"
    "and reserved and when; what is live at the peak (or --at TIME) by the first user frame\n"
    "of its stack (snapshots); fragmentation (reserved - allocated, largest free block);\n"
    "memory at each step's start and its trend; for an out-of-memory, the request, what\n"
    "was free and what held the memory; and the memory findings.\n\n"
    "json: {peak_allocated_bytes, peak_reserved_bytes, peak_ns, top_sites [{file, line,\n"
    "function, bytes, count}], categories, oom, findings, steps, devices, ...}; csv: the\n"
    "live-at-peak lines of every device. docs/memory.md has the details.\n\n"
    "examples:\n"
    "  tuiperf memory snap.pickle\n"
    "  tuiperf memory snap.pickle trace.json.gz --format json\n"
    "  tuiperf memory trace.json.gz --at 2.5s\n\n"
    "Exit codes: 0; 1 a bad report (a damaged or foreign pickle, no memory events); 2 usage.",
    prepare=prepare,
    run=run,
)
