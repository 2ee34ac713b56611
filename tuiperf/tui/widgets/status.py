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
        self.hint = "? help · q quit" if not ascii_only else "? help | q quit"

    def set_view(self, scale: str, lane: str) -> None:
        self.scale, self.lane = scale, lane
        self._show()

    def set_range(self, text: str) -> None:
        self.range = text
        self._show()

    def _show(self) -> None:
        parts = [self.scale, self.lane]
        if self.range:
            parts.append(self.range)
        parts.append(self.hint)
        self.update(Text(self.sep.join(p for p in parts if p), no_wrap=True, overflow="ellipsis"))
