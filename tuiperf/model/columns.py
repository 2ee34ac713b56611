"""The columns of the events table, per event kind: header, raw export names, cell format.

One description serves the TUI (header text, width, human cells) and the export (raw
column names with units: `start_ns`, `duration_ns`, `bytes`). Headless: no Textual.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays, fmt
from tuiperf.model.kinds import KIND_TITLES as KIND_TITLES
from tuiperf.model.kinds import KINDS as KINDS


@dataclass(frozen=True)
class ColumnSpec:
    """One visible column; `sources` are canonical table columns (or `name`)."""

    key: str  # what --sort and Query.sort name
    header: str  # shown in the table, with the unit where the cells have a fixed one
    sources: tuple[str, ...]  # canonical columns read (sort order: lexicographic)
    export: tuple[str, ...]  # raw export column names, one per source
    fmt: str  # time | duration | int | bytes | dims | smem | text | name
    width: int  # cells, for the TUI (the name column takes what is left)
    priority: int = 5  # the lowest go first when the terminal is narrow
    right: bool = True  # right-aligned (numbers)


def _time() -> tuple[ColumnSpec, ...]:
    return (
        ColumnSpec("start", "Start (s)", ("start",), ("start_ns",), "time", 11, 9),
        ColumnSpec("end", "End (s)", ("end",), ("end_ns",), "time", 11, 1),
        ColumnSpec("duration", "Duration", ("duration",), ("duration_ns",), "duration", 10, 9),
    )


def _num(key: str, header: str, width: int, priority: int, export: str = "") -> ColumnSpec:
    return ColumnSpec(key, header, (key,), (export or key,), "int", width, priority)


def _text(key: str, header: str, width: int, priority: int) -> ColumnSpec:
    return ColumnSpec(key, header, (key,), (key,), "text", width, priority, right=False)


def _dims(key: str, header: str) -> ColumnSpec:
    src = (f"{key}_x", f"{key}_y", f"{key}_z")
    return ColumnSpec(key, header, src, src, "dims", 11 if key == "grid" else 9, 3)


NAME = ColumnSpec("name", "Name", ("name",), ("name",), "name", 0, 10, right=False)
_PROC = (_num("pid", "PID", 7, 2), _num("tid", "TID", 7, 2))
_GPU = (_num("device", "Dev", 5, 4), _num("stream", "Strm", 6, 6))
_CORR = _num("correlation_id", "CorrID", 8, 2)

COLUMNS: dict[str, tuple[ColumnSpec, ...]] = {
    "kernels": (
        *_time(),
        *_GPU,
        _dims("grid", "Grid"),
        _dims("block", "Block"),
        _num("registers", "Regs", 6, 3),
        ColumnSpec(
            "smem",
            "SMem",
            ("static_smem", "dynamic_smem"),
            ("static_smem_bytes", "dynamic_smem_bytes"),
            "smem",
            9,
            2,
        ),
        _CORR,
        *_PROC,
        NAME,
    ),
    "memcpy": (
        *_time(),
        ColumnSpec("bytes", "Size", ("bytes",), ("bytes",), "bytes", 9, 8),
        _text("src_kind", "Src", 8, 5),
        _text("dst_kind", "Dst", 8, 5),
        *_GPU,
        _CORR,
        *_PROC,
        NAME,
    ),
    "memset": (
        *_time(),
        ColumnSpec("bytes", "Size", ("bytes",), ("bytes",), "bytes", 9, 8),
        _text("mem_kind", "Memory", 8, 4),
        *_GPU,
        _CORR,
        *_PROC,
        NAME,
    ),
    "graphs": (  # whole CUDA graph executions (nsys's default --cuda-graph-trace=graph)
        *_time(),
        *_GPU,
        _num("graph_id", "Graph", 6, 7),
        _num("graph_exec_id", "Exec", 6, 7),
        _CORR,
        _text("launch", "Launched by", 16, 4),  # the cudaGraphLaunch (timeline/graph_launch.py)
        _num("pid", "PID", 7, 2),
        NAME,
    ),
    "api": (
        *_time(),
        *_PROC,
        _CORR,
        _text("api_kind", "Kind", 12, 3),
        _num("return_value", "Ret", 5, 2),
        NAME,
    ),
    "nvtx": (
        *_time(),
        *_PROC,
        _num("depth", "Depth", 7, 4),
        _text("style", "Style", 8, 3),
        _text("domain", "Domain", 10, 4),
        NAME,
    ),
    "osrt": (*_time(), *_PROC, _num("return_value", "Ret", 5, 2), NAME),
}


def columns(kind: str) -> tuple[ColumnSpec, ...]:
    return COLUMNS[kind]


def find(kind: str, key: str) -> ColumnSpec | None:
    """A column of `kind` by its key or one of its export names (`duration_ns`)."""
    for c in COLUMNS[kind]:
        if key == c.key or key in c.export:
            return c
    return None


def export_names(specs: tuple[ColumnSpec, ...] | list[ColumnSpec]) -> list[str]:
    return [name for c in specs for name in c.export]


def fit(specs: tuple[ColumnSpec, ...], width: int, name_min: int | None = None) -> list[ColumnSpec]:
    """The columns that fit `width` (one cell between columns), dropping low priority first.

    The name column keeps at least `name_min` cells (default: a third of the width, >= 24).
    """
    name_min = max(24, width // 3) if name_min is None else name_min
    chosen = list(specs)
    while True:
        fixed = sum(c.width + 1 for c in chosen if c.fmt != "name")
        if fixed + name_min <= width or len(chosen) <= 2:
            return chosen
        victim = min((c for c in chosen if c.fmt != "name"), key=lambda c: c.priority)
        chosen.remove(victim)


# -- cells ----------------------------------------------------------------------------


def cell(spec: ColumnSpec, values: tuple[object, ...], ascii_only: bool = False) -> str:
    """Human text for one cell; `values` holds one raw value per source (None = null)."""
    v = values[0]
    if spec.fmt == "time":
        return "" if v is None else fmt.seconds(int(v), 6)  # type: ignore[call-overload]
    if spec.fmt == "duration":
        return fmt.duration(v, ascii_only)  # type: ignore[arg-type]
    if spec.fmt == "bytes":
        return fmt.size(v)  # type: ignore[arg-type]
    if spec.fmt == "dims":
        if any(x is None for x in values):
            return ""
        return ("x" if ascii_only else "×").join(str(x) for x in values)
    if spec.fmt == "smem":
        return fmt.size(sum(int(x) for x in values if x is not None))  # type: ignore[call-overload]
    if spec.fmt == "int":
        return "" if v is None else str(v)
    return fmt.clean("" if v is None else str(v))


# -- the per-name summary ------------------------------------------------------------


@dataclass(frozen=True)
class SummaryColumn:
    key: str  # NameSummary attribute and sort key
    header: str
    export: str
    fmt: str  # pct | duration | count | float_ns | name | text
    width: int


SUMMARY_COLUMNS: tuple[SummaryColumn, ...] = (
    SummaryColumn("time_pct", "Time %", "time_pct", "pct", 8),
    SummaryColumn("total", "Total", "total_ns", "duration", 9),
    SummaryColumn("count", "Instances", "instances", "count", 11),
    SummaryColumn("mean", "Avg", "avg_ns", "duration", 9),
    SummaryColumn("median", "Med", "med_ns", "duration", 9),
    SummaryColumn("minimum", "Min", "min_ns", "duration", 9),
    SummaryColumn("maximum", "Max", "max_ns", "duration", 9),
    SummaryColumn("stdev", "StdDev", "stddev_ns", "duration", 9),
    SummaryColumn("style", "Style", "style", "text", 8),
    SummaryColumn("name", "Name", "name", "name", 0),
)


def summary_columns(kind: str) -> tuple[SummaryColumn, ...]:
    """The summary's columns; only NVTX has a Style (as `nvtx_sum`)."""
    return tuple(c for c in SUMMARY_COLUMNS if c.key != "style" or kind == "nvtx")


