"""NVTX_EVENTS rows -> the canonical nvtx table (ranges and marks, with nesting depth)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema
from tuiperf.load.dictcols import StringTable, encode_strings
from tuiperf.load.nesting import nesting_depth
from tuiperf.load.nsys.ids import pid_of, tid_of
from tuiperf.model.arrays import as_int64, from_numpy, from_strings, scalar, where_equal, where_in

#: ENUM_NSYS_EVENT_TYPE ids that are user-visible NVTX events
_STYLES = {59: "PushPop", 60: "StartEnd", 34: "Mark"}
_DOMAIN_CREATE = 75
#: (a Python "" given to `fill_null` becomes a `pa.scalar`, which imports pandas)
_EMPTY = scalar("", pa.string())


def nvtx_table(t: pa.Table, strings: StringTable) -> pa.Table:
    etype = t["eventType"]
    domains = _domain_names(t)
    t = t.filter(where_in(etype, list(_STYLES)))
    n = t.num_rows
    text = _texts(t, strings)
    domain = _lookup(t["domainId"], domains, "") if n else None
    style = _lookup(t["eventType"], _STYLES, "") if n else None
    pid = pid_of(t["globalTid"])
    tid = tid_of(t["globalTid"])
    cols = {
        "start": t["start"],
        "end": t["end"],
        "duration": pc.subtract(t["end"], t["start"]),
        "pid": pid,
        "tid": tid,
        "domain": encode_strings(domain) if domain is not None else None,
        "text": encode_strings(text),
        "style": encode_strings(style) if style is not None else None,
    }
    out = schema.conform("nvtx", cols, n)
    if n:
        out = out.take(from_numpy(np.lexsort((-_end_or_start(out), as_int64(out["start"])))))
    depth = nesting_depth(out)
    return out.set_column(out.schema.get_field_index("depth"), "depth", depth).combine_chunks()


def _lookup(col: pa.ChunkedArray, names: dict[int, str], default: str) -> pa.Array:
    """Map a small set of integer codes to strings without a Python loop per row."""
    codes = as_int64(col, 0)  # (no pandas: see model/arrays.py)
    uniq, inverse = np.unique(codes, return_inverse=True)
    labels = from_strings([names.get(int(u), default) for u in uniq])
    return labels.take(from_numpy(inverse.ravel()))


def _end_or_start(t: pa.Table) -> np.ndarray:
    return as_int64(pc.coalesce(t["end"], t["start"]))


def _domain_names(t: pa.Table) -> dict[int, str]:
    rows = t.filter(where_equal(t["eventType"], _DOMAIN_CREATE)).select(["domainId", "text"])
    return {
        int(d): (s or "")
        for d, s in zip(rows["domainId"].to_pylist(), rows["text"].to_pylist())
        if d is not None
    }


def _texts(t: pa.Table, strings: StringTable) -> pa.Array:
    """`text`, or the registered string that `textId` points to."""
    text = t["text"].combine_chunks().cast(pa.string())
    if t["textId"].null_count == len(t):
        return pc.fill_null(text, _EMPTY)
    registered = strings.encode(t["textId"]).cast(pa.string())
    return pc.fill_null(pc.coalesce(text, registered), _EMPTY)
