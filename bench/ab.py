"""Interleaved A/B of a cold `tuiperf convert`: arms run in turn, round after round.

usage: python bench/ab.py REPORT --rounds N ARM [ARM ...]
  ARM is NAME=TREE[,VAR=VALUE...]: TREE is a checkout whose `tuiperf` package is measured
  (the run's working directory and PYTHONPATH), the VAR=VALUE pairs are set in that arm's
  environment. REPORT must be an absolute path.

Each run converts REPORT into a fresh, empty cache folder in a new process; the order of
the arms rotates every round, so a slow minute of a shared machine is spread over all of
them. Prints one line per run and a Markdown table of medians and ranges (wall, user and
system CPU time, peak RSS).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass


@dataclass
class Arm:
    name: str
    tree: str
    env: dict[str, str]


@dataclass
class Run:
    wall: float
    user: float
    sys: float
    rss_mib: float


def parse_arm(text: str) -> Arm:
    name, _, rest = text.partition("=")
    tree, *pairs = rest.split(",")
    env = dict(p.split("=", 1) for p in pairs)
    return Arm(name, tree, env)


def convert(arm: Arm, report: str) -> Run:
    with tempfile.TemporaryDirectory(prefix="tuiperf-ab-") as cache:
        env = {**os.environ, **arm.env, "PYTHONPATH": arm.tree}
        cmd = [sys.executable, "-m", "tuiperf", "convert", report, "--cache-dir", cache, "-q"]
        t0 = time.perf_counter()
        # run in the tree: `python -m` puts the working directory ahead of PYTHONPATH,
        # so from anywhere else another checkout's `tuiperf` could be the one measured
        proc = subprocess.Popen(
            cmd, env=env, cwd=arm.tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise SystemExit(f"{arm.name} failed:\n{err}")
    return Run(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024)


def summary(name: str, runs: list[Run]) -> str:
    def cell(values: list[float], fmt: str) -> str:
        return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"

    return (
        f"| {name} | {len(runs)} | {cell([r.wall for r in runs], '.2f')} "
        f"| {cell([r.user for r in runs], '.2f')} | {cell([r.sys for r in runs], '.2f')} "
        f"| {cell([r.rss_mib for r in runs], '.0f')} |"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report")
    p.add_argument("arms", nargs="+", type=parse_arm)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    arms: list[Arm] = args.arms
    runs: dict[str, list[Run]] = {a.name: [] for a in arms}
    convert(arms[0], args.report)  # warm the page cache with the report, not measured
    for r in range(args.rounds):
        shift = r % len(arms)
        for arm in arms[shift:] + arms[:shift]:
            run = convert(arm, args.report)
            runs[arm.name].append(run)
            print(
                f"round {r + 1} {arm.name}: {run.wall:.2f} s wall, {run.user:.2f} user, "
                f"{run.sys:.2f} sys, {run.rss_mib:.0f} MiB",
                flush=True,
            )
    print()
    print("| arm | runs | wall s, median (range) | user s | sys s | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for arm in arms:
        print(summary(arm.name, runs[arm.name]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
