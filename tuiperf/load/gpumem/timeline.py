"""Memory events of a timeline report: nsys `CUDA_GPU_MEMORY_USAGE_EVENTS` (the trace's
`gpu_memory` table) and torch.profiler's `[memory]` events.

nsys sees cudaMalloc/cudaFree, the level PyTorch calls *reserved*: its Device and Managed
rows become `segment_alloc` / `segment_free`; Device Static rows (module globals) become
`static`; host rows (Pageable, Pinned) are left out. A free's size is its allocation's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.load.gpumem import tables as T
from tuiperf.load.kineto.memory import read_memory_events
from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace

#: nsys memKind labels (ENUM_CUDA_MEM_KIND) that are the process's device memory
RESERVED_KINDS = ("Device", "Managed", "Array")
STATIC_KINDS = ("Device Static", "Managed Static")
_CODE = {a: i for i, a in enumerate(T.ACTIONS)}


def _nulls(n: int) -> pa.Array:
    return pa.nulls(n, pa.int64())


def from_nsys(trace: Trace) -> T.MemoryData | None:
    t = trace.table("gpu_memory")
    if t.num_rows == 0:
        return None
    kind = A.strings(t, "mem_kind")
    keep = np.isin(kind, RESERVED_KINDS + STATIC_KINDS)
    t = t.filter(A.from_numpy(keep))  # (no pandas: model/arrays.py)
    kind = kind[keep]
    is_free = A.strings(t, "operation") == "Deallocation"
    static = np.isin(kind, STATIC_KINDS)
    code = np.where(is_free, _CODE[T.SEG_FREE], _CODE[T.SEG_ALLOC])
    code = np.where(static, _CODE[T.STATIC], code)
    n = t.num_rows
    events = pa.table(
        {
            "device": t["device"],
            "seq": A.from_numpy(np.arange(n, dtype=np.int64)),
            "time_ns": t["start"],
            "action": T.action_array(code),
            "addr": t["address"],
            "size": pc.abs(t["bytes"]),
            "stream": t["stream"],
            "site": pa.nulls(n, pa.int32()),
            "allocated_after": _nulls(n),
            "reserved_after": _nulls(n),
            "device_free": _nulls(n),
            "tid": _nulls(n),
        },
        schema=T.EVENTS,
    )
    return T.MemoryData(T.NSYS, trace.meta.source, events, notes=[NSYS_NOTE])


#: what nsys's level is (said with every nsys memory report)
NSYS_NOTE = (
    "nsys records every cudaMalloc/cudaFree of the process: its level is PyTorch's reserved "
    "(the caching allocator's segments) plus device memory other code allocated itself "
    "(cuBLAS handles, NCCL buffers, extensions), which nsys cannot tell apart; "
    "torch.cuda.max_memory_reserved() counts only the first"
)


#: the cache entry's derived table holding a torch.profiler trace's memory events
DERIVED = "gpumem-kineto"
_ORIGIN = b"epoch_origin_ns"


class NotRead(Exception):
    """The trace's memory events are not in its cache entry, and its file is larger than
    the caller would read again."""


def kineto_memory(
    trace: Trace, path: Path, max_read_bytes: int | None = None
) -> T.MemoryData | None:
    """`from_kineto`, kept beside the trace's cache entry: the JSON is read again only
    the first time (a trace without memory events is remembered as an empty table);
    with `max_read_bytes`, a larger file is not read (NotRead)."""
    cache, key = trace.cache, trace.cache_key
    hit = cache.load_derived(key, DERIVED) if cache is not None and key is not None else None
    if hit is not None and hit.schema.names == T.EVENTS.names:
        if hit.num_rows == 0:
            return None
        meta = hit.schema.metadata or {}
        origin = int(meta[_ORIGIN]) if meta.get(_ORIGIN, b"").lstrip(b"-").isdigit() else None
        events = hit.cast(T.EVENTS)
        return T.MemoryData(T.KINETO, str(path), events, epoch_origin_ns=origin)
    if not path.is_file():
        return None  # a converted copy: no JSON to read
    if max_read_bytes is not None and path.stat().st_size > max_read_bytes:
        raise NotRead(f"{path.stat().st_size} bytes")
    data = from_kineto(path)
    if cache is not None and key is not None:
        table = data.events if data is not None else T.EVENTS.empty_table()
        said = b"" if data is None or data.epoch_origin_ns is None else b"%d" % data.epoch_origin_ns
        cache.store_derived(key, DERIVED, table.replace_schema_metadata({_ORIGIN: said}))
    return data


def from_kineto(path: Path) -> T.MemoryData | None:
    rows = read_memory_events(path)
    if not len(rows):
        return None
    c = rows.cols
    ts = np.frombuffer(c["ts"], np.float64)
    t0 = round(rows.t0_us * 1000)
    time = np.rint(ts * 1000.0).astype(np.int64) - t0
    order = np.argsort(time, kind="stable")
    b = np.frombuffer(c["bytes"], np.int64)[order]
    n = len(order)
    code = np.where(b < 0, _CODE[T.FREE], _CODE[T.ALLOC])

    def col(k: str) -> np.ndarray:
        return np.frombuffer(c[k], np.int64)[order]

    events = pa.table(
        {
            "device": pa.array(col("device"), pa.int32()),
            "seq": pa.array(np.arange(n, dtype=np.int64)),
            "time_ns": pa.array(time[order]),
            "action": T.action_array(code),
            "addr": pa.array(col("addr")),
            "size": pa.array(np.abs(b)),
            "stream": _nulls(n),
            "site": pa.nulls(n, pa.int32()),
            "allocated_after": pa.array(col("allocated")),
            "reserved_after": pa.array(col("reserved")),
            "device_free": _nulls(n),
            "tid": pa.array(col("tid")),
        },
        schema=T.EVENTS,
    )
    notes = [f"{rows.skipped} [memory] events without numbers skipped"] if rows.skipped else []
    origin = rows.base_ns + t0 if rows.base_ns is not None else None
    return T.MemoryData(T.KINETO, str(path), events, notes=notes, epoch_origin_ns=origin)
