"""Findings of an inference run speak of inference (issue 31 item 9): hand-built loops.

The same per-step read-back on two loops: forward GEMMs only (inference), and the same
with a backward kernel (training). The numbers must be the same; the words and the lever
must not. The expected texts are written out here, not taken from the module."""

from __future__ import annotations

import pytest

from tests.support.loops import GEMM, STEP, US, at_step_end, loop_trace
from tuiperf.analysis import engine
from tuiperf.analysis.findings import Fix
from tuiperf.analysis.rules.inference import for_inference, snippet, words
from tuiperf.analysis.rules.run_facts import RunFacts

BWD = "sm90_xmma_gemm_bf16bf16_bf16f32_nt_dgrad_backward"


def _loop(extra: list[tuple[int, int, str]]) -> engine.AnalysisResult:
    syncs = [(s * STEP + 50 * US, s * STEP + 60 * US, "cudaStreamSynchronize") for s in range(6)]
    kernels = at_step_end([800 * US] * 6, steps=6) + extra
    trace = loop_trace(kernels=kernels, calls=syncs, steps=6)
    return engine.analyze(trace)


def _one(result: engine.AnalysisResult, rule: str):
    (f,) = [f for f in result.findings if f.rule == rule]
    return f


def test_host_sync_in_an_inference_loop_speaks_of_steps_and_decode_levers() -> None:
    f = _one(_loop([]), "host_sync_per_step")
    assert f.title == "A host sync in every step"
    assert "training" not in f.title + f.message + f.fix.text
    assert f.fix.text.startswith("This is inference: a decode loop reads a value back")
    assert "loss" not in f.fix.snippet and "opt.step" not in f.fix.snippet


def test_the_same_loop_with_a_backward_pass_keeps_the_training_words() -> None:
    # one backward kernel in step 1 (it must not overlap the loop's kernels: at +100 µs)
    f = _one(_loop([(STEP + 100 * US, STEP + 110 * US, BWD)]), "host_sync_per_step")
    assert f.title == "A host sync in every training step"
    assert f.fix.text.startswith("Don't read GPU values on the CPU every step")
    assert "loss.backward()" in f.fix.snippet


def test_inference_words_leave_the_numbers_alone() -> None:
    inf = _one(_loop([]), "host_sync_per_step")
    train = _one(_loop([(STEP + 100 * US, STEP + 110 * US, BWD)]), "host_sync_per_step")
    # 5 steady steps with one 10 µs sync each: 50 µs blocked, by hand
    assert inf.metrics["blocked_ns"] == train.metrics["blocked_ns"] == 50 * US
    assert inf.est_saving_ns == train.est_saving_ns


def _facts(**kw: int | bool) -> RunFacts:
    base = dict(
        gemm_ns=1,
        low_precision_ns=1,
        fp32_simt_ns=0,
        compiled=False,
        graph_ns=0,
        graph_kernels=0,
        fused_optimizer=False,
        backward=False,
        optimizer=False,
    )
    base.update(kw)
    return RunFacts(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "inference"),
    [
        ({}, True),
        ({"backward": True}, False),
        ({"optimizer": True}, False),
        # graphs traced whole: a captured backward pass would not show: not said
        ({"graph_ns": 1}, False),
        # graphs traced node by node: their kernels are in the report, nothing hidden
        ({"graph_ns": 1, "graph_kernels": 1}, True),
    ],
)
def test_inference_is_said_only_when_nothing_is_hidden(kw: dict, inference: bool) -> None:
    assert _facts(**kw).inference is inference


def test_words_and_snippets_by_hand() -> None:
    assert words("3 of 30 training steps") == "3 of 30 steps"
    assert words("before the first training step.") == "before the first step."
    assert words("the training loop") == "the loop"
    assert words("a value read back (loss.item()).") == (
        "a value read back (the next token, or a stop check)."
    )
    assert words("retraining steps") == "retraining steps"
    assert words("The training thread was descheduled") == "The loop thread was descheduled"
    assert words("by the training thread's samples") == "by the loop thread's samples"
    assert words("Training steps hold") == "Steps hold"
    code = "with torch.autocast('cuda'):\n    loss = loss_fn(model(x), y)"
    assert snippet(code) == "with torch.autocast('cuda'):\n    out = model(x)"


def test_training_findings_pass_through_untouched() -> None:
    from tuiperf.analysis.findings import Finding

    f = Finding.__new__(Finding)
    f.rule, f.title, f.message = "x", "in every training step", "m"
    f.fix = Fix("t", "loss = loss_fn(model(x), y)")
    (out,) = for_inference([f], _facts(backward=True))
    assert (out.title, out.fix.snippet) == ("in every training step", "loss = loss_fn(model(x), y)")
    assert for_inference([f], None)[0].title == "in every training step"


def test_gemm_name_of_the_loops_is_forward_only() -> None:
    # the oracle above rests on this: the loop's kernel is no backward/optimizer kernel
    from tuiperf.analysis.budget.steps import BACKWARD_KERNEL, OPTIMIZER_KERNEL

    assert not BACKWARD_KERNEL.search(GEMM) and not OPTIMIZER_KERNEL.search(GEMM)
    assert BACKWARD_KERNEL.search(BWD)
