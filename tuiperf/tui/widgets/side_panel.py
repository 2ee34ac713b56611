"""The right-hand panel: details of the selection (later also ncu metrics and fixes).

Sections are separate children so later issues can fill `#metrics` and `#advice`
without touching the details; an empty section is hidden.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import asciify
from tuiperf.tui.widgets.advice import AdvicePanel

if TYPE_CHECKING:  # the details are built (model.attribution) on the first selection
    from tuiperf.model.timeline.attribution import EventDetails


class SidePanel(VerticalScroll, can_focus=True):
    BINDINGS = bindings("side")

    def __init__(self, ascii_only: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ascii_only = ascii_only
        #: what the panel shows (None: nothing selected)
        self.details: EventDetails | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._hint(), id="details", classes="side--section")
        yield Vertical(id="metrics", classes="side--section -empty")
        yield AdvicePanel(
            self.ascii_only, id="advice", classes="side--section -empty follows-selection"
        )

    def on_mount(self) -> None:
        self.border_title = "Details"

    def show_details(self, d: EventDetails) -> None:
        self.details = d
        self.query_one("#details", Static).update(details_renderable(d, self.ascii_only))
        self.scroll_home(animate=False)

    def clear(self) -> None:
        self.details = None
        self.query_one("#details", Static).update(self._hint())

    def _hint(self) -> Text:
        text = (
            "Nothing selected.\n\nMove to a lane (↑ ↓), then press Enter, or . and , to "
            "step through its events."
        )
        return Text(asciify(text) if self.ascii_only else text, style="dim")

    def plain_text(self, width: int = 80) -> str:
        """What the details section says, as plain text (for tests and copying)."""
        from rich.console import Console

        console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
        console.print(
            details_renderable(self.details, self.ascii_only) if self.details else self._hint()
        )
        return console.export_text()


def details_renderable(d: EventDetails, ascii_only: bool = False) -> Table:
    """A two-column grid of plain Text (names are data: never markup)."""

    def t(s: str, style: str = "") -> Text:
        return Text(asciify(s) if ascii_only else s, style=style)

    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(t(d.kind.upper(), "dim"), t(d.title, "bold"))
    for label, value in d.fields:
        grid.add_row(t(label), t(value))
    if d.nvtx is not None:
        lines = d.nvtx.lines()
        grid.add_row(t("NVTX"), t(lines[0]))
        for line in lines[1:]:
            grid.add_row(t(""), t(line))
    return grid
