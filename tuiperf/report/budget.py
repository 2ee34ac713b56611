"""The step budget for people: a stacked bar and a table (Rich renderables, no Textual)."""

from __future__ import annotations

import numpy as np
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tuiperf.analysis.budget.step_budget import BASES, LABELS, PARTS, SHORT, Budget, Parts
from tuiperf.model import fmt

#: one colour and one glyph per part: the glyph carries the part without colour
STYLE = {
    "compute": "green",
    "comm": "blue",
    "copy": "cyan",
    "data": "yellow",
    "sync": "magenta",
    "cpu_bound": "red",
    "other": "bright_black",
}
GLYPH = {
    "compute": "█",
    "comm": "▓",
    "copy": "▒",
    "data": "┈",
    "sync": "╳",
    "cpu_bound": "▚",
    "other": "·",
}
ASCII_GLYPH = {
    "compute": "#",
    "comm": "=",
    "copy": "+",
    "data": "d",
    "sync": "s",
    "cpu_bound": "c",
    "other": ".",
}


def cells(parts: Parts, width: int) -> list[tuple[str, int]]:
    """(part, cells) for a bar `width` cells wide: largest remainders, every part with at
    least 0.5% of the time gets a cell."""
    if parts.wall_ns <= 0 or width <= 0:
        return []
    raw = np.array([parts.ns[p] for p in PARTS], np.float64) / parts.wall_ns * width
    n = np.floor(raw).astype(int)
    visible = (raw * 100 / width >= 0.5) & (n == 0)
    n[visible] = 1
    while n.sum() > width:
        n[int(np.argmax(n))] -= 1
    order = np.argsort(-(raw - np.floor(raw)), kind="stable")
    for i in order[: max(width - int(n.sum()), 0)]:
        n[i] += 1
    return [(p, int(k)) for p, k in zip(PARTS, n, strict=True) if k > 0]


def bar(parts: Parts, width: int, ascii_only: bool = False) -> Text:
    glyph = ASCII_GLYPH if ascii_only else GLYPH
    t = Text()
    for p, k in cells(parts, width):
        t.append(glyph[p] * k, style=STYLE[p])
    return t


def legend(parts: Parts, ascii_only: bool = False) -> Text:
    glyph = ASCII_GLYPH if ascii_only else GLYPH
    t = Text()
    for p in PARTS:
        if parts.ns[p] <= 0:
            continue
        if t:
            t.append("  ")
        t.append(glyph[p], style=STYLE[p])
        t.append(f" {SHORT[p]} {parts.pct(p):.1f}%")
    return t


def headline(b: Budget) -> str:
    st = b.steady
    d = b.main
    dev = f" · device {d.device} of {len(b.devices)}" if len(b.devices) > 1 else ""
    return (
        f"Step budget · {fmt.plural(b.n_steady, 'steady-state step')} ({b.steady_labels}; "
        "found from "
        f"{b.method_text}) · step {fmt.duration(b.step_ns)}{dev} · GPU busy "
        f"{st.pct('busy'):.1f}%, idle {st.pct('idle'):.1f}%"
    )


def step_line(b: Budget) -> str:
    """What a step costs and what it is measured over; the queue ahead of the GPU; how
    sure the steps are."""
    over = fmt.plural(b.n_steady, "step")
    out = f"A step costs {fmt.duration(b.step_ns)}: the steady span over {over}"
    s = b.step
    if s is not None:
        out += f", measured over {BASES[s.basis]}"
        if s.basis == "gpu_span":
            out += (
                f". The CPU ranges' median is {fmt.duration(s.cpu_median_ns)}: the CPU "
                f"queues work {fmt.duration(s.lag_ns)} ahead of the GPU (median), which "
                "sync points then drain"
            )
        out += f". Queue ahead of each GPU op: {fmt.duration(s.queue_ns)} (median)."
    else:
        out += "."
    if b.untraced_step_ns is not None:
        share = b.capture_adds_ns / b.step_ns if b.step_ns else 0.0
        out += (
            f" Timed with nothing recording (tuiperf.torch), a step took "
            f"{fmt.duration(b.untraced_step_ns)}: the capture adds "
            f"{fmt.duration(b.capture_adds_ns)} ({share:.0%}) a step."
        )
    if b.confidence != "high":
        out += f" Steps inferred with {b.confidence} confidence: {b.confidence_reason}."
    return out


def table(b: Budget) -> Table:
    st, d = b.steady, b.main
    t = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold", show_edge=False)
    for name, just in (("part", "left"), ("total", "right"), ("% of steps", "right"),
                       ("median/step", "right")):  # fmt: skip
        t.add_column(name, justify=just)  # type: ignore[arg-type]
    for p in PARTS:
        if st.ns[p] == 0 and p in ("comm",):
            continue
        t.add_row(
            Text(LABELS[p]),
            fmt.duration(st.ns[p]),
            f"{st.pct(p):.1f}%",
            fmt.duration(d.median[p]),
        )
    return t


def footnotes(b: Budget) -> list[str]:
    st, d = b.steady, b.main
    out = [step_line(b)]
    if st.overlap_ns:
        out.append(
            f"GPU work overlapped {fmt.duration(st.overlap_ns)} across streams (counted once)."
        )
    if d.startup is not None:
        before = f" ({b.startup_labels} and before)" if b.startup_labels else ""
        out.append(
            f"Start-up{before}: {fmt.duration(d.startup.wall_ns)}, GPU busy "
            f"{d.startup.pct('busy'):.1f}%, kept apart."
        )
        if b.extra.get("startup_note"):
            out.append(str(b.extra["startup_note"]))
    for other in b.devices[1:]:
        o = other.steady
        out.append(
            f"device {other.device}: GPU busy {o.pct('busy'):.1f}%, "
            + ", ".join(f"{SHORT[p]} {o.pct(p):.1f}%" for p in PARTS if o.ns[p])
        )
    return out


def renderable(b: Budget, width: int = 60, ascii_only: bool = False) -> RenderableType:
    st = b.steady
    return Group(
        Text(headline(b), style="bold"),
        bar(st, width, ascii_only),
        legend(st, ascii_only),
        table(b),
        *[Text(line, style="dim") for line in footnotes(b)],
    )
