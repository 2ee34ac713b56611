"""The events table's Graphs kind: each whole CUDA graph execution with the API call that
launched it (`cudaGraphLaunch`), joined on the process and the correlation id as nsys links
them (tests/data/graphs/README.md)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model.api_names import api_display_name
from tuiperf.model.arrays import from_strings
from tuiperf.model.trace import Trace

#: the column the join adds to the graphs table
LAUNCH = "launch"


def with_launch(trace: Trace, graphs: pa.Table) -> pa.Table:
    """`graphs` plus a `launch` column: the display name of the CUDA API call with the same
    (pid, correlation_id), or null where none is in the report."""
    names: list[str | None] = [None] * graphs.num_rows
    if graphs.num_rows:
        api = trace.table("api", ["pid", "correlation_id", "name"])
        launches = _launch_names(api, graphs)
        keys = zip(graphs["pid"].to_pylist(), graphs["correlation_id"].to_pylist(), strict=True)
        names = [launches.get(k) for k in keys]
    return graphs.append_column(LAUNCH, from_strings(names))  # (`pa.array` imports pandas)


def _launch_names(api: pa.Table, graphs: pa.Table) -> dict[tuple[int, int], str]:
    """(pid, correlation id) -> the API call's display name, for the graphs' ids only."""
    ids = graphs["correlation_id"].combine_chunks().cast(api["correlation_id"].type)
    wanted = pc.is_in(api["correlation_id"], value_set=ids)  # (graphs may be held narrow)
    hits = api.filter(wanted)
    out: dict[tuple[int, int], str] = {}
    for pid, corr, name in zip(
        hits["pid"].to_pylist(),
        hits["correlation_id"].to_pylist(),
        hits["name"].to_pylist(),
        strict=True,
    ):
        out.setdefault((pid, corr), api_display_name(name or ""))
    return out
