"""The memory findings: creep across steady steps, fragmentation, an out-of-memory."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tuiperf.analysis.findings import (
    SCOPE_REPORT,
    SOURCE_TUIPERF,
    Evidence,
    Finding,
    Fix,
    Scope,
    Severity,
)
from tuiperf.analysis.gpumem.live import BEFORE, NO_SITE, SiteBytes, live_arrays
from tuiperf.analysis.gpumem.summary import DeviceReport, MemoryReport, Oom, StepMemory
from tuiperf.load.gpumem import categories
from tuiperf.load.gpumem import tables as T
from tuiperf.model import fmt

#: creep: fewest steady steps whose start-of-step memory is compared
CREEP_MIN_STEPS = 3
#: creep: least growth (bytes) across the steady steps, or live at the end from one line
CREEP_MIN_BYTES = 1 << 20
#: creep by line (a snapshot): fewest allocations from the line still live at the end
CREEP_MIN_REPEATS = 3
#: creep by line: the live allocations must have been made in this many separate steps
#: (the report's steps when it has them, else stretches of the recording, CREEP_WINDOW)
CREEP_MIN_PERIODS = 3
#: ... and no one of them may have made more than this share of the allocations (made once,
#: or mostly in one step, it is state or the last step's work, not a leak)
CREEP_MAX_PERIOD_SHARE = 0.5
#: without steps: a stretch is this share of the device's trace entries (entries, not
#: time: start-up can take most of a recording's time, as CUDA and cuBLAS initialise)
CREEP_WINDOW = 0.1
#: fragmentation: reserved - allocated at the peak, in bytes and as a share of reserved
FRAG_MIN_BYTES = 256 << 20
FRAG_MIN_SHARE = 0.25
#: ... and it is *fragmented* (a warning) when the largest free block is under this share
#: of the free bytes: the cache cannot serve a request of their size
FRAG_MAX_LARGEST = 0.5

RULE_CREEP = "memory_creep"
RULE_FRAG = "memory_fragmentation"
RULE_OOM = "out_of_memory"
RULE_PEAK = "memory_peak_makeup"
RULES = (RULE_CREEP, RULE_FRAG, RULE_OOM, RULE_PEAK)
#: the peak is "dominated" by activations / optimizer state from these shares of it on
ACTIVATIONS_SHARE = 0.5
OPTIMIZER_SHARE = 0.3

EXPANDABLE = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
_SITE_HEADERS = {"site": "Source line", "bytes": "Bytes", "count": "Allocations"}


def memory_findings(rep: MemoryReport) -> list[Finding]:
    out: list[Finding] = []
    for d in rep.devices:
        out += creep_by_steps(d) + creep_by_line(rep, d) + fragmentation(rep, d)
        out += peak_makeup(rep, d)
        out += [out_of_memory(rep, d, o) for o in d.ooms]
    return out


def _finding(
    rule: str,
    sev: Severity,
    title: str,
    msg: str,
    fix: Fix,
    ev: Evidence,
    metrics: dict,
    count: int = 1,
) -> Finding:
    return Finding(
        rule, title, sev, msg, fix, Scope(SCOPE_REPORT), SOURCE_TUIPERF, count, ev, metrics=metrics
    )


def _site_text(s: SiteBytes) -> str:
    if s.file in (BEFORE, NO_SITE):
        return s.file
    return f"{s.file}:{s.line} ({s.function})"


def _site_evidence(sites: list[SiteBytes]) -> Evidence:
    n = len(sites)
    return Evidence.build(
        "",
        None,
        None,
        np.zeros(n, np.int64),
        {
            "site": pa.array([_site_text(s) for s in sites], pa.string()),
            "bytes": pa.array([s.bytes for s in sites], pa.int64()),
            "count": pa.array([s.count for s in sites], pa.int64()),
        },
        _SITE_HEADERS,
    )


# -- creep -----------------------------------------------------------------------------
def creep_by_steps(d: DeviceReport) -> list[Finding]:
    """Memory at the start of each steady step that only grows, by CREEP_MIN_BYTES or more."""
    steady = [s for s in d.steps if s.steady]
    if len(steady) < CREEP_MIN_STEPS:
        return []
    v = np.array([_level(s) for s in steady], np.int64)
    growth = int(v[-1] - v[0])
    if growth < CREEP_MIN_BYTES or (np.diff(v) < 0).any():
        return []
    what = "allocated" if steady[0].allocated is not None else "cudaMalloc'd device"
    msg = (
        f"GPU {d.device}: {what} memory at the start of each steady step grows by "
        f"{fmt.size(growth)} over {len(steady)} steps ({fmt.size(growth / (len(steady) - 1))} "
        "a step) and never falls back: something made in each step is kept."
    )
    ev = Evidence.build(
        "",
        None,
        np.array([s.start_ns for s in steady]),
        np.zeros(len(steady), np.int64),
        {"step": [s.label for s in steady], "bytes": v.tolist()},
        {"step": "Step", "bytes": f"{what.split()[0].capitalize()} at start"},
    )
    fix = Fix(
        "Find what each step keeps: a loss or output stored with its graph (keep "
        "loss.item() or .detach()), a growing list of tensors, or a cache keyed per step. "
        "A snapshot names the line: torch.cuda.memory._record_memory_history().",
        _CREEP_SNIPPET,
    )
    metrics = {"device": d.device, "growth_bytes": growth, "steps": len(steady)}
    return [
        _finding(
            RULE_CREEP,
            Severity.WARNING,
            "Memory grows every step",
            msg,
            fix,
            ev,
            metrics,
            len(steady),
        )
    ]


def _level(s: StepMemory) -> int:
    return s.allocated if s.allocated is not None else s.reserved


_CREEP_SNIPPET = """\
running_loss += loss.item()        # not: running_loss += loss (keeps every step's graph)
outputs.append(out.detach().cpu()) # not: outputs.append(out)"""


