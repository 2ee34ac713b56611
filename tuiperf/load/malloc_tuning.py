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
- No transparent huge pages for numpy's big arrays. numpy asks for them (madvise) on
  every allocation of 4 MiB or more; where the kernel's THP defrag setting is `madvise`
  (a common default) the first fault in such an array then compacts memory to find a
  free 2 MiB page, synchronously. Once the page cache holds a report that took seconds:
  filling a 320 MiB array cost 3.3-3.7 s (2.3-3.0 s of it system time) against 0.2 s
  with 4 KiB pages, and a 1M-kernel conversion spent 0.8-1.8 s in the kernel against
  0.6-0.7 s without (interleaved runs). A conversion touches each of its arrays once,
  so the larger pages never pay that back.
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
    """At most `arenas` arenas, batch-sized blocks kept in the heap, and 4 KiB pages for
    numpy's arrays, from now on (Linux only; the malloc part on glibc only)."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return
    _done = True
    _no_numpy_hugepages()
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # musl and others: no mallopt
        return
    mallopt(_M_ARENA_MAX, arenas)
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)


def _no_numpy_hugepages() -> None:
    import numpy as np

    core = getattr(np, "_core", None) or getattr(np, "core", None)
    toggle = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if toggle is not None:
        toggle(False)
