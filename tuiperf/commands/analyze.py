"""`tuiperf analyze REPORT [NCU_REPORT]`: findings with evidence and the PyTorch fix."""

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
from tuiperf.commands.width import width
from tuiperf.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from tuiperf.analysis.engine import AnalyzeOptions
    from tuiperf.model.ncu.metrics import KernelMetrics
    from tuiperf.model.trace import Trace

FORMATS = ("text", "json", "markdown", "junit")
#: evidence rows per finding in text and markdown when --rows is not given
TEXT_ROWS = 5


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "report_path",
        metavar="REPORT",
        type=Path,
        help="an Nsight Systems export / .nsys-rep, a torch.profiler trace, or an "
        "Nsight Compute report",
    )
    p.add_argument(
        "ncu_path",
        metavar="NCU_REPORT",
        type=Path,
        nargs="?",
        help="an Nsight Compute report of the same program: its kernels' estimated "
        "speedups are weighted by their share of GPU time in REPORT (an nsys report or a "
        "torch.profiler trace; kernels matched by mangled, else demangled, else short name)",
    )
    p.add_argument("-f", "--format", choices=FORMATS, default="text")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    p.add_argument(
        "--fail-on",
        choices=("info", "warning", "error"),
        metavar="SEVERITY",
        help="exit 5 when a finding of this severity or worse exists "
        "(info, warning, error): a CI gate (1 stays a broken report); with --format junit, "
        "the testcases that fail (default there: warning)",
    )
    p.add_argument(
        "--rows",
        type=int,
        default=None,
        metavar="N",
        help="evidence rows per finding: text/markdown show 5 unless N is given; "
        "json has them all unless N is given (`count` stays the full count)",
    )
    p.add_argument(
        "--top",
        type=int,
        default=0,
        metavar="N",
        help="findings shown in text/markdown (default 0 = all)",
    )
    p.add_argument(
        "--max-chars",
        type=int,
        metavar="N",
        help="markdown: at most N characters (a PR comment, an agent's context): the "
        "budget table, then the lowest-ranked findings are left out first, and it says so",
    )
    p.add_argument("--rule", action="append", metavar="ID", help="run only this rule (repeatable)")
    p.add_argument("--gap-ms", type=int, default=500, help="gpu_gaps threshold (default 500)")
    p.add_argument(
        "--util-threshold", type=int, default=50, help="gpu_time_util threshold in %% (default 50)"
    )
    p.add_argument(
        "--util-chunks", type=int, default=30, help="gpu_time_util chunks, 1-1000 (default 30)"
    )
    p.add_argument(
        "--max-events",
        type=int,
        metavar="N",
        help="a report with more events (kernels, copies, API calls, ranges, ...) is "
        "analysed over a sample of its run: whole steps around its middle holding at most "
        "N events (default 10,000,000: about 2.5 GiB); 0: always the whole report",
    )
    p.add_argument("--width", type=width, metavar="COLS", help="text width (default: terminal)")
    p.add_argument("--ascii", action="store_true", help="ASCII severity marks")
    add_cache_args(p)


def _options(args: argparse.Namespace) -> AnalyzeOptions:
    from tuiperf.analysis.engine import AnalyzeOptions, all_rule_ids
    from tuiperf.analysis.rules.nsys import NsysOptions

    if not 1 <= args.util_chunks <= 1000:
        raise UsageError("--util-chunks must be between 1 and 1000")
    if args.rows is not None and args.rows < 0:
        raise UsageError("--rows must be 0 or more")
    if args.max_chars is not None and args.format != "markdown":
        raise UsageError("--max-chars applies to --format markdown")
    if args.max_chars is not None and args.max_chars < 1:
        raise UsageError("--max-chars must be 1 or more")
    if args.max_events is not None and args.max_events < 0:
        raise UsageError("--max-events must be 0 (the whole report) or more")
    only = None
    if args.rule:
        known = set(all_rule_ids())
        bad = [r for r in args.rule if r not in known]
        if bad:
            raise UsageError(f"unknown rule {bad[0]!r}; rules: {', '.join(sorted(known))}")
        only = frozenset(args.rule)
    nsys = NsysOptions(args.gap_ms, args.util_threshold, args.util_chunks)
    opts = AnalyzeOptions(nsys=nsys, only=only)
    if args.max_events is not None:
        opts.max_events = args.max_events
    return opts


