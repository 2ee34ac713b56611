"""Rules read off the step budget: CPU-bound issue and GPU-bound steps.

`cpu_bound` replaces the old launch-bound proxy ("kernels shorter than their launch
call"), which stayed silent when kernels were a little longer than the launch call but the
CPU spent far longer than that between launches: it measures the GPU idle time during which
the GPU's queue was empty (step_budget's `cpu_bound` part) instead.
"""

from __future__ import annotations

import re

import numpy as np

from tuiperf.analysis import fixes
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.cpu_hotspot import top_cpu_op
from tuiperf.analysis.budget.descheduled import descheduled
from tuiperf.analysis.budget.step_budget import SHORT, Budget
from tuiperf.analysis.budget.step_samples import (
    SHOWN_SHARE,
    StepSamples,
    UserFunction,
    step_samples,
)
from tuiperf.analysis.findings import (
    SCOPE_RANGE,
    SOURCE_TUIPERF,
    Evidence,
    Finding,
    Fix,
    Scope,
    Severity,
    Skip,
)
from tuiperf.analysis.rules import sites
from tuiperf.analysis.rules.metrics_evidence import (
    IDLE_TENSOR_SHARE,
    steady_metrics,
    tensor_metrics,
    tensor_text,
)
from tuiperf.analysis.rules.run_facts import RunFacts, run_facts
from tuiperf.model import arrays as A
from tuiperf.model import fmt

#: CPU-bound issue worth a finding: 10% of steady-state step time, where the tuning guides
#: (PyTorch performance tuning guide, NVIDIA's DL performance docs) start calling a stall
#: a bottleneck; the same bar as the data-loading rule
CPU_BOUND_SHARE = 0.10
#: … and an error from this share on, when it is the largest part of the step (the data
#: rule's error bar too: 3 x its threshold)
CPU_BOUND_ERROR = 0.30
#: an operator holding this share of the CPU-bound time a step is named, with its own lever
HOT_OP_SHARE = 0.25
#: one function of the user's code holding this share of the training thread's Python
#: samples in the steps leads the fix (take it out of the step): the same bar as an operator
#: named with its own lever (HOT_OP_SHARE). Taking it out gives back about its share of the
#: CPU-bound time, and at a quarter that is more than the generic levers promise on a loop
#: whose CPU time is not launches (a bigger batch or CUDA graphs leave a Python loop as slow)
USER_FN_SHARE = 0.25
#: "N% of the sampled call stacks run under X, the native call Python made" is said only
#: from this share on: below a quarter, X is one path among many and says little
ENTRY_SHARE = 0.25
#: the GPU idles at least this long per kernel waiting for the CPU: more than PyTorch's eager
#: dispatch and launch of a kernel cost (27-123 µs of CPU a kernel, all told, in the 27
#: eager captures of bench/advice and tests/data; the idle is a part of that), so the CPU
#: does other work between the launches (data preparation, Python loops) that neither a
#: CUDA graph nor fewer launches remove: the fix says so and leads with finding that work
BETWEEN_LAUNCHES_NS = 200_000
#: GPU-bound: the GPU is busy at least this share of the step (idle under 20%: what the
#: idle causes could give back is small next to the kernels), and compute is the largest part
GPU_BOUND_SHARE = 0.80
#: "small": a kernel shorter than this does too little work to hide its launch
SMALL_KERNEL_NS = 10_000
#: copy-bound: copies are the largest part of the step and at least half of it
COPY_BOUND_SHARE = 0.50
_OPTIM = re.compile(r"optim", re.IGNORECASE)


def _need_budget(ctx: Ctx) -> Budget:
    b: Budget | None = ctx.budget
    if b is None:
        raise Skip("no training steps found (no step ranges, no repeated kernel pattern)")
    return b


def _scope(b: Budget) -> Scope:
    steps = b.main.steps
    return Scope(
        SCOPE_RANGE,
        f"{b.steady_labels} ({fmt.plural(len(steps), 'steady-state step')}, {b.method_text})",
        steps[0].start_ns,
        steps[-1].end_ns,
    )


