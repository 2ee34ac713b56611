"""The CPU samples screen (issue 34): `C` opens a flame tree of the busiest thread's samples
on callsites_gpu (tests/data/callsites, nsys `--sample=process-tree`); `t` turns it
bottom-up, `]` shows the next thread, `s` keeps the samples inside the steady steps, `esc`
goes back. Counts against SQL over the export."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.support.data import unxz
from tests.tui.pilot_helpers import record_notices, screen_lines, sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.screens.samples import SamplesScreen
from tuiperf.tui.viewstate.flame import FlameNode

REPO = Path(__file__).resolve().parents[2]
CALLSITES = REPO / "tests/data/callsites/callsites_gpu.sqlite.xz"


def _sql(path: Path, query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(query).fetchall()


async def _loaded(pilot, app: TuiperfApp) -> None:
    for _ in range(600):
        if not app.loading:
            break
        await pilot.pause(0.05)
    await pilot.pause()


def _root(app: TuiperfApp) -> FlameNode:
    screen = app.screen
    assert isinstance(screen, SamplesScreen) and screen.flame is not None
    return screen.flame.root


@sync
async def test_flame_tree_of_the_busiest_thread() -> None:
    path = unxz(CALLSITES)
    threads = _sql(path, "SELECT globalTid, count(*) FROM COMPOSITE_EVENTS GROUP BY 1 "
                   "ORDER BY 2 DESC, 1")  # fmt: skip
    (main, n_main), (second, n_second) = threads[0], threads[1]
    top_self = _sql(
        path,
        "SELECT f.value, count(*) FROM COMPOSITE_EVENTS c JOIN SAMPLING_CALLCHAINS s ON "
        "s.id = c.id AND s.stackDepth = 0 JOIN StringIds f ON f.id = s.symbol WHERE "
        f"c.globalTid = {main} GROUP BY 1 ORDER BY 2 DESC",
    )
    app = TuiperfApp(path, OpenOptions(use_cache=False), name=path.name)
    async with app.run_test(size=(140, 40)) as pilot:
        await _loaded(pilot, app)
        await pilot.press("C")
        await pilot.pause()
        root = _root(app)
        assert root.count == n_main and root.name == "python3 (771)"
        lines = screen_lines(app)
        assert f"python3 (771): {n_main:,} samples · top-down" in lines[0]
        assert any("[no call stack]" in ln for ln in lines)
        assert any("_start" in ln for ln in lines)  # the hot path is open: the outermost frame
        await pilot.press("t")
        await pilot.pause()
        root = _root(app)
        first = root.ordered()[0]
        assert (first.name, first.count) == top_self[0]
        assert "bottom-up" in screen_lines(app)[0]
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert _root(app).count == n_second and f"({second & 0xFFFFFF})" in _root(app).name
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SamplesScreen)


@sync
async def test_a_report_without_samples_says_so(nsys_dir: Path) -> None:
    from tests.conftest import nsys_path

    path = nsys_path(nsys_dir, "vit_range")
    app = TuiperfApp(path, OpenOptions(use_cache=False), name=path.name)
    notices = record_notices(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await _loaded(pilot, app)
        await pilot.press("C")
        await pilot.pause()
        assert not isinstance(app.screen, SamplesScreen)
        assert any("no CPU samples" in n.message for n in notices)


@sync
async def test_steady_steps_only() -> None:
    """`s`: the samples of the main thread inside steps 1-5 (the NVTX ranges in SQL, each
    to the next step's start, the last to its end), the randn path on top bottom-up."""
    path = unxz(CALLSITES)
    steps = _sql(path, "SELECT start, end FROM NVTX_EVENTS WHERE text LIKE 'step %' "
                 "AND text != 'step 0' ORDER BY start")  # fmt: skip
    win = [(s, steps[i + 1][0] if i + 1 < len(steps) else e) for i, (s, e) in enumerate(steps)]
    inside = " OR ".join(f"(start >= {a} AND start < {b})" for a, b in win)
    (main, _), *_ = _sql(path, "SELECT globalTid, count(*) FROM COMPOSITE_EVENTS GROUP BY 1 "
                         "ORDER BY 2 DESC, 1")  # fmt: skip
    (n,) = _sql(path, f"SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid = {main} "
                f"AND ({inside})")[0]  # fmt: skip
    app = TuiperfApp(path, OpenOptions(use_cache=False), name=path.name)
    async with app.run_test(size=(140, 40)) as pilot:
        await _loaded(pilot, app)
        await pilot.press("C", "t", "s")
        screen = app.screen
        assert isinstance(screen, SamplesScreen)
        for _ in range(600):
            if screen.only_steps:
                break
            await pilot.pause(0.05)
        await pilot.pause()
        root = _root(app)
        assert root.count == n
        assert "normal_kernel" in root.ordered()[0].name
        assert "steady steps only (step 1 … step 5)" in screen_lines(app)[0]
        await pilot.press("s")
        await pilot.pause()
        assert _root(app).count > n and "steady" not in screen_lines(app)[0]