def _inputs(args: argparse.Namespace) -> tuple[Trace | None, KernelMetrics | None]:
    from tuiperf.load import detect as det

    opts = open_options(args)
    trace = ncu = None
    first_is_ncu = det.detect(args.report_path) in (det.NCU_REP, det.NCU_CSV)
    if first_is_ncu and args.ncu_path is not None:
        raise UsageError("give the timeline report first, then the Nsight Compute report")
    if not first_is_ncu:
        from tuiperf.load.open import open_trace

        trace = open_trace(args.report_path, opts)
    ncu_path = args.report_path if first_is_ncu else args.ncu_path
    if ncu_path is not None:
        from tuiperf.load.ncu.open import open_ncu

        ncu = open_ncu(ncu_path, opts)
    return trace, ncu


def run(args: argparse.Namespace) -> int:
    export_ahead(args, args.report_path)  # while the analysis is imported
    from tuiperf.analysis.engine import analyze
    from tuiperf.analysis.findings import Severity
    from tuiperf.export import open_output, write_json
    from tuiperf.report.findings import json_result, print_text, write_markdown

    options = _options(args)
    trace, ncu = _inputs(args)
    end_progress(args)
    result = analyze(trace, ncu, options)
    rows = TEXT_ROWS if args.rows is None else args.rows
    with open_output(args.output) as out:
        if args.format == "json":
            write_json(out, json_result(result, rows=args.rows))
        elif args.format == "junit":
            from tuiperf.report.junit import write_junit

            write_junit(out, result, Severity.parse(args.fail_on or "warning"))
        elif args.format == "markdown":
            write_markdown(out, result, rows=rows, top=args.top, max_chars=args.max_chars)
        else:
            print_text(
                out, result, rows=rows, top=args.top, width=args.width, ascii_only=args.ascii
            )
    for c in result.checks:
        if c.status == "failed":
            print(f"tuiperf: note: rule {c.rule} failed: {c.note}", file=sys.stderr)
    if args.fail_on:
        worst = result.worst()
        if worst is not None and worst >= Severity.parse(args.fail_on):
            return int(ExitCode.FINDINGS)
    return 0


COMMAND = Command(
    name="analyze",
    help="where each training step's time goes, and the PyTorch change to make first",
    description="First the step budget: each steady-state training step's wall time split\n"
    "into GPU busy (compute, communication, copies) and GPU idle by cause (data wait, host\n"
    "sync, CPU-bound issue, other); steps come from NVTX `step N` ranges, Kineto's\n"
    "ProfilerStep#N, or the repeating GPU kernel pattern. Then the rules: the `nsys analyze`\n"
    "rules (same rows), PyTorch training-loop rules (pageable copies, data-loader starvation,\n"
    "host syncs, CPU-, GPU- and copy-bound steps, channels_last, tensor cores, optimizer,\n"
    "allocator) and, with an Nsight Compute report, per-kernel rules. Findings are ranked by\n"
    "the share of steady-state step time each can remove (taken from the budget part it\n"
    "explains, shared where two explain the same time); without steps, by estimated saving\n"
    "as % of the profiled span (the trace's time range, as `tuiperf info` prints it).\n\n"
    "json: {budget, findings, saving_basis, ...}. A finding's `kernel` is set on every\n"
    "kernel-scoped finding: the kernel's name, or with several kernels the one taking the\n"
    'most GPU time (names hold ", " in their template arguments, so they are never joined);\n'
    "`kernels` lists them all.\n\n"
    "examples:\n"
    "  tuiperf analyze run.sqlite\n"
    "  tuiperf analyze run.nsys-rep kernels.ncu-rep --format markdown -o findings.md\n"
    "  tuiperf analyze trace.json.gz --format json --fail-on warning\n\n"
    "Exit codes: 0, or 5 with --fail-on SEVERITY when a finding that severe or worse exists;\n"
    "1 a bad report, 2 usage.",
    prepare=prepare,
    run=run,
)
