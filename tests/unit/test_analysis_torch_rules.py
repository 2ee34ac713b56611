"""PyTorch training rules: fire where the fixtures have the problem, stay quiet where not."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.analysis import ctx_of, kineto_trace, trace_of, without
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import Skip
from tuiperf.analysis.rules.pytorch import RULES


def _one(ctx: Ctx, rule: str):  # type: ignore[no-untyped-def]
    found = RULES[rule](ctx)
    assert len(found) == 1, found
    return found[0]


def _none(ctx: Ctx, rule: str) -> None:
    assert RULES[rule](ctx) == []


def test_cnn_pageable_copies_two_per_step() -> None:
    f = _one(ctx_of("cnn_osrt"), "pageable_h2d_in_steps")
    # 2 a step in the 9 steady steps (step 2 … step 10); the 2 start-up steps' 4 copies
    # join the 56 before the first step
    assert f.count == 18 and f.metrics["copies_per_step"] == 2.0
    assert f.metrics["start_up_copies"] == 60
    assert f.severity.word == "warning" and f.est_saving_ns and f.est_saving_ns > 0
    ev = f.evidence.rows.to_pylist()
    assert {r["table"] for r in ev} == {"memcpy"}
    memcpy = trace_of("cnn_osrt").table("memcpy")
    for r in ev:  # evidence rows point at real rows, with their times
        assert memcpy["start"][r["row"]].as_py() == r["start_ns"]
        assert memcpy["src_kind"][r["row"]].as_py() == "Pageable"


def test_vit_amp_loop_is_not_called_pageable() -> None:
    _none(ctx_of("vit_amp"), "pageable_h2d_in_steps")


@pytest.mark.parametrize("name", ["cnn_osrt", "vit_amp", "lstm", "vit_range"])
def test_loss_item_syncs_every_step(name: str) -> None:
    f = _one(ctx_of(name), "host_sync_per_step")
    assert f.metrics["steps_with_sync"] == f.metrics["steady_steps"]
    assert f.metrics["d2h_copies_per_step"] >= 1


def test_cnn_channels_last_conversions() -> None:
    f = _one(ctx_of("cnn_osrt"), "layout_conversion")
    assert f.count == 572 + 275
    assert f.metrics["share_of_kernel_time"] > 0.1


@pytest.mark.parametrize("name", ["vit_amp", "lstm", "vit_range"])
def test_no_layout_conversions_without_them(name: str) -> None:
    _none(ctx_of(name), "layout_conversion")


def test_cnn_data_loader_starves_the_gpu() -> None:
    f = _one(ctx_of("cnn_osrt"), "dataloader_starvation")
    assert f.metrics["idle_share"] >= 0.10
    assert "data" in f.metrics["windows"]
    idle = f.evidence.rows["gpu_idle_ns"].to_numpy()
    dur = f.evidence.rows["duration_ns"].to_numpy()
    assert (idle <= dur).all() and f.est_saving_ns == int(idle.sum())


def test_vit_amp_pinned_loader_keeps_up() -> None:
    _none(ctx_of("vit_amp"), "dataloader_starvation")


def test_lstm_is_cpu_bound() -> None:
    """The old launch-bound proxy's fixture: the budget's CPU-bound part says it too."""
    f = _one(ctx_of("lstm"), "cpu_bound")
    assert f.metrics["cpu_bound_share"] >= 0.1
    assert f.metrics["gpu_busy_share"] < 0.5


def test_optimizer_and_allocator_are_quiet_on_fixtures() -> None:
    for name in ("cnn_osrt", "vit_amp", "lstm"):
        _none(ctx_of(name), "tiny_optimizer_kernels")  # foreach optimizers: few kernels
        _none(ctx_of(name), "alloc_churn")


def test_fp32_rule_needs_a_share_of_gpu_time() -> None:
    # lstm has sgemm_largek (FP32, no tensor cores) but it is 0.15% of kernel time
    _none(ctx_of("lstm"), "fp32_no_tensor_cores")


def test_rules_skip_without_steps() -> None:
    ctx = Ctx(without(trace_of("vit_range"), "nvtx", "kernels"))
    with pytest.raises(Skip):
        RULES["host_sync_per_step"](ctx)


def test_steps_from_repeated_kernels_without_nvtx() -> None:
    nv = ctx_of("cnn_osrt").steps
    ctx = Ctx(without(trace_of("cnn_osrt"), "nvtx"))
    st = ctx.steps
    assert st.source == "pattern" and len(st) >= 8
    # the pattern's steps start inside the NVTX steps they stand for
    inside = nv.index_of(st.starts)
    assert (inside >= 0).mean() >= 0.8 and len(np.unique(inside[inside >= 0])) >= 8
    f = _one(ctx, "host_sync_per_step")
    assert f.scope.label.endswith("repeated pattern)")


def test_kineto_profiler_steps_and_rules() -> None:
    ctx = Ctx(kineto_trace("cnn"))
    assert ctx.steps.source == "kineto" and ctx.steps.labels[0].startswith("ProfilerStep#")
    assert ctx.steps.pid is not None and ctx.steps.pid >= 0  # the CPU range, not the GPU copy
    assert _one(ctx, "pageable_h2d_in_steps").metrics["copies_per_step"] == 2.0
    _one(ctx, "layout_conversion")
    _one(ctx, "host_sync_per_step")
    _none(Ctx(kineto_trace("vit")), "pageable_h2d_in_steps")


def test_kineto_lstm_data_wait_uses_the_dataloader_range() -> None:
    f = _one(Ctx(kineto_trace("lstm")), "dataloader_starvation")
    assert "DataLoader" in f.metrics["windows"]
