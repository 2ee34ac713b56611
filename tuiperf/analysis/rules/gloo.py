"""Collectives over gloo on GPU tensors: gloo reduces in host memory, so its run-loop
threads copy every gradient bucket from the GPU to the host and back each step (NCCL
reduces on the GPU and copies nothing). nsys shows no collective kernel for it; the
staging copies, launched from threads nsys names `pt_gloo_runloop`, are the evidence."""

from __future__ import annotations

import re

import numpy as np

from tuiperf.analysis import fixes
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.steps import Steps
from tuiperf.analysis.findings import (
    SCOPE_RANGE,
    SOURCE_TUIPERF,
    Evidence,
    Finding,
    Scope,
    Severity,
)
from tuiperf.model import arrays as A
from tuiperf.model import fmt

RULE = "gloo_staging"
#: the threads of torch.distributed's gloo backend (c10d::ProcessGroupGloo::runLoop)
GLOO_THREAD = re.compile(r"gloo", re.I)
#: the autograd engine's threads, where DDP's gradient hooks call the collective
AUTOGRAD_THREAD = "pt_autograd"
#: a finding from this share of the steady steps' wall time on
STAGING_SHARE = 0.02


def gloo_staging(ctx: Ctx) -> list[Finding]:
    """Copies launched by gloo's threads inside the steady steps."""
    steps = ctx.steps
    if not steps.found or len(steps.steady()) < 2:
        return []
    rows = _gloo_copies(ctx)
    launch = ctx.launch_time("memcpy")[rows]
    steady = steps.steady()
    rows = rows[np.isin(steps.index_of(launch), steady)]
    if len(rows) == 0:
        return []
    mc = ctx.table("memcpy")
    dur = int(A.ints(mc, "duration")[rows].sum())
    wall = int((steps.ends[steady] - steps.starts[steady]).sum())
    if dur < STAGING_SHARE * wall:
        return []
    n = len(steady)
    size = int(A.ints(mc, "bytes")[rows].sum())
    kinds = A.strings(mc, "copy_kind")[rows]
    d2h, h2d = int((kinds == "Device-to-Host").sum()), int((kinds == "Host-to-Device").sum())
    msg = (
        f"gloo's threads copy {fmt.size(size // n)} a steady step between the GPU and the "
        f"host ({d2h:,} device-to-host and {h2d:,} host-to-device copies in "
        f"{fmt.plural(n, 'step')}, "
        f"{fmt.duration(dur // n)} of copying a step): collectives over gloo stage CUDA "
        "tensors through host memory and reduce them on the CPU. Saving modelled as those "
        "copies' time, which NCCL does not make (a lower bound: the host-side reduction "
        "goes too)."
    )
    f = Finding(
        rule=RULE,
        title=fixes.title_for(RULE),
        severity=Severity.WARNING,
        message=msg,
        fix=fixes.fix_for(RULE),
        scope=_scope(steps, steady),
        source=SOURCE_TUIPERF,
        count=len(rows),
        evidence=Evidence.empty(),
        est_saving_ns=dur,
        metrics={"bytes_per_step": size // n, "copies": len(rows), "copy_ns": dur},
    )
    f.budget_part, f.saving_model, f.modelled = "copy", "the staging copies' time", True
    f.beyond_part_ns = dur  # the copies overlap compute: they are not all in the copy part
    return [f]


def _scope(steps: Steps, steady: np.ndarray) -> Scope:
    lo, hi = int(steps.starts[steady[0]]), int(steps.ends[steady[-1]])
    return Scope(SCOPE_RANGE, steps.label_span(steady), lo, hi)


def _gloo_copies(ctx: Ctx) -> np.ndarray:
    """memcpy rows of gloo's staging: the copies back to the GPU, launched by gloo's threads,
    and, when there are some, the copies out to pinned host memory that the thread calling
    the collective makes (DDP's autograd thread)."""
    th, api, mc = ctx.table("threads"), ctx.table("api"), ctx.table("memcpy")
    if th.num_rows == 0 or api.num_rows == 0 or mc.num_rows == 0:
        return np.zeros(0, np.int64)
    names = A.strings(th, "name")
    tid_of = A.ints(th, "tid", -1)
    gloo = tid_of[A.name_mask(th, "name", GLOO_THREAD)]
    callers = tid_of[np.char.startswith(names.astype(str), AUTOGRAD_THREAD)]
    call = ctx.api_rows("memcpy")
    tid = np.full(len(call), -1, np.int64)
    tid[call >= 0] = A.ints(api, "tid", -1)[call[call >= 0]]
    back = np.isin(tid, gloo) & (tid >= 0)
    if not back.any():
        return np.zeros(0, np.int64)
    out = (A.strings(mc, "copy_kind") == "Device-to-Host") & (A.strings(mc, "dst_kind") == "Pinned")
    return np.flatnonzero(back | (out & np.isin(tid, np.concatenate([gloo, callers]))))
