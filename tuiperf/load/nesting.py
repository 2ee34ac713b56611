"""How deeply ranges nest, per thread: the depth column of the nvtx table, shared by the
Nsight Systems reader (nsys/nvtx_depth.py) and the Kineto reader (kineto/tables.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model.arrays import as_int64, from_numpy, valid


def nesting_depth(t: pa.Table) -> pa.Array:
    """Per thread, how many ranges enclose each range (0 = outermost).

    Rows must be sorted by start, then end descending. A range's depth is the
    number of earlier-starting ranges of its thread that have not ended yet.
    Marks (no end) get depth 0.
    """
    n = t.num_rows
    depth = np.zeros(n, dtype=np.int32)
    if n == 0:
        return from_numpy(depth)
    # (read from Arrow's buffers: `to_numpy` and `fill_null` import pandas; model/arrays.py)
    tid = as_int64(t["tid"], -1)
    pid = as_int64(t["pid"], -1)
    key = (pid << 24) | (tid & 0xFFFFFF)
    is_range = valid(t["end"])
    starts = _times(t["start"])
    ends = _times(t["end"])
    ranges = np.flatnonzero(is_range)
    order = ranges[np.argsort(key[ranges], kind="stable")]
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for idx in np.split(order, bounds):
        s, e = starts[idx], ends[idx]
        ended = np.searchsorted(np.sort(e), s, side="right")
        depth[idx] = np.arange(len(idx)) - ended
    return from_numpy(np.maximum(depth, 0))


def _times(col: pa.ChunkedArray) -> np.ndarray:
    """Integer times as int64 (nulls 0); other types as pyarrow converts them."""
    if pa.types.is_integer(col.type):
        return as_int64(col, 0)
    return pc.fill_null(col, 0).to_numpy(zero_copy_only=False)
