"""The caching allocator's block sizes, as the replay (stream.py) gives allocations them.

A snapshot's trace records the bytes each allocation *asked for*; PyTorch's allocated
counter (`torch.cuda.memory_allocated`) counts the *block* the caching allocator gave
it. The block is the request rounded up to MIN_BLOCK bytes, unless the free block it
came from is not split (what is left would be under MIN_BLOCK in the small pool, or not
over SMALL_SIZE in the large pool): then it is that whole free block, which runs from the
allocation's address to the next block still in use in its segment, or the segment's
end (PyTorch's CUDACachingAllocator: round_size, should_split). torch.profiler's and
nsys's events already carry block / cudaMalloc sizes.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

#: PyTorch's kMinBlockSize: every block is a multiple of it
MIN_BLOCK = 512
#: PyTorch's kSmallSize: requests up to it come from the small pool
SMALL_SIZE = 1 << 20


def round_size(n: int) -> int:
    return MIN_BLOCK if n < MIN_BLOCK else MIN_BLOCK * ((n + MIN_BLOCK - 1) // MIN_BLOCK)


def block_size(requested: int, extent: int | None) -> int:
    """The block an allocation of `requested` bytes takes from a free block of `extent`."""
    rounded = round_size(requested)
    if extent is None or extent < rounded:
        return rounded
    remaining = extent - rounded
    small = rounded <= SMALL_SIZE
    split = remaining >= MIN_BLOCK if small else remaining > SMALL_SIZE
    return rounded if split else extent


@dataclass
class Replayed:
    """Per event (rows of one device, in order): the totals after it; per allocation
    event: its block size and the event that freed it (-1: still live at the end)."""

    allocated: np.ndarray
    reserved: np.ndarray
    requested: np.ndarray
    block: np.ndarray
    freed_at: np.ndarray


class _Segments:
    def __init__(self) -> None:
        self.starts: list[int] = []
        self.size: dict[int, int] = {}

    def add(self, addr: int, size: int) -> None:
        if addr not in self.size:
            bisect.insort(self.starts, addr)
        self.size[addr] = size

    def drop(self, addr: int) -> None:
        if self.size.pop(addr, None) is not None:
            self.starts.pop(bisect.bisect_left(self.starts, addr))

    def end_of(self, addr: int) -> int | None:
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            return None
        s = self.starts[i]
        end = s + self.size[s]
        return end if addr < end else None
