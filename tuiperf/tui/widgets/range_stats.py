"""The range statistics screen (`R` on the timeline, issue 34 item 5): everything inside
the marked range, the selected event's span or the visible window — GPU busy and the step
budget's parts per device, then the kernel, API, memory, NVTX and OS runtime sums — as
`tuiperf summary REPORT --report range --start --end` prints them. `c` switches between
counting events that cross an edge whole and clipping them; `e` writes the table as CSV.

Which range: `tuiperf.tui.viewstate.range`; the numbers: `analysis.budget.window`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tuiperf.model.trace import Trace
from tuiperf.summaries.table import StatsTable
from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import asciify
from tuiperf.tui.viewstate.range import SECTION_TITLES, RangeChoice, choose_range, sections


class RangeStatsScreen(ModalScreen[None]):
    """The statistics of one time range; computed in a worker, again when `c` flips."""

    DEFAULT_CSS = """
    RangeStatsScreen { background: $background 60%; }
    RangeStatsScreen > #range-title { height: auto; background: $panel; padding: 0 1; }
    RangeStatsScreen > #range-body { height: 1fr; background: $surface; padding: 0 1; }
    """
    BINDINGS = bindings("range")

    def __init__(
        self, trace: Trace, choice: RangeChoice, stem: str, budget: Any, ascii_only: bool
    ) -> None:
        super().__init__()
        self.trace, self.choice, self.stem = trace, choice, stem
        #: the viewer's step budget when its analysis is done ("ctx": compute it here)
        self.budget = budget
        self.ascii_only = ascii_only
        self.clip = False
        self.table: StatsTable | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="range-title")
        with VerticalScroll(id="range-body"):
            yield Static("Computing…", id="range-text")
        yield Footer()

    def on_mount(self) -> None:
        self._title()
        self.query_one("#range-body").focus()
        self._compute(self.clip)

    def _title(self) -> None:
        text = self.choice.title(self.clip, self.ascii_only)
        self.query_one("#range-title", Static).update(Text(self._a(text)))

    def _a(self, text: str) -> str:
        return asciify(text) if self.ascii_only else text

    @work(thread=True, exclusive=True, group="range-stats", exit_on_error=False)
    def _compute(self, clip: bool) -> None:
        from tuiperf.analysis.budget.context import Ctx
        from tuiperf.analysis.budget.window import range_stats
        from tuiperf.summaries.window import Window

        w = Window(self.choice.lo, self.choice.hi, clip)
        table = range_stats(Ctx(self.trace), w, self.budget)
        self.app.call_from_thread(self._show, table, clip)

    def _show(self, table: StatsTable, clip: bool) -> None:
        if clip != self.clip:
            return  # `c` again while computing: its own result follows
        self.table = table
        self.query_one("#range-text", Static).update(self._tables(table))

    def _tables(self, table: StatsTable) -> RenderableType:
        from tuiperf.report.tables import stats_table

        width = max(self.size.width - 4, 60)
        parts: list[RenderableType] = []
        for key, data in sections(table):
            drop = ("section", "count") if key == "gpu" else ("section", "device")
            cols = [c for c in table.columns if c.key not in drop]
            part = StatsTable(table.report, cols, data.select([c.key for c in cols]))
            parts.append(stats_table(part, top=0, title=SECTION_TITLES[key], width=width))
        if not parts:
            parts.append(Text("Nothing happened in this range."))
        return Group(*parts)

    def action_clip(self) -> None:
        self.clip = not self.clip
        self._title()
        self._compute(self.clip)

    def action_export(self) -> None:
        if self.table is None:
            self.notify("Still computing; try again in a moment.", timeout=2)
            return
        from tuiperf.tui.viewstate.events import EventsState
        from tuiperf.tui.widgets.prompts import PathPrompt

        path = EventsState.fresh_path(Path.cwd() / f"{self.stem}.range.csv")
        self.app.push_screen(
            PathPrompt("Export the range statistics to (.csv, .tsv, .json):", str(path)),
            self._export_to,
        )

    def _export_to(self, value: str | None) -> None:
        if not value or self.table is None:
            return
        from tuiperf.tui.widgets.prompts import ConfirmPrompt

        path = Path(value).expanduser()
        path = path if path.is_absolute() else Path.cwd() / path
        table = self.table
        if path.exists():
            ask = ConfirmPrompt(f"{path} exists. Overwrite it?")
            self.app.push_screen(ask, lambda yes: self._write(path, table, True) if yes else None)
            return
        self._write(path, table, False)

    def _write(self, path: Path, table: StatsTable, overwrite: bool) -> None:
        from tuiperf.errors import TuiperfError
        from tuiperf.export import write_file

        fmt = {".tsv": "tsv", ".json": "json"}.get(path.suffix, "csv")
        try:
            n = write_file(path, table.data, fmt, overwrite=overwrite)
        except (TuiperfError, OSError) as e:
            self.notify(str(e), severity="error", markup=False)
            return
        self.notify(f"Exported {n:,} rows to {path}", markup=False)

    def action_back(self) -> None:
        self.dismiss(None)


def open_range(timeline: Any) -> None:
    """`R` on the timeline: the statistics of the range it marks (or selects, or shows)."""
    choice = choose_range(timeline.state)
    if choice is None or timeline.trace is None:
        timeline.notify("Nothing loaded yet.", timeout=2)
        return
    from tuiperf.tui.widgets.advice import AdvicePanel

    found = timeline.app.query(AdvicePanel)
    panel = found.first() if found else None
    budget: Any = "ctx"  # the analysis is not done: compute the budget in the worker
    if panel is not None and panel.ready and panel.state.result is not None:
        budget = panel.state.result.budget
    stem = Path(getattr(timeline.app, "report_name", "report").split(" ")[0]).stem
    screen = RangeStatsScreen(timeline.trace, choice, stem, budget, timeline.g.ascii)
    timeline.app.push_screen(screen)
