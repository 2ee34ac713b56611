"""Two kernels side by side, section by section, with deltas (ncu's baseline comparison).

Mark a kernel as the baseline (`b` on the ncu screen), select another: each section of the
metrics pane then shows `metric | baseline | current | delta`, the delta as ncu's baseline
view gives it, relative to the baseline (`+12.3%`), or the plain difference of two
percentages in points.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.table import Table
from rich.text import Text

from tuiperf.model.fmt import clean
from tuiperf.model.ncu.metrics import KernelMetrics, Metric, Section


@dataclass(frozen=True)
class Delta:
    label: str
    base: str
    current: str
    delta: str
    sign: int  # -1, 0, +1: the direction of the change (0: none or not numeric)


def delta_text(base: Metric | None, cur: Metric | None) -> tuple[str, int]:
    if base is None or cur is None or base.value is None or cur.value is None:
        return "", 0
    diff = cur.value - base.value
    sign = (diff > 0) - (diff < 0)
    if cur.unit == "%":
        return f"{diff:+.1f} pt", sign
    if base.value == 0:
        return ("" if diff == 0 else "new"), sign
    return f"{100.0 * diff / abs(base.value):+.1f}%", sign


def deltas(
    km: KernelMetrics,
    base: int,
    cur: int,
    section_id: str,
    base_km: KernelMetrics | None = None,
) -> list[Delta]:
    """One row per header metric of the section in either kernel, in the current's order;
    the baseline kernel is of `base_km` (another report) when given, else of `km`."""

    def of(report: KernelMetrics, kid: int) -> dict[str, Metric]:
        for s in report.sections(kid, "header"):
            if s.id == section_id:
                return {m.name or m.title: m for m in s.metrics}
        return {}

    b, c = of(base_km or km, base), of(km, cur)
    out = []
    for key in list(c) + [k for k in b if k not in c]:
        mb, mc = b.get(key), c.get(key)
        m = mc or mb
        assert m is not None
        d, sign = delta_text(mb, mc)
        out.append(Delta(clean(m.title), _shown(mb), _shown(mc), d, sign))
    return out


def _shown(m: Metric | None) -> str:
    return "-" if m is None else clean(m.display_text())


def compare_body(
    km: KernelMetrics,
    base: int,
    cur: int,
    s: Section,
    ascii_only: bool,
    base_km: KernelMetrics | None = None,
) -> Group:
    table = Table(box=None, padding=(0, 1), expand=True, show_edge=False)
    table.add_column("metric", ratio=3, no_wrap=True, overflow="ellipsis")
    head = f"base {base}" if base_km is not None else f"ID {base}"
    table.add_column(head, ratio=2, justify="right", no_wrap=True)
    table.add_column(f"ID {cur}", ratio=2, justify="right", no_wrap=True)
    table.add_column("delta", width=10, justify="right", no_wrap=True)
    for d in deltas(km, base, cur, s.id, base_km):
        style = "green" if d.sign > 0 else "red" if d.sign < 0 else "dim"
        table.add_row(Text(d.label), Text(d.base), Text(d.current), Text(d.delta, style))
    return Group(table)
