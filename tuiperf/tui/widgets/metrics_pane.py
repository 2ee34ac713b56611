"""Nsight Compute metrics of one kernel: its sections in ncu's order, each collapsible.

Speed Of Light, Occupancy and Warp State Statistics get bars and a verdict; every other
section lists its header metrics (percentages as bars against 100 %). ncu's rule results
sit under their section, with the metrics they point at marked. With a baseline kernel
(`kernel_compare`), each section shows both kernels side by side with deltas.
Everything is plain `rich.text.Text`: names and messages come from the report.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Collapsible, Static

from tuiperf.model.fmt import clean
from tuiperf.model.ncu import verdict as V
from tuiperf.model.ncu.metrics import (
    KernelMetrics,
    Metric,
    RuleResult,
    Section,
    render_message,
    speedup_words,
)
from tuiperf.tui.glyphs import asciify

#: sections whose metrics are chart series or per-sample data: shown folded
FOLDED = ("Roofline", "PmSampling", "Nvlink", "NumaAffinity", "SourceCounters")
RULE_STYLE = {"warning": "bold yellow", "error": "bold red", "optimization": "cyan", "ok": "dim"}
GROUP_TABLES = (
    ("group:memory__shared_table", "Shared memory"),
    ("group:memory__first_level_cache_table", "L1/TEX cache"),
    ("group:memory__l2_cache_table", "L2 cache"),
    ("group:memory__dram_table", "Device memory"),
)


# --- renderables --------------------------------------------------------------------------


@dataclass
class Bar:
    """`label  ████████░░░░  63.6%`: a value against a full scale, fitted to the width."""

    label: str
    value: float | None
    full: float = 100.0
    text: str = ""  # the number as shown; default `63.6%`
    style: str = "cyan"
    ascii_only: bool = False
    label_width: int = 22

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        lw = min(self.label_width, max(width // 3, 8))
        shown = self.text or ("n/a" if self.value is None else f"{self.value:.1f}%")
        room = max(width - lw - len(shown) - 2, 4)
        frac = 0.0 if not self.value or self.full <= 0 else min(self.value / self.full, 1.0)
        n = round(frac * room)
        full, empty = ("#", ".") if self.ascii_only else ("█", "░")
        label = _fit(self.label, lw)
        line = Text(label + " ")
        line.append(full * n, self.style)
        line.append(empty * (room - n), "dim")
        line.append(" " + shown.rjust(len(shown)))
        yield line


def _fit(text: str, width: int) -> str:
    text = clean(text)
    return text[: width - 1] + "…" if len(text) > width else text.ljust(width)


def is_pct(m: Metric) -> bool:
    return m.unit == "%" and m.value is not None


def metric_rows(
    metrics: Iterable[Metric], focus: set[str], ascii_only: bool, bars: bool = True
) -> list[Table | Bar]:
    """Percentages as bars, the rest as a label/value grid; focus metrics marked."""
    out: list[Table | Bar] = []
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(ratio=3, overflow="ellipsis", no_wrap=True)
    grid.add_column(ratio=2, justify="right", no_wrap=True)
    mark = "*" if ascii_only else "◆"
    for m in metrics:
        hot = m.name in focus
        label = clean(m.title) + (f" {mark}" if hot else "")
        if bars and is_pct(m):
            out.append(Bar(label, m.value, style="bold yellow" if hot else "cyan",
                           ascii_only=ascii_only))  # fmt: skip
        else:
            style = "bold yellow" if hot else ""
            grid.add_row(Text(label, style), Text(clean(m.display_text()), style))
    if grid.row_count:
        out.append(grid)
    return out


def rule_lines(rules: Iterable[RuleResult], ascii_only: bool, full: bool = True) -> list:
    """ncu's rule results in the order given (a section's: ncu's own order), each with its
    estimated speedup as ncu words it (and with `full`, its message and the metrics it
    points at)."""
    out: list = []
    for r in rules:
        msg = clean(render_message(r.message)).strip()
        if not msg:
            continue
        head = Text(f"{r.code} ", RULE_STYLE.get(r.type, ""))
        head.append(clean(r.title or r.rule_name or r.rule_id), "bold")
        if r.speedup is not None:
            head.append(f"  {speedup_words(r)}")
        out.append(asciify_text(head) if ascii_only else head)
        if not full:
            continue
        body = Text(asciify(msg) if ascii_only else msg, "dim" if r.type == "ok" else "")
        out.append(Padding(body, (0, 0, 0, 4)))
        if r.focus:
            names = ", ".join(clean(f.metric) for f in r.focus)
            out.append(Padding(Text(f"points at: {names}", "italic"), (0, 0, 0, 4)))
    return out


def asciify_text(t: Text) -> Text:
    out = t.copy()
    out.plain = asciify(t.plain)
    return out


# --- per-section bodies --------------------------------------------------------------------


def section_body(km: KernelMetrics, kid: int, s: Section, ascii_only: bool) -> Group:
    focus = {f.metric for r in s.rules for f in r.focus}
    parts: list = []
    if s.id == "SpeedOfLight":
        parts += _sol(km, kid, ascii_only)
        rest = [m for m in s.metrics if m.name not in (V.SM_PCT, V.MEM_PCT, V.DURATION)]
        parts += metric_rows(rest, focus, ascii_only)
    elif s.id == "Occupancy":
        parts += _occupancy(km, kid, s, focus, ascii_only)
    elif s.id == "WarpStateStats":
        parts += metric_rows(s.metrics, focus, ascii_only)
        parts += _stalls(km, kid, ascii_only)
    elif s.id == "MemoryWorkloadAnalysis":
        parts += metric_rows(s.metrics, focus, ascii_only)
        parts += _tables(km, kid, ascii_only)
    else:
        parts += metric_rows(s.metrics, focus, ascii_only)
    parts += rule_lines(s.rules, ascii_only)
    return Group(*parts)


def _sol(km: KernelMetrics, kid: int, ascii_only: bool) -> list:
    v = V.sol_verdict(km, kid)
    dur = km.metric(kid, V.DURATION)
    head = Text("Verdict: ", "bold")
    head.append(v.text, "bold yellow" if v.kind else "dim")
    out: list = [head]
    if dur is not None:
        out.append(Text(f"Duration: {dur.display_text()}"))
    out.append(Bar("Compute (SM)", v.sm_pct, ascii_only=ascii_only, style="green"))
    out.append(Bar("Memory", v.mem_pct, ascii_only=ascii_only, style="magenta"))
    return out


def _occupancy(km: KernelMetrics, kid: int, s: Section, focus: set[str], ascii_only: bool) -> list:
    occ = V.occupancy(km, kid)
    out: list = [
        Bar("Theoretical", occ.theoretical, ascii_only=ascii_only, style="green"),
        Bar("Achieved", occ.achieved, ascii_only=ascii_only, style="magenta"),
    ]
    if occ.limiters:
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(ratio=3, no_wrap=True)
        grid.add_column(ratio=2, justify="right", no_wrap=True)
        arrow = "<- limits" if ascii_only else "◀ limits"
        for lim in occ.limiters:
            style = "bold yellow" if lim.limiting else ""
            note = f" {arrow}" if lim.limiting else ""
            grid.add_row(Text(f"Block limit {lim.what}", style),
                         Text(f"{lim.blocks:,.0f} blocks{note}", style))  # fmt: skip
        out.append(grid)
    shown = {V.THEORETICAL, V.ACHIEVED, *(n for n, _ in V.LIMITERS)}
    out += metric_rows([m for m in s.metrics if m.name not in shown], focus, ascii_only)
    return out


def _stalls(km: KernelMetrics, kid: int, ascii_only: bool) -> list:
    top = V.stalls(km, kid, 6)
    if not top:
        return []
    out: list = [Text("Top stall reasons (cycles per issued instruction)", "bold")]
    full = top[0].cycles
    out += [Bar(s.reason, s.cycles, full, f"{s.cycles:.2f}", "red", ascii_only) for s in top]
    return out


def _tables(km: KernelMetrics, kid: int, ascii_only: bool) -> list:
    """ncu's Memory Workload Analysis tables: the metrics each `group:` lists."""
    out: list = []
    for group, title in GROUP_TABLES:
        g = km.metric(kid, group)
        names = [n for n in (g.text or "").split(",") if n] if g is not None else []
        ms = [m for m in (km.metric(kid, n) for n in names) if m is not None and m.value]
        if ms:
            out.append(Text(f"{title} table", "bold"))
            out += metric_rows(ms[:12], set(), ascii_only, bars=False)
    return out


