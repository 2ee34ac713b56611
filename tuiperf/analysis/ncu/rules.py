"""Per-kernel rules over an Nsight Compute report (`tuiperf.model.ncu.metrics.KernelMetrics`).

Two kinds: ncu's own rule results (with its estimated speedups), and tuiperf's reading of
the sections (Speed Of Light, Occupancy, Launch Statistics, Memory Workload). Launches of one
kernel are grouped by mangled name. With a timeline report too (nsys or torch.profiler), a
kernel's saving is its ncu speedup times its total GPU time in that report, so a 50 % speedup
on a kernel that takes 0.1 % of the run ranks below 10 % on one that takes half. Kernels are
matched by mangled name where the trace has them (nsys), else by demangled name (Kineto's
kernel name is the demangled one), else by short name when that names one kernel only
(`tuiperf.model.ncu.groups`).

Where tuiperf's reading and ncu's own rule say the same thing about a kernel (uncoalesced
loads, theoretical occupancy, small grid, tail effect), `merge_readings` makes them one
finding: ncu's rule, evidence and estimate, tuiperf's PyTorch-level fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tuiperf.analysis import fixes
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import (
    SCOPE_KERNEL,
    SOURCE_NCU,
    Evidence,
    Finding,
    Fix,
    Scope,
    Severity,
    Skip,
)
from tuiperf.analysis.kernel_levers import fix_for_kernel
from tuiperf.model import arrays as A
from tuiperf.model import fmt
from tuiperf.model.ncu.groups import KernelGroup, groups
from tuiperf.model.ncu.metrics import KernelMetrics, RuleResult, render_message
from tuiperf.model.trace import Trace

#: Speed Of Light: a unit above this % of peak is "busy" (ncu's SOLBottleneck rule calls
#: throughput under 60 % of peak low and points at latency)
SOL_BUSY_PCT = 60.0
#: … and the busier unit must lead the other by this many points to name a bottleneck
SOL_MARGIN_PCT = 10.0
#: theoretical occupancy below this % is worth naming its limiter (ncu's Occupancy section
#: treats 50 % as the point where latency hiding starts to suffer)
LOW_OCCUPANCY_PCT = 50.0
#: a global load using fewer than this many of the 32 bytes of each sector is uncoalesced
#: (ncu's MemoryCacheAccessPattern rule reports bytes used per 32-byte sector)
MIN_BYTES_PER_SECTOR = 16.0
#: tail effect: a partial last wave of at most this fraction, on few waves (ncu's
#: LaunchConfiguration rule: the tail matters when there are only a few waves)
TAIL_FRACTION = 0.5
TAIL_MAX_WAVES = 4.0
#: an ncu "optimization" result with at least this estimated speedup (%) is a warning
WARN_SPEEDUP_PCT = 10.0

_OCC_LIMITS = {
    "launch__occupancy_limit_registers": "registers per thread",
    "launch__occupancy_limit_shared_mem": "shared memory per block",
    "launch__occupancy_limit_warps": "block size (warps per block)",
    "launch__occupancy_limit_blocks": "blocks per SM",
}


Rule = Callable[[KernelMetrics, Ctx | None], list[Finding]]


def _trace(ctx: Ctx | None) -> Trace | None:
    return ctx.trace if ctx is not None else None


def _evidence(km: KernelMetrics, g: KernelGroup, ctx: Ctx | None) -> Evidence:
    if ctx is not None and g.nsys_rows is not None:
        t = ctx.table("kernels")
        return Evidence.build(
            "kernels",
            g.nsys_rows,
            A.ints(t, "start")[g.nsys_rows],
            A.ints(t, "duration")[g.nsys_rows],
        )
    d = [km.value(kid, "gpu__time_duration.sum") or 0 for kid in g.ids]
    return Evidence.build(
        "ncu_kernels",
        np.array(g.ids),
        None,
        np.array(d, np.int64),
        {"ncu_id": np.array(g.ids)},
        {"ncu_id": "ncu ID"},
    )


def _finding(
    km: KernelMetrics,
    ctx: Ctx | None,
    g: KernelGroup,
    rule: str,
    sev: Severity,
    msg: str,
    speedup_pct: float | None,
    metrics: dict[str, Any],
    title: str | None = None,
    fix: Fix | None = None,
) -> Finding:
    ev = _evidence(km, g, ctx)
    fix = fix or fix_for_kernel(rule, g.name)
    saving = None if speedup_pct is None else int(g.weight_ns() * speedup_pct / 100.0)
    if g.nsys_ns is not None and ctx is not None and ctx.kernel_time_ns:
        metrics = {**metrics, "share_of_gpu_time": round(g.nsys_ns / ctx.kernel_time_ns, 4)}
    return Finding(
        rule=rule,
        title=title or fixes.title_for(rule),
        severity=sev,
        message=msg,
        fix=fix,
        scope=Scope(SCOPE_KERNEL, g.name),
        source=SOURCE_NCU,
        count=len(ev),
        evidence=ev,
        est_saving_ns=saving,
        kernel=g.name,
        metrics={"ncu_ids": g.ids, **metrics},
    )


def _need(km: KernelMetrics) -> None:
    if km is None or len(km) == 0:
        raise Skip("no kernels in the Nsight Compute report")


_NOTE = " In the timeline report it takes "


def _weight_note(g: KernelGroup, ctx: Ctx | None) -> str:
    if g.nsys_ns is None:
        return ""
    share = g.nsys_ns / ctx.kernel_time_ns if ctx and ctx.kernel_time_ns else 0.0
    return f"{_NOTE}{fmt.duration(g.nsys_ns)} ({share:.1%} of GPU time)."


# -- ncu's own rules ---------------------------------------------------------------------
def ncu_rule_results(km: KernelMetrics, ctx: Ctx | None) -> list[Finding]:
    """ncu's rule results that are not OK, one finding per kernel and rule."""
    _need(km)
    out = []
    for g in groups(km, _trace(ctx)):
        seen: dict[tuple[str, str], list[RuleResult]] = {}
        for kid in g.ids:
            for r in km.rules(kid):
                if r.type in ("optimization", "warning", "error") and r.message:
                    seen.setdefault((r.rule_id, r.title or r.rule_name or ""), []).append(r)
        for (rid, title), rs in seen.items():
            out.append(_own(km, ctx, g, rid, title, rs))
    return out


