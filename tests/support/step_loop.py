"""The hand-built loop of the step-budget mutation oracles (tests/unit/test_oracle_step_
budget_mut*.py): ops with their launch calls, steps and phases as NVTX ranges, built into a
Trace (`build`) and measured (`budget_of`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from tuiperf import schema
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import Budget, step_budget
from tuiperf.model.trace import Trace, TraceMeta

US = 1000


@dataclass(frozen=True)
class Op:
    """One GPU op [start, end) µs, launched by an API call [call0, call1) µs (None: no
    API row, as in a windowed export)."""

    start: int
    end: int
    call: tuple[int, int] | None
    table: str = "kernels"
    name: str = "gemm"
    device: int = 0
    stream: int = 7
    pid: int = 1
    tid: int | None = 1  # None: a null thread id (its launch call has none)
    copy_kind: str = "Host-to-Device"
    src_kind: str = "Pinned"


@dataclass(frozen=True)
class Call:
    """A CPU-side call [start, end) µs that launches nothing (a sync, a DataLoader wait)."""

    start: int
    end: int
    name: str
    tid: int | None = 1  # None: a null thread id
    pid: int = 1


def _d(values: Sequence[str]) -> pa.Array:
    return pa.array(list(values), pa.string()).dictionary_encode()


def _i(values: Sequence[int | None]) -> pa.Array:
    return pa.array(list(values), pa.int64())


def _timed(spans: Sequence[tuple[int, int]], unit: int) -> dict[str, pa.Array]:
    return {
        "start": _i([a * unit for a, _ in spans]),
        "end": _i([b * unit for _, b in spans]),
        "duration": _i([(b - a) * unit for a, b in spans]),
    }


LAUNCH = {"kernels": "cudaLaunchKernel", "memcpy": "cudaMemcpyAsync",
          "memset": "cudaMemsetAsync", "graphs": "cudaGraphLaunch"}  # fmt: skip


def build(
    ops: Sequence[Op],
    steps: Sequence[tuple[int, int]],
    *,
    calls: Sequence[Call] = (),
    osrt: Sequence[Call] = (),
    phases: Sequence[tuple[int, int, str]] = (),
    labels: Sequence[str] | None = None,
    unit: int = US,
    step_tid: int | None = 1,
) -> Trace:
    """`ops` in the GPU tables, their launches plus `calls` in the API table, NVTX step
    ranges `step i` (or `labels`; depth 0) and `phases` (start, end, text; depth 1) on
    thread `step_tid`. Times in µs (`unit` ns each)."""
    tables: dict[str, pa.Table] = {}
    corr = {id(o): k + 1 for k, o in enumerate(ops)}
    for name in ("kernels", "memcpy", "memset", "graphs"):
        rows = [o for o in ops if o.table == name]
        if not rows:
            continue
        cols = {
            **_timed([(o.start, o.end) for o in rows], unit),
            "device": pa.array([o.device for o in rows], pa.int32()),
            "stream": _i([o.stream for o in rows]),
            "pid": _i([o.pid for o in rows]),
            "tid": _i([o.tid for o in rows]),
            "correlation_id": _i([corr[id(o)] for o in rows]),
        }
        if name in ("kernels", "graphs"):
            cols["name"] = _d([o.name for o in rows])
        if name == "kernels":
            cols["short_name"] = cols["name"]
        if name == "memcpy":
            cols["copy_kind"] = _d([o.copy_kind for o in rows])
            cols["src_kind"] = _d([o.src_kind for o in rows])
        tables[name] = schema.conform(name, cols, len(rows))
    launched = [o for o in ops if o.call is not None]
    api = [(o.call, o.pid, o.tid, corr[id(o)], LAUNCH[o.table]) for o in launched]
    api += [((c.start, c.end), c.pid, c.tid, 100_000 + k, c.name) for k, c in enumerate(calls)]
    if api:
        tables["api"] = schema.conform("api", {
            **_timed([a[0] for a in api], unit),  # type: ignore[misc]
            "pid": _i([a[1] for a in api]), "tid": _i([a[2] for a in api]),
            "correlation_id": _i([a[3] for a in api]), "name": _d([a[4] for a in api]),
        }, len(api))  # fmt: skip
    if osrt:
        tables["osrt"] = schema.conform("osrt", {
            **_timed([(c.start, c.end) for c in osrt], unit),
            "pid": _i([c.pid for c in osrt]), "tid": _i([c.tid for c in osrt]),
            "name": _d([c.name for c in osrt]),
        }, len(osrt))  # fmt: skip
    names = list(labels) if labels is not None else [f"step {i}" for i in range(len(steps))]
    ranges = [(a, b, n, 0) for (a, b), n in zip(steps, names, strict=True)]
    ranges += [(a, b, n, 1) for a, b, n in phases]
    if ranges:
        n = len(ranges)
        tables["nvtx"] = schema.conform("nvtx", {
            **_timed([(r[0], r[1]) for r in ranges], unit),
            "pid": _i([1] * n), "tid": _i([step_tid] * n), "domain": _d([""] * n),
            "text": _d([r[2] for r in ranges]),
            "depth": pa.array([r[3] for r in ranges], pa.int32()),
        }, n)  # fmt: skip
    return Trace(tables, TraceMeta(source="tiny", format="test"))


def budget_of(trace: Trace) -> Budget:
    b = step_budget(Ctx(trace))
    assert b is not None
    return b


# -- one loop with every part ------------------------------------------------------------
