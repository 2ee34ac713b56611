"""Steps found from the kernel pattern when the anchor kernel recurs several times an
iteration with unequal spacing (a generate() call: one prefill, then the same kernels once
per token): the step is the whole call, found where the kernel sequence repeats itself."""

from __future__ import annotations

from tests.support.tiny import kernels_trace
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.steps import find_steps

TOKEN = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]  # 9 kernels a token


def _calls(n_calls: int, tokens: int = 8) -> list[str]:
    """n_calls identical calls: an 'x' (the prefill), then `tokens` tokens of TOKEN with 'x'
    for 'i' in token 4, so that no kernel name recurs once a call: 'x' alternates gaps of 45
    and 28 kernels (irregular), every other name recurs every 9 kernels, 10 across a call."""
    one = ["x"]
    for t in range(tokens):
        one += TOKEN[:-1] + (["x"] if t == 4 else ["i"])
    return one * n_calls


def _trace(names: list[str]):  # one kernel every 10 µs, 1 µs long, one stream
    rows = [(k * 10_000, k * 10_000 + 1_000, 0, 7, n) for k, n in enumerate(names)]
    return kernels_trace(rows)


def test_a_call_of_prefill_and_tokens_is_one_step() -> None:
    # a call = 1 + 8 x 9 = 73 kernels. 'a' recurs every 9 kernels inside a call and every 10
    # across the prefill (10 - 9 > 10% of 9: irregular), so the step is 8 repeats of 'a':
    # 73 kernels = 730 µs, anchored on the first 'a' (kernel 1): boundaries at 1 + 73 j.
    steps = find_steps(Ctx(_trace(_calls(7))))
    assert steps.source == "pattern"
    assert [int(s) for s in steps.starts] == [(1 + 73 * j) * 10_000 for j in range(6)]
    assert [int(e - s) for s, e in zip(steps.starts, steps.ends)] == [730_000] * 6
    # regular now; neither backward nor optimizer kernels: medium, and said why
    assert steps.confidence == "medium"
    assert "backward" in steps.reason


def test_without_a_repeating_whole_the_irregular_repeats_stay_low() -> None:
    # the same calls with a different 8th token in every call: no span of repeats after which
    # the sequence repeats itself for 99% of the kernels, so the token repeats stand (low)
    names = _calls(7)
    for c in range(7):
        names[c * 73 + 1 + 7 * 9 + 4] = f"odd{c}"  # 'e' of token 7
        names[c * 73 + 1 + 6 * 9 + 4] = f"odd{c}b"  # 'e' of token 6
    steps = find_steps(Ctx(_trace(names)))
    assert steps.confidence == "low"
    assert "not one fixed iteration" in steps.reason
