"""Which findings involve an event, a set of rows or a kernel name: built once, looked up often.

The TUI's fixes panel asks this on every selection change, so a lookup touches only the
findings (a binary search in each one's sorted evidence rows), never the trace. Kernel names
are matched loosely (`ncu_names.normalize`) because nsys and ncu spell them differently;
that is how an ncu finding without nsys rows still reaches the kernel it is about.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from tuiperf.analysis.findings import Finding
from tuiperf.model.arrays import as_int64
from tuiperf.model.ncu.names import normalize
from tuiperf.model.trace import Trace

#: why a finding was listed for a selection
BY_EVENT = "event"  # the selected row is one of its evidence rows
BY_KERNEL = "kernel"  # it is about the selected kernel's name


@dataclass(frozen=True)
class Hit:
    """A finding that involves the selection, and which of its evidence rows do."""

    finding: int  # index into FindingIndex.findings (ranked order)
    evidence: tuple[int, ...] = ()  # positions in the finding's evidence rows
    why: str = BY_EVENT


@dataclass
class _Rows:
    """One finding's evidence rows of one table, sorted, with their evidence positions."""

    finding: int
    rows: np.ndarray  # sorted row indexes
    positions: np.ndarray  # rows[k] is evidence row positions[k]


class FindingIndex:
    """(table, row) -> findings, kernel name -> findings, over ranked findings."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        self._by_table: dict[str, list[_Rows]] = {}
        self._by_name: dict[str, list[int]] = {}
        for i, f in enumerate(findings):
            self._add_rows(i, f)
            keys = {key for name in (*f.kernels, f.kernel or "") for key in _name_keys(name)}
            for key in keys:
                self._by_name.setdefault(key, []).append(i)

    def _add_rows(self, i: int, f: Finding) -> None:
        ev = f.evidence.rows
        if ev.num_rows == 0 or ev["row"].null_count == ev.num_rows:
            return
        # (to_pylist and buffers: `to_numpy` and `fill_null` import pandas; model/arrays.py)
        tables = np.array(ev["table"].to_pylist(), dtype=object).astype(str)
        rows = as_int64(ev["row"], -1)
        for table in np.unique(tables):
            if not table:  # derived regions (gaps, idle windows) index no table
                continue
            pos = np.flatnonzero((tables == table) & (rows >= 0))
            order = np.argsort(rows[pos], kind="stable")
            self._by_table.setdefault(str(table), []).append(_Rows(i, rows[pos][order], pos[order]))

    def __len__(self) -> int:
        return len(self.findings)

    def ranked(self) -> list[Hit]:
        """Every finding, best first (the order `analyze` ranked them in)."""
        return [Hit(i, (), BY_EVENT) for i in range(len(self.findings))]

    def for_event(self, table: str, row: int, names: Iterable[str] = ()) -> list[Hit]:
        """Findings whose evidence has row `row` of `table`, then those about `names`."""
        hits: dict[int, Hit] = {}
        for part in self._by_table.get(table, ()):
            lo, hi = np.searchsorted(part.rows, [row, row + 1])
            if hi > lo:
                hits[part.finding] = Hit(part.finding, _merge(hits, part, lo, hi), BY_EVENT)
        return self._with_names(hits, names)

    def for_rows(self, table: str, rows: np.ndarray, names: Iterable[str] = ()) -> list[Hit]:
        """Findings whose evidence has any of `rows` (e.g. every launch of one kernel)."""
        want = np.unique(np.asarray(rows, np.int64))
        hits: dict[int, Hit] = {}
        for part in self._by_table.get(table, ()):
            found = np.flatnonzero(np.isin(part.rows, want, assume_unique=False))
            if len(found):
                pos = tuple(sorted(int(p) for p in part.positions[found]))
                hits[part.finding] = Hit(part.finding, pos, BY_EVENT)
        return self._with_names(hits, names)

    def for_kernel(self, name: str) -> list[Hit]:
        """Findings about kernel `name` (ncu rules and kernel-name rules, by any of the
        finding's `kernels`)."""
        return self._with_names({}, [name])

    def _with_names(self, hits: dict[int, Hit], names: Iterable[str]) -> list[Hit]:
        for name in names:
            for key in _name_keys(name):
                for i in self._by_name.get(key, ()):
                    hits.setdefault(i, Hit(i, (), BY_KERNEL))
        return [hits[i] for i in sorted(hits)]


def _merge(hits: dict[int, Hit], part: _Rows, lo: int, hi: int) -> tuple[int, ...]:
    old = hits.get(part.finding)
    new = [int(p) for p in part.positions[lo:hi]]
    return tuple(sorted({*new, *(old.evidence if old else ())}))


def _name_keys(name: str) -> list[str]:
    """The key a kernel name is matched by (exactly, after normalising). A selected kernel
    passes both its demangled and its short name; a finding names one of the two."""
    key = normalize(name)
    return [key] if key else []


def kernel_names(trace: Trace, table: str, row: int) -> tuple[str, ...]:
    """The names a kernel row is known by (demangled, short); () for other events."""
    if table != "kernels":
        return ()
    t = trace.table("kernels")
    if not 0 <= row < t.num_rows:
        return ()
    out = []
    for col in ("name", "short_name"):
        if col in t.column_names:
            v = t[col][row].as_py()
            if v and v not in out:
                out.append(str(v))
    return tuple(out)
