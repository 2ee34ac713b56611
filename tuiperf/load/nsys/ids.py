"""Nsight Systems' packed thread and process ids: globalTid (HW:8 | VM:8 | PID:24 | TID:24)
and globalPid split into pid and tid columns.

Below the readers that need them (tables, nvtx_depth, pybt), so none of those
imports another for these.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_PID_MASK = 0xFFFFFF


def pid_tid(global_tid: pa.ChunkedArray) -> tuple[pa.Array, pa.Array]:
    """Both halves of globalTid (HW:8 | VM:8 | PID:24 | TID:24) from one pass."""
    if global_tid.null_count:
        return pid_of(global_tid), tid_of(global_tid)
    arr = global_tid.to_numpy(zero_copy_only=False)
    arr = arr.astype(np.int64, copy=False)
    return pa.array((arr >> 24) & _PID_MASK), pa.array(arr & _PID_MASK)


def pid_of(global_id: pa.ChunkedArray) -> pa.Array:
    arr = global_id.to_numpy(zero_copy_only=False)
    if arr.dtype.kind == "f":  # nulls present
        return pa.array((np.nan_to_num(arr).astype(np.int64) >> 24) & _PID_MASK, mask=np.isnan(arr))
    return pa.array((arr.astype(np.int64) >> 24) & _PID_MASK)


def tid_of(global_tid: pa.ChunkedArray) -> pa.Array:
    arr = global_tid.to_numpy(zero_copy_only=False)
    if arr.dtype.kind == "f":
        return pa.array(np.nan_to_num(arr).astype(np.int64) & _PID_MASK, mask=np.isnan(arr))
    return pa.array(arr.astype(np.int64) & _PID_MASK)
