"""The in-memory trace: canonical Arrow tables plus what we know about the capture."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from tuiperf import schema
from tuiperf.model import scratch, stored_columns


@dataclass
class TraceMeta:
    """Facts about a report that are not events."""

    source: str
    format: str
    tool: str = ""
    tool_version: str = ""
    export_schema: str = ""
    duration_ns: int | None = None
    capture: list[str] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    source_tables: list[str] = field(default_factory=list)
    cache_path: str | None = None
    from_cache: bool = False
    #: tables whose detail columns (schema.DETAIL_COLUMNS) are converted on first use
    deferred: list[str] = field(default_factory=list)
    #: a step's wall time with nothing recording, timed by tuiperf.torch.profile_steps
    #: before the recorded steps (ns; None when the report does not say)
    untraced_step_ns: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TraceMeta:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class Trace:
    """Canonical tables (see `tuiperf.schema`) and their metadata."""

    tables: dict[str, pa.Table]
    meta: TraceMeta
    #: where derived results (summaries) can be kept: a load.cache.Cache and its key
    cache: Any = None
    cache_key: Any = None
    #: name -> loader of that table's detail columns, converted on first use
    pending: dict[str, Callable[[], pa.Table]] = field(default_factory=dict)
    #: told when a table's detail columns start (True) and stop (False) converting, from
    #: the thread that converts them (the viewer says so in its header)
    on_details: Callable[[str, bool], None] | None = None
    #: held while detail columns convert (which may wait on the viewer's thread: on_details)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: held while a table is replaced (columns widened, details joined): never while
    #: waiting on anything else, so a widening never waits behind a detail conversion
    _swap: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def table(self, name: str, columns: list[str] | None = None) -> pa.Table:
        """The canonical table `name` (an empty one when the report lacks it).

        With `columns`, only those; detail columns not converted yet are converted
        now (once), unless every requested column is already there. Columns a cache entry
        stores narrow (model.stored_columns) come back in their canonical types.
        """
        t = self.tables.get(name)
        if t is None:
            return schema.empty(name) if columns is None else schema.empty(name).select(columns)
        pending = name in self.pending
        if pending and (columns is None or not set(columns) <= stored_columns.provides(name, t)):
            t = self._complete(name)
        elif columns is not None and not set(columns) <= stored_columns.provides(name, t):
            t = self.tables[name]  # its details joined by another thread meanwhile
        if stored_columns.to_restore(name, t, columns):
            t = self._restore(name, columns)
        return t if columns is None else t.select(columns)

    def held(self, name: str) -> pa.Table:
        """Table `name` with its detail columns, every column as the trace holds it:
        perhaps narrower than canonical and without `duration` (model/stored_columns.py).
        For readers that cast as they scan (DuckDB)."""
        if name not in self.tables:
            return schema.empty(name)
        return self._complete(name) if name in self.pending else self.tables[name]

    def stored(self, name: str, columns: list[str]) -> pa.Table:
        """Columns `columns` of table `name` as the trace holds them: perhaps narrower than
        canonical (a cache entry's, model/stored_columns.py; the same values), neither
        widened nor kept widened. For readers that take any integer width (the lane split,
        names by their codes); a column not held as such comes through `table`."""
        t = self.tables.get(name)
        if t is None or not set(columns) <= set(t.column_names):
            return self.table(name, columns)
        return t.select(columns)

    def _restore(self, name: str, columns: list[str] | None) -> pa.Table:
        """Table `name` with `columns` canonical from now on (widened once, kept)."""
        with self._swap:
            t = self.tables[name]
            todo = stored_columns.to_restore(name, t, columns)
            if todo:
                # a big table: its own bytes (mapped) and the widened columns' together
                alloc = scratch.allocator(self, t.nbytes + t.num_rows * 8 * len(todo))
                into = None if alloc is np.empty else alloc  # a big table's: scratch files
                t = self.tables[name] = stored_columns.restored(name, t, todo, into)
            return t

    def _complete(self, name: str) -> pa.Table:
        with self._lock:
            loader = self.pending.get(name)
            if loader is not None:
                details = self._load_details(name, loader)
                with self._swap:
                    core = self.tables[name]
                    if details.num_rows != core.num_rows:
                        raise ValueError(f"{name}: detail rows do not match the table")
                    # the core's narrow columns stay as stored (widened when used)
                    self.tables[name] = stored_columns.merged(name, core, details)
                    del self.pending[name]
            return self.tables[name]

    def _load_details(self, name: str, loader: Callable[[], pa.Table]) -> pa.Table:
        tell = self.on_details
        if tell is not None:
            tell(name, True)
        try:
            return loader()
        finally:
            if tell is not None:
                tell(name, False)

    def rows_of(self, name: str, rows: np.ndarray) -> pa.Table:
        """Rows `rows` (ascending) of table `name` with their detail columns; detail columns
        not converted yet are read for these rows alone when the loader can (a cache entry
        holds them), else converted for the whole table."""
        loader = self.pending.get(name)
        part = getattr(loader, "rows", None)
        details = part(rows) if part is not None else None
        if details is not None and details.num_rows == len(rows):
            core = self.tables[name].take(pa.array(rows))
            core = stored_columns.restored(name, core, stored_columns.to_restore(name, core, None))
            return schema.merge_details(name, core, details)
        return self.table(name).take(pa.array(rows))

    def complete_all(self) -> None:
        """Convert every deferred detail column now (e.g. before writing the tables out)."""
        for name in list(self.pending):
            self._complete(name)

    def has(self, name: str) -> bool:
        t = self.tables.get(name)
        return t is not None and t.num_rows > 0

    def counts(self) -> dict[str, int]:
        return {
            n: (t.num_rows if (t := self.tables.get(n)) is not None else 0) for n in schema.TABLES
        }

    def time_range(self) -> tuple[int, int] | None:
        """(first start, last end) over all timed events, in ns."""
        import pyarrow.compute as pc

        lo: int | None = None
        hi: int | None = None
        for name in schema.EVENT_TABLES:
            t = self.table(name, ["start", "end"])
            if t.num_rows == 0:
                continue
            mm = pc.min_max(t["start"]).as_py()
            end = pc.max(t["end"]).as_py()
            if mm["min"] is not None:
                lo = mm["min"] if lo is None else min(lo, mm["min"])
            if end is not None:
                hi = end if hi is None else max(hi, end)
        if lo is None or hi is None:
            return None
        return lo, hi
