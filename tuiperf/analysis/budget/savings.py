"""Rank findings by the share of steady-state step time they can remove.

Each rule explains one part of the step budget (analysis.budget.step_budget). A finding's saving
is taken from that part, so nothing is counted twice:

* an idle part (data wait, host sync, CPU-bound issue, other) is what its findings
  explain: the part is split between them in proportion to their own estimates (one
  finding gets all of it);
* a busy part (compute, copies) shrinks by what its findings estimate their change saves,
  weighted by the share of the step the GPU is busy (faster GPU work shortens a step only
  where the GPU is what the step waits for: nearly all of it in a GPU-bound step, little
  in a CPU-bound one), capped at the part, and scaled down together when their sum is
  larger.

When the findings leave much of the steady steps' GPU idle time unexplained, one more
finding says how much, and what it is. Findings whose rule explains no part keep no
saving (ranked after the others); their own estimate stays in `own_saving_ns`.
"""

from __future__ import annotations

import numpy as np

from tuiperf.analysis import fixes
from tuiperf.analysis.budget.step_budget import IDLE_PARTS, LABELS, SHORT, Budget
from tuiperf.analysis.findings import (
    SCOPE_RANGE,
    SOURCE_TUIPERF,
    Evidence,
    Finding,
    Scope,
    Severity,
)
from tuiperf.analysis.order import _key
from tuiperf.model import fmt
from tuiperf.model.arrays import as_int64

#: which budget part each rule's finding explains
PART_OF_RULE = {
    "dataloader_starvation": "data",
    "host_sync_per_step": "sync",
    "cuda_api_sync": "sync",
    "cuda_memcpy_sync": "sync",
    "cuda_memset_sync": "sync",
    "alloc_churn": "sync",
    "cpu_bound": "cpu_bound",
    "tiny_optimizer_kernels": "cpu_bound",
    "pageable_h2d_in_steps": "copy",
    "cuda_memcpy_async": "copy",
    "gloo_staging": "copy",
    "layout_conversion": "compute",
    "fp32_no_tensor_cores": "compute",
    "misaligned_gemm": "compute",
    "gpu_bound": "compute",
    "copy_bound": "copy",
}
#: findings should account for at least this share of the steady steps' GPU idle time …
EXPLAINED_SHARE = 0.8
#: … or, when the rest is at least this share of step time, a finding says what is left
UNEXPLAINED_MIN = 0.02


def part_of(f: Finding) -> str | None:
    if f.budget_part is not None:  # the rule said which part its finding explains
        return f.budget_part
    if f.rule in PART_OF_RULE:
        return PART_OF_RULE[f.rule]
    return "compute" if f.rule.startswith("ncu:") else None


#: verdicts on the whole step (the GPU computes / copies most of it): budget headlines
#: with no change named, so no saving; ranked after the findings that can save time
VERDICTS = ("gpu_bound", "copy_bound")
#: a finding saving less than this share of the step ranks after the verdicts: in a step
#: the GPU fills, a 1% lever is not what to do first
MIN_RANKED_SHARE = 0.02
#: a finding on another part than a verdict's ranks before the verdict only when it saves
#: at least this share of the step: in a step the copies fill, a 2% compute lever is not
#: what to do first (a verdict's part holds at least half the step: COPY_BOUND_SHARE)
ACROSS_VERDICT_SHARE = 0.10
#: a finding with a specific cause inside an idle part (the optimizer's per-parameter
#: launches inside the CPU-bound part) ranks before the part's generic finding (cpu_bound,
#: which claims what the specific ones leave) from this share of the generic one's saving
#: on: one named change giving at least half of what the rest of the part, spread over every
#: launch and several levers, could give is the change to make first
SPECIFIC_OVER_GENERIC = 0.5
#: findings that say the same thing as a tuiperf finding (same cause, same fix): the nsys
#: analyze rule is kept in the list but claims no saving of its own
TWINS = {"cuda_memcpy_async": "pageable_h2d_in_steps", "cuda_api_sync": "host_sync_per_step"}


