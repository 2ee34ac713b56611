"""OS thread state on the thread lanes (issue 34 item 3), on real captures: slow.sqlite
(nsys --cpuctxsw=process-tree) at 80x24 in Unicode and ASCII, callsites_gpu.sqlite.

Every expected value comes from sqlite3 over SCHED_EVENTS: a thread's switches in time
order (at a tie the switch-out first), each switch-in paired with the next switch-out
(running) and each switch-out with the next switch-in (waiting), by a window function;
each column [floor(start + k w), floor(start + (k+1) w)) (w = view width / columns)
running where the thread ran at least as long as it waited inside it, waiting where it
waited longer, blank where neither."""

from __future__ import annotations

import bisect
import lzma
import math
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.tui.pilot_helpers import sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.state_lane import GLYPHS, GLYPHS_ASCII
from tuiperf.tui.widgets.status import StatusLine
from tuiperf.tui.widgets.timeline import Timeline

ROOT = Path(__file__).resolve().parents[2]
MASK = 0xFFFFFF
SLOW = "cpu_samples/slow.sqlite.xz"
CALLSITES = "callsites/callsites_gpu.sqlite.xz"
Interval = tuple[int, int, bool]  # start, end, running


def _export(tmp_path: Path, name: str) -> Path:
    out = tmp_path / "report.sqlite"
    with lzma.open(ROOT / "tests/data" / name) as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _main_tid(db: sqlite3.Connection) -> int:
    """The globalTid of the main thread (tid = pid) with the most switches."""
    q = ("SELECT globalTid FROM SCHED_EVENTS WHERE (globalTid >> 24) & 16777215 = "
         "globalTid & 16777215 GROUP BY globalTid ORDER BY count(*) DESC LIMIT 1")  # fmt: skip
    return db.execute(q).fetchone()[0]


def _intervals(db: sqlite3.Connection, gtid: int) -> list[Interval]:
    q = """SELECT start, nxt, isSchedIn != 0 FROM (
             SELECT start, isSchedIn, lead(start) OVER w AS nxt, lead(isSchedIn) OVER w AS nin
             FROM SCHED_EVENTS WHERE globalTid = ?
             WINDOW w AS (ORDER BY start, isSchedIn != 0))
           WHERE nxt IS NOT NULL AND (isSchedIn != 0) != (nin != 0) ORDER BY start"""
    return [(a, b, bool(r)) for a, b, r in db.execute(q, (gtid,))]


def _expected(ivs: list[Interval], start: float, end: float, cols: int, glyphs: str) -> str:
    per_col = (end - start) / cols
    edges = [math.floor(start + k * per_col) for k in range(cols + 1)]
    ran, waited = [0] * cols, [0] * cols
    for a, b, running in ivs:
        c = max(bisect.bisect_right(edges, a) - 1, 0)
        while c < cols and edges[c] < b:
            both = min(b, edges[c + 1]) - max(a, edges[c])
            if both > 0:
                (ran if running else waited)[c] += both
            c += 1
    return "".join(
        " " if r + w == 0 else glyphs[1] if r >= w else glyphs[2]
        for r, w in zip(ran, waited, strict=True)
    )


async def _loaded(pilot: Any) -> Timeline:
    """The timeline once the state lanes are in (added after the first frame)."""
    app = pilot.app
    for _ in range(300):
        lanes = app.lanes
        if not app.loading and lanes is not None and any(la.state for la in lanes.lanes):
            break
        assert app.error is None
        await pilot.pause(0.05)
    await pilot.pause()
    return app.query_one(Timeline)


def _row_of(tl: Timeline, tid: int) -> int:
    assert tl.lanes is not None
    return next(i for i, r in enumerate(tl.rows) if r.lane is not None
                and tl.lanes.lanes[r.lane].kind == "state"
                and tl.lanes.lanes[r.lane].place["tid"] == tid)  # fmt: skip


async def _cells(pilot: Any, tl: Timeline, row: int) -> tuple[str, str]:
    """(label, time cells) of row `row`, the cursor's own mark blanked."""
    tl.row_cursor = row
    tl.state.scroll_to_cursor(tl.lane_rows)
    tl.changed()
    await pilot.pause()
    text = tl.render_line(row - tl.top + 1).text
    cells = text[tl.label_width + 1 :]
    c = tl.vp.col_of(tl.cursor_t)
    if 0 <= c < len(cells) and cells[c] == tl.g.cursor_line:
        cells = cells[:c] + " " + cells[c + 1 :]
    return text[: tl.label_width], cells


async def _view(pilot: Any, tl: Timeline, lo: float, hi: float) -> None:
    tl.state.set_viewport(tl.vp.fit_range(lo, hi, 0))
    tl.changed()
    await pilot.pause()


async def _status(pilot: Any, tl: Timeline, row: int, t: float) -> str:
    tl.row_cursor = row
    tl.cursor_t = t
    tl.changed()
    await pilot.pause()
    return str(pilot.app.query_one(StatusLine).render())


