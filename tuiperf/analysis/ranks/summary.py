"""One rank's report reduced to what the ranks table compares (the map step of `tuiperf ranks`).

`summarize(path, ...)` opens (converting into the cache) one per-rank report and returns a
RankResult: plain numbers and small arrays, picklable, so it runs in a worker process or on a
Dask worker. Per steady-state step (analysis.budget.steps / step_budget): wall time, compute
kernels, communication (NCCL-type kernels, or the CPU collective ranges of gloo), its
exposed part, GPU idle; per collective call: start and end, for the clock alignment and the
straggler. Pure data: no printing.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tuiperf.analysis.budget.comm import comm_by_device, loop_comm
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import IDLE_PARTS
from tuiperf.errors import TuiperfError

#: a rank number in a file name: rank3, rank_3, rank-3, RANK.3
RANK_IN_NAME = re.compile(r"rank[_.-]?(\d+)", re.IGNORECASE)
#: torch.profiler's distributedInfo header: {"backend": ..., "rank": N, ...}
KINETO_RANK = re.compile(rb'"distributedInfo"\s*:\s*\{[^}]*?"rank"\s*:\s*(\d+)')
#: how much of a Kineto trace's head is read for its distributedInfo
KINETO_HEAD = 1 << 16
#: the parts a step's wall time is the sum of, idle aside
SUM_PARTS = ("compute_ns", "exposed_ns", "copy_ns")
#: per-step columns, in order; wall = compute + exposed + copy + idle in every step
#: (comm: all communication time, hidden behind compute or not)
STEP_COLUMNS = ("wall_ns", "compute_ns", "comm_ns", "exposed_ns", "copy_ns", "idle_ns")


@dataclass
class RankResult:
    """One report's steps and collectives (ns, in the report's own clock)."""

    path: str
    name_rank: int | None  # from the file name
    meta_rank: int | None  # from the report (Kineto distributedInfo)
    step_source: str  # nvtx, kineto, pattern
    comm_source: str  # kernels, ranges, or "" (no collective)
    device: int
    labels: list[str]
    starts: np.ndarray
    steps: dict[str, np.ndarray]  # STEP_COLUMNS -> per steady step
    coll_starts: np.ndarray  # every collective call of the loop, by start
    coll_ends: np.ndarray
    #: collective type -> (calls, total ns), from the first steady step on
    collectives: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: NCCL-type kernels per device and collective type (analysis.budget.comm.CommRow.to_json)
    comm_kernels: list[dict[str, Any]] = field(default_factory=list)
    #: the process, when the report holds several ranks (one process each)
    pid: int | None = None
    #: its place among them (by GPU, then pid)
    proc_index: int | None = None
    rank: int = -1  # set when the set is put together
    rank_from: str = ""

    def median(self, col: str) -> int:
        v = self.steps[col]
        return int(np.median(v)) if len(v) else 0

    def median_step(self) -> dict[str, int]:
        """STEP_COLUMNS of the median step: the step of median wall time, or with an even
        count the mean of the two middle ones (so wall_ns is the median); the parts still
        add up to it exactly (idle takes the rounding)."""
        wall = self.steps["wall_ns"]
        if len(wall) == 0:
            return dict.fromkeys(STEP_COLUMNS, 0)
        order = np.argsort(wall, kind="stable")
        mid = order[(len(wall) - 1) // 2 : len(wall) // 2 + 1]
        out = {c: int(self.steps[c][mid].sum()) // len(mid) for c in STEP_COLUMNS}
        out["wall_ns"] = self.median("wall_ns")
        out["idle_ns"] = out["wall_ns"] - sum(out[c] for c in SUM_PARTS)
        return out

    def step_collectives(self) -> tuple[np.ndarray, np.ndarray]:
        """Per steady step, the first collective starting in it: (start, end); -1 where a
        step has none."""
        ends = self.starts + self.steps["wall_ns"]
        s = np.full(len(self.starts), -1, np.int64)
        e = np.full(len(self.starts), -1, np.int64)
        n = len(self.coll_starts)
        if n == 0:
            return s, e
        j = np.searchsorted(self.coll_starts, self.starts, "left")
        ok = j < n
        j = np.minimum(j, n - 1)
        ok &= self.coll_starts[j] < ends
        s[ok], e[ok] = self.coll_starts[j[ok]], self.coll_ends[j[ok]]
        return s, e

    def work_before(self) -> np.ndarray:
        """Per collective after the first: the time since the previous one ended (the
        compute a rank does between two collectives)."""
        return self.coll_starts[1:] - self.coll_ends[:-1]

    def inside(self) -> np.ndarray:
        """Per collective: its duration (with several ranks, mostly waiting for the last)."""
        return self.coll_ends - self.coll_starts


@dataclass(frozen=True)
class Failed:
    """A report of the set that could not be read: its path and the one-line reason."""

    path: str
    reason: str


@dataclass(frozen=True)
class Job:
    """What a worker needs to summarise one report (picklable)."""

    path: str
    cache_dir: str | None = None
    use_cache: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    #: the cache's size cap in bytes (--cache-max, parsed once by the command); None: none
    cache_max: int | None = None


def rank_in_name(path: Path) -> int | None:
    m = RANK_IN_NAME.findall(path.name)
    return int(m[-1]) if m else None


def kineto_rank(path: Path) -> int | None:
    """The rank torch.profiler wrote in the trace's header, if it did."""
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as f:
            head = f.read(KINETO_HEAD)
    except (OSError, EOFError):
        return None
    m = KINETO_RANK.search(head)
    return int(m.group(1)) if m else None


