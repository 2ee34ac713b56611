"""Glyph sets: Unicode by default, ASCII with --ascii or when the terminal is not UTF-8."""

from __future__ import annotations

import locale
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Glyphs:
    ascii: bool
    #: busy fraction of a cell, from full to barely
    full: str
    mid: str
    low: str
    tick: str
    cursor: str
    open_group: str
    closed_group: str
    box_edge: str
    ellipsis: str
    sep: str
    mark_start: str
    mark_end: str
    up: str
    down: str
    dash: str
    arrow: str
    cursor_line: str

    def busy(self, fraction: float, starts: int) -> str:
        if fraction >= 0.66:
            return self.full
        if fraction >= 0.33:
            return self.mid
        if fraction > 0 or starts > 0:
            return self.low
        return " "


UNICODE = Glyphs(
    False, "█", "▓", "░", "┬", "▼", "▾", "▸", "▏", "…", "│", "[", "]", "▲", "▼", "–", "→", "┊"
)
ASCII = Glyphs(
    True, "#", "=", ".", "|", "v", "v", ">", "|", "~", "|", "[", "]", "^", "v", "-", "->", ":"
)


def wants_ascii(forced: bool = False) -> bool:
    """--ascii, TUIPERF_ASCII=1, or an output encoding / locale that is not UTF-8."""
    if forced or os.environ.get("TUIPERF_ASCII", "") not in ("", "0"):
        return True
    enc = getattr(sys.stdout, "encoding", None) or locale.getpreferredencoding(False) or ""
    return "utf" not in enc.lower().replace("-", "")


def glyphs_for(ascii_only: bool) -> Glyphs:
    return ASCII if ascii_only else UNICODE


_ASCII_MAP = str.maketrans(
    {
        "←": "<-",
        "→": "->",
        "↑": "up",
        "↓": "dn",
        "⏎": "enter",
        "⌫": "bksp",
        "█": "#",
        "▓": "=",
        "░": ".",
        "–": "-",
        "µ": "u",
        "·": "|",
        "›": ">",
        "…": "...",
        "×": "x",
        "│": "|",
        "▲": "^",
        "▼": "v",
    }
)


def asciify(text: str) -> str:
    """The ASCII spelling of the few non-ASCII characters the viewer writes itself."""
    return text.translate(_ASCII_MAP)
