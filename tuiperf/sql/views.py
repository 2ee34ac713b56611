"""The views `tuiperf sql` offers, their columns and units (no DuckDB here).

Event views are SQL over the registered canonical tables (no copy): their first columns are
the CSV export's (`tuiperf export --table KIND`), named and ordered as it names them
(`start_ns`, `end_ns`, `duration_ns`, ...); the canonical columns the export leaves out follow
under their canonical names (`short_name`, `mangled_name`, `copy_kind`, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tuiperf import schema
from tuiperf.model import columns as cols
from tuiperf.model.api_names import api_display_name


@dataclass(frozen=True)
class EventView:
    """A view over one canonical table: (SQL expression, column name) pairs."""

    name: str
    table: str  # the canonical table (and the events-table kind)
    about: str

    def select(self) -> list[tuple[str, str]]:
        items: list[tuple[str, str]] = []
        for spec in cols.columns(self.table):
            for src, out in zip(spec.sources, spec.export, strict=True):
                items.append((_expr(self.table, src), out))
        for f in self.extra_fields():
            items.append((quote(f), f))
        return items

    def extra_fields(self) -> list[str]:
        shown = {s for spec in cols.columns(self.table) for s in spec.sources}
        skip = shown | {"name", "text"}
        return [f.name for f in schema.TABLES[self.table] if f.name not in skip]


def _expr(table: str, src: str) -> str:
    """The SQL giving export column `src`'s values. Names are plain column references, so
    DuckDB keeps the Arrow dictionary (GROUP BY name hashes codes, not strings): the names
    the export rewrites are rewritten once per distinct name, on the dictionary (`named`)."""
    if src != "name":
        return quote(src)
    if table == "memset":
        return "'[CUDA memset]'"
    if table == "nvtx":
        return quote("text")
    return quote("name")


def named(table: str, t: pa.Table) -> pa.Table:
    """`t` with its `name` as the export writes it: copies named by kind (`[CUDA memcpy
    Host-to-Device]`, as nsys stats names them), API calls without the `_v7000` suffix.
    Only the dictionaries change; the codes are shared with `t` (no copy per row)."""
    if table == "memcpy":
        col = _relabel(t["copy_kind"], lambda s: f"[CUDA memcpy {s}]")
        return t.append_column("name", col)
    if table == "api":
        i = t.schema.get_field_index("name")
        return t.set_column(i, "name", _relabel(t["name"], api_display_name))
    return t


def _relabel(col: pa.ChunkedArray, fn: Callable[[str], str]) -> pa.ChunkedArray:
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    kind = col.type.index_type  # (a cache entry stores the codes narrow)
    chunks = []
    for c in col.chunks:
        labels = [fn(v) for v in c.dictionary.to_pylist()]
        indices = c.indices
        if len(set(labels)) < len(labels):  # two spellings of one name: one code for both
            first = {v: i for i, v in reversed(list(enumerate(labels)))}
            remap = np.array([first[v] for v in labels], np.int32)
            codes = remap[indices.fill_null(0).to_numpy(zero_copy_only=False)]
            indices = pa.array(codes, kind, mask=indices.is_null().to_numpy(False))
        chunks.append(pa.DictionaryArray.from_arrays(indices, pa.array(labels, pa.string())))
    return pa.chunked_array(chunks, pa.dictionary(kind, pa.string()))


_TIME_NAMES = {"start": "start_ns", "end": "end_ns", "duration": "duration_ns"}


def plain_select(table: str) -> str:
    """A canonical table's columns, the times named with their unit as in the event views."""
    return ", ".join(
        f"{quote(f.name)} AS {quote(_TIME_NAMES.get(f.name, f.name))}" for f in schema.TABLES[table]
    )


def quote(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


EVENT_VIEWS: tuple[EventView, ...] = (
    EventView("kernels", "kernels", "GPU kernels (name: demangled)"),
    EventView("copies", "memcpy", "GPU memory copies (name: [CUDA memcpy KIND])"),
    EventView("memsets", "memset", "GPU memory sets"),
    EventView("graphs", "graphs", "whole CUDA graph executions (launch: the API call)"),
    EventView("api", "api", "CUDA runtime and driver API calls (name without _vNNNN)"),
    EventView("nvtx", "nvtx", "NVTX and record_function ranges (name: the range's text)"),
    EventView("osrt", "osrt", "OS runtime calls"),
)

#: canonical tables offered as they are (the machine, not events)
PLAIN_VIEWS: dict[str, str] = {
    "sync": "CUDA synchronisations",
    "gpu_memory": "GPU memory allocations and frees",
    "devices": "the GPUs",
    "processes": "the processes",
    "threads": "the threads",
    "streams": "the CUDA streams",
}

#: views computed by the analysis, built only when a query names them
DERIVED_VIEWS: dict[str, str] = {
    "steps": "steady-state training steps, per device: GPU-side and CPU-side windows",
    "budget": "the step budget (tuiperf summary --report step_budget): parts per step",
    "findings": "the findings of tuiperf analyze, best first",
}

#: views of an Nsight Compute report
NCU_VIEWS: dict[str, str] = {
    "ncu_kernels": "the profiled kernels of an Nsight Compute report",
    "ncu_metrics": "every metric of every profiled kernel (one row per kernel and metric)",
}


def unit(column: str) -> str:
    """The unit a column's values are in, from its name (`_ns`, `bytes`, `_pct`)."""
    if column.endswith("_ns"):
        return "ns"
    if column.endswith("bytes") or column in ("total_memory", "l2_cache"):
        return "bytes"
    if column.endswith("_pct"):
        return "%"
    if column == "memory_bandwidth":
        return "bytes/s"
    if column == "clock_rate":
        return "Hz"
    return ""
