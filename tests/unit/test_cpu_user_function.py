"""The cpu_bound fix leads with one function of the user's code when it holds much of the
training thread's Python samples in the steps (USER_FN_SHARE), and the "native call Python
made" sentence needs a real share of the sampled stacks (ENTRY_SHARE). Hand-built loop of
tests/support/loops.py: 800 µs kernels at each 1000 µs step's end, so the GPU waits on the
CPU 200 µs a step in the 4 steady steps (steps 1-4; step 0 is start-up)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.support.loops import STEP, STEPS, US, at_step_end, loop_trace
from tuiperf import schema
from tuiperf.analysis.budget import step_samples as SS
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_samples import HotFunction, StepSamples
from tuiperf.analysis.rules import budget as budget_rules
from tuiperf.model.trace import Trace

TORCH = "/v/lib/python3.12/site-packages/torch"
#: node id -> (function, file, line, caller)
NODES = {
    0: ("<module>", "/w/train.py", 50, None),
    1: ("tokens", "/w/train.py", 12, 0),
    2: ("randint", "/usr/lib/python3.12/random.py", 300, 1),  # stdlib inside tokens: counts
    3: ("_call_impl", f"{TORCH}/nn/modules/module.py", 1700, 0),
    4: ("forward", "/w/model.py", 7, 3),  # user code under nn.Module: the model's, not counted
    5: ("tensor_split", f"{TORCH}/functional.py", 90, 1),  # torch inside tokens: not counted
    6: ("fetch", f"{TORCH}/utils/data/_utils/fetch.py", 52, 0),
    7: ("__getitem__", "/w/data.py", 20, 6),  # a Dataset under a DataLoader: the user's
}
PER_STEP = 100  # Python samples a steady step
BACKWARD = "sm90_xmma_gemm_bf16_backward_kernel"


def _trace(
    tokens_per_step: list[int], extra: dict[int, int] | None = None, kernel: str = BACKWARD
) -> Trace:
    """Each steady step s: tokens_per_step[s-1] samples in `tokens` itself, one in
    `randint` under it, one in torch's tensor_split under it, one in `<module>`, `extra`
    {node: n}, and the rest of PER_STEP in the model's `forward` under nn.Module. The
    kernels are named `kernel` (a backward kernel: a training loop)."""
    trace = loop_trace(kernels=at_step_end([800 * US] * STEPS, kernel))
    ids = sorted(NODES)
    trace.tables["sample_stacks"] = schema.conform(
        "sample_stacks",
        {
            "node_id": pa.array(ids, pa.int64()),
            "parent_id": pa.array([NODES[i][3] for i in ids], pa.int64()),
            "function": pa.array([NODES[i][0] for i in ids]).dictionary_encode(),
            "module": pa.array([NODES[i][1] for i in ids]).dictionary_encode(),
            "line": pa.array([NODES[i][2] for i in ids], pa.int32()),
            "python": pa.array([True] * len(ids)),
        },
        len(ids),
    )
    starts, leaf = [], []
    for s, k in enumerate(tokens_per_step, 1):
        mine = [1] * k + [2, 5, 0] + [n for n, c in (extra or {}).items() for _ in range(c)]
        mine += [4] * (PER_STEP - len(mine))
        starts += [s * STEP + 10 * US + i * 5 * US for i in range(len(mine))]
        leaf += mine
    n = len(starts)
    trace.tables["cpu_samples"] = schema.conform(
        "cpu_samples",
        {
            "start": pa.array(starts, pa.int64()),
            "pid": pa.array([1] * n, pa.int64()),
            "tid": pa.array([1] * n, pa.int64()),
            "kind": pa.array(["python"] * n).dictionary_encode(),
            "function": pa.array([NODES[x][0] for x in leaf]).dictionary_encode(),
            "module": pa.array([NODES[x][1] for x in leaf]).dictionary_encode(),
            "stacked": pa.array([True] * n),
            "stack_id": pa.array(leaf, pa.int64()),
        },
        n,
    )
    return trace


@pytest.mark.parametrize(("tokens", "named"), [([24] * 4, True), ([24, 24, 24, 23], False)])
def test_user_function_share_boundary(tokens: list[int], named: bool) -> None:
    """`tokens` holds its own samples plus the one in randint (stdlib, inside it) a step:
    25 of 100 in each step = 100 of 400 = 25% exactly (named); with one sample fewer,
    99 of 400 = 24.75% (not named). The samples under torch (tensor_split inside tokens,
    forward under nn.Module) and `<module>` count for no user function. Named, the fix's
    first lever is tokens with file:line, and its saving is 25% of the 200 µs a step the
    GPU waits on the CPU = 50 µs a step."""
    assert budget_rules.USER_FN_SHARE == 0.25
    ctx = Ctx(_trace(tokens))
    b = ctx.budget
    assert b is not None
    got = SS.step_samples(ctx, b)
    assert got is not None and got.user_function is not None
    assert got.user_function.function == "tokens"
    assert got.user_function.samples == sum(tokens) + 4
    assert got.user_function.share == (sum(tokens) + 4) / 400
    (f,) = budget_rules.cpu_bound(ctx)
    lead = "Most of the step's CPU time is one function of your code: tokens (train.py:12) holds "
    assert f.fix.text.startswith(lead + "25%") is named
    assert ("1) take tokens out of the step: run it in DataLoader workers" in f.fix.text) is named
    assert ("user_function_share" in f.metrics) is named
    if named:
        assert f.metrics["user_function_share"] == 0.25
        assert f.metrics["cpu_bound_ns_per_step"] == 200 * US
        assert f.metrics["user_function_saving_ns_per_step"] == 50 * US
        assert "Saving up to ~50 µs a step: its 25% of the samples applied to the 200 µs" in (
            f.fix.text
        )
        assert "2) a bigger batch" in f.fix.text and "tokens runs in the workers" in f.fix.snippet
    else:  # one kernel a step after 200 µs of CPU (BETWEEN_LAUNCHES_NS): work between launches
        assert f.fix.text.startswith("The GPU waits on CPU work between the launches")
        assert "tuiperf profile" not in f.fix.text  # the report has samples


@pytest.mark.parametrize(("tokens", "named"), [([24] * 4, True), ([24, 24, 24, 23], False)])
def test_inference_loop_leads_with_the_user_function_too(tokens: list[int], named: bool) -> None:
    """Without backward or optimizer kernels the fix speaks of inference; the user's
    function, at the same bar, comes before its levers."""
    (f,) = budget_rules.cpu_bound(Ctx(_trace(tokens, kernel="sm90_xmma_gemm_bf16_kernel")))
    lead = "Most of the step's CPU time is one function of your code: tokens (train.py:12) holds "
    assert f.fix.text.startswith(lead + "25%") is named
    assert ("First, take tokens out of the step" in f.fix.text) is named
    assert "This is inference (no backward pass, no optimizer)" in f.fix.text


def test_a_dataset_under_a_dataloader_is_the_users() -> None:
    """torch's data package is not a framework frame: 30 samples a step in a Dataset's
    __getitem__ called by the DataLoader's fetch make it the user function (120 of 400),
    ahead of tokens (8 + 1 a step = 36)."""
    ctx = Ctx(_trace([8] * 4, {7: 30}))
    b = ctx.budget
    assert b is not None
    got = SS.step_samples(ctx, b)
    assert got is not None and got.user_function is not None
    u = got.user_function
    assert (u.function, u.file, u.line, u.samples) == ("__getitem__", "/w/data.py", 20, 120)


@pytest.mark.parametrize(
    ("path", "framework"),
    [
        (f"{TORCH}/nn/modules/module.py", True),
        ("/usr/local/lib/python3.11/dist-packages/triton/runtime/jit.py", True),
        (f"{TORCH}/utils/data/dataloader.py", False),
        ("/v/lib/python3.12/site-packages/numpy/core/numeric.py", False),
        ("torch/nn/functional.py", True),  # Kineto's relative paths
        ("/w/torch_utils.py", False),
        ("/w/torch/model.py", False),  # a user's folder named torch, outside site-packages
        ("<frozen importlib._bootstrap>", False),
    ],
)
def test_framework_paths(path: str, framework: bool) -> None:
    assert SS._framework(path) is framework


def _entry(share: float) -> StepSamples:
    e = HotFunction("__libc_realloc", "/lib/libc.so.6", "native", 25, share)
    return StepSamples(1, 400, 100, 0, [], e)


@pytest.mark.parametrize(("share", "said"), [(0.25, True), (0.2499, False)])
def test_entry_share_boundary(share: float, said: bool) -> None:
    """The native call Python made is named from a quarter of the sampled stacks on; its
    share stays in the metrics either way."""
    assert budget_rules.ENTRY_SHARE == 0.25
    nums: dict[str, float] = {}
    text = budget_rules._sampled(_entry(share), nums)
    assert ("the native call Python made" in text) is said
    if said:
        assert "25% of the 100 sampled call stacks run under __libc_realloc (libc.so.6)" in text
    assert nums["python_entry_share"] == round(share, 3)
