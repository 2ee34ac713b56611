"""`tuiperf [REPORT]`: the full-screen viewer (Textual is imported only here)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from tuiperf.bundled import sample_path
from tuiperf.commands.base import (
    add_cache_args,
    export_ahead,
    has_terminal,
    open_options,
    timeline_and_ncu,
)
from tuiperf.errors import UsageError

if TYPE_CHECKING:
    from tuiperf.analysis.ids import Target
    from tuiperf.load.open import OpenOptions
    from tuiperf.tui.early import EarlyOpen


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tuiperf", description="Open a report in the TUI.")
    p.add_argument(
        "report_path",
        metavar="REPORT",
        type=Path,
        nargs="?",
        help="report to open (default: the bundled sample)",
    )
    p.add_argument(
        "second_path",
        metavar="OTHER_REPORT",
        type=Path,
        nargs="?",
        help="an Nsight Compute report (.ncu-rep) to link with the nsys REPORT; or a "
        "second timeline report: the diff view compares REPORT (the baseline) with it; or, "
        "after an .ncu-rep, a second one: the baseline its kernels are compared with",
    )
    add_viewer_options(p)
    p.add_argument(
        "--goto",
        metavar="ID",
        help="open at an event (kernels:12), a stretch of time (at:START+DURATION), a "
        "finding (its id in `analyze --format markdown|json`) or, with the .ncu-rep linked, "
        "an Nsight Compute result's launch (ncu_kernels:ID); one timeline only",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    add_cache_args(p)
    return p


def add_viewer_options(
    p: argparse.ArgumentParser | argparse._ArgumentGroup, dest_prefix: str = ""
) -> None:
    """The viewer's own options; `tuiperf --help` lists them too, under other names
    (`dest_prefix`) than the subcommands' options of the same spelling."""
    p.add_argument("--ascii", dest=f"{dest_prefix}ascii", action="store_true",
                   help="ASCII glyphs only")  # fmt: skip
    p.add_argument("--no-mouse", dest=f"{dest_prefix}no_mouse", action="store_true",
                   help="ignore the mouse")  # fmt: skip


