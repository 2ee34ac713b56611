"""The viewer's GPU memory (issue 33) on the real captures of tests/data/gpumem: the
torch.profiler trace's allocated and reserved lanes (the peaks PyTorch printed, the peak's
column where the peak's time maps, read from the JSON here), the memory pane's peaks
against PyTorch's own figures (expect_*.json), `g` + Enter putting the timeline's cursor
on the peak, and `tuiperf snap.pickle`'s pane alone; at 80x24, in Unicode and --ascii."""

from __future__ import annotations

import gzip
import json
import lzma
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA
from tests.tui.pilot_helpers import screen_lines, sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.screens.memory import MemoryApp, MemoryScreen
from tuiperf.tui.widgets.timeline import BARS, BARS_ASCII, Timeline

MEM = DATA / "gpumem"
TRACE = MEM / "leak_kineto.json.gz"


def expect(name: str) -> dict[str, Any]:
    return json.loads((MEM / f"expect_{name}.json").read_text())


def kineto_peaks() -> dict[str, tuple[int, int]]:
    """From the JSON itself: per total, (peak bytes, ns from the trace's first event)."""
    with gzip.open(TRACE, "rt") as f:
        events = json.load(f)["traceEvents"]
    t0 = min(e["ts"] for e in events if isinstance(e.get("ts"), int | float))
    mem = [e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1]
    mem.sort(key=lambda e: e["ts"])
    out = {}
    for key, arg in (("allocated", "Total Allocated"), ("reserved", "Total Reserved")):
        best = max(mem, key=lambda e: e["args"][arg])  # the first at the maximum
        out[key] = (best["args"][arg], round(best["ts"] * 1000) - round(t0 * 1000))
    return out


async def viewer(pilot: Any) -> Timeline:
    app = pilot.app
    for _ in range(400):
        if not app.loading and app.memory is not None:
            break
        assert app.error is None
        await pilot.pause(0.05)
    await pilot.pause()
    return app.query_one(Timeline)


def lane_row(tl: Timeline, level: str) -> int:
    assert tl.lanes is not None
    rows = [i for i, r in enumerate(tl.rows) if r.lane is not None
            and tl.lanes.lanes[r.lane].place.get("level") == level]  # fmt: skip
    assert len(rows) == 1
    return rows[0] - tl.top + 1


@pytest.mark.parametrize("ascii_only", [False, True])
@sync
async def test_kineto_memory_lanes_at_80x24(ascii_only: bool) -> None:
    peaks, want = kineto_peaks(), expect("leak_kineto")
    assert peaks["allocated"][0] == want["max_memory_allocated"]  # the JSON is PyTorch's
    assert peaks["reserved"][0] == want["max_memory_reserved"]
    app = TuiperfApp(TRACE, OpenOptions(use_cache=False), ascii_only=ascii_only, name="leak")
    async with app.run_test(size=(80, 24)) as pilot:
        tl = await viewer(pilot)
        full = (BARS_ASCII if ascii_only else BARS)[-1]
        mark = tl.get_component_rich_style("timeline--mark")
        for level, word in (("allocated", "alloc"), ("reserved", "reserved")):
            peak, when = peaks[level]
            strip = tl.render_line(lane_row(tl, level))
            text = strip.text
            assert text.startswith(f"  {word} {peak / 1e6:.2f} MB")
            vp = tl.vp
            col = int((when - vp.start) * vp.columns // (vp.end - vp.start))
            x = tl.label_width + 1 + col
            if level == "reserved":  # the allocated lane is drawn on the reserved scale
                assert text[x] == full
            cells = [(seg.text, seg.style) for seg in strip for _ in seg.text]
            marked = [i for i, (_, style) in enumerate(cells) if style == mark]
            assert marked == [x]
            if ascii_only:
                assert text.isascii()


@sync
async def test_pane_peaks_and_jump_to_peak() -> None:
    peaks, want = kineto_peaks(), expect("leak_kineto")
    app = TuiperfApp(TRACE, OpenOptions(use_cache=False), name="leak")
    async with app.run_test(size=(80, 24)) as pilot:
        tl = await viewer(pilot)
        await pilot.press("M")
        await pilot.pause(0.2)
        screen = app.screen
        assert isinstance(screen, MemoryScreen) and screen.report is not None
        main = screen.report.main
        assert main is not None
        assert main.peak_allocated == want["max_memory_allocated"]
        assert main.peak_reserved == want["max_memory_reserved"]
        shown = "\n".join(screen_lines(app))
        assert f"peak allocated   {want['max_memory_allocated'] / 1e6:.2f} MB" in shown
        await pilot.press("g", "enter")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, MemoryScreen)
        assert tl.cursor_t == peaks["allocated"][1]
        assert tl.vp.start <= tl.cursor_t < tl.vp.end


def snapshot(name: str, tmp_path: Path) -> Path:
    out = tmp_path / f"{name}.pickle"
    out.write_bytes(lzma.decompress((MEM / f"{name}.pickle.xz").read_bytes()))
    return out


async def pane(pilot: Any) -> MemoryScreen:
    for _ in range(400):
        if pilot.app.report is not None:
            break
        assert pilot.app.error is None
        await pilot.pause(0.05)
    await pilot.pause(0.2)
    assert isinstance(pilot.app.screen, MemoryScreen)
    return pilot.app.screen


@pytest.mark.parametrize(("name", "ascii_only"), [("leak", False), ("oom", True),
                                                  ("fragmentation", False)])  # fmt: skip
@sync
async def test_snapshot_alone(name: str, ascii_only: bool, tmp_path: Path) -> None:
    want = expect(name)
    app = MemoryApp(snapshot(name, tmp_path), ascii_only)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await pane(pilot)
        assert screen.report is not None and screen.report.main is not None
        main = screen.report.main
        assert main.peak_allocated == want["max_memory_allocated"]
        assert main.peak_reserved == want["max_memory_reserved"]
        lines = screen_lines(app)
        peak = want["max_memory_allocated"]
        sizes = (f"{peak / 1e9:.2f} GB", f"{peak / 1e6:.2f} MB")
        assert any("peak allocated" in x and any(s in x for s in sizes) for x in lines)
        assert lines[0].lstrip().startswith("alloc") and lines[1].lstrip().startswith("reserved")
        if ascii_only:
            assert all(x.isascii() for x in lines)
        if name == "oom":  # "Tried to allocate 128.00 MiB" in PyTorch's message
            assert [o.requested_bytes for o in main.ooms] == [128 * 2**20]
            assert any("out of memory" in x and "134.22 MB" in x for x in lines)
        await pilot.press("q")
    assert app.return_code == 0
