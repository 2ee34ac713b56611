"""A summary report as plain rows: what `summary` prints without loading any table.

`StatsTable` (table.py) holds a report's values in Arrow; `StoredReport` holds the same
values as Python rows, read back from the JSON copy kept in the cache entry, so that
printing a report already computed needs neither pyarrow nor numpy. Both offer
`report`, `columns`, `num_rows` and `head(n)`, which is what the printers use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from tuiperf.summaries.table import Column

#: bump when a report's computed values change meaning (old stored copies are ignored)
STORED_VERSION = 1


class ReportRows(Protocol):
    report: str
    columns: list[Column]

    @property
    def num_rows(self) -> int: ...

    def head(self, n: int | None = None) -> list[dict[str, Any]]: ...


@dataclass
class StoredReport:
    report: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    #: no table the report reads had a row (nsys stats then writes a 0-byte CSV)
    empty: bool
    #: the report file the values came from (for titles)
    source: str

    @property
    def num_rows(self) -> int:
        return len(self.rows)

    def head(self, n: int | None = None) -> list[dict[str, Any]]:
        return self.rows if n is None else self.rows[:n]


def dumps(table: ReportRows, empty: bool, source: str) -> str:
    rows = [[r[c.key] for c in table.columns] for r in table.head()]
    return json.dumps({
        "stored_version": STORED_VERSION,
        "report": table.report,
        "columns": [[c.header, c.key, c.fmt] for c in table.columns],
        "rows": rows,
        "empty": empty,
        "source": source,
    }, ensure_ascii=False, default=_plain)  # fmt: skip


def loads(text: str, report: str) -> StoredReport | None:
    """The stored report, or None if it is of another report, version or shape."""
    try:
        d = json.loads(text)
        if d["stored_version"] != STORED_VERSION or d["report"] != report:
            return None
        columns = [Column(str(h), str(k), str(f)) for h, k, f in d["columns"]]
        keys = [c.key for c in columns]
        rows = [dict(zip(keys, r, strict=True)) for r in d["rows"]]
        return StoredReport(report, columns, rows, bool(d["empty"]), str(d["source"]))
    except (ValueError, KeyError, TypeError):
        return None


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):  # a numpy scalar
        return v.item()
    raise TypeError(f"not JSON: {type(v).__name__}")


def cell_string(value: Any, fmt: str) -> str:
    """One CSV cell as `nsys stats --format csv` writes it (cells.column_strings, per value)."""
    if value is None:
        return ""
    if fmt in ("pct", "f1", "f3"):
        return round_cell(float(value), 3 if fmt == "f3" else 1, sql=fmt != "f3")
    return str(value)


def round_cell(v: float, digits: int, sql: bool = True) -> str:
    """One value as cells.round_strings (`sql`: nsys rounded it in SQL) or
    cells.format_strings (nsys's formatter) write it; '' for NaN."""
    import numpy as np

    from tuiperf.summaries.cells import format_strings, round_strings

    one = np.array([v], dtype=np.float64)
    return (round_strings(one, digits) if sql else format_strings(one, digits))[0]


def csv_rows(table: ReportRows) -> tuple[list[str], list[list[str]]]:
    """Header and formatted rows, without numpy (for reports of a few thousand rows)."""
    header = [c.header for c in table.columns]
    rows = [[cell_string(r[c.key], c.fmt) for c in table.columns] for r in table.head()]
    return header, rows