def run_open(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    goto = parse_goto(args.goto)
    path = args.report_path or sample_path()
    if args.second_path is None and is_snapshot(path):
        return run_memory_view(path, args, goto is not None)
    if args.second_path is not None and both_timelines(path, args.second_path):
        check_goto_diff(goto, args.goto)
        return run_diff_view(path, args)
    args.ncu_baseline = ncu_baseline(path, args.second_path)
    path, args.ncu_path = split_reports(path, None if args.ncu_baseline else args.second_path)
    check_goto(goto, args.goto, timeline=args.ncu_path != path, ncu=args.ncu_path is not None)
    if not has_terminal():
        raise UsageError(no_terminal_hint(args.report_path))
    export_ahead(args, path)  # a .nsys-rep: nsys works while Textual is imported
    opts = open_options(args)
    if goto is not None:
        from tuiperf.tui.goto import run_app_at

        return run_app_at(path, args, opts, goto)
    early = open_early(path, args, opts)  # a cache entry opens while Textual is imported
    from tuiperf.tui.app import run_app

    return run_app(path, args, opts, early=early)


def open_early(path: Path, args: argparse.Namespace, opts: OpenOptions) -> EarlyOpen | None:
    """The report's cache entry opening in a thread from now (tui/early.py); None where
    the viewer opens something else or an export was started (there is no entry)."""
    if args.ncu_path is not None or args.export_ahead is not None or not opts.use_cache:
        return None
    from tuiperf.tui.early import EarlyOpen

    return EarlyOpen(Path(path), opts)


def parse_goto(text: str | None) -> Target | None:
    """--goto's id, checked before anything is read (a bad one is a usage error)."""
    if text is None:
        return None
    from tuiperf.analysis.ids import parse

    try:
        return parse(text)
    except ValueError as e:
        raise UsageError(f"--goto: {e}") from e


def check_goto_diff(goto: Target | None, text: str | None) -> None:
    """--goto has no one timeline to go to in the diff view of two reports."""
    if goto is not None:
        raise UsageError(
            f"--goto {text}: the diff view of two reports has no one timeline to go to; "
            "open one report with --goto"
        )


def check_goto(goto: Target | None, text: str | None, timeline: bool, ncu: bool) -> None:
    """--goto needs a timeline; an Nsight Compute result's id (ncu_kernels:ID) also needs
    the .ncu-rep linked to it."""
    if goto is None:
        return
    from tuiperf.analysis.ids import NCU_TABLE

    if not timeline:
        raise UsageError(
            f"--goto {text}: an Nsight Compute report alone has no timeline to go to; "
            "give the timeline report first: tuiperf RUN.nsys-rep KERNELS.ncu-rep --goto ID"
        )
    if goto.table == NCU_TABLE and not ncu:
        raise UsageError(
            f"--goto {text}: an Nsight Compute result has no place on a timeline without its "
            "report; give it after the timeline report: tuiperf REPORT KERNELS.ncu-rep"
        )


def both_timelines(first: Path, second: Path) -> bool:
    """Neither report is an Nsight Compute one (a file that is no report fails here)."""
    from tuiperf.load import detect as det

    return all(det.detect(p) not in (det.NCU_REP, det.NCU_CSV) for p in (first, second))


def is_snapshot(path: Path) -> bool:
    from tuiperf.load import detect as det

    return path.is_file() and det.detect(path) == det.TORCH_SNAPSHOT


def run_memory_view(path: Path, args: argparse.Namespace, goto: bool) -> int:
    """`tuiperf snap.pickle`: the memory pane of a PyTorch allocator snapshot."""
    import shlex

    if goto:
        raise UsageError("--goto: a memory snapshot has no timeline to go to")
    if not has_terminal():
        raise UsageError(
            f"the viewer needs a terminal; use 'tuiperf memory {shlex.quote(str(path))}'"
        )
    from tuiperf.tui.screens.memory import run_memory

    return run_memory(path, args, open_options(args))


def run_diff_view(before: Path, args: argparse.Namespace) -> int:
    """`tuiperf BEFORE AFTER`: the diff view of two timeline reports."""
    import shlex

    if not has_terminal():
        pair = f"{shlex.quote(str(before))} {shlex.quote(str(args.second_path))}"
        raise UsageError(f"the viewer needs a terminal; use 'tuiperf diff {pair}'")
    from tuiperf.tui.screens.diff import run_diff

    return run_diff(before, args.second_path, args, open_options(args))


def no_terminal_hint(report: Path | None) -> str:
    """Name the batch commands that work without a terminal, with the user's report."""
    import shlex

    what = shlex.quote(str(report)) if report is not None else "REPORT"
    return (
        f"the viewer needs a terminal; use 'tuiperf summary {what}' "
        f"or 'tuiperf export {what} -o FILE'"
    )


def ncu_baseline(first: Path, second: Path | None) -> Path | None:
    """`second` when both are Nsight Compute reports (`tuiperf after.ncu-rep
    before.ncu-rep`: the second is the baseline of the first), else None."""
    from tuiperf.load import detect as det

    ncu = (det.NCU_REP, det.NCU_CSV)
    if second is None or not (first.exists() and second.exists()):
        return None
    return second if det.detect(first) in ncu and det.detect(second) in ncu else None


def split_reports(first: Path, second: Path | None) -> tuple[Path, Path | None]:
    """(the report the viewer opens, the Nsight Compute report or None), in either order:
    `tuiperf a.ncu-rep` opens the ncu screen alone, `tuiperf a.nsys-rep b.ncu-rep` links."""
    from tuiperf.load import detect as det

    if second is None:
        is_ncu = first.exists() and det.detect(first) in (det.NCU_REP, det.NCU_CSV)
        return first, (first if is_ncu else None)
    timeline, ncu = timeline_and_ncu(first, second)
    assert timeline is not None and ncu is not None  # two of a kind raised UsageError
    return timeline, ncu
