"""How long the training thread was off its CPU in each steady step (issue 34 item 3), from
the OS scheduler's switches (thread_state, nsys SCHED_EVENTS).

A thread waits inside a blocking CUDA call (a stream synchronize) or an OS call (a lock, a
read): that wait the step budget already names (host sync, data). What is left, waiting
outside any traced CUDA or OS runtime call, is time the thread was ready to run but had no
CPU (another thread or process had it) or blocked where nothing was traced (a page fault,
an untraced lock): the CPU-bound finding says it when it is a real part of the step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tuiperf.analysis import interval_sets as S
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import Budget
from tuiperf.analysis.intervals import Union
from tuiperf.model import arrays as A

#: off-CPU time outside calls worth a sentence: 5% of the step, half the share at which
#: the budget rules start to call a part a bottleneck (CPU_BOUND_SHARE 10%)
DESCHEDULED_SHARE = 0.05


@dataclass(frozen=True)
class Descheduled:
    tid: int
    step_ns: float  # the steady steps' mean CPU range
    waiting_ns: float  # off the CPU, a step (mean)
    outside_calls_ns: float  # of which outside any CUDA API or OS runtime call

    @property
    def share(self) -> float:
        """Off-CPU time outside calls as a share of the step."""
        return self.outside_calls_ns / self.step_ns if self.step_ns else 0.0

    @property
    def matters(self) -> bool:
        return self.share >= DESCHEDULED_SHARE


def descheduled(ctx: Ctx, b: Budget) -> Descheduled | None:
    """The steady steps' off-CPU time of the training thread; None without thread state
    or without the thread (steps not marked by one thread's ranges)."""
    st = ctx.steps
    if st.tid is None or st.pid is None or not ctx.trace.has("thread_state"):
        return None
    t = ctx.table("thread_state")
    mine = (A.ints(t, "pid", -1) == st.pid) & (A.ints(t, "tid", -1) == st.tid)
    wait = mine & (A.strings(t, "state") == "waiting")
    if not mine.any():
        return None
    off = Union.of(A.ints(t, "start")[wait], A.ints(t, "end")[wait])
    calls = _calls(ctx, st.pid, st.tid)
    a, e, (in_off, in_call) = S.segments([off, calls])
    outside = S.pieces(a, e, in_off & ~in_call)
    lo = np.array([s.cpu_start_ns for s in b.main.steps], np.int64)
    hi = np.array([s.cpu_end_ns for s in b.main.steps], np.int64)
    n = max(len(lo), 1)
    return Descheduled(
        st.tid,
        float((hi - lo).sum()) / n,
        float(off.busy(lo, hi).sum()) / n,
        float(outside.busy(lo, hi).sum()) / n,
    )


def _calls(ctx: Ctx, pid: int, tid: int) -> Union:
    """The thread's CUDA API and OS runtime calls as one union."""
    starts, ends = [], []
    for name in ("api", "osrt"):
        t = ctx.table(name)
        if t.num_rows == 0:
            continue
        m = (A.ints(t, "pid", -1) == pid) & (A.ints(t, "tid", -1) == tid)
        starts.append(A.ints(t, "start")[m])
        ends.append(A.ints(t, "end")[m])
    if not starts:
        return Union.of(np.zeros(0, np.int64), np.zeros(0, np.int64))
    return S.of_pairs(np.concatenate(starts), np.concatenate(ends))
