"""`tuiperf diff` on real before/after pairs (tests/data/budget, H200 captures): the verdict
and its first explanation name the change that was made."""

from __future__ import annotations

import csv
import functools
import io
import json
from pathlib import Path

import pytest

from tests.support.cli import assert_one_line_error, run_cli
from tests.support.data import unxz
from tuiperf.analysis.diff.compare import (
    FASTER,
    SAME,
    SLOWER,
    UNKNOWN,
    Diff,
    Row,
    compare,
    diff_traces,
    finding_status,
    loose_name,
    measure,
    to_json,
)
from tuiperf.errors import ExitCode
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace
from tuiperf.report.diff import CSV_HEADER, csv_rows, print_text, verdict_line

BUDGET = Path(__file__).resolve().parent.parent / "data" / "budget"
KINETO = BUDGET.parent / "kineto"


@functools.cache
def path(name: str) -> Path:
    if name.startswith("sgd_"):  # torch.profiler traces of one optimizer, two ways
        return KINETO / f"kineto_{name}.json.gz"
    if name.endswith(".kineto"):
        return BUDGET / f"{name}.json.gz"
    return unxz(BUDGET / f"{name}.sqlite.xz")


@functools.cache
def trace(name: str) -> Trace:
    return open_trace(path(name), OpenOptions(use_cache=False))


@functools.cache
def diff(before: str, after: str) -> Diff:
    return diff_traces(trace(before), trace(after), before, after)


def _row(d: Diff, section: str, name: str) -> Row:
    return next(r for r in d.rows() if r.section == section and r.name == name)


def test_cpu_bound_fixed_is_faster_because_the_cpu_bound_part_shrank() -> None:
    d = diff("cpu_bound", "cpu_bound_fixed")
    assert d.verdict == FASTER
    assert d.change_ns == d.after.median_ns - d.before.median_ns < -d.noise_ns < 0
    part, change, evidence = d.reasons[0]
    assert part == "cpu_bound" and change < 0
    assert change == _row(d, "budget", "CPU-bound").change
    # the three largest part changes beyond the step noise, either way (bigger batches: more
    # compute a step); the parts within the noise explain nothing
    moved = sorted((r for r in d.budget if r.section == "budget"), key=lambda r: -abs(r.change))
    beyond = [r for r in moved if abs(r.change) > d.noise_ns]
    assert [(p, c) for p, c, _ in d.reasons] == [(r.detail, r.change) for r in beyond[:3]]
    assert all(r.status == "within noise" for r in moved if 0 < abs(r.change) <= d.noise_ns)
    assert _row(d, "budget", "compute").change > 0
    # batch x16 and fused Adam: fewer kernels a step, and the line says so
    kb = sum(a.count for a in d.before.kernels.values()) / d.before.n_steps
    ka = sum(a.count for a in d.after.kernels.values()) / d.after.n_steps
    assert ka < kb
    assert f"kernels per step {kb:,.0f} → {ka:,.0f}" == evidence
    line = verdict_line(d)
    assert line.startswith("verdict: faster") and "CPU-bound" in line
    # the per-parameter Adam's finding is gone
    assert finding_status(_row(d, "findings", "tiny_optimizer_kernels")) == "gone"


def test_data_bound_fixed_is_faster_because_the_data_wait_went() -> None:
    d = diff("data_bound", "data_bound_fixed")
    assert d.verdict == FASTER
    assert d.reasons[0][0] == "data"
    data = _row(d, "budget", "data wait")
    assert data.change == d.reasons[0][1] < 0
    # the data wait explains most of the step's change
    assert abs(data.change) > abs(d.change_ns) / 2
    # pinned memory: the per-step host-to-device copy time went down
    h2d = [r for r in d.copies if r.name.startswith("Host-to-Device")]
    assert h2d and sum(r.change for r in h2d) < 0
    assert "waiting for data" not in verdict_line(d)  # short part names
    assert "data wait" in verdict_line(d)


@pytest.mark.parametrize("name", ["cpu_bound", "data_bound", "cpu_bound.kineto"])
def test_a_report_against_itself_is_the_same_with_zero_change(name: str) -> None:
    d = diff_traces(trace(name), trace(name), name, name)
    assert d.verdict == SAME
    assert d.change_ns == 0 and d.change_pct == 0
    assert d.reasons == [] and d.notes == []
    assert d.rows() and all(r.change == 0 for r in d.rows())
    assert {r.status for r in d.rows() if r.section != "findings"} <= {"same"}
    assert {finding_status(r) for r in d.findings} <= {"same"}
    assert "verdict: same" in verdict_line(d) and "+0.00 ms per step" in verdict_line(d)


def test_swapped_pair_is_slower_by_the_same_amount() -> None:
    fwd, back = diff("cpu_bound", "cpu_bound_fixed"), diff("cpu_bound_fixed", "cpu_bound")
    assert back.verdict == SLOWER
    assert back.change_ns == -fwd.change_ns
    assert back.reasons[0][0] == "cpu_bound" and back.reasons[0][1] > 0
    assert back.slower_than(back.change_pct - 1)  # type: ignore[operator]
    assert not back.slower_than(back.change_pct + 1)  # type: ignore[operator]
    assert not fwd.slower_than(0)


