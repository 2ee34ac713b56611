"""How deeply ranges nest, per thread: the depth column of the nvtx table, shared by the
Nsight Systems reader (nsys/nvtx_depth.py) and the Kineto reader (kineto/tables.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def nesting_depth(t: pa.Table) -> pa.Array:
    """Per thread, how many ranges enclose each range (0 = outermost).

    Rows must be sorted by start, then end descending. A range's depth is the
    number of earlier-starting ranges of its thread that have not ended yet.
    Marks (no end) get depth 0.
    """
    n = t.num_rows
    depth = np.zeros(n, dtype=np.int32)
    if n == 0:
        return pa.array(depth)
    tid = t["tid"].fill_null(-1).to_numpy(zero_copy_only=False)
    pid = t["pid"].fill_null(-1).to_numpy(zero_copy_only=False)
    key = (pid.astype(np.int64) << 24) | (tid.astype(np.int64) & 0xFFFFFF)
    is_range = ~pc.is_null(t["end"]).to_numpy(zero_copy_only=False)
    starts = t["start"].to_numpy(zero_copy_only=False)
    ends = t["end"].fill_null(0).to_numpy(zero_copy_only=False)
    ranges = np.flatnonzero(is_range)
    order = ranges[np.argsort(key[ranges], kind="stable")]
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for idx in np.split(order, bounds):
        s, e = starts[idx], ends[idx]
        ended = np.searchsorted(np.sort(e), s, side="right")
        depth[idx] = np.arange(len(idx)) - ended
    return pa.array(np.maximum(depth, 0))