def _per_step_evidence(b: Budget, part: str) -> Evidence:
    steps = b.main.steps
    return Evidence.build(
        "",
        None,
        np.array([s.start_ns for s in steps], np.int64),
        np.array([s.parts.wall_ns for s in steps], np.int64),
        {
            "label": [s.label for s in steps],
            f"{part}_ns": np.array([s.parts.ns[part] for s in steps], np.int64),
            "gpu_busy_ns": np.array([s.parts.busy_ns for s in steps], np.int64),
        },
        {"label": "Step", f"{part}_ns": f"{SHORT[part]} (ns)", "gpu_busy_ns": "GPU busy (ns)"},
    )


def _finding(
    rule: str, sev: Severity, msg: str, b: Budget, part: str, metrics: dict, fix: Fix | None = None
) -> Finding:
    """A finding about the steady steps' budget part `part`: its time is the saving, its
    per-step time the evidence."""
    return Finding(
        rule=rule,
        title=fixes.title_for(rule),
        severity=sev,
        message=msg,
        fix=fix or fixes.fix_for(rule),
        scope=_scope(b),
        source=SOURCE_TUIPERF,
        count=b.n_steady,
        evidence=_per_step_evidence(b, part),
        est_saving_ns=b.steady.ns[part],
        metrics=metrics,
    )


def _steady_kernels(ctx: Ctx, b: Budget) -> np.ndarray:
    """Rows of the kernels launched inside the steady steps."""
    return _steady_rows(ctx, b, "kernels")


def _optimizer_kernels(ctx: Ctx, rows: np.ndarray) -> int:
    """Kernels launched inside optimizer phases of the steady steps (0 when not marked)."""
    spans = [s for name, v in ctx.steps.phases.items() if _OPTIM.search(name) for s in v]
    if not spans:
        return 0
    arr = np.array(sorted(spans), np.int64)
    launch = ctx.launch_time("kernels")[rows]
    i = np.searchsorted(arr[:, 0], launch, "right") - 1
    return int(((i >= 0) & (launch < arr[np.maximum(i, 0), 1])).sum())


def cpu_bound(ctx: Ctx) -> list[Finding]:
    """The GPU's queue runs empty: kernels start as soon as the CPU launches them."""
    b = _need_budget(ctx)
    st = b.steady
    share = st.ns["cpu_bound"] / st.wall_ns if st.wall_ns else 0.0
    if share < CPU_BOUND_SHARE:
        return []
    nums = _cpu_numbers(ctx, b)
    per_step = nums["kernels_per_step"]
    msg = (
        f"The GPU is busy {st.pct('busy'):.0f}% of the steady-state steps and waits for the "
        f"CPU {share:.0%} of the time: its queue is empty, each kernel starts as soon as it "
        f"is launched. The loop issues {per_step:,.0f} kernels a step, one every "
        f"{fmt.duration(nums['cpu_ns_per_kernel'])} of CPU time (outside the data wait), while "
        f"a kernel runs {fmt.duration(nums['mean_kernel_ns'])} on average on the GPU."
    )
    hot = top_cpu_op(ctx, b)
    if hot is not None and hot.self_ns_per_step >= HOT_OP_SHARE * st.ns["cpu_bound"] / b.n_steady:
        at = f", called from {hot.site}" if hot.site else ""
        msg += (
            f" Most of that CPU time is one operator: {hot.name} takes "
            f"{fmt.duration(hot.self_ns_per_step)} of host self time a step{at}."
        )
        nums["hot_op_self_ns_per_step"] = hot.self_ns_per_step
    got = step_samples(ctx, b)
    msg += _sampled(got, nums) + _off_cpu(ctx, b, nums)
    msg += _measured_capture_cost(b) or _capture_cost(ctx)
    worst = share >= CPU_BOUND_ERROR and st.largest() == "cpu_bound"
    sev = Severity.ERROR if worst else Severity.WARNING
    hot_name = hot.name if "hot_op_self_ns_per_step" in nums and hot else ""
    user = _user_function(got, b, nums)
    fix = _cpu_fix(nums, hot_name, run_facts(ctx), user, sampled=got is not None)
    found = _finding("cpu_bound", sev, msg, b, "cpu_bound", nums, fix)
    if got is not None:
        found.metrics["cpu_sample_functions"] = _sample_rows(got)
    rows = _steady_kernels(ctx, b)
    return [sites.name_sites(found, ctx, "kernels", rows, "Most kernels are launched from")]


