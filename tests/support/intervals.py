"""GPU busy time computed apart from the code under test: the tests' own interval union."""

from __future__ import annotations

from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace


def union_ns(starts: list[int], ends: list[int], a: int, b: int) -> int:
    """Busy time in [a, b): clip, sort, merge (written apart from the code under test)."""
    spans = sorted((max(s, a), min(e, b)) for s, e in zip(starts, ends, strict=True))
    total, cur_s, cur_e = 0, None, None
    for s, e in spans:
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            total += 0 if cur_e is None else cur_e - cur_s  # type: ignore[operator]
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (0 if cur_e is None else cur_e - cur_s)  # type: ignore[operator]


def gpu_spans(trace: Trace, device: int) -> tuple[list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    for t in ("kernels", "memcpy", "memset"):
        tb = trace.table(t)
        if tb.num_rows == 0:
            continue
        on = A.ints(tb, "device", -1) == device
        starts += A.ints(tb, "start")[on].tolist()
        ends += A.ints(tb, "end")[on].tolist()
    return starts, ends
