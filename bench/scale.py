"""`make bench-scale`: a 20M-kernel report converts and opens on this machine.

Tiles vit_range.sqlite ×8000 in time (scripts/scale_nsys.py: 20.5M kernels,
51M CUDA API rows) and measures, each in a fresh process with its peak RSS:
the first open (`summary -r cuda_gpu_kern_sum` into an empty cache: core columns),
the first timeline screen in a real terminal (tmux) cold and from the cache, the full
conversion (`convert`: every column), and a warm summary. Writes bench/scale.md
(TUIPERF_SCALE_TIMES=20000: 51.2M kernels, bench/scale_x20000.md).
"""

from __future__ import annotations

import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers_tmux
from run import DATA, REPO, TUIPERF, dir_mib, floor, kernels_in, tile, timed

TIMES = int(os.environ.get("TUIPERF_SCALE_TIMES", "8000"))
MARKER = re.compile(r"/col")


def keep_lane_index(path: Path, cache: str, tree: Path = REPO) -> None:
    """The lane index into the cache entry, as the viewer keeps it after its first frame
    (the timed runs are stopped at that frame, before their own write); `tree`: the
    checkout whose tuiperf makes it."""
    make = (
        "import sys; from pathlib import Path; "
        "from tuiperf.load.open import OpenOptions, open_trace; "
        "from tuiperf.model.timeline.lanes import build_lanes; "
        "build_lanes(open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2]))))"
    )
    timed([sys.executable, "-c", make, str(path), cache], cwd=tree)


def screen(path: Path, cache: str) -> tuple[float | None, float | None]:
    cmd = [str(REPO / ".venv" / "bin" / "tuiperf"), str(path), "--cache-dir", cache]
    with tempfile.TemporaryDirectory(prefix="tuiperf-scale-") as work:
        got = peers_tmux.first_screen(cmd, MARKER, Path(work), {"LANG": "C.UTF-8"}, 900.0)
    if got.seconds is None:
        print(f"no first screen; last screen:\n{got.screen}", file=sys.stderr)
    return got.seconds, got.rss_mib


def main() -> int:
    path = tile(TIMES)
    n = kernels_in(path)
    rows: list[tuple[str, str, str]] = []
    fl = floor(path)
    rows.append(("floor: sqlite3 count + sum over the tables loaded", f"{fl.wall:.1f} s", "—"))
    summary = [*TUIPERF, "summary", str(path), "-r", "cuda_gpu_kern_sum", "-q", "--top", "5"]
    with tempfile.TemporaryDirectory(prefix="tuiperf-scale-", dir=DATA) as cache:
        s, rss = screen(path, cache)
        rows.append(("first timeline screen, empty cache (tmux)", _s(s), _m(rss)))
        keep_lane_index(path, cache)
        s, rss = screen(path, cache)
        rows.append(("first timeline screen, from the cache (tmux)", _s(s), _m(rss)))
    with tempfile.TemporaryDirectory(prefix="tuiperf-scale-", dir=DATA) as cache:
        r = timed([*summary, "--cache-dir", cache])
        rows.append(("first open: summary into an empty cache", _s(r.wall), _m(r.rss_mib)))
        r = timed([*TUIPERF, "convert", str(path), "--cache-dir", cache, "-q"])
        rows.append(("convert: the remaining (detail) columns", _s(r.wall), _m(r.rss_mib)))
        arrow = dir_mib(Path(cache))
        r = timed([*summary, "--cache-dir", cache])
        rows.append(("summary from the cache", _s(r.wall), _m(r.rss_mib)))
    with tempfile.TemporaryDirectory(prefix="tuiperf-scale-", dir=DATA) as cache:
        r = timed([*TUIPERF, "convert", str(path), "--cache-dir", cache, "-q"])
        rows.append(("convert everything into an empty cache", _s(r.wall), _m(r.rss_mib)))
    lines = [
        f"# tuiperf at {n / 1e6:.1f}M kernels",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.node()} ({os.cpu_count()} "
        f"cores, {_ram_gib():.0f} GiB), load average {os.getloadavg()[0]:.2f} at the end.",
        f"Report: {path.name}, {path.stat().st_size / 2**30:.1f} GiB, {n:,} kernels; cache "
        f"entry {arrow / 1024:.1f} GiB. One run each (a fresh process); RSS = peak RSS.",
        "",
        "| step | wall | peak RSS |",
        "|---|---|---|",
        *(f"| {a} | {b} | {c} |" for a, b, c in rows),
    ]
    out = "scale.md" if TIMES == 8000 else f"scale_x{TIMES}.md"
    (REPO / "bench" / out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _s(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f} s"


def _m(v: float | None) -> str:
    return "—" if v is None else f"{v:,.0f} MiB"


def _ram_gib() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


if __name__ == "__main__":
    sys.exit(main())