def rank_by_budget(
    findings: list[Finding], budget: Budget, unexplained: bool = True
) -> list[Finding]:
    """Fill est_saving_ns/pct on the steady-state basis and order the findings; with
    `unexplained`, add the finding for idle time no other finding explains."""
    st = budget.steady
    by_part: dict[str, list[Finding]] = {}
    claims: dict[int, int] = {}
    rules = {f.rule for f in findings}
    for f in findings:
        f.own_saving_ns = f.est_saving_ns
        f.est_saving_ns = None
        part = part_of(f)
        if f.rule in VERDICTS or TWINS.get(f.rule) in rules:
            f.budget_part = part  # what it is about; its saving is the other's, or none
            continue
        if part is not None and f.own_saving_ns is not None:
            by_part.setdefault(part, []).append(f)
            claims[id(f)] = int(f.own_saving_ns * _steady_fraction(f, budget))
    busy_share = st.busy_ns / st.wall_ns if st.wall_ns else 0.0
    for part, fs in by_part.items():
        _share(part, fs, [claims[id(f)] for f in fs], st.ns[part], busy_share)
    _less_capture(by_part.get("cpu_bound", []), budget)
    gap = _unexplained(findings, budget) if unexplained else None
    out = [*findings, *([gap] if gap else [])]
    if budget.confidence == "low":
        _no_savings(out, budget)
    for f in out:
        if f.est_saving_ns is not None and st.wall_ns:
            f.est_saving_pct = round(100.0 * f.est_saving_ns / st.wall_ns, 2)
    verdicts = {part_of(f) for f in out if f.rule in VERDICTS}
    ranked = sorted(out, key=lambda f: (_tier(f, st.wall_ns, verdicts), *_key(f)))
    return _specific_first(ranked)


def _specific_first(ranked: list[Finding]) -> list[Finding]:
    """The specific findings of a generic idle-part finding's part (cpu_bound) that save at
    least SPECIFIC_OVER_GENERIC of what it saves take its place; it comes right after."""
    out = list(ranked)
    for g in [f for f in ranked if f.rule in OWN_WORDS and f.budget_part in IDLE_PARTS]:
        bar = SPECIFIC_OVER_GENERIC * (g.est_saving_ns or 0)
        ahead = [
            f
            for f in out[out.index(g) + 1 :]
            if f.rule not in OWN_WORDS
            and f.budget_part == g.budget_part
            and f.est_saving_ns is not None
            and f.est_saving_ns > 0
            and f.est_saving_ns >= bar
        ]
        if ahead:  # they take the generic one's place, in their order; it follows them
            at = out.index(g)
            rest = [f for f in out if f is not g and not any(f is a for a in ahead)]
            out = [*rest[:at], *ahead, g, *rest[at:]]
    return out


def _less_capture(fs: list[Finding], budget: Budget) -> None:
    """The CPU-bound finding's saving without what the capture adds to a step (measured by
    tuiperf.torch with nothing recording): profiler overhead is not the program's."""
    extra = budget.capture_adds_ns * budget.n_steady
    for f in fs:
        if f.rule == "cpu_bound" and f.est_saving_ns is not None and extra:
            f.est_saving_ns = max(f.est_saving_ns - extra, 0)


def _tier(f: Finding, wall: int, verdicts: set[str | None] | None = None) -> int:
    """0: saves at least MIN_RANKED_SHARE of the step, on the part a verdict is about (or
    with no verdict), or ACROSS_VERDICT_SHARE on another part; 1: a verdict on the step;
    2: the rest."""
    saved = f.est_saving_ns if f.est_saving_ns is not None else -1
    on_verdict = not verdicts or part_of(f) in verdicts
    if saved >= MIN_RANKED_SHARE * wall and (on_verdict or saved >= ACROSS_VERDICT_SHARE * wall):
        return 0
    return 1 if f.rule in VERDICTS else 2


def _no_savings(findings: list[Finding], budget: Budget) -> None:
    """Steps that may not be iterations: no saving is a share of them."""
    for f in findings:
        if f.est_saving_ns is not None:
            f.est_saving_ns = None
            f.message += (
                f" No saving is claimed: the steps were inferred with low confidence "
                f"({budget.confidence_reason})."
            )


def _steady_fraction(f: Finding, budget: Budget) -> float:
    """The share of a finding's evidence time inside the steady steps: its estimate is
    for the whole report, the budget for the steady steps (1.0 without timed evidence)."""
    rows = f.evidence.rows
    if rows.num_rows == 0 or rows["start_ns"].null_count == rows.num_rows:
        return 1.0
    start = as_int64(rows["start_ns"], -1)  # (from buffers: no pandas, model/arrays.py)
    dur = as_int64(rows["duration_ns"], 0)
    a = np.array([s.cpu_start_ns for s in budget.main.steps], np.int64)
    b = np.array([s.cpu_end_ns for s in budget.main.steps], np.int64)
    i = np.searchsorted(a, start, "right") - 1
    inside = (i >= 0) & (start < b[np.maximum(i, 0)])
    total = int(dur.sum())
    return float(dur[inside].sum()) / total if total > 0 else 1.0


