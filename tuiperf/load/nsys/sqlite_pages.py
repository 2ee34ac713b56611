"""Read the rows of a SQLite rowid table straight from its B-tree pages, with numpy.

SQLite hands out one value at a time; every reader built on it pays a call or a
conversion per cell, several times what SQLite needs to scan the table (bench/notes.md).
An nsys export is written once and its big tables hold small integers only, so their
records can be decoded column by column over thousands of rows at once:

- the leaf pages of the table's B-tree, in key order (the interior pages are few);
- per leaf cell: payload size and rowid (varints), then the record header's serial
  types (one byte each, copied at once, in the usual record; varints otherwise), which
  give each value's width and so its offset;
- each wanted column: one gather of 8 big-endian bytes per row at those offsets,
  shifted down to the value's width (sign-extending), or the text bytes it spans.

Layout facts are from the SQLite file-format document (https://sqlite.org/fileformat.html).
Content this reader does not decode (rows on overflow pages, blobs, a value of the wrong
type for its column) raises `Unsupported` for its run of pages, which `batches` reports as
`Skipped`: SQLite reads those rows. A page whose structure is wrong raises `Damaged`, and
SQLite reads the rest of the table, meeting the damage as its own scan would. Every
position is bounds-checked by numpy's indexing, rowids must rise, and every record must
fill its payload exactly: this reader gives up on a damaged page, it does not guess.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from numpy.lib.stride_tricks import sliding_window_view

from tuiperf.model.arrays import from_numpy

_MAGIC = b"SQLite format 3\x00"
#: page runs decoded at once (two beat one on 2 cores, for one run more in flight: see
#: bench/notes.md)
_WORKERS = min(2, os.cpu_count() or 1)
#: SQLite's own limit on B-tree depth (BTCURSOR_MAX_DEPTH)
_MAX_DEPTH = 20
_LEAF, _INTERIOR = 0x0D, 0x05

#: value width in bytes of serial types 0-11 (10, 11 are reserved: rejected)
_WIDTH = np.zeros(128, np.int64)
_WIDTH[1:8] = [1, 2, 3, 4, 6, 8, 8]
_WIDTH[12:] = (np.arange(12, 128) - 12) // 2  # blob (even) and text (odd) lengths
#: right shift that brings an 8-byte big-endian word down to the value's width
_SHIFT = np.zeros(128, np.int64)
_SHIFT[1:7] = [56, 48, 40, 32, 16, 0]


class Unsupported(Exception):
    """A table, page or record this reader does not decode; SQLite reads it instead."""


class Damaged(Unsupported):
    """A page whose structure is wrong: SQLite reads the rest of the table, from the
    last row returned, so that it meets the damage (and reports it) as a scan would."""


@dataclass(frozen=True)
class Column:
    """One column to read: its place in the record and how its values decode."""

    name: str
    index: int  # position in the record (the declared column order)
    kind: str  # "int", "float", "text" or "rowid" (an INTEGER PRIMARY KEY)


@dataclass(frozen=True)
class TableLayout:
    root: int  # root page of the table's B-tree
    ncols: int  # declared columns, so the most a record may hold


def affinity(declared: str) -> str:
    """SQLite's column affinity of a declared type (the rules of section 3.1 of datatype3)."""
    t = declared.upper()
    if "INT" in t:
        return "int"
    if any(k in t for k in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in t or not t:
        return "blob"
    if any(k in t for k in ("REAL", "FLOA", "DOUB")):
        return "float"
    return "numeric"


def without_rowid(sql: str) -> bool:
    """`sql` creates a table keyed by its primary key, with no rowid B-tree."""
    return re.search(r"\bWITHOUT\s+ROWID\b", sql, re.IGNORECASE) is not None


def layout_of(
    db: sqlite3.Connection, table: str, names: list[str]
) -> tuple[TableLayout, list[Column]]:
    """Where `table` lives and how to decode its columns `names` (Unsupported if it is
    not a plain rowid table of integers, reals and text)."""
    row = db.execute(
        "SELECT rootpage, sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    if row is None or not row[0] or not row[1]:
        raise Unsupported(f"{table}: not a stored table")
    root, sql = int(row[0]), str(row[1])
    if without_rowid(sql):
        raise Unsupported(f"{table}: WITHOUT ROWID")
    info = db.execute(f'PRAGMA table_xinfo("{table}")').fetchall()
    # cid, name, type, notnull, dflt_value, pk, hidden
    if any(r[6] for r in info):
        raise Unsupported(f"{table}: generated or hidden columns")
    keys = [r for r in info if r[5]]
    alias = keys[0][1] if len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER" else None
    if alias is not None and re.search(r"PRIMARY\s+KEY\s+DESC", sql, re.IGNORECASE):
        alias = None  # the one INTEGER PRIMARY KEY that is not the rowid
    place = {r[1]: i for i, r in enumerate(info)}
    cols = []
    for name in names:
        if name not in place:
            raise Unsupported(f"{table}: no column {name}")
        r = info[place[name]]
        if r[4] is not None:
            raise Unsupported(f"{table}.{name}: a default value")
        kind = "rowid" if name == alias else affinity(str(r[2] or ""))
        if kind not in ("int", "float", "text", "rowid"):
            raise Unsupported(f"{table}.{name}: {kind} affinity")
        cols.append(Column(name, place[name], kind))
    return TableLayout(root, len(info)), cols


class PageFile:
    """The pages of a SQLite file, read into buffers (a file that shrinks gives a short
    read, not the SIGBUS a memory map would)."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by close())
        try:
            head = self._file.read(100)
            if len(head) < 100 or head[:16] != _MAGIC:
                raise Unsupported("not a SQLite 3 file")
            size = int.from_bytes(head[16:18], "big")
            self.page_size = 65536 if size == 1 else size
            if self.page_size < 512 or self.page_size & (self.page_size - 1):
                raise Unsupported(f"page size {self.page_size}")
            self.usable = self.page_size - head[20]
            self.utf8 = int.from_bytes(head[56:60], "big") in (0, 1)
            self.pages = os.fstat(self._file.fileno()).st_size // self.page_size
            self._kept = threading.local()
            self._lock = threading.Lock()
        except BaseException:
            self._file.close()
            raise

    def page(self, number: int) -> np.ndarray:
        return self.read([number], np.zeros(self.page_size + 8, np.uint8))

    def read(self, numbers: list[int], out: np.ndarray | None = None, pad: int = 8) -> np.ndarray:
        """Pages `numbers` one after another, then `pad` zero bytes, in `out` or in a
        buffer this file keeps for the next call (new memory costs a fault per 4 KiB)."""
        ps = self.page_size
        need = len(numbers) * ps + pad
        if out is None:
            kept = getattr(self._kept, "buffer", None)
            if kept is None or len(kept) < need:
                kept = self._kept.buffer = np.zeros(need, np.uint8)
            out = kept[:need]
        out[-pad:] = 0
        view = memoryview(out)  # type: ignore[arg-type]
        i = 0
        while i < len(numbers):
            j = i + 1  # one read for each run of consecutive pages
            while j < len(numbers) and numbers[j] == numbers[j - 1] + 1:
                j += 1
            first = numbers[i]
            if first < 1 or numbers[j - 1] > self.pages:
                raise Damaged(f"page {first} beyond the file")
            self._read_into(view[i * ps : j * ps], (first - 1) * ps)
            i = j
        return out

    def _read_into(self, view: memoryview, offset: int) -> None:
        with self._lock:  # one file position, shared by the decoding threads
            self._file.seek(offset)
            done = 0
            while done < len(view):
                got = self._file.readinto(view[done:])
                if not got:
                    raise Damaged("the file ends before its pages")
                done += got

    def close(self) -> None:
        self._file.close()


def leaf_pages(pf: PageFile, root: int) -> list[int]:
    """The leaf pages of the table B-tree at `root`, left to right.

    A B-tree's leaves are all at one depth: the tree is read level by level, and only
    interior pages are read (the leaves are checked when they are decoded).
    """
    level = [root]
    for _ in range(_MAX_DEPTH):
        first = pf.page(level[0])
        if int(first[100 if level[0] == 1 else 0]) == _LEAF:
            return level
        below: list[int] = []
        for number in level:
            below.extend(_children(pf, number))
            if len(below) > pf.pages:
                raise Damaged("B-tree loops")
        level = below
    raise Damaged("B-tree deeper than SQLite makes them (a loop)")


def _children(pf: PageFile, number: int) -> list[int]:
    page = pf.page(number)
    at = 100 if number == 1 else 0
    if int(page[at]) != _INTERIOR:
        raise Damaged(f"page {number} is not an interior table B-tree page")
    n = (int(page[at + 3]) << 8) | int(page[at + 4])
    ptrs = page[at + 12 : at + 12 + 2 * n].astype(np.int64)
    if len(ptrs) != 2 * n:
        raise Damaged("cell pointers beyond the page")
    kids = _be32(page, (ptrs[0::2] << 8) | ptrs[1::2]).tolist()
    kids.append(int(_be32(page, np.array([at + 8]))[0]))  # the right-most child
    return kids


def _be32(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    b = buf[at[:, None] + np.arange(4)].astype(np.int64)
    return (b[:, 0] << 24) | (b[:, 1] << 16) | (b[:, 2] << 8) | b[:, 3]


def varints(buf: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The SQLite varints starting at positions `at`: (values, lengths in bytes).

    Whole-vector steps, one per byte of the longest varint (`buf` must extend 8 bytes
    past the last position): the varints of a page run have near the same length.
    """
    b = buf[at]
    value = (b & 0x7F).astype(np.int64)
    length = np.ones(len(at), np.int64)
    going = b >= 0x80
    for k in range(1, 9):
        if not going.any():
            break
        b = buf[at + k]
        step = (value << 8) | b if k == 8 else (value << 7) | (b & 0x7F)
        np.copyto(value, step, where=going)
        length += going
        going &= b >= 0x80
    return value, length


@dataclass(frozen=True)
class Skipped:
    """Leaf pages this reader gave up on, up to the rows it returns next (`before`: the
    first rowid after them, None at the end of the table): SQLite reads those rows."""

    before: int | None


def batches(
    pf: PageFile, layout: TableLayout, columns: list[Column], rows: int
) -> Iterator[tuple[np.ndarray, pa.Table] | Skipped]:
    """(rowids, table of `columns`) for runs of leaf pages holding about `rows` rows, in
    rowid order, with a `Skipped` in place of the runs it does not decode.

    What is skipped is bounded by the rows around it, not by rowids read from the pages
    given up on: whatever they hold, reading the rowids between through SQLite misses
    and repeats nothing.
    """
    try:
        leaves = leaf_pages(pf, layout.root)
    except IndexError as e:  # a position that points outside a page
        raise Damaged("damaged interior page") from e
    if not leaves:
        return
    first = pf.page(leaves[0])
    per_page = max(1, (int(first[3]) << 8) | int(first[4]))
    step = max(1, rows // per_page)
    last = None
    skipped = False
    for decoded in _decoded_runs(
        pf, [leaves[i : i + step] for i in range(0, len(leaves), step)], layout, columns
    ):
        if decoded is None:
            skipped = True
            continue
        rowids, table = decoded
        if not len(rowids):
            continue
        if last is not None and rowids[0] <= last:
            raise Damaged("rowids out of order")
        if skipped:
            yield Skipped(int(rowids[0]))
            skipped = False
        last = int(rowids[-1])
        yield rowids, table
    if skipped:
        yield Skipped(None)


def _decoded_runs(
    pf: PageFile, runs: list[list[int]], layout: TableLayout, columns: list[Column]
) -> Iterator[tuple[np.ndarray, pa.Table] | None]:
    """`decode` of each run in order (None where it gives up), two at a time: numpy
    releases the GIL in its loops, so the two halves of a 2-core machine both work."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor
    from itertools import islice

    def attempt(pages: list[int]) -> tuple[np.ndarray, pa.Table] | None:
        try:
            return decode(pf, pages, layout, columns)
        except Damaged:
            raise
        except Unsupported:
            return None
        except (IndexError, ValueError) as e:  # numpy's bounds checks on positions from garbage
            raise Damaged(f"damaged leaf page ({type(e).__name__})") from e

    if len(runs) < 2 or _WORKERS < 2:
        yield from map(attempt, runs)
        return
    todo = iter(runs)
    with ThreadPoolExecutor(_WORKERS, thread_name_prefix="tuiperf-pages") as pool:
        pending = deque(pool.submit(attempt, r) for r in islice(todo, _WORKERS))
        while pending:
            result = pending.popleft().result()
            more = next(todo, None)
            if more is not None:
                pending.append(pool.submit(attempt, more))
            yield result


def decode(
    pf: PageFile, pages: list[int], layout: TableLayout, columns: list[Column]
) -> tuple[np.ndarray, pa.Table]:
    """The rows on leaf `pages`, in order, as Arrow columns."""
    buf = pf.read(pages, pad=layout.ncols + 8)
    cell, end = _cells(pf, buf, len(pages))
    if not len(cell):
        if pages != [layout.root]:
            raise Damaged("a leaf page with no cells")  # only a root may be empty
        return np.zeros(0, np.int64), _empty(columns)
    size, n1 = varints(buf, cell)
    rowid, n2 = varints(buf, cell + n1)
    rec = cell + n1 + n2
    if bool(np.any(size > pf.usable - 35)):
        raise Unsupported("a row spills to overflow pages")
    if bool(np.any(rec + size > end)):
        raise Damaged("cell beyond its page")
    if len(rowid) > 1 and not bool(np.all(rowid[1:] > rowid[:-1])):
        raise Damaged("rowids out of order")
    head, head_bytes = varints(buf, rec)  # the header's size, counting its own varint
    if bool(np.any((head < head_bytes) | (head > size))):
        raise Damaged("record header larger than its record")
    kinds = _serial_types(buf, rec, head, head_bytes, layout.ncols)
    lo, hi = kinds.min(axis=1), kinds.max(axis=1)
    if int(lo.min(initial=0)) < 0:
        raise Damaged("negative serial type")
    if int(hi.max(initial=0)) > 2 * pf.usable + 13:  # a value longer than any record here
        raise Damaged("serial type larger than its page")
    wanted = {c.index: c for c in columns}
    arrays: dict[str, pa.Array] = {}
    offset = rec + head  # where column j's value starts, less `fixed`
    fixed = 0  # widths of the columns so far whose values all have one serial type
    for j in range(layout.ncols):
        kind = kinds[j]
        same = lo[j] == hi[j]
        types = lo[j : j + 1] if same else np.flatnonzero(np.bincount(kind))
        if 10 in types or 11 in types:
            raise Damaged("reserved serial type")
        if j in wanted:
            at = offset + fixed
            col = wanted[j]
            arrays[col.name] = _values(buf, at, kind, types, rowid, col, pf.utf8, rec + size)
        if same:
            fixed += _width(int(types[0]))
        else:
            offset = offset + _widths(kind)
    if bool(np.any(offset + fixed != rec + size)):
        raise Damaged("record does not fill its payload")
    return rowid, pa.table({c.name: arrays[c.name] for c in columns})


_ARROW_TYPES = {"int": pa.int64(), "rowid": pa.int64(), "float": pa.float64(), "text": pa.string()}


def _empty(columns: list[Column]) -> pa.Table:
    return pa.table({c.name: pa.nulls(0, _ARROW_TYPES[c.kind]) for c in columns})


def _width(kind: int) -> int:
    return (kind - 12) // 2 if kind >= 12 else int(_WIDTH[kind])


def _widths(kind: np.ndarray) -> np.ndarray:
    if kind.dtype == np.uint8:  # every serial type below 128
        return _WIDTH[kind]
    return np.where(kind >= 12, (kind - 12) // 2, _WIDTH[np.minimum(kind, 12)])


def _serial_types(
    buf: np.ndarray, rec: np.ndarray, head: np.ndarray, head_bytes: np.ndarray, ncols: int
) -> np.ndarray:
    """(ncols, rows): each value's serial type, a column per row; 0 (NULL) past a
    record's end (one written before an ALTER TABLE ADD COLUMN is short).

    The usual record has one byte per serial type (numbers, text under 57 bytes): the
    header bytes are the serial types, copied at once. Otherwise they are varints,
    decoded column by column.
    """
    count = head - 1  # serial types in each record, if each is one byte
    if bool(np.all(head_bytes == 1)) and bool(np.all(count <= ncols)):
        kinds = sliding_window_view(buf, ncols)[rec + 1]  # each record's header bytes
        if not bool(np.all(count == ncols)):
            kinds = np.where(np.arange(ncols) < count[:, None], kinds, 0).astype(np.uint8)
        kinds = np.ascontiguousarray(kinds.T)
        if int(kinds.max(initial=0)) < 0x80:
            return kinds
    return _serial_type_varints(buf, rec + head_bytes, rec + head, ncols)


def _serial_type_varints(
    buf: np.ndarray, at: np.ndarray, end: np.ndarray, ncols: int
) -> np.ndarray:
    kinds = np.zeros((ncols, len(at)), np.int64)
    for j in range(ncols):
        here = at < end
        if not bool(here.any()):
            break
        kind, length = varints(buf, at)
        kinds[j] = np.where(here, kind, 0)
        at = np.where(here, at + length, at)
    if bool(np.any(at != end)):
        raise Damaged("record header does not match its columns")
    return kinds


def _cells(pf: PageFile, buf: np.ndarray, npages: int) -> tuple[np.ndarray, np.ndarray]:
    """Buffer positions of every cell on the leaf pages in `buf`, in key order, and of
    the end of each one's page."""
    ps = pf.page_size
    base = np.arange(npages, dtype=np.int64) * ps
    if bool(np.any(buf[base] != _LEAF)):
        raise Damaged("page is not a table leaf")
    n = (buf[base + 3].astype(np.int64) << 8) | buf[base + 4]
    if npages > 1 and not bool(n.all()):
        raise Damaged("a leaf page with no cells")  # only a root may be empty
    total = int(n.sum())
    page_of = np.repeat(np.arange(npages), n)
    slot = np.arange(total) - np.repeat(np.cumsum(n) - n, n)
    at = base[page_of] + 8 + 2 * slot
    ptr = (buf[at].astype(np.int64) << 8) | buf[at + 1]
    if bool(np.any((ptr < 8 + 2 * n[page_of]) | (ptr >= pf.usable))):
        raise Damaged("cell pointer outside its page")
    start = base[page_of]
    return start + ptr, start + pf.usable


def _values(
    buf: np.ndarray,
    at: np.ndarray,
    kind: np.ndarray,
    types: np.ndarray,
    rowid: np.ndarray,
    col: Column,
    utf8: bool,
    stop: np.ndarray,
) -> pa.Array:
    """Column `col` of the records whose value is at `at` and has serial type `kind`
    (`types`: the distinct kinds, sorted)."""
    if col.kind == "rowid":  # an INTEGER PRIMARY KEY is the rowid, stored as NULL
        return from_numpy(rowid)  # (`pa.array` imports pandas: model/arrays.py)
    null = kind == 0 if types[0] == 0 else None
    if col.kind == "text":
        if not utf8 or bool(np.any((types != 0) & ((types < 13) | (types % 2 == 0)))):
            raise Unsupported(f"{col.name}: not all text")
        if bool(np.any(at + (kind.astype(np.int64) - 13) // 2 > stop)):
            raise Damaged(f"{col.name}: text beyond its record")
        return _text(buf, at, kind, null)
    if types[-1] >= 12:
        raise Unsupported(f"{col.name}: text or blob in a numeric column")
    if col.kind == "int" and 7 in types:
        raise Unsupported(f"{col.name}: a REAL in an INTEGER column")
    values = _numbers(buf, at, kind, types, col.kind == "float")
    if null is not None:
        values[null] = 0
        return from_numpy(values, null)
    return from_numpy(values)


def _numbers(
    buf: np.ndarray, at: np.ndarray, kind: np.ndarray, types: np.ndarray, real: bool
) -> np.ndarray:
    """int64 (float64 if `real`) values of serial types 0-9 at `at`."""
    ints_of = [int(t) for t in types if 1 <= t <= 6]
    if 7 in types or (ints_of and max(ints_of) > 1):
        raw = _words(buf)[at].byteswap()  # 8 big-endian bytes from each value's start
        single = len(types) == 1 and bool(ints_of)  # every row one integer width: one shift
        ints = raw >> (_SHIFT[ints_of[0]] if single else _SHIFT[kind])
    elif ints_of:  # 8-bit values (and constants, NULLs): one byte each
        raw = None
        ints = buf[at].view(np.int8).astype(np.int64)
    else:
        raw = None
        ints = np.zeros(len(at), np.int64)
    if 8 in types or 9 in types:  # the constants 0 and 1 have no bytes
        ints = np.where(kind >= 8, kind.astype(np.int64) - 8, ints)
    if not real:
        return ints
    values = ints.astype(np.float64)  # REAL affinity keeps integral values as integers
    if raw is not None and 7 in types:
        isfloat = kind == 7
        values[isfloat] = raw[isfloat].view(np.float64)
    return values


def _words(buf: np.ndarray) -> np.ndarray:
    """Every 8-byte little-endian word of `buf`, one starting at each byte (a view)."""
    return np.ndarray(shape=(len(buf) - 7,), dtype="<i8", buffer=buf, offset=0, strides=(1,))


def _text(buf: np.ndarray, at: np.ndarray, kind: np.ndarray, null: np.ndarray | None) -> pa.Array:
    """Strings of `lengths` bytes at `at`, gathered by Arrow, not byte by byte in numpy.

    The spans do not overlap, so in address order they and the gaps between them are the
    elements of one binary array over `buf`; taking every other element, in row order,
    copies each string once.
    """
    n = len(at)
    lengths = (kind.astype(np.int64) - 13) // 2
    if null is not None:
        lengths[null] = 0
    order = np.argsort((at << 1) | (lengths > 0), kind="stable")  # empty ones first
    starts = at[order]
    bounds = np.empty(2 * n + 1, np.int64)
    bounds[0:-1:2] = starts
    bounds[1::2] = starts + lengths[order]
    bounds[-1] = bounds[-2]
    if n and (bounds[0] < 0 or bool(np.any(bounds[1:] < bounds[:-1]))):
        raise Damaged("text values overlap")
    spans = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), 2 * n, [None, pa.py_buffer(bounds), pa.py_buffer(buf)]
    )
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    try:
        text = spans.take(from_numpy(2 * rank)).cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowCapacityError) as e:
        raise Unsupported("text that is not UTF-8") from e
    if null is None:
        return text
    offsets, data = text.buffers()[1:]
    return pa.StringArray.from_buffers(
        n, offsets, data, from_numpy(~null).buffers()[1], int(null.sum())
    )