@pytest.mark.parametrize(("name", "ascii_only"), [(SLOW, False), (SLOW, True), (CALLSITES, False)])
@sync
async def test_main_thread_state_row(tmp_path: Path, name: str, ascii_only: bool) -> None:
    path = _export(tmp_path, name)
    with _db(path) as db:
        main = _main_tid(db)
        ivs = _intervals(db, main)
        gtids = {r[0] for r in db.execute("SELECT DISTINCT globalTid FROM SCHED_EVENTS")}
    tid = main & MASK
    glyphs = GLYPHS_ASCII if ascii_only else GLYPHS
    longest = max((iv for iv in ivs if not iv[2]), key=lambda iv: iv[1] - iv[0])
    app = TuiperfApp(path, OpenOptions(use_cache=False), ascii_only=ascii_only, name="s")
    async with app.run_test(size=(80, 24)) as pilot:
        tl = await _loaded(pilot)
        assert tl.lanes is not None
        # the whole report
        label, cells = await _cells(pilot, tl, _row_of(tl, tid))
        assert (
            f"[{tid}]" in label
            and tl.lanes.lanes[tl.rows[_row_of(tl, tid)].lane or 0].kind == "state"
        )
        assert cells == _expected(ivs, tl.vp.start, tl.vp.end, tl.columns, glyphs)
        assert glyphs[1] in cells
        # around the longest wait: running, then waiting, then running again
        a, b, _ = longest
        await _view(pilot, tl, a - (b - a) / 2, b + (b - a) / 2)
        _, cells = await _cells(pilot, tl, _row_of(tl, tid))
        want = _expected(ivs, tl.vp.start, tl.vp.end, tl.columns, glyphs)
        assert cells == want
        assert glyphs[2] * 10 in want and glyphs[1] in want
        # threads with lanes: a state row exactly where SQL finds switches
        threads = {(la.place["pid"], la.place["tid"]) for la in tl.lanes.lanes
                   if la.place.get("tid") is not None}  # fmt: skip
        with_state = {(la.place["pid"], la.place["tid"]) for la in tl.lanes.lanes if la.state}
        switched = threads & {((g >> 24) & MASK, g & MASK) for g in gtids}
        assert with_state == switched
        if ascii_only:
            assert all(tl.render_line(y).text.isascii() for y in range(tl.size.height))


@sync
async def test_a_thread_without_switches_has_no_row(tmp_path: Path) -> None:
    """slow.sqlite with the switches of one thread that has lanes deleted (every thread
    with lanes was switched in both captures)."""
    path = _export(tmp_path, SLOW)
    with sqlite3.connect(path) as db:
        main = _main_tid(db)
        q = (
            "SELECT DISTINCT globalTid FROM OSRT_API WHERE globalTid != ? "
            "AND globalTid IN (SELECT globalTid FROM SCHED_EVENTS) ORDER BY globalTid LIMIT 1"
        )
        gone = db.execute(q, (main,)).fetchone()[0]
        db.execute("DELETE FROM SCHED_EVENTS WHERE globalTid = ?", (gone,))
    app = TuiperfApp(path, OpenOptions(use_cache=False), name="s")
    async with app.run_test(size=(80, 24)) as pilot:
        tl = await _loaded(pilot)
        assert tl.lanes is not None
        lanes = tl.lanes.lanes
        assert any(la.place.get("tid") == gone & MASK for la in lanes)  # it has lanes
        assert not any(la.state and la.place["tid"] == gone & MASK for la in lanes)
        assert any(la.state and la.place["tid"] == main & MASK for la in lanes)


@sync
async def test_status_names_the_wait_under_the_cursor(tmp_path: Path) -> None:
    path = _export(tmp_path, SLOW)
    with _db(path) as db:
        main = _main_tid(db)
        ivs = _intervals(db, main)
        lo, hi = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = 'step 10'").fetchone()
    tid = main & MASK
    # the longest wait inside step 10, between 1 and 100 ms: written `12.3 ms`
    waits = [iv for iv in ivs if not iv[2] and lo <= iv[0] and iv[1] <= hi]
    a, b, _ = max(waits, key=lambda iv: iv[1] - iv[0])
    assert 1e6 <= b - a < 1e8
    app = TuiperfApp(path, OpenOptions(use_cache=False), name="s")
    async with app.run_test(size=(80, 24)) as pilot:
        tl = await _loaded(pilot)
        await _view(pilot, tl, lo, hi)
        row = _row_of(tl, tid)
        status = await _status(pilot, tl, row, (a + b) / 2)
        assert f"waiting {(b - a) / 1e6:.3g} ms (descheduled)" in status
        # the running interval just after it
        ra, rb, running = next(iv for iv in ivs if iv[0] == b)
        assert running
        status = await _status(pilot, tl, row, (ra + rb) / 2)
        assert "running" in status and "waiting" not in status
        # x hides the state row like any other lane, X shows it again
        await pilot.press("x")
        assert tl.lanes is not None
        assert not any(tl.lanes.lanes[r.lane].kind == "state"
                       and tl.lanes.lanes[r.lane].place["tid"] == tid
                       for r in tl.rows if r.lane is not None)  # fmt: skip
        await pilot.press("X")
        assert _row_of(tl, tid) >= 0
