"""glibc malloc settings for reading SQLite exports in row batches.

- Fewer arenas. glibc gives each thread that allocates under contention an arena of
  its own, and an arena keeps the memory freed into it. The reader threads allocate and
  free whole record batches, so each arena ends up holding batches' worth of pages: at
  1M kernels the peak RSS of a conversion was 545-585 MiB with the default arenas and
  465-475 MiB with two, at the same speed.
- Batch-sized blocks from the heap. By default a block over 128 KiB is a fresh mmap,
  returned on free, so each temporary array of a batch (64k rows x 8 bytes) costs a page
  fault per 4 KiB, every time: the page reader's gathers ran 3x slower for it (19 -> 6 ns
  a row) and a 1M-kernel conversion took 60-67k faults instead of ~50k. Up to 4 MiB now
  comes from the heap, and up to 128 MiB freed at its top is kept for the next batch.
"""

from __future__ import annotations

import ctypes
import sys

_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_MMAP_THRESHOLD = 4 << 20
_TRIM_THRESHOLD = 128 << 20
_done = False


def tune_malloc(arenas: int = 2) -> None:
    """At most `arenas` arenas, and batch-sized blocks kept in the heap, from now on
    (glibc only; elsewhere nothing happens)."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return
    _done = True
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # musl and others: no mallopt
        return
    mallopt(_M_ARENA_MAX, arenas)
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
