"""The optimizer's update phase of each step when nothing marks it (no `optimizer` NVTX
range, no torch.profiler `Optimizer.step#…`): inferred from the launch sequence.

PyTorch runs a CUDA backward pass on its autograd device thread (`pt_autograd_N`), so the
backward's kernels are launched by another thread than the training loop's, or carry a
backward name (`…_backward_…`, `dgrad`, `wgrad`). After it, `optimizer.step()` on the loop
thread launches element-wise, reduction and multi-tensor kernels only (a per-parameter
optimizer a dozen small element-wise kernels a parameter, foreach/fused ones a few
multi-tensor kernels), until the next step's forward launches something else (a GEMM, a
norm, an embedding, an input copy). A phase is such a run of the loop thread's launches
that directly follows backward launches; it ends where the loop thread's next other launch
starts (or at its last launch's end). Gradient clipping and `zero_grad` kernels in that run
are counted with it: they are per-parameter work of the same kind. A multi-tensor optimizer
followed by one element-wise kernel over and over (the same name: one op in a loop of the
user's, not a pass over parameters, whose kernels differ by op) ends at its last
multi-tensor kernel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.steps import BACKWARD_KERNEL
from tuiperf.model import arrays as A

#: kernels an optimizer step launches: PyTorch's element-wise and reduction templates (the
#: per-parameter `mul_`/`add_`/`addcdiv_`/`sqrt` of a loop over parameters) and the
#: multi-tensor / fused optimizer kernels
OPTIMIZER_LIKE = re.compile(
    r"elementwise_kernel|reduce_kernel|multi_tensor_apply|foreach|fused_adam|adam|sgd|"
    r"lamb(?!da)|lion|lerp|addc(mul|div)",
    re.IGNORECASE,
)
#: a foreach / fused optimizer's kernels
MULTI_TENSOR = re.compile(r"multi_tensor_apply|foreach|fused_adam", re.IGNORECASE)
#: a run shorter than this many launches is not an optimizer phase (a loss scaling or a
#: metric after the backward); the tiny-kernel rule asks for far more a step anyway
MIN_RUN = 4


def inferred_windows(ctx: Ctx) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the optimizer phases, in time order; empty when the report has no
    backward launches to follow or no launching thread is known."""
    empty = np.zeros(0, np.int64), np.zeros(0, np.int64)
    k = ctx.table("kernels")
    rows = ctx.api_rows("kernels")
    api = ctx.table("api")
    if k.num_rows == 0 or api.num_rows == 0:
        return empty
    known = rows >= 0
    tid = np.where(known, A.ints(api, "tid", -1)[np.maximum(rows, 0)], -1)
    pid = np.where(known, A.ints(api, "pid", -1)[np.maximum(rows, 0)], -1)
    loop = _loop_thread(pid, tid, known)
    if loop is None:
        return empty
    mine = known & (pid == loop[0])
    main = mine & (tid == loop[1])
    back = mine & ((tid != loop[1]) | A.name_mask(k, "name", BACKWARD_KERNEL))
    if not back.any():
        return empty
    launch = ctx.launch_time("kernels")
    end = launch + np.maximum(ctx.launch_duration("kernels"), 0)
    kinds = Kinds(
        A.name_mask(k, "name", OPTIMIZER_LIKE),
        A.name_mask(k, "name", MULTI_TENSOR),
        A.codes(k, "name")[0],
    )
    return _runs(launch, end, main, back, kinds)


@dataclass(frozen=True)
class Kinds:
    """Per kernel: optimizer-like, multi-tensor, and its name's code."""

    opt: np.ndarray
    multi: np.ndarray
    name: np.ndarray


def _cut_repeats(run: np.ndarray, kinds: Kinds) -> int:
    """How many of `run` (kernel rows in launch order) are the optimizer: all, unless a
    multi-tensor kernel is followed only by one kernel name repeated (then up to it)."""
    multi = np.flatnonzero(kinds.multi[run])
    if len(multi) == 0 or multi[-1] == len(run) - 1:
        return len(run)
    after = kinds.name[run[multi[-1] + 1 :]]
    return int(multi[-1]) + 1 if (after == after[0]).all() else len(run)


def _loop_thread(pid: np.ndarray, tid: np.ndarray, known: np.ndarray) -> tuple[int, int] | None:
    """The (pid, tid) that launches the most kernels: the training loop."""
    if not known.any():
        return None
    keys, counts = np.unique(np.stack([pid[known], tid[known]]), axis=1, return_counts=True)
    best = int(np.argmax(counts))
    return int(keys[0, best]), int(keys[1, best])


def _runs(
    launch: np.ndarray, end: np.ndarray, main: np.ndarray, back: np.ndarray, kinds: Kinds
) -> tuple[np.ndarray, np.ndarray]:
    """Runs of optimizer-like launches of the loop thread that come right after backward
    launches (a backward launch between the run's first launch and the loop thread's launch
    before it), at least MIN_RUN long."""
    order = np.argsort(launch, kind="stable")
    m = order[main[order]]  # the loop thread's launches in time order
    if len(m) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    bt = np.sort(launch[back & ~main])
    prev = np.r_[np.iinfo(np.int64).min, launch[m][:-1]]
    # another thread's backward launch since the loop thread's previous launch, or that
    # previous launch a backward-named kernel of its own
    after_back = _any_between(bt, prev, launch[m]) | np.r_[False, back[m][:-1]]
    is_opt = kinds.opt[m] & ~back[m]
    starts, ends = [], []
    i, n = 0, len(m)
    while i < n:
        if not (is_opt[i] and after_back[i]):
            i += 1
            continue
        j = i
        while j + 1 < n and is_opt[j + 1] and not after_back[j + 1]:
            j += 1
        keep = _cut_repeats(m[i : j + 1], kinds)
        if keep >= MIN_RUN:
            last = i + keep - 1
            starts.append(int(launch[m[i]]))
            ends.append(int(launch[m[last + 1]]) if last + 1 < n else int(end[m[last]]))
        i = j + 1
    return np.array(starts, np.int64), np.array(ends, np.int64)


def _any_between(times: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per (lo, hi]: whether some of the sorted `times` lie in it."""
    return np.searchsorted(times, hi, "right") > np.searchsorted(times, lo, "right")
