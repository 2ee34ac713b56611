"""The report opened from its cache entry, and its lanes indexed, while the viewer starts.

`tuiperf REPORT` spends its first few hundred milliseconds importing Textual and starting
the app; the loader used to begin only once the app was mounted. Where the report has a
cache entry, opening it needs no progress screen, so it starts here, in a thread, before
Textual is imported: the loading worker then takes what it made (bench/early_open.md).
Where there is no entry (it would convert), this does nothing and the worker converts with
its progress as before. No Textual import here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tuiperf.load.open import NotCached, OpenOptions, open_trace
from tuiperf.model.timeline.lanes import LaneSet, build_lanes
from tuiperf.model.trace import Trace

#: how often a waiting worker looks whether it was cancelled (seconds)
_POLL = 0.02

Progress = Callable[[str, float], None]


class EarlyOpen:
    """Opens `path` from the cache alone and indexes its lanes, in a daemon thread started
    at once. `result` waits for it: (trace, lanes), or None where there was no entry."""

    def __init__(self, path: Path, opts: OpenOptions) -> None:
        self._opts = replace(opts, ahead=None, progress=None, cached_only=True)
        self._path = path
        self._done = threading.Event()
        self._got: tuple[Trace, LaneSet] | None = None
        self._error: BaseException | None = None
        #: where the lane index's progress goes once someone waits for it
        self.progress: Progress | None = None
        self._thread = threading.Thread(target=self._run, name="early-open", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            trace = open_trace(self._path, self._opts)
            self._got = (trace, build_lanes(trace, self._say, keep=False))
        except NotCached:
            pass
        except BaseException as e:  # handed to the waiting worker, raised there
            self._error = e
        finally:
            self._done.set()

    def _say(self, message: str, fraction: float) -> None:
        progress = self.progress
        if progress is not None:
            progress(message, fraction)

    def result(self, cancelled: Callable[[], bool]) -> tuple[Trace, LaneSet] | None:
        """(trace, lanes) once opened; None where the report has no cache entry, or when
        `cancelled()` turns true while waiting. What the thread raised is raised here."""
        while not self._done.wait(_POLL):
            if cancelled():
                return None
        if self._error is not None:
            raise self._error
        return self._got
