"""The cache's entries as a whole: list them, free them, keep them under a size cap.

An entry is a folder of the cache root named `<stem>-<16 hex>-<16 hex>` (key.CacheKey);
nothing else in the root is ever listed or removed here (temporary folders of conversions
in progress start with a dot, exports live in `exports/`), so a wrong --cache-dir cannot
lose anything that is not a cache entry. Sizes are what the files take on disk (allocated
blocks: the zero runs file_sink leaves as holes take none).

Removal renames the entry to a temporary name first (`.tmp-<pid>-evict-...`, swept like a
dead conversion's folder if this process dies before it is gone), so a process opening it
meanwhile sees either the whole entry or none (and converts again), never half of one.
An entry some process holds (usage.hold) is never removed.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tuiperf.errors import CacheError
from tuiperf.load.cache import usage
from tuiperf.load.cache.key import MANIFEST, SCHEMA_VERSION

_ENTRY_NAME = re.compile(r".+-[0-9a-f]{16}-[0-9a-f]{16}")


@dataclass(frozen=True)
class Entry:
    path: Path
    #: the report it was converted from (resolved path; older entries: as it was given)
    source: str
    #: bytes the entry's files take on disk, and their apparent (listed) sizes
    disk_bytes: int
    apparent_bytes: int
    last_used_ns: int
    #: the manifest's schema version; None when it cannot be read (a damaged entry)
    schema_version: int | None

    @property
    def current(self) -> bool:
        return self.schema_version == SCHEMA_VERSION


def is_entry(p: Path) -> bool:
    return _ENTRY_NAME.fullmatch(p.name) is not None and p.is_dir()


def sizes(folder: Path) -> tuple[int, int]:
    """(bytes on disk, apparent bytes) of the files under `folder`."""
    disk = apparent = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue  # removed meanwhile
            apparent += st.st_size
            disk += _allocated(st)
    return disk, apparent


def _allocated(st: os.stat_result) -> int:
    blocks = getattr(st, "st_blocks", None)
    return st.st_size if blocks is None else blocks * 512


def describe(path: Path) -> Entry:
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    source, version = _source_and_version(manifest)
    disk, apparent = sizes(path)
    return Entry(path, source or path.name, disk, apparent, usage.last_used_ns(path), version)


def _source_and_version(manifest: object) -> tuple[str | None, int | None]:
    if not isinstance(manifest, dict):
        return None, None
    meta = manifest.get("meta")
    source = manifest.get("source") or (meta.get("source") if isinstance(meta, dict) else None)
    version = manifest.get("schema_version")
    return (
        source if isinstance(source, str) else None,
        version if isinstance(version, int) else None,
    )


def list_entries(root: Path) -> list[Entry]:
    """Every entry under `root`, least recently used first."""
    try:
        found = [describe(p) for p in root.iterdir() if is_entry(p)]
    except FileNotFoundError:
        return []
    except OSError as e:  # not a folder, not readable
        raise CacheError(f"{root}: cannot read the cache ({e.strerror or e})") from e
    return sorted(found, key=lambda e: (e.last_used_ns, e.path.name))


def remove(entry: Path, in_use_too: bool = False) -> bool:
    """Remove `entry` unless a process holds it (`in_use_too`: even then, as for the entry
    of a report that has changed since); whether it went."""
    lock = usage.try_exclusive(entry)
    if lock is None and not in_use_too:
        return not entry.exists()
    trash = entry.parent / f".tmp-{os.getpid()}-evict-{secrets.token_hex(6)}"
    try:
        os.rename(entry, trash)
    except OSError:
        return not entry.exists()
    finally:
        if lock is not None:
            lock.close()
    shutil.rmtree(trash, ignore_errors=True)
    return True


def evict(root: Path, cap: int, keep: Iterable[str] = ()) -> list[Entry]:
    """Remove least recently used entries until those left take at most `cap` bytes;
    entries named in `keep` and entries in use stay (the cache may stay over its cap).
    Returns the entries removed."""
    entries = list_entries(root)
    total = sum(e.disk_bytes for e in entries)
    kept = set(keep)
    removed: list[Entry] = []
    for e in entries:
        if total <= cap:
            break
        if e.path.name in kept:
            continue
        if remove(e.path):
            removed.append(e)
            total -= e.disk_bytes
    return removed


def sources_match(entry: Entry, report: Path) -> bool:
    """Whether `entry` was converted from `report` (its resolved path; for entries written
    before manifests named it, the path as it was given, resolved from here)."""
    want = str(report.expanduser().resolve())
    return entry.source == want or str(Path(entry.source).expanduser().resolve()) == want
