"""Number and text formatting shared by the CLI tables, the TUI and exports."""

from __future__ import annotations

import math
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ESCAPE_SEQ = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")


def clean(text: str, limit: int | None = None) -> str:
    """Names are data: drop escape sequences and control characters; optionally cut."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = _CONTROL.sub("", _ESCAPE_SEQ.sub("", text)).replace("\t", " ").replace("\n", " ")
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


_TIME_UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))


def time_unit(ns: float) -> tuple[str, float]:
    """The largest unit in which |ns| >= 1, and its size in ns (ns for 0)."""
    a = abs(ns)
    for name, scale in _TIME_UNITS:
        if a >= scale:
            return name, scale
    return "ns", 1.0


def unit_text(unit: str, ascii_only: bool = False) -> str:
    """A unit as printed: `us` for `µs` where only ASCII may be drawn."""
    return "us" if ascii_only and unit == "µs" else unit


def in_unit(ns: float, scale: float, decimals: int, unit: str, ascii_only: bool = False) -> str:
    """`12.40 ms`: `ns` in the unit of size `scale` with `decimals` decimals."""
    return f"{ns / scale:.{decimals}f} {unit_text(unit, ascii_only)}"


def decimals_for(step: float, scale: float) -> int:
    """Decimals needed to tell apart multiples of `step` ns written in units of `scale`."""
    q = step / scale
    if q >= 1:
        return 0
    return max(0, math.ceil(-math.log10(q) - 1e-9))


def duration(ns: float | int | None, ascii_only: bool = False) -> str:
    """A duration in the largest unit that keeps it >= 1: `12.4 ms`, `830 ns`."""
    if ns is None:
        return ""
    v = float(ns)
    unit, scale = time_unit(v)
    q = v / scale
    text = f"{q:.3g}" if unit != "ns" and abs(q) < 100 else f"{q:.0f}"
    return f"{text} {unit_text(unit, ascii_only)}"


def duration_sig(ns: float, ascii_only: bool = False, digits: int = 2) -> str:
    """A duration with `digits` significant figures: `2.1 µs`, `480 ns`, `12 ms`."""
    unit, scale = time_unit(ns)
    q = ns / scale
    dec = max(0, digits - 1 - math.floor(math.log10(abs(q)))) if q else 0
    return in_unit(ns, scale, dec, unit, ascii_only)


def time_point(t: float, span: float | None = None, ascii_only: bool = False) -> str:
    """A point in time in the unit of its magnitude, precise enough for `span` ns."""
    unit, scale = time_unit(t)
    dec = decimals_for(span / 1000, scale) if span else 3
    return in_unit(t, scale, min(dec, 9), unit, ascii_only)


def seconds(ns: int | float, decimals: int) -> str:
    """`12.345678`: ns in seconds, without the unit."""
    return f"{ns / 1e9:.{decimals}f}"


def timestamp(ns: int | float, span_ns: float | None = None) -> str:
    """A point on the timeline, in seconds with enough digits for `span_ns`."""
    digits = 3
    if span_ns:
        digits = 3 if span_ns >= 1e7 else 6 if span_ns >= 1e4 else 9
    return f"{seconds(ns, digits)} s"


def millis(ns: int | float, decimals: int = 3) -> str:
    """`1,234.567 ms`: ns in milliseconds, with thousands separators."""
    return f"{ns / 1e6:,.{decimals}f} ms"


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


def plural(n: int, noun: str) -> str:
    """`1 event`, `2 events`, `1,385 regions`: a count with its noun, singular for one."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def percent(p: float | None) -> str:
    return "" if p is None else f"{p:.1f}%"
