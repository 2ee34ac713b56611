"""Summary reports by name, with their results kept in the cache beside the tables."""

from __future__ import annotations

import json
from collections.abc import Callable

import pyarrow as pa

from tuiperf.model.trace import Trace
from tuiperf.summaries import names, stats, stored
from tuiperf.summaries.stats import Column, StatsTable

#: reports other modules add (the torch.profiler op summary here; the step budget, which
#: the analysis floor above computes, by `register` from the summary command)
EXTRA_REPORTS: dict[str, tuple[Callable[[Trace], StatsTable], tuple[str, ...]]] = {}


def register(name: str, make: Callable[[Trace], StatsTable], tables: tuple[str, ...]) -> None:
    """Offer report `name`, computed by `make` from `tables` (empty when none has a row)."""
    EXTRA_REPORTS[name] = (make, tables)


def resolve(name: str) -> str | None:
    found = names.resolve(name)
    return found if found in EXTRA_REPORTS or found in stats.REPORTS else None


def source_tables(name: str) -> tuple[str, ...]:
    if name in EXTRA_REPORTS:
        return EXTRA_REPORTS[name][1]
    return stats.SOURCE_TABLES[name]


def report_is_empty(trace: Trace, name: str) -> bool:
    """True when none of the tables the report reads has a row (nsys: a 0-byte CSV)."""
    return not any(trace.has(t) for t in source_tables(name))


def graph_note(trace: Trace, name: str) -> str:
    """The line under a GPU-work report saying what it leaves out, as nsys stats does:
    the report's CUDA graph executions and their GPU time; "" when it has none."""
    if name not in names.GRAPHLESS_REPORTS or not trace.has("graphs"):
        return ""
    import pyarrow.compute as pc

    from tuiperf.model import fmt

    g = trace.table("graphs", ["duration"])
    ns = int(pc.sum(g["duration"]).as_py() or 0)
    n = g.num_rows
    what = "execution is" if n == 1 else "executions are"
    return (
        f"note: {n:,} CUDA graph {what} not in this report ({fmt.duration(ns)} of GPU time), "
        "as in nsys stats"
    )


def compute(trace: Trace, name: str) -> StatsTable:
    if name in EXTRA_REPORTS:
        return EXTRA_REPORTS[name][0](trace)
    return stats.compute(trace, name)


def compute_cached(trace: Trace, name: str) -> StatsTable:
    """`compute`, reusing a result stored in the cache entry of this trace."""
    cache, key = trace.cache, trace.cache_key
    if cache is None or key is None:
        return compute(trace, name)
    hit = cache.load_derived(key, f"summary-{name}")
    table = _restore(hit, name) if hit is not None else None
    if table is None:
        table = compute(trace, name)
        cache.store_derived(key, f"summary-{name}", _with_columns(table))
    entry = cache.entry(key)
    if stored.read(entry, name) is None:  # absent or damaged: (re)write it
        stored.store(entry, table, report_is_empty(trace, name), trace.meta.source)
    return table


def _with_columns(table: StatsTable) -> pa.Table:
    cols = [[c.header, c.key, c.fmt] for c in table.columns]
    meta = {b"tuiperf.columns": json.dumps(cols).encode(), b"tuiperf.report": table.report.encode()}
    return table.data.replace_schema_metadata(meta)


def _restore(data: pa.Table, name: str) -> StatsTable | None:
    meta = data.schema.metadata or {}
    try:
        cols = [Column(*c) for c in json.loads(meta[b"tuiperf.columns"])]
        if meta[b"tuiperf.report"].decode() != name:
            return None
    except (KeyError, ValueError, TypeError):
        return None
    return StatsTable(name, cols, data.replace_schema_metadata(None))


def _op_summary(trace: Trace) -> StatsTable:
    from tuiperf.summaries.ops import op_summary  # imported on use: summaries stays cheap

    return op_summary(trace)


#: torch.profiler's CPU operator summary (TensorBoard's Operator view)
EXTRA_REPORTS["op_sum"] = (_op_summary, ("nvtx",))


def _by_line(trace: Trace) -> StatsTable:
    from tuiperf.summaries.by_line import by_line

    return by_line(trace)


#: GPU time and syncs by source line, from the Python stacks (issue 22)
EXTRA_REPORTS["by_line"] = (_by_line, ("callsites",))


def _cpu_samples(trace: Trace) -> StatsTable:
    from tuiperf.summaries.cpu_samples import cpu_samples

    return cpu_samples(trace)


#: CPU samples by function: self and total, per thread and overall (issue 34)
EXTRA_REPORTS["cpu_samples"] = (_cpu_samples, ("cpu_samples",))
