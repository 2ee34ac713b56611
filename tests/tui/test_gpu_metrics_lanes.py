"""GPU metric lanes under GPU 0 of the real metrics capture (tests/data/cpu_samples/
metrics.sqlite, nsys --gpu-metrics-devices=all), at 80x24 in Unicode and in ASCII: each
column of the PCIe RX lane is the mean of the samples SQL finds in it, in eighths of 100 %
rounded up (blank where no sample falls), and the status line gives the metric's value at
the cursor (the last sample at or before it, by SQL)."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.support.data import unxz
from tests.tui.pilot_helpers import sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.metric_lane import BARS, BARS_ASCII
from tuiperf.tui.widgets.status import StatusLine
from tuiperf.tui.widgets.timeline import Timeline

ROOT = Path(__file__).resolve().parents[2]
RX = "PCIe RX Throughput [Throughput %]"


def _samples(path: Path) -> list[tuple[int, int]]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(
            "SELECT g.timestamp, g.value FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS n "
            "ON n.typeId = g.typeId AND n.metricId = g.metricId WHERE n.metricName = ? "
            "ORDER BY g.timestamp", (RX,)).fetchall()  # fmt: skip


async def loaded(pilot: Any) -> None:
    for _ in range(200):
        if not pilot.app.loading or pilot.app.error is not None:
            break
        await pilot.pause(0.05)
    await pilot.pause()
    assert not pilot.app.loading


def _expected(samples: list[tuple[int, int]], start: float, per_col: float, cols: int,
              bars: str) -> str:  # fmt: skip
    out = []
    for k in range(cols):
        lo, hi = math.floor(start + k * per_col), math.floor(start + (k + 1) * per_col)
        inside = [v for t, v in samples if lo <= t < hi]
        before = [v for t, v in samples if t < lo]
        if inside:
            v = sum(inside) / len(inside)
        elif before and any(t >= hi for t, _ in samples):
            v = before[-1]
        else:
            out.append(" ")
            continue
        out.append(bars[math.ceil(v * 8 / 100)])
    return "".join(out)


@pytest.mark.parametrize("ascii_only", [False, True])
@sync
async def test_pcie_rx_lane_at_80x24(ascii_only: bool) -> None:
    path = unxz(ROOT / "tests/data/cpu_samples/metrics.sqlite.xz")
    samples = _samples(path)
    app = TuiperfApp(path, OpenOptions(use_cache=False), ascii_only=ascii_only, name="m")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        tl = app.query_one(Timeline)
        assert tl.lanes is not None
        labels = [tl.lanes.lanes[r.lane].label for r in tl.rows
                  if r.lane is not None and tl.lanes.lanes[r.lane].kind == "metric"]  # fmt: skip
        assert labels == ["SM active", "SM issue", "tensor active", "DRAM read", "DRAM write",
                          "PCIe RX", "PCIe TX"]  # fmt: skip
        row = next(i for i, r in enumerate(tl.rows)
                   if r.lane is not None and tl.lanes.lanes[r.lane].label == "PCIe RX")  # fmt: skip
        tl.row_cursor = row
        tl.state.scroll_to_cursor(tl.lane_rows)
        await pilot.pause()
        text = tl.render_line(row - tl.top + 1).text
        assert text.startswith("  PCIe RX")
        cells = text[tl.label_width + 1 :]
        want = _expected(samples, tl.vp.start, tl.vp.ns_per_col, tl.columns,
                         BARS_ASCII if ascii_only else BARS)  # fmt: skip
        c = tl.vp.col_of(tl.cursor_t)
        cells = cells[:c] + (" " if cells[c] == tl.g.cursor_line else cells[c]) + cells[c + 1 :]
        assert cells == want
        assert any(ch not in " " for ch in want)
        if ascii_only:
            assert text.isascii()
        # the value at the cursor, in the status line: inside the third 256 MiB copy
        t = 200_000_000
        tl.cursor_t = float(t)
        tl.changed()
        await pilot.pause()
        value = [v for ts, v in samples if ts <= t][-1]
        status = str(app.query_one(StatusLine).render())
        shown = f"{value:.1f}" if 0 < value < 10 else f"{value:,}"  # one decimal under 10
        assert f"PCIe RX {shown}% at the cursor" in status