def _sampled(got: StepSamples | None, nums: dict[str, float]) -> str:
    """The training thread's top functions by CPU samples in the steps ('' without)."""
    if got is None:
        return ""
    nums["cpu_samples"] = got.samples + got.python_samples
    named = ", ".join(f"{h.label} {h.share:.0%}" for h in got.top) or (
        f"a flat profile, no function holds {SHOWN_SHARE:.0%} of them"
    )
    first = "Python functions first, native below" if got.python_samples else "native code"
    text = (
        f" Where that CPU time goes, by the training thread's CPU samples in these steps "
        f"({got.samples + got.python_samples:,} samples, {first}): {named}."
    )
    if got.entry is not None:
        nums["python_entry_share"] = round(got.entry.share, 3)
    if got.entry is not None and got.entry.share >= ENTRY_SHARE:
        text += (
            f" {got.entry.share:.0%} of the {got.stacked:,} sampled call stacks run under "
            f"{got.entry.label}, the native call Python made."
        )
    return text


def _user_function(
    got: StepSamples | None, b: Budget, nums: dict[str, float]
) -> UserFunction | None:
    """The user's function that leads the fix (USER_FN_SHARE), with the saving modelled
    as its share of the samples applied to the steps' CPU-bound time; None below the bar."""
    user = got.user_function if got is not None else None
    if user is None or user.share < USER_FN_SHARE:
        return None
    per_step = b.steady.ns["cpu_bound"] / b.n_steady
    nums["user_function_share"] = round(user.share, 4)
    nums["user_function_saving_ns_per_step"] = round(user.share * per_step)
    nums["cpu_bound_ns_per_step"] = round(per_step)
    return user


def _user_lever(n: dict[str, float], user: UserFunction) -> str:
    """Lever 1 when one function of the user's code holds much of the step's CPU time."""
    name = user.function
    return (
        f"1) take {name} out of the step: run it in DataLoader workers (a Dataset whose "
        f"__getitem__ calls it, num_workers > 0), precompute its results once if its inputs "
        f"repeat, or vectorize it as tensor ops on the GPU (no per-element Python loop). "
        f"Saving up to ~{fmt.duration(n['user_function_saving_ns_per_step'])} a step: its "
        f"{user.share:.0%} of the samples applied to the "
        f"{fmt.duration(n['cpu_bound_ns_per_step'])} a step the GPU waits for the CPU (an "
        "estimate: the rest of the step's CPU work stays);"
    )


def _user_snippet(user: UserFunction) -> str:
    return (
        f"class Batches(torch.utils.data.Dataset):   # {user.function} runs in the workers\n"
        f"    def __getitem__(self, i): return torch.tensor({user.function}(...))\n"
        "loader = DataLoader(Batches(), batch_size=None, num_workers=4, pin_memory=True,\n"
        "                    persistent_workers=True)"
    )


def _sample_rows(got: StepSamples) -> list[dict[str, object]]:
    rows = [*got.top, *([got.entry] if got.entry else [])]
    return [
        {"function": h.function, "module": h.module, "kind": h.kind,
         "self_samples": h.self_samples, "share": round(h.share, 4), "entry": h is got.entry}
        for h in rows
    ]  # fmt: skip


def _off_cpu(ctx: Ctx, b: Budget, nums: dict[str, float]) -> str:
    """ "The training thread was descheduled ..." where that is a real part of the step."""
    off = descheduled(ctx, b)
    if off is None:
        return ""
    nums["descheduled_ns_per_step"] = round(off.waiting_ns)
    nums["descheduled_outside_calls_ns_per_step"] = round(off.outside_calls_ns)
    if not off.matters:
        return ""
    return (
        f" The training thread was descheduled {fmt.duration(round(off.outside_calls_ns))} a "
        f"step ({off.share:.0%} of the step) outside any CUDA or OS call: ready to run with no "
        "CPU (other threads or processes took it), or blocked where nothing is traced."
    )


#: what a capture that records a Python stack with every launch costs the loop's CPU:
#: about 2x a small loop's step on the H200 (40.8 ms against ~21 ms under plain nsys)
BACKTRACE_COST = 2.0


