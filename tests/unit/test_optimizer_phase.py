"""The optimizer phase inferred without markers (rules/optimizer_phase.py) and the ranking
of a specific cause before cpu_bound (savings.SPECIFIC_OVER_GENERIC).

Hand-built loop (tests/support/loops.py: five 1000 µs NVTX steps, steps 1-4 steady, each
kernel launched by a 10 µs call ending where it starts). Each step s at t0 = s x 1000 µs:
a forward GEMM at t0 + 50 µs (thread 1); three backward GEMMs at t0 + 150/200/250 µs,
launched by thread 2 (PyTorch's autograd thread); then `n_opt` 1 µs element-wise kernels
every 10 µs from t0 + 400 µs (thread 1): the optimizer. Every expected number is by hand."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tests.support.loops import GEMM, STEP, STEPS, US, loop_trace
from tuiperf.analysis.budget import savings
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import Evidence, Finding, Fix, Scope, Severity
from tuiperf.analysis.rules import optimizer_phase, pytorch
from tuiperf.model.trace import Trace

ELEM = "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float>>"
OPT0 = 400 * US  # the first optimizer kernel's GPU start in a step


MTA = "void at::native::multi_tensor_apply_kernel<at::native::TensorListMetadata<2>>"
ELEM2 = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float>>"


def _loop(
    n_opt: int,
    back_tid: int = 2,
    back_name: str = GEMM,
    before: int = 0,
    opt_names: tuple[str, ...] = (ELEM,),
) -> Trace:
    """The loop above; `before` element-wise kernels of thread 1 in the forward (t0 + 70 µs
    on, every 10 µs), which follow no backward launch."""
    ks: list[tuple[int, int, str]] = []
    back: list[int] = []  # kernel indices launched by the backward thread
    for s in range(STEPS):
        t0 = s * STEP
        ks.append((t0 + 50 * US, t0 + 60 * US, GEMM))
        ks += [(t0 + (70 + 10 * i) * US, t0 + (71 + 10 * i) * US, ELEM) for i in range(before)]
        for j in range(3):
            back.append(len(ks))
            a = t0 + (150 + 50 * j) * US
            ks.append((a, a + 20 * US, back_name))
        ks += [(t0 + OPT0 + 10 * i * US, t0 + OPT0 + (10 * i + 1) * US,
                opt_names[i % len(opt_names)]) for i in range(n_opt)]  # fmt: skip
    trace = loop_trace(kernels=ks)
    api = trace.tables["api"]
    tid = np.asarray(api["tid"].to_numpy()).copy()
    tid[back] = back_tid  # api rows 0..len(ks)-1 are the launches, in kernel order
    trace.tables["api"] = api.set_column(
        api.schema.get_field_index("tid"), "tid", pa.array(tid, pa.int64())
    )
    return trace


def test_windows_follow_the_backward_thread() -> None:
    """Per step: from the first optimizer launch call (t0 + 390 µs) to the next step's
    forward GEMM launch call (t0 + 1000 + 40 µs); the last step's ends at its last launch
    call's end (t0 + 400 + 10 x 44 = t0 + 840 µs)."""
    s, e = optimizer_phase.inferred_windows(Ctx(_loop(45)))
    t0 = np.arange(STEPS) * STEP
    assert s.tolist() == (t0 + 390 * US).tolist()
    assert e.tolist() == [*(t0[1:] + 40 * US).tolist(), int(t0[-1] + 840 * US)]


def test_a_backward_named_kernel_of_the_loop_thread_counts_as_backward() -> None:
    named = "void at::native::layer_norm_grad_input_kernel<float>"  # BACKWARD_KERNEL
    s, _ = optimizer_phase.inferred_windows(Ctx(_loop(45, back_tid=1, back_name=named)))
    assert len(s) == STEPS


def test_no_backward_no_windows() -> None:
    s, e = optimizer_phase.inferred_windows(Ctx(_loop(45, back_tid=1)))
    assert len(s) == len(e) == 0


@pytest.mark.parametrize(("n_opt", "windows"), [(3, 0), (4, STEPS)])
def test_min_run_at_its_boundary(n_opt: int, windows: int) -> None:
    assert optimizer_phase.MIN_RUN == 4
    s, _ = optimizer_phase.inferred_windows(Ctx(_loop(n_opt)))
    assert len(s) == windows


