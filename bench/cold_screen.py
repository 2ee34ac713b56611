"""First timeline screen into an empty cache, in a real terminal (tmux), A/B between trees.

usage: .venv/bin/python bench/cold_screen.py REPORT [--rounds N] [--tree LABEL=PATH ...]
                                             [--out FILE]
Each round starts `python -m tuiperf REPORT --cache-dir <new empty folder>` once per tree
(in that tree's folder, so its `tuiperf` is the one imported; default: this checkout),
the trees in turn and the order rotating every round, and times the first screen (the
timeline's scale label `… /col` drawn) and the process's peak RSS up to it. The folder goes
after each run. Prints each run and the medians with their spread; `--out` writes them as
a Markdown table too.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers_tmux  # noqa: E402
from scale import MARKER  # noqa: E402


def run_once(tree: str, report: Path, work: Path) -> tuple[float, float]:
    cache = Path(tempfile.mkdtemp(prefix="tuiperf-cold-", dir=HERE / "tmp"))
    try:
        cmd = ["bash", "-c", f"cd {tree} && exec {sys.executable} -m tuiperf {report} "
               f"--cache-dir {cache}"]  # fmt: skip
        got = peers_tmux.first_screen(cmd, MARKER, work, {"LANG": "C.UTF-8"}, 600.0)
        if got.seconds is None:
            raise SystemExit(f"{tree}: no first screen; last screen:\n{got.screen}")
        return got.seconds, got.rss_mib or 0.0
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree", action="append", default=[])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": str(HERE.parent)}
    report = args.report.resolve()
    (HERE / "tmp").mkdir(exist_ok=True)
    got: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
    labels = list(trees)
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.rounds):
            for label in labels[r % len(labels) :] + labels[: r % len(labels)]:
                s, rss = run_once(trees[label], report, Path(work))
                got[label].append((s, rss))
                print(f"round {r + 1} {label}: {s:.1f} s, {rss:,.0f} MiB", flush=True)
    lines = [f"Report: {report.name}; {args.rounds} rounds, measured "
             f"{time.strftime('%Y-%m-%d %H:%M')}, load average at the end "
             f"{os.getloadavg()[0]:.2f}.", "",
             "| tree | first screen, median (range) | peak RSS MiB, median (range) |",
             "|---|---|---|"]  # fmt: skip
    for label, runs in got.items():
        s = [a for a, _ in runs]
        m = [b for _, b in runs]
        lines.append(f"| {label} | {statistics.median(s):.1f} s ({min(s):.1f}–{max(s):.1f}) | "
                     f"{statistics.median(m):,.0f} ({min(m):,.0f}–{max(m):,.0f}) |")  # fmt: skip
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
