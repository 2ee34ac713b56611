"""`tuiperf REPORT --goto ID` (issue 36): the viewer opens at an event, a stretch of time or
a finding's first evidence row. Events checked against sqlite3 on the export."""

from __future__ import annotations

import sqlite3

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import ready, settle, sync
from tuiperf.analysis.ids import parse
from tuiperf.load.open import OpenOptions
from tuiperf.tui.goto import GotoApp
from tuiperf.tui.widgets.side_panel import SidePanel
from tuiperf.tui.widgets.timeline import Timeline


def _app(goto: str) -> GotoApp:
    return GotoApp(nsys_report("cnn_osrt"), OpenOptions(use_cache=False), name="cnn",
                   goto=parse(goto))  # fmt: skip


def _sqlite(sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{nsys_report('cnn_osrt')}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


async def _wait_went(pilot, app: GotoApp) -> None:  # type: ignore[no-untyped-def]
    for _ in range(200):
        if app.went is not None or app.goto_note:
            return
        await settle(pilot, 0.05)


@sync
async def test_goto_an_event_selects_it_and_zooms_to_it():
    """kernels:1000 is the 1001st kernel by start time in the export."""
    start, end, name = _sqlite(
        "SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName ORDER BY k.start LIMIT 1 OFFSET 1000"
    )[0]
    app = _app("kernels:1000")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        await _wait_went(pilot, app)
        tl = app.query_one(Timeline)
        sel = tl.selection
        assert sel is not None and (sel.table, sel.row) == ("kernels", 1000)
        assert (sel.start, sel.end) == (start, end)
        assert tl.vp.start <= start and end <= tl.vp.end  # in view, zoomed in:
        assert tl.vp.span < 10 * (end - start) and len(tl.zooms) == 1  # backspace goes back
        details = app.query_one(SidePanel).details
        assert details is not None and details.kind == "kernel"
        assert (details.table, details.row) == ("kernels", 1000) and details.title in name


@sync
async def test_goto_a_finding_opens_its_first_evidence_row():
    """pageable_h2d_in_steps' first row: the first pageable host-to-device copy inside
    the steady steps (step 2's start on), by start time in the export."""
    (step2,) = _sqlite(
        "SELECT n.start FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE coalesce(n.text, s.value) = 'step 2'"
    )[0]
    start, end = _sqlite(
        "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE srcKind = 0 AND copyKind = 1 "
        f"AND start >= {step2} ORDER BY start LIMIT 1"
    )[0]
    app = _app("pageable_h2d_in_steps")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        await _wait_went(pilot, app)
        sel = app.query_one(Timeline).selection
        assert app.goto_note == "" and sel is not None and sel.table == "memcpy"
        assert (sel.start, sel.end) == (start, end)


@sync
async def test_goto_a_stretch_of_time_zooms_to_it():
    (a, b) = _sqlite(
        "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE coalesce(n.text, s.value) = 'step 5'"
    )[0]
    app = _app(f"at:{a}+{b - a}")
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        await _wait_went(pilot, app)
        vp = app.query_one(Timeline).vp
        assert vp.start <= a and b <= vp.end and vp.span < 2 * (b - a)


@sync
async def test_goto_what_is_not_there_says_so():
    n = _sqlite("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]
    for goto, says in ((f"kernels:{n}", f"the report has {n:,} kernels rows"),
                       ("no_such_rule", "no finding with that id")):  # fmt: skip
        app = _app(goto)
        async with app.run_test(size=(160, 48)) as pilot:
            await ready(pilot)
            await _wait_went(pilot, app)
            assert app.went is None and says in app.goto_note
            assert app.query_one(Timeline).selection is None


# -- Nsight Compute results (review of issue 36) ---------------------------------------------


def _ncu_signatures(name: str) -> dict[int, tuple[str, str, str]]:
    """ncu ID -> (Kernel Name, Grid Size, Block Size), from ncu's own details page."""
    import csv
    import io
    import lzma

    from tests.conftest import DATA

    text = lzma.decompress((DATA / "ncu" / f"{name}.details.csv.xz").read_bytes()).decode()
    out: dict[int, tuple[str, str, str]] = {}
    for r in csv.DictReader(io.StringIO(text)):
        out.setdefault(int(r["ID"]), (r["Kernel Name"], r["Grid Size"], r["Block Size"]))
    return out


def _launch_of(kernel_id: int) -> tuple[int, int]:
    """(row, start) of the launch ncu result `kernel_id` of lstm_basic profiled in lstm's
    export: the k-th launch, by start, of the same name, grid and block, where k counts the
    results with that signature before it (ncu profiles the launches in order)."""
    sig = _ncu_signatures("lstm_basic")
    k = sum(1 for i in range(kernel_id) if sig[i] == sig[kernel_id])
    rows = _sqlite_of("lstm", "SELECT k.start, s.value, k.gridX, k.gridY, k.gridZ, k.blockX, "
                      "k.blockY, k.blockZ FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                      "ON s.id = k.demangledName ORDER BY k.start")  # fmt: skip
    hits = [(i, r[0]) for i, r in enumerate(rows)
            if (r[1], "({}, {}, {})".format(*r[2:5]), "({}, {}, {})".format(*r[5:8]))
            == sig[kernel_id]]  # fmt: skip
    return hits[k]


def _sqlite_of(name: str, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{nsys_report(name)}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


def _ncu_app(ncu: str, goto: str) -> GotoApp:
    from tests.tui.pilot_helpers import ncu_report

    return GotoApp(nsys_report("lstm"), OpenOptions(use_cache=False), name="lstm",
                   ncu_path=ncu_report(ncu), goto=parse(goto))  # fmt: skip


def _ncu_alone_id(kernel_id: int) -> str:
    """The id `analyze lstm_basic.ncu-rep` prints for a finding whose first row is the ncu
    kernel `kernel_id`."""
    from tests.tui.pilot_helpers import ncu_report
    from tuiperf.analysis.engine import analyze
    from tuiperf.analysis.ids import finding_ids
    from tuiperf.load.ncu.open import open_ncu

    km = open_ncu(ncu_report("lstm_basic"), OpenOptions(use_cache=False))
    fids = finding_ids(analyze(None, km).findings)
    return next(f for f in fids if f.startswith("ncu:") and f.endswith(f"@ncu_kernels:{kernel_id}"))


@sync
async def test_goto_an_ncu_result_opens_its_linked_launch():
    """ncu_kernels:24 and 12 (the second result of its signature), and a finding id of
    the ncu report analyzed alone, each go to the launch ncu profiled."""
    from tests.support import needs

    needs.module("ncu_report")
    for goto, kernel_id in (("ncu_kernels:24", 24), ("ncu_kernels:12", 12),
                            (_ncu_alone_id(12), 12)):  # fmt: skip
        row, start = _launch_of(kernel_id)
        app = _ncu_app("lstm_basic", goto)
        async with app.run_test(size=(160, 48)) as pilot:
            await ready(pilot)
            await _wait_went(pilot, app)
            sel = app.query_one(Timeline).selection
            assert app.goto_note == "" and sel is not None, goto
            assert (sel.table, sel.row, sel.start) == ("kernels", row, start), goto


@sync
async def test_goto_an_ncu_result_with_no_launch_here_is_a_usage_error():
    """vit_full's kernels are not launched in lstm: ncu_kernels:3 has no place there."""
    from tests.support import needs
    from tuiperf.errors import UsageError

    needs.module("ncu_report")
    app = _ncu_app("vit_full", "ncu_kernels:3")
    async with app.run_test(size=(160, 48)) as pilot:
        # the app ends itself as soon as the link is known, maybe while its load workers
        # are still being awaited: poll for the error, never wait on those workers
        for _ in range(600):
            if app.error is not None:
                break
            await pilot.pause(0.05)
    assert isinstance(app.error, UsageError) and app.error.code == 2
    assert str(app.error).startswith("--goto ncu_kernels:3: that Nsight Compute result has no")
