"""The `nsys stats` reports, computed from a Trace (same rows, order and values).

Each report is a `StatsTable`: typed raw values (Arrow) plus, per column, the
header `nsys stats` prints and how it formats the value. The CSV, the Rich
table, JSON and the TUI all read this one result.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from tuiperf.model.api_names import api_display_name
from tuiperf.model.arrays import as_int64, filled, from_numpy, from_strings
from tuiperf.model.groupstats import GroupStats, group_stats
from tuiperf.model.trace import Trace
from tuiperf.summaries.gpu_trace import gpu_trace
from tuiperf.summaries.table import Column, StatsTable

_SUM_TAIL = [
    Column("Avg (ns)", "avg_ns", "f1"),
    Column("Med (ns)", "med_ns", "f1"),
    Column("Min (ns)", "min_ns", "int"),
    Column("Max (ns)", "max_ns", "int"),
    Column("StdDev (ns)", "stddev_ns", "f1"),
]


def _time_columns(count_header: str) -> list[Column]:
    return [
        Column("Time (%)", "time_pct", "pct"),
        Column("Total Time (ns)", "total_ns", "int"),
        Column(count_header, "count", "int"),
        *_SUM_TAIL,
    ]


def _stats_table(
    report: str, columns: list[Column], st: GroupStats, names: dict[str, list[str]]
) -> StatsTable:
    """Rows ordered by total descending; `names` holds the label columns, by group key."""
    order = st.order_by_total()
    grand = float(st.total.sum()) or 1.0
    values: dict[str, object] = {
        "time_pct": 100.0 * st.total[order] / grand,
        "total_ns": st.total[order],
        "count": st.count[order],
        "avg_ns": st.mean[order],
        "med_ns": st.median[order],
        "min_ns": st.minimum[order],
        "max_ns": st.maximum[order],
        "stddev_ns": st.stdev[order],
    }
    for key, labels in names.items():
        values[key] = from_strings([labels[i] for i in order])
    data = pa.table({c.key: _arrow(values[c.key]) for c in columns})
    return StatsTable(report, columns, data)


def _codes(col: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Dictionary column -> (int codes, labels); nulls become the label ''."""
    # pyarrow.compute (~0.1 s to import) only where needed: a clean dictionary column of
    # the cache needs none
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if not pa.types.is_dictionary(arr.type):
        import pyarrow.compute as pc

        arr = pc.dictionary_encode(arr)
    labels = [str(x) for x in arr.dictionary.to_pylist()]
    idx = arr.indices
    if idx.null_count:
        codes = filled(idx, len(labels))
        labels.append("")
        return codes.astype(np.int64), labels
    return filled(idx, -1).astype(np.int64), labels


def _durations(t: pa.Table) -> np.ndarray:
    return as_int64(t["duration"], 0)


def _arrow(values: object) -> object:
    """Numbers computed in numpy as Arrow, without `pa.array`'s pandas import (see
    model/arrays.py); Arrow arrays as they are."""
    return from_numpy(values) if isinstance(values, np.ndarray) else values


def kern_sum(trace: Trace, base: str = "name") -> StatsTable:
    t = trace.table("kernels", [base, "duration"])
    codes, labels = _codes(t[base])
    st = group_stats(codes, _durations(t))
    cols = [*_time_columns("Instances"), Column("Name", "name", "str")]
    return _stats_table("cuda_gpu_kern_sum", cols, st, {"name": [labels[k] for k in st.keys]})


def api_sum(trace: Trace) -> StatsTable:
    t = trace.table("api", ["name", "duration"])
    codes, labels = _codes(t["name"])
    st = group_stats(codes, _durations(t))
    cols = [*_time_columns("Num Calls"), Column("Name", "name", "str")]
    names = [api_display_name(labels[k]) for k in st.keys]
    return _stats_table("cuda_api_sum", cols, st, {"name": names})


def osrt_sum(trace: Trace) -> StatsTable:
    t = trace.table("osrt")
    codes, labels = _codes(t["name"])
    st = group_stats(codes, _durations(t))
    cols = [*_time_columns("Num Calls"), Column("Name", "name", "str")]
    return _stats_table("osrt_sum", cols, st, {"name": [labels[k] for k in st.keys]})


