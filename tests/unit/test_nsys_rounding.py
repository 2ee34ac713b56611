"""`nsys stats` rounds two ways: its SQL-rounded columns (Time %, Avg, Med, StdDev) half
away from zero on the exact double, and its own formatter's MB and MB/s ties to even."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pyarrow as pa

from tuiperf.summaries.cells import column_strings
from tuiperf.summaries.rows import cell_string

#: averages that are decimal halves (1796977 ns over 260 calls = 6911.45 ns: nsys prints
#: 6911.4 for it in vit_range's cuda_api_sum), most of them just below the half as doubles
HALVES = [1796977 / 260, 26961 / 20, 2.25, 0.15, 1.45, 12345.65, 7.75, 100.05, 0.35]


def _exact_half_up(v: float, digits: int) -> str:
    d = Decimal(v).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{d:.{digits}f}"


def test_sql_rounded_columns_round_the_exact_double_half_up() -> None:
    got = column_strings(pa.chunked_array([pa.array(HALVES)]), "f1")
    assert got == [_exact_half_up(v, 1) for v in HALVES]
    assert got[0] == "6911.4" and got[2] == "2.3"  # nsys's own output; an exact half
    assert [cell_string(v, "f1") for v in HALVES] == got  # the per-value path agrees
    assert column_strings(pa.chunked_array([pa.array([12.25])]), "pct") == ["12.3"]


def test_formatter_columns_round_ties_to_even() -> None:
    """cuda_gpu_trace's Throughput (MB/s) of exactly 1.5625 prints 1.562 (issue 26.5)."""
    exact = [1.5625, 0.0625, 2.0625, 3.0005, 1.2345]
    got = column_strings(pa.chunked_array([pa.array(exact)]), "f3")
    assert got[:3] == ["1.562", "0.062", "2.062"]
    assert got == [f"{v:.3f}" for v in exact]
    assert [cell_string(v, "f3") for v in exact] == got
    # bytes * (1e9 // duration) / 1e6: 1,562,500 B in exactly 1 s
    assert column_strings(pa.chunked_array([pa.array([1_562_500 * 1 / 1e6])]), "f3") == ["1.562"]


def test_nulls_stay_empty() -> None:
    assert column_strings(pa.chunked_array([pa.array([None, 1.0], pa.float64())]), "f1") == [
        "",
        "1.0",
    ]
    assert np.isnan(float("nan"))
