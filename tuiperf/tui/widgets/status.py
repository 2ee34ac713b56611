"""The status line under the timeline: window and scale, lane, range, first-launch hint."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static


class StatusLine(Static):
    def __init__(self, ascii_only: bool = False, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.sep = " | " if ascii_only else " │ "
        self.scale = ""
        self.lane = ""
        self.range = ""
        #: the legend of what the timeline paints (idle gaps by cause), or "", and a shorter
        #: one for a narrow line
        self.legend = ("", "")
        self.hint = "? help · q quit" if not ascii_only else "? help | q quit"
        self.ellipsis = "~" if ascii_only else "…"

    def set_view(self, scale: str, lane: str) -> None:
        self.scale, self.lane = scale, lane
        self._show()

    def set_range(self, text: str) -> None:
        self.range = text
        self._show()

    def set_legend(self, text: str, short: str = "") -> None:
        self.legend = (text, short or text)
        self._show()

    def on_resize(self) -> None:
        self._show()

    def _show(self) -> None:
        width = self.size.width or 200
        for legend in self.legend:
            rng = self.sep.join(p for p in (self.range, legend) if p)
            if len(self.sep.join(p for p in (self.scale, rng) if p)) <= width:
                break
        parts = (self.scale, self.lane, rng, self.hint)
        line = fit_status(*parts, self.sep, width, self.ellipsis)
        self.update(Text(line, no_wrap=True, overflow="ellipsis"))


def fit_status(
    scale: str, lane: str, rng: str, hint: str, sep: str, width: int, ellipsis: str = "…"
) -> str:
    """The status line in `width` cells: the key hint goes first, then the lane label is
    shortened; the window, scale and marked range stay whole."""
    parts = [p for p in (scale, lane, rng, hint) if p]
    if len(sep.join(parts)) <= width:
        return sep.join(parts)
    parts = [p for p in (scale, lane, rng) if p]
    line = sep.join(parts)
    if len(line) <= width or not lane:
        return line
    room = width - len(line) + len(lane)
    short = lane[: max(room - 1, 1)] + ellipsis if room > 4 else ""
    return sep.join(p for p in (scale, short, rng) if p)
