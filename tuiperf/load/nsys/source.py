"""Raw table access to an Nsight Systems export: SQLite file or parquet/arrow directory.

A source knows which tables exist and reads some of their columns into Arrow.
It never writes to the export. SQLite tables of `_PAGE_READER_MIN_ROWS` rows or more are
decoded from the file's pages (sqlite_pages); the rest, and whatever that reader skips,
go through SQLite (Python's sqlite3).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from tuiperf import settings
from tuiperf.errors import BadReportError
from tuiperf.load.nsys import sqlite_pages
from tuiperf.model.arrays import from_numpy, from_strings

#: tables with fewer rows are read through sqlite3 alone: there the page reader's setup
#: (schema lookup, B-tree walk) costs as much as it saves (see bench/notes.md)
_PAGE_READER_MIN_ROWS = 2_000

#: batches of a whole-table `read` (bounds the page reader's temporaries)
_READ_BATCH_ROWS = 1 << 16

#: the Arrow type of each SQLite column affinity the page reader decodes
_AFFINITY = {"int": pa.int64(), "float": pa.float64(), "text": pa.string()}

_VERSIONED = re.compile(r"^(?P<base>.+?)(?:_V(?P<ver>\d+))?$")


class NsysSource(Protocol):
    """What the normalizer needs from an export."""

    path: Path

    def tables(self) -> set[str]: ...

    def columns(self, table: str) -> list[str]: ...

    def read(self, table: str, columns: list[str]) -> pa.Table: ...

    def read_batches(self, table: str, columns: list[str], rows: int) -> Iterator[pa.Table]: ...

    def row_bound(self, table: str) -> int: ...

    def close(self) -> None: ...


def versions_of(tables: set[str], logical: str) -> list[str]:
    """Physical tables holding `logical`: the plain name and any `_V<n>` variants."""
    found = []
    for t in tables:
        m = _VERSIONED.match(t)
        if m and m.group("base") == logical:
            found.append((int(m.group("ver") or 1), t))
    return [t for _, t in sorted(found)]


def _ro_uri(path: Path) -> str:
    from urllib.parse import quote

    return f"file:{quote(str(path))}?mode=ro&immutable=1"


class SqliteSource:
    """An `nsys export --type sqlite` file, opened read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._db = sqlite3.connect(_ro_uri(path), uri=True, check_same_thread=False)
            # names are data from anyone: a byte that is not UTF-8 becomes U+FFFD, it does
            # not make the whole report unreadable
            self._db.text_factory = _lenient_text
            rows = self._db.execute(
                "SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view')"
            ).fetchall()
        except (sqlite3.Error, UnicodeDecodeError) as e:  # names in the schema are not UTF-8
            raise BadReportError(f"{path}: not a readable SQLite database ({e})") from e
        self._tables = {name for name, _ in rows}
        # tables keyed by their primary key, not a rowid: read whole, in key order
        self._keyed = {n for n, sql in rows if sql and sqlite_pages.without_rowid(str(sql))}
        self._wal_mode = _wal_mode(path)
        self._size = _file_size(path)
        self._columns: dict[str, list[str]] = {}
        self._bounds: dict[str, tuple[int, int]] = {}
        self._declared: dict[str, dict[str, pa.DataType]] = {}
        self._db_lock = threading.RLock()  # one sqlite3 connection, shared by reader threads

    def tables(self) -> set[str]:
        return set(self._tables)

    def columns(self, table: str) -> list[str]:
        with self._db_lock:
            if table not in self._columns:
                with self._reading(table):
                    cur = self._db.execute(f'SELECT * FROM "{table}" LIMIT 0')
                self._columns[table] = [d[0] for d in cur.description]
            return self._columns[table]

    def read(self, table: str, columns: list[str]) -> pa.Table:
        if table in self._keyed:
            return self._read_keyed(table, columns)
        lo, hi = self._rowids(table)
        if hi - lo < _PAGE_READER_MIN_ROWS:
            return self._read_range(table, columns, lo, hi + 1)
        parts = list(self.read_batches(table, columns, _READ_BATCH_ROWS))
        try:
            if parts:
                return pa.concat_tables(parts, promote_options="permissive")
        except (pa.ArrowTypeError, pa.ArrowInvalid):
            pass  # a column of mixed types (text among integers): SQLite's view, in one read
        return self._read_range(table, columns, lo, hi + 1)

    def read_batches(self, table: str, columns: list[str], rows: int) -> Iterator[pa.Table]:
        """The table in batches of about `rows` rows, in rowid order.

        Big tables are decoded from their pages (sqlite_pages); the rows that reader
        skips, and all rows when it steps aside, are read through SQLite in rowid
        ranges (SQLite seeks the B-tree by rowid).
        """
        if table in self._keyed:
            yield self._read_keyed(table, columns)
            return
        lo, hi = self._rowids(table)
        start, done = lo, 0  # the next rowid to read, and the rows returned so far
        if hi - lo >= _PAGE_READER_MIN_ROWS:
            for item in self._page_batches(table, columns, rows):
                if isinstance(item, _Damage):  # SQLite scans the rest, meeting the damage
                    yield from self._scan_after(table, columns, done, rows)
                    return
                if isinstance(item, sqlite_pages.Skipped):
                    end = hi + 1 if item.before is None else item.before
                    for t in self._ranges(table, columns, start, end, rows):
                        done += t.num_rows
                        yield t
                    start = end
                else:
                    rowids, t = item
                    done += t.num_rows
                    yield t
                    start = int(rowids[-1]) + 1
        yield from self._ranges(table, columns, start, hi + 1, rows)

    def _ranges(
        self, table: str, columns: list[str], lo: int, hi: int, rows: int
    ) -> Iterator[pa.Table]:
        """Rowids lo..hi-1 in ranges of `rows`; an empty range jumps to the next rowid
        there is (rowids may be sparse: a damaged file can claim 2^60 of them)."""
        s = lo
        while s < hi:
            t = self._read_range(table, columns, s, min(s + rows, hi))
            if t.num_rows:
                yield t
                s += rows
                continue
            s = self._next_rowid(table, s + rows, hi)

    def _next_rowid(self, table: str, at: int, hi: int) -> int:
        """The first rowid from `at` on (`hi` where there is none before it)."""
        if at >= hi:
            return hi
        with self._db_lock, self._reading(table):
            found = self._db.execute(
                f'SELECT min(rowid) FROM "{table}" WHERE rowid >= ?', (at,)
            ).fetchone()[0]
        return hi if found is None else min(max(int(found), at), hi)

    def _scan_after(
        self, table: str, columns: list[str], skip: int, rows: int
    ) -> Iterator[pa.Table]:
        """The table's rows after the first `skip`, as a full scan in rowid order gives
        them (its own connection, read in batches). Where the file is damaged SQLite's
        scan is the reference: it raises there, or returns what it makes of the page
        (zeros of a truncated file are rows too), and a rowid range would differ."""
        sql = f'SELECT {_names(columns)} FROM "{table}" ORDER BY rowid LIMIT -1 OFFSET ?'
        with self._reading(table):
            db = sqlite3.connect(_ro_uri(self.path), uri=True)
            db.text_factory = _lenient_text
            try:
                cur = db.execute(sql, (skip,))
                types = self._types(table)
                while batch := cur.fetchmany(rows):
                    yield _table_of(batch, columns, types)
            finally:
                db.close()

    def _read_keyed(self, table: str, columns: list[str]) -> pa.Table:
        with self._reading(table):
            sql = f'SELECT {_names(columns)} FROM "{table}"'
            return self._read_stdlib(table, sql, columns)

    @contextlib.contextmanager
    def _reading(self, table: str) -> Iterator[None]:
        """SQLite's errors on `table` as the one-line report error (column names that are
        not UTF-8 too: sqlite3 decodes them strictly)."""
        try:
            yield
        except (sqlite3.Error, UnicodeDecodeError) as e:
            raise BadReportError(f"{self.path}: cannot read table {table} ({e})") from e

    def _page_batches(
        self, table: str, columns: list[str], rows: int
    ) -> Iterator[tuple[np.ndarray, pa.Table] | sqlite_pages.Skipped | _Damage]:
        if settings.no_page_reader() or not columns:
            return
        if self._wal_mode and _has_wal(self.path):
            return  # rows may be in the write-ahead log: SQLite decides what it reads
        try:
            with self._db_lock:
                layout, cols = sqlite_pages.layout_of(self._db, table, columns)
            pf = sqlite_pages.PageFile(self.path)
        except (sqlite_pages.Unsupported, sqlite3.Error, UnicodeDecodeError, OSError):
            return  # SQLite reads the table, and reports what is wrong with it
        try:
            batches = sqlite_pages.batches(pf, layout, cols, rows)
            while True:
                try:
                    item = next(batches)
                except sqlite_pages.Damaged:
                    yield _DAMAGED
                    return
                except (StopIteration, sqlite_pages.Unsupported, OSError):
                    return
                yield item
        finally:
            pf.close()

    def row_bound(self, table: str) -> int:
        """At most this many rows (each takes 4 bytes of the file at least)."""
        if table in self._keyed:
            with self._db_lock, self._reading(table):
                return int(self._db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
        lo, hi = self._rowids(table)
        return min(max(hi - lo + 1, 0), self._size // 4)

    def _read_range(self, table: str, columns: list[str], lo: int, hi: int) -> pa.Table:
        with self._reading(table):
            return self._read_stdlib(table, _range_sql(table, columns, lo, hi), columns)

    def _rowids(self, table: str) -> tuple[int, int]:
        # two statements: SQLite answers a lone min() or max() of the rowid from the B-tree
        # in O(log n), but `SELECT min(rowid), max(rowid)` together scans the whole table
        with self._db_lock:
            if table not in self._bounds:
                with self._reading(table):
                    lo = self._db.execute(f'SELECT min(rowid) FROM "{table}"').fetchone()[0]
                    hi = self._db.execute(f'SELECT max(rowid) FROM "{table}"').fetchone()[0]
                if lo is not None and (hi is None or int(lo) > int(hi)):
                    # SQLite answers a damaged B-tree's min/max from garbage cells
                    raise BadReportError(f"{self.path}: cannot read table {table} (damaged)")
                self._bounds[table] = (0, -1) if lo is None else (int(lo), int(hi))
            return self._bounds[table]

    def _read_stdlib(self, table: str, sql: str, columns: list[str]) -> pa.Table:
        types = self._types(table)
        with self._db_lock:
            rows = self._db.execute(sql).fetchall()
        return _table_of(rows, columns, types)

    def _types(self, table: str) -> dict[str, pa.DataType]:
        """Arrow types of `table`'s INTEGER, REAL and TEXT columns (by SQLite's affinity
        rules): what a column with no values, or only NULLs, is read as, so that it has the
        type the page reader gives it."""
        with self._db_lock:
            if table not in self._declared:
                with self._reading(table):
                    info = self._db.execute(f'PRAGMA table_info("{table}")').fetchall()
                kinds = {r[1]: sqlite_pages.affinity(str(r[2] or "")) for r in info}
                known = {n: _AFFINITY[k] for n, k in kinds.items() if k in _AFFINITY}
                self._declared[table] = known
            return self._declared[table]

    def close(self) -> None:
        self._db.close()


class _Damage:
    """What `_page_batches` yields when the page reader found a damaged page."""


_DAMAGED = _Damage()


def _wal_mode(path: Path) -> bool:
    """The database is in write-ahead-log mode (file format bytes 18-19 are 2)."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return False
    return len(head) == 20 and 2 in (head[18], head[19])


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _has_wal(path: Path) -> bool:
    try:
        return Path(f"{path}-wal").stat().st_size > 0
    except OSError:
        return False


def _names(columns: list[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def _range_sql(table: str, columns: list[str], lo: int, hi: int) -> str:
    return f'SELECT {_names(columns)} FROM "{table}" WHERE rowid >= {int(lo)} AND rowid < {int(hi)}'


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _plain(table: pa.Table) -> pa.Table:
    """Drop large_string and the like so downstream code sees the usual types."""
    fields = []
    for f in table.schema:
        t = f.type
        if pa.types.is_large_string(t):
            t = pa.string()
        fields.append(pa.field(f.name, t))
    return table.cast(pa.schema(fields)) if fields != list(table.schema) else table


def _table_of(
    rows: Sequence[tuple[object, ...]], columns: list[str], types: dict[str, pa.DataType]
) -> pa.Table:
    """Rows fetched through sqlite3 as columns; one without a value gets its declared type."""
    data = list(zip(*rows)) if rows else [()] * len(columns)
    arrays = []
    for name, col in zip(columns, data):
        arr = _py_array(col)
        if pa.types.is_null(arr.type) and name in types:
            arr = pa.nulls(len(arr), types[name])
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, names=columns)


def _py_array(values: tuple[object, ...]) -> pa.Array:
    """A column of sqlite3's values as `pa.array` infers it (null, int64, double, string),
    the common kinds built on buffers: `pa.array` imports pandas when it is installed (a
    third of a second on a first open; model/arrays.py)."""
    kinds = {type(v) for v in values} - {type(None)}
    if not kinds:
        return pa.nulls(len(values))
    if kinds <= {int, float} and (kinds == {int} or not any(_past_double(v) for v in values)):
        null = np.fromiter((v is None for v in values), bool, len(values))
        dtype = np.int64 if kinds == {int} else np.float64
        with contextlib.suppress(OverflowError):
            numbers = np.array([0 if v is None else v for v in values], dtype)
            return from_numpy(numbers, null if null.any() else None)
    if kinds == {str}:
        return from_strings(values)  # type: ignore[arg-type]
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        # mixed types in one SQLite column (it is dynamically typed): keep text
        return pa.array([None if v is None else str(v) for v in values], pa.string())


def _past_double(v: object) -> bool:
    """An int that a double cannot hold exactly (`pa.array` then refuses the mix)."""
    return type(v) is int and abs(v) > 2**53


class DirSource:
    """A parquetdir or arrowdir export: one `<TABLE>.parquet` / `<TABLE>.arrow` per table."""

    def __init__(self, path: Path, suffix: str) -> None:
        self.path = path
        self.suffix = suffix
        self._files = {p.stem: p for p in path.iterdir() if p.suffix == suffix and p.is_file()}
        self._schemas: dict[str, pa.Schema] = {}

    def tables(self) -> set[str]:
        return set(self._files)

    def _schema(self, table: str) -> pa.Schema:
        if table not in self._schemas:
            self._schemas[table] = self._read_schema(table)
        return self._schemas[table]

    def _read_schema(self, table: str) -> pa.Schema:
        # the schema alone: `Schema.empty_table` would import pandas (~0.3 s) when installed
        path = self._files[table]
        with _arrow_file(path):
            if self.suffix == ".parquet":
                import pyarrow.parquet as pq

                schema = pq.read_schema(path)
            else:
                with pa.memory_map(str(path)) as source:
                    schema = ipc.open_stream(source).schema
            _ = schema.names
            return schema

    def columns(self, table: str) -> list[str]:
        return list(self._schema(table).names)

    def read(self, table: str, columns: list[str]) -> pa.Table:
        return _plain(self._open(table, columns))

    def read_batches(self, table: str, columns: list[str], rows: int) -> Iterator[pa.Table]:
        t = self.read(table, columns)
        for start in range(0, t.num_rows, rows):
            yield t.slice(start, rows)

    def row_bound(self, table: str) -> int:
        path = self._files[table]
        with _arrow_file(path):
            if self.suffix == ".parquet":
                import pyarrow.parquet as pq

                return int(pq.read_metadata(path).num_rows)
            return int(ipc.open_stream(pa.memory_map(str(path))).read_all().num_rows)

    def _open(self, table: str, columns: list[str]) -> pa.Table:
        path = self._files[table]
        with _arrow_file(path):
            if self.suffix == ".parquet":
                import pyarrow.parquet as pq

                # (`read_table` goes through pyarrow.dataset, which imports pandas)
                with pq.ParquetFile(path) as f:
                    t = f.read(columns=columns)
            else:
                # no context manager: the returned buffers still point into the map
                t = ipc.open_stream(pa.memory_map(str(path))).read_all().select(columns)
            # neither reader checks offsets against their buffers, nor text and names for
            # UTF-8 (names are decoded when first asked for): a damaged file would fail
            # later, anywhere
            t.validate(full=True)
            _ = t.column_names
            return t

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _arrow_file(path: Path) -> Iterator[None]:
    """A table file of a directory export that Arrow cannot read, as one line (names in
    its metadata that are not UTF-8 too: pyarrow decodes them strictly)."""
    try:
        yield
    except (OSError, pa.ArrowException, UnicodeDecodeError) as e:
        raise BadReportError(f"{path}: cannot read ({_one_line(e)})") from e
