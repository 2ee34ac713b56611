"""`nsys stats --report cuda_gpu_trace`: every kernel, memcpy and memset in start order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model.trace import Trace
from tuiperf.summaries.table import Column, StatsTable

COLUMNS = [
    Column("Start (ns)", "start_ns", "int"),
    Column("Duration (ns)", "duration_ns", "int"),
    Column("CorrId", "correlation_id", "int"),
    Column("GrdX", "grid_x", "int"),
    Column("GrdY", "grid_y", "int"),
    Column("GrdZ", "grid_z", "int"),
    Column("BlkX", "block_x", "int"),
    Column("BlkY", "block_y", "int"),
    Column("BlkZ", "block_z", "int"),
    Column("Reg/Trd", "registers", "int"),
    Column("StcSMem (MB)", "static_smem_mb", "f3"),
    Column("DymSMem (MB)", "dynamic_smem_mb", "f3"),
    Column("Bytes (MB)", "bytes_mb", "f3"),
    Column("Throughput (MB/s)", "throughput_mbps", "f3"),
    Column("SrcMemKd", "src_kind", "str"),
    Column("DstMemKd", "dst_kind", "str"),
    Column("Device", "device", "str"),
    Column("Ctx", "context", "int"),
    Column("GreenCtx", "green_context", "int"),
    Column("Strm", "stream", "int"),
    Column("Name", "name", "str"),
]


def _device_labels(trace: Trace) -> dict[int, str]:
    dev = trace.table("devices")
    return {
        int(d): f"{n or 'GPU'} ({d})"
        for d, n in zip(dev["device"].to_pylist(), dev["name"].to_pylist())
        if d is not None
    }


def _throughput(nbytes: pa.ChunkedArray, dur: pa.ChunkedArray) -> pa.Array:
    """MB/s with nsys's integer division: bytes * (1e9 // duration) / 1e6."""
    b = nbytes.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    d = dur.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    ok = d > 0
    per = np.where(ok, 1_000_000_000 // np.where(ok, d, 1), 0)
    return pa.array((b * per) / 1e6, mask=~ok)


def _common(t: pa.Table, devices: dict[int, str]) -> dict[str, pa.Array | pa.ChunkedArray]:
    dev = t["device"].to_pylist()
    return {
        "start_ns": t["start"],
        "duration_ns": t["duration"],
        "correlation_id": t["correlation_id"],
        "device": pa.array([devices.get(d, f"GPU ({d})") for d in dev], pa.string()),
        "context": t["context"],
        "green_context": t["green_context"],
        "stream": t["stream"],
    }


def _kernel_part(t: pa.Table, devices: dict[int, str]) -> pa.Table:
    cols = _common(t, devices)
    for k in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers"):
        cols[k] = t[k]
    cols["static_smem_mb"] = pc.divide(pc.cast(t["static_smem"], pa.float64()), 1e6)
    cols["dynamic_smem_mb"] = pc.divide(pc.cast(t["dynamic_smem"], pa.float64()), 1e6)
    cols["name"] = t["name"].cast(pa.string())
    return _frame(cols, t.num_rows)


def _memcpy_part(t: pa.Table, devices: dict[int, str]) -> pa.Table:
    cols = _common(t, devices)
    cols["bytes_mb"] = pc.divide(pc.cast(t["bytes"], pa.float64()), 1e6)
    cols["throughput_mbps"] = _throughput(t["bytes"], t["duration"])
    cols["src_kind"] = t["src_kind"].cast(pa.string())
    cols["dst_kind"] = t["dst_kind"].cast(pa.string())
    kinds = t["copy_kind"].cast(pa.string()).fill_null("Unknown")
    cols["name"] = pc.binary_join_element_wise("[CUDA memcpy ", kinds, "]", "")
    return _frame(cols, t.num_rows)


def _memset_part(t: pa.Table, devices: dict[int, str]) -> pa.Table:
    cols = _common(t, devices)
    cols["bytes_mb"] = pc.divide(pc.cast(t["bytes"], pa.float64()), 1e6)
    cols["throughput_mbps"] = _throughput(t["bytes"], t["duration"])
    cols["src_kind"] = t["mem_kind"].cast(pa.string())
    cols["name"] = pa.array(["[CUDA memset]"] * t.num_rows, pa.string())
    return _frame(cols, t.num_rows)


_TYPES = {"int": pa.int64(), "f3": pa.float64(), "str": pa.string()}


def _frame(cols: dict[str, pa.Array | pa.ChunkedArray], n: int) -> pa.Table:
    arrays = []
    for c in COLUMNS:
        typ = _TYPES[c.fmt]
        v = cols.get(c.key)
        arrays.append(pa.nulls(n, typ) if v is None else pc.cast(v, typ))
    return pa.Table.from_arrays(arrays, names=[c.key for c in COLUMNS])


def gpu_trace(trace: Trace) -> StatsTable:
    devices = _device_labels(trace)
    parts = [
        _kernel_part(trace.table("kernels"), devices),
        _memcpy_part(trace.table("memcpy"), devices),
        _memset_part(trace.table("memset"), devices),
    ]
    data = pa.concat_tables(parts)
    if data.num_rows:
        order = np.argsort(data["start_ns"].to_numpy(zero_copy_only=False), kind="stable")
        data = data.take(pa.array(order))
    return StatsTable("cuda_gpu_trace", COLUMNS, data)
