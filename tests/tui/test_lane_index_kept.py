"""The viewer's first open draws from a lane index it has not written yet, and keeps it in
the cache entry after the first frame: a reopen restores it (without splitting the table
again) equal, array by array, to a build without any cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import ready, sync
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline import lanes as lanes_module
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.tui.app import TuiperfApp

FIELDS = ("starts", "ends", "rows", "max_end", "u_start", "u_end", "cum_busy")


def arrays(lanes) -> dict:  # type: ignore[no-untyped-def]
    return {lane.key: [getattr(lane.iv, f) for f in FIELDS] for lane in lanes.lanes}


@sync
async def test_the_first_open_keeps_the_lane_index_for_a_reopen(tmp_path: Path, monkeypatch):
    report = nsys_report("vit_amp")  # overlapping kernels: a union is kept too
    app = TuiperfApp(report, OpenOptions(cache_dir=tmp_path), name="vit_amp")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert app.lanes is not None
        for _ in range(100):  # the store starts on a timer after the first frame
            await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            if not app.lanes.unkept:
                break
        assert not app.lanes.unkept
        session = arrays(app.lanes)
    kept = sorted(p.name for p in tmp_path.rglob("lane-*.arrow"))
    assert "lane-index-kernels-pid-device-stream.arrow" in kept
    assert "lane-index-api-pid-tid.arrow" in kept
    fresh = arrays(build_lanes(open_trace(report, OpenOptions(use_cache=False))))
    again = open_trace(report, OpenOptions(cache_dir=tmp_path))
    assert again.meta.from_cache

    def no_split(*args):  # type: ignore[no-untyped-def]
        raise AssertionError("a table was split again: the stored index was not used")

    monkeypatch.setattr(lanes_module, "split_table", no_split)
    restored = build_lanes(again)
    got = arrays(restored)
    assert got.keys() == fresh.keys()
    for key in fresh:
        for name, a, b in zip(FIELDS, fresh[key], got[key]):
            np.testing.assert_array_equal(a, b, err_msg=f"{key} {name}")
    for key in fresh:
        for name, a, b in zip(FIELDS, fresh[key], session[key]):
            np.testing.assert_array_equal(a, b, err_msg=f"session {key} {name}")


@sync
async def test_the_header_says_what_converts_in_the_background(tmp_path: Path, monkeypatch):
    """A cold open: the lane index's write and the detail columns' conversion are named in
    the header while they run, in order, and gone once done."""
    seen: list[tuple[str, str | None]] = []
    real = TuiperfApp._set_background

    def record(self, job, what):  # type: ignore[no-untyped-def]
        seen.append((job, what))
        real(self, job, what)

    monkeypatch.setattr(TuiperfApp, "_set_background", record)
    app = TuiperfApp(nsys_report("vit_amp"), OpenOptions(cache_dir=tmp_path), name="vit_amp")
    async with app.run_test(size=(200, 40)) as pilot:
        await ready(pilot)
        for _ in range(100):
            await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            if not app.background and app.trace is not None and not app.trace.pending:
                break
        header = str(app.query_one("ReportHeader").render())
    assert ("lane-index", "writing the lane index") in seen
    assert seen.index(("lane-index", "writing the lane index")) < seen.index(("lane-index", None))
    for table in ("api", "kernels"):  # each said while it converted, then no more
        said = (f"details:{table}", f"converting {table} details")
        assert said in seen
        assert seen.index(said) < seen.index((f"details:{table}", None))
    assert "converted, now cached" in header and "…" not in header
    assert not app.background
