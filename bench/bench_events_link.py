"""Events table <-> timeline link on tiled reports: matches, highlights, selection sync.

Prints what one user action costs on the UI thread (or in the matches worker):
building the matches of a filter, the first and later frames of the highlighted lane,
one n/N step, and one cursor move in the table (locate on the timeline, details, and the
row lookup the timeline -> table direction does).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.attribution import NvtxIndex, describe
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.timeline.query import Events, Query
from tuiperf.model.timeline.viewport import Viewport
from tuiperf.tui.viewstate.matches import Matches
from tuiperf.tui.widgets.lane_render import frame_edges

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data"
COLUMNS = 160


def ms(fn: Callable[[], object], repeat: int = 5) -> tuple[float, float]:
    """(first, median of the rest) in ms."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times[0], statistics.median(times[1:]) if len(times) > 1 else times[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", nargs="?", type=Path, default=DATA / "vit_range_x400.sqlite")
    ap.add_argument("--cache-dir", type=Path, default=REPO / "bench" / "tmp" / "cache")
    ap.add_argument("--filter", default="gemm")
    args = ap.parse_args()
    if not args.report.exists():
        print(f"(skipped: {args.report} is missing)")
        return 0
    trace = open_trace(args.report, OpenOptions(cache_dir=args.cache_dir))
    lanes = build_lanes(trace)
    events = Events(trace)
    n = trace.table("kernels").num_rows
    print("## Events table <-> timeline (issue 6)\n")
    print(f"{args.report.name}: {n:,} kernels")
    view = events.run(Query(text=args.filter))
    everything = events.run(Query())
    first, _ = ms(lambda: Matches.from_view(view), 1)
    print(f"- matches of filter {args.filter!r} ({len(view):,} rows), worker: {first:.1f} ms")
    first, _ = ms(lambda: Matches.from_view(everything), 1)
    print(f"- matches of the unfiltered table, worker: {first:.1f} ms")
    m = Matches.from_view(view)
    first, _ = ms(lambda: Matches.from_view(view).prepare(lanes.lanes), 1)
    print(f"- the same with every kernels lane's highlight arrays, worker: {first:.1f} ms")
    li = max(
        (i for i, lane in enumerate(lanes.lanes) if lane.table == "kernels"),
        key=lambda i: len(lanes.lanes[i].iv),
    )
    iv = lanes.lanes[li].iv
    full = Viewport.fit(lanes.lo, lanes.hi, COLUMNS)
    zoomed = full.fit_range(int(iv.starts[len(iv) // 2]), int(iv.ends[len(iv) // 2] + 200_000))
    for label, vp in (("whole profile", full), ("zoomed to ~200 µs", zoomed)):
        edges = frame_edges(vp)
        fresh = Matches.from_view(view)
        first, later = ms(lambda f=fresh, e=edges: f.cells(li, iv, e), 6)  # type: ignore[misc]
        print(
            f"- highlight of the busiest kernels lane ({len(iv):,} events), {label}: "
            f"first frame without the worker's arrays {first:.2f} ms, then {later:.3f} ms"
        )
    rows = m.rows
    t_mid = float(m.starts[len(rows) // 2]) if len(rows) else 0.0
    _, step = ms(lambda: m.step(t_mid, int(rows[len(rows) // 2]), 1), 20)
    print(f"- one n/N step: {step:.3f} ms")
    index = NvtxIndex(trace)
    rng = np.random.default_rng(0)
    picks = rng.integers(0, n, 20).tolist()
    it = iter(picks * 2)
    _, locate = ms(lambda: lanes.locate(trace, "kernels", next(it)), 20)
    it = iter(picks * 2)
    _, details = ms(lambda: describe(trace, "kernels", next(it), index), 20)
    it = iter(picks * 2)
    _, pos = ms(lambda: everything.position_of(next(it)), 20)
    print(
        f"- one cursor move in the table: locate on the timeline {locate:.2f} ms, "
        f"details {details:.2f} ms; timeline -> table row lookup {pos:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
