"""Nsight Systems Python sampling (`--python-sampling=true`) -> Python cpu_samples.

nsys 2025.3 writes each Python sample as an NVTX mark (`NVTX_EVENTS.eventType` 34) in the
domain whose NvtxDomainCreate row (eventType 75) has the text `Python Periodic Sampling`,
with the frame payload of the Python backtraces (docs/formats-cpu-samples.md): `{"Python
Periodic Sampling": {"Frames": [{"Function": <StringId>, "File":
<StringId>, "Line": n}, ...]}}`, innermost first, readable only from an export made with
`nsys export --include-json=true`. The frames sit under the key `Python Periodic Sampling`
(seen on tests/data/cpu_samples/slow.sqlite.xz); any top-level object with `Frames` is read,
in case a later nsys names it otherwise.
`SAMPLING_CALLCHAINS` never holds Python frames (native only).
"""

from __future__ import annotations

import html
import json
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema
from tuiperf.load.dictcols import StringTable
from tuiperf.load.nsys.ids import pid_tid
from tuiperf.load.nsys.payloads import each_once, mark_texts

DOMAIN = "Python Periodic Sampling"
_MARK = 34
_DOMAIN_CREATE = 75
NO_JSON = (
    "the report has Python samples, but not their frames: export it again with "
    "`nsys export --type sqlite --include-json=true` to see the Python functions"
)

Frame = tuple[int, int, int]  # function StringId, file StringId, line
Nodes = dict[tuple[int, Frame], int]  # (caller node, frame) -> node id


class ExportTables(Protocol):
    notes: list[str]

    def raw(self, logical: str, wanted: list[str]) -> pa.Table | None: ...

    def strings(self) -> StringTable: ...


def read_python(reader: ExportTables, first_node: int) -> tuple[pa.Table, pa.Table] | None:
    """(cpu_samples, sample_stacks) of the Python samples, stack node ids from
    `first_node` on; None when the report has none (or none readable)."""
    cols = ["start", "eventType", "domainId", "text", "globalTid", "jsonText", "jsonTextId"]
    t = reader.raw("NVTX_EVENTS", cols)
    if t is None:
        return None
    created = t.filter(pc.equal(t["eventType"], _DOMAIN_CREATE))
    domains = [d for d, x in zip(created["domainId"].to_pylist(), created["text"].to_pylist(),
                                 strict=True) if x == DOMAIN and d is not None]  # fmt: skip
    if not domains:
        return None
    marks = t.filter(
        pc.and_(
            pc.equal(t["eventType"], _MARK),
            pc.is_in(t["domainId"], pa.array(domains, t["domainId"].type)),
        )
    )
    stacks = each_once(mark_texts(marks, reader.strings), _frames)
    keep = np.array([bool(x) for x in stacks], bool)
    if not keep.any():
        if marks.num_rows:
            reader.notes.append(NO_JSON)
        return None
    marks = marks.filter(pa.array(keep))
    nodes, leaf = _intern([x for x in stacks if x], first_node)
    return _samples(reader, marks, nodes, leaf), _stacks(reader, nodes, first_node)


def _frames(text: str | None) -> list[Frame]:
    """The frames of one payload, innermost first; [] when unreadable."""
    if not text:
        return []
    try:
        body = json.loads(text)
        frames = next(v["Frames"] for v in body.values() if isinstance(v, dict) and "Frames" in v)
        return [(int(f["Function"]), int(f["File"]), int(f["Line"])) for f in frames]
    except (ValueError, TypeError, KeyError, AttributeError, StopIteration):
        return []


def _intern(
    stacks: list[list[Frame]], first: int
) -> tuple[dict[tuple[int, Frame], int], list[int]]:
    """Shared callers are one node: (caller node, frame) -> node id; the innermost of each."""
    nodes: Nodes = {}
    leaf = []
    for stack in stacks:
        parent = -1
        for frame in reversed(stack):
            parent = nodes.setdefault((parent, frame), first + len(nodes))
        leaf.append(parent)
    return nodes, leaf


def _names(reader: ExportTables, ids: list[int]) -> pa.Array:
    got = reader.strings().encode(pa.array(ids, pa.int64())).cast(pa.string()).to_pylist()
    return pa.array([html.unescape(x or "") for x in got], pa.string())


def _stacks(reader: ExportTables, nodes: Nodes, first: int) -> pa.Table:
    keys = list(nodes)
    parent = np.array([k[0] for k in keys], np.int64)
    cols = {
        "node_id": pa.array(np.arange(first, first + len(keys), dtype=np.int64)),
        "parent_id": pa.array(parent, pa.int64(), mask=parent < 0),
        "function": _names(reader, [k[1][0] for k in keys]).dictionary_encode(),
        "module": _names(reader, [k[1][1] for k in keys]).dictionary_encode(),
        "line": pa.array([k[1][2] for k in keys], pa.int32()),
        "python": pa.array(np.ones(len(keys), bool)),
    }
    return schema.conform("sample_stacks", cols, len(keys))


def _samples(reader: ExportTables, marks: pa.Table, nodes: Nodes, leaf: list[int]) -> pa.Table:
    used = set(leaf)
    inner = {v: k[1] for k, v in nodes.items() if v in used}
    pid, tid = pid_tid(marks["globalTid"])
    n = marks.num_rows
    cols = {
        "start": marks["start"],
        "pid": pid,
        "tid": tid,
        "kind": pa.array(["python"] * n).dictionary_encode(),
        "function": _names(reader, [inner[x][0] for x in leaf]).dictionary_encode(),
        "module": _names(reader, [inner[x][1] for x in leaf]).dictionary_encode(),
        "stacked": pa.array(np.ones(n, bool)),
        "stack_id": pa.array(leaf, pa.int64()),
    }
    return schema.conform("cpu_samples", cols, n)
