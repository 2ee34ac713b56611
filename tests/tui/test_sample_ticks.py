"""CPU samples as ticks on the thread lanes (issue 34 item 1), on the real capture
tests/data/cpu_samples/slow.sqlite (nsys --sample=process-tree --python-sampling=true), at
80x24 in Unicode and in ASCII.

Every expected value comes from sqlite3 over the export: the main thread's samples
(COMPOSITE_EVENTS.start of its globalTid) mapped to columns with the view's start, end and
width; a column's density glyph from its sample count, the column's width and the sampling
period (the median gap between consecutive samples of a thread, over every thread); the
threads with lanes and no sample; the Python sample nearest the cursor inside a step
(NVTX_EVENTS marks of the 'Python Periodic Sampling' domain, innermost frame first)."""

from __future__ import annotations

import itertools
import json
import lzma
import math
import os
import shutil
import sqlite3
import statistics
from pathlib import Path
from typing import Any

import pytest

from tests.tui.pilot_helpers import sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.sample_lane import GLYPHS, GLYPHS_ASCII
from tuiperf.tui.widgets.status import StatusLine
from tuiperf.tui.widgets.timeline import Timeline

ROOT = Path(__file__).resolve().parents[2]
MASK = 0xFFFFFF


def _export(tmp_path: Path) -> Path:
    out = tmp_path / "slow.sqlite"
    with lzma.open(ROOT / "tests/data/cpu_samples/slow.sqlite.xz") as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _main_tid(db: sqlite3.Connection) -> int:
    """The globalTid of the main thread (tid = pid) with the most samples."""
    q = ("SELECT globalTid FROM COMPOSITE_EVENTS WHERE (globalTid >> 24) & 16777215 = "
         "globalTid & 16777215 GROUP BY globalTid ORDER BY count(*) DESC LIMIT 1")  # fmt: skip
    return db.execute(q).fetchone()[0]


def _starts(db: sqlite3.Connection, gtid: int) -> list[int]:
    q = "SELECT start FROM COMPOSITE_EVENTS WHERE globalTid = ? ORDER BY start"
    return [r[0] for r in db.execute(q, (gtid,))]


def _period(db: sqlite3.Connection) -> float:
    gaps: list[int] = []
    for (gtid,) in db.execute("SELECT DISTINCT globalTid FROM COMPOSITE_EVENTS").fetchall():
        s = _starts(db, gtid)
        gaps += [b - a for a, b in itertools.pairwise(s) if b > a]
    return statistics.median(gaps)


def _expected(times: list[int], start: float, end: float, cols: int, period: float,
              glyphs: str) -> str:  # fmt: skip
    """Each column's glyph, the column of a time being floor((t - start) / (width / cols))."""
    per_col = (end - start) / cols
    counts = [0] * cols
    for t in times:
        c = math.floor((t - start) / per_col)
        if 0 <= c < cols:
            counts[c] += 1
    edges = [math.floor(start + k * per_col) for k in (0, cols)]
    width = (edges[1] - edges[0]) / cols
    if width < 8 * period:  # zoomed in: a tick per column holding a sample
        return "".join(glyphs[4] if n else " " for n in counts)
    return "".join(glyphs[min(math.ceil(n * period / width * 3), 3)] for n in counts)


async def _loaded(pilot: Any) -> Timeline:
    """The timeline once the samples lanes are in (added after the first frame)."""
    app = pilot.app
    for _ in range(300):
        lanes = app.lanes
        if not app.loading and lanes is not None and any(la.ticks for la in lanes.lanes):
            break
        assert app.error is None
        await pilot.pause(0.05)
    await pilot.pause()
    return app.query_one(Timeline)