def creep_by_line(rep: MemoryReport, d: DeviceReport) -> list[Finding]:
    """Lines whose allocations still live at the end were made again and again: at least
    CREEP_MIN_REPEATS of them, CREEP_MIN_BYTES in all, in CREEP_MIN_PERIODS or more
    separate steps, none of which made more than CREEP_MAX_PERIOD_SHARE of them. State
    made once (weights, optimizer state) and what the last step made (its gradients and
    activations) are live at the end too, but in one or two steps: not a leak."""
    m = d.curve
    if rep.kind != T.SNAPSHOT or len(m) == 0:
        return []
    live = live_arrays(m.end)
    line, keys = _lines(rep.data.sites, live["site"])
    period = periods(d, live["pos"], live["time"])
    by_step = bool(d.steps)
    found = []
    for k in np.unique(line).tolist():
        key, mine = keys[k], line == k
        n = int(mine.sum())
        size = int(live["block"][mine].sum())
        if n < CREEP_MIN_REPEATS or size < CREEP_MIN_BYTES:
            continue
        spread = Spread.of(period[mine], by_step)
        if spread.creeps():
            found.append((size, n, key, spread))
    found.sort(key=lambda f: (-f[0], f[2]))
    return [_line_finding(d, *f) for f in found]


def _lines(sites: pa.Table, site: np.ndarray) -> tuple[np.ndarray, list[tuple[str, int, str]]]:
    """Each allocation's source line (an index into the keys returned), as the live-by-line
    table groups them: a line's categories together, and every stack without a user frame
    as one line (NO_SITE)."""
    files, lines = sites["file"].to_pylist(), sites["line"].to_pylist()
    funcs = sites["function"].to_pylist()
    keys: dict[tuple[str, int, str], int] = {}
    lut = [keys.setdefault((f, ln, fn) if f else (NO_SITE, 0, ""), len(keys))
           for f, ln, fn in zip(files, lines, funcs)]  # fmt: skip
    none = keys.setdefault((NO_SITE, 0, ""), len(keys))
    line = np.array([*lut, none], np.int64)[site] if len(site) else site
    return line, list(keys)


def periods(d: DeviceReport, pos: np.ndarray, time_ns: np.ndarray | None = None) -> np.ndarray:
    """The step each allocation at event position `pos` (sorted; made at `time_ns`) was
    made in: the report's steps when it has them (-1 before the first), else stretches of
    CREEP_WINDOW of the trace's entries, each opened by the first allocation after the
    last one closed."""
    m = d.curve
    if d.steps:
        starts = np.array([s.start_ns for s in d.steps], np.int64)
        t = m.time_ns[pos] if time_ns is None else time_ns  # the curve's, when it has every event
        return np.searchsorted(starts, t, "right") - 1
    window = max(CREEP_WINDOW * len(m), 1.0)
    out = np.zeros(len(pos), np.int64)
    k, end = -1, -np.inf
    for i, p in enumerate(pos.tolist()):
        if p >= end:
            k, end = k + 1, p + window
        out[i] = k
    return out


