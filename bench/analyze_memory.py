"""Where `tuiperf analyze`'s memory goes: peak RSS and time per rule, in the engine's order.

usage: python bench/analyze_memory.py REPORT [--trace RULE] [--top N] [--cache-dir DIR]

Each step runs in one process, as `analyze()` runs them (the first rule to build a shared
result, such as the step budget, is charged for it). Before each step the process's peak
RSS is reset (`/proc/self/clear_refs` 5), so a step's peak is its own: "peak +" is its peak
over the RSS it started at, "kept +" the RSS it leaves behind, split into anonymous memory
(arrays) and file pages (the cache entry is memory-mapped: columns read are counted in RSS
as clean, reclaimable page cache). With --trace RULE, that step
runs under tracemalloc (numpy buffers are traced, Arrow's are not) and the allocation sites
of its peak and of what it keeps are printed.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa

from tuiperf.analysis import engine
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import Skip
from tuiperf.analysis.gpumem import trace_rules as memory_rules
from tuiperf.analysis.rules import nsys as nsys_rules
from tuiperf.analysis.rules import pytorch
from tuiperf.load.open import OpenOptions, open_trace

MIB = 1 << 20


def _status() -> dict[str, int]:
    """/proc/self/status's memory fields, in bytes."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.startswith(("Vm", "Rss")) and value.strip().endswith("kB"):
            out[key] = int(value.split()[0]) * 1024
    return out


def _rss() -> tuple[int, int]:
    """(current, peak) RSS in bytes."""
    st = _status()
    return st["VmRSS"], st["VmHWM"]


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def _steps(ctx: Ctx) -> list[tuple[str, Callable[[], Any]]]:
    opts = nsys_rules.NsysOptions()
    steps: list[tuple[str, Callable[[], Any]]] = [
        (rid, partial(fn, ctx, opts)) for rid, fn in nsys_rules.RULES.items()
    ]
    steps += [(rid, partial(fn, ctx)) for rid, fn in pytorch.RULES.items()]
    steps += [(rid, partial(fn, ctx)) for rid, fn in memory_rules.RULES.items()]
    steps.append(("(run facts)", partial(engine._facts, ctx)))
    steps.append(("(budget)", lambda: ctx.budget))
    return steps


def _traced(call: Callable[[], Any], top: int) -> Any:
    tracemalloc.start(8)
    try:
        out = call()
    except Skip:
        out = None
    _, peak = tracemalloc.get_traced_memory()
    snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    print(f"  tracemalloc: peak {peak / MIB:.1f} MiB; kept after the step, by site:")
    for st in snap.statistics("traceback")[:top]:
        print(f"    {st.size / MIB:8.1f} MiB {st.count:>7} blocks")
        for line in st.traceback.format()[-6:]:
            print(f"        {line}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--trace", help="run this step under tracemalloc")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--cache-dir", type=Path)
    ap.add_argument(
        "--numpy",
        action="store_true",
        help="trace every step (tracemalloc: numpy and Python objects) and Arrow's pool",
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    trace = open_trace(args.report, OpenOptions(cache_dir=args.cache_dir))
    ctx = Ctx(trace)
    cur, peak = _rss()
    print(f"open {time.perf_counter() - t0:.2f} s, RSS {cur / MIB:.0f} MiB (peak {peak / MIB:.0f})")
    print(
        f"{'step':<28} {'s':>7} {'peak +MiB':>10} {'kept +MiB':>10} {'anon +MiB':>10} "
        f"{'file +MiB':>10} {'RSS MiB':>8}"
        + (f" {'np peak+':>9} {'np kept+':>9} {'arrow+':>8}" if args.numpy else "")
    )
    if args.numpy:
        tracemalloc.start(1)
    top_peak = peak
    for rid, call in _steps(ctx):
        gc.collect()
        st0 = _status()
        before = st0["VmRSS"]
        if args.numpy:
            np0, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            pa0 = pa.total_allocated_bytes()
        _reset_peak()
        t = time.perf_counter()
        if rid == args.trace:
            out = _traced(call, args.top)
        else:
            try:
                out = call()
            except Skip:
                out = None
        dt = time.perf_counter() - t
        del out
        gc.collect()
        st = _status()
        cur, peak = st["VmRSS"], st["VmHWM"]
        top_peak = max(top_peak, peak)
        anon = (st["RssAnon"] - st0["RssAnon"]) / MIB
        mapped = (st["RssFile"] - st0["RssFile"]) / MIB
        print(
            f"{rid:<28} {dt:7.3f} {(peak - before) / MIB:10.1f} "
            f"{(cur - before) / MIB:10.1f} {anon:10.1f} {mapped:10.1f} {cur / MIB:8.0f}",
            end="",
        )
        if args.numpy:
            np1, np_peak = tracemalloc.get_traced_memory()
            print(
                f" {(np_peak - np0) / MIB:9.1f} {(np1 - np0) / MIB:9.1f} "
                f"{(pa.total_allocated_bytes() - pa0) / MIB:8.1f}",
                end="",
            )
        print()
    print(f"total {time.perf_counter() - t0:.2f} s, peak RSS {top_peak / MIB:.0f} MiB")


if __name__ == "__main__":
    main()
