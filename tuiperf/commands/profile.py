"""`tuiperf profile [--steps N] -- python train.py ARGS`: capture, then open or analyze.

Nsight Systems when it is installed (profile_nsys says with which flags), else
torch.profiler with Python stacks and input shapes (`python -m tuiperf.torch`). The report
goes into the current folder as `tuiperf_<script>_<n>.nsys-rep` (with its SQLite export
beside it) or `tuiperf_<script>_<n>.pt.trace.json.gz`, n the first number no file uses.

Steps: when `--steps N` is given, or the main script mentions tuiperf.torch (read as text),
the program is taken to call `tuiperf.torch.profile_steps` in its training loop: then only
the steps it records are captured (N of them with --steps; nsys through
`--capture-range=cudaProfilerApi`). Otherwise the whole run is.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from pathlib import Path

from tuiperf import settings
from tuiperf.commands.base import Command, add_cache_args
from tuiperf.commands.profile_nsys import WHERE, find_nsys
from tuiperf.commands.profile_target import (
    Target,
    check_target,
    parse_target,
    report_base,
    uses_step_hook,
)
from tuiperf.errors import MissingToolError, TuiperfError, UsageError

PROFILERS = ("auto", "nsys", "torch")
#: seconds a program gets to write its report after Ctrl-C before it is killed
GRACE_S = 60


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--steps",
        type=int,
        metavar="N",
        help="record N training steps of tuiperf.torch.profile_steps (the program must "
        "call it in its loop); default: its own `steps`, or the whole run without it",
    )
    p.add_argument(
        "--profiler",
        choices=PROFILERS,
        default="auto",
        help="nsys, torch (torch.profiler), or auto: nsys when found, else torch",
    )
    p.add_argument(
        "--no-tui",
        action="store_true",
        help="print the analysis (as `tuiperf analyze REPORT`), not the viewer",
    )
    p.add_argument(
        "program",
        nargs=argparse.REMAINDER,
        metavar="-- PROGRAM ARGS",
        help="the command to profile, e.g. -- python train.py --lr 0.1",
    )
    add_cache_args(p)


def say(msg: str) -> None:
    print(f"tuiperf: {msg}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    cmd = list(args.program)
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    if args.steps is not None and args.steps < 1:
        raise UsageError("--steps must be 1 or more")
    target = parse_target(cmd)
    check_target(target)
    steps = args.steps is not None or uses_step_hook(target)
    base = report_base(Path.cwd(), target.name)
    nsys = None if args.profiler == "torch" else find_nsys()
    if args.profiler == "nsys" and nsys is None:
        raise MissingToolError(f"--profiler nsys: no nsys found ({WHERE})")
    env = _child_env(args.steps)
    try:
        if nsys is not None:
            report, status = _with_nsys(nsys, target, base, steps, env)
        else:
            why = "" if args.profiler == "torch" else f": no nsys found (looked at {WHERE})"
            report, status = _with_torch(target, base, steps, env, why)
    except KeyboardInterrupt:
        for p in sorted(base.parent.glob(base.name + ".*")):
            say(f"interrupted; what was captured: {_where(p)}")
        raise
    who = "nsys profile" if nsys is not None else "the program"
    return _finish(args, report, status, steps, who)


def _child_env(steps: int | None) -> dict[str, str]:
    """The program's environment, with --steps passed on to tuiperf.torch.profile_steps."""
    env = settings.child_environment()
    for var in (settings.PROFILE_MODE, settings.PROFILE_STEPS, settings.PROFILE_OUT):
        env.pop(var, None)
    if steps is not None:
        env[settings.PROFILE_STEPS] = str(steps)
    return env


def _with_nsys(nsys: str, target: Target, base: Path, steps: bool,
               env: dict[str, str]) -> tuple[Path | None, int]:  # fmt: skip
    from tuiperf.commands import profile_nsys as pn

    info = pn.probe(nsys)
    what = "-t cuda,nvtx,osrt"
    what += ", Python backtraces of CUDA calls" if info.python_backtrace else (
        " (this nsys has no --python-backtrace: no Python call sites)")  # fmt: skip
    if info.python_sampling:
        what += ", CPU and Python sampling"
    if steps:
        what += ", only the steps of tuiperf.torch.profile_steps (cudaProfilerApi range)"
    say(f"profiling with Nsight Systems ({info.version}, {nsys}): {what}")
    env[settings.PROFILE_MODE] = "nsys"
    status = _launch(pn.profile_argv(info, base, steps, target.argv), env)
    names = (base.name + ".nsys-rep", base.name + ".qdrep")  # .qdrep: nsys before 2021.4
    report = next((p for p in map(base.with_name, names) if p.is_file()), None)
    if report is None:
        return None, status
    say(f"exporting {report.name} to SQLite beside it (the file tuiperf reads)")
    res = subprocess.run(pn.export_argv(info, report), capture_output=True, text=True,
                         stdin=subprocess.DEVNULL)  # fmt: skip
    if res.returncode != 0:
        lines = [ln.strip() for ln in (res.stderr + res.stdout).splitlines() if ln.strip()]
        say(f"nsys export failed ({lines[-1] if lines else f'exit status {res.returncode}'})")
    return report, status


