"""The page reader (sqlite_pages) against SQLite itself: values, row order, fallbacks, damage.

Every database here is made with the stdlib's sqlite3 and read back two ways: by plain
`SELECT ... ORDER BY rowid` and by `SqliteSource` (which decodes big tables from their B-tree
pages and falls back to SQLite for what it does not decode). The two must agree value for
value, in row order; a damaged file may also make SqliteSource raise BadReportError, nothing
else.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import shutil
import sqlite3
import struct
import tempfile
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import NSYS_DATA
from tuiperf.errors import BadReportError
from tuiperf.load.nsys import sqlite_pages
from tuiperf.load.nsys.source import SqliteSource

Row = tuple[Any, ...]

#: rows in the tables read through SqliteSource: above its page-reader threshold (2,000)
N = 3000
#: where the one odd row sits in the fallback tests
MID = 1700


# ---------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def _default_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page reader on, whatever the environment says."""
    monkeypatch.delenv("TUIPERF_NO_PAGE_READER", raising=False)


@dataclass
class RangeReads:
    """The rowid ranges [lo, hi) SqliteSource read through SQLite rather than from pages.

    More than `limit` of them fails the test: a loop over empty rowid ranges (a garbage
    max(rowid)) would otherwise run for ever.
    """

    calls: list[tuple[int, int]] = field(default_factory=list)
    limit: int = 5000


@pytest.fixture
def sqlite_ranges(monkeypatch: pytest.MonkeyPatch) -> RangeReads:
    reads = RangeReads()
    real = SqliteSource._read_range

    def recording(self: SqliteSource, table: str, columns: list[str], lo: int, hi: int) -> pa.Table:
        reads.calls.append((lo, hi))
        if len(reads.calls) > reads.limit:
            first, last = reads.calls[0], reads.calls[-1]
            pytest.fail(
                f"{len(reads.calls)} rowid-range reads through SQLite ({first} .. {last}): "
                "SqliteSource loops over empty ranges (it would not end)"
            )
        return real(self, table, columns, lo, hi)

    monkeypatch.setattr(SqliteSource, "_read_range", recording)
    return reads


def _create(
    path: Path,
    ddl: str,
    rows: Sequence[Row] = (),
    *,
    page_size: int = 4096,
    before: Sequence[str] = (),
    after: Sequence[str] = (),
    insert: str | None = None,
) -> Path:
    """A database at `path` with table `t` from `ddl` holding `rows`."""
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA page_size = {page_size}")
        for sql in before:
            db.execute(sql)
        db.execute(ddl)
        if rows:
            sql = insert or f"INSERT INTO t VALUES ({', '.join('?' * len(rows[0]))})"
            db.executemany(sql, rows)
        for sql in after:
            db.execute(sql)
        db.commit()
    return path


def _lenient(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")  # as SqliteSource decodes text


def _sqlite_rows(
    path: Path, cols: Sequence[str], table: str = "t", order: str = "rowid"
) -> list[Row]:
    """What plain SQLite returns (read-only: it creates no file beside the database)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        db.text_factory = _lenient
        names = ", ".join(f'"{c}"' for c in cols)
        return db.execute(f'SELECT {names} FROM "{table}" ORDER BY {order}').fetchall()


def _rows_of(parts: Sequence[pa.Table], cols: Sequence[str]) -> list[Row]:
    out: list[Row] = []
    for t in parts:
        assert t.column_names == list(cols)
        out.extend(zip(*(t.column(c).to_pylist() for c in cols)))
    return out


def _source_rows(
    path: Path, cols: Sequence[str], *, rows: int | None = 1000, table: str = "t"
) -> list[Row]:
    """SqliteSource's rows: `read_batches(rows)`, or `read` when rows is None."""
    src = SqliteSource(path)
    try:
        if rows is None:
            return _rows_of([src.read(table, list(cols))], cols)
        return _rows_of(list(src.read_batches(table, list(cols), rows)), cols)
    finally:
        src.close()


def _exact(v: object) -> tuple[object, ...]:
    """A value with its type: 3 and 3.0 differ, so do 0.0 and -0.0; NaN equals NaN."""
    if isinstance(v, float):
        return ("nan",) if math.isnan(v) else ("float", struct.pack(">d", v))
    return (type(v).__name__, v)


def _loose(v: object) -> object:
    """A value as an Arrow column of one type can hold it in a column SQLite stores with
    several types (2072 and 2072.0 and "2072"; "s" and b"s")."""
    if v is None or isinstance(v, bytes):
        return v
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).encode()


def _same_exactly(got: Sequence[Row], want: Sequence[Row]) -> bool:
    """`_exact` equality, fast: most tables hold no NaN (NaN != NaN sends them the slow way)."""
    if got != want:
        return False
    flat_got, flat_want = list(chain.from_iterable(got)), list(chain.from_iterable(want))
    if list(map(type, flat_got)) != list(map(type, flat_want)):
        return False

    def zero_signs(flat: list[object]) -> list[float]:
        return [math.copysign(1.0, v) for v in flat if type(v) is float and v == 0]

    return zero_signs(flat_got) == zero_signs(flat_want)


def _assert_same(got: Sequence[Row], want: Sequence[Row], *, loose: bool = False) -> None:
    if not loose and _same_exactly(got, want):
        return
    key: Callable[[object], object] = _loose if loose else _exact
    bad = [
        i for i, (g, w) in enumerate(zip(got, want)) if [key(x) for x in g] != [key(x) for x in w]
    ]
    if bad or len(got) != len(want):
        first = f"; row {bad[0]}: got {got[bad[0]]!r}, SQLite has {want[bad[0]]!r}" if bad else ""
        pytest.fail(f"{len(got)} rows, SQLite has {len(want)}; {len(bad)} differ{first}")


def _assert_reads_like_sqlite(
    path: Path, cols: Sequence[str], *, batch_rows: Sequence[int] = (1000,), loose: bool = False
) -> list[Row]:
    want = _sqlite_rows(path, cols)
    for rows in (*batch_rows, None):
        _assert_same(_source_rows(path, cols, rows=rows), want, loose=loose)
    return want


def _page_size(data: bytes) -> int:
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


def _root(path: Path, table: str = "t") -> int:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        sql = "SELECT rootpage FROM sqlite_master WHERE name = ?"
        return int(db.execute(sql, (table,)).fetchone()[0])


