"""The one-line header: report name, devices, time range and load/cache state."""

from __future__ import annotations

import re

from rich.text import Text
from textual.widgets import Static

from tuiperf.model import fmt
from tuiperf.model.fmt import clean
from tuiperf.model.trace import Trace


class ReportHeader(Static):
    def show_loading(self, name: str, phase: str) -> None:
        self.update(Text.assemble((f" {clean(name)} ", "bold"), (f" loading: {phase}", "dim")))

    def show_trace(
        self, name: str, trace: Trace, ascii_only: bool = False, busy: list[str] | None = None
    ) -> None:
        self.update(header_text(name, trace, ascii_only, busy or []))


def header_text(
    name: str, trace: Trace, ascii_only: bool = False, busy: list[str] | None = None
) -> Text:
    """`busy`: what converts or writes in the background now (said after the cache state)."""
    dot = " | " if ascii_only else " · "
    parts = [(f" {clean(name)}", "bold")]
    devices = trace.table("devices")
    names = [clean(n or "") for n in devices["name"].to_pylist()] if devices.num_rows else []
    if names:
        uniq = sorted(set(names))
        text = ", ".join(f"{names.count(n)}× {n}" if names.count(n) > 1 else n for n in uniq)
        parts.append((dot + text, ""))
    rng = trace.time_range()
    if rng is not None:
        a, b = rng
        span = fmt.duration_sig(b - a, ascii_only, 3)
        dash = "-" if ascii_only else "–"
        parts.append(
            (
                f"{dot}{fmt.time_point(a, b - a, ascii_only)}{dash}"
                f"{fmt.time_point(b, b - a, ascii_only)} ({span})",
                "",
            )
        )
    state = cache_state(trace)
    parts.append((f"{dot}{state}", "dim"))
    if busy:
        more = "..." if ascii_only else "…"
        parts.append((f"{dot}{', '.join(busy)}{more}", "yellow"))
    return Text.assemble(*parts, no_wrap=True, overflow="ellipsis")


_ENTRY = re.compile(r"-[0-9a-f]{16}-[0-9a-f]{16}$")


def cache_state(trace: Trace) -> str:
    meta = trace.meta
    if meta.from_cache:
        return "loaded from cache"
    if meta.cache_path and _ENTRY.search(meta.cache_path):
        return "converted, now cached"
    if meta.cache_path:
        return "tuiperf folder"
    return "not cached"
