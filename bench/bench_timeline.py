"""Timeline benchmarks on tiled reports: lane indexing, frame cost, first screen from cache.

usage: .venv/bin/python bench/bench_timeline.py [REPORT] [--first SMALL_REPORT]
                                                [--cache-dir DIR] [--frames 60]

Targets (issue 5): one frame of 200 columns x 40 lanes <= 16 ms median at any zoom over
5M kernels + their API calls (vit_range_x2000); first screen from cache <= 1 s at 1M
kernels (vit_range_x400). A frame here is everything the widget computes for its lanes
(busy cells, event boxes and names, highlight, segments), not Textual's compositing.
The report has about 10 lanes; the 40 lanes of a frame cycle through them.
Prints numbers only; the first open converts the report into the cache (not timed).
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rich.style import Style  # noqa: E402

from tuiperf.load.open import OpenOptions, open_trace  # noqa: E402
from tuiperf.model.timeline.lanes import LaneSet, build_lanes  # noqa: E402
from tuiperf.model.timeline.viewport import Viewport  # noqa: E402
from tuiperf.tui.glyphs import UNICODE  # noqa: E402
from tuiperf.tui.widgets.lane_render import (  # noqa: E402
    Highlight,
    LaneStyles,
    frame_edges,
    lane_cells,
    to_segments,
)

DATA = REPO / "bench" / "data"
COLUMNS, LANES = 200, 40
STYLES = LaneStyles(*(Style(color=f"color({i})") for i in range(7)))


def frame(lanes: LaneSet, vp: Viewport) -> int:
    """Draw LANES lanes of one frame; returns the number of segments (so nothing is skipped)."""
    edges = frame_edges(vp)
    n = 0
    for i in range(LANES):
        lane = lanes.lanes[i % len(lanes.lanes)]
        chars, sids = lane_cells(lane, vp, edges, UNICODE, Highlight())
        n += len(to_segments(chars, sids, None, STYLES))
    return n


def frame_costs(lanes: LaneSet, frames: int) -> list[tuple[str, float, float]]:
    """(zoom, median ms, max ms) for windows from the whole trace down to 1 ns/column."""
    rng = random.Random(5)
    full = Viewport.fit(lanes.lo, lanes.hi, COLUMNS)
    out = []
    for zooms in (0, 5, 10, 20, 30, 40, 50):
        times = []
        for _ in range(frames):
            vp = full
            anchor = rng.uniform(full.lo, full.hi)
            for _ in range(zooms):
                vp = vp.zoom_in(anchor)
            t0 = time.perf_counter()
            frame(lanes, vp)
            times.append((time.perf_counter() - t0) * 1e3)
        label = f"x1.5^{zooms:<2} ({_per_col(vp)}/col)"
        out.append((label, statistics.median(times), max(times)))
    return out


def _per_col(vp: Viewport) -> str:
    from tuiperf.model.fmt import duration_sig

    return duration_sig(vp.ns_per_col, ascii_only=True)


def first_screen_model(report: Path, cache: Path) -> float:
    """Fresh process: open from cache, index the lanes, compute the first frame."""
    code = (
        "import time, sys; t0 = time.perf_counter()\n"
        "from pathlib import Path\n"
        "from tuiperf.load.open import OpenOptions, open_trace\n"
        "from tuiperf.model.timeline.lanes import build_lanes\n"
        "from tuiperf.model.timeline.viewport import Viewport\n"
        "sys.path.insert(0, 'bench'); from bench_timeline import frame\n"
        f"t = open_trace(Path({str(report)!r}), OpenOptions(cache_dir=Path({str(cache)!r})))\n"
        "assert t.meta.from_cache\n"
        "ls = build_lanes(t)\n"
        "frame(ls, Viewport.fit(ls.lo, ls.hi, 200))\n"
        "print(time.perf_counter() - t0)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    return float(out.stdout.strip())


def first_screen_app(report: Path, cache: Path) -> float:
    """Fresh process: the real app, headless at 160x48, until the timeline is drawn."""
    code = (
        "import time; t0 = time.perf_counter()\n"
        "import asyncio\n"
        "from pathlib import Path\n"
        "from tuiperf.load.open import OpenOptions\n"
        "from tuiperf.tui.app import TuiperfApp\n"
        "async def main():\n"
        f"    opts = OpenOptions(cache_dir=Path({str(cache)!r}))\n"
        f"    app = TuiperfApp(Path({str(report)!r}), opts)\n"
        "    async with app.run_test(size=(160, 48)) as pilot:\n"
        "        while app.loading:\n"
        "            await pilot.pause(0.01)\n"
        "        await pilot.pause()\n"
        "        print(time.perf_counter() - t0)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", nargs="?", type=Path, default=DATA / "vit_range_x2000.sqlite")
    ap.add_argument("--first", type=Path, default=DATA / "vit_range_x400.sqlite")
    ap.add_argument("--cache-dir", type=Path, default=REPO / "bench" / "tmp" / "cache")
    ap.add_argument("--frames", type=int, default=60)
    args = ap.parse_args()
    opts = OpenOptions(cache_dir=args.cache_dir)
    print("## Timeline (issue 5)\n")
    if args.report.exists():
        trace = open_trace(args.report, opts)
        k, a = trace.table("kernels").num_rows, trace.table("api").num_rows
        t0 = time.perf_counter()
        lanes = build_lanes(trace)
        index_s = time.perf_counter() - t0
        lanes.prefault()  # the viewer does this in the background after its first screen
        print(f"{args.report.name}: {k:,} kernels, {a:,} API calls, {len(lanes.lanes)} lanes")
        print(f"- lane index built in {index_s:.2f} s (once per open)")
        print(f"- frame of {COLUMNS} columns x {LANES} lanes, median / max of {args.frames}:")
        for label, med, worst in frame_costs(lanes, args.frames):
            print(f"  - {label}: {med:.2f} ms / {worst:.2f} ms")
    else:
        print(f"(skipped frames: {args.report} is missing)")
    if args.first.exists():
        open_trace(args.first, opts)  # make sure the cache entry exists
        model = statistics.median(first_screen_model(args.first, args.cache_dir) for _ in range(3))
        app = statistics.median(first_screen_app(args.first, args.cache_dir) for _ in range(3))
        print(f"- first screen from cache, {args.first.name}, fresh process, median of 3:")
        print(f"  - open + index + first frame: {model:.2f} s")
        print(f"  - the app, headless, until the timeline is drawn: {app:.2f} s")
    else:
        print(f"(skipped first screen: {args.first} is missing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
