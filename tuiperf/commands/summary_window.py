"""`tuiperf summary REPORT --start T --end T [--clip]`: a summary over a time window, and
`--report range`: everything inside it (range statistics, issue 34 item 5)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tuiperf.commands.base import end_progress, export_ahead, open_options, timeline_and_ncu
from tuiperf.errors import UsageError
from tuiperf.summaries.names import RANGE_NAMES, resolve

if TYPE_CHECKING:
    from tuiperf.model.trace import Trace
    from tuiperf.summaries.table import StatsTable
    from tuiperf.summaries.window import Window

RANGE = "range_stats"


def report_name(text: str) -> str:
    """The windowed report `--report` names (range_stats for range), or a usage error."""
    from tuiperf.summaries.window import WINDOW_REPORTS

    if text.strip().lower() in RANGE_NAMES:
        return RANGE
    name = resolve(text)
    if name not in WINDOW_REPORTS:
        names = " ".join(("range", *WINDOW_REPORTS))
        raise UsageError(f"--start/--end/--clip do not apply to {text!r}; choose one of: {names}")
    return name


def run_window(args: argparse.Namespace) -> int:
    name = report_name(args.report)
    if args.top < 0:
        raise UsageError(f"--top {args.top}: give a number of rows, or 0 for all")
    if args.width is not None and args.width < 40:
        raise UsageError(f"--width {args.width}: tables need at least 40 columns")
    if args.nvtx and (args.start is not None or args.end is not None):
        raise UsageError("--nvtx gives the window: leave out --start and --end")
    if args.start is not None and args.end is not None and args.end <= args.start:
        raise UsageError(f"--end {args.end} must be after --start {args.start}")
    path, ncu = timeline_and_ncu(args.report_path, args.second_path)
    if path is None or ncu is not None:
        raise UsageError("a time window needs one Nsight Systems or torch.profiler report")
    from tuiperf.load.open import open_trace

    export_ahead(args, path)
    trace = open_trace(path, open_options(args))
    end_progress(args)
    if args.nvtx:
        w = nvtx_window(trace, args.nvtx, args.clip)
    else:
        w = window_of(trace, args.start, args.end, args.clip)
    _write(args, name, compute(trace, name, w), w, trace.meta.source)
    return 0


def window_of(trace: Trace, start: int | None, end: int | None, clip: bool) -> Window:
    """The window the options ask for; an edge left out is the report's."""
    from tuiperf.summaries.window import Window

    rng = trace.time_range() or (0, 1)
    lo = rng[0] if start is None else start
    hi = rng[1] if end is None else end
    if hi <= lo:
        raise UsageError(
            f"the window [{lo}, {hi}) ns is empty; the report spans {rng[0]}..{rng[1]}"
        )
    return Window(lo, hi, clip)


def nvtx_window(trace: Trace, text: str, clip: bool) -> Window:
    """The window of the first (`TEXT#N`: the N-th, by start) NVTX range named TEXT."""
    import numpy as np

    from tuiperf.summaries.window import Window

    name, _, nth = text.rpartition("#") if "#" in text else (text, "", "1")
    if not nth.isdigit() or int(nth) < 1:
        raise UsageError(f"--nvtx {text!r}: after # comes a number from 1 (step 5#2)")
    nv = trace.table("nvtx", ["start", "end", "text"])
    texts = np.array(nv["text"].cast("string").fill_null("").to_pylist(), dtype=object)
    ends = nv["end"].fill_null(-1).to_numpy()
    hit = np.flatnonzero((texts == name) & (ends > nv["start"].to_numpy()))
    if len(hit) < int(nth):
        raise UsageError(f"--nvtx {text!r}: the report has {len(hit)} NVTX ranges named {name!r}")
    starts = nv["start"].to_numpy()[hit]
    k = hit[np.argsort(starts, kind="stable")[int(nth) - 1]]
    return Window(int(nv["start"][int(k)].as_py()), int(ends[k]), clip)


def compute(trace: Trace, name: str, w: Window) -> StatsTable:
    if name == RANGE:
        from tuiperf.analysis.budget.context import Ctx
        from tuiperf.analysis.budget.window import range_stats

        return range_stats(Ctx(trace), w)
    from tuiperf.summaries.window import window_summaries

    return window_summaries(trace, w, (name,))[name]


def _write(args: argparse.Namespace, name: str, table: StatsTable, w: Window, src: str) -> None:
    from tuiperf.export import open_output, write_csv, write_json
    from tuiperf.summaries.cells import csv_rows

    window = {"start_ns": w.lo, "end_ns": w.hi, "clip": w.clip}
    with open_output(args.output) as out:
        if args.format == "csv":
            header, cells = csv_rows(table)
            if name == RANGE:  # tuiperf's own table: machine names, units in them
                header = [c.key for c in table.columns]
            write_csv(out, header, cells)
        elif args.format == "json":
            rows = table.head()
            write_json(out, {"report": name, "source": str(args.report_path), "window": window,
                             "rows": rows})  # fmt: skip
        else:
            _print(out, args, name, table, w, Path(src or "").name)


def _print(
    out: TextIO, args: argparse.Namespace, name: str, table: StatsTable, w: Window, source: str
) -> None:
    from tuiperf.model import fmt
    from tuiperf.report.tables import print_stats

    head = (f"{fmt.duration(w.span)} window [{w.lo:,}, {w.hi:,}) ns of {source}: events "
            f"{w.counting}")  # fmt: skip
    out.write(head + "\n")
    if name != RANGE:
        print_stats(out, table, top=args.top, width=args.width, title=name)
        return
    import pyarrow.compute as pc

    from tuiperf.summaries.table import StatsTable as Stats

    for section in dict.fromkeys(table.data["section"].to_pylist()):
        part = table.data.filter(pc.equal(table.data["section"], section))
        drop = ("section", "count") if section == "gpu" else ("section", "device")
        cols = [c for c in table.columns if c.key not in drop]
        top = 0 if section == "gpu" else args.top
        data = part.select([c.key for c in cols])
        print_stats(out, Stats(name, cols, data), top=top, width=args.width,
                    title=f"range · {section}")  # fmt: skip
