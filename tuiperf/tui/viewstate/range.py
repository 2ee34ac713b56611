"""Which time range the range statistics (`R` on the timeline) are about, and what the
screen shows of them: the marked range (`[` `]`) when both ends are marked, else the
selected event's span (an NVTX range or step, a kernel, a call), else the visible window.
The statistics themselves are `tuiperf.analysis.budget.window.range_stats`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pyarrow as pa

from tuiperf.model import fmt
from tuiperf.summaries.table import StatsTable
from tuiperf.tui.viewstate.timeline import TimelineState

#: the sections of the range table, in the order shown, with their titles
SECTION_TITLES = {
    "gpu": "GPU (share of the range)",
    "kernels": "Kernels",
    "api": "CUDA API",
    "memory": "Memory copies and sets",
    "nvtx": "NVTX ranges",
    "osrt": "OS runtime",
    "metrics": "GPU metrics (mean of the samples in the range)",
}


@dataclass(frozen=True)
class RangeChoice:
    """[lo, hi) ns of the report's clock, and where it came from, in words."""

    lo: int
    hi: int
    source: str

    def title(self, clip: bool, ascii_only: bool = False) -> str:
        span = fmt.duration(self.hi - self.lo)
        counted = "clipped to the range" if clip else "counted whole"
        sep = "-" if ascii_only else "–"
        return (f"Range {span} ({self.source}: {self.lo:,}{sep}{self.hi:,} ns) · events "
                f"crossing an edge {counted}")  # fmt: skip


def choose_range(state: TimelineState) -> RangeChoice | None:
    """The range `R` is about; None when the timeline shows nothing."""
    marked = state.marked_range
    if marked is not None:
        lo, hi = math.floor(marked[0]), math.ceil(marked[1])
        return RangeChoice(lo, hi, "marked range")
    sel = state.selection
    if sel is not None and sel.end > sel.start:
        return RangeChoice(sel.start, sel.end, _selected(state, sel.table, sel.row))
    if state.lanes is None:
        return None
    lo, hi = math.floor(state.vp.start), math.ceil(state.vp.end)
    return RangeChoice(lo, max(hi, lo + 1), "visible window")


def _selected(state: TimelineState, table: str, row: int) -> str:
    """`selected NVTX range step 5`, `selected kernel`, ..."""
    what = {"nvtx": "NVTX range", "kernels": "kernel", "api": "CUDA API call"}
    kind = what.get(table, table)
    if state.trace is None:
        return f"selected {kind}"
    t = state.trace.table(table)
    col = "text" if table == "nvtx" else "name"
    if col not in t.column_names:
        return f"selected {kind}"
    name = t[col][row].as_py()
    return f"selected {kind} {fmt.clean(str(name))[:40]}" if name else f"selected {kind}"


def sections(table: StatsTable) -> list[tuple[str, pa.Table]]:
    """The range table split by section, in SECTION_TITLES order (empty ones left out)."""
    out = []
    sec = table.data["section"].to_pylist()
    for key in SECTION_TITLES:
        idx = [i for i, s in enumerate(sec) if s == key]
        if idx:
            out.append((key, table.data.take(pa.array(idx, pa.int64()))))
    return out