def summary_cell(col: SummaryColumn, value: object, ascii_only: bool = False) -> str:
    if value is None:
        return ""
    if col.fmt == "pct":
        return f"{float(value):.1f}"  # type: ignore[arg-type]
    if col.fmt == "duration":
        return fmt.duration(value, ascii_only)  # type: ignore[arg-type]
    if col.fmt == "count":
        return f"{int(value):,}"  # type: ignore[call-overload]
    return fmt.clean(str(value))


# -- column data: one canonical column read once into numpy ------------------------------

_NULL_LAST = np.iinfo(np.int64).max


@dataclass
class ColumnData:
    """A column as int64 values (codes into `labels` for text) and a validity mask."""

    values: np.ndarray
    valid: np.ndarray | None = None  # None: no nulls
    labels: list[str] | None = None  # text columns: the dictionary
    _ranks: np.ndarray | None = field(default=None, repr=False)
    _clean: list[str] | None = field(default=None, repr=False)

    def value(self, row: int) -> object:
        if self.valid is not None and not self.valid[row]:
            return None
        v = self.values[row]
        return self.labels[v] if self.labels is not None else int(v)

    def sort_key(self, descending: bool) -> np.ndarray:
        """int64 keys whose ascending order is the wanted order; nulls last either way."""
        k = self.values.astype(np.int64, copy=False)
        if self.labels is not None:
            k = self.ranks()[k]
        if descending:
            k = np.invert(k)
        if self.valid is not None:
            k = np.where(self.valid, k, _NULL_LAST)
        return k

    def ranks(self) -> np.ndarray:
        if self._ranks is None:
            labels = self.labels or []
            order = sorted(range(len(labels)), key=labels.__getitem__)
            self._ranks = np.zeros(max(len(labels), 1), dtype=np.int64)
            self._ranks[order] = np.arange(len(labels))
        return self._ranks

    def take(self, idx: np.ndarray, clean: bool = False) -> pa.Array:
        """Rows `idx` as an Arrow array (text stays dictionary-encoded)."""
        # (on buffers: `pa.array` imports pandas; model/arrays.py)
        mask = None if self.valid is None else ~self.valid[idx]
        if self.labels is None:
            return arrays.from_numpy(np.asarray(self.values[idx], np.int64), mask)
        labels = self.clean_labels() if clean else self.labels
        codes = arrays.from_numpy(self.values[idx].astype(np.int32, copy=False), mask)
        return pa.DictionaryArray.from_arrays(codes, arrays.from_strings(labels))

    def clean_labels(self) -> list[str]:
        if self._clean is None:
            self._clean = [fmt.clean(s) for s in self.labels or []]
        return self._clean