# --- the widget ----------------------------------------------------------------------------


class MetricsPane(VerticalScroll, can_focus=True):
    """The sections of one kernel (or of two, compared)."""

    DEFAULT_CSS = """
    MetricsPane { height: 1fr; }
    MetricsPane > #metrics-head { padding: 0 1; }
    MetricsPane > #metrics-sections { height: auto; }
    MetricsPane Collapsible { padding-bottom: 0; border-top: none; }
    MetricsPane Collapsible > Contents { padding: 0 0 0 2; }
    #metrics > MetricsPane { height: auto; overflow-y: hidden; border-top: solid $panel-lighten-2; }
    """

    SCOPED_CSS = False

    def __init__(self, ascii_only: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ascii_only = ascii_only
        self.km: KernelMetrics | None = None
        self.kernel_id: int | None = None
        self.baseline: int | None = None
        #: the report the baseline kernel is of, when not the shown one (`O` on the screen)
        self.base_km: KernelMetrics | None = None
        self.note = ""
        #: sections the user folded or unfolded (id -> collapsed), kept across kernels
        self.folded: dict[str, bool] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text("No kernel selected.", "dim"), id="metrics-head")
        yield Vertical(id="metrics-sections")

    def show(
        self,
        km: KernelMetrics,
        kid: int,
        baseline: int | None = None,
        note: str = "",
        base_km: KernelMetrics | None = None,
    ) -> None:
        if not self.query("#metrics-head"):  # mounted a moment ago, not yet composed
            self.call_after_refresh(self.show, km, kid, baseline, note, base_km)
            return
        self.km, self.kernel_id, self.baseline, self.note = km, kid, baseline, note
        self.base_km = base_km
        self.query_one("#metrics-head", Static).update(self._head())
        box = self.query_one("#metrics-sections", Vertical)
        box.remove_children()
        box.mount_all(self._sections())

    def clear(self, text: str = "No kernel selected.") -> None:
        if not self.query("#metrics-head"):  # (as in `show`)
            self.call_after_refresh(self.clear, text)
            return
        self.km = self.kernel_id = None
        self.query_one("#metrics-head", Static).update(Text(text, "dim"))
        self.query_one("#metrics-sections", Vertical).remove_children()

    def _head(self) -> Group:
        assert self.km is not None and self.kernel_id is not None
        k = self.km.kernel(self.kernel_id)
        title = Text(f"ncu ID {k.id}  ", "dim")
        title.append(clean(k.name or k.display_name), "bold")
        lines: list = [title]
        if k.demangled and k.demangled != k.name:
            full = clean(k.demangled)
            lines.append(Text(full if len(full) <= 160 else full[:159] + "…", "dim"))
        if self.baseline is not None and self.base_km is not None:
            src = str(self.base_km.meta.get("source") or "the baseline report").rsplit("/", 1)
            lines.append(Text(f"compared with ID {self.baseline} of {clean(src[-1])} "
                              "(B clears)", "italic"))  # fmt: skip
        elif self.baseline is not None:
            lines.append(Text(f"compared with baseline ID {self.baseline} (b clears)", "italic"))
        if self.note:
            lines.append(Text(clean(self.note), "italic"))
        heads = rule_lines(self.km.top_rules(self.kernel_id, 3), self.ascii_only, full=False)
        if heads:
            lines.append(Text("Top rule results:", "bold"))
            lines += heads
        return Group(*lines)

    def _sections(self) -> list[Collapsible]:
        assert self.km is not None and self.kernel_id is not None
        km, kid = self.km, self.kernel_id
        out = []
        symbols = (">", "v") if self.ascii_only else ("▶", "▼")
        for s in km.sections(kid, "header"):
            if self.baseline is not None:
                from tuiperf.tui.widgets.kernel_compare import compare_body

                body = compare_body(km, self.baseline, kid, s, self.ascii_only, self.base_km)
            else:
                body = section_body(km, kid, s, self.ascii_only)
            collapsed = self.folded.get(s.id, any(f in s.id for f in FOLDED))
            static = Static(body, classes="metrics--body")
            static.body = body  # type: ignore[attr-defined]
            c = Collapsible(
                static,
                title=Content(clean(s.name)),  # type: ignore[arg-type]  # plain, not markup
                collapsed=collapsed,
                collapsed_symbol=symbols[0],
                expanded_symbol=symbols[1],
                classes=f"section--{_css_id(s.id)}",
            )
            c.section_id = s.id  # type: ignore[attr-defined]
            out.append(c)
        return out

    def on_collapsible_collapsed(self, event: Collapsible.Collapsed) -> None:
        self.folded[getattr(event.collapsible, "section_id", "")] = True

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        self.folded[getattr(event.collapsible, "section_id", "")] = False

    def section_titles(self) -> list[str]:
        return [str(c.title) for c in self.query(Collapsible)]

    def open_section(self, index: int) -> bool:
        """Unfold section `index` (0-based, the pane's order) and scroll it to the top."""
        folds = list(self.query(Collapsible))
        if not 0 <= index < len(folds):
            return False
        target = folds[index]
        target.collapsed = False
        self.call_after_refresh(self.scroll_to_widget, target, top=True, animate=False)
        return True

    def open_named(self, words: str) -> bool:
        """Unfold and show the first section whose title starts with `words`."""
        titles = [t.lower() for t in self.section_titles()]
        hit = next((i for i, t in enumerate(titles) if t.startswith(words.lower())), None)
        return hit is not None and self.open_section(hit)

    def current_section(self) -> int:
        """The section at the top of the view (the last one whose title is above it)."""
        folds = list(self.query(Collapsible))
        offset = self.query_one("#metrics-sections").virtual_region.y  # below the head
        top = self.scroll_y
        above = [i for i, c in enumerate(folds) if offset + c.virtual_region.y <= top + 1]
        return above[-1] if above else -1

    def step_section(self, step: int) -> bool:
        return self.open_section(max(self.current_section() + step, 0))

    def set_all(self, collapsed: bool) -> None:
        for c in self.query(Collapsible):
            c.collapsed = collapsed

    def plain_text(self, width: int = 80) -> str:
        """Everything the pane shows (unfolded sections only), as plain text."""
        import io

        console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
        if self.km is None or self.kernel_id is None:
            return ""
        console.print(self._head())
        for c in self.query(Collapsible):
            console.print(("+ " if c.collapsed else "- ") + str(c.title))
            if not c.collapsed:
                body = c.query_one(".metrics--body", Static)
                console.print(body.body)  # type: ignore[attr-defined]
        return console.export_text()


def _css_id(section_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in section_id) or "raw"
