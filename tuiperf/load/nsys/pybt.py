"""Nsight Systems Python backtraces (`--python-backtrace=cuda`) -> frames, callsites.

What the export holds (tests/data/graphs/README.md, "Python backtraces"): one NVTX mark
(`NVTX_EVENTS.eventType` 34) per CUDA API call that got a backtrace, in the domain whose
NvtxDomainCreate row (eventType 75) has the text "Python Backtrace on CUDA". Its payload is
in `jsonText` (or the StringIds row `jsonTextId` names) only when the report was exported
with `nsys export --include-json=true`:
`{"Python Backtrace on CUDA": {"Frames": [{"Function": <StringId>, "File": <StringId>,
"Line": n}, ...]}}`, innermost frame first, names XML-escaped (`&lt;module&gt;`). There is no
correlation id: the mark has the same `start` and `globalTid` as its
CUPTI_ACTIVITY_KIND_RUNTIME row. The lines are the lines executing (the calling line).

Nothing is read unless the NVTX domain exists, so reports without backtraces pay nothing.
"""

from __future__ import annotations

import html
import json
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema
from tuiperf.load.dictcols import StringTable
from tuiperf.load.nsys.ids import pid_tid
from tuiperf.load.nsys.payloads import each_once, mark_texts
from tuiperf.model.arrays import where_equal


class ExportTables(Protocol):
    """What the backtraces are read through (tables.NsysReader, which calls this
    module: a Protocol here, so the two do not import each other)."""

    notes: list[str]

    def raw(self, logical: str, wanted: list[str]) -> pa.Table | None: ...

    def strings(self) -> StringTable: ...


DOMAIN = "Python Backtrace on CUDA"
_MARK = 34
_DOMAIN_CREATE = 75
NO_JSON = (
    "the report has Python backtraces, but not their frames: export it again with "
    "`nsys export --type sqlite --include-json=true` to see the source lines"
)


def python_domains(nvtx_raw: pa.Table) -> list[int]:
    """The ids of the backtrace domain(s), from raw NVTX_EVENTS rows."""
    rows = nvtx_raw.filter(where_equal(nvtx_raw["eventType"], _DOMAIN_CREATE))  # a few rows
    pairs = zip(rows["domainId"].to_pylist(), rows["text"].to_pylist(), strict=True)
    return sorted({int(d) for d, text in pairs if d is not None and text == DOMAIN})


def read_backtraces(reader: ExportTables, domains: list[int]) -> tuple[pa.Table, pa.Table] | None:
    """(callsites, frames) of the marks in `domains`; None when none has its frames."""
    wanted = ["start", "eventType", "domainId", "globalTid", "jsonText", "jsonTextId"]
    t = reader.raw("NVTX_EVENTS", wanted)
    if t is None:
        return None
    t = t.filter(
        pc.and_(
            pc.equal(t["eventType"], _MARK),
            pc.is_in(t["domainId"], pa.array(domains, t["domainId"].type)),
        )
    )
    stacks = each_once(mark_texts(t, reader.strings), _frames)
    has = np.array([bool(s) for s in stacks], dtype=bool)
    if not has.any():
        if t.num_rows:
            reader.notes.append(NO_JSON)
        return None
    t = t.filter(pa.array(has))
    stacks = [s for s in stacks if s]
    frames, leaf = _intern(reader, stacks)
    api = _api_rows(reader, t)
    pid, tid = pid_tid(t["globalTid"])
    cols: dict[str, Any] = {
        "start": t["start"],
        "pid": pid,
        "tid": tid,
        "nested": pa.array(np.zeros(t.num_rows, bool)),
        "frame_id": pa.array(leaf, pa.int64()),
        **api,
    }
    calls = schema.conform("callsites", cols, t.num_rows)
    calls = calls.take(pc.sort_indices(calls["start"]))
    return calls, frames


def _frames(text: str | None) -> list[tuple[int, int, int]]:
    """(function id, file id, line) innermost first; [] for no or unreadable payload."""
    if not text:
        return []
    try:
        frames = json.loads(text).get(DOMAIN, {}).get("Frames", [])
        return [(int(f["Function"]), int(f["File"]), int(f["Line"])) for f in frames]
    except (ValueError, TypeError, KeyError, AttributeError):
        return []


def _intern(
    reader: ExportTables, stacks: list[list[tuple[int, int, int]]]
) -> tuple[pa.Table, list[int]]:
    """The stacks as a tree (shared callers are one frame); the innermost frame of each."""
    nodes: dict[tuple[int, int, int, int], int] = {}
    leaf = []
    for stack in stacks:
        parent = -1
        for fn, file, line in reversed(stack):
            parent = nodes.setdefault((parent, fn, file, line), len(nodes))
        leaf.append(parent)
    keys = list(nodes)
    ids = sorted({k[1] for k in keys} | {k[2] for k in keys})
    names = reader.strings().encode(pa.array(ids, pa.int64())).cast(pa.string()).to_pylist()
    text = {i: html.unescape(n or "") for i, n in zip(ids, names)}
    parent_ids = [k[0] for k in keys]
    cols = {
        "frame_id": pa.array(range(len(keys)), pa.int64()),
        "parent_id": pa.array(parent_ids, pa.int64(), mask=np.array(parent_ids) < 0),
        "file": pa.array([text[k[2]] for k in keys]).dictionary_encode(),
        "line": pa.array([k[3] for k in keys], pa.int32()),
        "function": pa.array([text[k[1]] for k in keys]).dictionary_encode(),
    }
    return schema.conform("frames", cols, len(keys)), leaf


def _api_rows(reader: ExportTables, marks: pa.Table) -> dict[str, Any]:
    """correlation_id, duration and name of the API call at each mark's (start, globalTid)."""
    cols = ["start", "end", "globalTid", "correlationId", "nameId"]
    api = reader.raw("CUPTI_ACTIVITY_KIND_RUNTIME", cols)
    if api is None:
        return {}
    api = api.filter(pc.is_in(api["start"], marks["start"]))
    if api.num_rows == 0:
        return {}
    hit = _first(_keys(marks["start"], marks["globalTid"]), _keys(api["start"], api["globalTid"]))
    found = pa.array(hit >= 0)
    at = pa.array(np.maximum(hit, 0))

    def pick(col: str) -> pa.Array:
        values = api[col].combine_chunks().cast(pa.int64()).take(at)
        return pc.if_else(found, values, pa.scalar(None, pa.int64()))

    start, end = pick("start"), pick("end")
    names = reader.strings().encode(pick("nameId"))
    return {
        "correlation_id": pick("correlationId"),
        "duration": pc.subtract(end, start),
        "name": names,
    }


def _keys(start: pa.ChunkedArray, gtid: pa.ChunkedArray) -> np.ndarray:
    s = start.to_numpy(zero_copy_only=False).astype(np.int64)
    g = gtid.to_numpy(zero_copy_only=False).astype(np.int64)
    return np.stack([s, g], axis=1)


def _first(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """For each (start, globalTid) pair in `left`, a row of `right` with the same pair, or -1."""
    index: dict[tuple[int, int], int] = {}
    for i, (s, g) in enumerate(right.tolist()):
        index.setdefault((s, g), i)
    return np.array([index.get((s, g), -1) for s, g in left.tolist()], dtype=np.int64)
