"""--ascii scrollbars: plain ones while an app or screen draws ASCII only (below the app and
its screens, which all switch them)."""

from __future__ import annotations

from typing import ClassVar

from textual.scrollbar import ScrollBar, ScrollBarRender


class AsciiScrollBarRender(ScrollBarRender):
    """--ascii: scrollbars of plain (reversed) spaces, no eighth-block glyphs."""

    VERTICAL_BARS: ClassVar[list[str]] = [" "] * 8
    HORIZONTAL_BARS: ClassVar[list[str]] = [" "] * 8


def ascii_scrollbars(on: bool) -> None:
    """--ascii: Textual's scrollbars draw block glyphs (▁▅▇) of their own; plain ones while
    an app runs (on), Textual's again when it ends (off)."""
    if on:
        ScrollBar.renderer = AsciiScrollBarRender
    elif ScrollBar.renderer is AsciiScrollBarRender:
        ScrollBar.renderer = ScrollBarRender
