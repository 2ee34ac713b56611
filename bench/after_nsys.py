"""What tuiperf adds after `nsys export` ends, on a machine without nsys: A/B between trees.

usage: .venv/bin/python bench/after_nsys.py ARROWDIR [--tree LABEL=PATH ...] [--rounds N]
                                            [--sleep S] [--out FILE]

A stand-in `nsys` (TUIPERF_NSYS) sleeps S seconds, then hard-links a finished arrowdir
export (ARROWDIR, e.g. one made by `nsys export --type arrowdir`, or by
bench/sqlite_to_arrowdir.py from a SQLite export) into the folder tuiperf asked for, and
stamps the time it ended. Each round runs `tuiperf summary REPORT.nsys-rep -r kern` into an
empty cache once per tree (alternating), and times the process end minus the stand-in's
end: the conversion, the cache entry, the summary and the exit, i.e. the part of a first
open that `≤ 1.1× the export alone` is about. The report file is a real small .nsys-rep
(the stand-in ignores it).
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

HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "tests" / "data" / "nsys" / "vit_range.nsys-rep"

STAND_IN = """#!/bin/bash
out=""; while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2;; *) shift;; esac; done
sleep {sleep}
mkdir -p "$out" && cp -al {src}/. "$out"/
date +%s.%N > {stamp}
"""


def run_once(tree: Path, work: Path, nsys: Path, stamp: Path) -> float:
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    stamp.unlink(missing_ok=True)
    path = os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = dict(os.environ, TUIPERF_NSYS=str(nsys), PYTHONPATH=path)
    cmd = [sys.executable, "-m", "tuiperf", "summary", str(work / "big.nsys-rep"),
           "--cache-dir", str(cache), "-r", "kern", "--top", "3", "-q"]  # fmt: skip
    subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True)
    end = time.time()
    return end - float(stamp.read_text())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("arrowdir", type=Path)
    ap.add_argument("--tree", action="append", default=[])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--sleep", type=float, default=1.0)
    args = ap.parse_args()
    trees = {k: Path(v) for k, v in (t.split("=", 1) for t in args.tree)} or {"this": HERE.parent}
    got: dict[str, list[float]] = {k: [] for k in trees}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(REPORT, work / "big.nsys-rep")
        nsys, stamp = work / "nsys", work / "ended"
        nsys.write_text(STAND_IN.format(sleep=args.sleep, src=args.arrowdir.resolve(), stamp=stamp))
        nsys.chmod(0o755)
        for r in range(args.rounds):
            order = list(trees.items()) if r % 2 == 0 else list(reversed(trees.items()))
            for label, tree in order:
                s = run_once(tree, work, nsys, stamp)
                got[label].append(s)
                print(f"round {r + 1} {label}: {s:.3f} s after nsys", flush=True)
    for label, ts in got.items():
        print(f"{label}: median {statistics.median(ts):.3f} s ({min(ts):.3f}-{max(ts):.3f})")
    if len(trees) == 2:
        a, b = list(got)
        d = [x - y for x, y in zip(got[a], got[b])]
        print(f"{a} - {b}: median {statistics.median(d) * 1000:+.0f} ms, "
              f"{a} faster in {sum(x < 0 for x in d)} of {len(d)} rounds")  # fmt: skip


if __name__ == "__main__":
    main()