def read_column(col: pa.ChunkedArray) -> ColumnData:
    """Numbers as int64 (nulls as 0 plus a mask); strings as dictionary codes."""
    valid = None
    if col.null_count:
        valid = arrays.valid(col)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = col.dictionary_encode()
    if pa.types.is_dictionary(col.type):
        codes, labels = dictionary_codes(col)
        return ColumnData(codes, valid, labels)
    return ColumnData(_filled(col, 0).astype(np.int64, copy=False), valid)


def dictionary_codes(col: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """A dictionary column's codes (int32; nulls as 0) over one unified dictionary."""
    if col.num_chunks == 0:
        return np.zeros(0, dtype=np.int32), []
    col = col.unify_dictionaries()
    labels = ["" if s is None else str(s) for s in col.chunk(0).dictionary.to_pylist()]
    idx = pa.chunked_array([c.indices for c in col.chunks], col.type.index_type)
    return _filled(idx, 0).astype(np.int32, copy=False), labels


def _filled(col: pa.ChunkedArray, fill: int) -> np.ndarray:
    """`col` as numpy, nulls as `fill`; integers read from their buffers (no pandas
    import, see `arrays.view`), other types through pyarrow."""
    if col.num_chunks == 0:
        return np.zeros(0, dtype=arrays.numpy_dtype(col.type))
    if not pa.types.is_integer(col.type):
        if col.null_count:
            col = col.fill_null(fill)
        parts = [c.to_numpy(zero_copy_only=False) for c in col.chunks]
    else:
        parts = [arrays.filled(c, fill) for c in col.chunks]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)
