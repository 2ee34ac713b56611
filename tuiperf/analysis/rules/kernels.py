"""Rules read off kernel names that say what the GPU cannot see one by one or runs slower
than it should: CUDA graphs traced whole, and misaligned / fallback matrix multiplies."""

from __future__ import annotations

import re

import numpy as np

from tuiperf.analysis import fixes
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import (
    SCOPE_KERNEL,
    SCOPE_REPORT,
    SOURCE_TUIPERF,
    Evidence,
    Finding,
    Scope,
    Severity,
    Skip,
)
from tuiperf.analysis.rules.run_facts import FP32_SIMT, GEMM
from tuiperf.model import arrays as A
from tuiperf.model import fmt

#: CUDA graph executions worth a word when they hold this share of GPU compute time
GRAPH_SHARE = 0.10
#: CUTLASS/cuBLAS kernels for operands aligned to 1 or 2 elements: a dimension that is not
#: a multiple of 8 (bf16/fp16) or 4 (tf32) rules out the vectorised tensor-core tiles
MISALIGNED = re.compile(r"align[12](?!\d)", re.I)
#: kernels built for an older architecture than the GPU's (cutlass_75_… on an SM90 GPU):
#: what cuBLAS falls back to for shapes its current kernels do not take
ARCH = re.compile(r"(?:cutlass_|sm|ampere_|turing_|volta_)(\d{2})_?", re.I)
ARCH_WORDS = {"volta": 70, "turing": 75, "ampere": 80}
#: misaligned GEMMs worth a finding from this share of GPU compute time on
MISALIGNED_SHARE = 0.01
#: aligned tensor-core tiles run such GEMMs this much faster (NVIDIA's matrix
#: multiplication guide: alignment to 16 bytes enables the vectorised loads). Measured on
#: the advice corpus (bench/advice.md, GPT-2's vocabulary 50257 -> 50304 on an H200): the
#: cutlass_75 align1 LM-head GEMMs took ~15.5 ms a step and padding saved 13.9 ms, ~10x;
#: 4x is claimed (3/4 of their time), a conservative reading of one measurement
ALIGNED_SPEEDUP = 4.0


def graphs_untraced(ctx: Ctx) -> list[Finding]:
    """CUDA graph executions traced whole: their kernels are invisible to kernel rules."""
    g = ctx.table("graphs")
    if g.num_rows == 0:
        raise Skip("no whole-graph executions in this report")
    total = int(A.ints(g, "duration").sum())
    share = total / ctx.compute_time_ns if ctx.compute_time_ns else 0.0
    if share < GRAPH_SHARE:
        return []
    graphs = len(np.unique(A.ints(g, "graph_id", -1)))
    msg = (
        f"{g.num_rows:,} CUDA graph launches ({graphs} graph(s)) hold {fmt.duration(total)}, "
        f"{share:.0%} of GPU compute time, but the kernels inside them were not traced "
        "(nsys's default --cuda-graph-trace=graph records each launch as one block). The "
        f"kernel findings see only the other {1 - share:.0%}; the graphs' time counts as GPU "
        "busy in the step budget."
    )
    ev = Evidence.build(
        "graphs",
        np.arange(g.num_rows),
        A.ints(g, "start"),
        A.ints(g, "duration"),
        {"name": A.strings(g, "name")},
        {"name": "Graph"},
    )
    return [
        Finding(
            rule="graphs_untraced",
            title=fixes.title_for("graphs_untraced"),
            severity=Severity.INFO,
            message=msg,
            fix=fixes.fix_for("graphs_untraced"),
            scope=Scope(SCOPE_REPORT),
            source=SOURCE_TUIPERF,
            count=g.num_rows,
            evidence=ev,
            metrics={"graph_ns": total, "share_of_compute_time": round(share, 4)},
        )
    ]


def _older_arch(names: list[str], major: int) -> np.ndarray:
    """Names of kernels built for an SM generation two or more below the GPU's (sm75 on
    sm90); sm80 kernels are cuBLAS's own choice on Hopper and not a fallback."""
    out = []
    for n in names:
        m = ARCH.search(n)
        sm = int(m.group(1)) if m else 0
        for w, v in ARCH_WORDS.items():
            if n.lower().startswith(w + "_"):
                sm = v
        out.append(bool(sm) and major * 10 - sm >= 15)
    return np.array(out, bool)


def _device_major(ctx: Ctx) -> int:
    d = ctx.table("devices")
    if d.num_rows == 0 or "compute_major" not in d.schema.names:
        return 0
    return int(A.ints(d, "compute_major", 0).max())


def misaligned_gemm(ctx: Ctx) -> list[Finding]:
    """GEMMs on misaligned operands or older-architecture fallback kernels."""
    k = ctx.table("kernels")
    if k.num_rows == 0:
        raise Skip("no kernels in this report")
    codes, names = A.codes(k, "name")
    # tensor-core GEMMs only: fp32 SIMT kernels are align1 by design (fp32_no_tensor_cores)
    tc = np.array([bool(GEMM.search(n)) and not FP32_SIMT.search(n) for n in names], bool)
    flag = np.append(tc & np.array([bool(MISALIGNED.search(n)) for n in names], bool), False)
    flag[:-1] |= tc & _older_arch(names, _device_major(ctx))
    rows = np.flatnonzero(flag[codes])
    dur = A.ints(k, "duration")[rows]
    total = int(dur.sum())
    share = total / ctx.compute_time_ns if ctx.compute_time_ns else 0.0
    if len(rows) == 0 or share < MISALIGNED_SHARE:
        return []
    return [_misaligned_finding(ctx, rows, dur, total, share)]


def _misaligned_finding(
    ctx: Ctx, rows: np.ndarray, dur: np.ndarray, total: int, share: float
) -> Finding:
    short = A.strings(ctx.table("kernels"), "name")[rows]
    uniq, inv = np.unique(short, return_inverse=True)
    by_time = np.bincount(inv, weights=dur)
    order = np.argsort(-by_time, kind="stable")
    kernels = tuple(str(uniq[i]) for i in order)
    saving = int(total * (1 - 1 / ALIGNED_SPEEDUP))
    msg = (
        f"{len(rows):,} matrix multiplies run in kernels for misaligned operands or an "
        f"older GPU generation ({len(uniq)} kernel(s), {fmt.duration(total)}, {share:.1%} of "
        "GPU compute time): a dimension that is not a multiple of 8 (an odd vocabulary or "
        "hidden size) rules out the vectorised tensor-core tiles. Saving modelled as their "
        f"time x (1 - 1/{ALIGNED_SPEEDUP:g}) with aligned tiles."
    )
    ev = Evidence.build(
        "kernels",
        rows,
        A.ints(ctx.table("kernels"), "start")[rows],
        dur,
        {"name": short},
        {"name": "Kernel"},
    )
    f = Finding(
        rule="misaligned_gemm",
        title=fixes.title_for("misaligned_gemm"),
        severity=Severity.WARNING if share >= 0.05 else Severity.INFO,
        message=msg,
        fix=fixes.fix_for("misaligned_gemm"),
        scope=Scope(SCOPE_KERNEL, ", ".join(kernels[:3])),
        source=SOURCE_TUIPERF,
        count=len(rows),
        evidence=ev,
        est_saving_ns=saving,
        kernels=kernels,
        metrics={"time_ns": total, "share_of_compute_time": round(share, 4)},
    )
    f.saving_model = f"their time x (1 - 1/{ALIGNED_SPEEDUP:g}): aligned tiles"
    return f
