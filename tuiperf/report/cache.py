"""`tuiperf cache list` as text: one line per entry, least recently used first, and a total."""

from __future__ import annotations

import time
from typing import Any

_HEAD = ("last used", "size", "schema", "report")


def mib(n: int) -> str:
    """Bytes in binary units, as --cache-max reads them: `812.4 MiB`, `3.20 GiB`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            digits = 2 if unit == "GiB" else 1
            return f"{n / scale:.{digits}f} {unit}"
    return f"{n} B"


def when(ns: int) -> str:
    """A last-use time in local time, to the minute."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ns / 1e9))


def listing_text(listing: dict[str, Any]) -> str:
    """The text of `listing` (commands.cache.listing's dict)."""
    rows = [
        (
            when(e["last_used_ns"]),
            mib(e["bytes"]),
            _schema(e),
            e["report"],
        )
        for e in listing["entries"]
    ]
    lines = []
    if rows:
        widths = [max(len(r[i]) for r in [_HEAD, *rows]) for i in range(3)]
        for r in [_HEAD, *rows]:
            cells = [c.ljust(w) for c, w in zip(r, widths, strict=False)]
            lines.append("  ".join([*cells, r[3]]))
        lines.append("")
    lines.append(_total(listing))
    return "\n".join(lines) + "\n"


def _schema(e: dict[str, Any]) -> str:
    v = e["schema_version"]
    if v is None:
        return "damaged"
    return str(v) if e["current"] else f"{v} (old)"


def _total(listing: dict[str, Any]) -> str:
    n = len(listing["entries"])
    what = "1 entry" if n == 1 else f"{n} entries"
    text = f"{what}, {mib(listing['total_bytes'])} in {listing['root']}"
    cap = listing["cap_bytes"]
    return text + (f" (cap {mib(cap)})" if cap is not None else " (no cap)")
