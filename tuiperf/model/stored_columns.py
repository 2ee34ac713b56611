"""Columns of a trace's tables as a cache entry stores them, back in their canonical types.

A cache entry keeps a timeline's tables small (load/cache/narrow.py `core`): `start` and
`end` as they are (memory-mapped, used in place), every other integer and dictionary column
in the narrowest type its values fit, and `duration` left out where it is `end - start` in
every row. `Trace.table` hands out canonical columns only: a column used for the first time
is widened (or, `duration`, computed) here, once, and kept in the trace.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema


def provides(name: str, t: pa.Table) -> set[str]:
    """The columns `t` can hand out: its own, and `duration` where it computes it."""
    have = set(t.column_names)
    canonical = schema.TABLES.get(name)
    if canonical is not None and "duration" in canonical.names and {"start", "end"} <= have:
        have.add("duration")
    return have


def to_restore(name: str, t: pa.Table, columns: list[str] | None) -> list[str]:
    """Which of `columns` (None: every canonical column) `t` holds narrower than canonical,
    or lacks while it can compute it (`duration` from `start` and `end`)."""
    canonical = schema.TABLES.get(name)
    if canonical is None:
        return []
    have = t.schema
    out = []
    for n in columns if columns is not None else canonical.names:
        at = canonical.get_field_index(n)
        if at < 0:
            continue
        i = have.get_field_index(n)
        if i >= 0:
            if have.field(i).type != canonical.field(at).type:
                out.append(n)
        elif n == "duration" and "start" in have.names and "end" in have.names:
            out.append(n)
    return out


def restored(name: str, t: pa.Table, columns: list[str]) -> pa.Table:
    """`t` with `columns` (from `to_restore`) in their canonical types; a computed
    `duration` goes where the canonical order puts it among `t`'s columns."""
    canonical = schema.TABLES[name]
    for n in columns:
        field = canonical.field(n)
        i = t.schema.get_field_index(n)
        if i >= 0:
            t = t.set_column(i, field, t.column(i).cast(field.type))
            continue
        rank = canonical.get_field_index(n)
        at = sum(1 for c in t.column_names if canonical.get_field_index(c) < rank)
        t = t.add_column(at, field, pc.subtract(t["end"], t["start"]))
    return t


def merged(name: str, core: pa.Table, details: pa.Table) -> pa.Table:
    """Core and detail columns of the same rows in canonical order, each column as it is
    (`schema.merge_details` with the core as stored: narrow, `duration` perhaps computed
    later); every canonical column must be there or computable."""
    cols = {n: core[n] for n in core.column_names}
    cols |= {n: details[n] for n in details.column_names if n != "start"}
    fields = []
    for f in schema.TABLES[name]:
        if f.name in cols:
            fields.append(pa.field(f.name, cols[f.name].type))
        elif f.name not in provides(name, core):
            raise KeyError(f"{name}: no column {f.name}")
    return pa.Table.from_arrays([cols[f.name] for f in fields], schema=pa.schema(fields))
