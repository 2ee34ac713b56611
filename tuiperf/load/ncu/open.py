"""Open an Nsight Compute input (`.ncu-rep` or an ncu CSV export) as KernelMetrics,
through the conversion cache."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from tuiperf.errors import BadReportError, UsageError
from tuiperf.load import detect as det
from tuiperf.load.cache.store import Cache, CacheKey
from tuiperf.load.cache.usage import cap_bytes
from tuiperf.load.progress import Progress
from tuiperf.model.ncu.metrics import KernelMetrics

#: bumped whenever the ncu tables change shape; part of the cache key
LOADER_VERSION = 3
Built = tuple[dict[str, pa.Table], dict[str, Any]]


def ncu_kind(path: Path) -> str:
    """`ncu-rep` or `ncu-csv`, or a one-line error for anything else."""
    kind = det.detect(path)
    if kind not in (det.NCU_REP, det.NCU_CSV):
        if path.name.lower().endswith(".ncu-rep"):
            raise BadReportError(f"{path}: not an Nsight Compute report")
        raise UsageError(
            f"{path}: not an Nsight Compute report or ncu CSV export ({kind}); "
            "`tuiperf ncu` reads .ncu-rep files and `ncu --csv` exports"
        )
    return kind


def _build(path: Path, kind: str, opts: Any) -> Built:
    """The tables of an ncu input. Malformed content is reported where it is parsed
    (BadReportError); any other exception is a bug in tuiperf (see cli.main)."""
    progress = getattr(opts, "progress", None)
    try:
        if kind == det.NCU_REP:
            from tuiperf.load.ncu.rep import load_ncu_rep

            return load_ncu_rep(path, progress)
        from tuiperf.load.ncu.csv_export import load_ncu_csv

        return load_ncu_csv(path)
    except OSError as e:
        raise BadReportError(f"{path}: cannot read ({e.strerror or e})") from e


def open_ncu(path: Path, opts: Any = None) -> KernelMetrics:
    """KernelMetrics of an `.ncu-rep` or ncu CSV; `opts` is a `tuiperf.load.open.OpenOptions`
    (cache_dir, use_cache, progress) or None for the defaults."""
    path = Path(path)
    kind = ncu_kind(path)
    use_cache = getattr(opts, "use_cache", True) if opts is not None else True
    if not use_cache:
        tables, meta = _build(path, kind, opts)
        meta.update(cache=None, from_cache=False)
        return KernelMetrics(tables, meta)
    return _through_cache(path, kind, opts, lambda: _build(path, kind, opts))


def _through_cache(path: Path, kind: str, opts: Any, build: Callable[[], Built]) -> KernelMetrics:
    cache = Cache(getattr(opts, "cache_dir", None), cap_bytes(getattr(opts, "cache_max", None)))
    cache.ensure_writable()
    key = CacheKey.for_source(path, f"{kind}-v{LOADER_VERSION}")
    hit = cache.load(key)
    from_cache = hit is not None
    if hit is None:
        tables, meta = build()
        say = getattr(opts, "say", None)
        if say is not None:
            say(Progress("write cache"))
        cache.store(key, tables, meta)
        hit = cache.load(key)
        if hit is None:
            raise BadReportError(f"{path}: the cache entry could not be read back")
    tables, meta = hit
    meta = dict(meta, cache=str(cache.entry(key)), from_cache=from_cache)
    return KernelMetrics(tables, meta)


def describe_ncu(path: Path, opts: Any = None) -> dict[str, Any]:
    """Plain facts about an ncu input, with the keys `tuiperf info` prints for traces."""
    km = open_ncu(path, opts)
    return describe_metrics(km)


def describe_metrics(km: KernelMetrics) -> dict[str, Any]:
    m, k = km.meta, km.kernels
    procs: dict[int, str] = {}
    for pid, name in zip(
        k.column("process_id").to_pylist(), k.column("process_name").to_pylist(), strict=True
    ):
        if pid is not None:
            procs.setdefault(pid, name or "")
    sm: dict[Any, Any] = {}
    for kid in km.kernel_ids():
        sm.setdefault(km.kernel(kid).device, km.value(kid, "launch__sm_count"))
    devices = [
        dict(d, sm_count=int(sm[d["device"]]) if sm.get(d["device"]) else None, total_memory=None)
        for d in m.get("devices") or []
    ]
    sections = list(dict.fromkeys(km.tables["sections"].column("section_name").to_pylist()))
    durations = [d for d in k.column("duration_ns").to_pylist() if d is not None]
    return {
        "source": m.get("source"),
        "format": m.get("format"),
        "tool": "Nsight Compute",
        "tool_version": m.get("tool_version") or "",  # the report's own, never the reader's
        "reader_version": m.get("reader_version") or "",
        "devices": devices,
        "processes": [{"pid": p, "name": n} for p, n in procs.items()],
        "threads": [],
        "time_range_ns": None,
        "duration_ns": sum(durations) if durations else None,
        "capture": sections,
        "diagnostics": [],
        "rows": {n: t.num_rows for n, t in km.tables.items()},
        "kernels": [
            {"id": kid, "name": n, "duration_ns": d}
            for kid, n, d in zip(
                km.kernel_ids(),
                k.column("name").to_pylist(),
                k.column("duration_ns").to_pylist(),
                strict=True,
            )
        ],
        "cache": m.get("cache"),
        "from_cache": m.get("from_cache", False),
    }
