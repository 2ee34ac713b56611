"""Reading a report's Python samples and backtraces (JSON payloads of NVTX marks):
interleaved A/B between code trees, a fresh process per run.

usage: .venv/bin/python bench/py_samples_parse.py REPORT.sqlite --tree A=PATH --tree B=PATH
                                                  [--rounds N]
Each run opens REPORT without the cache in a fresh interpreter whose `tuiperf` is the tree's
(PYTHONPATH), and times the CPU-samples step of the conversion (`cpu_samples`: the Python
samples' JSON payloads parsed into stacks), of the Python backtraces (`callsites`, nsys
`--python-backtrace=cuda`) and the whole open. Prints each run and the medians with their
spread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CODE = """
import contextlib, json, sys, time
from pathlib import Path
from tuiperf.load.nsys import tables as T
from tuiperf.load.open import OpenOptions, open_trace
spent = {}
orig = T.NsysReader._converting
@contextlib.contextmanager
def timed(self, name):
    t0 = time.perf_counter()
    with orig(self, name):
        yield
    spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
T.NsysReader._converting = timed
t0 = time.perf_counter()
tr = open_trace(Path(sys.argv[1]), OpenOptions(use_cache=False))
whole = time.perf_counter() - t0
print(json.dumps({"open": whole, "cpu_samples": spent.get("cpu_samples", 0.0),
                  "callsites": spent.get("callsites", 0.0),
                  "samples": tr.table("cpu_samples").num_rows,
                  "calls": tr.table("callsites").num_rows}))
"""


def run(tree: Path, report: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", CODE, str(report)], cwd=tree, env=env,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--tree", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    trees = {k: Path(v).resolve() for k, v in (t.split("=", 1) for t in args.tree)}
    got: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    for r in range(args.rounds):
        order = list(trees) if r % 2 == 0 else list(reversed(trees))
        for label in order:
            res = run(trees[label], args.report.resolve())
            got[label].append(res)
            line = f"round {r + 1} {label}: cpu_samples {res['cpu_samples']:.3f} s, "
            line += f"callsites {res['callsites']:.3f} s, open {res['open']:.3f} s "
            print(line + f"({int(res['samples']):,} samples, {int(res['calls']):,} calls)")
    for label, runs in got.items():
        for key in ("cpu_samples", "callsites", "open"):
            v = [x[key] for x in runs]
            print(f"{label} {key}: median {statistics.median(v):.3f} s "
                  f"({min(v):.3f}-{max(v):.3f}) over {len(v)} runs")  # fmt: skip


if __name__ == "__main__":
    main()
