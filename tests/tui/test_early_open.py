"""The viewer opens a cached report while it starts (tui/early.py): what the early open
hands the app equals a plain open and lane build; it never converts (no entry: nothing, and
the app converts with its progress); its errors are the app's errors; a quit while it
waits does not hang; `tuiperf REPORT` starts it only where an entry can be there."""

from __future__ import annotations

import argparse
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import nsys_report
from tests.tui.pilot_helpers import ready, sync
from tuiperf.commands.open_tui import open_early
from tuiperf.errors import TuiperfError
from tuiperf.load.open import NotCached, OpenOptions, open_trace
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.tui import app as app_module
from tuiperf.tui import early as early_module
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.early import EarlyOpen

REPO = Path(__file__).resolve().parents[2]
FIELDS = ("starts", "ends", "rows", "max_end", "u_start", "u_end", "cum_busy")


def arrays(lanes) -> dict:  # type: ignore[no-untyped-def]
    return {lane.key: [getattr(lane.iv, f) for f in FIELDS] for lane in lanes.lanes}


def never_cancelled() -> bool:
    return False


def test_an_entry_opens_early_equal_to_a_plain_open(tmp_path: Path) -> None:
    report = nsys_report("vit_amp")
    opts = OpenOptions(cache_dir=tmp_path)
    open_trace(report, opts)  # the entry
    got = EarlyOpen(report, opts).result(never_cancelled)
    assert got is not None
    trace, lanes = got
    assert trace.meta.from_cache
    fresh = arrays(build_lanes(open_trace(report, OpenOptions(use_cache=False))))
    early = arrays(lanes)
    assert early.keys() == fresh.keys() and len(fresh) > 3
    for key in fresh:
        for name, a, b in zip(FIELDS, fresh[key], early[key]):
            np.testing.assert_array_equal(a, b, err_msg=f"{key} {name}")


def test_no_entry_no_conversion(tmp_path: Path) -> None:
    report = nsys_report("vit_range")
    assert EarlyOpen(report, OpenOptions(cache_dir=tmp_path)).result(never_cancelled) is None
    assert not [p for p in tmp_path.rglob("*.arrow")]  # nothing converted into the cache
    with pytest.raises(NotCached):
        open_trace(report, OpenOptions(use_cache=False, cached_only=True))


def test_its_error_is_the_plain_opens(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 10)
    opts = OpenOptions(cache_dir=tmp_path / "cache")
    with pytest.raises(TuiperfError) as plain:
        open_trace(bad, opts)
    with pytest.raises(TuiperfError) as early:
        EarlyOpen(bad, opts).result(never_cancelled)
    assert type(early.value) is type(plain.value) and str(early.value) == str(plain.value)


def test_a_cancel_while_waiting_returns(monkeypatch, tmp_path: Path) -> None:
    gate = threading.Event()

    def stuck(path, opts):  # type: ignore[no-untyped-def]
        gate.wait(10)
        raise NotCached(str(path))

    monkeypatch.setattr(early_module, "open_trace", stuck)
    job = EarlyOpen(nsys_report("vit_range"), OpenOptions(cache_dir=tmp_path))
    asked = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 2

    assert job.result(cancelled) is None
    assert len(asked) == 3
    gate.set()