def _row_of(tl: Timeline, tid: int) -> int:
    assert tl.lanes is not None
    return next(i for i, r in enumerate(tl.rows) if r.lane is not None
                and tl.lanes.lanes[r.lane].kind == "samples"
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


def _step(db: sqlite3.Connection, name: str) -> tuple[int, int]:
    q = "SELECT start, end FROM NVTX_EVENTS WHERE text = ? AND end IS NOT NULL"
    return db.execute(q, (name,)).fetchone()


def _python_samples(db: sqlite3.Connection, gtid: int) -> list[tuple[int, str, str, int]]:
    """(time, function, file, line) of the innermost frame of each Python sample."""
    dom = db.execute("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = "
                     "'Python Periodic Sampling'").fetchone()[0]  # fmt: skip
    names = dict(db.execute("SELECT id, value FROM StringIds").fetchall())
    out = []
    q = ("SELECT start, jsonText FROM NVTX_EVENTS WHERE eventType = 34 AND domainId = ? "
         "AND globalTid = ? ORDER BY start")  # fmt: skip
    for t, text in db.execute(q, (dom, gtid)):
        frames = json.loads(text)["Python Periodic Sampling"]["Frames"]
        f = frames[0]
        out.append((t, names[f["Function"]], names[f["File"]], f["Line"]))
    return out


@pytest.mark.parametrize("ascii_only", [False, True])
@sync
async def test_ticks_on_the_main_thread(tmp_path: Path, ascii_only: bool) -> None:
    path = _export(tmp_path)
    with _db(path) as db:
        main = _main_tid(db)
        times, period = _starts(db, main), _period(db)
        step = _step(db, "step 10")
        gtids = {r[0] for r in db.execute("SELECT DISTINCT globalTid FROM COMPOSITE_EVENTS")}
    pid, tid = (main >> 24) & MASK, main & MASK
    glyphs = GLYPHS_ASCII if ascii_only else GLYPHS
    app = TuiperfApp(path, OpenOptions(use_cache=False), ascii_only=ascii_only, name="s")
    async with app.run_test(size=(80, 24)) as pilot:
        tl = await _loaded(pilot)
        assert tl.lanes is not None
        # the whole report: density (a column spans 100 sampling periods)
        label, cells = await _cells(pilot, tl, _row_of(tl, tid))
        assert "CPU" in label
        want = _expected(times, tl.vp.start, tl.vp.end, tl.columns, period, glyphs)
        assert cells == want
        assert glyphs[3] in want and " " not in want.strip()
        # one step: a tick in each column holding a sample, and only there
        tl.state.set_viewport(tl.vp.fit_range(step[0], step[1], 0))
        tl.changed()
        await pilot.pause()
        assert tl.vp.ns_per_col < 8 * period
        _, cells = await _cells(pilot, tl, _row_of(tl, tid))
        want = _expected(times, tl.vp.start, tl.vp.end, tl.columns, period, glyphs)
        assert cells == want
        assert want.count(glyphs[4]) >= 5 and " " in want
        # threads with lanes: a samples lane exactly where SQL finds samples
        threads = {(la.place["pid"], la.place["tid"]) for la in tl.lanes.lanes
                   if la.place.get("tid") is not None}  # fmt: skip
        with_ticks = {(la.place["pid"], la.place["tid"]) for la in tl.lanes.lanes if la.ticks}
        sampled = threads & {((g >> 24) & MASK, g & MASK) for g in gtids}
        assert with_ticks == sampled
        assert threads - sampled  # a thread without samples: no samples lane
        if ascii_only:
            assert all(tl.render_line(y).text.isascii() for y in range(tl.size.height))
        assert pid == tid


@sync
async def test_cursor_names_the_python_function(tmp_path: Path) -> None:
    path = _export(tmp_path)
    with _db(path) as db:
        main = _main_tid(db)
        py = _python_samples(db, main)
        lo, hi = _step(db, "step 10")
    inside = [s for s in py if lo <= s[0] < hi]
    t, fn, file, line = next(s for s in inside if s[1] == "make_tokens")
    app = TuiperfApp(path, OpenOptions(use_cache=False), name="s")
    async with app.run_test(size=(80, 24)) as pilot:
        tl = await _loaded(pilot)
        tl.state.set_viewport(tl.vp.fit_range(lo, hi, 0))
        tl.row_cursor = _row_of(tl, main & MASK)
        tl.cursor_t = float(t)
        tl.changed()
        await pilot.pause()
        status = str(app.query_one(StatusLine).render())
        assert f"make_tokens ({os.path.basename(file)}:{line})" in status
        assert fn == "make_tokens"
        # between two samples: the nearer one's function
        nxt = next(s for s in py if s[0] > t)
        tl.cursor_t = t + (nxt[0] - t) * 0.75
        tl.changed()
        await pilot.pause()
        status = str(app.query_one(StatusLine).render())
        assert f"{nxt[1]} ({os.path.basename(nxt[2])}:{nxt[3]})" in status
        # x hides the samples lane like any other lane, X shows it again
        await pilot.press("x")
        assert tl.lanes is not None
        assert not any(tl.lanes.lanes[r.lane].kind == "samples" and
                       tl.lanes.lanes[r.lane].place["tid"] == main & MASK
                       for r in tl.rows if r.lane is not None)  # fmt: skip
        await pilot.press("X")
        assert _row_of(tl, main & MASK) >= 0
