"""The first screen's loading alone, in one process with nothing beside it: the loader's
import, the report opened from its cache entry, its lanes indexed (seconds), as one line;
with a third argument, the open's profile too. usage: PYTHONPATH=TREE python
open_alone.py REPORT CACHE_DIR [profile]"""

import cProfile
import pstats
import sys
import time
from pathlib import Path

t0 = time.perf_counter()
from tuiperf.load.open import OpenOptions, open_trace  # noqa: E402  (the import is timed)
from tuiperf.model.timeline.lanes import build_lanes  # noqa: E402

t1 = time.perf_counter()
pr = cProfile.Profile()
if len(sys.argv) > 3:
    pr.enable()
trace = open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2])))
t2 = time.perf_counter()
build_lanes(trace)
t3 = time.perf_counter()
pr.disable()
print(f"import {t1 - t0:.3f} open {t2 - t1:.3f} lanes {t3 - t2:.3f}")
if len(sys.argv) > 3:
    pstats.Stats(pr).sort_stats("tottime").print_stats(18)
    pstats.Stats(pr).sort_stats("cumulative").print_stats(25)
