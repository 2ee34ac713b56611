"""Assembler and compact_dictionary against plain Arrow concatenation."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tuiperf.load.dictcols import compact_dictionary
from tuiperf.load.nsys.assemble import Assembler

NAMES = pa.array(["a", "b", "c", "d"])
SCHEMA = pa.schema([
    ("start", pa.int64()),
    ("never", pa.int64()),
    ("sometimes", pa.int32()),
    ("name", pa.dictionary(pa.int32(), pa.string())),
])  # fmt: skip


def _batch(start: list[int], sometimes: list[int | None], codes: list[int | None]) -> pa.Table:
    n = len(start)
    name = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), NAMES)
    return pa.table({
        "start": pa.array(start, pa.int64()),
        "never": pa.nulls(n, pa.int64()),
        "sometimes": pa.array(sometimes, pa.int32()),
        "name": name,
    })  # fmt: skip


def test_batches_with_null_columns_assemble_like_concatenation() -> None:
    batches = [
        _batch([5, 1], [None, None], [0, 0]),  # 'sometimes' null in a whole batch
        _batch([3, 9, 2], [7, None, 8], [None, 2, 0]),
    ]
    asm = Assembler(SCHEMA, capacity=2)  # too small: it grows
    for b in batches:
        asm.append(b)
    got = asm.finish()
    want = pa.concat_tables(batches).sort_by("start")
    assert got["never"].null_count == got.num_rows == 5
    for col in ("start", "never", "sometimes"):
        assert got[col].to_pylist() == want[col].to_pylist(), col
    assert got["name"].to_pylist() == want["name"].cast(pa.string()).to_pylist()
    assert got["name"].combine_chunks().dictionary.to_pylist() == ["a", "c"]  # compacted


def test_compact_dictionary_keeps_values_and_drops_unused() -> None:
    pos = np.array([3, 1, 3, 0], dtype=np.int32)
    full = compact_dictionary(pos, np.ones(4, bool), NAMES)
    assert full.to_pylist() == ["d", "b", "d", "a"]
    assert full.dictionary.to_pylist() == ["a", "b", "d"]
    part = compact_dictionary(pos, np.array([True, False, True, True]), NAMES)
    assert part.to_pylist() == ["d", None, "d", "a"]
    every = compact_dictionary(np.array([2, 0, 1, 3]), np.ones(4, bool), NAMES)
    assert every.dictionary.to_pylist() == NAMES.to_pylist()
    assert every.indices.type == pa.int32() and every.to_pylist() == ["c", "a", "b", "d"]
