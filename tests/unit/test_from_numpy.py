"""numpy to Arrow without pyarrow's `pa.array` (which imports pandas when it is installed):
`arrays.from_numpy` against `pa.array`, and nsys's packed thread ids split with it against
Python's own arithmetic."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from tests.support import needs
from tuiperf.load.nsys import ids
from tuiperf.model import arrays

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "bool"]  # fmt: skip


def _values(dtype: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    if dtype == "bool":
        return rng.random(n) < 0.5
    return (rng.random(n) * 100).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 100])
@pytest.mark.parametrize("nulls", ["none", "some", "all", "mask without one"])
def test_from_numpy_equals_pa_array(dtype: str, n: int, nulls: str) -> None:
    values = _values(dtype, n)
    mask = {
        "none": None,
        "some": np.arange(n) % 3 == 1,
        "all": np.ones(n, bool),
        "mask without one": np.zeros(n, bool),
    }[nulls]
    got = arrays.from_numpy(values, mask)
    want = pa.array(values, mask=mask)
    got.validate(full=True)
    assert got.type == want.type
    assert got.null_count == want.null_count
    assert got.equals(want)
    assert got.to_pylist() == want.to_pylist()


def test_from_numpy_of_a_strided_view_copies_the_rows_seen() -> None:
    base = np.arange(20, dtype=np.int64)
    got = arrays.from_numpy(base[::3])
    assert got.to_pylist() == list(range(0, 20, 3))
    rev = arrays.from_numpy(base[::-1][:5])
    assert rev.to_pylist() == [19, 18, 17, 16, 15]


def test_from_numpy_of_numbers_does_not_copy() -> None:
    values = np.arange(10, dtype=np.int32)
    got = arrays.from_numpy(values)
    assert got.buffers()[1].address == values.ctypes.data


def test_from_numpy_of_other_dtypes_is_pa_arrays() -> None:
    values = np.array(["a", None, "c"], dtype=object)
    assert arrays.from_numpy(values).equals(pa.array(values))


def _packed(pid: int, tid: int, hw: int = 0, vm: int = 0) -> int:
    return (hw << 56) | (vm << 48) | (pid << 24) | tid


IDS = [_packed(4321, 4333), _packed(1, 2, hw=3, vm=1), _packed(0xFFFFFF, 0xFFFFFF, hw=0x7F),
       _packed(0, 0), _packed(77, 0xABCDEF)]  # fmt: skip


@pytest.mark.parametrize("kind", [pa.int64(), pa.uint64()])
@pytest.mark.parametrize("with_nulls", [False, True])
def test_pid_tid_equal_python_arithmetic(kind: pa.DataType, with_nulls: bool) -> None:
    values: list[int | None] = [*IDS, *IDS[::-1]]
    if with_nulls:
        values[2] = values[7] = None
    whole = pa.array(values, kind)
    col = pa.chunked_array([whole.slice(0, 3), whole.slice(3, 4), whole.slice(7)])
    want_pid = [None if v is None else (v >> 24) & 0xFFFFFF for v in values]
    want_tid = [None if v is None else v & 0xFFFFFF for v in values]
    pid, tid = ids.pid_tid(col)
    assert pid.to_pylist() == want_pid and tid.to_pylist() == want_tid
    assert ids.pid_of(col).to_pylist() == want_pid
    assert ids.tid_of(col).to_pylist() == want_tid
    assert pid.type == tid.type == pa.int64()


def test_pid_tid_of_no_rows_and_of_a_null_column() -> None:
    empty = pa.chunked_array([], pa.int64())
    assert [len(a) for a in ids.pid_tid(empty)] == [0, 0]
    nothing = pa.chunked_array([pa.nulls(3)])
    pid, tid = ids.pid_tid(nothing)
    assert pid.to_pylist() == tid.to_pylist() == [None, None, None]


def test_pid_tid_do_not_import_pandas() -> None:
    needs.module("pandas")  # the dev install has it: the check below means something
    code = (
        "import sys\n"
        "import pyarrow as pa\n"
        "import numpy as np\n"
        "from tuiperf.load.nsys import ids\n"
        "from tuiperf.model.arrays import from_numpy\n"
        "v = np.array([5 << 24, 7, 9], np.uint64)\n"
        "col = pa.chunked_array([from_numpy(v), from_numpy(v, np.array([0, 1, 0], bool))])\n"
        "assert 'pandas' not in sys.modules\n"
        "ids.pid_tid(col), ids.pid_of(col), ids.tid_of(col)\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "values",
    [[], ["a"], [None], ["", None, "é", "a much longer string", ""], ["x"] * 9 + [None]],
)
def test_from_strings_equals_pa_array(values: list[str | None]) -> None:
    got = arrays.from_strings(values)
    got.validate(full=True)
    want = pa.array(values, pa.string())
    assert got.type == pa.string() and got.null_count == want.null_count
    assert got.equals(want)


@pytest.mark.parametrize(
    ("value", "kind"),
    [(0, pa.int64()), (-3, pa.int32()), (7, pa.uint32()), (2.5, pa.float64()),
     ("", pa.string()), ("abc", pa.string()), (None, pa.int64()), (None, pa.string())],
)  # fmt: skip
def test_scalar_equals_pa_scalar(value: object, kind: pa.DataType) -> None:
    got = arrays.scalar(value, kind)  # type: ignore[arg-type]
    want = pa.scalar(value, kind)
    assert got.type == want.type and got.equals(want) and got.as_py() == want.as_py()


COLUMNS = [
    pa.chunked_array([pa.array([1, None, 27, 27, 0], pa.int64()), pa.array([27], pa.int64())]),
    pa.chunked_array([pa.array([27, 3, None], pa.uint32()).slice(1)]),
    pa.chunked_array([pa.array([27.9, None, -1.5, 0.0])]),
    pa.chunked_array([], pa.int64()),
    pa.chunked_array([pa.nulls(3)]),
    pa.array([5, 27, None], pa.int16()),
]


@pytest.mark.parametrize("col", COLUMNS)
@pytest.mark.parametrize("fill", [0, -1])
def test_as_int64_equals_fill_null_then_cast(col: pa.Array | pa.ChunkedArray, fill: int) -> None:
    got = arrays.as_int64(col, fill)
    assert got.dtype == np.int64 and len(got) == len(col)
    want = [fill if v is None else int(v) for v in col.to_pylist()]
    assert got.tolist() == want


@pytest.mark.parametrize("col", COLUMNS)
def test_where_equal_equals_pc_equal(col: pa.Array | pa.ChunkedArray) -> None:
    import pyarrow.compute as pc

    if pa.types.is_null(col.type):
        want = [False] * len(col)
    else:
        want = [bool(v) for v in pc.fill_null(pc.equal(col, 27), False).to_pylist()]
    got = arrays.where_equal(col, 27)
    assert got.null_count == 0 and got.to_pylist() == want


def test_where_in_compares_a_float_column_as_floats() -> None:
    col = pa.chunked_array([pa.array([59.5, 59.0, None, 34.0, 60.25])])
    want = pc_is_in(col, [59, 60, 34])
    assert arrays.where_in(col, [59, 60, 34]).to_pylist() == want == [
        False, True, False, True, False]  # fmt: skip


def pc_is_in(col: pa.ChunkedArray, values: list[int]) -> list[bool]:
    import pyarrow.compute as pc

    got = pc.is_in(col, value_set=pa.array(values, col.type))
    return [bool(v) for v in got.to_pylist()]


def test_pid_tid_of_a_float_column_take_nan_as_null() -> None:
    col = pa.chunked_array([pa.array([float(_packed(5, 6)), float("nan"), None])])
    pid, tid = ids.pid_tid(col)
    assert pid.to_pylist() == [5, None, None] and tid.to_pylist() == [6, None, None]


@pytest.mark.parametrize(
    "values",
    [(2**60 + 1, 2.5), (-(2**60), 1.0, None), (2**53, 0.5), (1, 2.5, None), (3, None, 7)],
)
def test_sqlite_values_as_pa_array_infers_them(values: tuple[object, ...]) -> None:
    """`_py_array` (the SQLite reader's small tables) against `pa.array` and its text
    fallback: a mix of floats and ints a double cannot hold stays text, as it was."""
    from tuiperf.load.nsys.source import _py_array

    try:
        want = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        want = pa.array([None if v is None else str(v) for v in values], pa.string())
    got = _py_array(values)
    assert got.type == want.type and got.equals(want)


# -- edges the mutation run of model/arrays.py found untested ----------------------------


def test_from_numpy_of_objects_keeps_the_mask() -> None:
    values = np.array(["a", "b", "c"], dtype=object)
    mask = np.array([False, True, False])
    got = arrays.from_numpy(values, mask)
    assert got.to_pylist() == ["a", None, "c"]


def test_from_strings_holds_only_the_values_bytes() -> None:
    values = ["ab", None, "", "cde", None]
    got = arrays.from_strings(values)
    assert got.buffers()[2].size == 5  # nulls and empty strings take no bytes
    assert got.buffers()[1].size == 4 * (len(values) + 1)


def test_from_strings_past_32_bit_offsets_is_pyarrows(monkeypatch: pytest.MonkeyPatch) -> None:
    values = ["abc", None, "de"]  # 5 bytes
    real = pa.array
    calls: list[object] = []

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(pa, "array", spy)
    monkeypatch.setattr(arrays, "STRING_BYTES_MAX", 5)  # exactly: still on buffers
    assert arrays.from_strings(values).equals(real(values, pa.string())) and not calls
    monkeypatch.setattr(arrays, "STRING_BYTES_MAX", 4)  # one byte over: pyarrow's build
    got = arrays.from_strings(values)
    assert got.type == pa.string() and got.equals(real(values, pa.string())) and calls


@pytest.mark.parametrize(
    "col",
    [
        pa.array([1.5, 2.0, -3.7]),  # a float array without nulls (read in place)
        pa.array([1.5, None, -3.7, 8.0], pa.float32()).slice(1),  # float32, offset, nulls
        pa.chunked_array([pa.array([9.9, None, 4.0]).slice(1), pa.array([None, 5.5])]),
    ],
)
def test_as_int64_and_where_in_of_float_columns(col: pa.Array | pa.ChunkedArray) -> None:
    py = col.to_pylist()
    assert arrays.as_int64(col, -1).tolist() == [-1 if v is None else int(v) for v in py]
    assert arrays.where_in(col, [4, 2]).to_pylist() == [v in (4.0, 2.0) for v in py]


def test_where_in_of_no_float_rows() -> None:
    assert arrays.where_in(pa.chunked_array([], pa.float64()), [1]).to_pylist() == []


def test_as_int64_of_a_time_column_goes_through_pyarrow() -> None:
    col = pa.chunked_array([pa.array([1, None, 3], pa.timestamp("ns"))])
    assert arrays.as_int64(col, -1).tolist() == [1, -1, 3]
    clean = pa.chunked_array([pa.array([4, 5], pa.timestamp("ns"))])
    assert arrays.as_int64(clean).tolist() == [4, 5]
    assert arrays.as_int64(clean).dtype == np.int64


def test_as_int64_fills_nulls_with_zero_by_default() -> None:
    assert arrays.as_int64(pa.array([None, 2, None], pa.int32())).tolist() == [0, 2, 0]
    assert arrays.as_int64(pa.chunked_array([pa.nulls(2)])).tolist() == [0, 0]
