"""Rows the events table draws: the columns that fit, and each row's formatted cells.

`EventRows` reads a query's View (cells formatted on first sight, kept in an LRU cache),
`SummaryRows` a per-name summary; `TableBody` draws either through this interface
(`columns(width)`, `cells(pos, shown)`, `row_id(pos)`, `len`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len, set_cell_size
from textual.cache import LRUCache

from tuiperf.model import columns as cols
from tuiperf.model import fmt
from tuiperf.model.ncu.names import base_name
from tuiperf.model.timeline.query import NameSummary, View
from tuiperf.summaries.stats import StatsTable

#: formatted rows kept per table
ROW_CACHE = 4096


@dataclass(frozen=True)
class Col:
    key: str
    header: str
    width: int  # 0: takes the rest
    right: bool
    fmt: str


#: formatted rows (all columns of a kind) by (kind, base row); least recently used go
RowCache = LRUCache[tuple[str, int], list[str]]


def new_row_cache(size: int = ROW_CACHE) -> RowCache:
    return LRUCache(size)


class EventRows:
    """Rows of a View; cells come from the Arrow view, formatted on first sight."""

    def __init__(self, view: View, cache: RowCache, ascii_only: bool) -> None:
        self.view = view
        self.kind = view.query.kind
        self.specs = cols.columns(self.kind)
        self.cache = cache
        self.ascii_only = ascii_only
        self._index = {s.key: i for i, s in enumerate(self.specs)}
        #: kernels with an Nsight Compute result (per trace row, `NcuLink.mask`), or None
        self.ncu_mask: np.ndarray | None = None
        #: names shown as base names (`elementwise_kernel<…>`), not in full, and the base
        #: names that tell the table's names apart (`base_names`)
        self.base_names = False
        self.base_map: dict[str, str] = {}

    def columns(self, width: int) -> list[Col]:
        shown = [Col(s.key, s.header, s.width, s.right, s.fmt) for s in cols.fit(self.specs, width)]
        if self.ncu_mask is not None and self.kind == "kernels":
            shown.insert(0, Col("ncu", "ncu", 3, False, "text"))
        return shown

    def __len__(self) -> int:
        return len(self.view)

    def row_id(self, pos: int) -> int:
        return self.view.row(pos)

    def cells(self, pos: int, shown: list[Col]) -> list[str]:
        row = self.view.row(pos)
        full = self.cache.get((self.kind, row))
        if full is None:
            full = self._format(row)
            self.cache.set((self.kind, row), full)
        out = [self._ncu(row) if c.key == "ncu" else full[self._index[c.key]] for c in shown]
        if self.base_names:
            out = based(out, shown, self.base_map)
        return out

    def _ncu(self, row: int) -> str:
        mask = self.ncu_mask
        has = mask is not None and 0 <= row < len(mask) and bool(mask[row])
        return ("*" if self.ascii_only else "◆") if has else ""

    def _format(self, row: int) -> list[str]:
        return self.view.events.cells(row, self.specs, self.ascii_only)


class SummaryRows:
    """Rows of a per-name summary, in its display order."""

    def __init__(self, summary: NameSummary, ascii_only: bool) -> None:
        self.summary = summary
        self.kind = summary.kind
        self.specs = cols.summary_columns(self.kind)
        self.ascii_only = ascii_only
        self.base_names = False
        self.base_map: dict[str, str] = {}

    def columns(self, width: int) -> list[Col]:
        out = [Col(s.key, s.header, s.width, s.fmt != "name" and s.fmt != "text", s.fmt)
               for s in self.specs]  # fmt: skip
        while sum(c.width + 1 for c in out if c.width) + 24 > width and len(out) > 4:
            out.pop(-2 if out[-2].key in ("stdev", "style") else 3)
        return out

    def __len__(self) -> int:
        return len(self.summary)

    def row_id(self, pos: int) -> int:
        return int(self.summary.order[pos])

    def name(self, pos: int) -> str:
        return self.summary.names[self.row_id(pos)]

    def cells(self, pos: int, shown: list[Col]) -> list[str]:
        g = self.row_id(pos)
        specs = {s.key: s for s in self.specs}
        out = [cols.summary_cell(specs[c.key], self.summary.value(c.key, g), self.ascii_only)
               for c in shown]  # fmt: skip
        if self.base_names:
            out = based(out, shown, self.base_map)
        return out


def based(cells: list[str], shown: list[Col], base_map: dict[str, str]) -> list[str]:
    """The name cell as its base name: the one that tells it apart, else `base_name`'s."""
    return [
        (base_map.get(v) or base_name(v)) if c.key == "name" else v
        for v, c in zip(cells, shown, strict=True)
    ]


def fit_cell(text: str, width: int, right: bool, ellipsis: str) -> str:
    if cell_len(text) > width:
        text = set_cell_size(text, max(width - cell_len(ellipsis), 0)) + ellipsis
        return set_cell_size(text, width)
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


def layout(columns: list[Col], width: int) -> list[int]:
    """Cell widths: fixed columns as given, the flexible one gets the rest (at least 8)."""
    widths = [max(c.width, cell_len(c.header) + 2) if c.width else 0 for c in columns]
    fixed = sum(w + 1 for w in widths if w)
    return [w if w else max(width - fixed, 8) for w in widths]


class StatsRows:
    """Rows of a summary report (summaries.stats.StatsTable: `by_line`), sortable by any
    column; durations (`… (ns)` columns) shown as times."""

    def __init__(self, table: StatsTable, sort_key: str = "", descending: bool = True) -> None:
        self.table = table
        self.specs = table.columns
        self.base_names = False
        self._values = {c.key: table.data[c.key].to_pylist() for c in self.specs}
        self.order = list(range(table.num_rows))
        if sort_key in self._values:
            vals = self._values[sort_key]
            self.order.sort(key=lambda i: (vals[i] is None, vals[i]), reverse=descending)

    def columns(self, width: int) -> list[Col]:
        out = [self._col(c.key, c.header, c.fmt) for c in self.specs]
        while sum(c.width + 1 for c in out if c.width) + 24 > width and len(out) > 3:
            out.pop()
        return out

    @staticmethod
    def _col(key: str, header: str, fmt: str) -> Col:
        if fmt == "str":
            return Col(key, header, 0 if key == "site" else 18, False, "text")
        return Col(key, header.removesuffix(" (ns)"), 10, True, "count")

    def __len__(self) -> int:
        return len(self.order)

    def row_id(self, pos: int) -> int:
        return self.order[pos]

    def cells(self, pos: int, shown: list[Col]) -> list[str]:
        i = self.order[pos]
        out = []
        for c in shown:
            v = self._values[c.key][i]
            if v is None:
                out.append("")
            elif isinstance(v, int):
                is_time = c.key.endswith("_ns")
                out.append(fmt.duration(v) if is_time else f"{v:,}")
            else:
                out.append(str(v))
        return out


Rows = EventRows | SummaryRows | StatsRows