@dataclass
class Spread:
    """Over how many steps a line's live allocations were made, and the most in one."""

    periods: int
    most: int
    total: int
    by_step: bool
    #: one of the periods is the time before the report's first step
    before: bool = False

    @classmethod
    def of(cls, period: np.ndarray, by_step: bool) -> Spread:
        counts = np.unique(period, return_counts=True)[1]
        before = by_step and bool((period < 0).any())
        return cls(len(counts), int(counts.max()), len(period), by_step, before)

    def creeps(self) -> bool:
        return (
            self.periods >= CREEP_MIN_PERIODS and self.most <= CREEP_MAX_PERIOD_SHARE * self.total
        )

    def text(self) -> str:
        what = "steps" if self.by_step else "separate stretches of the recording"
        first = ", one of them the time before the first step" if self.before else ""
        return f"in {self.periods} {what} (at most {self.most} in one{first})"


def _line_finding(
    d: DeviceReport, size: int, n: int, key: tuple[str, int, str], spread: Spread
) -> Finding:
    site = SiteBytes(*key, size, n)
    where = "allocations with no Python frame of yours (the autograd engine or C++)"
    who = f"{n} {where}" if site.file == NO_SITE else f"{n} allocations made at {_site_text(site)}"
    msg = (
        f"GPU {d.device}: {who} {spread.text()} are still live at the end of the "
        f"recording ({fmt.size(size)}): made again and again, never freed."
    )
    fix = Fix(
        (
            f"Look at what {site.file.rsplit('/', 1)[-1]}:{site.line} keeps: store "
            if site.file != NO_SITE
            else "Look at what keeps the backward pass's results (record C++ frames: "
            "_record_memory_history(stacks='all')): store "
        )
        + ".item() / .detach() values, not tensors that hold their autograd graph.",
        _CREEP_SNIPPET,
    )
    metrics = {
        "device": d.device,
        "file": site.file,
        "line": site.line,
        "function": site.function,
        "live_bytes": size,
        "allocations": n,
        "periods": spread.periods,
        "most_in_one_period": spread.most,
        "periods_are_steps": spread.by_step,
    }
    return _finding(
        RULE_CREEP,
        Severity.WARNING,
        "Allocations never freed",
        msg,
        fix,
        _site_evidence([site]),
        metrics,
        n,
    )


# -- fragmentation ---------------------------------------------------------------------
def fragmentation(rep: MemoryReport, d: DeviceReport) -> list[Finding]:
    """At the report's moment: reserved - allocated of FRAG_MIN_BYTES and FRAG_MIN_SHARE."""
    p = d.at
    free = p.free_cached
    if free is None or p.reserved <= 0:
        return []
    share = free / p.reserved
    if free < FRAG_MIN_BYTES or share < FRAG_MIN_SHARE:
        return []
    largest = (
        "" if p.largest_free is None else f"; the largest free block is {fmt.size(p.largest_free)}"
    )
    msg = (
        f"GPU {d.device}: at the {_moment(rep)} the allocator holds {fmt.size(p.reserved)} "
        f"but only {fmt.size(p.allocated)} is in use: {fmt.size(free)} ({share:.0%}) sits in "
        f"cached free blocks{largest}."
    )
    fix = _frag_fix(rep)
    metrics = {
        "device": d.device,
        "reserved_bytes": p.reserved,
        "allocated_bytes": p.allocated,
        "free_cached_bytes": free,
        "largest_free_bytes": p.largest_free,
    }
    split = p.largest_free is not None and p.largest_free < FRAG_MAX_LARGEST * free
    sev, title = (Severity.WARNING, "Fragmented allocator cache") if split else _CACHED
    return [_finding(RULE_FRAG, sev, title, msg, fix, Evidence.empty(), metrics)]


#: without the blocks (torch.profiler) or with one free block holding most of the free
#: bytes, cached memory is not shown to be unusable: said, as information
_CACHED = (Severity.INFO, "Much memory cached but free at the peak")


def _moment(rep: MemoryReport) -> str:
    return "peak" if rep.at == "peak" else f"time {rep.at} ns"


def _frag_fix(rep: MemoryReport) -> Fix:
    conf = str(rep.data.settings.get("PYTORCH_CUDA_ALLOC_CONF", rep.data.settings))
    if "expandable_segments" in conf and "True" in conf:
        return Fix(
            "Expandable segments are on already: free the cache between phases with "
            "a lower garbage_collection_threshold, or cap splits with max_split_size_mb.",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,garbage_collection_threshold:0.6",
        )
    return Fix(
        "Let the allocator grow segments in place instead of caching many sized ones: "
        "set expandable_segments before the process starts (or max_split_size_mb to "
        "stop large blocks being split).",
        EXPANDABLE,
    )


