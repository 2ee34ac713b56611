"""Training-step structure: NVTX `step N` / Kineto `ProfilerStep#N` ranges, or a repeated
kernel pattern when the report has no step ranges."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tuiperf.model import arrays as A

if TYPE_CHECKING:
    import pyarrow as pa

    from tuiperf.analysis.trace_ctx import TraceCtx

#: range names that mark one training iteration
STEP_NAME = re.compile(
    r"^\s*(?:ProfilerStep#|(?:train[ _-]?)?(?:step|iteration|iter)[\s_#:-]*)"
    r"(\d+)\s*$",
    re.IGNORECASE,
)
#: Kineto's step ranges (torch.profiler's schedule)
PROFILER_STEP = "ProfilerStep#"
#: Kineto rows that are not user ranges: operators, and the GPU-side copies of annotations
NOT_RANGES = ("cpu_op", "gpu_user_annotation")
#: fewest repeats of a kernel pattern that we call a loop (3 = warm-up + 2 steady steps)
MIN_PATTERN_STEPS = 3
#: a step this many times the median step, right after the first, is still warming up
WARMUP_FACTOR = 1.5
#: a pattern period must hold at least this many kernels (shorter ones are layers, not steps)
MIN_PATTERN_KERNELS = 8
#: share of consecutive repeats that must have exactly the modal period
PATTERN_REGULARITY = 0.6


@dataclass(frozen=True)
class Steps:
    """Training steps as [start, end) windows on the CPU timeline (launch times)."""

    starts: np.ndarray
    ends: np.ndarray
    labels: list[str]
    source: str  # "nvtx", "kineto" (ProfilerStep#N), "wrapper" (DDP/FSDP), "pattern", "none"
    pid: int | None = None
    tid: int | None = None
    #: per step: NVTX child ranges (text -> list of (start, end)), when known
    phases: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: how sure the step boundaries are: "high" (the program's own step ranges), "medium"
    #: (a regular kernel pattern), "low" (a pattern that may not be an iteration)
    confidence: str = "high"
    #: why the confidence is not high ("" when it is)
    reason: str = ""

    @property
    def found(self) -> bool:
        return len(self.starts) > 0

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def first_start(self) -> int:
        return int(self.starts[0])

    def index_of(self, t: np.ndarray) -> np.ndarray:
        """The step each time falls in, or -1."""
        t = np.asarray(t, np.int64)
        if not self.found:
            return np.full(len(t), -1, np.int64)
        i = np.searchsorted(self.starts, t, "right") - 1
        ok = (i >= 0) & (t < self.ends[np.maximum(i, 0)])
        return np.where(ok, i, -1)

    def steady(self) -> np.ndarray:
        """Indices of the steady-state steps: after the start-up, which is the first step
        (cuDNN autotuning, allocator growth) and any step right after it that still takes
        WARMUP_FACTOR times the median step or longer. torch.profiler's steps are recorded
        after its own wait/warm-up phases: there the first step is start-up only when it is
        that slow too (a one-step cycle keeps its one step)."""
        n = len(self)
        if n <= 1:
            return np.arange(n)
        dur = self.ends - self.starts
        median = float(np.median(dur[1:]))
        first = 1
        if self.source == "kineto" and dur[0] <= WARMUP_FACTOR * median:
            first = 0
        while first < n // 2 and dur[first] > WARMUP_FACTOR * median:
            first += 1
        return np.arange(first, n)

    def without_last(self) -> Steps:
        """These steps less the last one (a step the capture window cut)."""
        return Steps(
            self.starts[:-1], self.ends[:-1], self.labels[:-1], self.source, self.pid,
            self.tid, self.phases, self.confidence, self.reason,
        )  # fmt: skip

    def label_span(self, idx: np.ndarray | None = None) -> str:
        if not self.found:
            return ""
        idx = np.arange(len(self)) if idx is None else idx
        if len(idx) == 0:
            return ""
        a, b = self.labels[int(idx[0])], self.labels[int(idx[-1])]
        return a if a == b else f"{a} … {b}"


NO_STEPS = Steps(np.zeros(0, np.int64), np.zeros(0, np.int64), [], "none")


def find_steps(ctx: TraceCtx) -> Steps:
    steps = from_ranges(ctx)
    if steps is None:
        steps = _from_wrapper_forwards(ctx)
    if steps is None:
        steps = _from_pattern(ctx)
    if steps is None:
        return NO_STEPS
    return _drop_cut_last(ctx, steps)


#: the last step is cut by the capture window when it launched fewer than this share of
#: the kernels the other steps launch (median)
CUT_STEP_SHARE = 0.5


def _drop_cut_last(ctx: TraceCtx, steps: Steps) -> Steps:
    """Leave out a last step that the capture (or torch.profiler's cycle) stopped inside:
    it launched far fewer kernels than the others."""
    if len(steps) < 2:
        return steps
    launch = ctx.launch_time("kernels")
    counts = np.bincount(steps.index_of(launch) + 1, minlength=len(steps) + 1)[1:]
    if counts[-1] < CUT_STEP_SHARE * float(np.median(counts[:-1])):
        return steps.without_last()
    return steps


def _outermost(
    ok: np.ndarray, start: np.ndarray, end: np.ndarray, pid: np.ndarray, tid: np.ndarray
) -> tuple[int, int, np.ndarray]:
    """The thread with the most `ok` ranges (the training loop: pid, tid) and, in start order,
    its outermost ones (nested or repeated ranges dropped): their row indices."""
    keys, counts = np.unique(np.stack([pid[ok], tid[ok]]), axis=1, return_counts=True)
    p, t = (int(v) for v in keys[:, int(np.argmax(counts))])
    sel = np.flatnonzero(ok & (pid == p) & (tid == t))
    sel = sel[np.argsort(start[sel], kind="stable")]
    keep = [sel[0]]
    for i in sel[1:]:
        if start[i] >= end[keep[-1]]:
            keep.append(i)
    return p, t, np.array(keep)


def from_ranges(ctx: TraceCtx) -> Steps | None:
    nv = ctx.table("nvtx")
    if nv.num_rows == 0:
        return None
    text = A.strings(nv, "text")
    user = ~np.isin(A.strings(nv, "domain"), NOT_RANGES)
    is_step = user & np.array([bool(STEP_NAME.match(t)) for t in text], bool)
    if not is_step.any():
        return None
    # the user's own `step N` ranges first, Kineto's ProfilerStep#N when there are none
    kineto = is_step & np.array([t.lstrip().startswith(PROFILER_STEP) for t in text], bool)
    source = "kineto" if not (is_step & ~kineto).any() else "nvtx"
    mark = is_step & ~kineto if source == "nvtx" else is_step
    start, end = A.ints(nv, "start"), A.ints(nv, "end", -1)
    pid, tid = A.ints(nv, "pid", -1), A.ints(nv, "tid", -1)
    ok = mark & (end > start) & (pid >= 0)
    if not ok.any():
        return None
    p, t, k = _outermost(ok, start, end, pid, tid)
    steps = Steps(start[k], end[k], [str(text[i]) for i in k], source, p, t)
    return Steps(
        steps.starts,
        steps.ends,
        steps.labels,
        source,
        p,
        t,
        _phases(nv, text, start, end, pid, tid, steps, is_step | ~user),
    )


#: the ranges DDP and FSDP record around the wrapped model's forward: one per iteration
#: (FSDP's nested units record their own, inside the outermost one)
WRAPPER_FORWARD = re.compile(r"^(FullyShardedDataParallel|DistributedDataParallel)\.forward$")


def _from_wrapper_forwards(ctx: TraceCtx) -> Steps | None:
    """No step ranges: a DDP/FSDP forward range starts each iteration, which runs to the
    next one's start (the last, to the end of the thread's last range or launch)."""
    nv = ctx.table("nvtx")
    if nv.num_rows == 0:
        return None
    text = A.strings(nv, "text")
    ok = np.array([bool(WRAPPER_FORWARD.match(str(x))) for x in text], bool)
    start, end = A.ints(nv, "start"), A.ints(nv, "end", -1)
    pid, tid = A.ints(nv, "pid", -1), A.ints(nv, "tid", -1)
    ok &= (end > start) & (pid >= 0)
    if not ok.any():
        return None
    p, th, k = _outermost(ok, start, end, pid, tid)  # the outermost forward of an iteration
    starts = start[k]
    last = max(int(end[(pid == p) & (tid == th)].max()), _last_launch(ctx, starts[-1]))
    ends = np.append(starts[1:], last)
    labels = [f"iteration {k + 1}" for k in range(len(starts))]
    why = "one step per DDP/FSDP forward range (no step ranges)"
    return Steps(starts, ends, labels, "wrapper", p, th, {}, "medium", why)


def _last_launch(ctx: TraceCtx, after: int) -> int:
    """The end of the last kernel launch call at or after `after` (0 when none)."""
    launch = ctx.launch_time("kernels")
    end = launch + np.maximum(ctx.launch_duration("kernels"), 0)
    end = end[launch >= after]
    return int(end.max()) if len(end) else 0


def _phases(
    nv: pa.Table,
    text: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    pid: np.ndarray,
    tid: np.ndarray,
    steps: Steps,
    is_step: np.ndarray,
) -> dict[str, list]:
    """Direct children of the step ranges on the same thread (data/forward/backward/…)."""
    same = (pid == steps.pid) & (tid == steps.tid) & ~is_step & (end > start)
    inside = steps.index_of(start) >= 0
    depth = A.ints(nv, "depth", 0)
    sel = np.flatnonzero(same & inside)
    if len(sel) == 0:
        return {}
    top = depth[sel].min()
    out: dict[str, list[tuple[int, int]]] = {}
    for i in sel[depth[sel] == top]:
        out.setdefault(str(text[i]), []).append((int(start[i]), int(end[i])))
    return out


def _from_pattern(ctx: TraceCtx) -> Steps | None:
    """A kernel name that recurs with one fixed period (in kernels) marks step boundaries.

    Picks the largest period seen at least MIN_PATTERN_STEPS times with PATTERN_REGULARITY:
    smaller periods are layers repeating inside a step."""
    k = ctx.table("kernels")
    if k.num_rows < MIN_PATTERN_KERNELS * MIN_PATTERN_STEPS:
        return None
    launch = ctx.launch_time("kernels")
    pids = A.ints(k, "pid", -1)
    pid_vals, pid_counts = np.unique(pids, return_counts=True)
    main_pid = int(pid_vals[np.argmax(pid_counts)])  # one rank's sequence, not interleaved
    order = np.argsort(launch, kind="stable")
    keep = pids[order] == main_pid
    # a kernel whose launch call is not in the report (launched before the capture began)
    # has its GPU start for a launch time: it would sit out of launch order among the others
    linked = ctx.launch_duration("kernels")[order] >= 0
    if (keep & linked).any():
        keep &= linked
    order = order[keep]
    names, _ = A.codes(k, "name")
    seq = names[order]
    best: tuple[int, int] | None = None  # (period, name code)
    by_name = np.argsort(seq, kind="stable")
    bounds = np.flatnonzero(np.diff(seq[by_name])) + 1
    for grp in np.split(by_name, bounds):
        if len(grp) < MIN_PATTERN_STEPS + 1:
            continue
        gaps = np.diff(grp)
        vals, cnt = np.unique(gaps, return_counts=True)
        period = int(vals[np.argmax(cnt)])
        if period < MIN_PATTERN_KERNELS or cnt.max() < max(
            MIN_PATTERN_STEPS - 1, PATTERN_REGULARITY * len(gaps)
        ):
            continue
        if best is None or period > best[0]:
            best = (period, int(seq[grp[0]]))
    if best is None:
        return None
    pos = np.flatnonzero(seq == best[1])
    pos = _whole_period(seq, pos)
    t = launch[order][pos]
    # the last repeat has no next one to end it: the capture cut it, it is not a step
    conf, why = _pattern_confidence(ctx, order, pos)
    labels = [f"repeat {i + 1}" for i in range(len(t) - 1)]
    return Steps(t[:-1], t[1:], labels, "pattern", main_pid, None, {}, conf, why)


#: share of kernels that must equal the kernel one period later for a period to be the loop's
#: whole iteration (a layer's period fails where the layers end: the head, the optimizer)
SELF_MATCH = 0.99


def _irregular(pos: np.ndarray) -> bool:
    counts = np.diff(pos)[1:] if len(pos) > 3 else np.diff(pos)
    med = float(np.median(counts))
    return bool(np.abs(counts - med).max() > PATTERN_COUNT_SPREAD * med)


def _whole_period(seq: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The boundaries of the loop's whole iteration when the anchor kernel's repeats differ
    in size (it recurs several times an iteration, e.g. once per generated token): the
    smallest span of m repeats after which the kernel sequence repeats itself (SELF_MATCH),
    re-anchored on the same kernel at each boundary. `pos` unchanged when none is found."""
    if not _irregular(pos):
        return pos
    lo, hi = int(pos[0]), int(pos[-1])
    for m in range(2, (len(pos) - 1) // MIN_PATTERN_STEPS + 1):
        period = int(np.median(pos[m:] - pos[:-m]))
        if period < MIN_PATTERN_KERNELS or hi - lo < MIN_PATTERN_STEPS * period:
            break
        a = seq[lo : hi - period]
        if float(np.mean(a == seq[lo + period : hi])) < SELF_MATCH:
            continue
        out = _anchored(pos, period)
        if len(out) > MIN_PATTERN_STEPS and not _irregular(out):
            return out
    return pos


def _anchored(pos: np.ndarray, period: int) -> np.ndarray:
    """Every anchor occurrence about `period` kernels after the previous boundary (the
    nearest within PATTERN_COUNT_SPREAD of it), from the first; stops where none is."""
    out = [int(pos[0])]
    tol = PATTERN_COUNT_SPREAD * period
    while True:
        want = out[-1] + period
        k = int(np.searchsorted(pos, want))
        near = [int(pos[j]) for j in (k - 1, k) if 0 <= j < len(pos)]
        near = [x for x in near if x > out[-1] and abs(x - want) <= tol]
        if not near:
            return np.asarray(out, np.int64)
        out.append(min(near, key=lambda x: abs(x - want)))


#: kernels of a backward pass and of an optimizer: a training iteration has both
BACKWARD_KERNEL = re.compile(r"backward|bwd|dgrad|wgrad|_grad_|grad_input|grad_weight", re.I)
OPTIMIZER_KERNEL = re.compile(
    r"multi_tensor_apply|adam|\bsgd|_sgd|lamb(?!da)|\blion|optimizer|foreach_", re.I
)
#: a pattern's repeats are regular when their kernel counts stay this close to the median
PATTERN_COUNT_SPREAD = 0.1


def _pattern_confidence(ctx: TraceCtx, order: np.ndarray, pos: np.ndarray) -> tuple[str, str]:
    """How sure a kernel pattern is one training iteration: "high" when every repeat has
    the same number of kernels and holds backward and optimizer kernels, "medium" when it
    is regular but shows no backward or optimizer (a layer, or inference), "low" when the
    repeats differ in size."""
    counts = np.diff(pos)[1:] if len(pos) > 3 else np.diff(pos)  # the first may warm up
    if _irregular(pos):
        return "low", (
            f"the repeats hold {int(counts.min()):,}–{int(counts.max()):,} kernels: "
            "not one fixed iteration"
        )
    k = ctx.table("kernels")
    inside = A.name_mask(k, "name", BACKWARD_KERNEL)[order[pos[0] : pos[-1]]]
    opt = A.name_mask(k, "name", OPTIMIZER_KERNEL)[order[pos[0] : pos[-1]]].any()
    if inside.any() and opt:
        return "high", ""
    if A.name_mask(k, "name", BACKWARD_KERNEL).any() and not inside.any():
        return "low", "the repeats hold no backward kernels the report has: a layer, not a step"
    parts = (("backward", inside.any()), ("optimizer", opt))
    missing = " and ".join(w for w, ok in parts if not ok)
    return "medium", f"no {missing} kernels in the repeats"
