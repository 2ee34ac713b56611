"""The cpu_bound fix's levers follow what the run already does: an eager run is offered
CUDA graphs through mode="reduce-overhead" with its launch count; a compiled run is told
that reduce-overhead graphs only the compiled region (on the corpus' two compiled GPT-2
loops it removed 0.06 and 0.18 ms of 2.2-2.8 ms idle a step) and leads with a bigger batch;
a run replaying graphs is told to capture more of the step."""

from __future__ import annotations

import pytest

from tuiperf.analysis.rules.budget import BIGGER_BATCH, _cpu_fix
from tuiperf.analysis.rules.run_facts import RunFacts

N = {
    "cpu_ns_per_kernel": 55_000.0,
    "mean_kernel_ns": 42_000.0,
    "kernels_per_step": 283.0,
    "launch_call_ns": 8_000.0,
    "optimizer_kernels_per_step": 0.0,
    "small_kernel_share": 0.42,
    "hot_op_self_ns_per_step": 0.0,
}


def _facts(compiled: bool = False, graph_ns: int = 0) -> RunFacts:
    return RunFacts(
        gemm_ns=100,
        low_precision_ns=100,
        fp32_simt_ns=0,
        compiled=compiled,
        graph_ns=graph_ns,
        graph_kernels=0,
        fused_optimizer=False,
        backward=True,
        optimizer=True,
    )


def test_eager_run_is_offered_graphs_for_its_launches() -> None:
    fix = _cpu_fix(N, facts=_facts())
    assert '2) torch.compile(mode="reduce-overhead") / CUDA graphs: 283 launches a step' in (
        fix.text
    )
    assert "torch.compile(model" in fix.snippet
    assert BIGGER_BATCH not in fix.snippet


def test_compiled_run_is_not_promised_what_graphs_cannot_reach() -> None:
    fix = _cpu_fix(N, facts=_facts(compiled=True))
    assert "graphs only the compiled region" in fix.text
    assert "replayed as one graph" not in fix.text
    assert "torch.compile" not in fix.snippet
    assert fix.snippet.splitlines()[0] == BIGGER_BATCH
    # the bigger batch stays lever 1
    assert fix.text.index("1) a bigger batch") < fix.text.index("2) torch.compile")


@pytest.mark.parametrize("compiled", [False, True])
def test_a_run_replaying_graphs_is_told_to_capture_more(compiled: bool) -> None:
    fix = _cpu_fix(N, facts=_facts(compiled=compiled, graph_ns=1))
    assert "2) the CUDA graphs the run already replays" in fix.text
    assert "(283 launches a step are still outside)" in fix.text
    assert "torch.compile" not in fix.snippet and BIGGER_BATCH not in fix.snippet


# The GPU waits BETWEEN_LAUNCHES_NS or more per kernel: more than issuing a kernel costs,
# so the CPU does other work between the launches; graphs are bounded by the launch calls.
BETWEEN = {**N, "cpu_bound_ns_per_kernel": 200_000.0, "optimizer_kernels_per_step": 0.0}


@pytest.mark.parametrize(("idle", "between"), [(199_999.0, False), (200_000.0, True)])
def test_cpu_work_between_launches_at_its_boundary(idle: float, between: bool) -> None:
    fix = _cpu_fix({**BETWEEN, "cpu_bound_ns_per_kernel": idle}, facts=_facts())
    assert ("between the launches" in fix.text) is between
    assert ("1) a bigger batch" in fix.text) is not between


def test_between_launches_bounds_graphs_by_the_launch_calls() -> None:
    fix = _cpu_fix(BETWEEN, facts=_facts())
    # by hand: 283 launches a step x 8 us a launch call = 2.264 ms
    assert "at most the ~2.26 ms of launch calls a step" in fix.text
    assert "~200 µs per kernel" in fix.text
    assert fix.text.index("1) find that work") < fix.text.index("2) CUDA graphs")
    assert "num_workers=4" in fix.snippet


def test_between_launches_asks_for_samples_only_without_them() -> None:
    assert "tuiperf profile" in _cpu_fix(BETWEEN, facts=_facts()).text
    assert "tuiperf profile" not in _cpu_fix(BETWEEN, facts=_facts(), sampled=True).text


@pytest.mark.parametrize("kind", ["compiled", "graphs", "hot_op"])
def test_between_launches_yields_to_what_explains_more(kind: str) -> None:
    facts = _facts(compiled=kind == "compiled", graph_ns=1 if kind == "graphs" else 0)
    hot = "aten::randn" if kind == "hot_op" else ""
    assert "between the launches" not in _cpu_fix(BETWEEN, hot, facts=facts).text
