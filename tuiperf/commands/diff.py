"""`tuiperf diff BEFORE AFTER`: did the change make the steady step faster, and why."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tuiperf.commands.base import Command, add_cache_args, end_progress, open_options
from tuiperf.commands.width import width
from tuiperf.errors import ExitCode, UsageError

FORMATS = ("text", "csv", "json", "markdown")


def prepare(p: argparse.ArgumentParser) -> None:
    for dest, what in (("before_path", "BEFORE"), ("after_path", "AFTER")):
        p.add_argument(
            dest,
            metavar=what,
            type=Path,
            help=f"the {what.lower()} timeline report (Nsight Systems export / .nsys-rep, "
            "or a torch.profiler trace)",
        )
    p.add_argument("-f", "--format", choices=FORMATS, default="text")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    p.add_argument(
        "--fail-if-slower",
        type=float,
        metavar="PCT",
        help=f"exit {int(ExitCode.SLOWER)} when AFTER's median steady step is slower than "
        "BEFORE's beyond the noise and by more than PCT %% (a CI gate)",
    )
    p.add_argument(
        "--rows", type=int, default=10, metavar="N", help="rows per table in text (default 10)"
    )
    p.add_argument(
        "--max-chars",
        type=int,
        metavar="N",
        help="markdown: at most N characters; the lowest sections are left out first",
    )
    p.add_argument("--no-findings", action="store_true", help="skip comparing the findings")
    p.add_argument("--width", type=width, metavar="COLS", help="text width (default: terminal)")
    add_cache_args(p)


def run(args: argparse.Namespace) -> int:
    from tuiperf.analysis.diff.compare import diff_traces, to_json
    from tuiperf.export import open_output, write_csv, write_json
    from tuiperf.load import detect as det
    from tuiperf.load.open import open_trace
    from tuiperf.report.diff import CSV_HEADER, csv_rows, markdown, print_text

    if args.fail_if_slower is not None and args.fail_if_slower < 0:
        raise UsageError("--fail-if-slower must be 0 or more")
    if args.rows < 0:
        raise UsageError("--rows must be 0 or more")
    if args.max_chars is not None and args.format != "markdown":
        raise UsageError("--max-chars applies to --format markdown")
    if args.max_chars is not None and args.max_chars < 1:
        raise UsageError("--max-chars must be 1 or more")
    for p in (args.before_path, args.after_path):
        if p.exists() and det.detect(p) in (det.NCU_REP, det.NCU_CSV):
            raise UsageError(f"{p}: an Nsight Compute report; diff compares two timeline reports")
    opts = open_options(args)
    before = open_trace(args.before_path, opts)
    after = open_trace(args.after_path, opts)
    end_progress(args)
    d = diff_traces(
        before, after, str(args.before_path), str(args.after_path), not args.no_findings
    )
    with open_output(args.output) as out:
        if args.format == "json":
            write_json(out, to_json(d))
        elif args.format == "csv":
            write_csv(out, CSV_HEADER, csv_rows(d))
        elif args.format == "markdown":
            out.write(markdown(d, rows=args.rows, max_chars=args.max_chars))
        else:
            print_text(out, d, width=args.width, rows=args.rows)
    if args.fail_if_slower is None:
        return int(ExitCode.OK)
    if d.change_pct is None:
        print("tuiperf: error: --fail-if-slower: step time cannot be compared (no steady "
              "steps in one report)", file=sys.stderr)  # fmt: skip
        return int(ExitCode.FAILURE)
    return int(ExitCode.SLOWER if d.slower_than(args.fail_if_slower) else ExitCode.OK)


COMMAND = Command(
    name="diff",
    help="compare two timeline reports: faster, slower or the same, and what changed",
    description="The verdict first: AFTER's median steady-state step against BEFORE's,\n"
    "faster / slower / same within noise (the larger of the two reports' median absolute\n"
    "deviation of step time), by how much per step, and the step-budget parts (data wait,\n"
    "host sync, CPU-bound, compute, ...) whose change explains most of it. Then the budget\n"
    "part by part, kernels matched by demangled name (templated names that differ only in\n"
    "their arguments are matched by their base `name<…>`; the rest appear or vanish),\n"
    "memcpy/memset by kind and size, CUDA API calls, and the findings of `analyze` that\n"
    "are gone, new or changed. Per steady step when both reports have steps, else\n"
    "whole-report totals. Different GPUs, step counts or ways of finding steps are named.\n"
    "Exit codes: 0, or 4 with --fail-if-slower PCT when AFTER is slower beyond the noise\n"
    "and by more than PCT %; 1 when step time cannot be compared for that check.",
    prepare=prepare,
    run=run,
)
