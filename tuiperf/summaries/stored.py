"""Summary reports kept as JSON in a cache entry, found again without loading a table.

`reports.compute_cached` keeps each computed report of up to MAX_ROWS rows as
`derived/summary-NAME.json` in the report's cache entry. `find` locates that entry from
the report path alone (format detection, the cache key, the manifest's schema
version) and reads the JSON back: reopening a report and printing a summary it
already computed imports neither pyarrow nor numpy. Any doubt (no entry, another
schema, a damaged file) answers None and the caller takes the ordinary path.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path

from tuiperf.errors import TuiperfError
from tuiperf.load import detect as det
from tuiperf.load.cache.key import MANIFEST, SCHEMA_VERSION, CacheKey, default_root
from tuiperf.load.cache.usage import touch
from tuiperf.summaries.rows import ReportRows, StoredReport, dumps, loads

#: bigger reports (cuda_gpu_trace of a long run) stay in Arrow only
MAX_ROWS = 10_000

_CACHED_KINDS = {det.NSYS_SQLITE, det.NSYS_PARQUETDIR, det.NSYS_ARROWDIR, det.NSYS_REP,
                 det.KINETO}  # fmt: skip


def stored_path(entry: Path, report: str) -> Path:
    return entry / "derived" / f"summary-{report}.json"


def entry_of(path: Path, cache_dir: Path | None) -> Path | None:
    """The complete cache entry `open_trace` would read for `path`, if there is one."""
    try:
        kind = det.detect(path)
        if kind == det.NSYS_REP:
            from tuiperf.load.nsys.rep import sibling_export

            sibling = sibling_export(path)
            if sibling is not None:
                path, kind = sibling, det.detect(sibling)
        if kind not in _CACHED_KINDS:
            return None
        entry = (cache_dir or default_root()) / CacheKey.for_source(path, kind).dirname
        manifest = json.loads((entry / MANIFEST).read_text())
    except (TuiperfError, OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("schema_version") != SCHEMA_VERSION:
        return None
    return entry


def table_rows(entry: Path, table: str) -> int:
    """Rows of canonical table `table` in cache entry `entry` (its manifest), 0 if unknown."""
    try:
        rows = json.loads((entry / MANIFEST).read_text())["tables"].get(table, 0)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return 0
    return rows if isinstance(rows, int) else 0


def find(path: Path, report: str, cache_dir: Path | None) -> StoredReport | None:
    entry = entry_of(path, cache_dir)
    return None if entry is None else read(entry, report)


def read(entry: Path, report: str) -> StoredReport | None:
    """The stored report, if there is one (the entry then counts as used now)."""
    try:
        text = stored_path(entry, report).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = loads(text, report)
    if found is not None:
        touch(entry)
    return found


def store(entry: Path, table: ReportRows, empty: bool, source: str) -> None:
    """Keep `table` beside the entry's tables (atomically; silently skipped on failure)."""
    if table.num_rows > MAX_ROWS:
        return
    final = stored_path(entry, table.report)
    tmp = final.parent / f".tmp-{os.getpid()}-{secrets.token_hex(8)}.json"
    try:
        text = dumps(table, empty, source)
        final.parent.mkdir(exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, final)
    except (OSError, TypeError, ValueError):  # a stored copy is an optimisation only
        with contextlib.suppress(OSError):
            tmp.unlink()