@sync
async def test_the_app_draws_what_the_early_open_made(tmp_path: Path, monkeypatch) -> None:
    report = nsys_report("vit_amp")
    opts = OpenOptions(cache_dir=tmp_path)
    open_trace(report, opts)
    early = EarlyOpen(report, opts)

    def no_open(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the app opened the report again")

    monkeypatch.setattr(app_module, "open_trace", no_open)
    monkeypatch.setattr(app_module, "build_lanes", no_open)
    app = TuiperfApp(report, opts, name="vit_amp", early=early)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        got = early.result(never_cancelled)
        assert got is not None and app.trace is got[0] and app.lanes is got[1]
        assert app.error is None


@sync
async def test_without_an_entry_the_app_converts_with_progress(tmp_path: Path) -> None:
    report = nsys_report("vit_range")
    opts = OpenOptions(cache_dir=tmp_path)
    early = EarlyOpen(report, opts)
    app = TuiperfApp(report, opts, name="vit_range", early=early)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert app.trace is not None and not app.trace.meta.from_cache
        assert app.lanes is not None and len(app.lanes.lanes) > 3


@sync
async def test_an_early_error_is_shown_as_the_apps(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 10)
    opts = OpenOptions(cache_dir=tmp_path / "cache")
    app = TuiperfApp(bad, opts, name="bad", early=EarlyOpen(bad, opts))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(100):
            await pilot.pause(0.05)
            if app.error is not None or not app.is_running:
                break
    assert isinstance(app.error, TuiperfError)
    with pytest.raises(TuiperfError) as plain:
        open_trace(bad, opts)
    assert str(app.error) == str(plain.value)


def _args(**kw: object) -> argparse.Namespace:
    base: dict[str, object] = {"ncu_path": None, "export_ahead": None}
    base.update(kw)
    return argparse.Namespace(**base)


def test_the_cli_starts_it_only_where_an_entry_can_be(tmp_path: Path) -> None:
    report = nsys_report("vit_range")
    opts = OpenOptions(cache_dir=tmp_path)
    assert open_early(report, _args(ncu_path=report), opts) is None  # an .ncu-rep linked
    assert open_early(report, _args(export_ahead=object()), opts) is None  # nsys runs
    assert open_early(report, _args(), OpenOptions(use_cache=False)) is None
    job = open_early(report, _args(), opts)
    assert isinstance(job, EarlyOpen)
    assert job.result(never_cancelled) is None  # no entry yet


def test_it_leaves_the_export_ahead_and_the_progress_printer_alone(tmp_path: Path) -> None:
    """Its own open never cancels an nsys export started ahead (open_trace stops the one it
    was given) and never prints progress (the CLI's printer would write under the TUI)."""

    class Ahead:
        cancelled = 0

        def cancel(self) -> None:
            Ahead.cancelled += 1

    # a .nsys-rep with its SQLite export beside it: opened without nsys, and open_trace
    # stops the export it was given for a .nsys-rep (here: the early open's own)
    report = tmp_path / "run.nsys-rep"
    shutil.copy(REPO / "tests" / "data" / "nsys" / "vit_range.nsys-rep", report)
    shutil.copy(nsys_report("vit_range"), tmp_path / "run.sqlite")
    printed: list[object] = []
    cache = tmp_path / "cache"
    opts = OpenOptions(cache_dir=cache, progress=printed.append, ahead=Ahead())  # type: ignore[arg-type]
    open_trace(report, OpenOptions(cache_dir=cache))
    printed.clear()
    assert EarlyOpen(report, opts).result(never_cancelled) is not None
    assert Ahead.cancelled == 0
    assert printed == []


def test_it_never_holds_the_process_nor_writes_the_lane_index(tmp_path: Path) -> None:
    report = nsys_report("vit_amp")
    open_trace(report, OpenOptions(cache_dir=tmp_path))  # an entry, no lane index yet
    job = EarlyOpen(report, OpenOptions(cache_dir=tmp_path))
    assert job._thread.daemon  # a quit never waits for it
    got = job.result(never_cancelled)
    assert got is not None
    assert got[1].unkept  # kept by the app after its first frame, not here
    assert not list(tmp_path.rglob("lane-index-*"))


def test_the_lane_index_progress_reaches_a_waiter(monkeypatch, tmp_path: Path) -> None:
    report = nsys_report("vit_amp")
    opts = OpenOptions(cache_dir=tmp_path)
    open_trace(report, opts)
    gate = threading.Event()
    real_open = early_module.open_trace

    def gated(path, o):  # type: ignore[no-untyped-def]
        gate.wait(10)
        return real_open(path, o)

    monkeypatch.setattr(early_module, "open_trace", gated)
    job = EarlyOpen(report, opts)
    said: list[tuple[str, float]] = []
    job.progress = lambda message, fraction: said.append((message, fraction))
    gate.set()
    assert job.result(never_cancelled) is not None
    assert said and said[0] == ("index kernels", 0.0)
    assert all(m.startswith("index ") and 0.0 <= f < 1.0 for m, f in said)
