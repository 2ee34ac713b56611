"""Number and text formatting shared by the CLI tables, the TUI and exports."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Context, Decimal

_EXACT = Context(prec=800)  # a double has at most 767 significant decimal digits
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ESCAPE_SEQ = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")


def round_half_up(x: float, digits: int = 1) -> str:
    """Round half away from zero on the exact double, as `nsys stats` prints floats."""
    q = Decimal(1).scaleb(-digits)
    # the default 28 digits cannot hold a large double's integer part (1e300 raised)
    return str(Decimal(float(x)).quantize(q, rounding=ROUND_HALF_UP, context=_EXACT))


def clean(text: str, limit: int | None = None) -> str:
    """Names are data: drop escape sequences and control characters; optionally cut."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = _CONTROL.sub("", _ESCAPE_SEQ.sub("", text)).replace("\t", " ").replace("\n", " ")
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


_TIME_UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))


def duration(ns: float | int | None, ascii_only: bool = False) -> str:
    """A duration in the largest unit that keeps it >= 1: `12.4 ms`, `830 ns`."""
    if ns is None:
        return ""
    v = float(ns)
    for unit, scale in _TIME_UNITS:
        if abs(v) >= scale or unit == "ns":
            if ascii_only and unit == "µs":
                unit = "us"
            q = v / scale
            if unit == "ns":
                return f"{q:.0f} ns"
            return f"{q:.3g} {unit}" if abs(q) < 100 else f"{q:.0f} {unit}"
    return f"{v:.0f} ns"


def timestamp(ns: int | float, span_ns: float | None = None) -> str:
    """A point on the timeline, in seconds with enough digits for `span_ns`."""
    digits = 3
    if span_ns:
        digits = 3 if span_ns >= 1e7 else 6 if span_ns >= 1e4 else 9
    return f"{ns / 1e9:.{digits}f} s"


def size(n: int | float | None) -> str:
    """Bytes, in decimal units (as Nsight does): `1.20 MB`."""
    if n is None:
        return ""
    v = float(n)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.2f} {unit}"
    return f"{v:.0f} B"


def count(n: int | None) -> str:
    return "" if n is None else f"{n:,}"


def percent(p: float | None) -> str:
    return "" if p is None else f"{p:.1f}%"
