"""Column buffers of a conversion kept in files, not in the process's memory (issue 37).

A conversion into the cache assembles each big table column by column (nsys.assemble),
then writes it out (cache.store). With a spill folder set for the thread (`into`, set by
the cache's entry writer) and a table too big for the memory available (`folder`), the
assembler's columns are memory-mapped files (created and
unlinked at once, so nothing is left behind) and the pages written, or read by the writer,
are dropped from the process as they go (`MADV_DONTNEED`: on a shared file mapping the
data stays in the file and the page cache, which the kernel can write back and reclaim
under pressure). The process then holds about one batch of each column, not the table.
"""

from __future__ import annotations

import contextlib
import contextvars
import mmap
import os
import tempfile
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

_folder: contextvars.ContextVar[Path | None] = contextvars.ContextVar("spill", default=None)

#: live spill mappings: start address -> (length, mapping); a mapping leaves this registry
#: when its last array goes (finalizer)
_maps: dict[int, tuple[int, weakref.ref[mmap.mmap]]] = {}
_lock = threading.Lock()
_PAGE = mmap.PAGESIZE


@contextlib.contextmanager
def into(folder: Path) -> Iterator[None]:
    """Spill the big columns assembled in this thread into `folder` (a cache entry's
    temporary folder) while the block runs."""
    token = _folder.set(folder)
    try:
        yield
    finally:
        _folder.reset(token)


#: a table is spilled when it would take more than this share of the memory available
SHARE = 0.25


def folder(nbytes: int) -> Path | None:
    """Where this thread's conversion spills a table of `nbytes` (None: it keeps it in
    memory). Only a table that would take more than SHARE of the memory available now is
    spilled: spilling trades memory for page-cache writes, and once the dirty pages pass
    the kernel's threshold they are written to disk (a 20M-kernel conversion spilled whole
    took 1.5x the time for half the peak memory, bench/real_1m.md)."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return None  # not Linux/BSD: nothing is gained
    where = _folder.get()
    if where is None or nbytes <= SHARE * available():
        return None
    return where


def available() -> int:
    """Bytes of memory available for new work: the machine's (MemAvailable: free memory
    plus the page cache the kernel can reclaim; free pages where /proc/meminfo is missing),
    or less where this process's memory cgroup (a container) leaves less."""
    room = _cgroup_room()
    machine = _machine_available()
    return machine if room is None else min(machine, room)


def _machine_available() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 1 << 62  # unknown: keep tables in memory


def _cgroup_room(
    proc: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")
) -> int | None:
    """Limit less usage of this process's memory cgroup (v2, else v1); None: no limit."""
    try:
        lines = proc.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if controllers == "":
            files = (root / path.lstrip("/"), "memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            base = root / "memory" / path.lstrip("/")
            files = (base, "memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        try:
            limit = (files[0] / files[1]).read_text().strip()
            used = int((files[0] / files[2]).read_text().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 1 << 60:
            return max(int(limit) - used, 0)
    return None


def zeros(n: int, dtype: Any, where: Path) -> np.ndarray:
    """`n` zeros of `dtype` in an unlinked file under `where`, memory-mapped (shared); in
    memory where the file cannot be made, or its space not reserved (a full disk, a file
    system without fallocate): a store into a mapping the disk cannot hold would kill the
    process (SIGBUS), so the blocks are allocated first."""
    dt = np.dtype(dtype)
    size = max(n * dt.itemsize, 1)
    try:
        fd, path = tempfile.mkstemp(dir=where, prefix=".spill-")
    except OSError:
        return np.zeros(n, dtype=dt)
    try:
        os.unlink(path)
        os.posix_fallocate(fd, 0, size)  # reads as zeros; the blocks are the file's now
        mm = mmap.mmap(fd, size)
    except (OSError, ValueError, AttributeError):
        return np.zeros(n, dtype=dt)
    finally:
        os.close(fd)
    start = int(np.frombuffer(mm, np.uint8).ctypes.data)
    with _lock:
        _maps[start] = (size, weakref.ref(mm))
    arr = np.frombuffer(mm, dtype=dt, count=n)
    weakref.finalize(mm, _forget, start)  # when the last array over it goes
    return arr


def _forget(start: int) -> None:
    with _lock:
        _maps.pop(start, None)


def active() -> bool:
    return bool(_maps)


def drop(address: int, length: int) -> None:
    """Drop the whole pages of [address, address+length) that lie in a spill mapping from
    the process (their data stays in the file)."""
    if length <= 0 or not _maps:
        return
    with _lock:
        hits = [
            (s, ln, ref)
            for s, (ln, ref) in _maps.items()
            if s < address + length and address < s + ln
        ]
    for s, ln, ref in hits:
        mm = ref()
        if mm is None:
            continue
        lo = max(address, s) - s
        hi = min(address + length, s + ln) - s
        lo = -(-lo // _PAGE) * _PAGE  # whole pages only: a neighbour may still be written
        hi = hi // _PAGE * _PAGE if hi < ln else ln
        if hi > lo:
            with contextlib.suppress(ValueError, OSError):  # closed meanwhile
                mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def drop_rows(arr: np.ndarray, lo: int, hi: int) -> None:
    """Drop rows lo..hi-1 of a spilled array (written: they are in the file now)."""
    if _maps:
        drop(int(arr.ctypes.data) + lo * arr.itemsize, (hi - lo) * arr.itemsize)


def drop_buffers(buffers: Iterator[Any]) -> None:
    """Drop every page of these pyarrow buffers that lies in a spill mapping."""
    if not _maps:
        return
    for b in buffers:
        if b is not None:
            drop(int(b.address), int(b.size))
