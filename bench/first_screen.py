"""First timeline screen from the cache, in a real terminal (tmux), A/B between code trees.

usage: .venv/bin/python bench/first_screen.py REPORT --cache-dir DIR [--rounds N]
                                              [--tree LABEL=PATH ...] [--poll S]
Each round starts `python -m tuiperf REPORT --cache-dir DIR` once per tree (in that tree's
folder, so its `tuiperf` is the one imported; default: this checkout), alternating, and
times the first screen = the timeline's scale label (`… /col`) drawn. The cache entry is
made first (not timed), one cache folder per tree (DIR/LABEL): a tree with another cache
schema version would otherwise remove the other's entry as stale, and every run would
convert anew. Prints each run and the medians with their spread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers_tmux  # noqa: E402
from scale import MARKER, keep_lane_index  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tree", action="append", default=[])
    ap.add_argument(
        "--poll",
        type=float,
        default=peers_tmux.POLL_S,
        help="seconds between screen captures (the measure's resolution)",
    )
    args = ap.parse_args()
    peers_tmux.POLL_S = args.poll
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": str(HERE.parent)}
    report = args.report.resolve()
    caches = {label: (args.cache_dir / label).resolve() for label in trees}
    for label, path in trees.items():  # the cache entry and its lane index, once (each
        # tree's schema may differ; the viewer keeps the index only after its first frame,
        # and the runs below are stopped at that frame)
        keep_lane_index(report, str(caches[label]), Path(path))
    times: dict[str, list[float]] = {label: [] for label in trees}
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.rounds):
            for label, path in trees.items():
                cmd = [
                    "bash",
                    "-c",
                    f"cd {path} && exec {sys.executable} -m tuiperf "
                    f"{report} --cache-dir {caches[label]}",
                ]
                got = peers_tmux.first_screen(cmd, MARKER, Path(work), {"LANG": "C.UTF-8"}, 60.0)
                if got.seconds is None:
                    raise SystemExit(f"{label}: no first screen; last screen:\n{got.screen}")
                times[label].append(got.seconds)
                print(f"round {r + 1} {label}: {got.seconds:.3f} s", flush=True)
    load = os.getloadavg()[0]
    for label, ts in times.items():
        print(
            f"{label}: median {statistics.median(ts):.3f} s, spread {min(ts):.3f}-{max(ts):.3f}"
            f" s over {len(ts)} runs"
        )
    print(f"load average at the end: {load:.2f}")


if __name__ == "__main__":
    main()
