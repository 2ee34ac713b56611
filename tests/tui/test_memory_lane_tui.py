"""The memory lane under GPU 0 of cnn_osrt (nsys --cuda-memory-usage=true), at 80x24 in
Unicode and in ASCII: its label is the peak, and the peak's column (the time SQL finds
for the running sum's maximum) is drawn full."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import sync
from tuiperf.load.open import OpenOptions
from tuiperf.model import fmt
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.timeline import BARS, BARS_ASCII, Timeline


async def loaded(pilot: Any) -> None:
    for _ in range(200):
        if not pilot.app.loading or pilot.app.error is not None:
            break
        await pilot.pause(0.05)
    await pilot.pause()
    assert not pilot.app.loading


def _peak() -> tuple[int, int]:
    with sqlite3.connect(f"file:{nsys_report('cnn_osrt')}?mode=ro", uri=True) as db:
        row = db.execute(
            "SELECT r, start FROM (SELECT start, SUM(CASE memoryOperationType WHEN 0 THEN "
            "bytes ELSE -bytes END) OVER (ORDER BY start, rowid) AS r "
            "FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind IN (2, 3, 4)) "
            "ORDER BY r DESC, start LIMIT 1"
        ).fetchone()
    return int(row[0]), int(row[1])


@pytest.mark.parametrize("ascii_only", [False, True])
@sync
async def test_memory_lane_at_80x24(ascii_only: bool) -> None:
    peak, when = _peak()
    app = TuiperfApp(nsys_report("cnn_osrt"), OpenOptions(use_cache=False),
                     ascii_only=ascii_only, name="cnn_osrt")  # fmt: skip
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        assert tl.lanes is not None
        rows = [i for i, r in enumerate(tl.rows)
                if r.lane is not None and tl.lanes.lanes[r.lane].kind == "memory"]  # fmt: skip
        assert len(rows) == 1
        text = tl.render_line(rows[0] - tl.top + 1).text
        assert text.startswith(f"  memory {fmt.size(peak)}")
        col = tl.vp.col_of(when)
        full = (BARS_ASCII if ascii_only else BARS)[-1]
        assert text[tl.label_width + 1 + col] == full
        assert text[tl.label_width + 1 :].strip()[0] == (BARS_ASCII if ascii_only else BARS)[1]
        if ascii_only:
            assert text.isascii()
