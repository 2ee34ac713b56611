"""SVG snapshots of the fixes panel on the real cnn_osrt report. Update with --snapshot-update.

Each waits for the analysis worker before the snapshot, so nothing on screen moves."""

from __future__ import annotations

import pytest

from tests.tui.pilot_helpers import advice_app as make_app
from tests.tui.pilot_helpers import advice_ready as ready
from tests.tui.pilot_helpers import evidence_row, select, settle
from tuiperf.tui.widgets.advice import AdvicePanel


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
        adv = await ready(pilot)
        await pilot.press("A")
        table, row = evidence_row(adv, "pageable_h2d_in_steps", 4)
        select(pilot.app, table, row)
        await settle(pilot)
        assert pilot.app.query_one(AdvicePanel).selection == (table, row)

    assert snap_compare(make_app(), terminal_size=(160, 48), run_before=run)
