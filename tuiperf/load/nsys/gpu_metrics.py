"""Nsight Systems GPU metrics (`--gpu-metrics-devices`) -> the gpu_metrics table.

What the export holds (docs/formats-gpu-metrics.md): `GPU_METRICS(timestamp, typeId,
metricId, value)`, one row per metric per sample, and `TARGET_INFO_GPU_METRICS(typeId,
metricId, metricName)`, the names; a metric is known by the pair (typeId, metricId) (nsys
says metricId alone is not stable). The GPU is the low byte of typeId (one GPU checked:
typeId 0x0001000100000000 is GPU 0). A name carries its unit in brackets ("SMs Active
[Throughput %]"): the table keeps the name without it and the unit apart ("%"); the clock
metrics, named "[MHz]", hold Hz in the export and are converted to MHz here.
"""

from __future__ import annotations

import re
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema

#: GPU_METRICS.typeId & DEVICE_MASK is the GPU's id (TARGET_INFO_GPU.id)
DEVICE_MASK = 0xFF
_UNIT = re.compile(r"^(?P<name>.*?)\s*\[(?P<unit>[^\]]*)\]\s*$")
#: unit as nsys names it -> (unit shown, what the stored value is divided by)
_UNITS = {"Throughput %": ("%", 1.0), "MHz": ("MHz", 1e6)}


class ExportTables(Protocol):
    def raw(self, logical: str, wanted: list[str]) -> pa.Table | None: ...


def split_name(full: str) -> tuple[str, str, float]:
    """("SMs Active", "%", 1.0) from "SMs Active [Throughput %]": name, unit, divisor."""
    m = _UNIT.match(full)
    if m is None:
        return full, "", 1.0
    unit, factor = _UNITS.get(m.group("unit"), (m.group("unit"), 1.0))
    return m.group("name"), unit, factor


def read_gpu_metrics(reader: ExportTables) -> pa.Table | None:
    """One row per sample of a metric (device, start, metric, unit, value); None without."""
    t = reader.raw("GPU_METRICS", ["timestamp", "typeId", "metricId", "value"])
    names = reader.raw("TARGET_INFO_GPU_METRICS", ["typeId", "metricId", "metricName"])
    if t is None or t.num_rows == 0 or names is None or names.num_rows == 0:
        return None
    ok = pc.and_(pc.and_(pc.is_valid(t["timestamp"]), pc.is_valid(t["typeId"])),
                 pc.and_(pc.is_valid(t["metricId"]), pc.is_valid(t["value"])))  # fmt: skip
    t = t.filter(ok)
    key_t, key_m = _ints(names["typeId"]), _ints(names["metricId"])
    full = [str(n) for n in names["metricName"].to_pylist()]
    parts = [split_name(n) for n in full]
    # the (typeId, metricId) pairs, sorted, and each row's place among them
    code = key_t.astype(np.uint64) * np.uint64(1 << 20) + (key_m.astype(np.uint64) & 0xFFFFF)
    order = np.argsort(code, kind="stable")
    code = code[order]
    ty, mi = _ints(t["typeId"]), _ints(t["metricId"])
    row_code = ty.astype(np.uint64) * np.uint64(1 << 20) + (mi.astype(np.uint64) & 0xFFFFF)
    at = np.minimum(np.searchsorted(code, row_code), len(code) - 1)
    named = code[at] == row_code  # a sample of an unnamed metric is left out
    at, ty = order[at[named]], ty[named]
    start, value = _ints(t["timestamp"])[named], _floats(t["value"])[named]
    factor = np.array([p[2] for p in parts])[at]
    metric, unit = _names(at, [p[0] for p in parts]), _names(at, [p[1] for p in parts])
    dev = ty & DEVICE_MASK
    order = np.lexsort((start, unit, metric, dev))
    cols = {
        "start": pa.array(start[order]),
        "device": pa.array(dev[order], pa.int32()),
        "metric": _dict(metric[order], [p[0] for p in parts]),
        "unit": _dict(unit[order], [p[1] for p in parts]),
        "value": pa.array((value / factor)[order]),
    }
    return schema.conform("gpu_metrics", cols, len(start))


def _names(at: np.ndarray, names: list[str]) -> np.ndarray:
    """Per row, the index of its name among the distinct names (first seen order)."""
    first: dict[str, int] = {}
    idx = np.array([first.setdefault(n, len(first)) for n in names], np.int32)
    return idx[at] if len(at) else np.zeros(0, np.int32)


def _dict(idx: np.ndarray, names: list[str]) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32()), list(dict.fromkeys(names)))


def _ints(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.int64)


def _floats(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(col.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
