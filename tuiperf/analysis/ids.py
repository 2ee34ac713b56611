"""Stable ids for findings and their evidence rows, derived from content alone.

- an evidence row that is an event: `TABLE:ROW`, the canonical table and the row's index in
  it (`kernels:1234`, `memcpy:17`) — the same report gives the same id on every run;
- an evidence row that is a stretch of time (a gap, a step part): `at:START+DURATION` (ns);
- a finding: its rule (`pageable_h2d_in_steps`); where the rule fired more than once,
  the rule and the id of its first evidence row (`slow_kernel@kernels:17`), else its scope.

An Nsight Compute report's findings name its profiled kernels: `ncu_kernels:ID` (ncu's own
kernel ID) for a report analyzed alone, the linked launches (`kernels:ROW`) where a timeline
is linked; their rules are ncu's own (`ncu:TheoreticalOccupancy`).

`tuiperf REPORT --goto ID` takes any of them (`parse`: an event, a stretch or a finding).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from tuiperf.schema import EVENT_TABLES

if TYPE_CHECKING:
    from tuiperf.analysis.findings import Evidence, Finding

#: the evidence table of an Nsight Compute report's kernels (rows: ncu's kernel IDs)
NCU_TABLE = "ncu_kernels"
_TABLES = (*EVENT_TABLES, NCU_TABLE)
_EVENT = re.compile(r"^([a-z_]+):(\d+)$")
_SPAN = re.compile(r"^at:(-?\d+)\+(\d+)$")
_RULE = re.compile(r"^(ncu:[A-Za-z0-9_]+|[a-z0-9_]+)(@\S+)?$")


@dataclass(frozen=True)
class Target:
    """Where an id points: an event (`table`, `row`), a stretch of time, or a finding."""

    table: str = ""
    row: int | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    finding: str = ""  # a finding id, still to be resolved against the analysis


def row_id(table: str | None, row: int | None, start: int | None, dur: int | None) -> str:
    if table and row is not None:
        return f"{table}:{int(row)}"
    if start is not None:
        return f"at:{int(start)}+{int(dur or 0)}"
    return ""


def evidence_ids(ev: Evidence) -> list[str]:
    """One id per evidence row ('' for a row that is neither an event nor a time span)."""
    return table_ids(ev.rows)


def table_ids(t: pa.Table) -> list[str]:
    """`evidence_ids` of evidence rows as a table (any slice of them)."""
    cols = [t[c].to_pylist() if c in t.column_names else [None] * t.num_rows
            for c in ("table", "row", "start_ns", "duration_ns")]  # fmt: skip
    return [row_id(*r) for r in zip(*cols, strict=True)]


def finding_ids(findings: list[Finding]) -> list[str]:
    """Each finding's id, in the findings' order; distinct where the content differs."""
    times = Counter(f.rule for f in findings)
    out: list[str] = []
    for f in findings:
        fid = f.rule
        if times[f.rule] > 1:
            first = table_ids(f.evidence.rows.slice(0, 1))
            fid += "@" + (first[0] if first and first[0] else _slug(f.scope.text()))
        n, base = 2, fid
        while fid in out:  # two findings of one content: numbered in order
            fid, n = f"{base}#{n}", n + 1
        out.append(fid)
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.:+-]+", "_", text).strip("_")[:60] or "report"


def parse(text: str) -> Target:
    """An id as typed after --goto; ValueError when it is none of the three shapes."""
    s = text.strip()
    m = _EVENT.match(s)
    if m and m.group(1) in _TABLES:
        return Target(table=m.group(1), row=int(m.group(2)))
    m = _SPAN.match(s)
    if m:
        start = int(m.group(1))
        return Target(start_ns=start, end_ns=start + int(m.group(2)))
    if _RULE.match(s):
        return Target(finding=s)
    raise ValueError(
        f"not an id: {text!r} (an event TABLE:ROW such as kernels:12 or ncu_kernels:3, a "
        "time span at:START+DURATION in ns, or a finding id from analyze)"
    )


def target_of(f: Finding) -> Target | None:
    """Where a finding points: its first evidence row that is an event (an ncu kernel
    too) or a span."""
    t = f.evidence.rows
    for r in t.select([c for c in ("table", "row", "start_ns", "duration_ns")
                       if c in t.column_names]).to_pylist():  # fmt: skip
        if r.get("table") in _TABLES and r.get("row") is not None:
            return Target(table=r["table"], row=int(r["row"]))
        if r.get("start_ns") is not None:
            start = int(r["start_ns"])
            return Target(start_ns=start, end_ns=start + int(r.get("duration_ns") or 0))
    return None


def with_ids(rows: pa.Table) -> pa.Table:
    """Evidence rows with their `id` column first."""
    from tuiperf.analysis.findings import Evidence

    return rows.add_column(0, "id", pa.array(evidence_ids(Evidence(rows)), pa.string()))
