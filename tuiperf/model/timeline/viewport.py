"""Pure viewport maths for the timeline: window, zoom, pan, ticks, time -> column binning.

Times are float nanoseconds from the start of the report (floats so that a window can be
narrower than one nanosecond per column during arithmetic; clamping keeps it >= 1 ns/col).
Nothing here knows about terminals: the TUI asks for column edges, tick positions and labels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from tuiperf.model import fmt

ZOOM_FACTOR = 1.5
#: the narrowest window is this many ns per column
MIN_NS_PER_COL = 1.0
#: a small page moves the window by this fraction of its width; a page by PAGE_FRACTION
STEP_FRACTION = 0.1
PAGE_FRACTION = 0.9


@dataclass(frozen=True)
class Viewport:
    """The visible window [start, end) of a trace spanning [lo, hi], drawn in `columns` cells."""

    lo: float
    hi: float
    start: float
    end: float
    columns: int

    @classmethod
    def fit(cls, lo: float, hi: float, columns: int) -> Viewport:
        """The whole trace; an empty or zero-length trace gets a minimal window."""
        columns = max(int(columns), 1)
        if hi < lo:
            lo, hi = hi, lo
        if hi - lo < columns * MIN_NS_PER_COL:
            hi = lo + columns * MIN_NS_PER_COL
        return cls(float(lo), float(hi), float(lo), float(hi), columns)

    @property
    def span(self) -> float:
        return self.end - self.start

    @property
    def ns_per_col(self) -> float:
        return self.span / self.columns

    @property
    def is_full(self) -> bool:
        return self.start <= self.lo and self.end >= self.hi

    def with_columns(self, columns: int) -> Viewport:
        """The same start and ns/col on a new width (the whole trace stays whole)."""
        columns = max(int(columns), 1)
        if columns == self.columns:
            return self
        if self.is_full:
            return Viewport(self.lo, self.hi, self.lo, self.hi, columns)
        span = self.ns_per_col * columns
        return _clamped(replace(self, columns=columns), self.start, self.start + span)

    def window(self, start: float, end: float) -> Viewport:
        """Show [start, end), clamped to the trace and to the finest scale."""
        if end < start:
            start, end = end, start
        return _clamped(self, start, end)

    def zoom(self, factor: float, anchor: float | None = None) -> Viewport:
        """Divide the span by `factor` (>1 zooms in), keeping `anchor` on the same column."""
        if anchor is None:
            anchor = (self.start + self.end) / 2
        anchor = min(max(anchor, self.start), self.end)
        frac = (anchor - self.start) / self.span if self.span else 0.5
        span = _limit_span(self, self.span / factor)
        start = anchor - frac * span
        return _clamped(self, start, start + span)

    def zoom_in(self, anchor: float | None = None) -> Viewport:
        return self.zoom(ZOOM_FACTOR, anchor)

    def zoom_out(self, anchor: float | None = None) -> Viewport:
        return self.zoom(1 / ZOOM_FACTOR, anchor)

    def pan(self, fraction: float) -> Viewport:
        """Move by `fraction` of the window width (negative = earlier)."""
        return self.pan_ns(fraction * self.span)

    def pan_columns(self, columns: float) -> Viewport:
        return self.pan_ns(columns * self.ns_per_col)

    def pan_ns(self, delta: float) -> Viewport:
        return _clamped(self, self.start + delta, self.end + delta)

    def ensure_visible(self, start: float, end: float) -> Viewport:
        """Pan the least needed so that [start, end) (or its start) is in view."""
        if start >= self.start and end <= self.end:
            return self
        if end - start > self.span or start < self.start:
            return self.pan_ns(start - self.start - 0.1 * self.span)
        return self.pan_ns(end - self.end + 0.1 * self.span)

    def fit_range(self, start: float, end: float, margin: float = 0.05) -> Viewport:
        """Zoom so that [start, end) fills the window, with a margin each side."""
        pad = (end - start) * margin
        return self.window(start - pad, end + pad)

    # time <-> column

    def col_of(self, t: float) -> int:
        """The column holding time t (may be outside [0, columns))."""
        return math.floor((t - self.start) / self.ns_per_col)

    def time_of(self, col: float) -> float:
        """The start of column `col` (fractional columns allowed)."""
        return self.start + col * self.ns_per_col

    def edges(self) -> np.ndarray:
        """columns + 1 column boundaries, as float64 ns."""
        return self.start + np.arange(self.columns + 1, dtype=np.float64) * self.ns_per_col


def _limit_span(vp: Viewport, span: float) -> float:
    return min(max(span, vp.columns * MIN_NS_PER_COL), vp.hi - vp.lo)


def _clamped(vp: Viewport, start: float, end: float) -> Viewport:
    span = _limit_span(vp, end - start)
    mid = (start + end) / 2
    start = mid - span / 2
    start = min(max(start, vp.lo), vp.hi - span)
    return replace(vp, start=start, end=start + span)


def bin_columns(edges: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The column of each time for the given column edges (-1 before, len(edges)-1 after)."""
    return np.searchsorted(edges, times, side="right") - 1


