"""The nsys reader never assembles `duration` (8 bytes a row written, then checked and
dropped by the cache writer): each table is built with `start` and `end`, and the trace
computes `duration` from them on first use, as it does from a cache entry. Checked against
numpy's end - start on real exports, with and without a cache, nulls included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.conftest import nsys_report
from tuiperf import schema
from tuiperf.load.nsys.tables import _without_duration
from tuiperf.load.open import OpenOptions, open_trace

I64 = pa.int64()


def _names(s: pa.Schema) -> list[str]:
    return list(s.names)


def test_dropped_only_with_both_times() -> None:
    both = pa.schema([("start", I64), ("end", I64), ("duration", I64), ("pid", I64)])
    assert _names(_without_duration(both)) == ["start", "end", "pid"]
    no_end = pa.schema([("start", I64), ("duration", I64)])
    assert _names(_without_duration(no_end)) == ["start", "duration"]
    no_start = pa.schema([("end", I64), ("duration", I64)])
    assert _names(_without_duration(no_start)) == ["end", "duration"]
    none = pa.schema([("start", I64), ("end", I64)])
    assert _without_duration(none).equals(none)


@pytest.mark.parametrize("use_cache", [False, True])
@pytest.mark.parametrize("report", ["cnn_osrt", "vit_amp"])
def test_duration_is_end_minus_start(report: str, use_cache: bool, tmp_path: Path) -> None:
    trace = open_trace(nsys_report(report), OpenOptions(cache_dir=tmp_path, use_cache=use_cache))
    checked = 0
    for name, held in trace.tables.items():
        canonical = schema.TABLES.get(name)
        if canonical is None or "duration" not in canonical.names or name in ("nvtx",):
            continue
        if held.num_rows == 0:
            continue
        assert "duration" not in held.column_names, name  # never assembled, never stored
        t = trace.table(name)
        assert t.schema.field("duration").type == I64
        assert t.column_names.index("duration") == canonical.get_field_index("duration")
        start = t["start"].to_numpy(zero_copy_only=False)
        end_col = t["end"]
        dur = t["duration"]
        assert dur.null_count == end_col.null_count
        ok = ~np.asarray(end_col.is_null())
        end = end_col.fill_null(0).to_numpy()
        np.testing.assert_array_equal(dur.fill_null(0).to_numpy()[ok], (end - start)[ok])
        checked += 1
    assert checked >= 4  # api, kernels, memcpy/memset/sync/osrt...