def _measured_capture_cost(b: Budget) -> str:
    """The capture's cost as tuiperf.torch timed it ("" when the report does not say)."""
    if b.untraced_step_ns is None:
        return ""
    return (
        f" Timed with nothing recording (tuiperf.torch), a step took "
        f"{fmt.duration(b.untraced_step_ns)} against {fmt.duration(b.step_ns)} here: up to "
        f"{fmt.duration(b.capture_adds_ns)} a step of this CPU-bound time is the capture's, "
        "and the saving leaves it out."
    )


def _capture_cost(ctx: Ctx) -> str:
    """What the capture itself adds to the CPU time this finding reports ("" for none
    known): Python stacks per launch (nsys --python-backtrace, torch.profiler with_stack)."""
    if ctx.table("callsites").num_rows == 0:
        if ctx.trace.meta.format.startswith("kineto"):
            return (
                " torch.profiler's own host overhead (a record per operator) is in these CPU "
                "times: time a few steps without the profiler before taking them at face "
                "value."
            )
        return ""
    return (
        " This capture recorded a Python stack with the CUDA calls, which costs the CPU "
        f"about {BACKTRACE_COST:g}x per launch on a small loop: part of this CPU time is the "
        "profiler's. Capture once without backtraces to time the loop; keep this one for the "
        "call sites."
    )


def _cpu_numbers(ctx: Ctx, b: Budget) -> dict[str, float]:
    """What the CPU-bound finding and its fix quote, over the steady steps."""
    st = b.steady
    rows = _steady_kernels(ctx, b)
    dur = A.ints(ctx.table("kernels"), "duration")[rows]
    n = max(len(rows), 1)
    ld = ctx.launch_duration("kernels")[rows]
    return {
        "cpu_bound_share": round(st.ns["cpu_bound"] / st.wall_ns, 4),
        "gpu_busy_share": round(st.busy_ns / st.wall_ns, 4),
        "kernels_per_step": round(len(rows) / b.n_steady, 1),
        # wall time outside the data wait, per kernel the loop issues
        "cpu_ns_per_kernel": round((st.wall_ns - st.ns["data"]) / n),
        # the GPU's wait for the CPU, per kernel the loop issues
        "cpu_bound_ns_per_kernel": round(st.ns["cpu_bound"] / n),
        "mean_kernel_ns": round(float(dur.sum()) / n),
        "launch_call_ns": round(float(ld[ld >= 0].mean())) if (ld >= 0).any() else 0,
        "optimizer_kernels_per_step": round(_optimizer_kernels(ctx, rows) / b.n_steady, 1),
        "small_kernel_share": round(float((dur < SMALL_KERNEL_NS).sum()) / n, 3),
    }


def _cpu_fix(
    n: dict[str, float],
    hot_op: str = "",
    facts: RunFacts | None = None,
    user: UserFunction | None = None,
    sampled: bool = False,
) -> Fix:
    """The PyTorch levers in order, each with the numbers that justify it; none the run
    already uses (CUDA graphs, a fused optimizer), and inference levers for inference.
    One function of the user's code holding much of the step's samples comes first; else
    CPU work between the launches (BETWEEN_LAUNCHES_NS) leads with finding that work."""
    if facts is not None and facts.inference:
        return _inference_fix(n, facts, user)
    if _between(n, hot_op, facts, user):
        return _between_fix(n, facts, sampled)
    cpu, gpu = fmt.duration(n["cpu_ns_per_kernel"]), fmt.duration(n["mean_kernel_ns"])
    first = (
        [
            f"0) {hot_op} runs on the CPU inside the step "
            f"({fmt.duration(n['hot_op_self_ns_per_step'])} a step): move it into DataLoader "
            "workers (num_workers > 0) or create the data on the GPU (device=...);"
        ]
        if hot_op
        else []
    )
    graphs = facts is not None and facts.graphs
    levers = [
        *first,
        f"1) a bigger batch: each kernel costs ~{cpu} of CPU and runs ~{gpu} on the GPU; "
        "more samples per kernel raise GPU time at about the same CPU cost;",
        _graphs_lever(n, facts),
    ]
    if facts is not None and facts.fused_optimizer:
        pass  # the optimizer is fused already
    elif n["optimizer_kernels_per_step"]:
        levers.append(
            f"3) foreach/fused optimizers: the optimizer issues "
            f"{n['optimizer_kernels_per_step']:,.0f} kernels a step;"
        )
    else:
        levers.append("3) foreach/fused optimizers (fused=True): a few kernels for all parameters;")
    levers.append(
        f"4) fewer small ops: {n['small_kernel_share']:.0%} of the kernels run under "
        f"{fmt.duration(SMALL_KERNEL_NS)} (fuse elementwise ops, avoid per-element Python loops)."
    )
    if user is not None:
        levers.insert(0, _user_lever(n, user))
    # numbered as they stand (a lever the run already uses leaves no gap)
    levers = [_renumber(x, i) for i, x in enumerate(levers, 0 if hot_op and not user else 1)]
    base = fixes.fix_for("cpu_bound")
    lead = (
        _user_lead(user)
        if user
        else "The GPU waits on CPU work in the step"
        if hot_op
        else "The GPU waits on Python/launch overhead"
    )
    if user is not None:
        return Fix(f"{lead}. In order: " + " ".join(levers), _user_snippet(user))
    snippet = base.snippet
    compiled = facts is not None and facts.compiled
    if graphs or compiled:
        snippet = "\n".join(ln for ln in snippet.splitlines() if "torch.compile" not in ln)
    if compiled and not graphs:
        snippet = f"{BIGGER_BATCH}\n{snippet}"
    if facts is not None and facts.fused_optimizer:
        snippet = "\n".join(ln for ln in snippet.splitlines() if "fused=True" not in ln)
    return Fix(f"{lead}. In order: " + " ".join(levers), snippet)


