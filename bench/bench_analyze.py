"""Wall time of `tuiperf analyze` on a big report: load (cached) + every rule.

usage: python bench/bench_analyze.py [REPORT ...]   (default: bench/data/vit_range_x400.sqlite)
Prints one line per rule and the total; the first run also converts into bench/tmp/cache.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.findings import Skip
from tuiperf.analysis.rules import nsys as nsys_rules
from tuiperf.analysis.rules import pytorch as torch_rules
from tuiperf.load.open import OpenOptions, open_trace

ROOT = Path(__file__).resolve().parent
DEFAULT = ROOT / "data" / "vit_range_x400.sqlite"


def bench(path: Path) -> None:
    opts = OpenOptions(cache_dir=ROOT / "tmp" / "cache")
    t0 = time.perf_counter()
    trace = open_trace(path, opts)
    t1 = time.perf_counter()
    print(
        f"{path.name}: {trace.table('kernels').num_rows:,} kernels, "
        f"{trace.table('api').num_rows:,} API rows; open {t1 - t0:.2f} s "
        f"({'cache' if trace.meta.from_cache else 'converted'})"
    )
    ctx = Ctx(trace)
    t = time.perf_counter()
    _ = ctx.steps, ctx.gpu_busy
    print(f"  {'shared (steps, GPU union)':<28} {time.perf_counter() - t:7.3f} s")
    rules = [(r, lambda f=f: f(ctx, nsys_rules.NsysOptions())) for r, f in nsys_rules.RULES.items()]
    rules += [(r, lambda f=f: f(ctx)) for r, f in torch_rules.RULES.items()]
    for rid, call in rules:
        t = time.perf_counter()
        try:
            n = sum(f.count for f in call())
        except Skip:
            n = -1
        print(f"  {rid:<28} {time.perf_counter() - t:7.3f} s  {n:>9,} flagged")
    t = time.perf_counter()
    res = analyze(trace)
    print(
        f"  analyze() end to end        {time.perf_counter() - t:7.3f} s, "
        f"{len(res.findings)} findings"
    )


if __name__ == "__main__":
    for p in sys.argv[1:] or [str(DEFAULT)]:
        bench(Path(p))
