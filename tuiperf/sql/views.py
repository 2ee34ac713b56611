"""The views `tuiperf sql` offers, their columns and units (no DuckDB here).

Event views are SQL over the registered canonical tables (no copy): their first columns are
the CSV export's (`tuiperf export --table KIND`), named and ordered as it names them
(`start_ns`, `end_ns`, `duration_ns`, ...); the canonical columns the export leaves out follow
under their canonical names (`short_name`, `mangled_name`, `copy_kind`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from tuiperf import schema
from tuiperf.model import columns as cols


@dataclass(frozen=True)
class EventView:
    """A view over one canonical table: (SQL expression, column name) pairs."""

    name: str
    table: str  # the canonical table (and the events-table kind)
    about: str

    def select(self) -> list[tuple[str, str]]:
        items: list[tuple[str, str]] = []
        used = {"name", "text"} | ({"copy_kind"} if self.table == "memcpy" else set())
        for spec in cols.columns(self.table):
            for src, out in zip(spec.sources, spec.export, strict=True):
                used.add(src)
                items.append((_expr(self.table, src), out))
        for f in self.extra_fields():
            items.append((quote(f), f))
        return items

    def extra_fields(self) -> list[str]:
        shown = {s for spec in cols.columns(self.table) for s in spec.sources}
        skip = shown | {"name", "text"}
        return [f.name for f in schema.TABLES[self.table] if f.name not in skip]


def _expr(table: str, src: str) -> str:
    """The SQL giving export column `src`'s values (the names as the export writes them)."""
    if src != "name":
        return quote(src)
    if table == "memcpy":  # as nsys stats names copies: by kind
        return "'[CUDA memcpy ' || coalesce(copy_kind, '') || ']'"
    if table == "memset":
        return "'[CUDA memset]'"
    if table == "nvtx":
        return "coalesce(\"text\", '')"
    if table == "api":  # without the `_v7000` suffix, as nsys stats prints them
        return "regexp_replace(coalesce(name, ''), '_v[0-9]{4}$', '')"
    return "coalesce(name, '')"


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
    if column.endswith("_ns") or column in ("start", "duration"):
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