def _own(
    km: KernelMetrics, ctx: Ctx | None, g: KernelGroup, rid: str, title: str, rs: list[RuleResult]
) -> Finding:
    speedups = [r.speedup for r in rs if r.speedup is not None]
    speedup = float(np.mean(speedups)) if speedups else None
    kind = rs[0].type
    sev = (
        Severity.ERROR
        if kind == "error"
        else Severity.WARNING
        if kind == "warning" or (speedup or 0) >= WARN_SPEEDUP_PCT
        else Severity.INFO
    )
    msg = render_message(rs[0].message).strip()
    if speedup is not None:
        msg += f" (ncu estimates a {speedup:.1f}% {rs[0].speedup_type or ''} speedup.)"
    msg += _weight_note(g, ctx)
    focus = {f.metric: f.value for f in rs[0].focus}
    fix = fix_for_kernel(rid, g.name, rs[0].section_id)
    return _finding(
        km,
        ctx,
        g,
        f"ncu:{rid}",
        sev,
        msg,
        speedup,
        {"section": rs[0].section_id, "speedup_pct": speedup, **focus},
        title=f"{title or rid} (ncu)" if title else rid,
        fix=fix,
    )


# -- tuiperf's readings of the sections --------------------------------------------------
def bound(km: KernelMetrics, ctx: Ctx | None) -> list[Finding]:
    """Memory-, compute- or latency-bound, from GPU Speed Of Light throughputs."""
    _need(km)
    out = []
    for g in groups(km, _trace(ctx)):
        sm, mem = km.throughput(g.rep)
        if sm is None or mem is None:
            continue
        if mem >= SOL_BUSY_PCT and mem >= sm + SOL_MARGIN_PCT:
            rule, why = "memory_bound", f"memory throughput {mem:.1f}% of peak vs compute {sm:.1f}%"
        elif sm >= SOL_BUSY_PCT and sm >= mem + SOL_MARGIN_PCT:
            rule, why = (
                "compute_bound",
                f"compute throughput {sm:.1f}% of peak vs memory {mem:.1f}%",
            )
        elif max(sm, mem) < SOL_BUSY_PCT:
            rule, why = (
                "latency_bound",
                (
                    f"compute {sm:.1f}% and memory {mem:.1f}% of peak, both "
                    f"under {SOL_BUSY_PCT:.0f}%"
                ),
            )
        else:
            continue
        msg = f"{g.name}: {why}." + _weight_note(g, ctx)
        out.append(
            _finding(
                km,
                ctx,
                g,
                rule,
                Severity.INFO,
                msg,
                None,
                {"compute_pct": round(sm, 2), "memory_pct": round(mem, 2)},
            )
        )
    return out


