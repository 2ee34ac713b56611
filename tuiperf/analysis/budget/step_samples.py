"""Where the training thread's CPU time goes inside the steady steps, from CPU samples
(nsys `--sample=process-tree`, `--python-sampling`): its top functions by self samples,
Python frames first where the report has them, native below, and the native function the
Python interpreter called that most call stacks run under (the torch binding, such as
`torch::autograd::THPVariable_randn` for `torch.randn`).

The steps are the steady steps' CPU ranges (step_budget); the thread is the one whose
ranges mark the steps (steps.tid), or, for steps found another way, the thread with the
most samples inside them.

`user_function`: the function of the user's own code (by its file, as the call sites
decide: not torch or another site-packages library, not the standard library) that holds
the most of the thread's Python samples in the steps. A sample counts for its innermost
user frame, and only when no framework frame (torch, torchvision, triton, …) is on its
stack, inside or outside that frame: user code the model's forward runs under
`nn.Module.__call__`, or that calls torch's Python code, is the framework's launch path
(CUDA graphs, torch.compile), not a function to take out of the step. torch's data
package (`torch/utils/data`) does not count as framework, so a Dataset's `__getitem__`
called by a DataLoader without workers is the user's. The script's top level (`<module>`)
is never named. Python samples come every ~1 ms of wall time, so the share is of the
thread's wall time in the steps (docs/formats-cpu-samples.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import Budget
from tuiperf.model import arrays as A
from tuiperf.model.cpu_samples import Counts, Samples, Stacks, short_function
from tuiperf.model.timeline.callsites import FRAMEWORKS, is_user_file

#: fewer samples than this in the steady steps say too little to name a function
MIN_SAMPLES = 20
#: functions named per kind, those with at least SHOWN_SHARE of the samples
TOP = 3
SHOWN_SHARE = 0.05
#: the framework package whose frames do not disqualify a user function: data loading
_DATA_PACKAGE = ("torch", "utils", "data")


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
class UserFunction:
    """A function of the user's code and its Python samples in the steps."""

    function: str
    file: str
    line: int  # the line most of its samples were on
    samples: int
    share: float  # of the thread's Python samples inside the steps

    @property
    def label(self) -> str:
        """`make_tokens (slow_python.py:35)`."""
        return f"{self.function} ({os.path.basename(self.file)}:{self.line})"


@dataclass(frozen=True)
class StepSamples:
    tid: int
    samples: int  # the thread's native samples inside the steady steps
    stacked: int  # of which with a call stack
    python_samples: int
    top: list[HotFunction]  # Python first, then native; most self samples first
    entry: HotFunction | None  # share: of the stacked native samples
    user_function: UserFunction | None = None


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
        top, _entry(s, native & s.stacked), _user_function(ctx, s, python),
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


def _user_function(ctx: Ctx, s: Samples, python: np.ndarray) -> UserFunction | None:
    """The user function with the most of these Python samples (module docstring)."""
    if not python.any():
        return None
    st = s.stacks
    user = np.array([is_user_file(m) for m in st.modules], bool)
    framework = np.array([_framework(m) for m in st.modules], bool)
    owner = _owners(st, s.leaf[python], user, framework)
    mods = np.array(st.modules, object)
    fns = np.array(st.functions, object)
    keys = st.key[owner[owner >= 0]]
    named = keys[fns[keys] != "<module>"] if len(keys) else keys
    if not len(named):
        return None
    n = np.bincount(named)
    k = int(np.argmax(n))
    nodes = owner[owner >= 0][st.key[owner[owner >= 0]] == k]
    return UserFunction(
        str(fns[k]), str(mods[k]), _hot_line(ctx, nodes), int(n[k]), int(n[k]) / int(python.sum())
    )


def _owners(st: Stacks, leaf: np.ndarray, user: np.ndarray, framework: np.ndarray) -> np.ndarray:
    """Per sample, the node of its innermost user frame; -1 where it has none or a
    framework frame is anywhere on its stack."""
    owner = np.full(len(leaf), -1, np.int64)
    clean = np.ones(len(leaf), bool)
    cur = leaf.copy()
    live = cur >= 0
    while live.any():
        idx = np.flatnonzero(live)
        k = st.key[cur[idx]]
        clean[idx[framework[k]]] = False
        first = user[k] & (owner[idx] < 0)
        owner[idx[first]] = cur[idx[first]]
        cur[idx] = st.parent[cur[idx]]
        live &= cur >= 0
    return np.where(clean, owner, -1)


def _framework(path: str) -> bool:
    """Whether a Python file belongs to torch or another framework (callsites.FRAMEWORKS),
    torch's data-loading package excepted."""
    parts = path.replace("\\", "/").split("/")
    for mark in ("site-packages", "dist-packages"):
        if mark in parts:
            parts = parts[parts.index(mark) + 1 :]
            break
    else:
        if path.startswith("/"):
            return False
    return bool(parts) and parts[0] in FRAMEWORKS and tuple(parts[:3]) != _DATA_PACKAGE


def _hot_line(ctx: Ctx, nodes: np.ndarray) -> int:
    """The line most of these stack nodes are on (0 when the stacks have no lines)."""
    t = ctx.table("sample_stacks")
    ids = A.ints(t, "node_id", -1)
    line = np.zeros(int(ids.max()) + 1 if len(ids) else 0, np.int64)
    line[ids] = A.ints(t, "line", 0)
    at = line[nodes]
    if not len(at):
        return 0
    vals, n = np.unique(at, return_counts=True)
    return int(vals[int(np.argmax(n))])