def _mem_groups(trace: Trace, value: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Memcpy grouped by copy kind, all memsets as one group: (codes, values, labels)."""
    mc, ms = trace.table("memcpy"), trace.table("memset")
    codes, kinds = _codes(mc["copy_kind"])
    labels = [f"[CUDA memcpy {k}]" for k in kinds] + ["[CUDA memset]"]
    all_codes = np.concatenate([codes, np.full(ms.num_rows, len(kinds), dtype=np.int64)])
    vals = [as_int64(mc[value], 0), as_int64(ms[value], 0)]
    return all_codes, np.concatenate(vals).astype(np.int64), labels


def mem_time_sum(trace: Trace) -> StatsTable:
    codes, vals, labels = _mem_groups(trace, "duration")
    st = group_stats(codes, vals)
    cols = [*_time_columns("Count"), Column("Operation", "operation", "str")]
    return _stats_table(
        "cuda_gpu_mem_time_sum", cols, st, {"operation": [labels[k] for k in st.keys]}
    )


def mem_size_sum(trace: Trace) -> StatsTable:
    codes, vals, labels = _mem_groups(trace, "bytes")
    st = group_stats(codes, vals)
    order = st.order_by_total()
    data = pa.table({
        "total_mb": _arrow(st.total[order] / 1e6),
        "count": _arrow(st.count[order]),
        "avg_mb": _arrow(st.mean[order] / 1e6),
        "med_mb": _arrow(st.median[order] / 1e6),
        "min_mb": _arrow(st.minimum[order] / 1e6),
        "max_mb": _arrow(st.maximum[order] / 1e6),
        "stddev_mb": _arrow(st.stdev[order] / 1e6),
        "operation": from_strings([labels[st.keys[i]] for i in order]),
    })  # fmt: skip
    cols = [
        Column("Total (MB)", "total_mb", "f3"),
        Column("Count", "count", "int"),
        Column("Avg (MB)", "avg_mb", "f3"),
        Column("Med (MB)", "med_mb", "f3"),
        Column("Min (MB)", "min_mb", "f3"),
        Column("Max (MB)", "max_mb", "f3"),
        Column("StdDev (MB)", "stddev_mb", "f3"),
        Column("Operation", "operation", "str"),
    ]
    return StatsTable("cuda_gpu_mem_size_sum", cols, data)


def nvtx_sum(trace: Trace) -> StatsTable:
    import pyarrow.compute as pc

    t = trace.table("nvtx")
    t = t.filter(
        pc.and_(
            pc.invert(pc.is_null(t["end"])),
            pc.is_in(t["style"].cast(pa.string()), pa.array(["PushPop", "StartEnd"])),
        )
    )
    dom, dom_labels = _codes(t["domain"])
    txt, txt_labels = _codes(t["text"])
    sty, sty_labels = _codes(t["style"])
    key = (dom * (len(txt_labels) + 1) + txt) * (len(sty_labels) + 1) + sty
    st = group_stats(key, _durations(t))
    ranges, styles = [], []
    for k in st.keys:
        rest, s = divmod(int(k), len(sty_labels) + 1)
        d, x = divmod(rest, len(txt_labels) + 1)
        ranges.append(f"{dom_labels[d]}:{txt_labels[x]}")
        styles.append(sty_labels[s])
    cols = [
        *_time_columns("Instances"),
        Column("Style", "style", "str"),
        Column("Range", "range", "str"),
    ]
    return _stats_table("nvtx_sum", cols, st, {"style": styles, "range": ranges})


ReportFn = Callable[[Trace], StatsTable]


REPORTS: dict[str, ReportFn] = {
    "cuda_gpu_kern_sum": kern_sum,
    "cuda_api_sum": api_sum,
    "cuda_gpu_mem_time_sum": mem_time_sum,
    "cuda_gpu_mem_size_sum": mem_size_sum,
    "nvtx_sum": nvtx_sum,
    "osrt_sum": osrt_sum,
    "cuda_gpu_trace": gpu_trace,
}

#: the table each report reads; a report over a table the source lacks is empty
SOURCE_TABLES = {
    "cuda_gpu_kern_sum": ("kernels",),
    "cuda_api_sum": ("api",),
    "cuda_gpu_mem_time_sum": ("memcpy", "memset"),
    "cuda_gpu_mem_size_sum": ("memcpy", "memset"),
    "nvtx_sum": ("nvtx",),
    "osrt_sum": ("osrt",),
    "cuda_gpu_trace": ("kernels", "memcpy", "memset"),
}


def compute(trace: Trace, report: str) -> StatsTable:
    return REPORTS[report](trace)
