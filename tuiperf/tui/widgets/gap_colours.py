"""GPU idle gaps coloured by cause on the timeline (the step budget's idle parts).

A toggle (`b` on the timeline): the header row of the budget device's GPU group shows, in
each column, the colour and glyph of the cause of the GPU's idle time there (data wait,
host sync, CPU-bound issue, other), once per GPU, with a legend in the status line, so the
bar in the fixes panel can be found on the timeline.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.style import Style

from tuiperf.analysis.budget.step_budget import IDLE_PARTS, SHORT, Budget
from tuiperf.analysis.intervals import Union
from tuiperf.model.timeline.lanes import Group, Lane, LaneSet
from tuiperf.report.budget import GLYPH, STYLE
from tuiperf.tui.widgets.lane_render import EMPTY

#: style ids of the causes (lane_render's own ids are below 10)
FIRST_SID = 10
#: glyphs that carry the cause without colour: the step budget bar's, none of them a busy
#: glyph of the timeline (█ ▓ ░, # = .)
ASCII_GAP = {"data": "d", "sync": "s", "cpu_bound": "c", "other": "_"}
GPU_TABLES = ("kernels", "memcpy", "memset", "graphs")
#: the legend's words on a narrow status line
TINY = {"data": "data", "sync": "sync", "cpu_bound": "CPU", "other": "other"}


class GapColours:
    """Per-column idle causes of one device, drawn on that device's GPU lanes."""

    def __init__(self, budget: Budget, ascii_only: bool = False) -> None:
        d = budget.main
        self.device = d.device
        self.unions = [Union.of(*d.idle_causes[p]) for p in IDLE_PARTS if p in d.idle_causes]
        self.parts = [p for p in IDLE_PARTS if p in d.idle_causes]
        glyphs = ASCII_GAP if ascii_only else GLYPH
        self.glyphs = [glyphs[p] for p in self.parts]
        self.styles = {FIRST_SID + i: Style(color=STYLE[p]) for i, p in enumerate(self.parts)}
        #: the steady steps' span: the budget's causes are about it (start-up idle time is not
        #: a step's), so nothing outside it is painted
        steps = d.steps
        self.window = (
            (min(s.start_ns for s in steps), max(s.end_ns for s in steps)) if steps else (0, 0)
        )

    def applies(self, lane: Lane) -> bool:
        return lane.table in GPU_TABLES and lane.place.get("device") == self.device

    def applies_group(self, group: Group, lanes: LaneSet) -> bool:
        """The group of the budget device's GPU lanes: its header row shows the causes,
        once per GPU (each lane of its own would paint a one-event memset stream whole)."""
        return any(self.applies(lanes.lanes[i]) for i in group.lanes)

    def cells(self, edges: np.ndarray) -> tuple[list[str], np.ndarray]:
        """The header row's cells: the cause of the GPU's idle time in each column."""
        chars = [" "] * (len(edges) - 1)
        sids = np.full(len(chars), EMPTY, dtype=np.int8)
        self.paint(edges, chars, sids)
        return chars, sids

    def paint(self, edges: np.ndarray, chars: list[str], sids: np.ndarray) -> None:
        """Empty cells take the cause that holds most of their time in the steady steps."""
        if not self.unions:
            return
        lo, hi = self.window
        a, b = np.clip(edges[:-1], lo, hi), np.clip(edges[1:], lo, hi)
        time = np.stack([u.busy(a, b) for u in self.unions])
        cause = np.argmax(time, axis=0)
        cols = np.flatnonzero((sids == EMPTY) & (time.max(axis=0) > 0))
        for c in cols.tolist():
            k = int(cause[c])
            chars[c] = self.glyphs[k]
            sids[c] = FIRST_SID + k

    def legend(self) -> str:
        return ", ".join(f"{g} {SHORT[p]}" for p, g in zip(self.parts, self.glyphs, strict=True))

    def key_line(self, short: bool = False) -> str:
        """The status line's legend, `GPU idle: ┈ data wait ╳ host sync ▚ CPU-bound`, or
        `idle: ┈ data ╳ sync ▚ CPU` where that does not fit."""
        words = TINY if short else SHORT
        pairs = zip(self.parts, self.glyphs, strict=True)
        return ("idle: " if short else "GPU idle: ") + " ".join(f"{g} {words[p]}" for p, g in pairs)


def toggle(timeline: Any) -> None:
    """Colour the timeline's idle gaps by cause, or stop; says why when it cannot."""
    if timeline.gap_colours is not None:
        timeline.gap_colours = None
        timeline.changed(viewport=False)
        _show_legend(timeline, "", "")
        return
    from tuiperf.tui.widgets.advice import AdvicePanel

    found = timeline.app.query(AdvicePanel)
    panel = found.first() if found else None
    result = panel.state.result if panel is not None else None
    if panel is None or not panel.ready:
        timeline.notify("The analysis is still running; try again in a moment.", timeout=3)
        return
    budget = result.budget if result is not None else None
    if budget is None:
        timeline.notify("No training steps found: no step budget to colour gaps by.", timeout=3)
        return
    timeline.gap_colours = GapColours(budget, timeline.g.ascii)
    timeline.changed(viewport=False)
    timeline.notify(f"GPU idle gaps by cause: {timeline.gap_colours.legend()}", timeout=4)
    gaps = timeline.gap_colours
    _show_legend(timeline, gaps.key_line(), gaps.key_line(short=True))


def _show_legend(timeline: Any, text: str, short: str) -> None:
    """The causes' glyphs in the status line for as long as they are painted."""
    from tuiperf.tui.widgets.status import StatusLine

    for status in timeline.app.query(StatusLine):
        status.set_legend(text, short)
