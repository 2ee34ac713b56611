"""The file sink cache files are written through: zeros become holes, and direct I/O
when asked for.

- Holes. A column that is null in every row (return values, green contexts, external
  ids) is a buffer of zeros. Skipped with a seek, it reads back as zeros (memory-mapped
  too) and takes no disk.
- Direct I/O, opt-in (TUIPERF_DIRECT_IO=1). A conversion writes its whole result once
  and reads back a few columns; through the page cache every byte written also takes a
  page of memory, which on some VMs costs more than the write (bench/notes.md). With
  the variable set, on a local Linux file system, the bytes bypass the page cache
  (O_DIRECT); network file systems (where every direct write is a round trip) and file
  systems that refuse the flag get ordinary buffered writes. Either way data goes
  through one staging buffer, reused.
"""

from __future__ import annotations

import errno
import mmap
import os
import threading
from pathlib import Path

import numpy as np

from tuiperf import settings
from tuiperf.load import spill

#: staging buffer: the unit of direct writes and of holes (a multiple of any block size)
_CHUNK = 1 << 20
#: direct writes end on a multiple of this (the largest logical block size in use)
_BLOCK = 4096
#: file systems where O_DIRECT is not a win (every write becomes a round trip)
_NETWORK_FS = (
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "ceph",
    "lustre",
    "gpfs",
    "glusterfs",
    "afs",
    "beegfs",
    "virtiofs",
)


class FileSink:
    """Write-only file object for `pa.PythonFile` (write, tell, flush, close)."""

    def __init__(self, path: Path) -> None:
        self._direct = _direct_io_ok(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
        if self._direct:
            try:
                self._fd = os.open(path, flags | os.O_DIRECT, 0o666)
            except OSError:
                self._direct = False
        if not self._direct:
            self._fd = os.open(path, flags, 0o666)
        self._stage = _take_stage()
        self._view = memoryview(self._stage)
        self._fill = 0  # bytes waiting in the staging buffer
        self._pos = 0  # bytes written or skipped before them
        self.closed = False

    def write(self, data: bytes | memoryview) -> int:
        view = memoryview(data).cast("B")
        n = view.nbytes
        # a spilled column (load.spill): its pages leave the process once copied
        base = mark = _address(view) if n >= _CHUNK and spill.active() else None
        done = 0
        while done < n:
            take = min(n - done, _CHUNK - self._fill)
            self._view[self._fill : self._fill + take] = view[done : done + take]
            self._fill += take
            done += take
            if base is not None and mark is not None:
                spill.drop(mark, base + done - mark)  # whole pages up to here
                mark = max(mark, (base + done) // mmap.PAGESIZE * mmap.PAGESIZE)
            if self._fill == _CHUNK:
                self._flush_chunk(_CHUNK)
        return n

    def tell(self) -> int:
        return self._pos + self._fill

    def flush(self) -> None:
        """Nothing: the staging buffer goes out when full, and at close."""

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            end = self._pos + self._fill
            if self._fill:
                padded = -(-self._fill // _BLOCK) * _BLOCK
                self._view[self._fill : padded] = bytes(padded - self._fill)
                self._flush_chunk(padded)
            os.ftruncate(self._fd, end)  # drops the padding; a trailing hole counts too
        finally:
            os.close(self._fd)
            self._view.release()
            _give_back(self._stage)

    def _flush_chunk(self, size: int) -> None:
        chunk = self._view[:size]
        if np.frombuffer(chunk, np.uint8).any():
            os.lseek(self._fd, self._pos, os.SEEK_SET)
            self._write_all(chunk)
        self._pos += self._fill
        self._fill = 0

    def _write_all(self, chunk: memoryview) -> None:
        done = 0
        while done < len(chunk):
            try:
                done += os.write(self._fd, chunk[done:])
            except OSError as e:
                if not (self._direct and e.errno == errno.EINVAL):
                    raise
                self._buffered()  # the file system took the flag but not the write

    def _buffered(self) -> None:
        import fcntl

        fl = fcntl.fcntl(self._fd, fcntl.F_GETFL)
        fcntl.fcntl(self._fd, fcntl.F_SETFL, fl & ~os.O_DIRECT)
        self._direct = False


#: staging buffers between uses: each new one is 256 fresh pages to fault in
_spare: list[mmap.mmap] = []
_spare_lock = threading.Lock()


def _take_stage() -> mmap.mmap:
    with _spare_lock:
        if _spare:
            return _spare.pop()
    return mmap.mmap(-1, _CHUNK)  # page-aligned, as O_DIRECT wants


def _give_back(stage: mmap.mmap) -> None:
    with _spare_lock:
        if len(_spare) < 2:
            _spare.append(stage)
            return
    stage.close()


def _address(view: memoryview) -> int:
    return int(np.frombuffer(view, np.uint8).ctypes.data)


def _direct_io_ok(path: Path) -> bool:
    """Direct I/O was asked for (TUIPERF_DIRECT_IO=1), O_DIRECT exists here and the folder
    of `path` is not on a network file system."""
    if not hasattr(os, "O_DIRECT") or not settings.direct_io():
        return False
    fstype = _fs_type(path.parent)
    return fstype is not None and fstype not in _NETWORK_FS and not fstype.startswith("fuse")


def _fs_type(folder: Path) -> str | None:
    """The type of the file system `folder` is on, from /proc/self/mountinfo (Linux)."""
    try:
        target = os.path.realpath(folder)
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    best, kind = "", None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, after = left.split(), right.split()
        if len(fields) < 5 or not after:
            continue
        mount = fields[4].replace("\\040", " ")
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best, kind = mount, after[0]
    return kind
