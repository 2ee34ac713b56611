"""Where a CPU-bound loop spends its CPU time, where the report says (torch.profiler's
cpu_ops): the operator with the most host self time in the steady steps, and the user line
that calls it most. nsys reports carry no CPU operators: nothing is claimed there."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import Budget
from tuiperf.model import arrays as A
from tuiperf.model.timeline import callsites as C
from tuiperf.summaries import ops


@dataclass(frozen=True)
class HotOp:
    name: str
    self_ns_per_step: int
    site: str  # `train.py:21 (batch)`, or '' without stacks


def top_cpu_op(ctx: Ctx, b: Budget) -> HotOp | None:
    """The CPU operator with the most host self time per steady step, or None."""
    r = ops.cpu_ranges(ctx.trace)
    a = np.array([s.cpu_start_ns for s in b.main.steps], np.int64)
    e = np.array([s.cpu_end_ns for s in b.main.steps], np.int64)
    inside = r.is_op & _within(r.start, a, e)
    if not inside.any():
        return None
    self_ns = ops.host_self(r)[inside]
    names, inv = np.unique(r.names[inside].astype(str), return_inverse=True)
    per_name = np.bincount(inv, weights=self_ns)
    k = int(np.argmax(per_name))
    name = str(names[k])
    return HotOp(name, int(per_name[k] // max(b.n_steady, 1)), _site(ctx, name, a, e))


def _within(t: np.ndarray, a: np.ndarray, e: np.ndarray) -> np.ndarray:
    i = np.searchsorted(a, t, "right") - 1
    return (i >= 0) & (t < e[np.maximum(i, 0)])


def _site(ctx: Ctx, name: str, a: np.ndarray, e: np.ndarray) -> str:
    """The user line that calls `name` most inside the steady steps ('' without stacks)."""
    if not C.has_stacks(ctx.trace):
        return ""
    nv = ctx.table("nvtx")
    rows = np.flatnonzero(
        (A.strings(nv, "text").astype(str) == name)
        & (A.strings(nv, "domain").astype(str) == ops.OP_DOMAIN)
        & _within(A.ints(nv, "start"), a, e)
    )
    sites = Counter(s for s in C.site_texts(ctx.trace, "nvtx", rows) if s)
    return sites.most_common(1)[0][0] if sites else ""
