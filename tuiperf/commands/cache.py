"""`tuiperf cache list|clear`: what the conversion cache holds, and freeing it.

Imports neither pyarrow nor numpy: it reads manifests and file sizes only.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tuiperf.commands.base import Command

DESCRIPTION = """\
Each report tuiperf opens is converted once into the cache (Arrow files, memory-mapped
later). `list` shows every entry: when it was last used, its size on disk, its schema
version ('old' entries are never read again: a newer tuiperf converts anew) and the report
it came from. `clear` removes every entry, or those of one report; an entry a running
tuiperf has open is kept. --cache-max SIZE (or TUIPERF_CACHE_MAX) on any command that
opens a report keeps the cache under SIZE, removing the least recently used entries.

examples:
  tuiperf cache list
  tuiperf cache list --format json
  tuiperf cache clear run.nsys-rep
  tuiperf cache clear
"""


def prepare(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="cache_action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the entries, least recently used first, and the total")
    ls.add_argument("-f", "--format", choices=("table", "json"), default="table")
    ls.add_argument("--json", dest="format", action="store_const", const="json")
    clear = sub.add_parser("clear", help="remove every entry, or REPORT's")
    clear.add_argument(
        "report_path", metavar="REPORT", type=Path, nargs="?", help="only this report's entries"
    )
    for sp in (ls, clear):
        sp.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
        sp.add_argument(
            "--cache-dir",
            type=Path,
            metavar="DIR",
            help="the cache (default: $TUIPERF_CACHE_DIR or $XDG_CACHE_HOME/tuiperf)",
        )


def _root(args: argparse.Namespace) -> Path:
    from tuiperf.load.cache.key import default_root

    return args.cache_dir or default_root()


def listing(root: Path) -> dict[str, Any]:
    """The JSON of `cache list` (keys in docs/cache.md)."""
    from tuiperf.load.cache.entries import list_entries
    from tuiperf.load.cache.usage import cap_bytes

    found = list_entries(root)
    return {
        "root": str(root),
        "entries": [
            {
                "report": e.source,
                "entry": str(e.path),
                "bytes": e.disk_bytes,
                "apparent_bytes": e.apparent_bytes,
                "last_used": _iso(e.last_used_ns),
                "last_used_ns": e.last_used_ns,
                "schema_version": e.schema_version,
                "current": e.current,
            }
            for e in found
        ],
        "total_bytes": sum(e.disk_bytes for e in found),
        "cap_bytes": cap_bytes(None),
    }


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).isoformat(timespec="seconds")


def _clear(root: Path, report: Path | None) -> int:
    from tuiperf.load.cache.entries import list_entries, remove, sources_match
    from tuiperf.report.cache import mib

    chosen = [e for e in list_entries(root) if report is None or sources_match(e, report)]
    gone = [e for e in chosen if remove(e.path)]
    kept = len(chosen) - len(gone)
    what = f" of {report}" if report is not None else ""
    if not chosen:
        print(f"no cache entries{what} in {root}")
        return 0
    freed = sum(e.disk_bytes for e in gone)
    print(f"removed {_entries(len(gone))}{what} ({mib(freed)}) from {root}")
    if kept:
        print(f"kept {_entries(kept)} a running tuiperf has open")
    return 0


def _entries(n: int) -> str:
    return "1 entry" if n == 1 else f"{n} entries"


def run(args: argparse.Namespace) -> int:
    root = _root(args)
    if args.cache_action == "clear":
        return _clear(root, args.report_path)
    data = listing(root)
    if args.format == "json":
        import json

        sys.stdout.write(json.dumps(data, indent=1) + "\n")
        return 0
    from tuiperf.report.cache import listing_text

    sys.stdout.write(listing_text(data))
    return 0


COMMAND = Command(
    name="cache",
    help="list or clear the conversion cache",
    description=DESCRIPTION,
    prepare=prepare,
    run=run,
)
