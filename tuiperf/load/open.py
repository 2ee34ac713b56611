"""Open any supported timeline report as a Trace, through the cache."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from tuiperf.errors import BadReportError, MissingToolError, UsageError
from tuiperf.load import detect as det
from tuiperf.load import spill
from tuiperf.load.cache import narrow
from tuiperf.load.cache.store import Cache, CacheKey, read_ipc
from tuiperf.load.cache.usage import cap_bytes
from tuiperf.load.nsys import rep as nsys_rep
from tuiperf.load.progress import OnProgress, Progress
from tuiperf.model.trace import Trace, TraceMeta

if TYPE_CHECKING:
    import numpy as np

Sink = Callable[[str, pa.Table], None]
#: a builder converts a source, handing each canonical table to the sink; returns the meta
Builder = Callable[[Sink], TraceMeta]

_NSYS_MARKERS = {
    "StringIds",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
    "TARGET_INFO_SESSION_START_TIME",
}


class NotCached(Exception):
    """The report has no cache entry to open (OpenOptions.cached_only): it would convert."""


@dataclass
class OpenOptions:
    cache_dir: Path | None = None
    #: the cache's size cap in bytes (--cache-max); None: $TUIPERF_CACHE_MAX, else no cap
    cache_max: int | None = None
    use_cache: bool = True
    progress: OnProgress | None = None
    #: convert detail columns (grid, block, registers, ...) on first use, not up front
    defer_details: bool = True
    #: the export of the `.nsys-rep` being opened, started early by the caller
    #: (nsys_rep.export_ahead); used when it is of that report, else stopped
    ahead: nsys_rep.Export | None = None
    #: open the report only from its cache entry: raise NotCached where it would convert
    cached_only: bool = False

    def say(self, step: Progress) -> None:
        if self.progress is not None:
            self.progress(step)


def _nsys_source(path: Path, kind: str):
    from tuiperf.load.nsys.source import DirSource, SqliteSource

    if kind == det.NSYS_SQLITE:
        return SqliteSource(path)
    return DirSource(path, ".parquet" if kind == det.NSYS_PARQUETDIR else ".arrow")


def build_nsys_export(
    path: Path, kind: str, opts: OpenOptions, sink: Sink, defer: bool = False
) -> TraceMeta:
    from tuiperf.load.nsys.meta import read_meta
    from tuiperf.load.nsys.tables import NsysReader

    src = _nsys_source(path, kind)
    try:
        tables = src.tables()
        if not any(t.split("_V")[0] in _NSYS_MARKERS for t in tables):
            raise BadReportError(f"{path}: not an Nsight Systems export (no nsys tables)")
        reader = NsysReader(src, opts.progress)
        meta = read_meta(reader, str(path), kind)
        reader.read_all(sink, defer_details=defer)
        meta.diagnostics.extend(reader.notes)
        if defer:
            meta.deferred = [n for n in ("api", "kernels") if n in reader.built]
        return meta
    finally:
        src.close()


def _build_kineto(path: Path, kind: str, opts: OpenOptions, sink: Sink) -> TraceMeta:
    from tuiperf.load.kineto.tables import load_kineto

    tables, meta = load_kineto(path, opts.progress)
    for name, t in tables.items():
        sink(name, t)
    return meta


RawBuilder = Callable[[Path, str, OpenOptions, Sink], TraceMeta]


def _guarded(build: RawBuilder) -> RawBuilder:
    """An input file that cannot be read (or goes away) as one clear line.

    Malformed content is reported where it is parsed (BadReportError); any other
    exception is a bug in tuiperf and surfaces as one (see cli.main).
    """

    def run(path: Path, kind: str, opts: OpenOptions, sink: Sink) -> TraceMeta:
        try:
            return build(path, kind, opts, sink)
        except OSError as e:
            raise BadReportError(f"{path}: cannot read ({e.strerror or e})") from e

    return run


def open_trace(path: Path, opts: OpenOptions | None = None) -> Trace:
    """Any timeline report (nsys export or .nsys-rep, Kineto JSON) as a Trace."""
    opts = opts or OpenOptions()
    path = Path(path)
    kind = det.detect(path)
    if kind in (det.NCU_REP, det.NCU_CSV):
        raise UsageError(f"{path}: an Nsight Compute report; use `tuiperf ncu {path}`")
    if kind == det.TORCH_SNAPSHOT:
        raise UsageError(f"{path}: a PyTorch memory snapshot; use `tuiperf memory {path}`")
    if kind == det.TUIPERF_DIR:
        return load_converted(path)
    if kind == det.NSYS_REP:
        try:
            return _open_rep(path, opts)
        finally:
            if opts.ahead is not None:  # not needed after all (a cache entry), or done
                opts.ahead.cancel()
    if kind == det.KINETO:
        build = _guarded(_build_kineto)
        return _through_cache(path, kind, opts, lambda sink: build(path, kind, opts, sink))
    defer = opts.defer_details and opts.use_cache
    nsys = _guarded(functools.partial(build_nsys_export, defer=defer))
    trace = _through_cache(
        path, kind, opts, lambda sink: nsys(path, kind, opts, sink), split_details=True
    )
    for name in trace.meta.deferred:
        trace.pending[name] = _details_loader(trace, path, kind, name)
    return trace


class _Details:
    """Detail columns of a table: all of them (called), or some rows' from the cache
    entry (`rows`, None when the entry has none stored)."""

    def __init__(self, trace: Trace, name: str, load: Callable[[], pa.Table]) -> None:
        self.trace, self.name, self.load = trace, name, load

    def __call__(self) -> pa.Table:
        return self.load()

    def rows(self, take: np.ndarray) -> pa.Table | None:
        t = self.trace
        return t.cache.load_details_rows(t.cache_key, self.name, t.tables[self.name].num_rows, take)


def _details_loader(trace: Trace, path: Path, kind: str, name: str) -> _Details:
    """Detail columns of `name`: from the cache entry, else converted from the source now."""

    def load() -> pa.Table:
        cache, key = trace.cache, trace.cache_key
        rows = trace.tables[name].num_rows
        hit = cache.load_details(key, name, rows)
        if hit is not None:
            return hit
        if CacheKey.for_source(path, kind) != key:
            raise BadReportError(f"{path}: changed since it was opened; open it again")
        from tuiperf.load.nsys.tables import NsysReader

        src = _nsys_source(path, kind)
        try:
            # assembled in files beside the entry, like a conversion (load.spill): the
            # columns stay usable, their pages out of memory until read
            with spill.into(cache.entry(key)):
                t = NsysReader(src).details(name)
        finally:
            src.close()
        if t is None or t.num_rows != rows:
            raise BadReportError(f"{path}: {name} changed since it was converted; open it again")
        cache.store_details(key, name, t)
        return narrow.lazy_nulls(t)

    return _Details(trace, name, load)


def _through_cache(
    path: Path, kind: str, opts: OpenOptions, build: Builder, split_details: bool = False
) -> Trace:
    """`split_details`: the source can be read again, so a conversion of every column keeps
    the detail columns apart as a first open does (load.cache.store.EntryWriter)."""
    if opts.cached_only and not opts.use_cache:
        raise NotCached(str(path))
    if not opts.use_cache:
        tables: dict[str, pa.Table] = {}
        meta = build(tables.__setitem__)
        return Trace(tables, meta)
    cache = Cache(opts.cache_dir, cap_bytes(opts.cache_max))
    cache.ensure_writable()
    key = CacheKey.for_source(path, kind)
    hit = cache.load(key)
    if hit is None and opts.cached_only:
        raise NotCached(str(path))
    if hit is None:
        with cache.writer(key, split_details, narrow_core=True) as w:
            w.meta = build(w.add).to_json()
            _unchanged_since(path, kind, key)  # else the entry is dropped, never published
        hit = cache.load(key)
        if hit is None:
            raise BadReportError(f"{path}: the cache entry could not be read back")
        from_cache = False
    else:
        from_cache = True
    tables, meta_json = hit
    meta = TraceMeta.from_json(meta_json)
    meta.cache_path = str(cache.entry(key))
    meta.from_cache = from_cache
    return Trace(tables, meta, cache=cache, cache_key=key)


def _unchanged_since(path: Path, kind: str, key: CacheKey) -> None:
    """Refuse a conversion whose source changed (or went away) while it was read."""
    try:
        same = CacheKey.for_source(path, kind) == key
    except OSError:
        same = False
    if not same:
        raise BadReportError(
            f"{path}: the report changed while it was being converted; open it again "
            "once it is complete"
        )


def _open_rep(path: Path, opts: OpenOptions) -> Trace:
    sibling = nsys_rep.sibling_export(path)
    if sibling is not None:
        opts.say(Progress("using the export beside the report", detail=sibling.name))
        return open_trace(sibling, opts)
    stale = nsys_rep.stale_exports(path)
    for note in stale:
        opts.say(Progress("not using an older export", detail=note))

    def build(sink: Sink) -> TraceMeta:
        try:
            job = _export_job(path, opts)
            try:
                _import_converter()  # while nsys works
                export = job.wait(opts.say)
                meta = _guarded(build_nsys_export)(export, det.detect(export), opts, sink)
            finally:
                job.cancel()  # read or failed: its folder goes
        except MissingToolError as e:
            if stale:  # the export the user may have meant to use is there: say why not
                raise MissingToolError(f"{e}; {stale[0]}") from e
            raise
        meta.source, meta.format = str(path), det.NSYS_REP
        meta.diagnostics.extend(stale)
        return meta

    return _through_cache(path, det.NSYS_REP, opts, build)


def _export_job(path: Path, opts: OpenOptions) -> nsys_rep.Export:
    """The export started ahead for `path` (once), else a new one."""
    job = opts.ahead
    if job is None or job.spent or job.report.resolve() != path.resolve():
        job = nsys_rep.Export(path, nsys_rep.export_root(opts.cache_dir, opts.use_cache))
    return job


def _import_converter() -> None:
    """What converting an export imports: the readers (their numpy conversions no longer
    import pandas, so that is not done here either: model/arrays.py)."""
    from tuiperf.load.nsys import meta as nsys_meta  # noqa: F401
    from tuiperf.load.nsys import tables as nsys_tables  # noqa: F401


def load_converted(path: Path) -> Trace:
    """A folder written by `tuiperf convert` (or the bundled sample)."""
    try:
        manifest = json.loads((path / "manifest.json").read_text())
        tables = {n: read_ipc(path / f"{n}.arrow") for n in manifest["tables"]}
    except (OSError, ValueError, KeyError, pa.ArrowException) as e:
        raise BadReportError(f"{path}: damaged tuiperf folder ({e})") from e
    meta = TraceMeta.from_json(manifest.get("meta", {}))
    meta.cache_path = str(path)
    return Trace(tables, meta)
