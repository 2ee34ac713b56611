"""When a cache entry was last used, and whether a process has it open; no pyarrow.

Each entry holds an empty file, LAST_USED: its mtime is the entry's last use (touched when
the entry is opened: one `utime`, never a rewrite), and a process that has the entry open
keeps a shared `flock` on it for as long as it holds the tables (`hold`). Eviction takes
an exclusive lock without waiting (`try_exclusive`): an entry in use is skipped. Where
flock does not exist (Windows) or fails (some network file systems), nothing is locked and
entries are still only removed by renaming them away first (see entries.remove).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import IO

from tuiperf import settings
from tuiperf.errors import UsageError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: the entry's last-use stamp and lock file
LAST_USED = "last-used"

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?", re.IGNORECASE)


def parse_size(text: str, what: str = "--cache-max") -> int:
    """Bytes from '500M', '2G', '1.5GiB', '4096' (K, M, G, T are powers of 1024); a bad
    or non-positive size is a UsageError naming `what`."""
    m = _SIZE.fullmatch(text.strip())
    size = int(float(m.group(1)) * _UNITS[m.group(2).upper()]) if m else 0
    if size <= 0:
        raise UsageError(
            f"{what}: {text!r} is not a size (a number of bytes, or with K, M, G or T: "
            "500M, 20G); to keep nothing use --no-cache"
        )
    return size


def cap_bytes(given: int | None) -> int | None:
    """The cache's size cap: `given` (--cache-max), else $TUIPERF_CACHE_MAX, else none."""
    if given is not None:
        return given
    env = settings.cache_max()
    return None if env is None else parse_size(env, "TUIPERF_CACHE_MAX")


def stamp(entry: Path) -> Path:
    return entry / LAST_USED


def touch(entry: Path) -> None:
    """Mark `entry` used now (silently nothing if it cannot be written)."""
    with contextlib.suppress(OSError):
        try:
            os.utime(stamp(entry))
        except FileNotFoundError:
            stamp(entry).touch()


def last_used_ns(entry: Path) -> int:
    """The entry's last use: its stamp's mtime, else its manifest's (entries written before
    stamps existed), else the folder's."""
    for p in (stamp(entry), entry / "manifest.json", entry):
        try:
            return p.stat().st_mtime_ns
        except OSError:
            continue
    return 0


def hold(entry: Path) -> IO[bytes] | None:
    """Touch `entry` and keep a shared lock on it while the returned file stays open (the
    caller keeps it as long as it uses the entry); None where that cannot be done."""
    try:
        f = open(stamp(entry), "ab")  # noqa: SIM115 (kept open on purpose)
    except OSError:
        return None
    try:
        os.utime(f.fileno())
        if fcntl is not None:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH)
    except OSError:
        pass  # a stamp that cannot be locked still dates the entry
    return f


def try_exclusive(entry: Path) -> IO[bytes] | None:
    """An exclusive lock on `entry` if no process holds it (the file; close it to release),
    else None. Without flock every entry counts as free."""
    try:
        f = open(stamp(entry), "ab")  # noqa: SIM115
    except OSError:
        return None
    if fcntl is None:
        return f
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # held: in use
        f.close()
        return None
    except OSError:
        pass  # no locks on this file system
    return f