def test_forward_elementwise_kernels_are_not_the_optimizer() -> None:
    """Five element-wise kernels in the forward (before the backward): no window there."""
    s, _ = optimizer_phase.inferred_windows(Ctx(_loop(45, before=5)))
    assert s.tolist() == (np.arange(STEPS) * STEP + 390 * US).tolist()


@pytest.mark.parametrize(("n_opt", "fires"), [(39, False), (40, True)])
def test_tiny_optimizer_kernels_without_markers(n_opt: int, fires: bool) -> None:
    """MANY_OPTIMIZER_KERNELS = 40 a step; the 4 steady steps' windows hold n_opt each."""
    assert pytorch.MANY_OPTIMIZER_KERNELS == 40
    found = pytorch.tiny_optimizer_kernels(Ctx(_loop(n_opt)))
    assert bool(found) is fires
    if fires:
        assert found[0].metrics["kernels_per_step"] == 40
        assert found[0].metrics["median_kernel_ns"] == 1 * US


# -- savings.SPECIFIC_OVER_GENERIC ---------------------------------------------------
def _f(rule: str, saving: int, part: str = "cpu_bound") -> Finding:
    ev = Evidence.build("kernels", np.array([0]), np.array([0]), np.array([1]), {}, {})
    f = Finding(rule, rule, Severity.WARNING, "m", Fix(""), Scope("range"), "tuiperf", 1, ev)
    f.est_saving_ns, f.budget_part = saving, part
    return f


@pytest.mark.parametrize(("specific", "first"), [(500, "tiny_optimizer_kernels"),
                                                 (499, "cpu_bound")])  # fmt: skip
def test_specific_first_at_its_boundary(specific: int, first: str) -> None:
    """cpu_bound saves 1000 ns: the optimizer finding on its part from 500 ns on (half)."""
    assert savings.SPECIFIC_OVER_GENERIC == 0.5
    ranked = [_f("cpu_bound", 1000), _f("top_kernel", 800, "compute"),
              _f("tiny_optimizer_kernels", specific)]  # fmt: skip
    out = [f.rule for f in savings._specific_first(ranked)]
    if first == "cpu_bound":
        assert out == ["cpu_bound", "top_kernel", "tiny_optimizer_kernels"]
    else:
        assert out == ["tiny_optimizer_kernels", "cpu_bound", "top_kernel"]


def test_specific_first_leaves_other_parts_alone() -> None:
    ranked = [_f("cpu_bound", 1000), _f("fp32_no_tensor_cores", 900, "compute")]
    assert savings._specific_first(ranked) == ranked


def _first_then(first: list[str], rest: list[str]) -> tuple[str, ...]:
    return (*first, *rest)


def test_a_multi_tensor_optimizer_then_one_op_repeated_ends_at_the_optimizer() -> None:
    """4 multi-tensor kernels (a foreach optimizer), then 41 launches of one element-wise
    kernel (a user's loop of one op): the phase is the 4, ending at the first repeat's
    launch call (t0 + 400 + 40 - 10 µs)."""
    names = _first_then([MTA] * 4, [ELEM] * 41)
    s, e = optimizer_phase.inferred_windows(Ctx(_loop(45, opt_names=names)))
    t0 = np.arange(STEPS) * STEP
    assert s.tolist() == (t0 + 390 * US).tolist()
    assert e.tolist() == (t0 + 430 * US).tolist()
    assert not pytorch.tiny_optimizer_kernels(Ctx(_loop(45, opt_names=names)))


def test_multi_tensor_clipping_then_a_per_parameter_optimizer_is_kept_whole() -> None:
    """A foreach clip (multi-tensor) then element-wise kernels of two ops alternating (a
    per-parameter pass): not cut; the 45 launches a step are the phase."""
    names = _first_then([MTA], [ELEM, ELEM2] * 22)
    found = pytorch.tiny_optimizer_kernels(Ctx(_loop(45, opt_names=names)))
    assert found and found[0].metrics["kernels_per_step"] == 45