def occupancy(km: KernelMetrics, ctx: Ctx | None) -> list[Finding]:
    """Low theoretical occupancy, and which launch limit causes it."""
    _need(km)
    out = []
    for g in groups(km, _trace(ctx)):
        theo = km.value(g.rep, "sm__maximum_warps_per_active_cycle_pct")
        limits = {n: km.value(g.rep, n) for n in _OCC_LIMITS}
        known = {n: v for n, v in limits.items() if v is not None}
        if theo is None or theo >= LOW_OCCUPANCY_PCT or not known:
            continue
        worst = min(known, key=lambda n: known[n])
        achieved = km.value(g.rep, "sm__warps_active.avg.pct_of_peak_sustained_active")
        speedup = _rule_speedup(km, g, "TheoreticalOccupancy")
        msg = (
            f"{g.name}: theoretical occupancy {theo:.1f}%"
            + (f" (achieved {achieved:.1f}%)" if achieved is not None else "")
            + f", limited by {_OCC_LIMITS[worst]} ({known[worst]:.0f} blocks per SM)."
            + _weight_note(g, ctx)
        )
        metrics = {
            "theoretical_pct": round(theo, 2),
            "limiter": _OCC_LIMITS[worst],
            **{n.rsplit("_", 1)[-1]: v for n, v in known.items()},
        }
        sev = Severity.WARNING if (speedup or 0) >= WARN_SPEEDUP_PCT else Severity.INFO
        out.append(_finding(km, ctx, g, "occupancy_limited", sev, msg, speedup, metrics))
    return out


def uncoalesced(km: KernelMetrics, ctx: Ctx | None) -> list[Finding]:
    """Global loads that use little of each 32-byte sector."""
    _need(km)
    out = []
    for g in groups(km, _trace(ctx)):
        used = km.value(g.rep, "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio")
        if used is None or used >= MIN_BYTES_PER_SECTOR or used <= 0:
            continue
        speedup = _rule_speedup(km, g, "UncoalescedGlobalAccess") or _rule_speedup(
            km, g, "MemoryCacheAccessPattern"
        )
        msg = (
            f"{g.name}: global loads use {used:.1f} of every 32 bytes fetched per sector."
            + _weight_note(g, ctx)
        )
        sev = Severity.WARNING if (speedup or 0) >= WARN_SPEEDUP_PCT else Severity.INFO
        out.append(
            _finding(
                km,
                ctx,
                g,
                "uncoalesced_access",
                sev,
                msg,
                speedup,
                {"bytes_per_sector": round(used, 2)},
            )
        )
    return out


