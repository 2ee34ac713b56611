"""What the first timeline screen from the cache costs in imports: no pandas on the way.

pyarrow's own numpy conversions (`to_numpy`, `Schema.empty_table`, `pa.scalar`) import
pandas when it is installed, about a third of a second; the cached first-screen path reads
its columns through `arrays.view` and builds empty tables without them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.support import needs
from tuiperf import schema
from tuiperf.model import arrays


@pytest.mark.parametrize(
    "arr",
    [
        pa.array(np.arange(10, dtype=np.int64)),
        pa.array(np.arange(10, dtype=np.int32)).slice(3, 5),
        pa.array(np.linspace(0, 1, 7)).slice(2),
        pa.array(np.arange(4, dtype=np.uint8)),
        pa.array(np.zeros(0, dtype=np.int64)),
        pa.chunked_array([np.arange(5, dtype=np.int64)]),
        pa.chunked_array([np.arange(5), np.arange(3)]),
        pa.chunked_array([], type=pa.int64()),
        pa.array([1, None, 3], type=pa.float64()),
        pa.array([True, False, True]),
    ],
)
def test_view_equals_pyarrow_to_numpy(arr: pa.Array | pa.ChunkedArray) -> None:
    want = arr.to_numpy() if isinstance(arr, pa.ChunkedArray) else arr.to_numpy(False)
    got = arrays.view(arr)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "arr",
    [
        pa.array([3, None, 5, None, 7, 8, 9, None, 1, 2], type=pa.int32()),
        pa.array([3, None, 5, None, 7, 8, 9, None, 1, 2], type=pa.int8()).slice(3, 6),
        pa.array([None] * 9 + [4], type=pa.int64()).slice(1),
        pa.array([1, 2, 3], type=pa.int16()),
    ],
)
def test_filled_equals_fill_null(arr: pa.Array) -> None:
    want = arr.fill_null(-1).to_numpy()
    got = arrays.filled(arr, -1)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_view_of_a_plain_column_is_zero_copy() -> None:
    arr = pa.array(np.arange(100, dtype=np.int64)).slice(10, 20)
    got = arrays.view(arr)
    assert not got.flags.writeable  # a view on Arrow's (immutable) buffer
    assert got.ctypes.data == arr.buffers()[1].address + 10 * 8


@pytest.mark.parametrize("name", sorted(schema.TABLES))
def test_empty_tables_equal_pyarrow_s(name: str) -> None:
    want = schema.TABLES[name].empty_table()
    got = schema.empty(name)
    assert got.equals(want, check_metadata=True)
    assert [c.num_chunks for c in got.columns] == [c.num_chunks for c in want.columns]


def test_cached_first_screen_path_does_not_import_pandas(nsys_dir: Path, tmp_path: Path) -> None:
    needs.module("pandas")  # the dev install has it: the check below means something
    report = nsys_dir / "vit_range.sqlite"
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tuiperf.load.open import OpenOptions, open_trace\n"
        "from tuiperf.model.timeline.lanes import build_lanes\n"
        f"opts = OpenOptions(cache_dir=Path({str(tmp_path)!r}))\n"
        f"trace = open_trace(Path({str(report)!r}), opts)\n"
        "assert trace.meta.from_cache == (sys.argv[1] == 'again'), trace.meta\n"
        "lanes = build_lanes(trace)\n"
        "for lane in lanes.lanes:  # the names a first frame's wide boxes show\n"
        "    lane.names.names(lane.iv.rows[:1])\n"
        "print('pandas' in sys.modules)\n"
    )
    for run in ("first", "again"):  # the first run writes the cache entry and lane index
        out = subprocess.run(
            [sys.executable, "-c", code, run], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False", "the cached first-screen path imported pandas"
