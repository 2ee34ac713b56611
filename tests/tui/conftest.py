"""Fixtures for every TUI test; the shared Pilot helpers are in pilot_helpers.py."""

from __future__ import annotations

import pytest

# before the first import of it: its asserts then say what they compared, as tests' do
pytest.register_assert_rewrite("tests.tui.pilot_helpers")


@pytest.fixture(autouse=True)
def _still(monkeypatch: pytest.MonkeyPatch) -> None:
    """No animations: nothing on screen moves between a key and the next assertion."""
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
