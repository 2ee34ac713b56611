"""Quitting the viewer does not wait for its background jobs (tui/run.py), and what a job
killed mid-write leaves in a cache entry is swept by the next open (load.cache.store)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from textual import work
from textual.app import App

from tests.conftest import nsys_report
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.tui.run import run_app, waited_for


class _Busy(App[int]):
    """Starts a thread worker that blocks until released, then quits at once."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.started = threading.Event()
        self.finished = threading.Event()

    def on_mount(self) -> None:
        self._job()
        self.started.wait(10)
        self.exit(7)

    def _wait(self) -> None:
        self.started.set()
        self.release.wait(30)
        self.finished.set()

    _job = work(thread=True)(_wait)


def test_quit_returns_while_a_thread_worker_still_runs():
    app = _Busy()
    rc = run_app(app, mouse=False, headless=True)
    assert rc == 7
    assert app.started.is_set()
    # had run_app waited for the job, the job would have finished (after its 30 s wait)
    assert not app.finished.is_set()
    app.release.set()
    assert app.finished.wait(10)  # the job itself ran on, on its own thread


class _Loading(_Busy):
    """The same, its job marked as one to wait for (a loader, with cleanup to do)."""

    _job = work(thread=True)(waited_for(_Busy._wait))


def test_quit_waits_for_a_job_marked_waited_for():
    app = _Loading()

    def release_after_quit() -> None:  # the job ends only once the app has stopped
        app.started.wait(10)
        while app.is_running:
            time.sleep(0.01)
        time.sleep(0.2)
        app.release.set()

    threading.Thread(target=release_after_quit, daemon=True).start()
    assert run_app(app, mouse=False, headless=True) == 7
    assert app.finished.is_set()


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_an_interrupted_write_is_swept_on_the_next_open(tmp_path: Path):
    report = nsys_report("vit_range")
    opts = OpenOptions(cache_dir=tmp_path)
    entry = Path(open_trace(report, opts).meta.cache_path or "")
    (entry / "derived").mkdir(exist_ok=True)
    dead, alive = _dead_pid(), os.getpid()
    left = [entry / f".tmp-{dead}-0a1b.arrow", entry / "derived" / f".tmp-{dead}-2c3d.arrow"]
    ours = entry / "derived" / f".tmp-{alive}-4e5f.arrow"  # a write of a live process
    for p in [*left, ours]:
        p.write_bytes(b"half a file")
    again = open_trace(report, opts)
    assert again.meta.from_cache
    assert not any(p.exists() for p in left)
    assert ours.exists()
