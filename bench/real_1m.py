"""The real 1M-kernel H200 capture (bench/data/big_real.sqlite): cold open, conversion and
the cache entry, interleaved A/B between code trees.

usage: .venv/bin/python bench/real_1m.py [REPORT] [--rounds N] [--tree LABEL=PATH[,spill] ...]
`,spill` runs that tree with every table spilled (tuiperf.load.spill.SHARE < 0; by
default only a table over a quarter of the memory available is). Each round runs, for
each tree in turn (in that tree's folder, so its `tuiperf` is the one
imported; default: this checkout), each step in a fresh process with its wall time and
peak RSS (wait4): the first timeline screen into an empty cache (tmux, 160x48), the first
open (`summary -r cuda_gpu_kern_sum`) into an empty cache, `convert` of the detail columns
after it, and `convert` of everything into an empty cache; then the cache entry's size on
disk (× the report). Prints medians and spreads per tree. The first screen from the cache:
bench/first_screen.py.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers_tmux  # noqa: E402
from run import DATA, floor  # noqa: E402
from scale import MARKER  # noqa: E402

STEPS = (
    "first timeline screen, empty cache (tmux)",
    "first open: summary into an empty cache",
    "convert: the detail columns after it",
    "convert everything into an empty cache",
)


def timed(cmd: list[str], cwd: str) -> tuple[float, float, float]:
    """(wall s, peak RSS MiB, user + system CPU s) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


#: `python -m tuiperf`, with every table spilled
SPILLED = (
    "import runpy, tuiperf.load.spill as s; s.SHARE = -1; "
    "runpy.run_module('tuiperf', run_name='__main__', alter_sys=True)"
)


def tuiperf_cmd(spilled: bool) -> list[str]:
    return [sys.executable, "-c", SPILLED] if spilled else [sys.executable, "-m", "tuiperf"]


def screen(report: Path, cache: str, tree: str, spilled: bool) -> tuple[float, float, float]:
    line = " ".join(shlex.quote(a) for a in tuiperf_cmd(spilled))
    cmd = ["bash", "-c", f"cd {tree} && exec {line} {report} --cache-dir {cache}"]
    with tempfile.TemporaryDirectory(prefix="tuiperf-real-") as work:
        got = peers_tmux.first_screen(cmd, MARKER, Path(work), {"LANG": "C.UTF-8"}, 300.0)
    if got.seconds is None or got.rss_mib is None:
        raise SystemExit(f"no first screen; last screen:\n{got.screen}")
    return got.seconds, got.rss_mib, float("nan")  # (the CPU time is not recorded)


def disk_mib(p: Path) -> float:
    """Allocated blocks (all-null columns are holes), MiB."""
    return sum(f.stat().st_blocks * 512 for f in p.rglob("*") if f.is_file()) / 2**20


def one_round(
    report: Path, tree: str, spilled: bool
) -> tuple[list[tuple[float, float, float]], float, float]:
    tp = tuiperf_cmd(spilled)
    summary = [*tp, "summary", str(report), "-r", "cuda_gpu_kern_sum", "-q", "--top", "5"]
    got = []
    with tempfile.TemporaryDirectory(prefix="tuiperf-real-", dir=DATA) as cache:
        got.append(screen(report, cache, tree, spilled))
    with tempfile.TemporaryDirectory(prefix="tuiperf-real-", dir=DATA) as cache:
        got.append(timed([*summary, "--cache-dir", cache], tree))
        got.append(timed([*tp, "convert", str(report), "--cache-dir", cache, "-q"], tree))
        first = disk_mib(Path(cache))
    with tempfile.TemporaryDirectory(prefix="tuiperf-real-", dir=DATA) as cache:
        got.append(timed([*tp, "convert", str(report), "--cache-dir", cache, "-q"], tree))
        converted = disk_mib(Path(cache))
    return got, first, converted


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path, nargs="?", default=DATA / "big_real.sqlite")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree", action="append", default=[])
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": str(HERE.parent)}
    report: Path = args.report.resolve()
    mib = report.stat().st_size / 2**20
    load0 = os.getloadavg()[0]
    runs: dict[str, list[list[tuple[float, float, float]]]] = {t: [] for t in trees}
    entry: dict[str, tuple[float, float]] = {}
    for r in range(args.rounds):
        for label, spec in trees.items():
            tree, _, flag = spec.partition(",")
            got, first, converted = one_round(report, tree, flag == "spill")
            runs[label].append(got)
            entry[label] = (first, converted)
            line = ", ".join(f"{w:.2f} s/{m:.0f} MiB/{c:.2f} s CPU" for w, m, c in got)
            print(f"round {r + 1} {label}: {line}", flush=True)
    fl = floor(report)
    print(
        f"\nreport {report.name}: {mib:.1f} MiB; sqlite3 floor {fl.wall:.2f} s; load average "
        f"{load0:.2f} -> {os.getloadavg()[0]:.2f}; {args.rounds} rounds, median (spread)\n"
    )
    print("| step | tree | wall s | user + sys CPU s | peak RSS MiB | RSS × report |")
    print("|---|---|---|---|---|---|")
    for i, step in enumerate(STEPS):
        for label in trees:
            w = [g[i][0] for g in runs[label]]
            m = [g[i][1] for g in runs[label]]
            c = [g[i][2] for g in runs[label]]
            cpu = "—" if c[0] != c[0] else f"{statistics.median(c):.2f} ({min(c):.2f}–{max(c):.2f})"
            print(
                f"| {step} | {label} | {statistics.median(w):.2f} ({min(w):.2f}–{max(w):.2f}) | "
                f"{cpu} | "
                f"{statistics.median(m):,.0f} ({min(m):,.0f}–{max(m):,.0f}) | "
                f"{statistics.median(m) / mib:.2f}× |"
            )
    print("\n| tree | entry after first open + details, MiB | × | entry of `convert`, MiB | × |")
    print("|---|---|---|---|---|")
    for label, (first, converted) in entry.items():
        print(
            f"| {label} | {first:.1f} | {first / mib:.2f}× | {converted:.1f} | "
            f"{converted / mib:.2f}× |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
