"""SVG snapshots of the viewer on the bundled sample (the real vit_range report).

Nothing on these screens moves by itself: no clock in the header, the loading bar is gone
before the snapshot, and no input has a blinking cursor. Update with --snapshot-update.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.pilot_helpers import settle
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp

SAMPLE = Path(__file__).resolve().parents[2] / "tuiperf" / "sample" / "vit_range"


def app(ascii_only: bool = False) -> TuiperfApp:
    return TuiperfApp(
        SAMPLE,
        OpenOptions(use_cache=False),
        ascii_only=ascii_only,
        name="vit_range (bundled sample)",
    )


async def wait_loaded(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(400):
        if not pilot.app.loading:
            break
        await pilot.pause(0.05)
    for _ in range(400):  # the events table mounts after the first frame, then queries
        table = pilot.app.query("#events-table")
        if table and table.first().view is not None:
            break
        await pilot.pause(0.05)
    await settle(pilot)


def then(*keys: str):  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_loaded(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return run


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_first_screen(snap_compare, size):
    assert snap_compare(app(), terminal_size=size, run_before=then())


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_kernel_selected_with_its_launch_zoomed_in(snap_compare, size):
    keys = ("full_stop",) * 12 + ("plus",) * 10 + ("enter",)
    assert snap_compare(app(), terminal_size=size, run_before=then(*keys))


def test_ascii_80x24(snap_compare):
    keys = ("j", "j", "plus", "plus", "full_stop")
    assert snap_compare(app(ascii_only=True), terminal_size=(80, 24), run_before=then(*keys))


def test_help_overlay(snap_compare):
    assert snap_compare(app(), terminal_size=(160, 48), run_before=then("question_mark"))