def _share(part: str, fs: list[Finding], claims: list[int], total: int, busy_share: float) -> None:
    """Integer shares of `total` (ns), so one finding gets exactly an idle part."""
    own = [max(c, 0) for c in claims]
    if part in IDLE_PARTS:
        own = _residual(fs, own, total)
        weights = own if sum(own) > 0 else [1] * len(fs)
        got = [total * w // sum(weights) for w in weights]
    else:
        got = [
            min(o, total + f.beyond_part_ns) if f.modelled else min(int(o * busy_share), total)
            for f, o in zip(fs, own, strict=True)
        ]
        limit = total + sum(f.beyond_part_ns for f in fs)
        if sum(got) > limit:
            got = [limit * g // sum(got) for g in got]
    for f, g in zip(fs, got, strict=True):
        f.budget_part = part
        f.est_saving_ns = g
        if f.rule not in OWN_WORDS:
            f.message += _budget_note(part, total, len(fs) - 1, f.modelled)


def _residual(fs: list[Finding], own: list[int], total: int) -> list[int]:
    """A budget finding (cpu_bound, ...) names a whole part; a finding with a specific
    cause inside it (an exposed collective, a DataLoader wait) is the more useful name
    for its share, so the budget finding claims only what the others leave."""
    specific = sum(o for f, o in zip(fs, own, strict=True) if f.rule not in OWN_WORDS)
    if specific == 0:
        return own
    return [
        max(total - specific, 0) if f.rule in OWN_WORDS else o for f, o in zip(fs, own, strict=True)
    ]


#: rules whose message already speaks in budget terms
OWN_WORDS = ("cpu_bound", "gpu_bound", "copy_bound")


#: why the budget can see none of an idle part that a rule reports
ZERO_HINTS = {
    "data": (
        " (it tells a data wait by a data-phase NVTX range or the loop thread's DataLoader "
        "waits, and this report has neither in its steps: the time is under its other causes)"
    ),
}


def _budget_note(part: str, total: int, others: int, modelled: bool = False) -> str:
    what = LABELS[part].split(": ", 1)[1]
    shared = f", shared with {others} other finding(s)" if others else ""
    if part in IDLE_PARTS and total == 0:  # the rule saw it, the budget's measure did not
        how = ZERO_HINTS.get(part, "")
        return f" Step budget: it finds no GPU idle time {what}{how}, so no saving is ranked."
    if part in IDLE_PARTS:
        return f" Step budget: the GPU idles {fmt.duration(total)} on {what}{shared}."
    if modelled:
        return f" Step budget: {what} take {fmt.duration(total)}{shared}."
    return (
        f" Step budget: {what} take {fmt.duration(total)}; the saving is weighted by the "
        f"share of the step the GPU is busy{shared}."
    )


def _unexplained(findings: list[Finding], budget: Budget) -> Finding | None:
    st = budget.steady
    idle = st.idle_ns
    explained = {p: 0 for p in IDLE_PARTS}
    for f in findings:
        if f.budget_part in explained and f.est_saving_ns:
            explained[f.budget_part] += f.est_saving_ns
    left = {p: st.ns[p] - explained[p] for p in IDLE_PARTS}
    rest = sum(left.values())
    explained_enough = idle - rest >= EXPLAINED_SHARE * idle  # not (1 - 0.8): 0.1999…
    if idle == 0 or explained_enough or rest < UNEXPLAINED_MIN * st.wall_ns:
        return None
    pieces = ", ".join(
        f"{SHORT[p]} {fmt.duration(v)} ({100 * v / st.wall_ns:.1f}%)"
        for p, v in sorted(left.items(), key=lambda kv: -kv[1])
        if v > 0
    )
    msg = (
        f"The GPU is idle {st.pct('idle'):.0f}% of the steady-state steps; the other findings "
        f"explain {100 * (idle - rest) / st.wall_ns:.0f}% of step time and "
        f"{100 * rest / st.wall_ns:.0f}% stays unexplained: {pieces}. "
        f"'{LABELS['other']}' is idle time with work queued that did not start (cross-stream "
        "waits, events) or no launch to blame; the others are causes below their rules' "
        "thresholds."
    )
    steps = budget.main.steps
    return Finding(
        rule="idle_unexplained",
        title=fixes.title_for("idle_unexplained"),
        severity=Severity.INFO,
        message=msg,
        fix=fixes.fix_for("idle_unexplained"),
        scope=Scope(
            SCOPE_RANGE,
            f"{budget.steady_labels} ({fmt.plural(len(steps), 'steady-state step')})",
            steps[0].start_ns,
            steps[-1].end_ns,
        ),
        source=SOURCE_TUIPERF,
        count=0,
        evidence=Evidence.empty(),
        est_saving_ns=None,  # no change is named: nothing to estimate
        metrics={"unexplained_ns": rest, **{f"{p}_ns": v for p, v in left.items()}},
    )
