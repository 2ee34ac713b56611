"""Fewer glibc malloc arenas while SQLite exports are read by several threads.

glibc gives each thread that allocates under contention an arena of its own, and an
arena keeps the memory freed into it. The reader threads (connectorx halves, read-ahead)
allocate and free whole record batches, so each arena ends up holding batches' worth
of pages: at 1M kernels the peak RSS of a conversion was 545-585 MiB with the default
arenas and 465-475 MiB with two, at the same speed.
"""

from __future__ import annotations

import ctypes
import sys

_M_ARENA_MAX = -8  # glibc's malloc.h
_done = False


def limit_arenas(count: int = 2) -> None:
    """At most `count` arenas from now on (glibc only; elsewhere nothing happens)."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return
    _done = True
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # musl and others: no mallopt
        return
    mallopt(_M_ARENA_MAX, count)
