"""The ranking's `*_SHARE` thresholds at their boundaries (issue 32, item 1):
savings.EXPLAINED_SHARE (when idle time the findings leave unexplained gets its own
finding) and MIN_RANKED_SHARE (a finding's saving that ranks it before the step's
verdicts). The loops are test_oracle_share_boundaries' (five 1000 µs NVTX steps, steps
1-4 steady: 4000 µs); every expected number is worked out in the comments."""

from __future__ import annotations

import pytest

from tests.support.loops import GEMM, STEP, STEPS, US, WALL, loop_trace
from tuiperf.analysis.budget import savings
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.savings import rank_by_budget
from tuiperf.analysis.rules import budget as budget_rules
from tuiperf.analysis.rules import pytorch


# -- savings.EXPLAINED_SHARE ---------------------------------------------------------
def _idle(cpu_us: int, other_ns: int, last_other_ns: int) -> Ctx:
    """Each step: the GPU waits `cpu_us` µs for a launch (CPU-bound: the kernel that ends
    the gap is launched as it ends), runs kernel A for 200 µs, idles `other_ns` (step 4:
    `last_other_ns`) with kernel B already queued (launched at +cpu_us + 1 µs, while A
    ran: `other`), then runs B to the step's end."""
    queued = []
    for s in range(STEPS):
        t0 = s * STEP
        a_end = t0 + (cpu_us + 200) * US
        b_start = a_end + (last_other_ns if s == 4 else other_ns)
        call = t0 + (cpu_us + 1) * US
        queued += [(t0 + (cpu_us - 10) * US, t0 + cpu_us * US, t0 + cpu_us * US, a_end, GEMM),
                   (call, call + 4 * US, b_start, (s + 1) * STEP, GEMM)]  # fmt: skip
    return Ctx(loop_trace(queued=queued))


def _unexplained(ctx: Ctx, cpu_bound: int, other: int) -> bool:
    """Rank the cpu_bound finding (it explains the whole CPU-bound part); whether an
    idle_unexplained finding comes out."""
    b = ctx.budget
    assert b is not None and b.n_steady == 4 and b.steady.wall_ns == WALL
    ns = b.steady.ns
    assert (ns["cpu_bound"], ns["other"], ns["data"], ns["sync"]) == (cpu_bound, other, 0, 0)
    found = budget_rules.cpu_bound(ctx)
    ranked = rank_by_budget(found, b)
    (cb,) = [f for f in ranked if f.rule == "cpu_bound"]
    assert cb.est_saving_ns == cpu_bound
    return any(f.rule == "idle_unexplained" for f in ranked)


@pytest.mark.parametrize(("last_other", "said"), [(100 * US - 1, False), (100 * US + 1, True)])
def test_explained_share_around_its_boundary(last_other: int, said: bool) -> None:
    """CPU-bound 400 µs and `other` 100 µs a step (step 4: last_other): the cpu_bound
    finding explains 1600 µs of 1600 µs + 300 µs + last_other of idle. 1 ns less `other`
    leaves 399.999 of 1999.999 µs (under 20%) unexplained: no finding; 1 ns more leaves
    400.001 of 2000.001 µs (over 20%; and over UNEXPLAINED_MIN, 2% of 4000 µs): one."""
    assert savings.EXPLAINED_SHARE == 0.8
    ctx = _idle(400, 100 * US, last_other)
    assert _unexplained(ctx, 1600 * US, 300 * US + last_other) is said


@pytest.mark.parametrize(("last_other", "said"), [(100 * US, False), (100 * US + 1, True)])
def test_explained_share_boundary_at_a_patched_bar(
    monkeypatch: pytest.MonkeyPatch, last_other: int, said: bool
) -> None:
    """The bar patched to 75% (1 - 0.75 = 0.25 is exact in floating point): CPU-bound
    300 µs and `other` 100 µs a step explain 1200 of 1600 µs, exactly 75%; the 400 µs left
    are exactly 25% of the idle time: no finding (kills `idle - rest >= EXPLAINED_SHARE *
    idle` -> `>`). 1 ns more `other`: 400.001 of 1600.001 µs, over 25%: one."""
    monkeypatch.setattr(savings, "EXPLAINED_SHARE", 0.75)
    ctx = _idle(300, 100 * US, last_other)
    assert _unexplained(ctx, 1200 * US, 300 * US + last_other) is said


def test_explaining_exactly_80_percent_of_the_idle_time_is_enough() -> None:
    """CPU-bound 400 µs and `other` 100 µs a step: the cpu_bound finding explains 1600 of
    2000 µs of idle, exactly EXPLAINED_SHARE; 400 µs (20%) is left: no finding is due.
    (Was a bug: the bar was 1 - 0.8 = 0.19999999999999996 of the idle time.)"""
    ctx = _idle(400, 100 * US, 100 * US)
    assert _unexplained(ctx, 1600 * US, 400 * US) is False


