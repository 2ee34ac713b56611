"""A huge report's analysis over a sample of its run against the whole report's.

usage: .venv/bin/python bench/analysis_sample.py REPORT [--max-events N] [--cache-dir DIR]

Runs `tuiperf analyze REPORT --format json` twice in fresh processes, with the default
sample limit (or N) and with `--max-events 0` (whole), each under /usr/bin/time, and
prints wall time, peak RSS, the step time, the budget's parts and every finding's saving
and count side by side (the counts are the sample's: fewer events).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def run(report: Path, limit: str | None, cache: str | None) -> tuple[dict, float, float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = ["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "tuiperf", "analyze",
               str(report), "-f", "json", "--rows", "0", "-o", out.name]  # fmt: skip
        cmd += ["--max-events", limit] if limit is not None else []
        cmd += ["--cache-dir", cache] if cache else []
        got = subprocess.run(cmd, capture_output=True, text=True, check=True)
        wall, kb = got.stderr.strip().splitlines()[-1].split()
        return json.loads(Path(out.name).read_text()), float(wall), int(kb) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--max-events")
    ap.add_argument("--cache-dir")
    args = ap.parse_args()
    s, s_wall, s_rss = run(args.report, args.max_events, args.cache_dir)
    w, w_wall, w_rss = run(args.report, "0", args.cache_dir)
    print(f"sample: {s['sample']}")
    print("| | sample | whole |\n|---|---|---|")
    print(f"| wall s | {s_wall:.1f} | {w_wall:.1f} |\n| peak RSS MiB | {s_rss:.0f} | {w_rss:.0f} |")
    for key in ("step_ns", "steady_steps"):
        sb, wb = s["budget"] or {}, w["budget"] or {}
        print(f"| budget {key} | {sb.get(key)} | {wb.get(key)} |")
    for i, (f, g) in enumerate(zip(s["findings"], w["findings"], strict=False)):
        cells = [f"{x['est_saving_pct']} % ({x['count']:,})" for x in (f, g)]
        print(f"| #{i + 1} {f['rule']} / {g['rule']} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
