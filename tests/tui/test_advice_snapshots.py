"""SVG snapshots of the fixes panel on the real cnn_osrt report. Update with --snapshot-update.

Each waits for the analysis worker before the snapshot, so nothing on screen moves."""

from __future__ import annotations

import pytest

from tests.tui.test_advice import make_app, ready
from tuiperf.tui.widgets.advice import AdvicePanel


@pytest.fixture(autouse=True)
def _still(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    """The events table's first query runs in a worker after the first frame: let it end."""
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def then(*keys: str):  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await ready(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return run


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_panel_open(snap_compare, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=then("A"))


def test_panel_for_a_selected_copy(snap_compare):
    """A pageable copy inside a step: its two findings, its own evidence row marked."""

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        from tests.tui.test_advice import evidence_row, select

        adv = await ready(pilot)
        await pilot.press("A")
        table, row = evidence_row(adv, "pageable_h2d_in_steps", 4)
        select(pilot.app, table, row)
        await settle(pilot)
        assert pilot.app.query_one(AdvicePanel).selection == (table, row)

    assert snap_compare(make_app(), terminal_size=(160, 48), run_before=run)
