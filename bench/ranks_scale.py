"""`tuiperf ranks` over 16 per-rank reports of 2M kernels each: time and memory per worker.

Tiles vit_range.sqlite ×800 (2,048,000 kernels, 376 MiB; scripts/scale_nsys.py) and links
it 16 times as rank0..15.sqlite (same content: the per-rank work is what is measured, not
the cross-rank verdicts), then runs `tuiperf ranks` on the folder into an empty cache and
again from that cache, and one rank alone. Peak RSS is the largest of the process and its
pool workers (os.wait4). Writes bench/ranks_scale.md.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import DATA, REPO, TUIPERF, kernels_in, tile, timed

RANKS = 16


def main() -> int:
    report = tile(800)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tuiperf-ranks-", dir=DATA) as work:
        folder = Path(work) / "run"
        folder.mkdir()
        for i in range(RANKS):
            os.link(report, folder / f"rank{i}.sqlite")
        cache = Path(work) / "cache"
        one = Path(work) / "cache1"
        r = timed([*TUIPERF, "ranks", str(folder / "rank0.sqlite"), "--cache-dir", str(one)])
        rows.append(("one rank, empty cache", r))
        r = timed([*TUIPERF, "ranks", str(folder), "--cache-dir", str(cache)])
        rows.append((f"{RANKS} ranks, empty cache (default workers)", r))
        entry = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) / RANKS
        r = timed([*TUIPERF, "ranks", str(folder), "--cache-dir", str(cache)])
        rows.append((f"{RANKS} ranks, from the cache", r))
        shutil.rmtree(cache, ignore_errors=True)
    size = report.stat().st_size / 2**20
    lines = [
        f"# tuiperf ranks: {RANKS} reports of {kernels_in(report) / 1e6:.1f}M kernels",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.node()} ({os.cpu_count()} "
        f"cores), load average {os.getloadavg()[0]:.2f} at the end. Each report "
        f"{size:,.0f} MiB; a rank's cache entry {entry / 2**20:,.0f} MiB. One run each.",
        "",
        "| run | wall | peak RSS of any one process |",
        "|---|---|---|",
        *(f"| {name} | {r.wall:.1f} s | {r.rss_mib:,.0f} MiB |" for name, r in rows),
    ]
    (REPO / "bench" / "ranks_scale.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
