"""`tuiperf analyze`: formats, --fail-on, errors, and names printed as data."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.analysis import ncu_path, sqlite_path
from tests.support.data import unxz
from tuiperf.analysis.findings import (
    SCOPE_KERNEL,
    SOURCE_TUIPERF,
    AnalysisResult,
    Evidence,
    Finding,
    Fix,
    Scope,
    Severity,
)
from tuiperf.report.findings import print_text, write_markdown

KEYS = {
    "rule",
    "severity",
    "title",
    "message",
    "fix",
    "scope",
    "kernel",
    "count",
    "evidence",
    "est_saving_ns",
    "source",
}

ROOT = Path(__file__).resolve().parents[2]


def findings(stdout: str) -> list[dict[str, object]]:
    """The findings of `analyze --format json` (beside the step budget)."""
    return json.loads(stdout)["findings"]  # type: ignore[no-any-return]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tuiperf", "analyze", *args, "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_json_is_a_list_of_findings_with_all_evidence() -> None:
    res = run(str(sqlite_path("cnn_osrt")), "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert set(doc) == {
        "source",
        "profiled_ns",
        "saving_basis",
        "sample",
        "budget",
        "findings",
        "unlinked_ncu_findings",
    }
    assert doc["sample"] is None  # a small report is analysed whole
    data = doc["findings"]
    assert isinstance(data, list) and data
    for f in data:
        assert set(f) >= KEYS
        assert f["count"] == len(f["evidence"])
        assert all("start_ns" in r and "duration_ns" in r for r in f["evidence"])
    by_rule = {f["rule"]: f for f in data}
    assert len(by_rule["cuda_memcpy_async"]["evidence"]) == 78  # not the top 50
    assert by_rule["pageable_h2d_in_steps"]["severity"] == "warning"
    savings = [f["est_saving_ns"] for f in data if f["est_saving_ns"] is not None]
    assert savings == sorted(savings, reverse=True)


def test_fail_on_is_a_ci_gate() -> None:
    # worst finding of the planted GPU-bound loop: a warning (the host sync)
    report = str(unxz(ROOT / "tests/data/budget/gpu_bound.sqlite.xz"))
    worst = {f["severity"] for f in json.loads(run(report, "-f", "json").stdout)["findings"]}
    assert worst == {"info", "warning"}
    # 5, not 1: a CI gate must tell findings from a broken report (exit 1)
    assert run(report, "--fail-on", "warning", "-f", "json").returncode == 5
    assert run(report, "--fail-on", "error", "-f", "json").returncode == 0
    assert run(report, "-f", "json").returncode == 0
    # cnn_osrt's worst is an error (CPU-bound, 37% of its step, the largest part)
    assert run(str(sqlite_path("cnn_osrt")), "--fail-on", "error", "-f", "json").returncode == 5


def test_text_and_markdown(tmp_path: Path) -> None:
    report = str(sqlite_path("vit_amp"))
    text = run(report, "--width", "100", "--ascii")
    assert text.returncode == 0 and "host_sync_per_step" in text.stdout
    assert "\x1b[" not in text.stdout  # no colour codes when piped
    out = tmp_path / "findings.md"
    md = run(report, "-f", "markdown", "-o", str(out))
    assert md.returncode == 0 and md.stdout == ""
    body = out.read_text()
    assert body.startswith("## tuiperf analyze") and "```python" in body
    assert "(`pageable_h2d_in_steps`)" not in body  # vit_amp's loop is pinned
    assert "`pageable_h2d_in_steps`" in body  # … but the rule ran: nothing to report


def test_nsys_with_ncu_and_ncu_alone() -> None:
    both = run(str(sqlite_path("vit_amp")), str(ncu_path("vit_full")), "-f", "json")
    assert both.returncode == 0, both.stderr
    sources = {f["source"] for f in findings(both.stdout)}
    assert sources == {"nsys-analyze", "tuiperf", "ncu"}
    alone = run(str(ncu_path("vit_full")), "-f", "json", "--rule", "ncu_occupancy")
    assert alone.returncode == 0, alone.stderr
    assert {f["rule"] for f in findings(alone.stdout)} == {"occupancy_limited"}


def test_usage_errors_are_one_line() -> None:
    res = run(str(sqlite_path("vit_range")), "--rule", "no_such_rule")
    assert res.returncode == 2
    assert res.stderr.startswith("tuiperf: error:") and res.stderr.count("\n") == 1
    res = run(str(ncu_path("vit_full")), str(sqlite_path("vit_range")))
    assert res.returncode == 2 and "Traceback" not in res.stderr


def _hostile() -> AnalysisResult:
    name = "[bold red]evil[/] \x1b[31mred\x1b[0m | `x`"
    ev = Evidence.build(
        "kernels", np.array([0]), np.array([5]), np.array([7]), {"name": [name]}, {"name": "Kernel"}
    )
    f = Finding(
        "layout_conversion",
        "t",
        Severity.ERROR,
        f"msg {name}",
        Fix("fix", "x = 1"),
        Scope(SCOPE_KERNEL, name),
        SOURCE_TUIPERF,
        1,
        ev,
        10,
        kernel=name,
    )
    return AnalysisResult([f], [], 100, source=name)


def test_names_are_never_markup_or_escapes() -> None:
    out = io.StringIO()
    print_text(out, _hostile(), width=200)
    text = out.getvalue()
    assert "[bold red]evil[/]" in text and "\x1b" not in text
    assert "ERROR" in text and "✖" in text  # severity as a word and a glyph, not colour
    md = io.StringIO()
    write_markdown(md, _hostile())
    assert "\x1b" not in md.getvalue() and "\\| \\`x\\`" in md.getvalue()


def test_analysis_does_not_import_textual() -> None:
    code = (
        "import sys, tuiperf.analysis.engine, tuiperf.analysis.ncu.rules, "
        "tuiperf.report.findings, tuiperf.commands.analyze; "
        "assert 'textual' not in sys.modules"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


def test_json_rows_limits_evidence_but_not_count() -> None:
    res = run(str(sqlite_path("cnn_osrt")), "--format", "json", "--rows", "2")
    assert res.returncode == 0, res.stderr
    by_rule = {f["rule"]: f for f in findings(res.stdout)}
    lc = by_rule["layout_conversion"]
    assert len(lc["evidence"]) == 2 and lc["count"] == 847
    assert all(len(f["evidence"]) <= 2 for f in by_rule.values())


def test_kernel_scoped_findings_name_their_kernel() -> None:
    res = run(str(sqlite_path("cnn_osrt")), "--format", "json", "--rule", "layout_conversion")
    (f,) = findings(res.stdout)
    assert f["scope"] == "kernel: nchwToNhwcKernel, nhwcToNchwKernel"  # most GPU time first
    assert f["kernel"] == "nchwToNhwcKernel"
    assert f["kernels"] == ["nchwToNhwcKernel", "nhwcToNchwKernel"]


def test_percentages_are_of_the_profiled_span() -> None:
    """h100_2gpu_1s: the session ran 296 s, the trace's events span 969 ms. Its steps (found
    from the kernel pattern) make savings shares of steady-state step time; a report
    without steps has them as shares of the profiled span."""
    from tests.support.analysis import ctx_of
    from tuiperf.analysis.order import rank
    from tuiperf.analysis.rules.pytorch import RULES

    report = str(sqlite_path("h100_2gpu_1s"))
    text = run(report, "--width", "200", "--rows", "0")
    assert "profiled 969 ms" in text.stdout, text.stdout[:200]
    doc = json.loads(run(report, "-f", "json", "--rule", "fp32_no_tensor_cores").stdout)
    (f,) = doc["findings"]
    assert f["kernel"] and f["kernel"] in f["scope"]
    # its kernel pattern repeats regularly but holds forward kernels only (a copy benchmark,
    # not a training iteration): medium confidence, savings are shares of its steps
    b = doc["budget"]
    assert b["confidence"] == "medium" and "no backward" in b["confidence_reason"]
    wall = b["kinds"]["steady"]["wall_ns"]
    assert f["est_saving_ns"] is not None
    assert f["est_saving_pct"] == pytest.approx(100 * f["est_saving_ns"] / wall, abs=0.01)
    ctx = ctx_of("h100_2gpu_1s")
    (g,) = rank(RULES["fp32_no_tensor_cores"](ctx), ctx.profiled_ns)
    assert g.est_saving_ns is not None and g.est_saving_pct is not None
    assert g.est_saving_pct == pytest.approx(100 * g.est_saving_ns / 969e6, abs=0.1)
    assert g.est_saving_pct > 1.5  # 19.4 ms of 969 ms, not 0.01 %