def test_pattern_steps_against_nvtx_steps_of_the_same_program() -> None:
    d = diff("no_nvtx", "cpu_bound")
    assert d.before.budget is not None and d.before.budget.method == "pattern"
    assert d.after.budget is not None and d.after.budget.method == "nvtx"
    assert d.verdict == SAME  # one program, with and without markers
    assert abs(d.change_ns) <= d.noise_ns
    assert any("steps found differently" in n for n in d.notes)
    # the same kernels run in both: none appears or vanishes
    assert not [r for r in d.kernels if r.status in ("appeared", "vanished")]


def test_nsys_against_kineto_matches_every_kernel_name() -> None:
    d = diff("cpu_bound", "cpu_bound.kineto")
    assert d.per_step
    assert d.after.n_steps != d.before.n_steps
    assert any("different step counts" in n for n in d.notes)
    assert d.kernels and not [r for r in d.kernels if r.status in ("appeared", "vanished")]
    # the same kernels a step on both sides
    kb = sum(a.count for a in d.before.kernels.values()) / d.before.n_steps
    ka = sum(a.count for a in d.after.kernels.values()) / d.after.n_steps
    assert kb == ka
    assert _row(d, "api", "cudaLaunchKernel").status == "changed"  # _v7000 dropped


def test_nsys_against_kineto_says_what_compares() -> None:
    """One program, one capture by each tool (separate runs): the GPU side is the same
    work, the host side carries the profilers' overheads, and the notes say so."""
    d = diff("cpu_bound", "cpu_bound.kineto")
    note = next(n for n in d.notes if "different tools" in n)
    assert "Nsight Systems" in note and "torch.profiler" in note
    assert "host-side time" in note
    compute = _row(d, "budget", "compute")
    assert compute.before and abs(compute.change) < 0.05 * compute.before
    # calls only nsys records (its own name look-ups) vanish rather than "changed"
    only_nsys = _row(d, "api", "cuKernelGetName")
    assert only_nsys.status == "vanished"
    same_tool = diff("cpu_bound", "cpu_bound_fixed")
    assert not any("different tools" in n for n in same_tool.notes)


def test_kineto_per_parameter_sgd_against_foreach() -> None:
    """torch.profiler captures of one model's optimizer step, one kernel set per parameter
    then foreach: faster, explained by the launches that went."""
    d = diff("sgd_per_param", "sgd_foreach")
    assert d.before.tool == d.after.tool and d.per_step
    assert d.verdict == FASTER and d.change_ns < -d.noise_ns
    part, change, evidence = d.reasons[0]
    assert part == "cpu_bound" and change == _row(d, "budget", "CPU-bound").change < 0
    kb = sum(a.count for a in d.before.kernels.values()) / d.before.n_steps
    ka = sum(a.count for a in d.after.kernels.values()) / d.after.n_steps
    assert ka < kb / 2
    assert evidence == f"kernels per step {kb:,.0f} → {ka:,.0f}"
    # the per-parameter elementwise kernels vanish; foreach's multi-tensor kernels appear
    gone = [r for r in d.kernels if r.status == "vanished"]
    new = [r for r in d.kernels if r.status == "appeared"]
    assert gone and all(r.before_count for r in gone)
    assert any("multi_tensor_apply" in r.name for r in new)
    launches = _row(d, "api", "cudaLaunchKernel")
    assert launches.after_count is not None and launches.before_count is not None
    assert launches.after_count < launches.before_count / 2
    assert finding_status(_row(d, "findings", "tiny_optimizer_kernels")) == "gone"
    back = diff("sgd_foreach", "sgd_per_param")
    assert back.verdict == SLOWER and back.reasons[0][0] == "cpu_bound"


def test_two_demanglers_one_kernel() -> None:
    nsys = (
        "void at::<unnamed>::GammaBetaBackwardCUDAKernelTemplate<float, float, 32, 1, 8, 1, 1,"
        " 0>(long, long, const T1 *, const T1 *, const T2 *, const T2 *, T1 *, T1 *)"
    )
    kineto = (
        "void at::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, "
        "32u, 1u, 8u, true, true, false>(long, long, float const*, float const*, float "
        "const*, float const*, float*, float*)"
    )
    assert loose_name(nsys) == loose_name(kineto)
    assert loose_name(nsys) != loose_name(nsys.replace("32, 1, 8", "32, 32, 8"))


def test_different_gpus_are_named() -> None:
    b = measure(trace("cpu_bound"), "b", findings=False)
    a = measure(trace("cpu_bound_fixed"), "a", findings=False)
    a.gpus = ["NVIDIA A100-SXM4-80GB"]
    d = compare(b, a, trace("cpu_bound"), trace("cpu_bound_fixed"))
    assert any("different GPUs" in n and "A100" in n for n in d.notes)
    a.gpus = []
    d = compare(b, a, trace("cpu_bound"), trace("cpu_bound_fixed"))
    assert any("GPU model of after is not recorded" in n for n in d.notes)


