"""The ? / F1 help overlay (its content comes from the binding registry)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tuiperf.tui.actions import bindings
from tuiperf.tui.widgets.help import help_renderable


class HelpScreen(ModalScreen[None]):
    BINDINGS = bindings("help")

    def __init__(self, focused_scope: str | None, ascii_only: bool = False) -> None:
        super().__init__()
        self.focused_scope = focused_scope
        self.ascii_only = ascii_only

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys"
            yield Static(help_renderable(self.focused_scope, self.ascii_only), id="help-text")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
