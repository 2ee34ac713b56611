"""The roofline as text: log-log axes, ceilings drawn in braille dots (or `.` in ASCII),
labelled at their ends, kernels marked by a letter, a legend below. Plain strings only."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tuiperf.analysis.ncu.roofline import Ceiling, KernelRoofline
from tuiperf.model.fmt import clean

MARKS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_DOT = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # [row][col] of a cell
_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K"))


def si(v: float, unit: str = "") -> str:
    """`1.2T` for 1.2e12 (3 significant digits)."""
    for f, p in _SI:
        if abs(v) >= f:
            return f"{v / f:.3g}{p}{unit}"
    return f"{v:.3g}{unit}"


@dataclass
class Canvas:
    """Braille cells over [x0, x1] x [y0, y1] in decades (log10)."""

    cols: int
    rows: int
    x0: float
    x1: float
    y0: float
    y1: float

    def __post_init__(self) -> None:
        self.dots = [[0] * self.cols for _ in range(self.rows)]
        self.chars: dict[tuple[int, int], str] = {}

    def cell(self, lx: float, ly: float) -> tuple[int, int] | None:
        """(row, col) of a point in decades; None outside."""
        dx, dy = self._dot(lx, ly)
        if not (0 <= dx < self.cols * 2 and 0 <= dy < self.rows * 4):
            return None
        return dy // 4, dx // 2

    def _dot(self, lx: float, ly: float) -> tuple[int, int]:
        fx = (lx - self.x0) / (self.x1 - self.x0)
        fy = (self.y1 - ly) / (self.y1 - self.y0)
        return int(fx * (self.cols * 2 - 1) + 0.5), int(fy * (self.rows * 4 - 1) + 0.5)

    def line(self, a: tuple[float, float], b: tuple[float, float]) -> None:
        (ax, ay), (bx, by) = self._dot(*a), self._dot(*b)
        n = max(abs(bx - ax), abs(by - ay), 1)
        for i in range(n + 1):
            x, y = ax + (bx - ax) * i // n, ay + (by - ay) * i // n
            if 0 <= x < self.cols * 2 and 0 <= y < self.rows * 4:
                self.dots[y // 4][x // 2] |= _DOT[y % 4][x % 2]

    def text(self, row: int, col: int, s: str) -> None:
        for i, ch in enumerate(s):
            if 0 <= row < self.rows and 0 <= col + i < self.cols:
                self.chars[row, col + i] = ch

    def free(self, row: int, col: int, n: int) -> bool:
        if not (0 <= row < self.rows and col >= 0 and col + n <= self.cols):
            return False
        return not any((row, c) in self.chars for c in range(col - 1, col + n + 1))

    def place(self, row: int, col: int, s: str) -> bool:
        """Write `s` at the nearest free row to `row` (above first); False if none."""
        for dr in (0, -1, 1, -2, 2, -3, 3):
            if self.free(row + dr, col, len(s)):
                self.text(row + dr, col, s)
                return True
        return False

    def mark(self, row: int, col: int, ch: str) -> None:
        """A kernel's letter, beside another kernel's when that cell is taken."""
        for dc in (0, 1, -1, 2, -2):
            if 0 <= col + dc < self.cols and self.chars.get((row, col + dc), " ") not in MARKS:
                self.chars[row, col + dc] = ch
                return

    def render(self, ascii_only: bool) -> list[str]:
        out = []
        for r in range(self.rows):
            line = []
            for c in range(self.cols):
                ch = self.chars.get((r, c))
                if ch is None:
                    d = self.dots[r][c]
                    ch = " " if not d else ("." if ascii_only else chr(0x2800 + d))
                line.append(ch)
            out.append("".join(line))
        return out


def _span(values: list[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi) + 1e-9)


def plot(
    kernels: list[KernelRoofline],
    names: dict[int, str],
    width: int = 80,
    height: int = 24,
    ascii_only: bool = False,
    level: str = "DRAM",
) -> list[str]:
    """The chart of `kernels` (the first one's ceilings) in `width` x `height` characters:
    the plot, its x axis, and a legend of one line per kernel (as many as fit)."""
    ref = kernels[0] if kernels else None
    if ref is None or not ref.ceilings:
        return ["No roofline metrics in this report (capture with --set full or "
                "--section SpeedOfLight_RooflineChart)."]  # fmt: skip
    compute = [c for c in ref.ceilings if c.kind == "compute"]
    memory = [c for c in ref.ceilings if c.kind == "memory"]
    shown = [k for k in kernels if k.intensity(level)]
    legend_rows = min(len(kernels) + 1, max(height // 3, 3))
    rows = max(height - 3 - legend_rows, 6)
    label_w = 6
    cols = max(width - label_w - 1, 20)
    ridges = [c.value / m.value for c in compute for m in memory]
    xs = ridges + [k.intensity(level) or 1.0 for k in shown]
    ys = [c.value for c in compute] + [k.achieved for k in shown]
    x0, x1 = _span(xs)
    x0, x1 = x0 - 1, x1 + 1
    y1 = math.log10(max(ys)) + 0.35
    y0 = min(math.floor(math.log10(min(ys))), math.floor(y1) - 3)
    cv = Canvas(cols, rows, x0, x1, y0, y1)
    top = max(c.value for c in compute)
    for m in memory:  # a bandwidth roof: y = B * x, up to the highest compute roof
        ax = x0
        bx = math.log10(top / m.value)
        cv.line((ax, math.log10(m.value) + ax), (bx, math.log10(top)))
    for c in compute:  # a compute roof: flat, right of where the fastest memory meets it
        fastest = max(m.value for m in memory) if memory else c.value
        start = math.log10(c.value / fastest)
        cv.line((start, math.log10(c.value)), (x1, math.log10(c.value)))
    marks = {}
    for i, k in enumerate(kernels):
        ai = k.intensity(level)
        mark = MARKS[i % len(MARKS)]
        marks[k.kernel_id] = mark
        at = cv.cell(math.log10(ai), math.log10(k.achieved)) if ai else None
        if at is not None:
            cv.mark(at[0], at[1], mark)
    _labels(cv, compute, memory, x0, x1)  # around the kernels' letters
    return _frame(cv, label_w, ascii_only) + _legend(kernels, names, marks, width, legend_rows,
                                                     level)  # fmt: skip


def _labels(cv: Canvas, compute: list[Ceiling], memory: list[Ceiling], x0: float,
            x1: float) -> None:  # fmt: skip
    for c in compute:
        at = cv.cell(x1 - 1e-9, math.log10(c.value))
        if at is not None:
            text = f"{c.name} {si(c.value, 'FLOP/s')}"
            cv.place(max(at[0] - 1, 0), cv.cols - len(text), text)
    for i, m in enumerate(memory):
        at = cv.cell(x0 + 0.4 + 0.9 * i, math.log10(m.value) + x0 + 0.4 + 0.9 * i)
        if at is not None:
            text = f"{m.name} {si(m.value, 'B/s')}"
            cv.place(at[0] - 1, at[1] + 1, text)


def _frame(cv: Canvas, label_w: int, ascii_only: bool) -> list[str]:
    bar, corner, tick = ("|", "+", "-") if ascii_only else ("│", "└", "─")
    out = []
    decades = {cv.cell(cv.x0, float(d)): d for d in range(math.floor(cv.y0), math.floor(cv.y1) + 1)}
    rows_at = {rc[0]: d for rc, d in decades.items() if rc is not None}
    for r, line in enumerate(cv.render(ascii_only)):
        label = si(10.0 ** rows_at[r]) if r in rows_at else ""
        out.append(f"{label:>{label_w}}{bar}{line}")
    out.append(" " * label_w + corner + tick * cv.cols)
    axis = [" "] * cv.cols
    for d in range(int(cv.x0), int(cv.x1) + 1):
        at = cv.cell(float(d), cv.y0)
        if at is None:
            continue
        text = f"{10.0**d:g}"
        col = min(max(at[1] - len(text) // 2, 0), cv.cols - len(text))
        if all(ch == " " for ch in axis[max(col - 1, 0) : col + len(text) + 1]):
            axis[col : col + len(text)] = list(text)
    out.append(" " * (label_w + 1) + "".join(axis))
    return out


def _legend(kernels: list[KernelRoofline], names: dict[int, str], marks: dict[int, str],
            width: int, rows: int, level: str) -> list[str]:  # fmt: skip
    out = [f"FLOP/s over FLOP per {level} byte; ceilings of kernel {kernels[0].kernel_id}"]
    for k in kernels[: rows - 1]:
        ai = k.intensity(level)
        facts = (f"{k.precision} {si(k.achieved, 'FLOP/s')} AI {ai:.3g}" if ai
                 else "no FLOPs or no traffic")  # fmt: skip
        head = f"{marks[k.kernel_id]} [{k.kernel_id}] "
        room = max(width - len(head) - len(facts) - 2, 8)
        name = clean(names.get(k.kernel_id, ""))
        name = name if len(name) <= room else name[: room - 1] + "…"
        out.append(f"{head}{name:<{room}}  {facts}")
    return [line[:width] for line in out]
