"""The loading overlay: the named phase, a progress bar and how to cancel."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, ProgressBar


class LoadingPanel(Vertical):
    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report = name

    def compose(self) -> ComposeResult:
        yield Label(f"Opening {self.report}", id="loading-title")
        yield Label("starting", id="loading-phase")
        yield ProgressBar(total=100, show_eta=False, id="loading-bar")
        yield Label("esc to cancel", id="loading-hint")

    def show(self, phase: str, step: int, steps: int, fraction: float) -> None:
        self.query_one("#loading-phase", Label).update(f"step {step}/{steps}: {phase}")
        done = (step - 1 + min(max(fraction, 0.0), 1.0)) / max(steps, 1)
        self.query_one("#loading-bar", ProgressBar).update(progress=100 * done)