# -- savings.MIN_RANKED_SHARE --------------------------------------------------------
LAYOUT = "nchwToNhwcKernel"


def _busy(layout_ns: list[int]) -> Ctx:
    """The GPU never idles: step s launches, at its start, a GEMM and then (steps 1-4) a
    layout transpose of layout_ns[s - 1]; they run back to back from 5 µs on, step s's work
    ending at (s + 1) x 1000 µs + 5 µs. Every steady window [1000, 5000) µs is busy
    (compute: a gpu_bound verdict), and each steady step's transpose starts inside it."""
    queued = []
    for s in range(STEPS):
        t0, end = s * STEP, (s + 1) * STEP + 5 * US
        lay = layout_ns[s - 1] if s else 0
        gemm_start = 5 * US if s == 0 else t0 + 5 * US
        queued.append((t0, t0 + 5 * US, gemm_start, end - lay, GEMM))
        if lay:
            queued.append((t0 + 5 * US, t0 + 10 * US, end - lay, end, LAYOUT))
    return Ctx(loop_trace(queued=queued))


@pytest.mark.parametrize(
    ("layout_ns", "first"),
    [([20 * US] * 4, "layout_conversion"), ([20 * US] * 3 + [20 * US - 1], "gpu_bound")],
)
def test_min_ranked_share_boundary(layout_ns: list[int], first: str) -> None:
    """The transposes take 4 x 20 µs = 80 µs in the steady steps, all of them inside the
    steady windows, with the GPU busy 100% of the step: their saving is all 80 µs, exactly
    2% of 4000 µs: tier 0, ranked before the gpu_bound verdict (tier 1) (kills
    `est_saving_ns >= MIN_RANKED_SHARE * wall` -> `>`). 1 ns less: tier 2, after it."""
    assert savings.MIN_RANKED_SHARE == 0.02
    ctx = _busy(layout_ns)
    b = ctx.budget
    assert b is not None and b.n_steady == 4 and b.step_basis == "cpu_ranges"
    assert b.steady.ns["compute"] == b.steady.wall_ns == WALL
    found = budget_rules.gpu_bound(ctx) + pytorch.layout_conversion(ctx)
    ranked = rank_by_budget(found, b)
    assert [f.rule for f in ranked] == [first, ({"gpu_bound", "layout_conversion"} - {first}).pop()]
    (lay,) = [f for f in ranked if f.rule == "layout_conversion"]
    assert lay.est_saving_ns == sum(layout_ns)
    (verdict,) = [f for f in ranked if f.rule == "gpu_bound"]
    assert verdict.est_saving_ns is None


# -- savings.ACROSS_VERDICT_SHARE -----------------------------------------------------------
def _ranked_finding(rule: str, part: str, saved: int | None):
    from tuiperf.analysis.findings import Finding

    f = Finding.__new__(Finding)
    f.rule, f.budget_part, f.est_saving_ns = rule, part, saved
    return f


@pytest.mark.parametrize(
    ("part", "saved", "verdicts", "tier"),
    [
        ("compute", 1_000, {"copy"}, 0),  # another part than the verdict's, exactly 10%
        ("compute", 999, {"copy"}, 2),  # 1 ns less: after the verdict
        ("copy", 200, {"copy"}, 0),  # the verdict's own part: the 2% bar
        ("copy", 199, {"copy"}, 2),
        ("compute", 200, set(), 0),  # no verdict: the 2% bar
        ("compute", 200, {"copy", "compute"}, 0),  # one of two verdicts' parts
    ],
)
def test_across_verdict_share_boundary(part: str, saved: int, verdicts: set, tier: int) -> None:
    """A step of 10,000 ns. A finding on another part than a verdict's outranks it only from
    ACROSS_VERDICT_SHARE (10%: 1,000 ns) of the step; on the verdict's part (or with none)
    from MIN_RANKED_SHARE (2%: 200 ns). h100_2gpu_1s: copies 97% of the step, FP32 GEMMs
    saving 2.2%: the copy_bound verdict leads."""
    assert savings.ACROSS_VERDICT_SHARE == 0.10 and savings.MIN_RANKED_SHARE == 0.02
    f = _ranked_finding("fp32_no_tensor_cores", part, saved)
    assert savings._tier(f, 10_000, verdicts) == tier
    assert savings._tier(_ranked_finding("copy_bound", "copy", None), 10_000, verdicts) == 1
