"""Issue 20.1: what the viewer does after `nsys export` ends, on a finished arrowdir export:
convert into an empty cache (open_trace), then index the lanes (build_lanes); three rounds
timed, the last one profiled. usage: python post_export.py ARROWDIR OUT"""

from __future__ import annotations

import cProfile
import io
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

pa.array([0]).to_numpy()  # as in the loader, imported while nsys works
import tuiperf.load.nsys.meta  # noqa: E402
import tuiperf.load.nsys.tables  # noqa: E402,F401
from tuiperf.load.open import OpenOptions, open_trace  # noqa: E402
from tuiperf.model.timeline.lanes import build_lanes  # noqa: E402


def main() -> None:
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    lines = []
    prof = cProfile.Profile()
    with tempfile.TemporaryDirectory() as work:
        for i in range(3):
            cache = Path(work) / f"c{i}"
            if i == 2:
                prof.enable()
            t = time.perf_counter()
            trace = open_trace(src, OpenOptions(cache_dir=cache))
            t1 = time.perf_counter()
            build_lanes(trace)
            t2 = time.perf_counter()
            prof.disable()
            lines.append(f"round {i + 1}: convert {t1 - t:.3f} s, lanes {t2 - t1:.3f} s")
            shutil.rmtree(cache)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(30)
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(40)
    out.write_text("\n".join(lines) + "\n" + buf.getvalue())
    print("\n".join(lines))


if __name__ == "__main__":
    main()
