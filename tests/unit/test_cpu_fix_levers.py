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
