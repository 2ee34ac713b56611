"""Replay one device's allocator events into running totals.

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
from dataclasses import dataclass, field

import numpy as np

from tuiperf.load.gpumem import tables as T

#: PyTorch's kMinBlockSize: every block is a multiple of it
MIN_BLOCK = 512
#: PyTorch's kSmallSize: requests up to it come from the small pool
SMALL_SIZE = 1 << 20

_ALLOC, _FREE, _FREE_DONE, _SEG_ALLOC, _SEG_FREE = (
    T.ACTIONS.index(a) for a in (T.ALLOC, T.FREE, T.FREE_DONE, T.SEG_ALLOC, T.SEG_FREE)
)


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


def replay(action: np.ndarray, addr: np.ndarray, size: np.ndarray, exact: bool) -> Replayed:
    """`exact`: sizes are already block sizes (torch.profiler); else requests (snapshot)."""
    n = len(action)
    zeros = [np.zeros(n, np.int64) for _ in range(4)]
    out = Replayed(zeros[0], zeros[1], zeros[2], zeros[3], np.full(n, -1, np.int64))
    segs = _Segments()
    st = _State()
    for lo in range(0, n, CHUNK):  # Python ints a chunk at a time: memory stays flat
        hi = min(lo + CHUNK, n)
        rows = zip(action[lo:hi].tolist(), addr[lo:hi].tolist(), size[lo:hi].tolist())
        for i, (c, a, s) in enumerate(rows, lo):
            _step(st, out, segs, i, c, a, s, exact, size)
            out.allocated[i], out.reserved[i], out.requested[i] = st.alloc, st.resv, st.req
    return out


#: events turned into Python ints at a time
CHUNK = 1 << 16


@dataclass
class _State:
    alloc: int = 0
    resv: int = 0
    req: int = 0
    used: list[int] = field(default_factory=list)  # blocks in use or awaiting free, sorted
    live: dict[int, int] = field(default_factory=dict)  # addr -> its allocation's row


def _step(
    st: _State,
    out: Replayed,
    segs: _Segments,
    i: int,
    c: int,
    a: int,
    s: int,
    exact: bool,
    size: np.ndarray,
) -> None:
    if c == _ALLOC:
        b = s if exact else block_size(s, _extent(segs, st.used, a))
        out.block[i] = b
        st.alloc, st.req = st.alloc + b, st.req + s
        if a in st.live:
            _forget(st.used, a)
        st.live[a] = i
        bisect.insort(st.used, a)
    elif c == _FREE:
        j = st.live.get(a, -1)
        if j >= 0 and out.freed_at[j] < 0:
            out.freed_at[j] = i
            st.alloc -= int(out.block[j])
            st.req -= int(size[j])
        elif j < 0:  # allocated before the recording began
            st.alloc -= s if exact else round_size(s)
            st.req -= s
        if exact:
            st.live.pop(a, None)
            _forget(st.used, a)
    elif c == _FREE_DONE:
        if st.live.pop(a, None) is not None:
            _forget(st.used, a)
    elif c == _SEG_ALLOC:
        st.resv += s
        segs.add(a, s)
    elif c == _SEG_FREE:
        st.resv -= s
        segs.drop(a)


def _extent(segs: _Segments, used: list[int], addr: int) -> int | None:
    end = segs.end_of(addr)
    if end is None:
        return None
    k = bisect.bisect_right(used, addr)
    nxt = used[k] if k < len(used) else end
    return min(nxt, end) - addr


def _forget(used: list[int], addr: int) -> None:
    k = bisect.bisect_left(used, addr)
    if k < len(used) and used[k] == addr:
        used.pop(k)
