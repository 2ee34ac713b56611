"""StatsTable -> strings, exactly as `nsys stats --format csv` writes them."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from tuiperf.model.fmt import round_half_up
from tuiperf.summaries.stats import StatsTable


def round_strings(values: np.ndarray, digits: int) -> list[str]:
    """Half away from zero on the exact double; '' for NaN (null)."""
    out = [f"{v:.{digits}f}" if v == v else "" for v in values.tolist()]
    scaled = values * (10.0**digits)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, never a tie
        frac = np.abs(scaled - np.trunc(scaled))
    near_tie = np.flatnonzero(np.abs(frac - 0.5) < np.maximum(1e-6, 1e-15 * np.abs(scaled)))
    for i in near_tie.tolist():
        out[i] = round_half_up(float(values[i]), digits)
    return out


def _floats(col: pa.ChunkedArray) -> np.ndarray:
    return col.cast(pa.float64()).fill_null(math.nan).to_numpy(zero_copy_only=False)


def column_strings(col: pa.ChunkedArray, fmt: str) -> list[str]:
    if fmt == "pct" or fmt == "f1":
        return round_strings(_floats(col), 1)
    if fmt == "f3":
        return round_strings(_floats(col), 3)
    if fmt == "int":
        return ["" if v is None else str(v) for v in col.to_pylist()]
    return ["" if v is None else str(v) for v in col.to_pylist()]


def csv_rows(table: StatsTable) -> tuple[list[str], list[list[str]]]:
    """Header and rows of formatted cells."""
    header = [c.header for c in table.columns]
    cols = [column_strings(table.data[c.key], c.fmt) for c in table.columns]
    rows = [list(r) for r in zip(*cols)] if cols else []
    return header, rows
