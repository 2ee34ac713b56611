"""Events-table benchmarks on a tiled report: sort, filter, first rows, scroll frame, export.

usage: .venv/bin/python bench/bench_query.py [REPORT] [--cache-dir DIR] [--rows 50]

Targets (issue 6, on about 5M kernels): sort <= 1 s, filter <= 1 s, first rows of a
re-sorted table <= 50 ms, a scroll frame <= 16 ms, headless export of 1M rows <= 2 s.
The first open converts the report into the cache (not timed as a query).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tuiperf.export import write_file  # noqa: E402
from tuiperf.load.open import OpenOptions, open_trace  # noqa: E402
from tuiperf.model import columns as C  # noqa: E402
from tuiperf.model.timeline.query import Events, Query  # noqa: E402

DEFAULT = REPO / "bench" / "data" / "vit_range_x2000.sqlite"
FALLBACK = REPO / "bench" / "data" / "vit_range_x400.sqlite"


def timed(label: str, fn: Callable[[], object], target: float | None = None) -> object:
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    mark = "" if target is None else ("  ok" if dt <= target else f"  OVER {target:g} s")
    print(f"{label:<52} {dt * 1000:9.1f} ms{mark}", flush=True)
    return out


def frame(view, specs, start: int, rows: int) -> list[list[str]]:  # type: ignore[no-untyped-def]
    end = min(start + rows, len(view))
    return [view.cells(p, specs) for p in range(start, end)]


def scroll(view, specs, rows: int, frames: int = 40) -> list[float]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    times = []
    for start in rng.integers(0, max(len(view) - rows, 1), frames):
        t0 = time.perf_counter()
        frame(view, specs, int(start), rows)
        times.append(time.perf_counter() - t0)
    return times


def tui_frames(trace, rows: int) -> None:  # type: ignore[no-untyped-def]
    """The widget itself: lines drawn after a re-sort, and scroll frames (cold row cache)."""
    import asyncio

    from textual.app import App

    from tuiperf.tui.widgets.events_table import EventsTable
    from tuiperf.tui.widgets.table_rows import EventRows, new_row_cache

    class Bench(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield EventsTable(trace)

    async def run() -> None:
        app = Bench()
        async with app.run_test(size=(160, rows + 4)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            pane = app.query_one(EventsTable)
            body = pane.body
            height = body.size.height
            for key, desc in (("duration", True), ("name", False), ("start", False)):
                view = pane.model.table("kernels").run(Query(sort=key, descending=desc))
                t0 = time.perf_counter()
                body.set_rows(EventRows(view, new_row_cache(), False), 0, key, desc)
                for y in range(height):
                    body.render_line(y)
                dt = time.perf_counter() - t0
                print(
                    f"{'widget: first ' + str(height) + ' lines after sort by ' + key:<52} "
                    f"{dt * 1000:9.1f} ms  {'ok' if dt <= 0.05 else 'OVER 0.05 s'}"
                )
            rng = np.random.default_rng(2)
            times = []
            for top in rng.integers(0, len(view) - height, 40):
                body.rows = EventRows(view, new_row_cache(), False)  # cold cache: the worst case
                body.scroll_to(y=int(top), animate=False)
                await pilot.pause()
                t0 = time.perf_counter()
                for y in range(height):
                    body.render_line(y)
                times.append(time.perf_counter() - t0)
            print(
                f"widget: scroll frame of {height} lines (cold rows): median "
                f"{statistics.median(times) * 1000:.2f} ms, max {max(times) * 1000:.2f} ms  "
                f"{'ok' if max(times) <= 0.016 else 'OVER 16 ms'}"
            )

    asyncio.run(run())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("report", nargs="?", type=Path)
    ap.add_argument("--cache-dir", type=Path, default=REPO / "bench" / "tmp" / "cache")
    ap.add_argument("--rows", type=int, default=50, help="rows in a frame")
    args = ap.parse_args()
    path = args.report or (DEFAULT if DEFAULT.exists() else FALLBACK)
    opts = OpenOptions(cache_dir=args.cache_dir)
    print("load average at the start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    open_trace(path, opts)  # convert once
    trace = timed(f"open (cached) {path.name}", lambda: open_trace(path, opts))
    events = Events(trace)  # type: ignore[arg-type]
    kernels = events.table("kernels")
    print(f"kernels: {kernels.num_rows:,}")
    specs = C.fit(C.columns("kernels"), 160)

    timed(
        "columns + name codes (first use)",
        lambda: [kernels.column(s) for s in ("start", "end", "duration", "name")],
    )
    base = timed("default view (start order)", lambda: kernels.run(Query()))
    v = timed(
        "sort by duration desc (cold)",
        lambda: kernels.run(Query(sort="duration", descending=True)),
        1.0,
    )
    timed("first rows after re-sort", lambda: frame(v, specs, 0, args.rows), 0.050)
    v2 = timed("sort by name (cold)", lambda: kernels.run(Query(sort="name")), 1.0)
    timed("first rows after re-sort", lambda: frame(v2, specs, 0, args.rows), 0.050)
    t0 = time.perf_counter()
    kernels.warm(C.find("kernels", "grid").sources)  # type: ignore[union-attr]
    t1 = time.perf_counter()
    kernels.run(Query(sort="grid"))
    t2 = time.perf_counter()
    print(
        f"{'sort by grid (3 keys, cold)':<52} {(t2 - t0) * 1000:9.1f} ms"
        f"{'  ok' if t2 - t0 <= 1.0 else '  OVER 1 s'}  (reading the 3 columns "
        f"{(t1 - t0) * 1000:.0f} ms, sort {(t2 - t1) * 1000:.0f} ms)",
        flush=True,
    )
    timed(
        "re-sort by duration desc (cached)",
        lambda: kernels.run(Query(sort="duration", descending=True)),
        1.0,
    )
    f = timed(
        "filter 'gemm', sorted by duration desc",
        lambda: kernels.run(Query(text="gemm", sort="duration", descending=True)),
        1.0,
    )
    timed(
        "filter '!elementwise' + min 5 µs",
        lambda: kernels.run(Query(text="!elementwise", min_duration=5000)),
        1.0,
    )
    timed(
        "filter regex 'gemm|conv', start order",
        lambda: kernels.run(Query(text="gemm|conv", regex=True)),
        1.0,
    )
    lo, hi = trace.time_range() or (0, 1)  # type: ignore[attr-defined]
    timed(
        "filter window (middle 10 %)",
        lambda: kernels.run(Query(window=(lo + (hi - lo) * 45 // 100, lo + (hi - lo) * 55 // 100))),
        1.0,
    )
    print(f"  ('gemm' matched {len(f):,} of {len(base):,})")  # type: ignore[arg-type]

    for label, view in (("start order", base), ("duration desc", v), ("after warm-up", v)):
        if label == "after warm-up":
            timed(
                "warm-up: every shown column into numpy (a worker)",
                lambda: kernels.warm([s for c in C.columns("kernels") for s in c.sources]),
            )
        t = scroll(view, specs, args.rows)
        print(
            f"scroll frame, {args.rows} rows, {label}: median {statistics.median(t) * 1000:.2f} ms,"
            f" max {max(t) * 1000:.2f} ms  {'ok' if max(t) <= 0.016 else 'OVER 16 ms'}"
        )

    timed("summary over all kernels", lambda: kernels.summary(base))  # type: ignore[arg-type]
    timed("position_of (cursor after re-sort)", lambda: v.position_of(12345))  # type: ignore[union-attr]

    tui_frames(trace, args.rows)

    million = Query(sort="duration", descending=True)
    view = kernels.run(million)
    with tempfile.TemporaryDirectory(dir=REPO / "bench" / "tmp") as tmp:
        out = Path(tmp) / "k.csv"
        n = min(1_000_000, len(view))
        t0 = time.perf_counter()
        table = view.to_arrow(C.columns("kernels"), limit=n)
        t1 = time.perf_counter()
        write_file(out, table)
        t2 = time.perf_counter()
        dt = t2 - t0
        print(
            f"{'export ' + format(n, ',') + ' rows CSV (all kernel columns)':<52} "
            f"{dt * 1000:9.1f} ms  {'ok' if dt <= 2.0 else 'OVER 2 s'}"
            f"  (view -> Arrow {(t1 - t0) * 1000:.0f} ms, CSV write {(t2 - t1) * 1000:.0f} ms)"
        )
        print(f"  {out.stat().st_size / 1e6:.0f} MB")
    print("load average at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
