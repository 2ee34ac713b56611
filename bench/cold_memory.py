"""What the memory of a cold first screen is: anonymous memory vs mapped cache pages.

usage: .venv/bin/python bench/cold_memory.py REPORT
Converts REPORT into an empty cache and splits its lanes (what the viewer does before its
first frame: `open_trace`, then `build_lanes(keep=False)`), in this process, while a thread
samples /proc/self/status every 20 ms: peak RSS (VmHWM), and the peaks of RssAnon (the
process's own memory) and RssFile (pages of memory-mapped files: the cache entry's tables,
clean page cache that the kernel can drop and read again). Prints one line per phase.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.lanes import build_lanes


def status(pid: str = "self") -> dict[str, int]:
    """VmHWM, RssAnon and RssFile of process `pid` in MiB (raises OSError once it is gone)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmHWM", "RssAnon", "RssFile"):
            out[key] = int(rest.split()[0]) // 1024
    return out


class Sampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = {"RssAnon": 0, "RssFile": 0}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            s = status()
            for k in self.peak:
                self.peak[k] = max(self.peak[k], s[k])
            time.sleep(0.02)


def main() -> None:
    report = Path(sys.argv[1])
    size = report.stat().st_size / 2**20
    sampler = Sampler()
    sampler.start()
    with tempfile.TemporaryDirectory(prefix="tuiperf-mem-", dir=Path(__file__).parent / "tmp") as c:
        t0 = time.perf_counter()
        trace = open_trace(report, OpenOptions(cache_dir=Path(c)))
        t1 = time.perf_counter()
        conv = dict(sampler.peak) | {"VmHWM": status()["VmHWM"]}
        build_lanes(trace, keep=False)
        t2 = time.perf_counter()
        sampler.stop.set()
        sampler.join()
        end = dict(sampler.peak) | {"VmHWM": status()["VmHWM"]}
    print(f"report {report.name}: {size:,.0f} MiB")
    for name, secs, p in (("conversion", t1 - t0, conv), ("+ lanes", t2 - t1, end)):
        print(f"{name}: {secs:.1f} s; peak RSS {p['VmHWM']:,} MiB ({p['VmHWM'] / size:.2f}x); "
              f"peak anonymous {p['RssAnon']:,} MiB ({p['RssAnon'] / size:.2f}x), "
              f"peak mapped files {p['RssFile']:,} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
