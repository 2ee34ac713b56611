"""One lane of one frame as cells: busy glyphs, event boxes with names, highlights.

Cells are computed with numpy from the lane's index (O(columns · log n)); only the boxes
of events at least two columns wide are visited one by one, and there are at most
columns / 2 of those in a lane.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
from rich.segment import Segment
from rich.style import Style

from tuiperf.model.fmt import clean
from tuiperf.model.timeline.lanes import Lane, display_name
from tuiperf.model.timeline.viewport import Viewport
from tuiperf.tui.glyphs import Glyphs

_UNDERLINE = Style(underline=True)

# style ids of a cell
EMPTY, BUSY, BOX, SELECTED, PARTNER, CURSOR, MATCH = range(7)
#: draw event boxes one by one only when the window holds at most this many per column
BOX_DENSITY = 4


@dataclass
class Highlight:
    """Column spans to draw over a lane: the selection and its launch/kernel partner;
    `matches`: the columns holding events that the events table's filter keeps."""

    selected: tuple[int, int] | None = None
    partner: tuple[int, int] | None = None
    matches: np.ndarray | None = None


@dataclass
class LaneStyles:
    empty: Style
    busy: Style
    box: Style
    selected: Style
    partner: Style
    cursor: Style
    mark: Style
    match: Style = _UNDERLINE
    #: styles of further style ids (idle gaps coloured by cause: gap_colours.py)
    extra: dict[int, Style] = field(default_factory=dict)

    def of(self, sid: int, marked: bool) -> Style:
        styles = (self.empty, self.busy, self.box, self.selected, self.partner, self.cursor)
        if sid in self.extra:
            base = self.extra[sid]
        else:
            base = styles[sid] if sid != MATCH else self.match
        return base + self.mark if marked else base


def frame_edges(vp: Viewport) -> np.ndarray:
    """Column edges as int64 ns (searchsorted on int arrays must not be given floats)."""
    return np.floor(vp.edges()).astype(np.int64)


def lane_cells(
    lane: Lane, vp: Viewport, edges: np.ndarray, g: Glyphs, hl: Highlight
) -> tuple[list[str], np.ndarray]:
    """Characters and style ids of one lane's cells."""
    iv = lane.iv
    busy = iv.busy(edges)
    starts = iv.starts_in(edges)
    level = np.where(busy >= 0.66, 3, np.where(busy >= 0.33, 2, (busy > 0) | (starts > 0)))
    lut = np.array([" ", g.low, g.mid, g.full], dtype=object)
    chars = lut[level.astype(np.int64)].tolist()
    sids = np.where(level > 0, BUSY, EMPTY).astype(np.int8)
    if iv.count_in(int(edges[0]), int(edges[-1])) <= BOX_DENSITY * vp.columns:
        _draw_boxes(lane, vp, g, chars, sids)
    if hl.matches is not None:
        for c in np.flatnonzero(hl.matches & (sids == EMPTY)).tolist():
            chars[c] = g.low  # a match is never a blank cell
        sids[hl.matches] = MATCH
    for span, sid in ((hl.partner, PARTNER), (hl.selected, SELECTED)):
        if span is not None:
            c0, c1 = max(span[0], 0), min(span[1], vp.columns)
            if c0 < c1:
                for c in np.flatnonzero(sids[c0:c1] == EMPTY).tolist():
                    chars[c0 + c] = g.low  # visible without colour too
                sids[c0:c1] = sid
    return chars, sids


#: the mark on the first column of both ends of a launch link: the launch call and the GPU
#: work it launched (the selection and its partner; `p` jumps between them)
FLOW = "↕"
FLOW_ASCII = "@"


def flow_ends(chars: list[str], hl: Highlight, columns: int, ascii_only: bool) -> None:
    """Mark where the selection and its partner start, when that column is on screen."""
    for span in (hl.selected, hl.partner):
        if span is not None and 0 <= span[0] < columns:
            chars[span[0]] = FLOW_ASCII if ascii_only else FLOW


def _draw_boxes(lane: Lane, vp: Viewport, g: Glyphs, chars: list[str], sids: np.ndarray) -> None:
    boxes = lane.iv.boxes(vp.start, vp.ns_per_col, vp.columns)
    width = boxes.c1 - boxes.c0
    wide = np.flatnonzero((width >= 2) & (boxes.c0 >= 0))
    if len(wide) == 0:
        return
    named = wide[width[wide] >= 4]
    names = dict(zip(named.tolist(), _names(lane, boxes.first, named), strict=True))
    written = 0  # names never overlap: each starts after the previous one ended
    for i in wide.tolist():
        c0, c1 = int(boxes.c0[i]), int(boxes.c1[i])
        sids[c0:c1] = BOX
        chars[c0] = g.box_edge
        for c in range(c0 + 1, c1):
            chars[c] = " "
        text = names.get(i)
        if text and c0 + 1 >= written:
            room = c1 - c0 - 1
            if len(text) > room:
                text = text[: max(room - 1, 0)] + g.ellipsis if room > 1 else ""
            chars[c0 + 1 : c0 + 1 + len(text)] = list(text)
            written = c0 + 1 + len(text)


def _names(lane: Lane, first: int, idx: np.ndarray) -> list[str]:
    rows = lane.iv.rows[first + idx]
    return [clean(display_name(lane.kind, n)) for n in lane.names.names(rows)]


def to_segments(
    chars: list[str], sids: np.ndarray, marked: np.ndarray | None, styles: LaneStyles
) -> list[Segment]:
    """Runs of cells with the same style as Rich segments."""
    out: list[Segment] = []
    n = len(chars)
    key = sids.astype(np.int16) * 2 + (marked.astype(np.int16) if marked is not None else 0)
    cuts = np.flatnonzero(np.diff(key)) + 1
    bounds = [0, *cuts.tolist(), n]
    for a, b in pairwise(bounds):
        if a >= b:
            continue
        k = int(key[a])
        out.append(Segment("".join(chars[a:b]), styles.of(k // 2, bool(k % 2))))
    return out
