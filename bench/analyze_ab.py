"""Peak RSS and wall time of `tuiperf analyze REPORT` per source tree, interleaved.

usage: python bench/analyze_ab.py REPORT --tree before=/tmp/base --tree after=$PWD
           [--rounds 3] [--format json] [--cache-dir DIR]

Each run is a fresh process (`/usr/bin/time`), in the tree's folder so its `tuiperf` is
the one imported, with its output to /dev/null; the trees take turns in every round. The
cache is filled first (one run, not counted): both trees read the same entry.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path


def run(tree: str, report: Path, fmt: str, cache: str) -> tuple[float, float]:
    """(wall s, peak RSS MiB) of one analyze run."""
    cmd = [
        "/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "tuiperf", "analyze", str(report),
        "--format", fmt, "-o", "/dev/null", "--cache-dir", cache,
    ]  # fmt: skip
    out = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=False)
    wall, kb = out.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kb) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--tree", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--format", default="json")
    ap.add_argument("--cache-dir", default="/tmp/analyze_ab_cache")
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    report = args.report.resolve()
    run(next(iter(trees.values())), report, args.format, args.cache_dir)
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    for r in range(args.rounds):
        for label, tree in trees.items():
            got[label].append(run(tree, report, args.format, args.cache_dir))
            print(f"round {r + 1} {label}: {got[label][-1][0]:.2f} s {got[label][-1][1]:.0f} MiB")
    print(f"\n| tree | wall s, median (spread) | peak RSS MiB, median (spread) |  # {args.format}")
    print("|---|---|---|")
    for label, rows in got.items():
        w, m = [x[0] for x in rows], [x[1] for x in rows]
        print(
            f"| {label} | {statistics.median(w):.2f} ({min(w):.2f}–{max(w):.2f}) "
            f"| {statistics.median(m):.0f} ({min(m):.0f}–{max(m):.0f}) |"
        )


if __name__ == "__main__":
    main()
