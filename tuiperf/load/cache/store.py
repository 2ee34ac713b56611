"""The conversion cache: canonical tables as Arrow IPC files, memory-mapped (a table up to
64 MiB is LZ4-compressed and read whole instead; detail columns are ZSTD-compressed).

Layout: `<root>/<stem>-<path hash>-<identity hash>/` holding `manifest.json`
(written last), one `<table>.arrow` per table and `last-used` (its mtime is the entry's last
use; a process using the entry holds a shared lock on it, see usage.py); `derived/` holds
results computed from them (per-name summaries). With a size cap, a conversion that adds
to the cache then removes the least recently used entries (entries.evict). An entry is
keyed by the source's resolved path, size and mtime, the loader and the schema version.
Entries are built in a temporary folder and renamed into place, so a reader never sees a
half-written one; a damaged entry is removed and rebuilt.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from tuiperf import schema, settings
from tuiperf.errors import CacheError
from tuiperf.load import spill
from tuiperf.load.cache import entries, narrow, usage
from tuiperf.load.cache.file_sink import FileSink
from tuiperf.load.cache.key import MANIFEST, SCHEMA_VERSION, CacheKey, default_root
from tuiperf.model import scratch as scratch_rule


def read_ipc(path: Path) -> pa.Table:
    """Memory-map an Arrow IPC file (reads no data until a column is used; a compressed
    file's columns are decompressed here, whole)."""
    return ipc.open_file(pa.memory_map(str(path))).read_all()


#: rows per record batch of a compressed file: the writer holds a compression buffer as big
#: as a batch's columns, so one batch per table would add the table's size to the peak
_COMPRESSED_BATCH_ROWS = 1 << 20
#: a compressed table up to this size is one batch all the same (one array a column when
#: read back, as from an uncompressed file)
_ONE_BATCH_BYTES = 64 << 20


def write_ipc(
    path: Path,
    table: pa.Table,
    compression: str | None = None,
    keep_chunks: bool = False,
    whole: bool = False,
) -> None:
    """One record batch per table, so a memory-mapped column is one contiguous array; with
    `keep_chunks`, one per chunk of the table as it is (no copy into one buffer: a reader
    that slices by chunk, like the lane index, still reads each chunk without a copy).
    Compressed (read whole, never mapped in place): batches of 1M rows, or (`whole`) one
    batch up to `_ONE_BATCH_BYTES`, so that each column reads back as one array."""
    opts = ipc.IpcWriteOptions(compression=compression)
    if not keep_chunks:
        table = table.combine_chunks()
    one = not compression or (whole and table.nbytes <= _ONE_BATCH_BYTES)
    rows = max(table.num_rows, 1) if one else _COMPRESSED_BATCH_ROWS
    sink = pa.PythonFile(FileSink(path), mode="w")
    with sink, ipc.new_file(sink, table.schema, options=opts) as w:
        if keep_chunks:
            for batch in table.to_batches():
                w.write_batch(batch)
        else:
            w.write_table(table, max_chunksize=rows)


#: how detail columns are stored: compressed (they are read whole and widened on first use,
#: never memory-mapped in place; bench/cache_size.md), when this pyarrow has the codec
DETAILS_CODEC = "zstd" if pa.Codec.is_available("zstd") else None
#: a core table (and a derived one: the lane index, stored summaries) up to this size is
#: stored compressed too, in one batch: read whole on open instead of mapped in place, a
#: few ms for these; bigger ones stay mapped (bench/small_tables_lz4.md)
COMPRESS_UP_TO = _ONE_BATCH_BYTES
#: LZ4 for them: entries 0.80-0.90x of the .nsys-rep on real captures for +18 ms on the
#: first screen of a 1.1M-kernel one, where ZSTD gives 0.48-0.51x for +47 ms
CORE_CODEC = "lz4" if pa.Codec.is_available("lz4") else None


def codec_for(table: pa.Table) -> str | None:
    """How a core or derived table is stored: CORE_CODEC up to COMPRESS_UP_TO bytes."""
    return CORE_CODEC if table.nbytes <= COMPRESS_UP_TO else None


def atomic_write_ipc(
    path: Path,
    table: pa.Table,
    keep_chunks: bool = False,
    compression: str | None = None,
    whole: bool = False,
) -> None:
    # a fresh name, created by the writer itself: the file gets the umask's mode like the
    # rest of the entry (mkstemp would make it 0600)
    tmp = path.parent / f".tmp-{os.getpid()}-{secrets.token_hex(8)}.arrow"
    try:
        write_ipc(tmp, table, compression, keep_chunks, whole)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


#: a table up to this size (as built) is narrowed, compressed and written by a background
#: thread while the conversion builds the next one: what a write costs after `nsys export`
#: ends overlaps the rest (bench/entry_overlap.md); at most one such table is in flight,
#: so the peak grows by at most about twice this (the table and its narrowed copy). Bigger
#: tables are stored in line. A failed write is raised at the next `add` or at `finish`.
OVERLAP_UP_TO = 256 << 20


class EntryWriter:
    """Writes the tables of one cache entry into its temporary folder.

    With `split_details` (a source whose detail columns can be read again), a table that
    comes with its detail columns (schema.DETAIL_COLUMNS; `convert` builds every column in
    one pass) is kept as the first open keeps it: the core columns in `<table>.arrow`, the
    detail columns narrow in `<table>.details.arrow` (Cache.store_details), and the table
    listed in the entry's `meta.deferred`, so it is read back the same way either way.

    With `narrow_core` (a timeline's tables, read back through `Trace.table`), each table is
    stored as `narrow.core` makes it: `start`/`end` as they are, `duration` left out where
    it is end - start, every other column narrow (model/stored_columns.py reads them back).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.rows: dict[str, int] = {}
        self.meta: dict[str, Any] = {}
        self.source = ""
        self.split_details = False
        self.narrow_core = False
        self._split: list[str] = []
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None

    def add(self, name: str, table: pa.Table) -> None:
        """Store `table` as `name`: a small one (OVERLAP_UP_TO) by a background thread while
        the caller builds the next (at most one in flight; `finish` waits for it), a big
        one, or any while a conversion spills, here and now."""
        self._settle()
        if table.nbytes > OVERLAP_UP_TO or spill.active():
            self._store(name, table)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="tuiperf-entry")
        self._pending = self._pool.submit(self._store, name, table)

    def finish(self) -> None:
        """Wait for the table in flight; its error (CacheError) is raised here."""
        try:
            self._settle()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def _settle(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _store(self, name: str, table: pa.Table) -> None:
        try:
            # pages of a spilled table that were read since it was built (the launch index
            # reads three API columns) leave the process; the writer reads each page once
            _drop_spilled(table)
            detail = [c for c in schema.DETAIL_COLUMNS.get(name, ()) if self.split_details]
            if detail and set(detail) <= set(table.column_names):
                details = narrow_details(table, detail)
                write_ipc(self.folder / f"{name}.details.arrow", details, DETAILS_CODEC)
                _drop_spilled(table)
                table = table.drop_columns(detail)
                self._split.append(name)
            if self.narrow_core and name in schema.TABLES:
                table = _stored_core(name, table)
            write_ipc(self.folder / f"{name}.arrow", table, codec_for(table), whole=True)
        except OSError as e:
            raise CacheError(
                f"cannot write the cache in {self.folder.parent} ({e.strerror or e}); "
                "free space, pass --cache-dir DIR or --no-cache"
            ) from e
        self.rows[name] = table.num_rows

    def manifest(self) -> dict[str, Any]:
        meta = dict(self.meta)
        if self._split:
            have = list(meta.get("deferred") or [])
            meta["deferred"] = have + [n for n in self._split if n not in have]
        return {
            "schema_version": SCHEMA_VERSION,
            "source": self.source,
            "tables": self.rows,
            "meta": meta,
        }


#: a core table bigger than this as converted (canonical types) is stored as it is, less a
#: `duration` that is end - start (computed on use, into scratch files for a big table:
#: model/scratch.py): used in place (memory-mapped), never widened into the process's own
#: memory. Narrow, a 51.2M-kernel report's viewer widened 7.4 GiB of kernel and API
#: columns into its memory and was killed (bench/big_tables_wide.md). None: an eighth of
#: the machine's memory, at least 1 GiB (3 GiB on the 24 GiB VM: 20.5M kernels' tables
#: stay narrow, 51.2M kernels' go wide; wide, a 20.5M cold first screen took 20 s, not 13)
NARROW_UP_TO: int | None = None


def narrow_up_to() -> int:
    if NARROW_UP_TO is not None:
        return NARROW_UP_TO
    return max(1 << 30, settings.physical_memory() // 8)


def _stored_core(name: str, table: pa.Table) -> pa.Table:
    """Core table `name` as the entry stores it: narrow (narrow.core, a column at a time,
    each original let go once replaced) up to `narrow_up_to()` bytes, else as converted;
    either way without a `duration` that is end - start in every row."""
    wide = table.nbytes > narrow_up_to()
    table = narrow.without_derived(table)
    if wide:
        return table
    for i in narrow.narrowable(table):
        table = narrow.narrow_column(table, i, _drop_spilled)
    return table


def _drop_spilled(table: pa.Table) -> None:
    if spill.active():
        spill.drop_buffers(b for col in table.columns for c in col.chunks for b in c.buffers())


def narrow_details(table: pa.Table, columns: list[str]) -> pa.Table:
    """The detail `columns` of `table` as a details file stores them: each in the
    narrowest type its values fit (Cache.load_details widens them back). Column by
    column, so a spilled table's pages read for one leave before the next is read."""
    out = table.select(columns).combine_chunks()
    for i in range(out.num_columns):
        out = narrow.narrow(out, only=i)
        _drop_spilled(table.select([columns[i]]))
    return out


class Cache:
    """The cache under `root`; `cap`: its size cap in bytes (None: no cap). The entries this
    object opened or wrote stay held (usage.hold) as long as it lives."""

    def __init__(self, root: Path | None = None, cap: int | None = None) -> None:
        self.root = root or default_root()
        self.cap = cap
        self._held: dict[str, IO[bytes] | None] = {}
        weakref.finalize(self, _close_all, self._held)

    def entry(self, key: CacheKey) -> Path:
        return self.root / key.dirname

    def ensure_writable(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.root, prefix=".probe-"):
                pass
        except OSError as e:
            raise CacheError(
                f"cache directory {self.root} is not writable ({e.strerror or e}); "
                "pass --cache-dir DIR or --no-cache"
            ) from e

    def load(self, key: CacheKey) -> tuple[dict[str, pa.Table], dict[str, Any]] | None:
        """The tables of a complete entry, memory-mapped; None if absent or damaged. The
        entry is held (no eviction removes it) from before its manifest is read."""
        d = self.entry(key)
        self._hold(d)
        try:
            manifest = json.loads((d / MANIFEST).read_text())
            if manifest.get("schema_version") != SCHEMA_VERSION:
                raise ValueError("schema version")
            tables = {}
            for name, rows in manifest["tables"].items():
                t = read_ipc(d / f"{name}.arrow")
                if t.num_rows != rows:
                    raise ValueError(f"{name}: row count")
                tables[name] = t
            _sweep_files(d)
            return tables, manifest.get("meta", {})
        except FileNotFoundError:
            _close(self._held.pop(d.name, None))
            if d.exists():  # entries appear whole (rename), so this one was damaged
                shutil.rmtree(d, ignore_errors=True)
            return None
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
            _close(self._held.pop(d.name, None))
            shutil.rmtree(d, ignore_errors=True)  # damaged: rebuild
            return None

    @contextlib.contextmanager
    def writer(
        self, key: CacheKey, split_details: bool = False, narrow_core: bool = False
    ) -> Iterator[EntryWriter]:
        """Add tables one by one; the entry appears (atomically) only if all went well.
        `split_details`, `narrow_core`: see EntryWriter."""
        self.ensure_writable()
        self._sweep_temps()
        tmp = Path(tempfile.mkdtemp(dir=self.root, prefix=f".tmp-{os.getpid()}-"))
        w = EntryWriter(tmp)
        w.source = key.source
        w.split_details = split_details
        w.narrow_core = narrow_core
        held = None
        try:
            try:
                with spill.into(tmp):  # big tables are assembled in files here (load.spill)
                    yield w
            except BaseException:
                with contextlib.suppress(Exception):  # the first error is the one to tell
                    w.finish()
                raise
            w.finish()
            (tmp / MANIFEST).write_text(json.dumps(w.manifest(), indent=1))
            held = usage.hold(tmp)  # the lock goes with the file through the rename
            self._publish(tmp, self.entry(key))
        except BaseException:
            _close(held)
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._adopt(self.entry(key), held)
        self._drop_stale(key)
        self.keep_under_cap()

    def keep_under_cap(self) -> list[entries.Entry]:
        """With a cap, remove least recently used entries until the cache fits (never those
        this object holds, nor those another process holds); the entries removed."""
        if self.cap is None:
            return []
        return entries.evict(self.root, self.cap, keep=self._held)

    def _hold(self, entry: Path) -> None:
        if self._held.get(entry.name) is not None:
            usage.touch(entry)
        elif entry.is_dir():
            self._held[entry.name] = usage.hold(entry)

    def _adopt(self, entry: Path, held: IO[bytes] | None) -> None:
        """Keep `held` (the stamp locked before the entry was published) unless another
        process published the entry first: then hold theirs."""
        try:
            ours = held is not None and os.fstat(held.fileno()).st_ino == (
                usage.stamp(entry).stat().st_ino
            )
        except OSError:
            ours = False
        if not ours:
            _close(held)
            held = usage.hold(entry)
        _close(self._held.get(entry.name))
        self._held[entry.name] = held

    def release(self) -> None:
        """Let go of the entries this object holds (also done when it is collected)."""
        for f in self._held.values():
            _close(f)
        self._held.clear()

    def store(self, key: CacheKey, tables: dict[str, pa.Table], meta: dict[str, Any]) -> Path:
        """Write a whole entry at once (see `writer`)."""
        with self.writer(key) as w:
            for name, t in tables.items():
                w.add(name, t)
            w.meta = meta
        return self.entry(key)

    @staticmethod
    def _publish(tmp: Path, final: Path) -> None:
        try:
            os.rename(tmp, final)
        except OSError:
            if (final / MANIFEST).exists():
                shutil.rmtree(tmp, ignore_errors=True)  # another process won the race
            else:
                shutil.rmtree(final, ignore_errors=True)  # a damaged leftover
                os.rename(tmp, final)

    def _drop_stale(self, key: CacheKey) -> None:
        prefix = f"{key.stem}-{key.path_hash}-"
        for d in self.root.glob(f"{key.stem}-{key.path_hash}-*"):
            if d.name.startswith(prefix) and d.name != key.dirname:
                # even if a process has it open: its report has changed (the tables it
                # maps stay readable; its details would be refused as changed anyway)
                entries.remove(d, in_use_too=True)

    def _sweep_temps(self) -> None:
        """Remove temporary folders of conversions (and of `nsys export`s) whose process
        has gone."""
        for d in [*self.root.glob(".tmp-*-*"), *(self.root / "exports").glob(".tmp-*-*")]:
            try:
                pid = int(d.name.split("-")[1])
            except (IndexError, ValueError):
                continue
            if not _alive(pid):
                shutil.rmtree(d, ignore_errors=True)

    # deferred detail columns --------------------------------------------------
    def details_path(self, key: CacheKey, name: str) -> Path:
        return self.entry(key) / f"{name}.details.arrow"

    def load_details(self, key: CacheKey, name: str, rows: int) -> pa.Table | None:
        p = self.details_path(key, name)
        try:
            t = narrow.read_batches(p)
        except FileNotFoundError:
            return None
        except (OSError, pa.ArrowException):
            with contextlib.suppress(OSError):
                p.unlink()
            return None
        if t.num_rows != rows:
            return None
        # stored narrow (store_details): back in the canonical types, one copy of these
        # columns now that they are used
        try:
            return narrow.widen(t, schema.TABLES[name], self._widen_into(key, t))
        except (pa.ArrowException, KeyError):  # not what store_details writes: convert again
            with contextlib.suppress(OSError):
                p.unlink()
            return None

    def load_details_rows(
        self, key: CacheKey, name: str, rows: int, take: np.ndarray
    ) -> pa.Table | None:
        """The detail columns of rows `take` (ascending) of a table of `rows` rows, read a
        stored batch at a time: the other rows are never widened (None: not stored)."""
        try:
            reader = ipc.open_file(pa.memory_map(str(self.details_path(key, name))))
            parts, off = [], 0
            for i in range(reader.num_record_batches):
                batch = reader.get_batch(i)
                a, b = np.searchsorted(take, [off, off + batch.num_rows])
                if b > a:
                    parts.append(batch.take(pa.array(take[a:b] - off)))
                off += batch.num_rows
            if off != rows:
                return None
            t = pa.Table.from_batches(parts, schema=reader.schema)
            return narrow.widen(t, schema.TABLES[name])
        except (OSError, pa.ArrowException, KeyError):
            return None

    def store_details(self, key: CacheKey, name: str, table: pa.Table) -> None:
        """Keep detail columns; `start` (which only ordered their rows like the core's) is
        not stored: the core has it (bench/cache_size.md: 8 bytes a row, 27 MiB of a 1M-kernel
        entry), and each column is stored in the narrowest integer (or dictionary index) type
        its values fit (load_details widens them back). On failure the columns stay in
        memory for this session and are converted next time."""
        stored = narrow_details(table, [c for c in table.column_names if c != "start"])
        with contextlib.suppress(OSError):
            atomic_write_ipc(self.details_path(key, name), stored, compression=DETAILS_CODEC)
            self.keep_under_cap()

    def _widen_into(self, key: CacheKey, t: pa.Table) -> scratch_rule.Alloc | None:
        """Where a big table's detail columns widen (model/scratch.py's rule, at 8 bytes a
        value): the entry's scratch files, not the process's own memory (3.3 GiB of kernel
        details at 51.2M kernels); None: in memory."""
        if t.num_rows * 8 * t.num_columns <= scratch_rule.scratch_from():
            return None
        return lambda n, dtype: self.scratch(key, n, dtype)

    def scratch(self, key: CacheKey, n: int, dtype: Any) -> np.ndarray:
        """An array of `n` `dtype` in an unlinked file of the entry (spill.zeros), for what
        a reopen computes from a big table (its lanes, model/timeline/lane_cache.py): page
        cache, which the kernel can write back and reclaim, not the process's own memory.
        In memory where no file can be made there."""
        return spill.zeros(n, dtype, self.entry(key))

    # derived results --------------------------------------------------------
    def load_derived(self, key: CacheKey, name: str) -> pa.Table | None:
        p = self.entry(key) / "derived" / f"{name}.arrow"
        try:
            return read_ipc(p)
        except FileNotFoundError:
            return None
        except (OSError, pa.ArrowException):
            with contextlib.suppress(OSError):
                p.unlink()
            return None

    def store_derived(
        self, key: CacheKey, name: str, table: pa.Table, keep_chunks: bool = False
    ) -> None:
        d = self.entry(key) / "derived"
        try:
            d.mkdir(exist_ok=True)
            atomic_write_ipc(d / f"{name}.arrow", table, keep_chunks, codec_for(table), True)
        except OSError:
            pass  # a derived result is an optimisation; never fail because of it


def _sweep_files(entry: Path) -> None:
    """Remove the files of writes into `entry` (details, derived results) that never
    completed: `.tmp-<pid>-…` names whose process has gone (a viewer quits without waiting
    for its background writes, tui/run.py)."""
    for f in [*entry.glob(".tmp-*-*"), *(entry / "derived").glob(".tmp-*-*")]:
        try:
            pid = int(f.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if not _alive(pid):
            with contextlib.suppress(OSError):
                f.unlink()


def _close(f: IO[bytes] | None) -> None:
    if f is not None:
        with contextlib.suppress(OSError):
            f.close()


def _close_all(held: dict[str, IO[bytes] | None]) -> None:
    for f in held.values():
        _close(f)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
