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
from tuiperf.model.columns import dictionary_codes, read_column


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


def test_first_screen_path_does_not_import_pandas(nsys_dir: Path, tmp_path: Path) -> None:
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
        "from tuiperf.model import arrays\n"
        "from tuiperf.model.columns import read_column\n"
        "k = trace.table('kernels')  # what the events table and the sample lane read next\n"
        "for c in ('start', 'duration', 'pid', 'name', 'grid_x', 'correlation_id'):\n"
        "    read_column(k[c])\n"
        "arrays.ints(k, 'pid', -1), arrays.codes(k, 'name'), arrays.valid(k['pid'])\n"
        "print('pandas' in sys.modules)\n"
    )
    for run in ("first", "again"):  # the first run writes the cache entry and lane index
        out = subprocess.run(
            [sys.executable, "-c", code, run], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "False", f"the {run} first-screen path imported pandas"


NUMBER_TYPES = [
    pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
    pa.uint64(), pa.float16(), pa.float32(), pa.float64(), pa.bool_(),
]  # fmt: skip


@pytest.mark.parametrize("kind", [*NUMBER_TYPES, pa.timestamp("ns"), pa.string()])
def test_numpy_dtype_equals_pyarrows(kind: pa.DataType) -> None:
    assert arrays.numpy_dtype(kind) == np.dtype(kind.to_pandas_dtype())


def test_numpy_dtype_has_every_number_type_without_pyarrows_call() -> None:
    # pyarrow up to 25 imports pandas in `to_pandas_dtype` (is it pandas 1?): the H100 VM
    # spent 0.35 s of its first screen there, in the lane index; number types never ask
    for kind in NUMBER_TYPES:
        assert kind in arrays._NUMPY_DTYPES


CHUNKED = [
    pa.chunked_array([[1, 2, 3], [4, 5]], pa.int32()),
    pa.chunked_array([pa.array(np.arange(10)).slice(3, 4), pa.array(np.arange(3))]),
    pa.chunked_array([[1.5, 2.5], [3.5]], pa.float64()),
]


@pytest.mark.parametrize("arr", CHUNKED)
def test_view_of_several_chunks_equals_pyarrow_to_numpy(arr: pa.ChunkedArray) -> None:
    want = arr.to_numpy()
    got = arrays.view(arr)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


VALIDITY = [
    pa.array([1, None, 3, None, 5, 6, 7, 8, None, 10], pa.int64()).slice(1, 8),
    pa.array([1, 2, 3], pa.int64()),
    pa.array([None, None], pa.null()),
    pa.array(["a", None, "c"]),
    pa.chunked_array([pa.array([None, 2, 3]).slice(1), pa.array([4, None]), pa.array([7])]),
    pa.chunked_array([pa.array([*range(20), None]).slice(9, 12)]),
]


@pytest.mark.parametrize("col", VALIDITY)
def test_valid_equals_pyarrows_is_valid(col: pa.Array | pa.ChunkedArray) -> None:
    want = col.is_valid().to_numpy(zero_copy_only=False)
    got = arrays.valid(col)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


INT_COLUMNS = [
    pa.chunked_array([[5, None, 7], [None, 9]], pa.int32()),
    pa.chunked_array([pa.array([1, 2, None, 4, 5], pa.int16()).slice(2)]),
    pa.chunked_array([[1, 2], [3]], pa.uint8()),
    pa.chunked_array([[1.0, None], [2.5]], pa.float64()),
]


@pytest.mark.parametrize("col", INT_COLUMNS)
@pytest.mark.parametrize("fill", [0, -1])
def test_ints_equal_fill_null_then_to_numpy(col: pa.ChunkedArray, fill: int) -> None:
    filled = col.fill_null(fill) if col.null_count else col  # (-1 is no uint8 scalar)
    want = np.asarray(filled.to_numpy(), dtype=np.int64)
    got = arrays.ints(pa.table({"c": col}), "c", fill)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "col",
    [
        pa.chunked_array([pa.array(["a", None, "b", "a"]).dictionary_encode()]),
        pa.chunked_array([["x", "y"], [None, "x"]]),
        pa.chunked_array([pa.array(["a", None, "c", "c"]).dictionary_encode().slice(1)]),
    ],
)
def test_codes_decode_to_the_column(col: pa.ChunkedArray) -> None:
    codes, values = arrays.codes(pa.table({"c": col}), "c")
    want = ["" if v is None else v for v in col.to_pylist()]
    assert [values[c] if c >= 0 else "" for c in codes] == want
    assert (codes[np.asarray([v is None for v in col.to_pylist()])] == -1).all()


@pytest.mark.parametrize("col", [*INT_COLUMNS, pa.chunked_array([[1, None], [3]], pa.int64())])
def test_read_column_equals_pyarrow(col: pa.ChunkedArray) -> None:
    got = read_column(col)
    want = np.asarray(col.fill_null(0).to_numpy(), dtype=np.int64)
    np.testing.assert_array_equal(got.values, want)
    if col.null_count:
        assert got.valid is not None
        np.testing.assert_array_equal(got.valid, col.is_valid().to_numpy(zero_copy_only=False))
    else:
        assert got.valid is None


def test_dictionary_codes_of_chunks_with_nulls() -> None:
    col = pa.chunked_array(
        [pa.array(["b", None, "a"]).dictionary_encode(), pa.array([None, "c"]).dictionary_encode()]
    )
    codes, labels = dictionary_codes(col)
    assert codes.dtype == np.int32
    assert [labels[c] if v is not None else None for c, v in zip(codes, col.to_pylist())] == [
        "b", None, "a", None, "c"
    ]  # fmt: skip
    assert codes[1] == 0 and codes[3] == 0  # nulls as 0, as before


