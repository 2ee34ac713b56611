"""Readings of one ncu kernel: its Speed Of Light verdict, occupancy limiters, top stalls.

The verdict follows the decision of Nsight Compute's own SOLBottleneck rule (its rule file
`SpeedOfLight.py`, shipped in ncu's `sections/` folder): with SM throughput `sm` and memory
throughput `mem` in % of peak,

* either at or above 80 %  -> high throughput: bound by the busier unit;
* both below 60 %          -> latency-bound ("small grid" when under one wave per SM);
* |sm - mem| >= 10 points  -> compute- or memory-bound, by the busier one;
* otherwise                -> balanced.

Headless: reads `KernelMetrics` only.
"""

from __future__ import annotations

from dataclasses import dataclass

from tuiperf.model.ncu.metrics import KernelMetrics

#: SOLBottleneck's thresholds, in % of peak (balanced_threshold, latency_bound_threshold,
#: no_bound_threshold) and waves per SM (waves_threshold), as its rule file states them
SOL_BALANCED_PTS = 10.0
SOL_LATENCY_PCT = 60.0
SOL_HIGH_PCT = 80.0
SOL_WAVES = 1.0

SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM_PCT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DURATION = "gpu__time_duration.sum"
WAVES = "launch__waves_per_multiprocessor"
THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"

#: occupancy limits (blocks per SM each resource allows): metric -> what limits
LIMITERS = (
    ("launch__occupancy_limit_registers", "registers"),
    ("launch__occupancy_limit_shared_mem", "shared memory"),
    ("launch__occupancy_limit_warps", "warps"),
    ("launch__occupancy_limit_blocks", "blocks (SM)"),
    ("launch__occupancy_limit_barriers", "barriers"),
)

COMPUTE, MEMORY, LATENCY, BALANCED, SMALL_GRID = (
    "compute-bound",
    "memory-bound",
    "latency-bound",
    "balanced",
    "latency-bound (small grid)",
)


@dataclass(frozen=True)
class Verdict:
    kind: str  # one of the constants above, or "" when SOL metrics are missing
    sm_pct: float | None
    mem_pct: float | None
    text: str  # one line for people


def sol_verdict(km: KernelMetrics, kid: int) -> Verdict:
    """Compute-, memory- or latency-bound, by ncu's SOLBottleneck decision."""
    sm, mem = km.value(kid, SM_PCT), km.value(kid, MEM_PCT)
    if sm is None or mem is None:
        return Verdict("", sm, mem, "no Speed Of Light metrics in this report")
    busier = COMPUTE if sm >= mem else MEMORY
    if max(sm, mem) >= SOL_HIGH_PCT:
        unit = "compute" if sm >= mem else "memory"
        why = f"{unit} at {max(sm, mem):.1f}% of peak (>= {SOL_HIGH_PCT:.0f}%)"
        return Verdict(busier, sm, mem, f"{busier}: {why}")
    if sm < SOL_LATENCY_PCT and mem < SOL_LATENCY_PCT:
        waves = km.value(kid, WAVES)
        if waves is not None and waves < SOL_WAVES:
            text = f"{SMALL_GRID}: {waves:.2f} waves per SM, both units under 60% of peak"
            return Verdict(SMALL_GRID, sm, mem, text)
        text = f"{LATENCY}: compute {sm:.1f}% and memory {mem:.1f}%, both under 60% of peak"
        return Verdict(LATENCY, sm, mem, text)
    if abs(sm - mem) >= SOL_BALANCED_PTS:
        lead = f"{'compute' if sm > mem else 'memory'} leads by {abs(sm - mem):.1f} points"
        return Verdict(busier, sm, mem, f"{busier}: {lead}")
    return Verdict(BALANCED, sm, mem, f"{BALANCED}: compute {sm:.1f}%, memory {mem:.1f}%")


@dataclass(frozen=True)
class Limiter:
    what: str
    blocks: float  # blocks per SM this resource allows
    limiting: bool  # the lowest of them all


@dataclass(frozen=True)
class Occupancy:
    theoretical: float | None
    achieved: float | None
    limiters: tuple[Limiter, ...]

    @property
    def limiting(self) -> list[str]:
        return [lim.what for lim in self.limiters if lim.limiting]


def occupancy(km: KernelMetrics, kid: int) -> Occupancy:
    found = [(what, km.value(kid, name)) for name, what in LIMITERS]
    known = [(w, v) for w, v in found if v is not None]
    low = min((v for _, v in known), default=None)
    limiters = tuple(Limiter(w, v, v == low) for w, v in known)
    return Occupancy(km.value(kid, THEORETICAL), km.value(kid, ACHIEVED), limiters)


@dataclass(frozen=True)
class Stall:
    reason: str  # `long scoreboard`
    label: str  # ncu's label, `Stall Long Scoreboard`
    cycles: float  # warp cycles per issued instruction spent in this state


def stalls(km: KernelMetrics, kid: int, n: int = 5) -> list[Stall]:
    """The `n` largest warp stall reasons (Warp State Statistics), largest first.

    `selected` is the issuing state, not a stall, and is left out."""
    out, seen = [], set()
    for m in km.metrics_of(kid):
        name = m.name or ""
        if name in seen:
            continue
        seen.add(name)
        if not (name.startswith(STALL_PREFIX) and name.endswith(STALL_SUFFIX)):
            continue
        reason = name[len(STALL_PREFIX) : -len(STALL_SUFFIX)]
        if reason == "selected" or m.value is None or m.value <= 0:
            continue
        out.append(Stall(reason.replace("_", " "), m.label or reason, m.value))
    out.sort(key=lambda s: -s.cycles)
    return out[:n]
