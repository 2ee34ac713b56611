"""Nsight Systems' packed thread and process ids: globalTid (HW:8 | VM:8 | PID:24 | TID:24)
and globalPid split into pid and tid columns.

Below the readers that need them (tables, nvtx_depth, pybt), so none of those
imports another for these.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tuiperf.model.arrays import filled, from_numpy, valid

_PID_MASK = 0xFFFFFF


def _packed(global_id: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """The ids as int64 (nulls as 0) and where they are null (None: nowhere), read from
    Arrow's buffers (`to_numpy` imports pandas when it is installed)."""
    chunks = global_id.chunks if isinstance(global_id, pa.ChunkedArray) else [global_id]
    if not chunks or pa.types.is_null(global_id.type):
        n = len(global_id)
        return np.zeros(n, np.int64), (np.ones(n, bool) if n else None)
    parts = [filled(c, 0) for c in chunks]
    arr = parts[0] if len(parts) == 1 else np.concatenate(parts)
    null = ~valid(global_id) if global_id.null_count else None
    if arr.dtype.kind == "f":  # a NaN id is no id, as a null is
        nan = np.isnan(arr)
        if nan.any():
            null = nan if null is None else null | nan
            arr = np.where(nan, 0, arr)
    return arr.astype(np.int64, copy=False), null


def pid_tid(global_tid: pa.ChunkedArray) -> tuple[pa.Array, pa.Array]:
    """Both halves of globalTid (HW:8 | VM:8 | PID:24 | TID:24) from one read."""
    arr, null = _packed(global_tid)
    return from_numpy((arr >> 24) & _PID_MASK, null), from_numpy(arr & _PID_MASK, null)


def pid_of(global_id: pa.ChunkedArray) -> pa.Array:
    arr, null = _packed(global_id)
    return from_numpy((arr >> 24) & _PID_MASK, null)


def tid_of(global_tid: pa.ChunkedArray) -> pa.Array:
    arr, null = _packed(global_tid)
    return from_numpy(arr & _PID_MASK, null)