def _between(n: dict[str, float], hot_op: str, facts: RunFacts | None, user: object) -> bool:
    """The GPU waits longer per kernel than issuing one costs, and nothing more specific
    (a user function, a hot operator, graphs or compile the run has) explains it."""
    replayed = facts is not None and (facts.graphs or facts.compiled)
    waits = n.get("cpu_bound_ns_per_kernel", 0) >= BETWEEN_LAUNCHES_NS
    return waits and not user and not hot_op and not replayed


def _between_fix(n: dict[str, float], facts: RunFacts | None, sampled: bool) -> Fix:
    """The fix when the GPU waits longer per kernel than issuing a kernel costs: the CPU
    works on something else between the launches; find it and take it out of the step."""
    idle = fmt.duration(n["cpu_bound_ns_per_kernel"])
    launches = n["kernels_per_step"]
    calls = fmt.duration(n["launch_call_ns"] * launches)
    how = (
        ""
        if sampled
        else " CPU samples would show which code: `tuiperf profile` records them (nsys "
        "--sample=process-tree --python-sampling=true)."
    )
    lead = (
        f"The GPU waits on CPU work between the launches, not on issuing them: it idles "
        f"~{idle} per kernel, more than PyTorch takes to dispatch and launch one (tens of "
        f"µs).{how} In order:"
    )
    levers = [
        "1) find that work and take it out of the step: per-sample or per-batch preparation "
        "into DataLoader workers (num_workers > 0), tensors created on the GPU (device=...), "
        "Python loops over elements vectorized as tensor ops;",
        f'2) CUDA graphs / torch.compile(mode="reduce-overhead") replay the {launches:,.0f} '
        f"launches a step but not the Python between them: at most the ~{calls} of launch "
        "calls a step;",
    ]
    if not (facts is not None and facts.fused_optimizer) and n["optimizer_kernels_per_step"]:
        levers.append(
            f"3) foreach/fused optimizers: the optimizer issues "
            f"{n['optimizer_kernels_per_step']:,.0f} kernels a step;"
        )
    return Fix(f"{lead} " + " ".join(levers), BETWEEN_SNIPPET)


#: the between-launches fix's snippet: the loop's preparation moved into DataLoader workers
BETWEEN_SNIPPET = (
    "class Batches(torch.utils.data.Dataset):   # the step's CPU preparation, in the workers\n"
    "    def __getitem__(self, i): return prepare(i)\n"
    "loader = DataLoader(Batches(), batch_size=None, num_workers=4, pin_memory=True,\n"
    "                    persistent_workers=True)"
)


def _user_lead(user: UserFunction) -> str:
    return (
        f"Most of the step's CPU time is one function of your code: {user.label} holds "
        f"{user.share:.0%} of the training thread's Python samples in the steps"
    )


#: the first lever for a compiled run (its graphs would reach the compiled region only)
BIGGER_BATCH = (
    "loader = DataLoader(ds, batch_size=2 * bs)   # twice the GPU work per launch, same CPU cost"
)


