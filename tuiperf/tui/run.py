"""Running a viewer app so that quitting is immediate.

The viewer does its background work (advice, the events table, detail columns, the lane
index's write) in Textual thread workers, which run on the event loop's default executor.
asyncio.run waits for that executor's threads when the app ends, and the interpreter joins
them at exit: `q` on a 20M-kernel report kept the terminal for over a minute. Here the app
gets its own loop whose default executor runs each job on a daemon thread, and nothing
waits for them: what they write into the cache is written whole or not at all (a file
under a temporary name, renamed when complete; what a killed write leaves is swept by a
later open, see load.cache.store). A job that must end before the process does (the loader:
it stops at the next step once cancelled, removing its half-converted entry and the nsys
export it started) is marked `@waited_for`, and is joined after the app quits.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from textual.app import App

F = TypeVar("F", bound=Callable[..., Any])

#: the threads running a `waited_for` job now
_WAITED: set[threading.Thread] = set()
_lock = threading.Lock()


def waited_for(fn: F) -> F:
    """Mark a thread worker's function as one the process waits for at quit."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        me = threading.current_thread()
        with _lock:
            _WAITED.add(me)
        try:
            return fn(*args, **kwargs)
        finally:
            with _lock:
                _WAITED.discard(me)

    return run  # type: ignore[return-value]


class _DaemonExecutor(ThreadPoolExecutor):
    """Each job on a new daemon thread (asyncio takes only a ThreadPoolExecutor)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()

        def work() -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                fut.set_result(fn(*args, **kwargs))
            except BaseException as e:  # handed to whoever awaits the job
                fut.set_exception(e)

        threading.Thread(target=work, name="tuiperf-worker", daemon=True).start()
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        pass  # nothing to wait for: the threads are the jobs'


def run_app(app: App[Any], mouse: bool, headless: bool = False) -> Any:
    """`app.run`, returning as soon as the app has quit (background jobs are left)."""
    loop = asyncio.new_event_loop()
    loop.set_default_executor(_DaemonExecutor())
    try:
        if headless:  # only when asked: a test's own run() may add it itself
            return app.run(mouse=mouse, loop=loop, headless=True)
        return app.run(mouse=mouse, loop=loop)
    finally:
        loop.close()
        with _lock:
            waited = list(_WAITED)
        for t in waited:  # cancelled with the app: they end at their next step
            t.join()
