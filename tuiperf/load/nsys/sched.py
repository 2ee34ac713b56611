"""Nsight Systems thread scheduling (SCHED_EVENTS) -> thread_state intervals.

`SCHED_EVENTS(start, cpu, isSchedIn, globalTid, threadState, threadBlock)`: one row per
switch of a thread onto (`isSchedIn` non-zero) or off a CPU. In both fixtures
(docs/formats-cpu-samples.md) each thread's rows alternate in, out, in, ... starting with an
in and ending with an out, so "running" is each in to the next out and "waiting" each out
to the next in. Rows that break the alternation (a lost event) are paired the same way:
an out with no in before it closes nothing, an in with no out after it opens nothing.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema


class ExportTables(Protocol):
    def raw(self, logical: str, wanted: list[str]) -> pa.Table | None: ...


RUNNING = "running"
WAITING = "waiting"


def read_thread_state(reader: ExportTables) -> pa.Table | None:
    t = reader.raw("SCHED_EVENTS", ["start", "cpu", "isSchedIn", "globalTid"])
    if t is None or t.num_rows == 0:
        return None
    known = pc.and_(pc.is_valid(t["globalTid"]), pc.is_valid(t["isSchedIn"]))
    t = t.filter(pc.and_(known, pc.is_valid(t["start"])))  # a row without them says nothing
    if t.num_rows == 0:
        return None
    g = np.asarray(t["globalTid"].to_numpy(zero_copy_only=False), np.int64)
    s = np.asarray(t["start"].to_numpy(zero_copy_only=False), np.int64)
    into = np.asarray(t["isSchedIn"].to_numpy(zero_copy_only=False), np.int64) != 0
    cpu = np.asarray(t["cpu"].fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
    order = np.lexsort((into, s, g))  # per thread in time; at a tie, the out first
    g, s, into, cpu = g[order], s[order], into[order], cpu[order]
    same = g[1:] == g[:-1]
    run = same & into[:-1] & ~into[1:]
    wait = same & ~into[:-1] & into[1:]
    a = np.r_[np.flatnonzero(run), np.flatnonzero(wait)]
    state = np.r_[np.zeros(int(run.sum()), np.int32), np.ones(int(wait.sum()), np.int32)]
    back = np.argsort(s[a], kind="stable")
    a, state = a[back], state[back]
    gt = g[a]
    cols = {
        "start": pa.array(s[a]),
        "end": pa.array(s[a + 1]),
        "duration": pa.array(s[a + 1] - s[a]),
        "pid": pa.array((gt >> 24) & 0xFFFFFF),
        "tid": pa.array(gt & 0xFFFFFF),
        "state": pa.DictionaryArray.from_arrays(
            pa.array(state), pa.array([RUNNING, WAITING], pa.string())
        ),
        "cpu": pa.array(cpu[a], pa.int32(), mask=(state == 1) | (cpu[a] < 0)),
    }
    return schema.conform("thread_state", cols, len(a))
