"""A diff's reasons name evidence of the part they explain: a compute change is shown by a
compute kernel, never by an NCCL kernel that changed more, and comm by NCCL kernels."""

from __future__ import annotations

from types import SimpleNamespace

from tuiperf.analysis.diff.compare import Row, _evidence


def test_compute_and_comm_are_shown_by_their_own_kernels() -> None:
    rows = [  # sorted by |change|, as the diff holds them: the NCCL kernel changed most
        Row("kernels", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 5e6, 1e6, "ns"),
        Row("kernels", "ampere_bf16_s16816gemm_bf16_128x128", 3e6, 2e6, "ns"),
        Row("kernels", "ncclDevKernel_SendRecv", 2e6, 1.5e6, "ns"),
    ]
    d = SimpleNamespace(kernels=rows, before=None, after=None)
    assert "ampere_bf16_s16816gemm_bf16_128x128 3.00 ms → 2.00 ms" in _evidence(d, "compute")  # type: ignore[arg-type]
    assert "AllReduce" in _evidence(d, "comm")  # type: ignore[arg-type]
    only_nccl = SimpleNamespace(kernels=rows[:1], before=None, after=None)
    assert _evidence(only_nccl, "compute") == ""  # type: ignore[arg-type]


def test_a_bug_in_the_step_budget_is_not_hidden_as_no_steps(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """diff used to catch any exception from the step budget and compare without steps."""
    import pytest

    from tests.support.tiny import kernels_trace
    from tuiperf.analysis.budget import context
    from tuiperf.analysis.diff import compare as diff

    def broken(ctx: object, steps: object = None) -> None:
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(context, "step_budget", broken)  # where Ctx.budget looks it up
    with pytest.raises(ZeroDivisionError, match="planted"):
        diff.measure(kernels_trace([(0, 10, 0, 7, "k")]), "a", findings=False)
