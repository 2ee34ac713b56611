"""The SQLite page reader (load/nsys/sqlite_pages) returns what SQLite returns, or steps aside.

Each check compares with a plain `SELECT ... ORDER BY rowid` through Python's sqlite3, on
real nsys exports and on files made here to hold what nsys files rarely do.
"""

from __future__ import annotations

import math
import random
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from tuiperf.load.nsys import sqlite_pages
from tuiperf.load.nsys.source import SqliteSource

ROWS = 5_000  # above the 2,000 rows from which the page reader is used

#: integers at every width SQLite stores (1, 2, 3, 4, 6, 8 bytes), both signs, and 0 and 1
#: (which take no bytes)
EDGES = [
    0,
    1,
    -1,
    127,
    128,
    -128,
    -129,
    32767,
    32768,
    -32769,
    2**23,
    -(2**23) - 1,
    2**31,
    -(2**31) - 1,
    2**47,
    -(2**47) - 1,
    2**63 - 1,
    -(2**63),
    2,
]


def _rows(n: int, seed: int = 1) -> list[tuple[object, ...]]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        big = rnd.choice(EDGES) if i % 3 else rnd.randint(-(2**63), 2**63 - 1)
        real = rnd.choice([0.5, -1e300, 3.0, 0.0, -0.0, math.inf, 1e-310, rnd.random()])
        text = rnd.choice(["", "kernel", "é✓ unicode", "x" * 56, "y" * 57, "z" * 300, None])
        out.append((i * 3 + 7, big, None if i % 11 == 0 else real, text, rnd.randint(0, 9)))
    return out


