"""Interleaved A/B of two checkouts on the same report: the first timeline screen from the
cache (a fresh process opens the entry, restores or builds the lanes, computes the first
frame), its peak RSS, the cold first open that made the entry (one run each) and the
entry's size with the lane index the viewer keeps; writes bench/cache_entry_ab.md.

    python bench/entry_ab.py --old /tmp/wt-old REPORT [REPORT ...] [--rounds 10]

The old checkout needs no virtualenv of its own: both run with this interpreter, each
importing tuiperf from its own folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE = (
    "import time, sys; t0 = time.perf_counter()\n"
    "from pathlib import Path\n"
    "from tuiperf.load.open import OpenOptions, open_trace\n"
    "from tuiperf.model.timeline.lanes import build_lanes\n"
    "from tuiperf.model.timeline.viewport import Viewport\n"
    "sys.path.insert(0, sys.argv[3]); from bench_timeline import frame\n"
    "t = open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2])))\n"
    "fc = t.meta.from_cache\n"
    "ls = build_lanes(t)\n"
    "frame(ls, Viewport.fit(ls.lo, ls.hi, 200))\n"
    "import resource\n"
    "print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, fc)\n"
)


def run(tree: Path, report: Path, cache: Path) -> tuple[float, float, bool]:
    """(seconds, peak RSS MiB, opened from the cache) of one fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", CODE, str(report), str(cache), str(REPO / "bench")],
        capture_output=True, text=True, cwd=tree, check=True,
    )  # fmt: skip
    secs, rss, hit = out.stdout.split()
    return float(secs), int(rss) / 1024, hit == "True"


def size(folder: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def measure(trees: dict[str, Path], report: Path, rounds: int, work: Path) -> list[str]:
    caches = {k: work / k for k in trees}
    cold = {k: run(tree, report, caches[k]) for k, tree in trees.items()}  # converts, indexes
    for k, tree in trees.items():
        run(tree, report, caches[k])  # warm the page cache once
    got: dict[str, list[tuple[float, float, bool]]] = {k: [] for k in trees}
    for i in range(rounds):
        order = list(trees) if i % 2 == 0 else list(reversed(trees))
        for k in order:
            got[k].append(run(trees[k], report, caches[k]))
    rep = report.stat().st_size
    lines = [f"### {report.name} ({rep / 2**20:,.1f} MiB), {rounds} interleaved rounds", ""]
    lines += ["| tree | first screen from the cache: median s (min–max) | peak RSS MiB (median) "
              "| cold first open s / peak RSS MiB (one run) | entry with the lane index MiB | × "
              "the report |", "|---|---|---|---|---|---|"]  # fmt: skip
    for k in trees:
        ts, rss = [r[0] for r in got[k]], [r[1] for r in got[k]]
        assert all(r[2] for r in got[k]), f"{k}: a round did not open from the cache"
        entry = size(caches[k])
        lines.append(
            f"| {k} | {statistics.median(ts):.3f} ({min(ts):.3f}–{max(ts):.3f}) | "
            f"{statistics.median(rss):,.0f} | {cold[k][0]:.2f} / {cold[k][1]:,.0f} | "
            f"{entry / 2**20:,.1f} | {entry / rep:.2f}× |"
        )
    return [*lines, ""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", type=Path, nargs="+")
    ap.add_argument("--old", type=Path, required=True, help="the other checkout")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "cache_entry_ab.md")
    args = ap.parse_args()
    old = subprocess.run(["git", "-C", str(args.old), "log", "-1", "--format=%h"],
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    new = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h"],
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    trees = {f"old ({old})": args.old.resolve(), f"new ({new} + working tree)": REPO}
    lines = [
        "# The cache entry made smaller: first screen from the cache, A/B",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} by `python bench/entry_ab.py` on "
        f"{os.cpu_count()} cores; fresh process per run, rounds interleaved (order swapped "
        "every round). First screen = import, open the entry, restore (or build) the lanes, "
        "compute the first frame at 200 columns.",
        "",
    ]
    for report in args.reports:
        with tempfile.TemporaryDirectory(prefix="entry-ab-", dir=report.parent) as w:
            lines += measure(trees, report.resolve(), args.rounds, Path(w))
            shutil.rmtree(w, ignore_errors=True)
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
