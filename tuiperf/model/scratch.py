"""Where what a reopen computes from a big table goes: the process's own memory, or the
cache entry's scratch files (Cache.scratch: unlinked, memory-mapped, page cache that the
kernel can write back and reclaim) once it would pass `scratch_from()` bytes.

Two users: the lanes of a big table (model/timeline/lane_cache.py: starts, ends, busy sums)
and the columns a cache entry stores narrow, widened to their canonical types on first use
(model/stored_columns.py): 2.3 GiB of kernel columns at 51.2M kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tuiperf import settings

#: makes an uninitialized array (n, dtype): np.empty, or a file-backed one
Alloc = Callable[[int, Any], np.ndarray]

#: what passes this many bytes goes into scratch files. None: a sixteenth of the machine's
#: memory, at least 1 GiB (1.5 GiB on the 24 GiB VM: the API table's lanes at 51.2M
#: kernels, not at 20.5M; bench/big_tables_wide.md)
SCRATCH_FROM: int | None = None


def scratch_from() -> int:
    if SCRATCH_FROM is not None:
        return SCRATCH_FROM
    return max(1 << 30, settings.physical_memory() // 16)


def allocator(trace: Any, nbytes: int) -> Alloc:
    """np.empty, or (`nbytes` over `scratch_from()`, and `trace` read through a cache
    entry) arrays in the entry's scratch files."""
    scratch = getattr(trace.cache, "scratch", None)
    key = trace.cache_key
    if scratch is None or key is None or nbytes <= scratch_from():
        return np.empty
    return lambda n, dtype: scratch(key, n, dtype)
