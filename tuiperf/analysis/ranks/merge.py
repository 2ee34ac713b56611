"""Every rank on one timeline: the per-rank traces as one Trace, on the aligned clock.

Each report's times are shifted by its clock offset (analysis.ranks.assemble), its processes
keep their pids unless two reports share one (separate machines), and each process is named
after its rank, so the viewer shows a lane group per rank beside the GPUs' groups. A report
holding several ranks (one process each) names each of those processes after its own rank.
GPUs keep their device numbers: ranks that shared one GPU share its group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema
from tuiperf.model.trace import Trace, TraceMeta

#: time columns shifted onto the common clock
_TIME_COLUMNS = ("start", "end")
#: pid offset given to a rank whose pids collide with an earlier rank's
_PID_STRIDE = 1 << 32


@dataclass(frozen=True)
class Report:
    """One report of the set: its trace, its rank(s) and its clock offset."""

    trace: Trace
    rank: int  # the report's (first) rank: names its processes unless `pids` does
    offset: int = 0  # ns subtracted from its times
    #: pid -> rank, for a report that holds several ranks (one process each); its other
    #: processes (a launcher) keep their own names
    pids: dict[int, int] = field(default_factory=dict)

    @property
    def ranks(self) -> int:
        return len(self.pids) or 1


def merge(reports: list[Report], source: str) -> Trace:
    """One Trace of the reports, each on the common clock and its processes named by rank."""
    parts: dict[str, list[pa.Table]] = {n: [] for n in schema.TABLES}
    seen_pids: set[int] = set()
    devices: dict[int, dict] = {}
    for rep in reports:
        trace, rank = rep.trace, rep.rank
        trace.complete_all()
        pids = _pids(trace)
        shift_pid = rank * _PID_STRIDE if pids & seen_pids else 0
        seen_pids |= {p + shift_pid for p in pids}
        for name in schema.TABLES:
            t = trace.table(name)
            if name == "devices":
                for row in t.to_pylist():
                    devices.setdefault(row["device"], row)
                continue
            if name in ("processes", "threads", "streams"):
                t = _only(t, pids)
            if name == "processes":  # by the report's own pids, before any shift
                t = _named(t, rep)
            t = _shifted(t, rep.offset, shift_pid)
            parts[name].append(t)
    tables = {n: _concat(n, ts) for n, ts in parts.items() if n != "devices"}
    tables["devices"] = pa.Table.from_pylist(list(devices.values()), schema=schema.DEVICES)
    first = reports[0].trace.meta
    ranks = sum(r.ranks for r in reports)
    meta = TraceMeta(
        source=source,
        format=first.format,
        tool=first.tool,
        tool_version=first.tool_version,
        capture=sorted({c for r in reports for c in r.trace.meta.capture}),
        diagnostics=[f"{ranks} ranks on one clock (tuiperf ranks --merge)"],
    )
    return Trace(tables, meta)


def _pids(trace: Trace) -> set[int]:
    """The processes with events (a report lists every process of the machine)."""
    found: set[int] = set()
    for name in schema.EVENT_TABLES:
        t = trace.table(name)
        if "pid" in t.column_names and t.num_rows:
            found |= {p for p in pc.unique(t["pid"]).to_pylist() if p is not None}
    return found


def _only(t: pa.Table, pids: set[int]) -> pa.Table:
    if "pid" not in t.column_names or t.num_rows == 0:
        return t
    keep = pc.is_in(t["pid"], value_set=pa.array(sorted(pids), t.schema.field("pid").type))
    return t.filter(keep)


def _shifted(t: pa.Table, offset: int, pid_shift: int) -> pa.Table:
    for col in _TIME_COLUMNS:
        if col in t.column_names and offset:
            i = t.schema.get_field_index(col)
            t = t.set_column(i, col, pc.subtract(t[col], pa.scalar(offset, pa.int64())))
    if "pid" in t.column_names and pid_shift:
        i = t.schema.get_field_index("pid")
        t = t.set_column(i, "pid", pc.add(t["pid"], pa.scalar(pid_shift, pa.int64())))
    return t


def _named(t: pa.Table, rep: Report) -> pa.Table:
    """Each process named after its rank: a rank's own process in a report of several
    ranks, every process of a report that is one rank."""
    names = []
    for pid, n in zip(t["pid"].to_pylist(), t["name"].to_pylist(), strict=True):
        rank = rep.pids.get(pid) if rep.pids else rep.rank
        names.append(n if rank is None else f"rank {rank}: {n}" if n else f"rank {rank}")
    return t.set_column(t.schema.get_field_index("name"), "name", pa.array(names, pa.string()))


def _concat(name: str, tables: list[pa.Table]) -> pa.Table:
    """The tables one after the other, dictionary columns unified (one dictionary each)."""
    if not tables:
        return schema.empty(name)
    t = pa.concat_tables([x.cast(schema.TABLES[name]) for x in tables])
    t = t.unify_dictionaries().combine_chunks()
    return t.sort_by("start") if name in schema.EVENT_TABLES else t
