"""Oracle: the verdict of two reports (analysis.diff.compare) at its thresholds, and the per-step
by-name rows of hand-built traces.

The verdict compares the median step's change with the noise, the larger of the two
reports' median absolute deviation (MAD) of step time: |change| <= noise is "same". Steps
here are chosen so every median and MAD is read off by hand. The sides carry a stand-in
budget (the steps' windows and part totals), so `compare` runs without the step budget."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.tiny import Gpu, kernels_trace
from tuiperf.analysis.budget.step_budget import PARTS
from tuiperf.analysis.diff import compare
from tuiperf.model.trace import Trace

WINDOWS = [(0, 1000), (1000, 2000), (2000, 3000)]


def _side(steps: list[int], parts: dict[str, int] | None = None) -> compare.Side:
    main = SimpleNamespace(steps=[SimpleNamespace(start_ns=a, end_ns=b) for a, b in WINDOWS])
    budget: Any = SimpleNamespace(
        main=main,
        devices=[main],  # one GPU: no per-GPU split of the reasons
        steady=SimpleNamespace(ns={p: (parts or {}).get(p, 0) for p in PARTS}),
        method="nvtx",
        method_text="NVTX step ranges",
    )
    return compare.Side("x", budget if steps else None, steps, ["H100"], {}, {}, {}, {}, {}, 1)


def _compare(
    before: compare.Side, after: compare.Side, tb: Trace | None = None, ta: Trace | None = None
) -> compare.Diff:
    empty = kernels_trace([])
    return compare.compare(before, after, tb or empty, ta or empty)


# before: 990, 1000, 1010 -> median 1000, deviations 10, 0, 10 -> MAD 10
BEFORE = [990, 1000, 1010]


@pytest.mark.parametrize(
    ("median", "verdict"),
    [
        (1009, compare.SAME),  # change 9 < noise 10
        (1010, compare.SAME),  # change 10 = noise: within it
        (1011, compare.SLOWER),  # 11 > 10
        (991, compare.SAME),
        (990, compare.SAME),  # -10: within
        (989, compare.FASTER),
    ],
)
def test_verdict_at_the_noise_boundary(median: int, verdict: str) -> None:
    after = [median - 10, median, median + 10]  # MAD 10 too
    d = _compare(_side(BEFORE), _side(after))
    assert (d.verdict, d.change_ns, d.noise_ns) == (verdict, median - 1000, 10.0)


def test_noise_is_the_larger_mad() -> None:
    # after: 985, 1015, 1045 -> median 1015, MAD 30: change 15 is within the after's noise
    d = _compare(_side(BEFORE), _side([985, 1015, 1045]))
    assert (d.verdict, d.noise_ns) == (compare.SAME, 30.0)
    d = _compare(_side([985, 1015, 1045]), _side([1046, 1046, 1046]))  # MAD 30 vs 0
    assert (d.verdict, d.change_ns, d.noise_ns) == (compare.SLOWER, 31.0, 30.0)


def test_noise_is_the_mad_not_the_spread() -> None:
    # before: 1000 x4 and one 5000 outlier: median 1000, MAD 0 (a stdev would be ~1600)
    d = _compare(_side([1000, 1000, 1000, 1000, 5000]), _side([1001] * 5))
    assert (d.verdict, d.change_ns, d.noise_ns) == (compare.SLOWER, 1.0, 0.0)


def test_slower_than_a_percentage_at_its_boundary() -> None:
    d = _compare(_side([1000] * 3), _side([1050] * 3))  # +50 ns of 1000: 5.0 %
    assert d.verdict == compare.SLOWER and d.change_pct == pytest.approx(5.0)
    assert d.slower_than(4.99) and not d.slower_than(5.0) and not d.slower_than(5.01)
    same = _compare(_side(BEFORE), _side([1000, 1010, 1020]))  # +10: within the noise
    assert same.verdict == compare.SAME and not same.slower_than(0.0)
    faster = _compare(_side([1000] * 3), _side([900] * 3))
    assert faster.verdict == compare.FASTER and not faster.slower_than(-50.0)


def test_no_steps_is_unknown_and_never_slower() -> None:
    d = _compare(_side([]), _side([2000] * 3))
    assert (d.verdict, d.change_pct, d.slower_than(0.0)) == (compare.UNKNOWN, None, False)


def test_a_change_within_the_noise_gives_no_reasons() -> None:
    # compute moved by 100 ns a step (300 over 3 steps) but the step only by the noise
    b = _side(BEFORE, {"compute": 600})
    a = _side([1000, 1010, 1020], {"compute": 900})
    d = _compare(b, a)
    assert d.verdict == compare.SAME and d.reasons == []
    rows = {r.name: r for r in d.budget}
    assert rows["compute"].change == pytest.approx(100.0)  # the row still shows it
    # slower beyond the noise (BEFORE's MAD, 10 ns): compute +100 ns a step explains it;
    # data +10 ns a step is within the noise and explains nothing, +11 ns is beyond it
    slower = _compare(b, _side([1100] * 3, {"compute": 900, "data": 30}))
    assert [(p, c) for p, c, _ in slower.reasons] == [("compute", 100.0)]
    assert {r.name: r.status for r in slower.budget}["data wait"] == "within noise"
    slower = _compare(b, _side([1100] * 3, {"compute": 900, "data": 33}))
    assert [(p, c) for p, c, _ in slower.reasons] == [("compute", 100.0), ("data", 11.0)]


#: before: gemm once a step (100 ns), relu in step 0 only, one gemm after the last step
BEFORE_K: list[Gpu] = [
    (0, 100, 0, 7, "gemm"),
    (999, 1049, 0, 7, "relu"),  # starts 1 ns before step 0 ends: counted (50 ns)
    (1000, 1100, 0, 7, "gemm"),  # starts on step 1's first ns
    (2000, 2100, 0, 7, "gemm"),
    (3000, 3100, 0, 7, "gemm"),  # starts where the last step ends: not counted
]
AFTER_K: list[Gpu] = [
    (0, 150, 0, 7, "gemm"),
    (1000, 1150, 0, 7, "gemm"),
    (2000, 2150, 0, 7, "gemm"),
    (1500, 1530, 0, 7, "softmax"),
]


def test_kernels_per_step_inside_the_steps_only() -> None:
    d = _compare(_side(BEFORE), _side(BEFORE), kernels_trace(BEFORE_K), kernels_trace(AFTER_K))
    assert d.per_step
    got = [(r.name, r.before, r.after, r.before_count, r.after_count, r.status) for r in d.kernels]
    assert got == [
        # 300 ns / 3 steps -> 450 / 3: +50 a step; one call a step each side
        ("gemm", 100.0, 150.0, 1.0, 1.0, "changed"),
        ("relu", pytest.approx(50 / 3), None, pytest.approx(1 / 3), None, "vanished"),
        ("softmax", None, 10.0, None, pytest.approx(1 / 3), "appeared"),
    ]


@pytest.mark.parametrize(
    ("moved", "status"), [(0.99, "same"), (1.0, "same"), (1.01, "changed"), (-1.01, "changed")]
)
def test_finding_status_at_one_percent_of_the_step(moved: float, status: str) -> None:
    assert compare.FINDING_STEP_PCT == 1.0
    assert compare.finding_status(compare.Row("findings", "r", 10.0, 10.0 + moved, "pct")) == status
    assert compare.finding_status(compare.Row("findings", "r", None, 3.0, "pct")) == "new"
    assert compare.finding_status(compare.Row("findings", "r", 3.0, None, "pct")) == "gone"


@pytest.mark.parametrize(
    ("n", "label"),
    [
        (4096, "≤4 KiB"),
        (4097, "≤1 MiB"),
        (1 << 20, "≤1 MiB"),
        ((1 << 20) + 1, "≤64 MiB"),
        (64 << 20, "≤64 MiB"),
        ((64 << 20) + 1, ">64 MiB"),
    ],
)
def test_copy_size_classes_at_their_bounds(n: int, label: str) -> None:
    assert compare.size_class(n) == label
