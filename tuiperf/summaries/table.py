"""What every summary module shares, at the bottom of the package: `Column` (a column's
header as `nsys stats` prints it, its key and format) and `StatsTable` (a report's values
as Arrow, one column per `Column`).

It imports no other module of the package (and pyarrow only for type checking), so `rows`,
`cells`, `stats` and `gpu_trace` all build on it without importing one another in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class Column:
    header: str  # exactly as nsys prints it
    key: str  # machine name (JSON keys, Arrow column names)
    fmt: str  # int | f1 | f3 | str | pct


@dataclass
class StatsTable:
    report: str
    columns: list[Column]
    data: pa.Table  # one column per Column, named by key

    @property
    def num_rows(self) -> int:
        return self.data.num_rows

    def head(self, n: int | None = None) -> list[dict[str, object]]:
        """The first `n` rows (all with None) as dicts keyed by column key."""
        return (self.data if n is None else self.data.slice(0, n)).to_pylist()
