"""JSON payloads of NVTX marks (Python samples, Python backtraces), each distinct one
parsed once.

A program repeats its stacks: every sample of a loop's line and every launch from the same
call site carries the same payload text (the stack and the thread state, nothing per
event), so a long capture holds a few thousand distinct payloads for millions of events."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.load.dictcols import StringTable

T = TypeVar("T")


def mark_texts(t: pa.Table, strings: Callable[[], StringTable]) -> list[str | None]:
    """Each mark's payload: `jsonText`, else the string its `jsonTextId` names (`strings`
    is called only when some mark has one)."""
    text = t["jsonText"].combine_chunks().cast(pa.string())
    if t["jsonTextId"].null_count < t.num_rows:
        text = pc.coalesce(text, strings().encode(t["jsonTextId"]).cast(pa.string()))
    return text.to_pylist()


def each_once(texts: list[str | None], parse: Callable[[str | None], T]) -> list[T]:
    """`parse` of each text, called once a distinct text; equal texts share one result
    (treat it as read-only)."""
    seen: dict[str | None, T] = {}
    return [seen[x] if x in seen else seen.setdefault(x, parse(x)) for x in texts]