def _graphs_lever(n: dict[str, float], facts: RunFacts | None) -> str:
    """Lever 2: CUDA graphs, as far as they reach in this run. A model compiled already keeps
    the gaps around its compiled region (guards on entry, the eager optimizer and clipping)
    under mode="reduce-overhead", which graphs that region only: no saving is promised."""
    launches = f"{n['kernels_per_step']:,.0f} launches a step"
    if facts is not None and facts.graphs:
        return (
            "2) the CUDA graphs the run already replays: capture more of the step in them "
            f"({launches} are still outside);"
        )
    if facts is not None and facts.compiled:
        return (
            '2) torch.compile(mode="reduce-overhead") graphs only the compiled region: the '
            "idle at its entry (guards, input handling) and in the eager optimizer, clipping "
            "and logging stays, so measure it before counting on it;"
        )
    return (
        f'2) torch.compile(mode="reduce-overhead") / CUDA graphs: {launches} '
        f"(~{fmt.duration(n['launch_call_ns'])} of launch call each) replayed as one graph;"
    )


def _renumber(lever: str, i: int) -> str:
    """`3) …` -> `{i}) …` (levers left out leave no gap in the numbering)."""
    head, _, rest = lever.partition(") ")
    return f"{i}) {rest}" if head.isdigit() else lever


#: what an inference loop's CPU-bound fix says (no optimizer, no training step)
_INFERENCE_SNIPPET = (
    'model.generation_config.cache_implementation = "static"   # a fixed-shape KV cache\n'
    'model.forward = torch.compile(model.forward, mode="reduce-overhead")   # CUDA graphs\n'
    'out = model.generate(**tokenizer(prompts, return_tensors="pt", padding=True).to("cuda"))'
)


def _inference_fix(n: dict[str, float], facts: RunFacts, user: UserFunction | None = None) -> Fix:
    """Levers of a launch-bound inference loop (no backward pass, no optimizer); the user's
    function that holds much of the step first."""
    graphs = (
        "capture more of each call in the CUDA graphs the run already replays"
        if facts.graphs
        else 'a static KV cache + torch.compile(mode="reduce-overhead") (CUDA graphs): '
        f"{n['kernels_per_step']:,.0f} launches a step replayed as one graph"
    )
    text = (
        "This is inference (no backward pass, no optimizer): each call is launch-bound, the "
        f"GPU runs ~{fmt.duration(n['mean_kernel_ns'])} per kernel against "
        f"~{fmt.duration(n['cpu_ns_per_kernel'])} of CPU. In order: 1) batch requests "
        f"(several prompts per call: the same launches do more work); 2) {graphs}."
    )
    if user is not None:
        first = _user_lever(n, user).removeprefix("1) ").removesuffix(";")
        text = f"{_user_lead(user)}. First, {first}. Then: {text}"
        return Fix(text, _user_snippet(user))
    return Fix(text, _INFERENCE_SNIPPET)


def gpu_bound(ctx: Ctx) -> list[Finding]:
    """The GPU computes most of the step: faster kernels are what shortens it."""
    b = _need_budget(ctx)
    st = b.steady
    share = st.ns["compute"] / st.wall_ns if st.wall_ns else 0.0
    if st.busy_ns < GPU_BOUND_SHARE * st.wall_ns or st.largest() != "compute":
        return []
    k = ctx.table("kernels")
    rows = _steady_kernels(ctx, b)
    names = A.strings(k, "short_name")[rows]
    dur = A.ints(k, "duration")[rows]
    uniq, inv = np.unique(names, return_inverse=True)
    time = np.bincount(inv, weights=dur)
    top = np.argsort(-time, kind="stable")[:3]
    total = max(float(time.sum()), 1.0)
    tops = ", ".join(f"{uniq[i]} {time[i] / total:.0%}" for i in top)
    msg = (
        f"The GPU computes {share:.0%} of the steady-state steps (idle {st.pct('idle'):.0f}%): "
        f"the step is as long as its kernels. Kernel time by name: {tops}."
    )
    metrics = {
        "compute_share": round(share, 4),
        "idle_share": round(st.pct("idle") / 100, 4),
        "top_kernels": [str(uniq[i]) for i in top],
    }
    m = steady_metrics(ctx)  # nsys GPU metrics: what the busy GPU's tensor cores did
    msg += tensor_text(
        m,
        "the tensor cores sit nearly idle (under "
        f"{IDLE_TENSOR_SHARE:.0%} of the busy time): the kernels that fill the step do not "
        "use them (FP32 matrix products on the CUDA cores, or elementwise and memory-bound "
        "work).",
        f"the tensor cores work {m.tensor_of_busy if m else 0:.0%} of the busy time.",
    )
    metrics.update(tensor_metrics(m))
    return [_finding("gpu_bound", Severity.INFO, msg, b, "compute", metrics, _gpu_fix(ctx))]


