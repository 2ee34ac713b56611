"""ColumnPool: one block reused table after table, never while a table still uses it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tuiperf.load.assemble import Assembler
from tuiperf.load.column_pool import ColumnPool


def test_a_free_block_is_reused_and_zeroed() -> None:
    pool = ColumnPool()
    first = pool.take(1 << 20)
    first[:] = 7
    addr = first.ctypes.data
    del first
    again = pool.take(1 << 19)
    assert again.ctypes.data == addr  # the same memory
    assert not again[: 1 << 19].any()  # zeroed where asked


def test_a_block_in_use_is_never_handed_out_again() -> None:
    pool = ColumnPool()
    first = pool.take(1 << 20)
    view = first[100:200].view(np.int32)  # what a table's column holds
    view[:] = 5
    del first
    second = pool.take(1 << 20)
    assert second.ctypes.data != view.ctypes.data - 100
    assert (view == 5).all()


def test_a_bigger_request_gets_a_new_block() -> None:
    pool = ColumnPool()
    small = pool.take(1 << 10)
    addr = small.ctypes.data
    del small
    assert len(pool.take(1 << 22)) >= 1 << 22
    assert pool.take(1 << 10).ctypes.data != addr  # the small block was let go


def _table(start: np.ndarray, names: list[str | None], extra: int | None) -> pa.Table:
    dictionary = pa.array(["a", "b", "c"])
    idx = pa.array([None if n is None else "abc".index(n) for n in names], pa.int32())
    return pa.table(
        {
            "start": pa.array(start),
            "name": pa.DictionaryArray.from_arrays(idx, dictionary),
            "extra": pa.array([extra] * len(start), pa.int64()),
        }
    )


SCHEMA = pa.schema(
    [
        ("start", pa.int64()),
        ("name", pa.dictionary(pa.int32(), pa.string())),
        ("extra", pa.int64()),
    ]
)


def test_a_table_kept_by_the_caller_survives_the_next_one() -> None:
    pool = ColumnPool()
    asm = Assembler(SCHEMA, 4, pool)
    asm.append(_table(np.array([1, 2, 3]), ["a", "b", None], 4))
    kept = asm.finish()
    expected = kept.to_pylist()
    asm = Assembler(SCHEMA, 4, pool)
    asm.append(_table(np.array([9, 9, 9, 9]), ["c", "c", "c", "c"], 8))
    asm.finish()
    assert kept.to_pylist() == expected


def test_a_dropped_table_lends_its_memory_to_the_next() -> None:
    pool = ColumnPool()
    asm = Assembler(SCHEMA, 1000, pool)
    asm.append(_table(np.arange(1000), ["b"] * 1000, 5))
    t = asm.finish()
    addr = t["start"].chunk(0).buffers()[1].address
    del t, asm
    asm = Assembler(SCHEMA, 1000, pool)
    asm.append(_table(np.arange(3), ["a", "c", "a"], None))  # extra: never written
    t = asm.finish()
    assert t["start"].chunk(0).buffers()[1].address == addr
    assert t.to_pylist() == [
        {"start": i, "name": n, "extra": None} for i, n in enumerate(["a", "c", "a"])
    ]
    extra = t["extra"].chunk(0)
    under_nulls = np.frombuffer(extra.buffers()[1], np.int64)[: len(extra)]
    assert under_nulls.tolist() == [0, 0, 0]  # zeroed, not the last table's values