# --- zoom stack -----------------------------------------------------------------------


@dataclass
class ZoomStack:
    """Windows to go back to (Backspace pops); bounded so it never grows without limit."""

    limit: int = 64
    items: list[tuple[float, float]] | None = None

    def push(self, vp: Viewport) -> None:
        if self.items is None:
            self.items = []
        self.items.append((vp.start, vp.end))
        del self.items[: -self.limit]

    def pop(self, vp: Viewport) -> Viewport | None:
        if not self.items:
            return None
        start, end = self.items.pop()
        return vp.window(start, end)

    def __len__(self) -> int:
        return len(self.items or ())


# --- ticks and labels (the text itself: tuiperf.model.fmt) ---------------------------


def nice_step(raw: float) -> float:
    """The smallest 1-2-5 step (… 1, 2, 5, 10, 20 …) >= raw; at least 1 ns."""
    if raw <= 1:
        return 1.0
    exp = math.floor(math.log10(raw))
    base = 10.0**exp
    for m in (1, 2, 5, 10):
        if m * base >= raw * (1 - 1e-12):
            return float(m * base)
    return 10 * base


@dataclass(frozen=True)
class Tick:
    col: int
    time: float
    label: str


def ticks(vp: Viewport, ascii_only: bool = False, gap: int = 2) -> list[Tick]:
    """Ruler ticks on a 1-2-5 step, spaced so that their labels do not touch."""
    unit, scale = fmt.time_unit(vp.end)
    width = 6
    step = 1.0
    for _ in range(3):  # the label width depends on the step and the step on the width
        step = nice_step(vp.ns_per_col * (width + gap))
        dec = fmt.decimals_for(step, scale)
        width = len(fmt.in_unit(vp.end, scale, dec, unit, ascii_only))
    first = math.ceil(vp.start / step) * step
    out = []
    t = first
    while t < vp.end:
        col = vp.col_of(t + vp.ns_per_col * 1e-6)
        if 0 <= col < vp.columns:
            out.append(Tick(col, t, fmt.in_unit(t, scale, dec, unit, ascii_only)))
        t += step
    return out


def scale_label(vp: Viewport, ascii_only: bool = False) -> str:
    """`12.40–12.61 s · 2.1 µs/col`: the visible window and the time per column."""
    unit, scale = fmt.time_unit(vp.end)
    # enough decimals that the span shows with about two significant digits
    dec = fmt.decimals_for(vp.span / 10, scale) if vp.span else 0
    dash, dot = ("-", "|") if ascii_only else ("–", "·")
    a = f"{vp.start / scale:.{dec}f}"
    b = f"{vp.end / scale:.{dec}f}"
    per = fmt.duration_sig(vp.ns_per_col, ascii_only)
    return f"{a}{dash}{b} {fmt.unit_text(unit, ascii_only)} {dot} {per}/col"