def _gpu_fix(ctx: Ctx) -> Fix:
    """The GPU-bound levers the run does not use yet (no autocast for a bf16 run, no
    torch.compile for a compiled one)."""
    facts = run_facts(ctx)
    if not (facts.low_precision or facts.compiled):
        return fixes.fix_for("gpu_bound")
    share = facts.low_precision_ns / facts.gemm_ns if facts.gemm_ns else 0.0
    levers = []
    if facts.low_precision:
        levers.append(
            f"the matrix products already run in a low precision on tensor cores ({share:.0%} "
            "of GEMM time): bigger, aligned matrices (multiples of 64) keep them fast"
        )
    if not facts.compiled:
        levers.append("torch.compile to fuse the elementwise ops between them")
    levers.append("profile the top kernels with Nsight Compute (tuiperf ncu)")
    return Fix("Make the kernels themselves faster: " + "; ".join(levers) + ".",
               "" if facts.compiled else "model = torch.compile(model)")  # fmt: skip


def copy_bound(ctx: Ctx) -> list[Finding]:
    """The GPU spends most of the step copying, from pinned memory (pageable copies are
    pageable_h2d_in_steps' finding): fewer bytes, or copies hidden under compute."""
    b = _need_budget(ctx)
    st = b.steady
    share = st.ns["copy"] / st.wall_ns if st.wall_ns else 0.0
    if share < COPY_BOUND_SHARE or st.largest() != "copy":
        return []
    mc = ctx.table("memcpy")
    rows = _steady_rows(ctx, b, "memcpy")
    dur = A.ints(mc, "duration")[rows]
    size = A.ints(mc, "bytes")[rows]
    pageable = A.strings(mc, "src_kind")[rows] == "Pageable"
    if dur.sum() == 0 or dur[pageable].sum() >= 0.5 * dur.sum():
        return []
    kinds = A.strings(mc, "copy_kind")[rows]
    uniq, inv = np.unique(kinds, return_inverse=True)
    by_kind = np.bincount(inv, weights=dur)
    top = int(np.argmax(by_kind))
    main = inv == top
    rate = size[main].sum() / max(int(dur[main].sum()), 1)  # bytes per ns = GB/s
    per_step = int(size.sum() / b.n_steady)
    msg = (
        f"The GPU copies {share:.0%} of the steady-state steps: {fmt.size(per_step)} a step, "
        f"mostly {uniq[top]} ({by_kind[top] / dur.sum():.0%} of copy time, {rate:.1f} GB/s "
        "while a copy runs). The copies are from pinned memory already: the step is as long "
        "as its transfers."
    )
    metrics = {
        "copy_share": round(share, 4),
        "bytes_per_step": per_step,
        "gb_per_s": round(float(rate), 2),
        "main_kind": str(uniq[top]),
    }
    return [_finding("copy_bound", Severity.WARNING, msg, b, "copy", metrics)]


def _steady_rows(ctx: Ctx, b: Budget, table: str) -> np.ndarray:
    """Rows of `table` on the budget's main device, launched inside the steady steps."""
    launch = ctx.launch_time(table)
    on = A.ints(ctx.table(table), "device", -1) == b.main.device
    a = np.array([s.cpu_start_ns for s in b.main.steps], np.int64)
    e = np.array([s.cpu_end_ns for s in b.main.steps], np.int64)
    i = np.searchsorted(a, launch, "right") - 1
    return np.flatnonzero(on & (i >= 0) & (launch < e[np.maximum(i, 0)]))


RULES = {"cpu_bound": cpu_bound, "gpu_bound": gpu_bound, "copy_bound": copy_bound}
