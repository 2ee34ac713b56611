"""The exposed-communication finding: collectives that no compute hides.

With NCCL, a collective's kernel runs beside compute kernels on another stream when the
framework overlaps them (DDP's gradient buckets all-reduce while backward goes on; FSDP
prefetches its all-gathers); what the compute does not cover is exposed: the step waits for
it (step_budget's `comm` part). With gloo, or any collective the CPU runs, the exposed part is
the time the GPU sat idle while the loop was inside the collective.
"""

from __future__ import annotations

import numpy as np

from tuiperf.analysis import fixes
from tuiperf.analysis.budget.comm import LoopComm, comm_by_device, loop_comm
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import (
    SCOPE_RANGE,
    SOURCE_TUIPERF,
    Evidence,
    Finding,
    Scope,
    Severity,
    Skip,
)
from tuiperf.analysis.intervals import Union
from tuiperf.model import fmt

RULE = "exposed_comm"
#: a finding from this share of the steady steps' wall time on (the budget rules' bar)
EXPOSED_SHARE = 0.10
#: … and a warning from this share on
EXPOSED_WARNING = 0.25


def exposed_comm(ctx: Ctx) -> list[Finding]:
    lc = loop_comm(ctx)
    if lc is None:
        raise Skip("no training steps found (no step ranges, no repeated kernel pattern)")
    if not lc.found:
        raise Skip("no collective: no NCCL-type kernel, no all-reduce/all-gather range")
    wall = sum(s.end_ns - s.start_ns for s in lc.steps)
    exposed = sum(s.exposed_ns for s in lc.steps)
    total = sum(s.comm_ns for s in lc.steps)
    share = exposed / wall if wall else 0.0
    if share < EXPOSED_SHARE:
        return []
    what = "communication kernels" if lc.source == "kernels" else "collective calls"
    hidden = 1 - exposed / total if total else 0.0
    msg = (
        f"{what.capitalize()} take {fmt.duration(total // len(lc.steps))} a steady step on "
        f"GPU {lc.device}; compute hides {hidden:.0%} of it, so {share:.0%} of the step "
        f"({fmt.duration(exposed // len(lc.steps))}) waits on communication."
    )
    if lc.source == "ranges":
        msg += (
            " The collectives run on the CPU (gloo, or NCCL calls with no kernel here): the "
            "GPU idles while the loop is inside them; with several ranks much of that is "
            "waiting for the slowest rank (tuiperf ranks names it)."
        )
    sev = Severity.WARNING if share >= EXPOSED_WARNING else Severity.INFO
    metrics = {
        "exposed_share": round(share, 4),
        "comm_ns_per_step": total // len(lc.steps),
        "exposed_ns_per_step": exposed // len(lc.steps),
        "source": lc.source,
        "by_device": [r.to_json() for r in comm_by_device(ctx)],
    }
    return [
        Finding(
            rule=RULE,
            title=fixes.title_for(RULE),
            severity=sev,
            message=msg,
            fix=fixes.fix_for(RULE),
            scope=_scope(lc),
            source=SOURCE_TUIPERF,
            count=len(lc.steps),
            evidence=_evidence(lc),
            est_saving_ns=exposed,
            metrics=metrics,
            budget_part=_budget_part(ctx, lc),
        )
    ]


def _budget_part(ctx: Ctx, lc: LoopComm) -> str | None:
    """The step-budget part the exposed time lies in: `comm` for kernels; for CPU
    collectives, the idle cause that holds most of the GPU idle time inside them (a gloo
    all-reduce copies to the host and waits: mostly `sync`)."""
    if lc.source == "kernels":
        return "comm"
    b = ctx.budget
    if b is None or not b.main.idle_causes:
        return None
    a = np.array([s.start_ns for s in lc.steps], np.int64)
    e = np.array([s.end_ns for s in lc.steps], np.int64)
    i = np.searchsorted(a, lc.starts, "right") - 1
    j = np.maximum(i, 0)
    lo, hi = np.maximum(lc.starts, a[j]), np.minimum(lc.ends, e[j])
    ok = (i >= 0) & (hi > lo)
    held = {
        part: int(Union.of(*iv).busy(lo[ok], hi[ok]).sum())
        for part, iv in b.main.idle_causes.items()
    }
    best = max(held, key=lambda p: held[p]) if held else None
    return best if best is not None and held[best] > 0 else None


def _scope(lc: LoopComm) -> Scope:
    first, last = lc.steps[0], lc.steps[-1]
    label = first.label if first is last else f"{first.label} … {last.label}"
    return Scope(SCOPE_RANGE, f"{label} ({fmt.plural(len(lc.steps), 'steady-state step')})",
                 first.start_ns, last.end_ns)  # fmt: skip


def _evidence(lc: LoopComm) -> Evidence:
    st = lc.steps
    return Evidence.build(
        "",
        None,
        np.array([s.start_ns for s in st], np.int64),
        np.array([s.end_ns - s.start_ns for s in st], np.int64),
        {
            "label": [s.label for s in st],
            "comm_ns": np.array([s.comm_ns for s in st], np.int64),
            "exposed_ns": np.array([s.exposed_ns for s in st], np.int64),
            "calls": np.array([s.calls for s in st], np.int64),
        },
        {
            "label": "Step",
            "comm_ns": "Communication (ns)",
            "exposed_ns": "Exposed (ns)",
            "calls": "Collectives",
        },
    )