class _NoPandasDtype:
    """Looks up as `pa.int64()` in a dict, but has no pandas dtype to give: where
    `numpy_dtype` falls back to pyarrow's call for a number type, it says so."""

    def __hash__(self) -> int:
        return hash(pa.int64())

    def __eq__(self, other: object) -> bool:
        return other == pa.int64()

    def to_pandas_dtype(self) -> None:
        raise AssertionError("a number type asked pyarrow (which may import pandas)")


def test_numpy_dtype_of_a_number_type_never_asks_pyarrow() -> None:
    assert arrays.numpy_dtype(_NoPandasDtype()) == np.dtype(np.int64)  # type: ignore[arg-type]


@pytest.mark.parametrize("chunks", [[], [pa.array([], pa.int32())]])
def test_ints_and_codes_of_an_empty_table(chunks: list) -> None:
    t = pa.table({"c": pa.chunked_array(chunks, pa.int32())})
    got = arrays.ints(t, "c", 5)
    assert got.dtype == np.int64 and got.shape == (0,)
    d = pa.table({"c": pa.chunked_array([], pa.dictionary(pa.int32(), pa.string()))})
    codes, values = arrays.codes(d, "c")
    assert codes.dtype == np.int64 and codes.shape == (0,) and values == []


def test_ints_and_codes_of_one_row() -> None:
    assert arrays.ints(pa.table({"c": pa.array([7], pa.int16())}), "c").tolist() == [7]
    assert arrays.ints(pa.table({"c": pa.array([None], pa.int16())}), "c", 3).tolist() == [3]
    assert arrays.ints(pa.table({"c": pa.array([None], pa.int16())}), "c").tolist() == [0]
    codes, values = arrays.codes(pa.table({"c": ["x"]}), "c")
    assert codes.tolist() == [0] and values == ["x"]


def test_codes_name_a_null_dictionary_value_empty() -> None:
    col = pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1]), pa.array(["a", None]))
    codes, values = arrays.codes(pa.table({"c": col}), "c")
    assert values == ["a", ""]
    assert codes.tolist() == [0, 1, -1, 1]


def test_valid_of_codes_pointing_at_a_null_value_equals_pyarrows() -> None:
    # pyarrow 26 calls the second row null, 25 valid: `valid` says what the installed one
    # does, as the `is_valid()` it replaces did
    col = pa.DictionaryArray.from_arrays(pa.array([0, 1, None]), pa.array(["a", None]))
    assert arrays.valid(col).tolist() == col.is_valid().to_numpy(zero_copy_only=False).tolist()
    assert arrays.valid(col).tolist()[::2] == [True, False]


def test_valid_of_no_chunks() -> None:
    got = arrays.valid(pa.chunked_array([], pa.int64()))
    assert got.dtype == np.bool_ and got.shape == (0,)


@pytest.mark.parametrize("offset", [0, 1, 7, 8, 9, 61])
@pytest.mark.parametrize("length", [0, 1, 5, 8, 17])
def test_filled_and_valid_of_slices_at_every_bit_offset(offset: int, length: int) -> None:
    # a slice shares its parent's whole bitmap: only its own bits count
    parent = pa.array([None if i % 3 == 0 else i for i in range(100)], pa.int32())
    arr = parent.slice(offset, length)
    want = arr.fill_null(-1).to_numpy(zero_copy_only=False) if arr.null_count else arr.to_numpy()
    np.testing.assert_array_equal(arrays.filled(arr, -1), want)
    np.testing.assert_array_equal(arrays.valid(arr), arr.is_valid().to_numpy(zero_copy_only=False))


def test_filled_reads_no_byte_past_an_exact_bitmap() -> None:
    """A bitmap exactly as long as its rows need (one built outside Arrow's padded pool)."""
    valid = np.array([1, 0, 1, 1, 0, 1, 1, 1], bool)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    assert bitmap.size == 1
    data = pa.py_buffer(np.arange(8, dtype=np.int32))
    arr = pa.Array.from_buffers(pa.int32(), 8, [bitmap, data], null_count=2)
    assert arrays.filled(arr, -1).tolist() == [0, -1, 2, 3, -1, 5, 6, 7]
    assert arrays.valid(arr).tolist() == valid.tolist()


def test_viewer_interactions_do_not_import_pandas(nsys_dir: Path, tmp_path: Path) -> None:
    """What selecting events, their details and partners, the events tables, their summary
    and the CSV export of both compute, from the cache, in a fresh interpreter."""
    needs.module("pandas")
    report = nsys_dir / "cnn_osrt.sqlite"
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tuiperf.load.open import OpenOptions, open_trace\n"
        "from tuiperf.model import columns as cols\n"
        "from tuiperf.model.timeline.attribution import NvtxIndex, partner_of\n"
        "from tuiperf.model.timeline.query import Events, Query\n"
        f"trace = open_trace(Path({str(report)!r}), OpenOptions(cache_dir=Path(sys.argv[1])))\n"
        "if sys.argv[2] == 'again':\n"
        "    NvtxIndex(trace)\n"
        "    partner_of(trace, 'kernels', 0), partner_of(trace, 'api', 0)\n"
        "    events = Events(trace)\n"
        "    for kind in cols.KINDS:\n"
        "        if not trace.has(kind if kind != 'nvtx' else 'nvtx'):\n"
        "            continue\n"
        "        t = events.table(kind)\n"
        "        view = t.run(Query(kind=kind))\n"
        "        view.to_arrow(cols.columns(kind))\n"
        "        t.summary(view).to_arrow(cols.summary_columns(kind))\n"
        "print('pandas' in sys.modules)\n"
    )
    for run in ("first", "again"):
        out = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path), run],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False", "a viewer interaction imported pandas"
