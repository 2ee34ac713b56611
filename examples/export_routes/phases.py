"""Where the viewer's first screen from the cache goes, in a real terminal: `tuiperf REPORT`
with timestamps (seconds since the process started) appended to OUT as one line:
interpreter ready, viewer imported, app mounted, report loaded (trace and lanes in the app),
first refresh after it; and the early open's thread (tui/early.py): its module imported,
its start, the trace opened, the lanes indexed.
usage: PYTHONPATH=TREE python phases.py OUT REPORT [options]
(a script: the folder it runs in is not on its import path)"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import time


def _since_start() -> float:
    """Seconds since this process started (/proc: its start time in clock ticks since boot)."""
    with open("/proc/self/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


OUT = sys.argv.pop(1)
T0 = time.perf_counter() - _since_start()
STAMPS: list[str] = []


def stamp(what: str) -> None:
    text = f"{what} {time.perf_counter() - T0:.3f}"  # the early open's thread stamps too
    STAMPS.append(text)
    with open(OUT, "a") as f:
        f.write(text + ("\n" if what == "first refresh" else " "))


class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name != "tuiperf.tui.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        assert spec is not None and spec.loader is not None
        run = spec.loader.exec_module

        def exec_module(mod):  # type: ignore[no-untyped-def]
            stamp("import viewer")
            run(mod)
            stamp("imported")
            loaded, mount = mod.TuiperfApp._loaded, mod.TuiperfApp.on_mount

            def on_loaded(self, *a):  # type: ignore[no-untyped-def]
                stamp("loaded")
                loaded(self, *a)
                self.call_after_refresh(lambda: stamp("first refresh"))

            def on_mount(self):  # type: ignore[no-untyped-def]
                stamp("mounted")
                mount(self)

            mod.TuiperfApp._loaded, mod.TuiperfApp.on_mount = on_loaded, on_mount

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


class EarlyHook(importlib.abc.MetaPathFinder):
    """Stamps the early open's thread: its start, the trace opened, the lanes indexed."""

    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name != "tuiperf.tui.early":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        assert spec is not None and spec.loader is not None
        run = spec.loader.exec_module

        def exec_module(mod):  # type: ignore[no-untyped-def]
            stamp("early imported")
            run(mod)
            open_trace, build_lanes = mod.open_trace, mod.build_lanes

            def opened(*a, **k):  # type: ignore[no-untyped-def]
                stamp("early start")
                got = open_trace(*a, **k)
                stamp("early opened")
                return got

            def lanes(*a, **k):  # type: ignore[no-untyped-def]
                got = build_lanes(*a, **k)
                stamp("early lanes")
                return got

            mod.open_trace, mod.build_lanes = opened, lanes

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


stamp("ready")
sys.meta_path.insert(0, Hook())
sys.meta_path.insert(0, EarlyHook())
from tuiperf.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
