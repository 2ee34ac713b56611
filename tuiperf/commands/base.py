"""The shape of a subcommand: a name, an argparse set-up and a run function."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tuiperf import settings

if TYPE_CHECKING:
    from tuiperf.load.open import OpenOptions
    from tuiperf.load.progress import Progress


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    description: str
    prepare: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def add_cache_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("cache")
    g.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="where converted tables are kept (default: $TUIPERF_CACHE_DIR or "
        "$XDG_CACHE_HOME/tuiperf)",
    )
    g.add_argument("--no-cache", action="store_true", help="convert in memory; write nothing")
    g.add_argument(
        "--cache-max",
        metavar="SIZE",
        type=_size,
        help="keep the cache under SIZE (500M, 20G): after a conversion the least recently "
        "used entries go (default: $TUIPERF_CACHE_MAX, else no cap; see `tuiperf cache`)",
    )
    g.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def _size(text: str) -> int:
    """--cache-max's bytes; a bad size raises UsageError, which argparse lets through (it
    catches only ValueError and TypeError): one line and the usage exit status."""
    from tuiperf.load.cache.usage import parse_size

    return parse_size(text)


def progress_printer(args: argparse.Namespace) -> Callable[[Progress], None] | None:
    """Progress lines on stderr, only when stderr is a terminal and not --quiet."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return None

    def say(step: Progress) -> None:
        sys.stderr.write(f"\r\x1b[2K{step}")
        sys.stderr.flush()

    return say


def _use_cache(args: argparse.Namespace) -> bool:
    return not args.no_cache and not settings.no_cache()


def export_ahead(args: argparse.Namespace, path: Path | None) -> None:
    """Start `nsys export` of a `.nsys-rep` now, before the command's own imports (pyarrow,
    the viewer's Textual), so that they happen while nsys works; `open_options` hands it
    to the loader. Nothing starts for other reports or when the cache has it."""
    from tuiperf.load.nsys.rep import export_ahead as start

    args.export_ahead = start(path, args.cache_dir, _use_cache(args)) if path else None


def open_options(args: argparse.Namespace) -> OpenOptions:
    from tuiperf.load.cache.usage import cap_bytes
    from tuiperf.load.open import OpenOptions

    return OpenOptions(
        cache_dir=args.cache_dir,
        cache_max=cap_bytes(getattr(args, "cache_max", None)),  # a bad $TUIPERF_CACHE_MAX: here
        use_cache=_use_cache(args),
        progress=progress_printer(args),
        ahead=getattr(args, "export_ahead", None),
    )


def end_progress(args: argparse.Namespace) -> None:
    if progress_printer(args) is not None:
        sys.stderr.write("\r\x1b[2K")
        sys.stderr.flush()


def add_second_report(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "second_path",
        metavar="OTHER_REPORT",
        nargs="?",
        type=Path,
        help=f"optional: {what}; the two are linked (kernels matched by name, launch "
        "configuration and NVTX context)",
    )


def timeline_and_ncu(*paths: Path | None) -> tuple[Path | None, Path | None]:
    """(the timeline report, the Nsight Compute report) among `paths`, in either order."""
    from tuiperf.errors import UsageError
    from tuiperf.load import detect as det

    timeline: Path | None = None
    ncu: Path | None = None
    for p in paths:
        if p is None:
            continue
        if det.detect(p) in (det.NCU_REP, det.NCU_CSV):
            if ncu is not None:
                raise UsageError(f"{p}: two Nsight Compute reports; give one, with a timeline")
            ncu = p
        else:
            if timeline is not None:
                raise UsageError(
                    f"{p}: two timeline reports; the second must be an ncu report (to "
                    "compare two runs: `tuiperf diff A B`; one report per rank: "
                    "`tuiperf ranks A B`)"
                )
            timeline = p
    return timeline, ncu


def has_terminal() -> bool:
    """Whether the viewer can run here (stdin and stdout are a terminal)."""
    return sys.stdin.isatty() and sys.stdout.isatty()
