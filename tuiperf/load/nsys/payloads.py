"""JSON payloads of NVTX marks (Python samples, Python backtraces), each distinct one
parsed once.

A program repeats its stacks: every sample of a loop's line and every launch from the same
call site carries the same payload text (the stack and the thread state, nothing per
event), so a long capture holds a few thousand distinct payloads for millions of events."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def each_once(texts: list[str | None], parse: Callable[[str | None], T]) -> list[T]:
    """`parse` of each text, called once a distinct text; equal texts share one result
    (treat it as read-only)."""
    seen: dict[str | None, T] = {}
    return [seen[x] if x in seen else seen.setdefault(x, parse(x)) for x in texts]
