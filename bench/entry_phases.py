"""Where a conversion's time goes, in one process: `open_trace` of REPORT into an empty
cache, then `kern_sum`, with a timestamp (s since the open began) at each table handed to
the cache entry, each background store's start and end, the writer's finish, the open's
end and the summary's. For bench/entry_overlap.md.

usage: PYTHONPATH=TREE .venv/bin/python bench/entry_phases.py REPORT [--pandas] [--inline]
--pandas: import pandas first (as an older tree did while nsys ran); --inline: every table
stored in line (store.OVERLAP_UP_TO = -1), the writer as it was before the overlap.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tuiperf.load.cache import store
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.summaries import stats

LOG: list[str] = []
T1 = 0.0


def stamp(what: str) -> None:
    LOG.append(f"{what} {time.perf_counter() - T1:.3f}")


def instrument() -> None:
    add, fin = store.EntryWriter.add, getattr(store.EntryWriter, "finish", None)
    put = getattr(store.EntryWriter, "_store", None)

    def add_(self, name, table):  # type: ignore[no-untyped-def]
        stamp(f"add {name} {table.nbytes >> 20}MiB")
        add(self, name, table)

    store.EntryWriter.add = add_  # type: ignore[method-assign]
    if fin is not None:

        def fin_(self):  # type: ignore[no-untyped-def]
            stamp("finish")
            fin(self)
            stamp("finished")

        store.EntryWriter.finish = fin_  # type: ignore[method-assign]
    if put is not None:

        def put_(self, name, table):  # type: ignore[no-untyped-def]
            stamp(f"  store {name} begin")
            put(self, name, table)
            stamp(f"  store {name} end")

        store.EntryWriter._store = put_  # type: ignore[method-assign]


def main() -> None:
    global T1
    import tuiperf.load.nsys.meta  # (imported while nsys runs, in the CLI)
    import tuiperf.load.nsys.tables  # noqa: F401

    if "--pandas" in sys.argv:
        import pandas  # noqa: F401
    if "--inline" in sys.argv:
        store.OVERLAP_UP_TO = -1
    instrument()
    with tempfile.TemporaryDirectory() as d:
        T1 = time.perf_counter()
        trace = open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(d)))
        stamp("opened")
        stats.kern_sum(trace)
        stamp("kern_sum")
    print("\n".join(LOG))


if __name__ == "__main__":
    main()