def _tree(data: bytes, root: int) -> list[list[int]]:
    """The pages of the table B-tree at `root`, level by level; the last level: its leaves."""
    ps = _page_size(data)
    levels = [[root]]
    while data[(levels[-1][0] - 1) * ps] != 0x0D:
        below = []
        for number in levels[-1]:
            at = (number - 1) * ps
            assert data[at] == 0x05, f"page {number} is not an interior table page"
            for cell in _cells(data, number, header=12):
                below.append(int.from_bytes(data[cell : cell + 4], "big"))
            below.append(int.from_bytes(data[at + 8 : at + 12], "big"))
        levels.append(below)
    return levels


def _cells(data: bytes, number: int, header: int = 8) -> list[int]:
    """File offsets of the cells of page `number` (not page 1)."""
    at = (number - 1) * _page_size(data)
    count = int.from_bytes(data[at + 3 : at + 5], "big")
    ptrs = data[at + header : at + header + 2 * count]
    return [at + int.from_bytes(ptrs[k : k + 2], "big") for k in range(0, 2 * count, 2)]


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for k in range(9):
        b = data[at + k]
        if k == 8:
            return (value << 8) | b, 9
        value = (value << 7) | (b & 0x7F)
        if b < 0x80:
            return value, k + 1
    raise AssertionError("unreachable")


def _encode_varint(v: int) -> bytes:
    """SQLite's varint of the 64-bit two's complement of `v` (fileformat.html §1.6)."""
    u = v & (2**64 - 1)
    if u >= 1 << 56:  # nine bytes: the last one holds 8 bits
        out = [u & 0xFF]
        u >>= 8
        for _ in range(8):
            out.append((u & 0x7F) | 0x80)
            u >>= 7
        return bytes(reversed(out))
    out = [u & 0x7F]
    u >>= 7
    while u:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    return bytes(reversed(out))


def _pages_then_sqlite(path: Path, cols: Sequence[str], rows: int) -> tuple[list[Row], int]:
    """`sqlite_pages.batches` called directly, each Skipped run read by SQLite as its
    contract says (the rowids between the rows around it): (rows, how many were skipped)."""
    out: list[Row] = []
    skipped = 0
    last: int | None = None
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        layout, columns = sqlite_pages.layout_of(db, "t", list(cols))
        names = ", ".join(cols)

        def between(lo: int | None, hi: int | None) -> list[Row]:
            where = [f"rowid > {lo}"] if lo is not None else []
            where += [f"rowid < {hi}"] if hi is not None else []
            cond = f"WHERE {' AND '.join(where)}" if where else ""
            return db.execute(f"SELECT {names} FROM t {cond} ORDER BY rowid").fetchall()

        pf = sqlite_pages.PageFile(path)
        try:
            for item in sqlite_pages.batches(pf, layout, columns, rows):
                if isinstance(item, sqlite_pages.Skipped):
                    got = between(last, item.before)
                    skipped += len(got)
                    out.extend(got)
                    continue
                rowids, table = item
                assert len(rowids) == table.num_rows
                assert np.all(rowids[1:] > rowids[:-1])
                assert last is None or rowids[0] > last, "batches overlap"
                out.extend(_rows_of([table], cols))
                last = int(rowids[-1])
        finally:
            pf.close()
    return out, skipped


def _snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    return {
        p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(folder.iterdir())
    }


# ------------------------------------------------------- values: the page reader alone

#: the largest and smallest integer of each width SQLite stores (serial types 1-6: 1, 2,
#: 3, 4, 6, 8 bytes), one past each (the next width), and the constants 0 and 1 (types 8, 9)
_INT_EDGES: list[int | None] = [0, 1, None, 2, -1, -2]
for _w in (1, 2, 3, 4, 6, 8):
    _INT_EDGES += [2 ** (8 * _w - 1) - 1, -(2 ** (8 * _w - 1))]
    if _w < 8:
        _INT_EDGES += [2 ** (8 * _w - 1), -(2 ** (8 * _w - 1)) - 1]