def _with_torch(target: Target, base: Path, steps: bool, env: dict[str, str],
                why: str) -> tuple[Path | None, int]:  # fmt: skip
    report = base.with_name(base.name + ".pt.trace.json.gz")
    env[settings.PROFILE_MODE] = "torch"
    env[settings.PROFILE_OUT] = str(report)
    argv = target.argv if steps else target.torch_argv()  # not Python: one line, nothing ran
    how = "the steps of tuiperf.torch.profile_steps" if steps else "the whole run"
    say(f"profiling with torch.profiler (Python stacks and input shapes, {how}){why}")
    status = _launch(argv, env)
    return (report if report.is_file() else None), status


def _launch(argv: list[str], env: dict[str, str]) -> int:
    """Run the program; on Ctrl-C (which it receives too) give it time to write its report."""
    try:
        proc = subprocess.Popen(argv, env=env)
    except OSError as e:
        raise UsageError(f"{argv[0]}: cannot run ({e.strerror or e})") from e
    try:
        return proc.wait()
    except KeyboardInterrupt as e:
        if type(e) is not KeyboardInterrupt:  # SIGTERM to tuiperf: pass it on
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=GRACE_S)
        except (KeyboardInterrupt, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        raise


def _where(report: Path) -> str:
    size = report.stat().st_size
    shown = f"{size / 1e6:.1f} MB" if size >= 1e5 else f"{size / 1e3:.1f} kB"
    try:
        name = str(report.relative_to(Path.cwd()))
    except ValueError:
        name = str(report)
    return f"{name} ({shown})"


def _finish(args: argparse.Namespace, report: Path | None, status: int, steps: bool,
            who: str) -> int:  # fmt: skip
    """`who` exited with `status`: say so (keeping what was captured), or show the report."""
    if status != 0:
        got = f"what was captured: {_where(report)}" if report else "no report written"
        raise TuiperfError(f"{who} exited with status {status}; {got}")
    if report is None:
        hint = (
            ": the program never reached the recorded steps of tuiperf.torch.profile_steps "
            "(--steps needs it in the training loop)"
            if steps
            else ""
        )
        raise TuiperfError(f"no report written{hint}")
    export = report.with_suffix(".sqlite")
    beside = f", its SQLite export {_where(export)}" if report.suffix in (
        ".nsys-rep", ".qdrep") and export.is_file() else ""  # fmt: skip
    say(f"report: {_where(report)}{beside}")
    return _show(args, report)


def _cache_flags(args: argparse.Namespace) -> list[str]:
    flags = ["--cache-dir", str(args.cache_dir)] if args.cache_dir else []
    if getattr(args, "cache_max", None) is not None:
        flags += ["--cache-max", str(args.cache_max)]  # bytes, parsed once already
    return flags + [f for f, on in (("--no-cache", args.no_cache), ("-q", args.quiet)) if on]


def _show(args: argparse.Namespace, report: Path) -> int:
    from tuiperf.commands import open_tui

    if not args.no_tui and open_tui.has_terminal():
        return open_tui.run_open([str(report), *_cache_flags(args)])
    if not args.no_tui:
        say("no terminal for the viewer: the analysis follows")
    from tuiperf.commands import analyze

    p = argparse.ArgumentParser(prog="tuiperf analyze")
    analyze.prepare(p)
    return analyze.run(p.parse_args([str(report), *_cache_flags(args)]))


COMMAND = Command(
    name="profile",
    help="run a program under Nsight Systems (or torch.profiler) and open its report",
    description="Runs PROGRAM under Nsight Systems when nsys is found ($TUIPERF_NSYS, $NSYS,\n"
    "PATH, the usual install folders): -t cuda,nvtx,osrt and, where nsys offers them, the\n"
    "Python backtraces of CUDA calls; else under torch.profiler with Python stacks and input\n"
    "shapes. The report is written in the current folder, as tuiperf_<script>_<n>.nsys-rep\n"
    "(its SQLite export beside it) or tuiperf_<script>_<n>.pt.trace.json.gz, never over a\n"
    "file that is there; then the viewer opens it (--no-tui, or no terminal: the analysis\n"
    "of `tuiperf analyze REPORT` is printed).\n\n"
    "Steps: with --steps N, or when the main script mentions tuiperf.torch, the program is\n"
    "taken to call tuiperf.torch.profile_steps in its loop, and only the steps it records\n"
    "are captured (N of them with --steps; nsys through --capture-range=cudaProfilerApi).\n"
    "Otherwise the whole run is.\n\n"
    "Exit status: the analysis's, or 1 when the program fails (what was captured is kept),\n"
    "2 for a missing script, 130 on Ctrl-C (the program writes what it has first).\n\n"
    "examples:\n"
    "  tuiperf profile -- python train.py --epochs 1\n"
    "  tuiperf profile --steps 5 --no-tui -- python train.py",
    prepare=prepare,
    run=run,
)