def summarize(job: Job) -> list[RankResult] | Failed:
    """The map step: one report -> its RankResult (one per process when the report holds
    several ranks), or Failed with the reason (never raises for a bad report: the reason
    travels back from a worker as data)."""
    from tuiperf.analysis.ranks.split import process_trace, several_ranks
    from tuiperf.load.detect import KINETO, detect
    from tuiperf.load.open import OpenOptions, open_trace

    path = Path(job.path)
    try:
        kind = detect(path)
        opts = OpenOptions(
            cache_dir=Path(job.cache_dir) if job.cache_dir else None,
            use_cache=job.use_cache,
            cache_max=job.cache_max,
        )
        trace = open_trace(path, opts)
        meta_rank = kineto_rank(path) if kind == KINETO else None
        pids = several_ranks(trace)
        if not pids:
            one = _reduce(Ctx(trace), path, meta_rank)
            return one if isinstance(one, Failed) else [one]
        found: list[RankResult] = []
        for i, pid in enumerate(pids):
            r = _reduce(Ctx(process_trace(trace, pid)), path, None)
            if isinstance(r, RankResult):  # a process with no steps is no rank
                r.pid, r.proc_index = pid, i
                found.append(r)
        return found or Failed(str(path), f"{path}: no process with training steps")
    except TuiperfError as e:
        return Failed(str(path), str(e))


def _step_parts(st: list[Any], comm: list[Any], ranges: bool) -> dict[str, np.ndarray]:
    """STEP_COLUMNS per steady step, the parts adding up to the step: the budget's compute,
    copies, exposed communication (kernels with nothing else on the GPU) and idle time.
    With CPU collective ranges (gloo) the GPU idles while the CPU is in a collective: that
    idle time (up to the step's idle) is the exposed part, and GPU idle is the rest."""
    cols: dict[str, list[int]] = {c: [] for c in STEP_COLUMNS}
    for s, c in zip(st, comm, strict=True):
        idle = sum(s.parts.ns[p] for p in IDLE_PARTS)
        waiting = min(c.exposed_ns, idle) if ranges else 0
        cols["wall_ns"].append(s.parts.wall_ns)
        cols["compute_ns"].append(s.parts.ns["compute"])
        cols["comm_ns"].append(c.comm_ns)
        cols["exposed_ns"].append(s.parts.ns["comm"] + waiting)
        cols["copy_ns"].append(s.parts.ns["copy"])
        cols["idle_ns"].append(idle - waiting)
    return {k: np.array(v, np.int64) for k, v in cols.items()}


def _reduce(ctx: Ctx, path: Path, meta_rank: int | None) -> RankResult | Failed:
    b = ctx.budget
    lc = loop_comm(ctx)
    if b is None or lc is None:
        return Failed(str(path), f"{path}: no training steps found (no step ranges, no "
                      "repeated kernel pattern): nothing to compare across ranks")  # fmt: skip
    st = b.main.steps
    steps = _step_parts(st, lc.steps, lc.source == "ranges")
    first = st[0].start_ns
    keep = lc.ends > first  # the loop's collectives, from the first steady step on
    kinds = dataclasses.replace(lc, starts=lc.starts[keep], ends=lc.ends[keep],
                                kinds=lc.kinds[keep]).by_kind()  # fmt: skip
    return RankResult(
        path=str(path),
        name_rank=rank_in_name(path),
        meta_rank=meta_rank,
        step_source=b.method,
        comm_source=lc.source,
        device=lc.device,
        labels=[s.label for s in st],
        starts=np.array([s.start_ns for s in st], np.int64),
        steps=steps,
        coll_starts=lc.starts[keep],
        coll_ends=lc.ends[keep],
        collectives=kinds,
        comm_kernels=[row.to_json() for row in comm_by_device(ctx)],
    )