def test_integers_of_every_width_equal_sqlite(tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    assert -(2**63) in _INT_EDGES and 2**63 - 1 in _INT_EDGES
    e = len(_INT_EDGES)
    rows = [
        (
            _INT_EDGES[i % e],  # every width in every batch
            _INT_EDGES[(i * 7 + 3) % e],
            2**16 + i * 997,  # one width (3 bytes) throughout: one shift for the column
            (0, 1, None)[i % 3],  # constants only: no value bytes at all
            (i % 256) - 128 if i % 11 else None,  # one byte each
            -(2**62) + i * 10**12,  # 8 bytes each
            None,  # all NULL
        )
        for i in range(N)
    ]
    path = _create(
        tmp_path / "ints.sqlite",
        "CREATE TABLE t (a INT, b INTEGER, c BIGINT, d INTEGER, e INTEGER, f INTEGER, g INTEGER)",
        rows,
    )
    cols = list("abcdefg")
    want = _assert_reads_like_sqlite(path, cols, batch_rows=(1000, 7))
    assert want == rows  # integers stay integers in INTEGER columns
    assert sqlite_ranges.calls == [], "the page reader stepped aside"


#: REAL values, with what SQLite makes of them: NaN is stored as NULL, integral values
#: (3.0, -0.0, ±2**47 - 1) are stored as integers and read back as floats
_REAL_EDGES: list[float | int | None] = [
    3.0,
    -0.0,
    0.0,
    1.5,
    -2.25,
    math.inf,
    -math.inf,
    math.nan,
    None,
    2.0**47 - 1,
    2.0**47,
    -(2.0**47),
    -(2.0**47) - 1,
    1e308,
    5e-324,
    2.0**63,
    -(2.0**63),
    7,
    -(2**63),
    2**63 - 1,
    2**53 + 1,  # integers into a REAL column become floats
]


def test_reals_equal_sqlite(tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    e = len(_REAL_EDGES)
    rows = [
        (i, _REAL_EDGES[i % e], float(i * 3), i / 7 if i % 5 else None, -float(i) if i % 2 else 0.5)
        for i in range(N)
    ]
    path = _create(
        tmp_path / "reals.sqlite",
        "CREATE TABLE t (a INTEGER, r REAL, i REAL, d DOUBLE, f FLOAT)",
        rows,
    )
    cols = ["a", "r", "i", "d", "f"]
    want = _assert_reads_like_sqlite(path, cols)
    assert want[7][1] is None and str(want[1][1]) == "0.0"  # NaN is NULL; -0.0 is stored as 0
    assert all(isinstance(r[2], float) for r in want)
    assert sqlite_ranges.calls == []


_TEXTS: list[str | None] = [
    "",
    "a",
    "plain ASCII text",
    "é",
    "日本語のテキスト",
    "𝄞 🎉 emoji",
    "a\x00b",
    None,
    # 56, 57 and 58 bytes: serial types 125, 127 (one byte) and 129 (a two-byte varint)
    "x" * 56,
    "x" * 57,
    "x" * 58,
    "é" * 28,
    "é" * 28 + "x",
    "€" * 19,
    "𝄞" * 14 + "ab",
    "y" * 127,
    "y" * 128,
    "z" * 300,
    "w" * 1000,
]


def test_text_equals_sqlite(tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    lengths = [len(s.encode()) for s in _TEXTS[8:15] if s is not None]
    assert lengths == [56, 57, 58, 56, 57, 57, 58]
    e = len(_TEXTS)
    rows = [(i, _TEXTS[i % e], _TEXTS[(i * 5) % e], f"row {i}") for i in range(N)]
    path = _create(
        tmp_path / "text.sqlite", "CREATE TABLE t (a INTEGER, s TEXT, v VARCHAR(80), c CLOB)", rows
    )
    _assert_reads_like_sqlite(path, ["a", "s", "v", "c"], batch_rows=(1000, 3))
    assert sqlite_ranges.calls == []


@pytest.mark.parametrize("page_size", [512, 1024, 4096, 65536])
def test_page_sizes(page_size: int, tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    rows = [
        (i * 3 if i % 5 else None, i / 7 if i % 3 else float(i), _TEXTS[i % 15], -(i**3))
        for i in range(N)
    ]
    path = _create(
        tmp_path / "p.sqlite",
        "CREATE TABLE t (a INTEGER, b REAL, c TEXT, d INTEGER)",
        rows,
        page_size=page_size,
    )
    assert _page_size(path.read_bytes()) == page_size
    _assert_reads_like_sqlite(path, ["a", "b", "c", "d"], batch_rows=(1000, 1))
    assert sqlite_ranges.calls == []


@pytest.mark.parametrize(
    "cols", [["a"], ["c"], ["c", "a"], ["e", "d", "c", "b", "a"], ["b", "e"], ["d", "b", "d2"]]
)
def test_columns_in_any_order_and_subsets(
    cols: list[str], tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    rows = [(i, f"b{i}", i * 1.5, None if i % 4 else i, "e" * (i % 70), -i) for i in range(N)]
    path = _create(
        tmp_path / "c.sqlite",
        "CREATE TABLE t (a INTEGER, b TEXT, c REAL, d INTEGER, e TEXT, d2 INTEGER)",
        rows,
    )
    _assert_reads_like_sqlite(path, cols)
    assert sqlite_ranges.calls == []


@pytest.mark.parametrize(
    "ddl",
    [
        "id INTEGER PRIMARY KEY, v INTEGER, w TEXT",
        "v INTEGER, id integer primary key, w TEXT",  # the alias need not come first
        "id INTEGER NOT NULL PRIMARY KEY ASC, v INTEGER, w TEXT",
        "id INTEGER, v INTEGER, w TEXT, PRIMARY KEY (id DESC)",  # still the rowid
        "id INTEGER PRIMARY KEY DESC, v INTEGER, w TEXT",  # the one that is not the rowid
        "id INT PRIMARY KEY, v INTEGER, w TEXT",  # INT is not INTEGER: not the rowid
    ],
)
def test_integer_primary_key_is_the_rowid(
    ddl: str, tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    keys = [-(2**63), -5, 0, *range(10, 10 + 3 * N, 3), 2**40, 2**63 - 1]
    path = _create(
        tmp_path / "k.sqlite",
        f"CREATE TABLE t ({ddl})",
        [(k, i, f"w{i}") for i, k in enumerate(keys)],
        insert="INSERT INTO t (id, v, w) VALUES (?, ?, ?)",
        after=["DELETE FROM t WHERE v % 7 = 3"],
    )
    want = _assert_reads_like_sqlite(path, ["v", "id", "w"])
    assert sorted(r[1] for r in want) == [k for i, k in enumerate(keys) if i % 7 != 3]
    assert sqlite_ranges.calls == []


def test_rowid_gaps_and_freeblocks_after_deletes_and_updates(
    tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    rows = [(i, f"text {i} " * (i % 9), i * 1.25) for i in range(8000)]
    path = _create(
        tmp_path / "d.sqlite",
        "CREATE TABLE t (a INTEGER, c TEXT, r REAL)",
        rows,
        page_size=1024,
        after=[
            "DELETE FROM t WHERE a % 3 = 0",
            "DELETE FROM t WHERE a BETWEEN 2000 AND 3500",
            "UPDATE t SET c = substr(c, 1, 3) WHERE a % 5 = 1",  # shorter: freeblocks
            "UPDATE t SET c = c || c WHERE a % 7 = 2",  # longer: moved within the page
            "UPDATE t SET r = NULL, a = -a WHERE a % 11 = 4",
        ],
    )
    data = path.read_bytes()
    leaves = _tree(data, _root(path))[-1]
    ps = _page_size(data)
    assert any(data[(n - 1) * ps + 1 : (n - 1) * ps + 3] != b"\0\0" for n in leaves), "no freeblock"
    want = _assert_reads_like_sqlite(path, ["a", "c", "r"], batch_rows=(1000, 10))
    assert len(want) < 8000 * 2 // 3
    assert sqlite_ranges.calls == []


def test_after_vacuum(tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    rows = [(i, f"v{i}" * (i % 5), None if i % 3 else i / 3) for i in range(6000)]
    path = _create(
        tmp_path / "v.sqlite",
        "CREATE TABLE t (a INTEGER, c TEXT, r REAL)",
        rows,
        after=["DELETE FROM t WHERE a % 4 = 0"],
    )
    with closing(sqlite3.connect(path)) as db:
        db.execute("VACUUM")
    _assert_reads_like_sqlite(path, ["a", "c", "r"])
    assert sqlite_ranges.calls == []


def test_auto_vacuum_full_pointer_map_pages(tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    rows = [(i, "k" * (i % 40)) for i in range(20000)]
    path = _create(
        tmp_path / "av.sqlite",
        "CREATE TABLE t (a INTEGER, c TEXT)",
        rows,
        page_size=1024,
        before=["PRAGMA auto_vacuum = FULL"],
        after=[
            "CREATE TABLE u (x TEXT)",
            "INSERT INTO u SELECT c FROM t",
            "DELETE FROM t WHERE a % 2 = 0",
            "DROP TABLE u",
            "INSERT INTO t SELECT a + 100000, c || 'z' FROM t WHERE a % 3 = 0",
        ],
    )
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA auto_vacuum").fetchone() == (1,)
    assert path.read_bytes()[52:56] != b"\0\0\0\0"  # pointer-map pages exist
    _assert_reads_like_sqlite(path, ["a", "c"])
    assert sqlite_ranges.calls == []


def test_btree_of_four_levels(tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    rows = [(i, "x" * 30, i % 13) for i in range(60000)]
    path = _create(
        tmp_path / "deep.sqlite",
        "CREATE TABLE t (a INTEGER, c TEXT, m INTEGER)",
        rows,
        page_size=512,
    )
    levels = _tree(path.read_bytes(), _root(path))
    assert len(levels) >= 4, [len(lv) for lv in levels]
    _assert_reads_like_sqlite(path, ["a", "c", "m"], batch_rows=(5000,))
    assert sqlite_ranges.calls == []


def test_leaves_out_of_file_order(tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    """Two tables filled in turns, rows inserted in shuffled rowid order: the leaves of `t`
    are scattered through the file, not in key order."""
    keys = list(range(1, 8001))
    random.Random(7).shuffle(keys)
    path = tmp_path / "mixed.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA page_size = 1024")
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, s TEXT)")
        db.execute("CREATE TABLE other (x TEXT)")
        for k in keys:
            db.execute("INSERT INTO t VALUES (?, ?, ?)", (k, k * k, f"s{k % 100}"))
            db.execute("INSERT INTO other VALUES (?)", ("o" * (k % 50),))
        db.commit()
    leaves = _tree(path.read_bytes(), _root(path))[-1]
    assert leaves != sorted(leaves)
    _assert_reads_like_sqlite(path, ["id", "v", "s"], batch_rows=(1000, 1))
    assert sqlite_ranges.calls == []


def test_rows_from_before_alter_table_add_column_read_null(
    tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    path = _create(
        tmp_path / "alter.sqlite",
        "CREATE TABLE t (a INTEGER, c TEXT)",
        [(i, "old") for i in range(2000)],
        after=[
            "ALTER TABLE t ADD COLUMN n INTEGER",
            "ALTER TABLE t ADD COLUMN s TEXT",
            "ALTER TABLE t ADD COLUMN f REAL",
        ],
    )
    with closing(sqlite3.connect(path)) as db:
        db.executemany(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
            [(i, "new", i, f"s{i}", i / 2) for i in range(2000, 4000)],
        )
        db.execute("UPDATE t SET n = -1 WHERE a % 500 = 7")  # some old rows rewritten long
        db.commit()
    want = _assert_reads_like_sqlite(path, ["a", "c", "n", "s", "f"])
    assert want[1] == (1, "old", None, None, None)
    _assert_reads_like_sqlite(path, ["f", "n", "a"])
    assert sqlite_ranges.calls == []


def test_after_drop_column(tmp_path: Path, sqlite_ranges: RangeReads) -> None:
    path = _create(
        tmp_path / "drop.sqlite",
        "CREATE TABLE t (a INTEGER, x TEXT, c TEXT)",
        [(i, "gone", f"c{i}") for i in range(N)],
        after=["ALTER TABLE t DROP COLUMN x"],
    )
    _assert_reads_like_sqlite(path, ["a", "c"])
    assert sqlite_ranges.calls == []


def test_wide_table_with_multi_byte_record_headers(
    tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    """150 columns: the header-size varint takes two bytes."""
    n = 150
    rows = [tuple((i * k) % 1000 - 500 for k in range(n)) for i in range(2500)]
    cols = ", ".join(f"c{k} INTEGER" for k in range(n))
    path = _create(tmp_path / "wide.sqlite", f"CREATE TABLE t ({cols})", rows, page_size=8192)
    _assert_reads_like_sqlite(path, ["c0", "c77", "c149", "c3"])
    assert sqlite_ranges.calls == []


# ---------------------------------------------- the page reader called directly (few rows)


@pytest.mark.parametrize("count", [1, 2, 10, 500, 1999])
@pytest.mark.parametrize("rows", [1, 7, 100_000])
def test_batches_directly_on_small_tables(count: int, rows: int, tmp_path: Path) -> None:
    e = len(_INT_EDGES)
    data = [(_INT_EDGES[i % e], _TEXTS[i % 18], i / 3) for i in range(count)]  # none overflows
    path = _create(
        tmp_path / "s.sqlite", "CREATE TABLE t (a INTEGER, s TEXT, r REAL)", data, page_size=1024
    )
    got, skipped = _pages_then_sqlite(path, ["r", "a", "s"], rows)
    assert skipped == 0
    _assert_same(got, _sqlite_rows(path, ["r", "a", "s"]))


def test_batches_skip_exactly_the_rows_they_do_not_return(tmp_path: Path) -> None:
    """Rows with text longer than a page, here and there: each Skipped stands for exactly
    the rows between the batches around it."""
    odd = {0, 37, 38, 400, 401, 402, 999, 1499}
    rows = [(i, "L" * 3000 if i in odd else f"short {i}") for i in range(1500)]
    path = _create(
        tmp_path / "o.sqlite", "CREATE TABLE t (a INTEGER, c TEXT)", rows, page_size=1024
    )
    data = path.read_bytes()
    ps = _page_size(data)
    spilling = 0  # rows on the leaves that hold a row spilling to overflow pages
    for leaf in _tree(data, _root(path))[-1]:
        sizes = [_varint(data, cell)[0] for cell in _cells(data, leaf)]
        if max(sizes) > ps - 35:
            spilling += len(sizes)
    assert 0 < spilling < 1500
    for batch, expect in ((1, spilling), (10_000, 1500)):  # 10,000: one run of all leaves
        got, skipped = _pages_then_sqlite(path, ["a", "c"], batch)
        _assert_same(got, _sqlite_rows(path, ["a", "c"]))
        assert skipped == expect


def test_layout_of(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, n BIGINT, r DOUBLE, s VARCHAR(9), b BLOB,
                            x NUMERIC, u, d INTEGER DEFAULT 3);
            CREATE TABLE w (k INTEGER PRIMARY KEY, v TEXT) WITHOUT ROWID;
            CREATE TABLE g (a INTEGER, b INTEGER GENERATED ALWAYS AS (a * 2) STORED);
            CREATE TABLE desc_key (k INTEGER PRIMARY KEY DESC, v TEXT);
            CREATE VIEW view_t AS SELECT id FROM t;
            """
        )
        layout, cols = sqlite_pages.layout_of(db, "t", ["s", "id", "r", "n"])
        assert layout.ncols == 8
        assert layout.root == _root(path)
        assert [(c.name, c.index, c.kind) for c in cols] == [
            ("s", 3, "text"),
            ("id", 0, "rowid"),
            ("r", 2, "float"),
            ("n", 1, "int"),
        ]
        _, keyed = sqlite_pages.layout_of(db, "desc_key", ["k"])
        assert keyed[0].kind == "int"  # INTEGER PRIMARY KEY DESC is not the rowid
        for table, names in [
            ("t", ["b"]),
            ("t", ["missing"]),
            ("w", ["v"]),
            ("g", ["a"]),
            ("view_t", ["id"]),
            ("absent", ["id"]),
        ]:
            with pytest.raises(sqlite_pages.Unsupported):
                sqlite_pages.layout_of(db, table, names)


@pytest.mark.parametrize(
    ("declared", "kind"),
    [
        ("INTEGER", "int"),
        ("int", "int"),
        ("BIGINT", "int"),
        ("UNSIGNED BIG INT", "int"),
        ("FLOATING POINT", "int"),
        ("POINT", "int"),
        ("TEXT", "text"),
        ("VARCHAR(255)", "text"),
        ("NCHAR(5)", "text"),
        ("CLOB", "text"),
        ("BLOB", "blob"),
        ("", "blob"),
        ("REAL", "float"),
        ("DOUBLE PRECISION", "float"),
        ("FLOAT", "float"),
        ("NUMERIC", "numeric"),
        ("DECIMAL(10,5)", "numeric"),
        ("BOOLEAN", "numeric"),
        ("DATETIME", "numeric"),
    ],
)
def test_affinity_follows_sqlite(declared: str, kind: str) -> None:
    assert sqlite_pages.affinity(declared) == kind


_VARINT_EDGES = [0, 1, 127, 128, 255, 256, -1, -(2**63), 2**63 - 1] + [
    v for b in range(7, 63, 7) for v in (2**b - 1, 2**b, 2**b + 1)
]


def _check_varints(values: Sequence[int]) -> None:
    codes = [_encode_varint(v) for v in values]
    starts = np.cumsum([0] + [len(c) for c in codes[:-1]]).astype(np.int64)
    buf = np.frombuffer(b"".join(codes) + b"\xff" * 8, np.uint8)  # what follows is garbage
    got, lengths = sqlite_pages.varints(buf, starts)
    assert lengths.tolist() == [len(c) for c in codes]
    assert got.tolist() == np.array(values, np.int64).tolist()
    for v, c in zip(values, codes):
        assert _varint(c + b"\0" * 8, 0) == (v & (2**64 - 1), len(c))  # the test's own encoder


def test_varints_at_every_length() -> None:
    _check_varints(_VARINT_EDGES)
    assert {len(_encode_varint(v)) for v in _VARINT_EDGES} == set(range(1, 10))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=40))
def test_varints_property(values: list[int]) -> None:
    _check_varints(values)


_VALUE_ROWS = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.sampled_from(_INT_EDGES)),
        st.one_of(st.none(), st.floats(), st.integers(-(2**50), 2**50)),
        st.one_of(st.none(), st.text(st.characters(exclude_categories=["Cs"]), max_size=70)),
    ),
    min_size=1,
    max_size=300,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_VALUE_ROWS, st.sampled_from([512, 1024, 4096]), st.sampled_from([1, 5, 1000]))
def test_batches_property(rows: list[Row], page_size: int, batch: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _create(
            Path(folder) / "h.sqlite",
            "CREATE TABLE t (a INTEGER, r REAL, s TEXT)",
            rows,
            page_size=page_size,
            after=["DELETE FROM t WHERE rowid % 17 = 5"],
        )
        got, _ = _pages_then_sqlite(path, ["s", "a", "r"], batch)
        _assert_same(got, _sqlite_rows(path, ["s", "a", "r"]))


# ------------------------------------------------- unsupported content: SQLite reads it


@dataclass(frozen=True)
class _Odd:
    ddl: str
    row: Callable[[int], Row]
    loose: bool = False  # several storage types in one column: compared as Arrow holds them
    from_pages: bool = True  # the page reader decodes the rows before the odd one
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    insert: str | None = None


_ODD = {
    "text longer than a page": _Odd(
        "CREATE TABLE t (a INTEGER, c TEXT)", lambda i: (i, "L" * 9000 if i == MID else f"s{i}")
    ),
    "a BLOB column": _Odd(
        "CREATE TABLE t (a INTEGER, c BLOB)", lambda i: (i, bytes([i % 256]) * 3), from_pages=False
    ),
    "a blob in a TEXT column": _Odd(
        "CREATE TABLE t (a INTEGER, c TEXT)",
        lambda i: (i, b"\x00\xff" if i == MID else f"s{i}"),
        loose=True,
    ),
    "a REAL in an INTEGER column": _Odd(
        "CREATE TABLE t (a INTEGER, c INTEGER)",
        lambda i: (i, 2.5 if i == MID else i * 7),
        loose=True,
    ),
    "text in an INTEGER column": _Odd(
        "CREATE TABLE t (a INTEGER, c INTEGER)",
        lambda i: (i, "abc" if i == MID else i * 7),
        loose=True,
    ),
    "a NUMERIC column": _Odd(
        "CREATE TABLE t (a INTEGER, c NUMERIC)", lambda i: (i, i * 3), from_pages=False
    ),
    "generated columns": _Odd(
        "CREATE TABLE t (a INTEGER, v INTEGER GENERATED ALWAYS AS (a * 2) VIRTUAL, "
        "c TEXT GENERATED ALWAYS AS ('g' || a) STORED)",
        lambda i: (i,),
        from_pages=False,
        insert="INSERT INTO t (a) VALUES (?)",
    ),
    "a UTF-16 database": _Odd(
        "CREATE TABLE t (a INTEGER, c TEXT)",
        lambda i: (i, f"é{i}"),
        from_pages=False,
        before=("PRAGMA encoding = 'UTF-16le'",),
    ),
    "text that is not UTF-8": _Odd(
        "CREATE TABLE t (a INTEGER, c TEXT)",
        lambda i: (i, f"ok{i}"),
        after=(f"UPDATE t SET c = CAST(x'41ff42' AS TEXT) WHERE a = {MID}",),
    ),
    "a column with a DEFAULT": _Odd(
        "CREATE TABLE t (a INTEGER, c INTEGER DEFAULT 7)", lambda i: (i, i), from_pages=False
    ),
    "ALTER TABLE ADD COLUMN with a DEFAULT": _Odd(
        "CREATE TABLE t (a INTEGER, b INTEGER)",
        lambda i: (i, -i),
        from_pages=False,
        after=(
            "ALTER TABLE t ADD COLUMN c INTEGER DEFAULT 42",
            f"UPDATE t SET c = 1 WHERE a > {MID}",
        ),
    ),
}


@pytest.mark.parametrize("case", list(_ODD))
def test_unsupported_content_is_read_by_sqlite(
    case: str, tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    odd = _ODD[case]
    path = _create(
        tmp_path / "odd.sqlite",
        odd.ddl,
        [odd.row(i) for i in range(N)],
        before=odd.before,
        after=odd.after,
        insert=odd.insert,
    )
    cols = ["a", "c"]
    want = _sqlite_rows(path, cols)
    for rows in (500, None):
        sqlite_ranges.calls.clear()
        got = _source_rows(path, cols, rows=rows)
        assert [r[0] for r in got] == [r[0] for r in want], "rows missing, repeated or reordered"
        _assert_same(got, want, loose=odd.loose)
        assert sqlite_ranges.calls, "nothing was read through SQLite"
        if rows is not None:  # read_batches: the rows before the odd one came from pages
            first = min(lo for lo, _ in sqlite_ranges.calls)
            assert (first > 500) == odd.from_pages, sqlite_ranges.calls


@pytest.mark.parametrize(
    "where", [(0,), (MID,), (N - 1,), (0, 499, 500, 501, 2222, N - 1)], ids=str
)
def test_overflow_rows_anywhere(
    where: tuple[int, ...], tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    rows = [(i, "é" * 3000 if i in where else f"s{i}", i * 0.5) for i in range(N)]
    path = _create(
        tmp_path / "o.sqlite",
        "CREATE TABLE t (a INTEGER, c TEXT, r REAL)",
        rows,
        after=["DELETE FROM t WHERE a % 10 = 3"],
    )
    _assert_reads_like_sqlite(path, ["c", "a", "r"], batch_rows=(1000, 7))
    assert sqlite_ranges.calls


@pytest.mark.parametrize("case", ["text in an INTEGER column", "a REAL in an INTEGER column"])
def test_mixed_types_in_a_big_table_read_whole(case: str, tmp_path: Path) -> None:
    """`read` of a table above one batch (65,536 rows): page-decoded int64 batches and the
    batch SQLite read must still make one table."""
    odd = "abc" if case.startswith("text") else 2.5
    rows = [(i, odd if i == 68_000 else i * 7) for i in range(70_000)]
    path = _create(tmp_path / "big.sqlite", "CREATE TABLE t (a INTEGER, c INTEGER)", rows)
    want = _sqlite_rows(path, ["a", "c"])
    got = _source_rows(path, ["a", "c"], rows=None)  # the file is sound: a table, no error
    assert [r[0] for r in got] == [r[0] for r in want]
    assert got[68_000] == want[68_000] == (68_000, odd)
    _assert_same(got, want, loose=True)


def test_without_rowid_table(tmp_path: Path) -> None:
    rows = [(k * 3, f"v{k}") for k in range(N)]
    path = _create(
        tmp_path / "wr.sqlite", "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT) WITHOUT ROWID", rows
    )
    with closing(sqlite3.connect(path)) as db, pytest.raises(sqlite_pages.Unsupported):
        sqlite_pages.layout_of(db, "t", ["k", "v"])
    want = _sqlite_rows(path, ["k", "v"], order="k")
    for rows_ in (1000, None):
        _assert_same(_source_rows(path, ["k", "v"], rows=rows_), want)


# -------------------------------------------------------------------------------- WAL


def _wal_with_uncheckpointed_rows(folder: Path) -> tuple[Path, Path]:
    """A WAL-mode database whose last 3,000 rows (and an update of the first 100) are
    committed in its -wal file only, as a writer that was killed leaves it; and a copy of
    it for plain SQLite to read (which checkpoints it on close)."""
    live = folder / "live" / "db.sqlite"
    live.parent.mkdir()
    with closing(sqlite3.connect(live)) as w:
        w.execute("PRAGMA journal_mode = WAL")
        w.execute("PRAGMA wal_autocheckpoint = 0")
        w.execute("CREATE TABLE t (a INTEGER, c TEXT)")
        w.executemany("INSERT INTO t VALUES (?, ?)", [(i, "in the file") for i in range(3000)])
        w.commit()
        w.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        w.executemany("INSERT INTO t VALUES (?, ?)", [(i, "in the log") for i in range(3000, 6000)])
        w.execute("UPDATE t SET c = 'updated in the log' WHERE a < 100")
        w.commit()
        assert Path(f"{live}-wal").stat().st_size > 0
        out = []
        for name in ("report", "reference"):
            (folder / name).mkdir()
            for suffix in ("", "-wal"):
                shutil.copyfile(f"{live}{suffix}", folder / name / f"db.sqlite{suffix}")
            out.append(folder / name / "db.sqlite")
    return out[0], out[1]


def test_wal_rows_not_yet_checkpointed_are_left_out(tmp_path: Path) -> None:
    """Reports are opened immutable, so that nothing (not even the -shm a WAL reader
    needs) is written beside them: what only the -wal holds is not read, by either
    reader; the main file's rows are, as SQLite's immutable view gives them."""
    report, reference = _wal_with_uncheckpointed_rows(tmp_path)
    with closing(sqlite3.connect(reference)) as db:
        full = db.execute("SELECT a, c FROM t ORDER BY rowid").fetchall()
    assert len(full) == 6000 and full[0] == (0, "updated in the log")
    with closing(sqlite3.connect(f"file:{report}?immutable=1", uri=True)) as db:
        want = db.execute("SELECT a, c FROM t ORDER BY rowid").fetchall()
    assert len(want) < len(full)
    for rows in (1000, None):
        _assert_same(_source_rows(report, ["a", "c"], rows=rows), want)


def test_wal_mode_database_without_a_log_is_read_from_pages(
    tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    path = _create(
        tmp_path / "w.sqlite",
        "CREATE TABLE t (a INTEGER, c TEXT)",
        [(i, f"c{i}") for i in range(N)],
        before=["PRAGMA journal_mode = WAL"],
    )
    assert path.read_bytes()[18:20] == b"\x02\x02"  # WAL mode, and the log was checkpointed
    assert not Path(f"{path}-wal").exists()
    _assert_reads_like_sqlite(path, ["a", "c"])
    assert sqlite_ranges.calls == []


# ------------------------------------------------------------------- the input is kept


@pytest.mark.parametrize("journal", ["rollback journal", "WAL with a log"])
def test_input_file_is_never_modified(journal: str, tmp_path: Path) -> None:
    if journal == "WAL with a log":
        path, _ = _wal_with_uncheckpointed_rows(tmp_path)
        tables = {"t": ["a", "c"]}
    else:
        (tmp_path / "keep").mkdir()
        path = _create(
            tmp_path / "keep" / "db.sqlite",
            "CREATE TABLE t (a INTEGER, c TEXT)",
            [(i, f"c{i}") for i in range(N)],
            after=[
                "CREATE TABLE b (a INTEGER, x BLOB)",  # read by SQLite
                "INSERT INTO b SELECT a, CAST(c AS BLOB) FROM t",
            ],
        )
        tables = {"t": ["a", "c"], "b": ["x", "a"]}
    for p in path.parent.iterdir():
        os.utime(p, ns=(10**18, 10**18))  # an old mtime: any write shows
    before = _snapshot(path.parent)
    src = SqliteSource(path)
    try:
        for table, cols in tables.items():
            src.read(table, cols)
            for _ in src.read_batches(table, cols, 1000):
                pass
    finally:
        src.close()
    after = _snapshot(path.parent)
    assert {k: after.get(k) for k in before} == before, "the input was modified"
    assert set(after) <= set(before) | {f"{path.name}-shm"}


# ------------------------------------------------------------------------------ damage


_DAMAGE_ROWS = 3000
_DAMAGE_COLS = list("abcdefghij")


@pytest.fixture(scope="module")
def damage_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten columns (a record header of 11 bytes), 3 B-tree levels at 512-byte pages."""
    path = tmp_path_factory.mktemp("damage") / "base.sqlite"
    rows = [
        (i, i * 1000, f"name{i % 97}", i / 4, 1, 0, i % 3, None, -i, 7) for i in range(_DAMAGE_ROWS)
    ]
    ddl = (
        "CREATE TABLE t ("
        + ", ".join(
            f"{c} {t}"
            for c, t in zip(_DAMAGE_COLS, ["INTEGER", "INTEGER", "TEXT", "REAL"] + ["INTEGER"] * 6)
        )
        + ")"
    )
    _create(path, ddl, rows, page_size=512)
    assert len(_tree(path.read_bytes(), _root(path))) == 3
    return path


def _record(data: bytearray, cell: int) -> int:
    """Where the record of leaf cell `cell` starts (after payload size and rowid)."""
    _, n1 = _varint(data, cell)
    _, n2 = _varint(data, cell + n1)
    return cell + n1 + n2


def _damage(how: str, data: bytearray, root: int, seed: int) -> bytearray:
    rng = random.Random(seed)
    levels = _tree(bytes(data), root)
    ps = _page_size(data)
    leaf = levels[-1][len(levels[-1]) // 2]
    at = (leaf - 1) * ps
    count = int.from_bytes(data[at + 3 : at + 5], "big")
    if how == "garbage cell pointers":
        data[at + 8 : at + 8 + 2 * count] = rng.randbytes(2 * count)
    elif how == "garbage record headers":
        for cell in _cells(data, leaf):
            rec = _record(data, cell)
            data[rec + 1 : rec + 11] = rng.randbytes(10)
    elif how == "garbage leaf page":
        data[at + 8 : at + ps] = rng.randbytes(ps - 8)
    elif how == "a 9-byte serial type":
        for cell in _cells(data, leaf)[:3]:
            rec = _record(data, cell)
            data[rec + 1 : rec + 11] = bytes([0x01] + [0x81] * 8 + [0x01])
    elif how == "a negative serial type":
        rec = _record(data, _cells(data, leaf)[0])
        data[rec + 1 : rec + 11] = bytes([0xFF] * 9 + [0x01])
    elif how == "a constant flipped (1 to 0)":
        rec = _record(data, _cells(data, leaf)[0])
        assert data[rec + 5] == 9
        data[rec + 5] = 8
    elif how == "a 1-byte integer made 2 bytes":
        rec = _record(data, _cells(data, leaf)[0])
        assert data[rec + 10] == 1
        data[rec + 10] = 2
    elif how == "a leaf with no cells":
        data[at + 3 : at + 5] = b"\0\0"
    elif how == "truncated to half":
        del data[len(data) // 2 :]
    elif how == "truncated mid-page":
        del data[len(data) - ps // 2 :]
    elif how in (
        "interior page pointing at the root",
        "interior page pointing at itself",
        "interior pointer beyond the file",
    ):
        interior = levels[-2][len(levels[-2]) // 2]
        target = {"root": root, "itself": interior, "file": 10**6}[how.split()[-1]]
        io = (interior - 1) * ps
        assert data[io] == 0x05
        data[io + 8 : io + 12] = target.to_bytes(4, "big")
    elif how == "a huge rowid in the last cell":
        cell = _cells(data, levels[-1][-1])[-1]
        data[cell + 1 : cell + 10] = bytes([0x81] * 8 + [0x01])  # max(rowid) ~ 2**57
    else:
        raise AssertionError(how)
    return data


#: what SqliteSource must do with each damaged file: give SQLite's rows, all of them, or
#: raise BadReportError from every way of reading it, never one or the other at random
ROWS = "SQLite's rows"  # damage inside a record that SQLite reads as a valid value
BAD = "BadReportError"  # SQLite finds the damage too
#: a file cut mid-page: SQLite reads the missing bytes as zeros (the last leaf's cells
#: become rows of NULLs, without an error); those rows are not the report's, so
#: SqliteSource must refuse the file rather than return them
BAD_SQLITE_BLIND = "BadReportError, SQLite reads NULL rows"

_DAMAGE = [
    ("garbage cell pointers", 0, BAD),
    ("garbage record headers", 0, BAD),
    *[("garbage leaf page", s, BAD) for s in range(2)],
    ("a 9-byte serial type", 0, BAD),
    ("a negative serial type", 0, BAD),
    ("a constant flipped (1 to 0)", 0, ROWS),
    ("a 1-byte integer made 2 bytes", 0, BAD),
    ("a leaf with no cells", 0, BAD),
    ("truncated to half", 0, BAD),
    ("truncated mid-page", 0, BAD_SQLITE_BLIND),
    ("interior page pointing at the root", 0, BAD),
    ("interior page pointing at itself", 0, BAD),
    ("interior pointer beyond the file", 0, BAD),
    ("a huge rowid in the last cell", 0, BAD),
]


def _sqlite_answer(path: Path) -> list[Row] | None:
    """SQLite's rows of the damaged table, or None when SQLite finds the damage."""
    try:
        return _sqlite_rows(path, _DAMAGE_COLS)
    except sqlite3.DatabaseError:
        return None


@pytest.mark.parametrize(
    ("how", "seed", "expect"), _DAMAGE, ids=[f"{h}-{s}" for h, s, _ in _DAMAGE]
)
def test_damaged_file_gives_sqlites_rows_or_bad_report(
    how: str, seed: int, expect: str, damage_base: Path, tmp_path: Path, sqlite_ranges: RangeReads
) -> None:
    path = tmp_path / "damaged.sqlite"
    data = _damage(how, bytearray(damage_base.read_bytes()), _root(damage_base), seed)
    path.write_bytes(bytes(data))
    want = _sqlite_answer(path)
    if expect == BAD:
        assert want is None, "SQLite reads this file: the case is not damage SQLite finds"
    else:  # SQLite reads it; the page reader's answer must follow from what it returns
        assert want is not None and len(want) == _DAMAGE_ROWS
        undamaged = _sqlite_rows(damage_base, _DAMAGE_COLS)
        assert want != undamaged, "the damage changed nothing SQLite returns"
        if expect == BAD_SQLITE_BLIND:
            changed = [w for w, u in zip(want, undamaged) if w != u]
            assert changed and all(v is None for row in changed for v in row)
    problems = []
    for rows in (1000, 20, None):  # 20: one leaf per decode
        sqlite_ranges.calls.clear()
        sqlite_ranges.limit = _DAMAGE_ROWS // (rows or 65536) + 20
        what = f"read_batches(rows={rows})" if rows else "read()"
        try:
            got = _source_rows(path, _DAMAGE_COLS, rows=rows)
        except BadReportError as e:
            if expect == ROWS:
                problems.append(f"{what} raised BadReportError ({e}); SQLite reads every row")
            continue
        except pytest.fail.Exception as e:  # the endless loop, stopped by sqlite_ranges
            problems.append(f"{what}: {e}")
            continue
        except Exception as e:
            problems.append(f"{what} raised {type(e).__name__}, not BadReportError: {e}")
            continue
        if expect != ROWS:
            problems.append(
                f"{what} returned {len(got)} of {_DAMAGE_ROWS} rows without an error; "
                f"expected {expect}"
            )
        elif not _same_exactly(got, want):
            problems.append(f"{what} returned {len(got)} rows unlike SQLite's {len(want or [])}")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ real nsys exports


_REPORTS = sorted(p.name[: -len(".sqlite.xz")] for p in NSYS_DATA.glob("*.sqlite.xz"))


def _tables_to_compare(path: Path) -> list[str]:
    """The tables SqliteSource reads through the page reader (a rowid span above 2,000)."""
    out = []
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            lo = db.execute(f'SELECT min(rowid) FROM "{table}"').fetchone()[0]
            hi = db.execute(f'SELECT max(rowid) FROM "{table}"').fetchone()[0]
            if lo is not None and hi - lo >= 2000:
                out.append(table)
    return sorted(out)


@pytest.mark.parametrize("report", _REPORTS)
def test_real_exports_read_like_sqlite(
    report: str, nsys_dir: Path, sqlite_ranges: RangeReads, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = nsys_dir / f"{report}.sqlite"
    tables = _tables_to_compare(path)
    src = SqliteSource(path)
    try:
        assert tables
        for table in tables:
            cols = src.columns(table)
            sqlite_ranges.calls.clear()
            monkeypatch.delenv("TUIPERF_NO_PAGE_READER", raising=False)
            pages = src.read(table, cols)
            batched = pa.concat_tables(list(src.read_batches(table, cols, 4096)))
            assert sqlite_ranges.calls == [], f"{table}: the page reader stepped aside"
            monkeypatch.setenv("TUIPERF_NO_PAGE_READER", "1")
            plain = src.read(table, cols)
            assert sqlite_ranges.calls, "TUIPERF_NO_PAGE_READER had no effect"
            assert pages.num_rows == plain.num_rows > 0
            assert pages.schema == plain.schema, table
            for col in cols:
                assert pages.column(col).equals(plain.column(col)), f"{table}.{col}"
                assert batched.column(col).equals(plain.column(col)), f"{table}.{col} (batches)"
    finally:
        src.close()
