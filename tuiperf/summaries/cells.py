"""StatsTable -> strings, exactly as `nsys stats --format csv` writes them."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal

import numpy as np
import pyarrow as pa

from tuiperf.summaries.table import StatsTable

_EXACT = Context(prec=800)  # a double has at most 767 significant decimal digits


def half_up(v: float, digits: int) -> str:
    """Half away from zero on the exact double (what nsys prints for its SQL-rounded
    columns: 1796977 / 260 is 6911.4499… as a double, and nsys prints 6911.4)."""
    q = Decimal(1).scaleb(-digits)
    # the default 28 digits cannot hold a large double's integer part (1e300 raised)
    return str(Decimal(float(v)).quantize(q, rounding=ROUND_HALF_UP, context=_EXACT))


def _near_ties(values: np.ndarray, digits: int) -> np.ndarray:
    scaled = values * (10.0**digits)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, never a tie
        frac = np.abs(scaled - np.trunc(scaled))
    return np.flatnonzero(np.abs(frac - 0.5) < np.maximum(1e-6, 1e-15 * np.abs(scaled)))


def round_strings(values: np.ndarray, digits: int) -> list[str]:
    """Columns nsys rounds in its report SQL (`pct`, `f1`): half away from zero on the
    exact double where a value is near a half (elsewhere every rounding agrees); '' for
    NaN (null)."""
    out = [f"{v:.{digits}f}" if v == v else "" for v in values.tolist()]
    for i in _near_ties(values, digits).tolist():
        out[i] = half_up(float(values[i]), digits)
    return out


def format_strings(values: np.ndarray, digits: int) -> list[str]:
    """Columns nsys's own formatter prints (`f3`: MB, MB/s): the exact double correctly
    rounded, ties to even (1.5625 MB/s prints 1.562); '' for NaN (null)."""
    return [f"{v:.{digits}f}" if v == v else "" for v in values.tolist()]


def _floats(col: pa.ChunkedArray) -> np.ndarray:
    return col.cast(pa.float64()).fill_null(math.nan).to_numpy(zero_copy_only=False)


def column_strings(col: pa.ChunkedArray, fmt: str) -> list[str]:
    if fmt == "pct" or fmt == "f1":
        return round_strings(_floats(col), 1)
    if fmt == "f3":
        return format_strings(_floats(col), 3)
    if fmt == "int":
        return ["" if v is None else str(v) for v in col.to_pylist()]
    return ["" if v is None else str(v) for v in col.to_pylist()]


def csv_rows(table: StatsTable) -> tuple[list[str], list[list[str]]]:
    """Header and rows of formatted cells."""
    header = [c.header for c in table.columns]
    cols = [column_strings(table.data[c.key], c.fmt) for c in table.columns]
    rows = [list(r) for r in zip(*cols)] if cols else []
    return header, rows