def test_a_report_without_gpu_work(tmp_path: Path) -> None:
    cpu = tmp_path / "cpu_only.json"
    event = {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1}
    cpu.write_text(json.dumps({"traceEvents": [{**event, "ts": 1.0, "dur": 2.0}]}))
    t = open_trace(cpu, OpenOptions(use_cache=False))
    d = diff_traces(t, trace("cpu_bound"), "cpu_only", "cpu_bound")
    assert d.verdict == UNKNOWN and d.change_pct is None and not d.slower_than(0)
    assert any("no GPU work" in n for n in d.notes)
    assert "cannot be compared" in verdict_line(d)
    assert _row(d, "step", "median step").status == "not comparable"
    assert not d.per_step and d.kernels  # the other side's kernels: whole-report totals
    res = run_cli("diff", str(cpu), str(path("cpu_bound")), "--no-cache", "--fail-if-slower", "5")
    assert res.returncode == ExitCode.FAILURE
    assert res.stdout.startswith("verdict: step time cannot be compared")
    assert res.stderr.count("\n") == 1 and "--fail-if-slower" in res.stderr


def test_csv_and_json_shapes() -> None:
    d = diff("data_bound", "data_bound_fixed")
    j = to_json(d)
    assert j["verdict"] == FASTER and j["reasons"][0]["part"] == "data"
    assert {r["section"] for r in j["rows"]} == {
        "step", "budget", "kernels", "copies", "api", "findings"
    }  # fmt: skip
    buf = io.StringIO()
    from tuiperf.export import write_csv

    write_csv(buf, CSV_HEADER, csv_rows(d))
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert rows[0] == CSV_HEADER
    assert rows[1][:2] == ["verdict", FASTER]
    assert len(rows) == 2 + len(j["rows"])
    assert all(len(r) == len(CSV_HEADER) for r in rows)


def test_text_starts_with_the_verdict() -> None:
    d = diff("cpu_bound", "cpu_bound_fixed")
    buf = io.StringIO()
    print_text(buf, d, width=120)
    text = buf.getvalue()
    assert text.startswith("verdict: faster")
    assert "CPU-bound" in text.splitlines()[2]  # the first explanation
    for title in ("kernels", "memcpy/memset", "CUDA API", "findings"):
        assert title in text


def test_cli_fail_if_slower_both_ways() -> None:
    fast, slow = str(path("cpu_bound_fixed")), str(path("cpu_bound"))
    res = run_cli("diff", fast, slow, "--no-cache", "--format", "json", "--no-findings")
    assert res.returncode == 0, res.stderr
    pct = json.loads(res.stdout)["change_pct"]
    assert pct > 0
    gate = ("--no-cache", "--no-findings", "--format", "csv", "--fail-if-slower")
    assert run_cli("diff", fast, slow, *gate, str(pct - 1)).returncode == ExitCode.SLOWER == 4
    assert run_cli("diff", fast, slow, *gate, str(pct + 1)).returncode == 0
    assert run_cli("diff", slow, fast, *gate, "0").returncode == 0


def test_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.sqlite"
    assert_one_line_error(run_cli("diff", str(missing), str(missing), "--no-cache"), 2)
    junk = tmp_path / "junk.json"
    junk.write_text("not a trace")
    assert_one_line_error(run_cli("diff", str(junk), str(path("cpu_bound")), "--no-cache"), 1)
    bad = run_cli("diff", "a", "b", "--fail-if-slower", "-3", "--no-cache")
    assert_one_line_error(bad, 2)


@pytest.mark.parametrize("cols", ["0", "-5", "abc", "12"])
def test_cli_bad_width_is_one_line(cols: str) -> None:
    """--width takes the same checked columns as analyze/ncu/sql (at least MIN_WIDTH)."""
    res = run_cli("diff", str(path("cpu_bound")), str(path("cpu_bound")), "--width", cols)
    assert_one_line_error(res, 2)
    assert "--width" in res.stderr


def test_huge_reports_are_compared_over_their_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    from tuiperf.analysis import sample
    from tuiperf.report.diff import _side_text

    whole = diff("cpu_bound", "cpu_bound_fixed")
    limit = sample.n_events(trace("cpu_bound_fixed")) // 2
    monkeypatch.setattr(sample, "DEFAULT_MAX_EVENTS", limit)
    d = diff_traces(trace("cpu_bound"), trace("cpu_bound_fixed"), "b", "a")
    for side in (d.before, d.after):
        assert side.sample is not None and side.sample.whole_steps
        assert side.budget is not None and side.budget.main.startup is None
        assert 0 < side.n_steps < len(whole.before.steps_ns) + len(whole.after.steps_ns)
        assert "in a sample of the run" in _side_text(side)
    assert d.verdict == whole.verdict == FASTER
    assert d.reasons[0][0] == whole.reasons[0][0] == "cpu_bound"
    # kernels per step, counted inside the sampled steps, as over all the steps
    for s, w in ((d.before, whole.before), (d.after, whole.after)):
        per = sum(a.count for a in s.kernels.values()) / s.n_steps
        per_whole = sum(a.count for a in w.kernels.values()) / w.n_steps
        assert per == pytest.approx(per_whole, rel=0.05)
