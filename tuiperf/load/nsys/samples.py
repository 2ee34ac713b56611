"""Nsight Systems CPU samples (`--sample=process-tree`) -> cpu_samples, sample_stacks.

What the export holds (docs/formats-cpu-samples.md): `COMPOSITE_EVENTS(id, start, cpu,
threadState, globalTid, cpuCycles)`, one row per sample of a thread, and
`SAMPLING_CALLCHAINS(id, symbol, module, stackDepth, ...)`, its call chain: `id` is the
sample's, `stackDepth` 0 the sampled function (innermost), the largest the outermost
(`_start`); `symbol` and `module` are StringIds. nsys 2025.3 keeps a whole chain for one
sample in four (`--samples-per-backtrace`); the others hold the sampled frame only
(`stacked` false here).

The chains become a tree (`sample_stacks`: callers shared, one node per distinct path from
the outermost frame), built level by level from the outermost frame with numpy, so a long
capture costs one sort per stack level, not a Python loop per frame.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema
from tuiperf.load.dictcols import StringTable
from tuiperf.load.nsys import py_samples
from tuiperf.load.nsys.ids import pid_tid


class ExportTables(Protocol):
    """What the samples are read through (tables.NsysReader)."""

    notes: list[str]

    def raw(self, logical: str, wanted: list[str]) -> pa.Table | None: ...

    def strings(self) -> StringTable: ...


def read_samples(reader: ExportTables) -> tuple[pa.Table, pa.Table] | None:
    """(cpu_samples, sample_stacks): the native samples, then nsys's Python samples (their
    nodes numbered after the native ones); None when the report has neither."""
    native = read_native(reader)
    if native is None:
        return None  # Python sampling needs CPU sampling on (--sample=process-tree)
    py = py_samples.read_python(reader, native[1].num_rows)
    if py is None:
        return native
    samples = pa.concat_tables([native[0], py[0]], promote_options="permissive")
    samples = samples.unify_dictionaries().take(pc.sort_indices(samples["start"]))
    stacks = pa.concat_tables([native[1], py[1]]).unify_dictionaries()
    return samples.combine_chunks(), stacks.combine_chunks()


def read_native(reader: ExportTables) -> tuple[pa.Table, pa.Table] | None:
    """(cpu_samples, sample_stacks) of the native samples; None without samples."""
    ev = reader.raw("COMPOSITE_EVENTS", ["id", "start", "cpu", "globalTid"])
    if ev is None or ev.num_rows == 0:
        return None
    cc = reader.raw("SAMPLING_CALLCHAINS", ["id", "stackDepth", "symbol", "module"])
    ids = _ints(ev["id"])
    chains = _Chains.of(cc) if cc is not None and cc.num_rows else None
    leaf = np.full(len(ids), -1, np.int64)
    depth = np.zeros(len(ids), np.int64)
    if chains is not None:
        leaf, depth = chains.per_sample(ids)
    stacks = _stack_table(reader, chains)
    at, missing = pa.array(np.maximum(leaf, 0)), pa.array(leaf < 0)
    pid, tid = pid_tid(ev["globalTid"])
    cols = {
        "start": ev["start"],
        "pid": pid,
        "tid": tid,
        "cpu": ev["cpu"],
        "kind": pa.array(["native"] * len(ids)).dictionary_encode(),
        "function": _leaf_names(stacks["function"], at, missing),
        "module": _leaf_names(stacks["module"], at, missing),
        "stacked": pa.array(depth > 1),
        "stack_id": pa.array(leaf, pa.int64(), mask=leaf < 0),
    }
    samples = schema.conform("cpu_samples", cols, len(ids))
    return samples.take(pc.sort_indices(samples["start"])), stacks


def _ints(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.int64)


def _leaf_names(col: pa.ChunkedArray, at: pa.Array, missing: pa.Array) -> pa.Array:
    """The names of each sample's innermost node (null for a sample without a chain)."""
    names = col.combine_chunks()
    if len(names) == 0:
        return pa.nulls(len(at), names.type)
    return pc.if_else(missing, pa.scalar(None, names.type), names.take(at))


