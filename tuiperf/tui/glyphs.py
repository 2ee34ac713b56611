"""Glyph sets: Unicode by default, ASCII with --ascii or when the terminal is not UTF-8."""

from __future__ import annotations

import locale
import sys
from dataclasses import dataclass

from tuiperf import settings


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


#: terminals whose fonts lack most of our glyphs (the Linux and BSD consoles, serial terminals)
_PLAIN_TERMS = ("linux", "dumb", "cons25", "vt52", "vt100", "vt102", "vt220")


def _locale_charset(env: dict[str, str]) -> str | None:
    """The charset the locale names (LC_ALL, then LC_CTYPE, then LANG: the first one set),
    "" for the C/POSIX locale, None when no locale variable is set."""
    for var in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = env.get(var, "")
        if value:
            if value in ("C", "POSIX"):
                return ""
            return value.partition(".")[2].partition("@")[0]
    return None


def _is_utf8(name: str) -> bool:
    return name.lower().replace("-", "").replace("_", "") in ("utf8", "utf8mb4")


def wants_ascii(forced: bool = False, env: dict[str, str] | None = None) -> bool:
    """ASCII glyphs: --ascii or TUIPERF_ASCII=1; else on a console terminal (TERM=linux, vt100,
    dumb …), under a locale that is not UTF-8 (LANG=C: Python's UTF-8 coercion hides it from
    the output encoding), or when the output encoding is not UTF-8. TUIPERF_ASCII=0 forces
    Unicode."""
    env = settings.terminal() if env is None else env
    choice = env.get("TUIPERF_ASCII", "")
    if forced or choice not in ("", "0"):
        return True
    if choice == "0":
        return False
    if env.get("TERM", "").lower() in _PLAIN_TERMS:
        return True
    charset = _locale_charset(env)
    if charset is not None and not _is_utf8(charset):
        return True
    enc = getattr(sys.stdout, "encoding", None) or locale.getpreferredencoding(False) or ""
    return not _is_utf8(enc)


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