def _make(path: Path, rows: list[tuple[object, ...]], page_size: int = 4096) -> Path:
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA page_size = {page_size}")
    db.execute(
        "CREATE TABLE T (id INTEGER PRIMARY KEY, big INTEGER, real REAL, txt TEXT, small INT)"
    )
    db.executemany("INSERT INTO T VALUES (?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()
    return path


def _sqlite(path: Path, table: str, cols: list[str]) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid").fetchall()
    finally:
        db.close()


def _read(path: Path, table: str, cols: list[str], rows: int = 1000) -> pa.Table:
    src = SqliteSource(path)
    try:
        return pa.concat_tables(
            list(src.read_batches(table, cols, rows)), promote_options="permissive"
        )
    finally:
        src.close()


def _same(got: pa.Table, want: list[tuple[object, ...]]) -> None:
    assert got.num_rows == len(want)
    for i, name in enumerate(got.column_names):
        for a, b in zip(got[name].to_pylist(), (r[i] for r in want), strict=True):
            if isinstance(b, float):
                assert isinstance(a, float) and (a == b or (math.isnan(a) and math.isnan(b)))
                assert math.copysign(1, a) == math.copysign(1, b)
            else:
                assert a == b and type(a) is type(b), (name, a, b)


def _no_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any read through SQLite fail: what is returned came from the pages."""

    def refuse(self, table, columns, lo, hi):  # type: ignore[no-untyped-def]
        raise AssertionError(f"SQLite read rows {lo}..{hi} of {table}")

    monkeypatch.setattr(SqliteSource, "_read_range", refuse)


@pytest.mark.parametrize("page_size", [512, 4096, 65536])
def test_every_width_sign_null_and_text_like_sqlite(
    page_size: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [r for r in _rows(ROWS) if r[3] is None or len(str(r[3])) < 200]
    path = _make(tmp_path / "t.sqlite", rows, page_size)
    cols = ["id", "big", "real", "txt", "small"]
    want = _sqlite(path, "T", cols)
    _no_sqlite(monkeypatch)
    _same(_read(path, "T", cols), want)
    _same(_read(path, "T", ["small", "txt", "id"]), [(r[4], r[3], r[0]) for r in want])


def test_rows_of_an_older_shape_read_null_in_added_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _make(tmp_path / "t.sqlite", _rows(ROWS))
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE T ADD COLUMN later INTEGER")
    db.executemany("INSERT INTO T (big, later) VALUES (?, ?)", [(i, i * 1000) for i in range(ROWS)])
    db.commit()
    db.close()
    cols = ["id", "later", "big"]
    want = _sqlite(path, "T", cols)
    assert want[0][1] is None and want[-1][1] is not None
    _no_sqlite(monkeypatch)
    _same(_read(path, "T", cols), want)


def test_deleted_rows_vacuum_and_a_deep_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _make(tmp_path / "t.sqlite", _rows(40_000), page_size=512)
    db = sqlite3.connect(path)
    db.execute("DELETE FROM T WHERE id % 7 = 0 OR (id > 30000 AND id < 60000)")
    db.execute("UPDATE T SET txt = 'changed' WHERE id % 5 = 0")
    db.commit()
    db.close()
    cols = ["id", "big", "txt"]
    want = _sqlite(path, "T", cols)
    layout, _ = sqlite_pages.layout_of(sqlite3.connect(path), "T", cols)
    pf = sqlite_pages.PageFile(path)
    try:
        depth_pages = sqlite_pages.leaf_pages(pf, layout.root)
    finally:
        pf.close()
    assert len(depth_pages) > 500  # a tree of three levels or more at 512-byte pages
    with monkeypatch.context() as m:
        _no_sqlite(m)
        _same(_read(path, "T", cols), want)
    sqlite3.connect(path).execute("VACUUM").connection.close()
    _no_sqlite(monkeypatch)
    _same(_read(path, "T", cols), want)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_what_the_pages_cannot_give_is_read_through_sqlite_in_between(
    workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows that spill to overflow pages, mid-table: SQLite reads the rowids between the
    batches around them, nothing more or less, however many runs decode at once."""
    monkeypatch.setattr(sqlite_pages, "_WORKERS", workers)
    rows = _rows(30_000)
    rows[12_000] = (rows[12_000][0], 5, 1.0, "L" * 20_000, 1)
    rows[20_000] = (rows[20_000][0], 6, 1.0, "M" * 9_000, 1)
    path = _make(tmp_path / "t.sqlite", rows)
    cols = ["id", "big", "txt"]
    want = _sqlite(path, "T", cols)
    ranges: list[tuple[int, int]] = []
    real = SqliteSource._read_range

    def spy(self, table, columns, lo, hi):  # type: ignore[no-untyped-def]
        ranges.append((lo, hi))
        return real(self, table, columns, lo, hi)

    monkeypatch.setattr(SqliteSource, "_read_range", spy)
    _same(_read(path, "T", cols, rows=2000), want)
    through_sqlite = sum(hi - lo for lo, hi in ranges)
    assert 0 < through_sqlite < len(want) // 3
    for spilled in (12_000, 20_000):
        assert any(lo <= rows[spilled][0] < hi for lo, hi in ranges)


def test_rows_still_in_a_write_ahead_log_are_left_out_by_both_readers(tmp_path: Path) -> None:
    """Reports are opened immutable (nothing is ever written beside them, not even the
    -shm file a WAL reader needs): rows only in the -wal are not read, by either path."""
    path = _make(tmp_path / "t.sqlite", _rows(ROWS))
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.executemany("INSERT INTO T (big) VALUES (?)", [(i,) for i in range(3000)])
    db.commit()
    try:
        assert Path(f"{path}-wal").stat().st_size > 0
        cols = ["id", "big"]
        frozen = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        want = frozen.execute("SELECT id, big FROM T ORDER BY rowid").fetchall()
        frozen.close()
        assert len(want) == ROWS
        _same(_read(path, "T", cols), want)
    finally:
        db.close()


@pytest.mark.parametrize("report", ["lstm", "vit_amp", "cnn_osrt", "vit_range", "h100_2gpu_1s"])
def test_real_exports_read_the_same_as_through_sqlite(
    report: str, nsys_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = nsys_dir / f"{report}.sqlite"
    src = SqliteSource(path)
    try:
        big = [t for t in sorted(src.tables()) if src.row_bound(t) >= 2000]
        assert big
        for table in big:
            cols = src.columns(table)
            pages = list(src._page_batches(table, cols, 1 << 16))
            assert pages and not any(isinstance(p, sqlite_pages.Skipped) for p in pages), table
            got = pa.concat_tables([t for _, t in pages])
            want = _sqlite(path, table, [f'"{c}"' for c in cols])
            _same(got, want)
    finally:
        src.close()


def _varint(v: int) -> bytes:
    """SQLite's varint encoding (big-endian 7-bit groups; the ninth byte takes 8 bits)."""
    u = v & (2**64 - 1)
    if u >= 1 << 56:
        head, low = u >> 8, u & 0xFF
        groups = [(head >> (7 * k)) & 0x7F for k in range(8)][::-1]
        return bytes(g | 0x80 for g in groups) + bytes([low])
    groups = []
    while True:
        groups.append(u & 0x7F)
        u >>= 7
        if not u:
            break
    groups.reverse()
    return bytes([g | 0x80 for g in groups[:-1]] + [groups[-1]])


def test_varints_decode_every_length() -> None:
    import numpy as np

    values = [
        0,
        1,
        127,
        128,
        16383,
        16384,
        2**21,
        2**28 - 1,
        2**35,
        2**42,
        2**49,
        2**56 - 1,
        2**56,
        2**63 - 1,
        -1,
        -(2**63),
    ]
    blob = b"".join(_varint(v) for v in values) + bytes(8)
    at, pos = [], 0
    for v in values:
        at.append(pos)
        pos += len(_varint(v))
    got, lengths = sqlite_pages.varints(np.frombuffer(blob, np.uint8), np.array(at))
    assert got.tolist() == values
    assert lengths.tolist() == [len(_varint(v)) for v in values]
