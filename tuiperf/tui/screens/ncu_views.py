"""The ncu screen's text views of one kernel or of the listed kernels: the roofline (`R`),
the memory chart (`M`), source hot spots (`S`). The lines come from the data layer
(`tuiperf.report.roofline`, …); this screen only shows them."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.tui.actions import bindings

TITLES = {"roofline": "Roofline", "memory": "Memory chart", "source": "Source hot spots"}


class TextView(ModalScreen[None]):
    """Lines of text in a scrollable box over the ncu screen (Esc closes)."""

    BINDINGS: ClassVar = bindings("ncu-view")
    SCOPED_CSS = False
    DEFAULT_CSS = """
    TextView { align: center middle; }
    TextView > VerticalScroll { width: 100%; height: 100%; border: round $accent;
                                background: $surface; padding: 0 0; }
    TextView #ncu-view-body { width: auto; }
    """

    def __init__(self, title: str, lines: list[str]) -> None:
        super().__init__()
        self.title_text, self.lines = title, lines

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("\n".join(self.lines), no_wrap=True), id="ncu-view-body")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).border_title = f"{self.title_text} (Esc closes)"

    def plain_text(self) -> str:
        return "\n".join(self.lines)


def view_lines(
    name: str,
    km: KernelMetrics,
    kid: int,
    ids: list[int],
    size: tuple[int, int],
    ascii_only: bool,
    path: Path | None = None,
) -> list[str]:
    """The lines of view `name` for kernel `kid` (the roofline: `kid` first, then `ids`),
    fitted to `size` (columns, rows) of the box."""
    width, height = size
    if name == "roofline":
        from tuiperf.analysis.ncu.roofline import rooflines
        from tuiperf.report.roofline import plot

        order = [kid] + [k for k in ids if k != kid]
        names = {k: km.kernel(k).name or km.kernel(k).display_name for k in order}
        return plot(rooflines(km, order), names, width, height, ascii_only)
    if name == "memory":
        from tuiperf.report.memory import chart_lines

        return chart_lines(km, kid, width, ascii_only)
    if name == "source":
        return _source(km, kid, path, width)
    return [f"No {name} view."]


def _source(km: KernelMetrics, kid: int, path: Path | None, width: int) -> list[str]:
    from tuiperf.errors import TuiperfError
    from tuiperf.load.ncu.source import read_hot_spots
    from tuiperf.report.source import hot_spot_lines

    if path is None or km.meta.get("format") != "ncu-rep":
        return ["Source counters are read from the .ncu-rep itself (this is a CSV export)."]
    try:
        hots = read_hot_spots(path, [kid])
    except TuiperfError as e:
        return [str(e)]
    return hot_spot_lines(hots[kid], width, top=max(10, 15))
