"""One block of memory that a conversion's whole-table columns reuse, table after table.

A conversion builds each big table in columns sized for all its rows, writes it to the
cache and drops it; the next table wants as much memory again. Fresh pages are what a
conversion pays most for on a VM: the host backs a guest page only when it is first
touched, and pages the guest frees are handed back to it (free page reporting), so
each new page of a result costs a fault in the guest and often one in the host. Reusing
the block the last table was built in, once nothing refers to it, keeps those pages.
"""

from __future__ import annotations

import sys

import numpy as np

#: references to a free block: the pool's attribute and getrefcount's own argument
_FREE_REFS = 2


class ColumnPool:
    """Hands out one zeroed block at a time; a block comes back once unreferenced."""

    def __init__(self) -> None:
        self._block: np.ndarray | None = None

    def take(self, nbytes: int) -> np.ndarray:
        """A zeroed uint8 block of at least `nbytes`.

        The previous block is reused only when no array made from it is alive (numpy
        views keep their base alive, and Arrow arrays over them keep the views): a table
        still referenced (returned to the caller, kept in a Trace) is never written over.
        """
        if (
            self._block is not None
            and len(self._block) >= nbytes
            and sys.getrefcount(self._block) == _FREE_REFS
        ):
            self._block[:nbytes] = 0
            return self._block
        # let go of the old block first: one in use stays with its table, a free one too
        # small is freed before the new one is allocated, not after
        self._block = None
        self._block = np.zeros(max(nbytes, 1), dtype=np.uint8)  # calloc: untouched till written
        return self._block
