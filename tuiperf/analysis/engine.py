"""Run every rule over a trace (and an Nsight Compute report) and rank what they find."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tuiperf.analysis import sample
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import (
    SOURCE_NCU,
    SOURCE_NSYS,
    SOURCE_TUIPERF,
    AnalysisResult,
    Finding,
    RuleCheck,
    Skip,
)
from tuiperf.analysis.gpumem import trace_rules as memory_rules
from tuiperf.analysis.order import rank
from tuiperf.analysis.rules import nsys as nsys_rules
from tuiperf.analysis.rules import pytorch
from tuiperf.analysis.rules.already import drop_already
from tuiperf.analysis.rules.inference import for_inference
from tuiperf.analysis.rules.run_facts import RunFacts, run_facts
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.model.trace import Trace

#: the finding ranking adds when the others leave the steady steps' idle time unexplained
UNEXPLAINED = "idle_unexplained"


@dataclass
class AnalyzeOptions:
    nsys: nsys_rules.NsysOptions = field(default_factory=nsys_rules.NsysOptions)
    #: run only these rule ids (None: all)
    only: frozenset[str] | None = None
    #: a report with more events is analysed over a sample of its run (analysis.sample);
    #: 0: always whole; None: sample.DEFAULT_MAX_EVENTS
    max_events: int | None = None


def all_rule_ids() -> list[str]:
    from tuiperf.analysis.ncu import rules as ncu_rules

    return [
        *nsys_rules.RULES,
        *pytorch.RULES,
        *memory_rules.RULES,
        UNEXPLAINED,
        *ncu_rules.RULES,
    ]


def analyze(
    trace: Trace | None, ncu: KernelMetrics | None = None, options: AnalyzeOptions | None = None
) -> AnalysisResult:
    """Findings for a timeline report, an ncu report (`KernelMetrics`), or both."""
    opts = options or AnalyzeOptions()
    findings: list[Finding] = []
    checks: list[RuleCheck] = []
    limit = sample.DEFAULT_MAX_EVENTS if opts.max_events is None else opts.max_events
    part = sample.sampled(trace, limit) if trace is not None else None
    if part is not None:
        trace = part[2]
    ctx = Ctx(trace) if trace is not None else None
    if ctx is not None and part is not None:
        ctx.profiled_ns = part[0].span_ns
    if ctx is not None:
        for rid, fn in nsys_rules.RULES.items():
            _run(rid, SOURCE_NSYS, lambda f=fn: f(ctx, opts.nsys), opts, findings, checks)
        for rid, tfn in pytorch.RULES.items():
            _run(rid, SOURCE_TUIPERF, lambda f=tfn: f(ctx), opts, findings, checks)
        for rid, mfn in memory_rules.RULES.items():
            _run(rid, SOURCE_TUIPERF, lambda f=mfn: f(ctx), opts, findings, checks)
        facts = _facts(ctx)
        findings = drop_already(for_inference(findings, facts), facts)
    if ncu is not None:
        from tuiperf.analysis.ncu import rules as ncu_rules

        for rid, nfn in ncu_rules.RULES.items():
            _run(rid, SOURCE_NCU, lambda f=nfn: f(ncu, ctx), opts, findings, checks)
        findings = ncu_rules.merge_readings(findings)
    profiled = ctx.profiled_ns if ctx is not None else _ncu_time(ncu)
    source = (
        trace.meta.source if trace is not None else str(getattr(ncu, "meta", {}).get("source", ""))
    )
    findings, unlinked = _apart_unlinked(findings, ctx is not None)
    budget = _budget(ctx, checks)
    if part is not None:
        _report_rows([*findings, *unlinked], part[1])
        budget = sample.without_startup(budget)
    if budget is not None:
        from tuiperf.analysis.budget.savings import rank_by_budget

        gaps = opts.only is None or UNEXPLAINED in opts.only
        ranked = rank_by_budget(findings, budget, unexplained=gaps)
    else:
        ranked = rank(findings, profiled)
    result = AnalysisResult(ranked, checks, profiled, source, budget, unlinked, trace is None)
    result.sample = part[0] if part is not None else None
    return result


def _report_rows(findings: list[Finding], kept: dict) -> None:
    done: set[int] = set()  # findings may share evidence: map each once
    for f in findings:
        if id(f.evidence) not in done:
            done.add(id(f.evidence))
            f.evidence.rows = sample.report_rows(f.evidence.rows, kept)


def _apart_unlinked(findings: list[Finding], timeline: bool) -> tuple[list, list]:
    """With a timeline: the ncu findings whose kernel never ran in it go apart (no saving:
    they cannot remove any of its time), and the same ncu finding over the same launches
    is kept once."""
    if not timeline:
        return findings, []
    kept: list[Finding] = []
    apart: list[Finding] = []
    seen: set[tuple] = set()
    for f in findings:
        if f.source != SOURCE_NCU:
            kept.append(f)
            continue
        rows = f.evidence.rows
        on = rows["table"][0].as_py() if rows.num_rows else ""
        key = (f.rule, f.title, on, tuple(rows["row"].to_pylist()))
        if key in seen:
            continue
        seen.add(key)
        if on == "kernels":
            kept.append(f)
        else:
            f.est_saving_ns = None
            apart.append(f)
    apart.sort(key=lambda f: (-int(f.severity), -(f.own_saving_ns or 0), f.rule))
    return kept, apart


def _run(
    rid: str,
    source: str,
    call: Any,
    opts: AnalyzeOptions,
    findings: list[Finding],
    checks: list[RuleCheck],
) -> None:
    if opts.only is not None and rid not in opts.only:
        return
    try:
        found = call()
    except Skip as e:
        checks.append(RuleCheck(rid, source, "skipped", str(e)))
        return
    except Exception as e:  # one broken rule must not hide the others' findings
        checks.append(RuleCheck(rid, source, "failed", f"{type(e).__name__}: {e}"))
        return
    findings.extend(found)
    checks.append(RuleCheck(rid, source, "found" if found else "clean"))


def _facts(ctx: Ctx) -> RunFacts | None:
    """What the run does, read from its kernels (None without kernels: nothing to say)."""
    if ctx.table("kernels").num_rows == 0:
        return None
    return run_facts(ctx)


def _budget(ctx: Ctx | None, checks: list[RuleCheck]) -> Any:
    """The step budget; a report it cannot read keeps the other findings."""
    if ctx is None:
        return None
    try:
        return ctx.budget
    except Exception as e:
        checks.append(
            RuleCheck("step_budget", SOURCE_TUIPERF, "failed", f"{type(e).__name__}: {e}")
        )
        return None


def _ncu_time(ncu: KernelMetrics | None) -> int:
    if ncu is None:
        return 0
    col = ncu.kernels.column("duration_ns").to_pylist()
    return int(sum(v for v in col if v))
