"""Interleaved A/B of the 5M-row sorts and the 1M-row CSV export (issue 20.3).

usage: python bench/ab_sort_export.py REPORT --cache-dir DIR --rounds N NAME=TREE [NAME=TREE ...]
  TREE is a checkout whose `tuiperf` package is measured (the run's PYTHONPATH and working
  directory). REPORT must already be converted into DIR (run bench/bench_query.py once).

Each run is a new process that opens the cached report and times, cold: sort by grid
(3 keys), by name, by duration descending (the columns are read first, not timed); then
the 1M-row CSV export of the duration-descending view (view -> Arrow, then the writer,
into a temporary file), and hashes the CSV so the arms can be checked for identical bytes.
The arms take turns and their order reverses every round. Prints one JSON line per run
and a Markdown table of medians and ranges (wall and CPU seconds of the process).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

STEPS = ("sort grid", "sort name", "sort duration desc", "view -> Arrow", "CSV write")

CHILD = r"""
import hashlib, json, os, sys, tempfile, time
from pathlib import Path
import tuiperf
from tuiperf.export import write_file
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import columns as C
from tuiperf.model.timeline.query import Events, Query

report, cache, tree = sys.argv[1:4]
assert Path(tuiperf.__file__).resolve().is_relative_to(Path(tree).resolve()), tuiperf.__file__
kernels = Events(open_trace(Path(report), OpenOptions(cache_dir=Path(cache)))).table("kernels")
kernels.warm(["grid_x", "grid_y", "grid_z", "name", "duration"])
out, orders = {}, []

def timed(step, fn):
    t0, c0 = time.perf_counter(), time.process_time()
    r = fn()
    out[step] = (time.perf_counter() - t0, time.process_time() - c0)
    return r

for step, key, desc in (("sort grid", "grid", False), ("sort name", "name", False),
                        ("sort duration desc", "duration", True)):
    orders.append(timed(step, lambda: kernels.run(Query(sort=key, descending=desc))).indices)
view = kernels.run(Query(sort="duration", descending=True))
kernels.warm([s for c in C.columns("kernels") for s in c.sources])
table = timed("view -> Arrow", lambda: view.to_arrow(C.columns("kernels"), limit=1_000_000))
with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "k.csv"
    timed("CSV write", lambda: write_file(path, table))
    csv_hash = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
order_hash = hashlib.sha256(b"".join(o.tobytes() for o in orders)).hexdigest()[:16]
print(json.dumps({"steps": out, "csv": csv_hash, "orders": order_hash}))
"""


def run_arm(tree: str, report: str, cache: str) -> dict:
    env = {**os.environ, "PYTHONPATH": tree}
    cmd = [sys.executable, "-c", CHILD, report, cache, tree]
    proc = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{tree}: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(results: dict[str, list[dict]]) -> str:
    lines = [
        "| step | arm | wall median | wall range | CPU median | CPU range |",
        "|---|---|---|---|---|---|",
    ]
    for step in (*STEPS, "sorts + export"):
        for arm, runs in results.items():
            if step == "sorts + export":
                walls = [sum(r["steps"][s][0] for s in STEPS) for r in runs]
                cpus = [sum(r["steps"][s][1] for s in STEPS) for r in runs]
            else:
                walls = [r["steps"][step][0] for r in runs]
                cpus = [r["steps"][step][1] for r in runs]
            lines.append(
                f"| {step} | {arm} | {statistics.median(walls):.3f} s | "
                f"{min(walls):.3f}–{max(walls):.3f} | {statistics.median(cpus):.3f} s | "
                f"{min(cpus):.3f}–{max(cpus):.3f} |"
            )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("report")
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("arms", nargs="+", metavar="NAME=TREE")
    args = ap.parse_args()
    arms = dict(a.split("=", 1) for a in args.arms)
    results: dict[str, list[dict]] = {name: [] for name in arms}
    for rnd in range(args.rounds):
        names = list(arms) if rnd % 2 == 0 else list(arms)[::-1]
        for name in names:
            r = run_arm(arms[name], args.report, args.cache_dir)
            r.update(arm=name, round=rnd, load=os.getloadavg()[0], at=time.strftime("%H:%M:%S"))
            results[name].append(r)
            print(json.dumps(r), flush=True)
    for what in ("csv", "orders"):
        print(
            f"{what}: "
            + ", ".join(f"{n} {sorted({r[what] for r in rs})}" for n, rs in results.items())
        )
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
