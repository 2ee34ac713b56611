"""Where a source's cache entry lives, computed without importing pyarrow.

An entry is keyed by the source's resolved path, size and mtime, the loader and
SCHEMA_VERSION; `summary` reads a stored result by this key before it decides to
load any table (see summaries/stored.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuiperf import settings

#: bump whenever a canonical schema (tuiperf/schema.py) or what TraceMeta holds changes: old
#: entries are then rebuilt (9: TraceMeta.untraced_step_ns; 10: cpu_samples, sample_stacks,
#: thread_state; 11: gpu_metrics; 12: a timeline's tables stored narrow, load/cache/narrow.py)
SCHEMA_VERSION = 12

MANIFEST = "manifest.json"


def default_root() -> Path:
    env = settings.cache_dir()
    if env is not None:
        return env
    return (settings.xdg_cache_home() or Path.home() / ".cache") / "tuiperf"


def identity(path: Path) -> dict[str, Any]:
    """What makes a source 'the same file': resolved path, size and mtime."""
    p = path.resolve()
    if p.is_dir():
        size, mtime = 0, 0
        for f in sorted(p.iterdir()):
            st = f.stat()
            size += st.st_size
            mtime = max(mtime, st.st_mtime_ns)
        return {"path": str(p), "size": size, "mtime_ns": mtime, "dir": True}
    st = p.stat()
    return {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _hash(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CacheKey:
    stem: str
    path_hash: str
    ident_hash: str
    #: the source's resolved path, written into the entry's manifest (`tuiperf cache list`)
    source: str = field(default="", compare=False)

    @classmethod
    def for_source(cls, path: Path, loader: str) -> CacheKey:
        ident = identity(path)
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", path.name)[:40] or "report"
        path_hash = _hash([ident["path"], loader])
        return cls(stem, path_hash, _hash([ident, loader, SCHEMA_VERSION]), ident["path"])

    @property
    def dirname(self) -> str:
        return f"{self.stem}-{self.path_hash}-{self.ident_hash}"