class _Chains:
    """The call chains sorted by (sample id, stackDepth), interned into a tree."""

    def __init__(self, sid: np.ndarray, sym: np.ndarray, mod: np.ndarray, length: np.ndarray):
        self.sid = sid  # per row, the sample id
        self.sym, self.mod = sym, mod
        self.length = length  # per row, its chain's length
        self.node = np.empty(len(sid), np.int64)
        self.parent: list[np.ndarray] = []
        self.keys: list[np.ndarray] = []  # per level: (symbol, module) of its new nodes
        self._intern()

    @classmethod
    def of(cls, cc: pa.Table) -> _Chains:
        sid, dep = _ints(cc["id"]), _ints(cc["stackDepth"])
        order = np.lexsort((dep, sid))
        sid, dep = sid[order], dep[order]
        sym, mod = _ints(cc["symbol"])[order], _ints(cc["module"])[order]
        first = np.r_[True, sid[1:] != sid[:-1]]
        starts = np.flatnonzero(first)
        counts = np.diff(np.r_[starts, len(sid)])
        length = np.repeat(counts, counts)
        return cls(sid, sym, mod, length)

    def _intern(self) -> None:
        """Nodes level by level from the outermost frame: a node is (caller, symbol,
        module); rows of a chain are in depth order, so a row's caller is the next row."""
        pos = np.arange(len(self.sid)) - np.repeat(*_group_starts(self.sid))
        level = self.length - 1 - pos  # 0 at the outermost frame
        offset = 0
        for k in range(int(level.max()) + 1 if len(level) else 0):
            rows = np.flatnonzero(level == k)
            caller = self.node[rows + 1] if k else np.full(len(rows), -1, np.int64)
            uniq, inv = _unique_triples(caller, self.sym[rows], self.mod[rows])
            self.node[rows] = offset + inv
            self.parent.append(uniq[0])
            self.keys.append(uniq[1:])
            offset += uniq.shape[1]

    def per_sample(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(innermost node, chain length) of each sample id (-1, 0 without a chain)."""
        starts, _ = _group_starts(self.sid)
        chain_ids = self.sid[starts]
        at = np.minimum(np.searchsorted(chain_ids, ids), max(len(chain_ids) - 1, 0))
        hit = chain_ids[at] == ids if len(chain_ids) else np.zeros(len(ids), bool)
        leaf = np.where(hit, self.node[starts[at]], -1)
        return leaf, np.where(hit, self.length[starts[at]], 0)


def _unique_triples(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (a, b, c) as a 3 x n array in sorted order, and each row's index into
    it (np.unique(axis=1) does the same several times slower)."""
    order = np.lexsort((c, b, a))
    sa, sb, sc = a[order], b[order], c[order]
    new = np.ones(len(order), bool)
    new[1:] = (sa[1:] != sa[:-1]) | (sb[1:] != sb[:-1]) | (sc[1:] != sc[:-1])
    group = np.cumsum(new) - 1
    inv = np.empty(len(order), np.int64)
    inv[order] = group
    return np.stack([sa[new], sb[new], sc[new]]), inv


def _group_starts(sid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first row of each run of equal ids, run lengths)."""
    starts = np.flatnonzero(np.r_[True, sid[1:] != sid[:-1]]) if len(sid) else sid[:0]
    counts = np.diff(np.r_[starts, len(sid)])
    return starts, counts


def _stack_table(reader: ExportTables, chains: _Chains | None) -> pa.Table:
    if chains is None or not chains.parent:
        return schema.empty("sample_stacks")
    parent = np.concatenate(chains.parent)
    keys = np.concatenate(chains.keys, axis=1)
    s = reader.strings()
    n = len(parent)
    cols = {
        "node_id": pa.array(np.arange(n, dtype=np.int64)),
        "parent_id": pa.array(parent, pa.int64(), mask=parent < 0),
        "function": s.encode(pa.array(keys[0])),
        "module": s.encode(pa.array(keys[1])),
        "python": pa.array(np.zeros(n, bool)),
    }
    return schema.conform("sample_stacks", cols, n)