def launch_shape(km: KernelMetrics, ctx: Ctx | None) -> list[Finding]:
    """A grid smaller than one wave, or a small partial last wave (tail effect)."""
    _need(km)
    out = []
    for g in groups(km, _trace(ctx)):
        waves = km.value(g.rep, "launch__waves_per_multiprocessor")
        grid = km.value(g.rep, "launch__grid_size")
        sms = km.value(g.rep, "launch__sm_count")
        if waves is None or waves <= 0:
            continue
        metrics = {"waves_per_sm": round(waves, 3), "grid_size": grid, "sm_count": sms}
        if waves < 1.0 and grid is not None and sms is not None and grid < sms:
            msg = (
                f"{g.name}: {grid:.0f} blocks for {sms:.0f} SMs ({waves:.2f} of a wave): "
                f"{1 - grid / sms:.0%} of the SMs get no block." + _weight_note(g, ctx)
            )
            out.append(
                _finding(km, ctx, g, "small_grid", Severity.INFO, msg, 100.0 * (1 - waves), metrics)
            )
            continue
        frac = waves - np.floor(waves)
        if 0 < frac <= TAIL_FRACTION and waves < TAIL_MAX_WAVES:
            lost = 100.0 * (1 - frac) / np.ceil(waves)
            msg = (
                f"{g.name}: {waves:.2f} waves; the last one is {frac:.0%} full, so about "
                f"{lost:.0f}% of the kernel's time runs on a partly idle GPU."
                + _weight_note(g, ctx)
            )
            out.append(_finding(km, ctx, g, "tail_effect", Severity.INFO, msg, lost, metrics))
    return out


def _rule_speedup(km: KernelMetrics, g: KernelGroup, rule_id: str) -> float | None:
    vals = [r.speedup for r in km.rules(g.rep) if r.rule_id == rule_id and r.speedup]
    return float(max(vals)) if vals else None


# -- one finding per kernel problem -------------------------------------------------------
#: tuiperf's reading -> the ncu rule that says the same (rule id, words in its title)
SAME_AS_NCU: dict[str, tuple[str, str]] = {
    "uncoalesced_access": ("ncu:UncoalescedGlobalAccess", ""),
    "occupancy_limited": ("ncu:TheoreticalOccupancy", ""),
    "small_grid": ("ncu:LaunchConfiguration", "small grid"),
    "tail_effect": ("ncu:LaunchConfiguration", "tail effect"),
}


def merge_readings(findings: list[Finding]) -> list[Finding]:
    """Fold each tuiperf reading into the ncu rule result about the same kernel and
    problem, so one problem takes one ranked slot: ncu's rule id, title, evidence and
    estimate (tuiperf's when ncu gives none), tuiperf's reading first in the message and
    tuiperf's PyTorch-level fix. Readings without their ncu twin are kept as they are."""
    own = {(f.rule, _ids(f)): i for i, f in enumerate(findings) if f.rule.startswith("ncu:")}
    out: list[Finding | None] = list(findings)
    for i, f in enumerate(findings):
        twin = SAME_AS_NCU.get(f.rule) if f.source == SOURCE_NCU else None
        j = own.get((twin[0], _ids(f))) if twin else None
        if twin is None or j is None or twin[1] not in findings[j].title.lower():
            continue
        out[j], out[i] = _merged(findings[j], f), None
    return [f for f in out if f is not None]


def _ids(f: Finding) -> tuple[int, ...]:
    return tuple(sorted(f.metrics.get("ncu_ids", ())))


def _merged(ncu: Finding, mine: Finding) -> Finding:
    reading = mine.message.split(_NOTE, 1)[0].strip().removeprefix(f"{mine.kernel}: ")
    saving = ncu.est_saving_ns if ncu.est_saving_ns is not None else mine.est_saving_ns
    return Finding(
        rule=ncu.rule,
        title=ncu.title,
        severity=max(ncu.severity, mine.severity),
        message=f"{reading} ncu: {ncu.message}",
        fix=mine.fix,
        scope=ncu.scope,
        source=ncu.source,
        count=ncu.count,
        evidence=ncu.evidence,
        est_saving_ns=saving,
        kernel=ncu.kernel,
        metrics={**mine.metrics, **ncu.metrics, "tuiperf_rule": mine.rule},
        kernels=ncu.kernels,
    )


RULES: dict[str, Rule] = {
    "ncu_rule_results": ncu_rule_results,
    "ncu_bound": bound,
    "ncu_occupancy": occupancy,
    "ncu_uncoalesced": uncoalesced,
    "ncu_launch_shape": launch_shape,
}
