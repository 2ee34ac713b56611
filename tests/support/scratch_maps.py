"""Whether memory lies in a cache entry's scratch files (spill.zeros: unlinked `.spill-*`
files, memory-mapped), read from /proc/self/maps."""

from __future__ import annotations

from pathlib import Path


def in_scratch_file(address: int) -> bool:
    """Whether `address` lies in a mapping of an (unlinked) scratch file."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        span, *rest = line.split(maxsplit=5)
        lo, hi = (int(x, 16) for x in span.split("-"))
        if lo <= address < hi:
            return len(rest) == 5 and ".spill-" in rest[4]
    return False
