"""Where the training thread's CPU time goes inside the steady steps, from CPU samples
(nsys `--sample=process-tree`, `--python-sampling`): its top functions by self samples,
Python frames first where the report has them, native below, and the native function the
Python interpreter called that most call stacks run under (the torch binding, such as
`torch::autograd::THPVariable_randn` for `torch.randn`).

The steps are the steady steps' CPU ranges (step_budget); the thread is the one whose
ranges mark the steps (steps.tid), or, for steps found another way, the thread with the
most samples inside them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import Budget
from tuiperf.model.cpu_samples import Counts, Samples, short_function

#: fewer samples than this in the steady steps say too little to name a function
MIN_SAMPLES = 20
#: functions named per kind, those with at least SHOWN_SHARE of the samples
TOP = 3
SHOWN_SHARE = 0.05


@dataclass(frozen=True)
class HotFunction:
    function: str  # as the report names it
    module: str
    kind: str  # python | native
    self_samples: int
    share: float  # of the thread's samples of that kind inside the steps

    @property
    def label(self) -> str:
        """`at::CPUGeneratorImpl::random (libtorch_cpu.so)`, `step (train.py)`."""
        name = short_function(self.function).replace("(anonymous namespace)::", "")
        return f"{name} ({os.path.basename(self.module)})"


@dataclass(frozen=True)
class StepSamples:
    tid: int
    samples: int  # the thread's native samples inside the steady steps
    stacked: int  # of which with a call stack
    python_samples: int
    top: list[HotFunction]  # Python first, then native; most self samples first
    entry: HotFunction | None  # share: of the stacked native samples


def step_samples(ctx: Ctx, b: Budget) -> StepSamples | None:
    """The training thread's samples in the steady steps; None with too few of them."""
    if not ctx.trace.has("cpu_samples"):
        return None
    s = Samples(ctx.trace)
    a = np.array([x.cpu_start_ns for x in b.main.steps], np.int64)
    e = np.array([x.cpu_end_ns for x in b.main.steps], np.int64)
    inside = s.within(a, e)
    thread = _thread(ctx, s, inside)
    if thread is None:
        return None
    mine = inside & (s.pid == thread[0]) & (s.tid == thread[1])
    native, python = mine & (s.kind == "native"), mine & (s.kind == "python")
    if native.sum() + python.sum() < MIN_SAMPLES:
        return None
    top = _top(s.counts(python), "python") + _top(s.counts(native), "native")
    return StepSamples(
        thread[1], int(native.sum()), int((native & s.stacked).sum()), int(python.sum()),
        top, _entry(s, native & s.stacked),
    )  # fmt: skip


def _thread(ctx: Ctx, s: Samples, inside: np.ndarray) -> tuple[int, int] | None:
    st = ctx.steps
    if st.pid is not None and st.tid is not None:
        return st.pid, st.tid
    if not inside.any():
        return None
    pairs, n = np.unique(np.stack([s.pid[inside], s.tid[inside]]), axis=1, return_counts=True)
    k = int(np.argmax(n))
    return int(pairs[0, k]), int(pairs[1, k])


def _top(c: Counts, kind: str) -> list[HotFunction]:
    if not c.samples:
        return []
    hot = [_hot(c, k, kind, int(c.self_n[k]), c.samples) for k in c.top("self", TOP)]
    return [h for h in hot if h.share >= SHOWN_SHARE]


def _hot(c: Counts, k: int, kind: str, n: int, of: int) -> HotFunction:
    return HotFunction(c.stacks.functions[k], c.stacks.modules[k], kind, n, n / max(of, 1))


def _entry(s: Samples, stacked: np.ndarray) -> HotFunction | None:
    if not stacked.any():
        return None
    c = s.counts(stacked)
    keys = c.stacks.entries(s.leaf[stacked])
    keys = keys[keys >= 0]
    if not len(keys):
        return None
    n = np.bincount(keys)
    k = int(np.argmax(n))
    return _hot(c, k, "native", int(n[k]), c.samples)
