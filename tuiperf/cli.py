"""Entry point: `tuiperf [REPORT]` opens the TUI; subcommands are headless.

The headless paths never import Textual (a test checks it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuiperf import settings

if TYPE_CHECKING:
    from tuiperf.commands.base import Command

import argparse
import atexit
import contextlib
import importlib
import os
import shutil
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn

from tuiperf import __version__
from tuiperf.commands.open_tui import add_viewer_options
from tuiperf.errors import ExitCode, TuiperfError

#: modules under tuiperf.commands that define COMMAND, in the order --help lists them
COMMAND_MODULES = (
    "info",
    "summary",
    "export",
    "sql",
    "analyze",
    "memory",
    "diff",
    "ranks",
    "ncu",
    "convert",
    "profile",
    "cache",
)

DESCRIPTION = """\
GPU profiles in the terminal: Nsight Systems, Nsight Compute and torch.profiler.

examples:
  tuiperf run.nsys-rep                      open the TUI (no argument: the bundled sample)
  tuiperf summary run.sqlite --report cuda_gpu_kern_sum --format csv
  tuiperf info trace.pt.trace.json.gz
  tuiperf convert run.nsys-rep -o run_arrow/
  tuiperf diff before.nsys-rep after.nsys-rep --fail-if-slower 5
  tuiperf before.nsys-rep after.nsys-rep    the same comparison in the TUI (diff view)
  tuiperf profile --steps 5 -- python train.py   capture (nsys or torch.profiler), then open
  tuiperf ranks 'run/rank*.nsys-rep'        one report per rank: the straggler, exposed comm
"""


def _commands() -> dict[str, Command]:
    found: dict[str, Command] = {}
    for mod in COMMAND_MODULES:
        m = importlib.import_module(f"tuiperf.commands.{mod}")
        found[m.COMMAND.name] = m.COMMAND
    return found


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tuiperf",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-V", "--version", action="version", version=f"tuiperf {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    viewer = p.add_argument_group("viewer options (tuiperf [REPORT [OTHER_REPORT]] ...)")
    add_viewer_options(viewer, dest_prefix="viewer_")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in _commands().values():
        sp = sub.add_parser(
            cmd.name,
            help=cmd.help,
            description=cmd.description,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sp.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
        cmd.prepare(sp)
        sp.set_defaults(_run=cmd.run)
    return p


def _split_default(argv: list[str]) -> list[str]:
    """`tuiperf REPORT ...` means `tuiperf open REPORT ...` (the TUI)."""
    names = set(COMMAND_MODULES) | {"open"}
    for a in argv:
        if a in ("-h", "--help", "-V", "--version"):
            return argv
        if not a.startswith("-"):
            return argv if a in names else ["open", *argv]
    return ["open", *argv]


def run() -> NoReturn:
    """The `tuiperf` command (and `python -m tuiperf`): `main`, then the process ends."""
    exit_now(main())


def exit_now(code: int) -> NoReturn:
    """End the process with `code` without the interpreter's teardown, which frees every
    object one by one (40-50 ms after converting a 1M-kernel report: bench/exit_now.md),
    where nothing else runs: the exit handlers run, the standard streams are flushed, and
    with another thread the interpreter would wait for still alive, it exits as usual."""
    main_thread = threading.main_thread()
    waited = [t for t in threading.enumerate() if t is not main_thread and not t.daemon]
    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    if any(t.is_alive() for t in waited) or run_handlers is None:
        sys.exit(code)
    run_handlers()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing
            stream.flush()  # more can reach it, and the status is the command's
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    # Process-wide settings live here, at the entry point, never in library code; a
    # user's own value wins. tuiperf does no linear algebra: no OpenBLAS worker threads
    # spinning idle (read when numpy is first imported, after this)
    settings.limit_blas_threads()
    args_list = list(sys.argv[1:] if argv is None else argv)
    args_list = _split_default(args_list)
    debug = "--debug" in args_list
    try:
        if args_list and args_list[0] == "open":
            from tuiperf.commands.open_tui import run_open

            return run_open(args_list[1:])
        with terminate_like_interrupt():
            return _headless(args_list)
    except TuiperfError as e:
        if debug:
            traceback.print_exc()
        print(f"tuiperf: error: {e}", file=sys.stderr)
        return int(e.code)
    except Terminated:
        print("tuiperf: terminated", file=sys.stderr)
        return 128 + 15
    except KeyboardInterrupt:
        print("tuiperf: interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        _silence_stdout()
        return int(ExitCode.OK)
    except MemoryError:
        print("tuiperf: error: out of memory", file=sys.stderr)
        return int(ExitCode.FAILURE)
    except Exception as e:  # a bug in tuiperf, not a bad report: never a traceback unasked
        if debug:
            traceback.print_exc()
        print(internal_error_line(e), file=sys.stderr)
        return int(ExitCode.INTERNAL)


def _headless(args_list: list[str]) -> int:
    """A subcommand (`summary`, `diff`, ...), then the viewer where it asked for one."""
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.viewer_ascii or args.viewer_no_mouse:  # `tuiperf --ascii summary ...`
        parser.error("--ascii and --no-mouse are options of the viewer (tuiperf REPORT)")
    if not getattr(args, "_run", None):
        parser.print_help()
        return ExitCode.USAGE
    code = int(args._run(args))
    then = getattr(args, "then_view", None)
    return _view_then_remove(then) if code == 0 and then is not None else code


def _view_then_remove(folder: Path) -> int:
    """Open a folder a command wrote for the viewer (`ranks --tui`), then remove it."""
    from tuiperf.commands.open_tui import run_open

    try:
        return run_open([str(folder)])
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


def internal_error_line(e: BaseException) -> str:
    """The one line an unexpected exception (a bug) prints."""
    what = (str(e).strip().splitlines() or [""])[0][:300]
    return (
        f"tuiperf: internal error ({type(e).__name__}: {what}) — please report; "
        "rerun with --debug for the traceback"
    )


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so cleanups run as they do for Ctrl-C."""


@contextlib.contextmanager
def terminate_like_interrupt() -> Iterator[None]:
    """Headless commands unwind on SIGTERM (temporary files go, no half-written output):
    the handler raises Terminated while the command runs, and the one there before is back
    afterwards (a caller of `main`, a test, keeps its own). Only the main thread can set it."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