# -- what the peak is made of ---------------------------------------------------------
def peak_makeup(rep: MemoryReport, d: DeviceReport) -> list[Finding]:
    """Activations from ACTIVATIONS_SHARE of the allocated bytes, or optimizer state from
    OPTIMIZER_SHARE, at the report's moment (categories the stacks tell)."""
    p = d.at
    total = p.allocated or 0
    if total <= 0:
        return []
    out = []
    for cat, share, fix in (
        (categories.ACTIVATIONS, ACTIVATIONS_SHARE, _ACTIVATIONS_FIX),
        (categories.OPTIMIZER, OPTIMIZER_SHARE, _OPTIMIZER_FIX),
    ):
        held = p.categories.get(cat, 0)
        if held >= share * total:
            msg = (
                f"GPU {d.device}: at the {_moment(rep)} {cat} hold {fmt.size(held)} of the "
                f"{fmt.size(total)} allocated ({held / total:.0%})."
            )
            metrics = {"device": d.device, "category": cat, "bytes": held, "allocated_bytes": total}
            title = f"The peak is mostly {cat}"
            out.append(
                _finding(RULE_PEAK, Severity.INFO, title, msg, fix, Evidence.empty(), metrics)
            )
    return out


_ACTIVATIONS_FIX = Fix(
    "Keep fewer activations for the backward pass: activation checkpointing on the largest "
    "blocks, a smaller micro-batch with gradient accumulation, or bf16 autocast.",
    "from torch.utils.checkpoint import checkpoint\n"
    "y = checkpoint(block, x, use_reentrant=False)   # recompute in backward",
)
_OPTIMIZER_FIX = Fix(
    "Shrink the optimizer state: a fused optimizer (no per-parameter temporaries), 8-bit or "
    "factored states, or shard it across ranks (ZeroRedundancyOptimizer, FSDP).",
    "opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)\n"
    "# or: torch.distributed.optim.ZeroRedundancyOptimizer(params, torch.optim.AdamW, lr=lr)",
)


# -- out of memory ---------------------------------------------------------------------
def out_of_memory(rep: MemoryReport, d: DeviceReport, o: Oom) -> Finding:
    p = o.point
    free = p.free_cached or 0
    held = p.sites[:5]
    top = f" The most is held by {_site_text(held[0])} ({fmt.size(held[0].bytes)})." if held else ""
    dev_free = (
        ""
        if o.device_free_bytes is None
        else f" with {fmt.size(o.device_free_bytes)} free on the device"
    )
    msg = (
        f"GPU {d.device} ran out of memory asking for {fmt.size(o.requested_bytes)}{dev_free}: "
        f"the allocator held {fmt.size(p.reserved)}, {fmt.size(p.allocated)} of it in use and "
        f"{fmt.size(free)} in cached free blocks"
        + ("" if p.largest_free is None else f" (largest {fmt.size(p.largest_free)})")
        + f".{top}"
    )
    metrics = {
        "device": d.device,
        "requested_bytes": o.requested_bytes,
        "device_free_bytes": o.device_free_bytes,
        "reserved_bytes": p.reserved,
        "allocated_bytes": p.allocated,
        "free_cached_bytes": free,
        "largest_free_bytes": p.largest_free,
    }
    return _finding(
        RULE_OOM,
        Severity.ERROR,
        "Out of memory",
        msg,
        _oom_fix(rep, o),
        _site_evidence(held),
        metrics,
    )


def _oom_fix(rep: MemoryReport, o: Oom) -> Fix:
    """Fragmentation when the free bytes (cached pieces and the device's) would have held
    the request but no piece did; else lower the peak by what was missing."""
    p = o.point
    free = (p.free_cached or 0) + (o.device_free_bytes or 0)
    largest = max(p.largest_free or 0, o.device_free_bytes or 0)
    if free >= o.requested_bytes > largest:
        return Fix(
            f"{fmt.size(free)} was free, but in pieces smaller than the request: let the "
            "allocator expand segments instead of splitting cached ones.",
            EXPANDABLE,
        )
    short = o.requested_bytes - free
    need = f"about {fmt.size(short)} more than was free" if short > 0 else "less memory"
    return Fix(
        f"The step needs {need}: lower the peak (a smaller micro-batch with gradient "
        "accumulation, activation checkpointing, bf16 autocast, or a fused/sharded "
        "optimizer), starting with the line holding the most.",
        _OOM_SNIPPET,
    )


_OOM_SNIPPET = """\
from torch.utils.checkpoint import checkpoint
y = checkpoint(block, x, use_reentrant=False)   # recompute activations in backward
# or: micro-batch half the size, loss / accum_steps, optimizer.step() every accum_steps"""
