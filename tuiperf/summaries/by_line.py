"""GPU time and syncs by source line (issue 22): the `by_line` summary.

One row per user frame (model.callsites: the innermost frame of a stack that is the
user's code) that issued anything:

* Calls / Call Time: host calls carrying that stack (nsys: CUDA API calls with a Python
  backtrace; Kineto: cpu_ops called straight from Python, not those inside another op);
* Launches / GPU Time: kernels whose launching call has that user frame;
* Syncs / Sync Wait: blocking CUDA calls (stream/device/event synchronize, cudaMemcpy)
  with that user frame, and the time the CPU spent in them.

`Source Line` names the file less the folder all rows share; `File` is the path as recorded.

Rows: most GPU time first, then most sync wait, then most calls. Empty without stacks.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays as A
from tuiperf.model.timeline import callsites as C
from tuiperf.model.trace import Trace
from tuiperf.summaries.stats import Column, StatsTable

REPORT = "by_line"
TITLE = "GPU time and syncs by source line"

#: CUDA calls that block the CPU until the GPU has caught up
SYNC_API = re.compile(
    r"^(cudaStreamSynchronize|cudaDeviceSynchronize|cudaEventSynchronize|cudaMemcpy"
    r"|cuStreamSynchronize|cuCtxSynchronize|cuEventSynchronize|cuMemcpyDtoH|cuMemcpyHtoD)"
    r"(_v\d+)?$"
)

COLUMNS = [
    Column("Source Line", "site", "str"),
    Column("Function", "function", "str"),
    Column("Calls", "calls", "int"),
    Column("Call Time (ns)", "call_ns", "int"),
    Column("Launches", "launches", "int"),
    Column("GPU Time (ns)", "gpu_ns", "int"),
    Column("Syncs", "syncs", "int"),
    Column("Sync Wait (ns)", "sync_ns", "int"),
    Column("File", "file", "str"),
]
_VALUES = ("calls", "call_ns", "launches", "gpu_ns", "syncs", "sync_ns")


def by_line(trace: Trace) -> StatsTable:
    totals: dict[C.Site, list[int]] = {}
    calls = trace.table("callsites")
    if calls.num_rows:
        direct = ~np.asarray(calls["nested"].fill_null(False).to_numpy(zero_copy_only=False))
        _add(trace, totals, "callsites", direct, A.ints(calls, "duration"), 0)
        k = trace.table("kernels")
        _add(trace, totals, "kernels", np.ones(k.num_rows, bool), A.ints(k, "duration"), 2)
        api = trace.table("api")
        sync = A.name_mask(api, "name", SYNC_API)
        _add(trace, totals, "api", sync, A.ints(api, "duration"), 4)
    sites = sorted(totals, key=lambda s: (-totals[s][3], -totals[s][5], -totals[s][0],
                                          s.file, s.line))  # fmt: skip
    short = short_paths([s.file for s in sites])
    cols: dict[str, pa.Array] = {
        "site": pa.array([f"{short[s.file]}:{s.line}" for s in sites], pa.string()),
        "function": pa.array([s.function for s in sites], pa.string()),
    }
    for i, key in enumerate(_VALUES):
        cols[key] = pa.array([totals[s][i] for s in sites], pa.int64())
    cols["file"] = pa.array([s.file for s in sites], pa.string())
    return StatsTable(REPORT, COLUMNS, pa.table(cols))


def short_paths(files: list[str]) -> dict[str, str]:
    """Each path less the folder all of them share (`/work/x/train.py` -> `train.py`)."""
    uniq = sorted(set(files))
    absolute = [f for f in uniq if f.startswith("/")]
    if len(absolute) != len(uniq) or not uniq:
        return {f: f for f in uniq}
    folder = os.path.commonpath([os.path.dirname(f) for f in uniq])
    cut = len(folder.rstrip("/")) + 1
    return {f: f[cut:] for f in uniq}


def _add(
    trace: Trace,
    totals: dict[C.Site, list[int]],
    table: str,
    keep: np.ndarray,
    duration: np.ndarray,
    at: int,
) -> None:
    """Count the kept rows of `table` and sum their durations into columns at, at+1."""
    rows = C.site_rows(trace, table)
    ok = keep & (rows >= 0)
    if not ok.any():
        return
    frames = C.frames_of(trace)
    uniq, inv = np.unique(rows[ok], return_inverse=True)
    count = np.bincount(inv)
    time = np.bincount(inv, weights=duration[ok])
    for u, n, t in zip(uniq.tolist(), count.tolist(), time.tolist(), strict=True):
        site = frames.site(int(u))
        if site is None:
            continue
        row = totals.setdefault(site, [0] * len(_VALUES))
        row[at] += int(n)
        row[at + 1] += round(t)
