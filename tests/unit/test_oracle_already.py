"""No fix turns on a switch the run already has (issue 31). The switches are read from
hand-built kernel names; the expected snippets and texts are written out by hand."""

from __future__ import annotations

import pytest

from tests.support.loops import GEMM, STEP, US, at_step_end, loop_trace
from tuiperf.analysis import engine
from tuiperf.analysis.findings import Finding, Fix
from tuiperf.analysis.fixes import fix_for
from tuiperf.analysis.rules.already import OWN_CHOICE, drop_already, without
from tuiperf.analysis.rules.run_facts import LAYOUT_NEGLIGIBLE, RunFacts

SNIPPET = (
    'torch.set_float32_matmul_precision("high")  # TF32\n'
    "model = model.to(memory_format=torch.channels_last)\n"
    "torch.backends.cudnn.benchmark = True\n"
    'with torch.autocast("cuda", dtype=torch.bfloat16):\n'
    "    loss = loss_fn(model(x), y)\n"
    "    loss.backward()\n"
    "opt.step()\n"
    "model = torch.compile(model)\n"
    'model = torch.compile(model, mode="max-autotune")\n'
    "opt = torch.optim.AdamW(model.parameters(), fused=True)"
)


def _facts(**kw) -> RunFacts:
    base = dict(
        gemm_ns=10,
        low_precision_ns=0,
        fp32_simt_ns=0,
        compiled=False,
        graph_ns=0,
        graph_kernels=0,
        fused_optimizer=False,
        backward=True,
        optimizer=True,
    )
    base.update(kw)
    return RunFacts(**base)  # type: ignore[arg-type]


def _finding(rule: str, fix: Fix) -> Finding:
    f = Finding.__new__(Finding)
    f.rule, f.fix = rule, fix
    return f


def test_low_precision_drops_autocast_with_its_block_and_tf32() -> None:
    out, dropped = without(SNIPPET, frozenset({"low_precision"}))
    assert dropped == {"low_precision"}
    assert out.splitlines() == [
        "model = model.to(memory_format=torch.channels_last)",
        "torch.backends.cudnn.benchmark = True",
        "opt.step()",
        "model = torch.compile(model)",
        'model = torch.compile(model, mode="max-autotune")',
        "opt = torch.optim.AdamW(model.parameters(), fused=True)",
    ]


def test_tf32_drops_only_the_tf32_line() -> None:
    out, dropped = without(SNIPPET, frozenset({"tf32"}))
    assert dropped == {"tf32"} and out == "\n".join(SNIPPET.splitlines()[1:])


def test_compiled_keeps_a_mode_change_and_fused_drops_its_line() -> None:
    out, dropped = without(SNIPPET, frozenset({"compiled", "fused_optimizer", "channels_last"}))
    assert dropped == {"compiled", "fused_optimizer", "channels_last"}
    assert 'mode="max-autotune"' in out
    assert "torch.compile(model)\n" not in out + "\n"
    assert "fused=True" not in out and "channels_last" not in out


def test_nothing_the_run_has_nothing_dropped() -> None:
    assert without(SNIPPET, frozenset()) == (SNIPPET, set())


@pytest.mark.parametrize(
    ("conv", "share", "on"),
    [(True, LAYOUT_NEGLIGIBLE, False), (True, LAYOUT_NEGLIGIBLE - 1e-9, True), (False, 0.0, False)],
)
def test_channels_last_at_the_negligible_bar(conv: bool, share: float, on: bool) -> None:
    assert LAYOUT_NEGLIGIBLE == 0.01
    f = _facts(conv=conv, layout_share=share)
    assert f.channels_last is on and ("channels_last" in f.already) is on


def test_compiled_run_gpu_time_util_lists_no_compile() -> None:
    (f,) = drop_already(
        [_finding("gpu_time_util", fix_for("gpu_time_util"))], _facts(compiled=True)
    )
    assert f.fix.text == (
        "Keep the GPU fed: overlap data loading with compute, remove host syncs, batch more "
        "work per launch (larger batches, CUDA graphs). (The run has some of this already: "
        "it is already compiled (torch.compile).)"
    )
    assert f.fix.snippet == ""


def test_rules_that_choose_their_own_lever_are_left_alone() -> None:
    for rule in OWN_CHOICE:
        fix = Fix("t", 'with torch.autocast("cuda"):\n    y = m(x)')
        (f,) = drop_already([_finding(rule, fix)], _facts(low_precision_ns=10))
        assert f.fix is fix


def _top_kernel_fix(name: str) -> Fix:
    trace = loop_trace(kernels=at_step_end([300 * US] * 5, name=name))
    (f,) = [f for f in engine.analyze(trace).findings if f.rule == "top_kernel"]
    return f.fix


def test_top_kernel_of_a_bf16_run_gives_no_autocast_or_tf32() -> None:
    fix = _top_kernel_fix(GEMM)  # sm90 bf16 GEMM: the run is on tensor cores
    assert "autocast" not in fix.snippet and "set_float32_matmul_precision" not in fix.snippet
    # said once, by the kernel's own lever text, not again by the adapter
    assert fix.text.endswith(
        "The run already computes its matrix products in a low precision on tensor cores."
    )
    assert "The run has some of this already" not in fix.text


def test_top_kernel_of_an_fp32_run_gives_tf32_and_autocast() -> None:
    fix = _top_kernel_fix("volta_sgemm_128x64_nn")
    assert 'set_float32_matmul_precision("high")' in fix.snippet
    assert "torch.autocast(" in fix.snippet and "The run has" not in fix.text


def test_tf32_fact_from_a_kernel_name() -> None:
    tf32 = "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32"
    trace = loop_trace(kernels=[(STEP + 100 * US, STEP + 200 * US, tf32)])
    from tuiperf.analysis.budget.context import Ctx
    from tuiperf.analysis.rules.run_facts import run_facts

    facts = run_facts(Ctx(trace))
    assert facts.tf32 and "tf32" in facts.already
