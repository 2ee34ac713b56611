"""Oracle: diff's by-name rows and statuses on stand-in sides and hand-built traces (ns;
steady windows [0, 1e6), [1e6, 2e6), [2e6, 3e6)): per-launch statuses per section and
unit, totals without steps, copies and calls outside the steps, memsets, kernels matched
across demanglers and template arguments, reasons capped at three, per-GPU changes with
devices on one side only, 1-step evidence, a vanished kernel's evidence, names cut at 80
characters, ms rounding (bench/mutation.md: diff's survivors in `Row._per_launch`,
`_scale`, `_copies`, `_api`, `_merge`, `loose_name`, `_reasons`, `_device_changes`,
`_evidence`, `_most`, `_ms`, `_notes`, `_gpus`)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from tests.support.step_loop import Call, Op, build
from tests.support.tiny import gpu_table, trace_of
from tuiperf import schema
from tuiperf.analysis.budget.step_budget import PARTS
from tuiperf.analysis.diff import compare
from tuiperf.model.trace import Trace, TraceMeta

MS = 1_000_000
WINDOWS = [(0, MS), (MS, 2 * MS), (2 * MS, 3 * MS)]
T = (0, MS, 2 * MS)


def _device(dev: int, parts: dict[str, int], n: int) -> SimpleNamespace:
    steps = [SimpleNamespace(start_ns=a, end_ns=b) for a, b in WINDOWS[:n]]
    steady = SimpleNamespace(ns={p: parts.get(p, 0) for p in PARTS})
    return SimpleNamespace(device=dev, steps=steps, steady=steady)


def _side(steps: list[int], parts: dict[str, int] | None = None,
          devices: Sequence[int] = (0,), gpus: Sequence[str] = ("H100",), events: int = 1
          ) -> compare.Side:  # fmt: skip
    devs = [_device(d, parts or {}, len(steps) or 3) for d in devices]
    budget: Any = SimpleNamespace(main=devs[0], devices=devs, steady=devs[0].steady,
                                  method="nvtx", method_text="NVTX")  # fmt: skip
    return compare.Side(
        "x", budget if steps else None, steps, list(gpus), {}, {}, {}, {}, {}, events
    )


def _compare(
    b: compare.Side, a: compare.Side, tb: Trace | None = None, ta: Trace | None = None
) -> compare.Diff:
    return compare.compare(b, a, tb or trace_of(), ta or trace_of())


def _kernels(rows: Sequence[tuple[int, int, str | None]]) -> pa.Table:
    return gpu_table("kernels", [(a, b, 0, 7, n) for a, b, n in rows])  # type: ignore[misc]


def _table(table: str, rows: Sequence[tuple[int, int]], **cols: Sequence[Any]) -> pa.Table:
    n = len(rows)
    base = {
        "start": pa.array([r[0] for r in rows], pa.int64()),
        "end": pa.array([r[1] for r in rows], pa.int64()),
        "duration": pa.array([r[1] - r[0] for r in rows], pa.int64()),
    }
    for k, v in cols.items():
        base[k] = (pa.array(list(v), pa.string()).dictionary_encode()
                   if isinstance(v[0], str) else pa.array(list(v), pa.int64()))  # fmt: skip
    return schema.conform(table, base, n)


# -- statuses ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("row", "status"),
    [
        (compare.Row("copies", "c", 100.0, 102.0, "ns", before_count=1.0, after_count=1.0),
         compare.WITHIN_NOISE),
        (compare.Row("api", "c", 100.0, 102.0, "ns", before_count=1.0, after_count=1.0),
         compare.WITHIN_NOISE),
        # not a timed by-name row: changed
        (compare.Row("kernels", "k", 100.0, 102.0, "count", before_count=1.0, after_count=1.0),
         "changed"),
        (compare.Row("step", "s", 100.0, 102.0, "ns", before_count=1.0, after_count=1.0),
         "changed"),
        # no launches counted on one side: no time per launch
        (compare.Row("kernels", "k", 100.0, 102.0, "ns", before_count=1.0, after_count=0.0),
         "changed"),
        (compare.Row("kernels", "k", 100.0, 102.0, "ns", before_count=0.0, after_count=1.0),
         "changed"),
        (compare.Row("kernels", "k", 100.0, 102.0, "ns"), "changed"),
        # two launches: 100 -> 102 a launch, within 2 %
        (compare.Row("kernels", "k", 200.0, 204.0, "ns", before_count=2.0, after_count=2.0),
         compare.WITHIN_NOISE),
    ],
)  # fmt: skip
def test_per_launch_status(row: compare.Row, status: str) -> None:
    assert row.status == status


def test_part_per_step_without_steps_is_zero() -> None:
    s = _side([1000] * 3, {"compute": 900})
    assert s.part_per_step("compute") == 300.0
    s.steps_ns = []  # a budget but no step times
    assert s.part_per_step("compute") == 0.0
    assert _side([]).part_per_step("compute") == 0.0


# -- rows ----------------------------------------------------------------------------------
def test_totals_when_one_side_has_no_steps() -> None:
    """Without steps on both sides the by-name rows are whole-report totals: a 100 ns gemm
    in each window and one after them (400 ns, 4 launches) on both sides, not per step."""
    k = _kernels([(t, t + 100, "gemm") for t in (*T, 3 * MS)])
    d = _compare(_side([]), _side([1000] * 3), trace_of(kernels=k), trace_of(kernels=k))
    assert not d.per_step
    assert [(r.name, r.before, r.after, r.before_count, r.after_count) for r in d.kernels] == [
        ("gemm", 400.0, 400.0, 4.0, 4.0)
    ]


def test_copies_memsets_and_calls_inside_the_steps_per_step() -> None:
    """Before: a 1 KiB H2D copy of 30 ns and a 10 ns memset of unknown size (null bytes: 0)
    in each window, one more copy after the steps (not counted); a cudaLaunchKernel_v7000
    of 5 ns a window and one before. After: no memcpy table, memsets of 20 ns; launches of
    7 ns. Sections and keys as the JSON shows them."""
    before = trace_of(
        memcpy=_table("memcpy", [(t, t + 30) for t in (*T, 3 * MS)],
                      copy_kind=["Host-to-Device"] * 4, bytes=[1024] * 4),
        memset=_table("memset", [(t + 100, t + 110) for t in T]),
        api=_table("api", [(t, t + 5) for t in (-MS, *T)], name=["cudaLaunchKernel_v7000"] * 4),
    )  # fmt: skip
    after = trace_of(
        memset=_table("memset", [(t + 100, t + 120) for t in T]),
        api=_table("api", [(t, t + 7) for t in T], name=["cudaLaunchKernel"] * 3),
    )  # fmt: skip
    d = _compare(_side([1000] * 3), _side([1000] * 3), before, after)
    rows = compare.to_json(d)["rows"]
    keys = ("section", "name", "before", "after", "before_count", "after_count", "status")
    got = [tuple(r[k] for k in keys) for r in rows if r["section"] in ("copies", "api")]
    assert got == [
        ("copies", "Host-to-Device ≤4 KiB", 30.0, None, 1.0, None, "vanished"),
        ("copies", "memset ≤4 KiB", 10.0, 20.0, 1.0, 1.0, "changed"),
        ("api", "cudaLaunchKernel", 5.0, 7.0, 1.0, 1.0, "changed"),
    ]


def test_a_kernel_without_a_name() -> None:
    k = _kernels([(t, t + 100, None) for t in T])
    d = _compare(_side([1000] * 3), _side([1000] * 3), trace_of(kernels=k), trace_of(kernels=k))
    assert [(r.name, r.status) for r in d.kernels] == [("?", "same")]


def test_kernels_matched_across_spellings_and_template_arguments() -> None:
    """Before: `void foo<int>(float*)` 100 ns and `bar<1>` 50 ns a step, `baz` 10 ns;
    after: `foo<int>` 120 ns (another demangler's spelling), `bar<2>` 70 ns and `bar<3>`
    5 ns (template arguments differ: one row `bar<…>`, 75 ns), `baz` 10 ns."""
    one = ((0, 100, "void foo<int>(float*)"), (200, 50, "bar<1>"), (300, 10, "baz"))
    two = ((0, 120, "foo<int>"), (200, 70, "bar<2>"), (300, 5, "bar<3>"), (400, 10, "baz"))
    before = _kernels([(t + o, t + o + d, n) for t in T for o, d, n in one])
    after = _kernels([(t + o, t + o + d, n) for t in T for o, d, n in two])
    d = _compare(_side([1000] * 3), _side([1000] * 3), trace_of(kernels=before),
                 trace_of(kernels=after))  # fmt: skip
    got = [(r.name, r.before, r.after, r.before_count, r.after_count, r.detail) for r in d.kernels]
    assert got == [
        ("bar<…>", 50.0, 75.0, 1.0, 2.0, "matched by template base (arguments differ)"),
        ("foo<int>", 100.0, 120.0, 1.0, 1.0, "spelled differently (demangler)"),
        ("baz", 10.0, 10.0, 1.0, 1.0, ""),
    ]


@pytest.mark.parametrize(
    ("name", "loose"),
    [("void f", "f"), ("f(x)", "f"), ("f(a(b))", "f"), ("(x)", ""),
     ("void (anonymous namespace)::k<true, 32u>(int)", "anon::k<1, 32>")],
)  # fmt: skip
def test_loose_name(name: str, loose: str) -> None:
    assert compare.loose_name(name) == loose


# -- reasons ---------------------------------------------------------------------------------
BEFORE = [1_290_000, 1_300_000, 1_310_000]  # median 1.3 ms, MAD 10 µs


def test_at_most_three_reasons_and_the_largest_within_the_noise() -> None:
    """Slower by 200 µs: four parts grew 40, 30, 20, 15 µs a step (x 3 steps), all beyond
    the 10 µs noise: the three largest. Then: two parts grew 9 and 6 µs a step (within):
    the largest alone."""
    four = {"compute": 120_000, "copy": 90_000, "sync": 60_000, "other": 45_000}
    d = _compare(_side(BEFORE), _side([1_500_000] * 3, four))
    assert [(p, c) for p, c, _ in d.reasons] == [
        ("compute", 40_000.0), ("copy", 30_000.0), ("sync", 20_000.0),
    ]  # fmt: skip
    d = _compare(_side(BEFORE), _side([1_500_000] * 3, {"compute": 27_000, "copy": 18_000}))
    assert [(p, c) for p, c, _ in d.reasons] == [("compute", 9_000.0)]


def test_per_gpu_changes_skip_a_device_only_one_side_has() -> None:
    """Before GPUs 0, 1, 2; after 0, 1, 3: compute per step +100 µs on 0 and +200 µs on 1;
    GPU 2 is not on the after side, GPU 3 not on the before side."""
    b = _side(BEFORE, {}, devices=(0, 1, 2))
    a = _side([1_500_000] * 3, {"compute": 300_000}, devices=(0, 1, 3))
    a.budget.devices[1].steady.ns["compute"] = 600_000  # type: ignore[union-attr]
    (r,) = _compare(b, a).reasons
    assert r[2] == "per GPU: GPU 0 +100 µs, GPU 1 +200 µs"


def test_one_step_evidence_and_vanished_kernels() -> None:
    """One step a side: kernels per step 2 -> 1 (not halved); the compute kernel that
    changed most vanished (after: none); a 100-character name is cut to 80."""
    long = "k" * 100
    tb = trace_of(kernels=_kernels([(0, 300_000, long), (400_000, 400_100, "gemm")]))
    ta = trace_of(kernels=_kernels([(400_000, 400_150, "gemm")]))
    b, a = _side([1_000_000]), _side([1_500_000], {"cpu_bound": 500_000})
    (r,) = _compare(b, a, tb, ta).reasons
    assert r == ("cpu_bound", 500_000.0, "kernels per step 2 → 1")
    b, a = _side([1_000_000], {"compute": 400_000}), _side([1_500_000], {"compute": 100_000})
    (r,) = _compare(b, a, tb, ta).reasons
    assert r[2] == f"most changed kernel: {'k' * 79}… 0.30 ms → none"


def test_sync_evidence_includes_synchronous_memcpy() -> None:
    """cudaMemcpy (a synchronous copy call) 100 -> 400 µs a step, the only sync-like call."""
    tb = trace_of(api=_table("api", [(t, t + 100_000) for t in T], name=["cudaMemcpy"] * 3))
    ta = trace_of(api=_table("api", [(t, t + 400_000) for t in T], name=["cudaMemcpy"] * 3))
    b, a = _side(BEFORE), _side([1_500_000] * 3, {"sync": 900_000})
    (r,) = _compare(b, a, tb, ta).reasons
    assert r[2] == "most changed sync call: cudaMemcpy 0.10 ms → 0.40 ms"


def test_ms_rounds_at_the_second_decimal() -> None:
    """Data per step 1_005_001 ns: 1.005001 ms, shown 1.01 ms."""
    b, a = _side(BEFORE), _side([1_500_000] * 3, {"data": 3 * 1_005_001})
    (r,) = _compare(b, a).reasons
    assert r[2] == "data wait per step 0.00 ms → 1.01 ms"


# -- notes, GPUs ---------------------------------------------------------------------------
def test_notes_name_both_sides() -> None:
    d = _compare(_side([1000] * 3, gpus=()), _side([1000] * 3, gpus=()))
    assert d.notes == ["the GPU model of before and after is not recorded: whether the two "
                       "ran on the same GPU cannot be told"]  # fmt: skip
    d = _compare(_side([1000] * 3, gpus=("H100",)), _side([1000] * 3, gpus=("A100", "H100")))
    assert d.notes == ["different GPUs (H100 vs A100, H100): kernel times compare the "
                       "hardware as well as the change"]  # fmt: skip


def test_gpu_names_of_a_report() -> None:
    dev = schema.conform("devices", {
        "device": pa.array([0, 1, 2], pa.int32()),
        "name": pa.array(["NVIDIA H100", None, "NVIDIA A100"], pa.string()),
    }, 3)  # fmt: skip
    assert compare._gpus(trace_of(devices=dev)) == ["NVIDIA A100", "NVIDIA H100"]
    assert compare._gpus(trace_of()) == []


def test_an_exact_match_absorbs_other_spellings_of_it() -> None:
    """Both sides have `foo<int>` (100 ns a step); before also `void foo<int>(float*)` (20
    ns), after `foo<int>(int)` (30 ns): spelled differently, one row with the exact
    match's time added: 120 -> 130 ns, 2 launches a step each."""
    one = ((0, 100, "foo<int>"), (200, 20, "void foo<int>(float*)"))
    two = ((0, 100, "foo<int>"), (200, 30, "foo<int>(int)"))
    before = _kernels([(t + o, t + o + d, n) for t in T for o, d, n in one])
    after = _kernels([(t + o, t + o + d, n) for t in T for o, d, n in two])
    d = _compare(_side([1000] * 3), _side([1000] * 3), trace_of(kernels=before),
                 trace_of(kernels=after))  # fmt: skip
    got = [(r.name, r.before, r.after, r.before_count, r.after_count, r.detail) for r in d.kernels]
    assert got == [("foo<int>", 120.0, 130.0, 2.0, 2.0, "spelled differently (demangler)")]


def test_finding_rows_are_percentages() -> None:
    b, a = _side([1000] * 3), _side([1000] * 3)
    b.findings, a.findings = {"r": ("R", 5.0, 50)}, {"r": ("R", 5.5, 55)}
    (row,) = [r for r in compare.to_json(_compare(b, a))["rows"] if r["section"] == "findings"]
    assert (row["unit"], row["before"], row["after"], row["status"]) == ("pct", 5.0, 5.5, "same")


def _synced_loop() -> Trace:
    """Four steps [1000 i, 1000 i + 900) µs: kernel A (call +100..+110, runs +110..+310),
    a cudaStreamSynchronize +420..+500, kernel B (call +500..+510, runs +510..+600)."""
    ops, calls = [], []
    for t in (0, 1000, 2000, 3000):
        ops += [Op(t + 110, t + 310, (t + 100, t + 110)), Op(t + 510, t + 600, (t + 500, t + 510))]
        calls.append(Call(t + 420, t + 500, "cudaStreamSynchronize"))
    return build(ops, [(1000 * i, 1000 * i + 900) for i in range(4)], calls=calls)


def test_diff_traces_measures_both_reports_with_their_findings() -> None:
    """The paths given name the sides; findings by rule, or by rule and kernel (`rule:
    kernel`); a finding that claims no saving keeps 0 % and 0 ns. Without findings: none."""
    t = _synced_loop()
    d = compare.diff_traces(t, t, "before.nsys-rep", "after.nsys-rep")
    assert (d.before.path, d.after.path) == ("before.nsys-rep", "after.nsys-rep")
    assert (d.before.n_steps, d.verdict) == (3, compare.SAME)
    found = d.before.findings
    assert "host_sync_per_step" in found and "cpu_bound" in found
    assert found["top_kernel: gemm"][1:] == (0.0, 0)
    assert found == d.after.findings
    assert compare.measure(t, "p").findings == found  # findings by default
    assert [r.name for r in d.findings] == sorted(found)
    d = compare.diff_traces(t, t, "b", "a", findings=False)
    assert d.before.findings == {} and d.after.findings == {} and d.findings == []
    assert (d.before.path, d.after.path) == ("b", "a")


def test_diff_traces_keeps_the_capturing_tool() -> None:
    t = _synced_loop()
    nsys = Trace(t.tables, TraceMeta(source="a", format="test", tool="Nsight Systems"))
    kineto = Trace(t.tables, TraceMeta(source="b", format="test", tool="torch.profiler (Kineto)"))
    d = compare.diff_traces(nsys, kineto, "a", "b", findings=False)
    assert (d.before.tool, d.after.tool) == ("Nsight Systems", "torch.profiler (Kineto)")
    assert d.notes[0].startswith("captured by different tools (Nsight Systems vs torch.profiler")


def test_a_gpu_that_did_not_change_is_plus_zero() -> None:
    """GPU 0 +100 µs a step, GPU 1 unchanged: `+0 ns` (not a minus sign)."""
    b = _side(BEFORE, {}, devices=(0, 1))
    a = _side([1_500_000] * 3, {"compute": 300_000}, devices=(0, 1))
    a.budget.devices[1].steady.ns["compute"] = 0  # type: ignore[union-attr]
    (r,) = _compare(b, a).reasons
    assert r[2] == "per GPU: GPU 0 +100 µs, GPU 1 +0 ns"
