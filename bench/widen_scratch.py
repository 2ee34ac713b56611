"""Widening a big table's narrow columns on first use: into the cache entry's scratch files
(model/scratch.py, the default over a sixteenth of the machine's memory) or into the
process's own memory (the limit set out of reach), interleaved, a fresh process each.

usage: .venv/bin/python bench/widen_scratch.py REPORT --cache-dir DIR [--rounds N]
Each run opens REPORT from its cache entry (made first, not timed), then times
`trace.table("api")` and `trace.table("kernels")` (every canonical column: what the events
table and the summaries ask for) and reports the process's own memory (RssAnon) and mapped
files (RssFile) after them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CODE = """
import json, sys, time
from pathlib import Path
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import scratch
if sys.argv[3] == "memory":
    scratch.SCRATCH_FROM = 1 << 62
trace = open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2])))
assert trace.meta.from_cache
t0 = time.perf_counter()
rows = trace.table("api").num_rows + trace.table("kernels").num_rows
spent = time.perf_counter() - t0
st = dict(l.split(":", 1) for l in open("/proc/self/status") if l.startswith("Rss"))
mib = {k: int(v.split()[0]) // 1024 for k, v in st.items()}
print(json.dumps({"s": spent, "rows": rows, **mib}))
"""


def run(report: Path, cache: Path, arm: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CODE, str(report), str(cache), arm],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                    "from tuiperf.load.open import OpenOptions, open_trace; "
                    "open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2])))",
                    str(args.report), str(args.cache_dir)], check=True)  # fmt: skip
    got: dict[str, list[dict]] = {"scratch": [], "memory": []}
    for i in range(args.rounds):
        for arm in ["scratch", "memory"] if i % 2 == 0 else ["memory", "scratch"]:
            r = run(args.report, args.cache_dir, arm)
            got[arm].append(r)
            print(f"round {i + 1} {arm}: {r['s']:.2f} s, own {r['RssAnon']:,} MiB, "
                  f"files {r['RssFile']:,} MiB", flush=True)  # fmt: skip
    for arm, rs in got.items():
        print(f"{arm}: median {statistics.median(r['s'] for r in rs):.2f} s, own memory "
              f"{statistics.median(r['RssAnon'] for r in rs):,} MiB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
