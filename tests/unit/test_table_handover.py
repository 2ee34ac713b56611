"""The nsys reader hands each table to its sink as the only reference, so a cache writer
that narrows the table a column at a time lets each original column go once replaced
(conversion peak memory: bench/cache_entry_ab.md, 20.5M kernels 3,632 -> 3,218 MiB).

Oracle: `sys.getrefcount` of an object referenced by nothing but the call's argument,
measured the same way in the same interpreter."""

from __future__ import annotations

import sys

import pyarrow as pa

from tests.conftest import nsys_report
from tuiperf.load.nsys.source import SqliteSource
from tuiperf.load.nsys.tables import NsysReader


def _count(obj: object) -> int:
    return sys.getrefcount(obj)


def test_each_table_reaches_the_sink_as_its_only_reference():
    alone = _count(object())  # an argument and nothing else
    held = pa.table({"x": [1]})
    assert _count(held) == alone + 1  # the check below can tell a held table apart
    counts: dict[str, int] = {}
    src = SqliteSource(nsys_report("lstm"))
    try:
        # (the sink's own parameter plays the part of `_count`'s)
        NsysReader(src).read_all(lambda name, t: counts.__setitem__(name, sys.getrefcount(t)))
    finally:
        src.close()
    assert {"api", "kernels", "memset"} <= set(counts)
    assert counts == dict.fromkeys(counts, alone), counts
