"""Lane control (issue 34 item 4): OS runtime lanes of threads waiting in one call bundled
and folded by default, `x` / `X` hide and show, `P` pins, `U` / `D` move, `c` folds; the
layout remembered per report. Oracles: SQL over cnn_osrt's export for which threads wait
in pthread_cond_wait, the lanes' own keys for what moved where."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import ready, settle, sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.viewstate.layout import BUNDLE_MIN, MAIN_CALL_SHARE, layout_path
from tuiperf.tui.widgets.timeline import Timeline


def _waiting_threads() -> tuple[int, set[int]]:
    """(the process, its threads other than the main one whose OS runtime calls are, for
    at least half of them, pthread_cond_wait), by SQL over the export."""
    con = sqlite3.connect(f"file:{nsys_report('cnn_osrt')}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT o.globalTid, SUM(s.value = 'pthread_cond_wait'), COUNT(*) FROM OSRT_API o "
        "JOIN StringIds s ON s.id = o.nameId GROUP BY o.globalTid"
    ).fetchall()
    con.close()
    found: dict[int, set[int]] = {}
    for gtid, waits, n in rows:
        pid, tid = (gtid >> 24) & 0xFFFFFF, gtid & 0xFFFFFF
        if tid != pid and waits >= MAIN_CALL_SHARE * n:
            found.setdefault(pid, set()).add(tid)
    ((pid, tids),) = found.items()
    return pid, tids


def _shown(tl: Timeline) -> list[tuple[str, str | None]]:
    """(group key, lane key or None for a header) of every row, top to bottom."""
    assert tl.lanes is not None
    out = []
    for row in tl.rows:
        g = tl.lanes.groups[row.group].key
        out.append(
            (g, None if row.lane is None else "/".join(map(str, tl.lanes.lanes[row.lane].key)))
        )
    return out


def _goto(tl: Timeline, table: str) -> int:
    """Put the lane cursor on the first lane of `table`: its lane index."""
    r = next(r for r, row in enumerate(tl.rows) if row.lane is not None
             and tl.lanes.lanes[row.lane].table == table)  # type: ignore[union-attr]  # fmt: skip
    tl.state.row_cursor = r
    lane = tl.rows[r].lane
    assert lane is not None
    return lane


@sync
async def test_waiting_worker_threads_fold_into_one_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUIPERF_CONFIG_DIR", str(tmp_path))
    pid, tids = _waiting_threads()
    assert len(tids) >= BUNDLE_MIN
    app = TuiperfApp(nsys_report("cnn_osrt"), OpenOptions(use_cache=False), name="cnn")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        assert tl.lanes is not None
        (bundle,) = [g for g in tl.lanes.groups if ":osrt:" in g.key]
        assert bundle.key == f"proc:{pid}:osrt:pthread_cond_wait"
        assert {tl.lanes.lanes[li].place["tid"] for li in bundle.lanes} == tids
        gi = tl.lanes.groups.index(bundle)
        assert gi in tl.collapsed  # folded by default: one row for all of them
        assert sum(1 for row in tl.rows if row.group == gi) == 1
        # the process group keeps its other lanes, the main thread's OS runtime lane too
        proc = next(g for g in tl.lanes.groups if g.key == f"proc:{pid}")
        assert ("osrt", pid, pid) in {tl.lanes.lanes[li].key[:3] for li in proc.lanes}
        # c on the bundle's header unfolds it, and that is remembered
        tl.focus()
        tl.state.row_cursor = tl.rows.index(next(r for r in tl.rows if r.group == gi))
        await pilot.press("c")
        await settle(pilot)
        assert sum(1 for row in tl.rows if row.group == gi) == 1 + len(tids)
    path = layout_path(str(nsys_report("cnn_osrt")))
    assert path is not None and path.is_relative_to(tmp_path)
    assert f'"proc:{pid}:osrt:pthread_cond_wait": false' in path.read_text()


@sync
async def test_hide_pin_move_and_the_layout_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUIPERF_CONFIG_DIR", str(tmp_path))
    report = nsys_report("vit_range")
    app = TuiperfApp(report, OpenOptions(use_cache=False), name="vit_range")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        tl = app.query_one(Timeline)
        tl.focus()
        before = _shown(tl)
        assert tl.lanes is not None
        # x hides the NVTX lane, X shows it again where it was
        nvtx = _goto(tl, "nvtx")
        nvtx_key = "/".join(map(str, tl.lanes.lanes[nvtx].key))
        await pilot.press("x")
        await settle(pilot)
        assert [s for s in before if s[1] != nvtx_key] == _shown(tl)
        await pilot.press("X")
        await settle(pilot)
        assert _shown(tl) == before
        # P pins the CUDA API lane: a Pinned group on top holding it, gone from its group
        api = _goto(tl, "api")
        api_key = "/".join(map(str, tl.lanes.lanes[api].key))
        await pilot.press("P")
        await settle(pilot)
        assert _shown(tl)[:2] == [("pinned", None), ("pinned", api_key)]
        assert [s for s in _shown(tl)[2:] if s[1] == api_key] == []
        # D moves the GPU group's first lane down one: the next lane comes first
        gpu = [s[1] for s in before if s[0].startswith("gpu:") and s[1] is not None]
        assert len(gpu) >= 2
        tl.state.row_cursor = _shown(tl).index(("gpu:0", gpu[0]))
        await pilot.press("D")
        await settle(pilot)
        now = [s[1] for s in _shown(tl) if s[0] == "gpu:0" and s[1] is not None]
        assert now == [gpu[1], gpu[0], *gpu[2:]]
        assert tl.rows[tl.row_cursor].lane is not None  # the cursor went with the lane
        assert _shown(tl)[tl.row_cursor][1] == gpu[0]
        # and x on the NVTX lane again, kept hidden for the next opening
        _goto(tl, "nvtx")
        await pilot.press("x")
        await settle(pilot)
        arranged = _shown(tl)
    again = TuiperfApp(report, OpenOptions(use_cache=False), name="vit_range")
    async with again.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        assert _shown(again.query_one(Timeline)) == arranged
    monkeypatch.setenv("TUIPERF_CONFIG_DIR", str(tmp_path / "elsewhere"))
    fresh = TuiperfApp(report, OpenOptions(use_cache=False), name="vit_range")
    async with fresh.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        assert _shown(fresh.query_one(Timeline)) == before  # no layout: the default
