"""The step budget where it shows: `analyze` (text, markdown, json) and
`summary --report step_budget` (csv, json)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

from tests.support.analysis import sqlite_path, trace_of
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import PARTS, step_budget


def _tuiperf(*args: str) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "tuiperf", *args, "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_analyze_prints_the_budget_first() -> None:
    out = _tuiperf("analyze", str(sqlite_path("vit_amp")), "--width", "120", "--rows", "0")
    head = out.index("Step budget · 22 steady-state steps")
    first = out.index(" 1. ")
    assert head < first
    assert out.index("GPU idle: CPU-bound issue") < first
    assert "[cpu_bound]" in out[first : out.index(" 2. ")]
    assert "% of steady-state step time)" in " ".join(out[first:].split())  # wrapped
    assert "Start-up (step 0 and before)" in out


def test_analyze_json_has_the_budget_per_kind_and_cause() -> None:
    doc = json.loads(_tuiperf("analyze", str(sqlite_path("cnn_osrt")), "-f", "json"))
    b = doc["budget"]
    ref = step_budget(Ctx(trace_of("cnn_osrt")))
    assert ref is not None
    assert b["method"] == "nvtx" and b["steady_steps"] == ref.n_steady
    steady = b["kinds"]["steady"]
    assert set(steady["parts"]) == set(PARTS)
    assert sum(p["ns"] for p in steady["parts"].values()) == steady["wall_ns"]
    assert steady["parts"]["data"]["ns"] == ref.steady.ns["data"]
    assert b["kinds"]["startup"]["wall_ns"] > 0
    assert len(b["devices"][0]["per_step"]) == ref.n_steady
    assert doc["saving_basis"].startswith("steady-state step time")
    for f in doc["findings"]:
        if f["est_saving_ns"] is not None:
            pct = 100 * f["est_saving_ns"] / steady["wall_ns"]
            assert abs(f["est_saving_pct"] - pct) < 0.01


def test_markdown_has_the_budget_table() -> None:
    out = _tuiperf("analyze", str(sqlite_path("lstm")), "-f", "markdown")
    assert "| GPU idle: waiting for data |" in out
    assert out.index("| part | total |") < out.index("### 1.")


def test_no_steps_no_budget() -> None:
    from tests.support.analysis import without
    from tuiperf.analysis.engine import analyze

    res = analyze(without(trace_of("vit_range"), "nvtx", "kernels"))
    assert res.budget is None and res.saving_basis.startswith("profiled time (no training steps")


def test_two_gpus_have_a_budget_each() -> None:
    """h100_2gpu_1s: two ranks, one GPU each, no step markers: the budget of each device
    over the main rank's steps (found from its kernel pattern)."""
    doc = json.loads(_tuiperf("analyze", str(sqlite_path("h100_2gpu_1s")), "-f", "json"))
    b = doc["budget"]
    assert b["method"] == "pattern"
    assert [d["device"] for d in b["devices"]] == [0, 1]
    for d in b["devices"]:
        st = d["steady"]
        assert sum(p["ns"] for p in st["parts"].values()) == st["wall_ns"]
    text = _tuiperf("analyze", str(sqlite_path("h100_2gpu_1s")), "--width", "200")
    assert "device 0 of 2" in text and "device 1: GPU busy" in text


def test_summary_step_budget_csv() -> None:
    out = _tuiperf("summary", str(sqlite_path("vit_range")), "--report", "step_budget", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    ref = step_budget(Ctx(trace_of("vit_range")))
    assert ref is not None
    steady = [r for r in rows if r["Kind"] == "steady"]
    assert [r["Step"] for r in steady] == [s.label for s in ref.main.steps]
    parts = [c for c in rows[0] if c.endswith("(ns)") and c not in ("Wall (ns)", "Overlap (ns)")]
    assert len(parts) == len(PARTS)
    for r in steady:
        assert sum(int(r[c]) for c in parts) == int(r["Wall (ns)"])
    (total,) = [r for r in rows if r["Kind"] == "steady_total"]
    for c in parts:
        assert int(total[c]) == sum(int(r[c]) for r in steady)
    assert {r["Kind"] for r in rows} == {"startup", "steady", "steady_total", "steady_median"}


def test_summary_budget_alias_json() -> None:
    doc = json.loads(_tuiperf("summary", str(sqlite_path("lstm")), "-r", "budget", "-f", "json"))
    assert doc["report"] == "step_budget"
    assert {r["method"] for r in doc["rows"]} == {"nvtx"}


def test_summary_step_budget_table_fits_80_columns() -> None:
    """The table view: every part readable at 80 columns (no cut cell), one row per step
    with the same figures as the CSV."""
    from tuiperf.model import fmt

    path = str(sqlite_path("vit_amp"))
    text = _tuiperf("summary", path, "--report", "step_budget", "--width", "80", "--top", "0")
    lines = text.splitlines()
    assert all(len(ln) <= 80 for ln in lines)
    assert "…" not in text
    rows = list(
        csv.DictReader(io.StringIO(_tuiperf("summary", path, "-r", "step_budget", "--csv")))
    )
    median = next(r for r in rows if r["Step"] == "median")
    line = next(ln for ln in lines if ln.split() and ln.split()[-1] == "median")
    for header in ("Wall (ns)", "Compute (ns)", "Copy (ns)", "Host Sync (ns)", "CPU-Bound (ns)"):
        assert fmt.duration(int(median[header])) in line, header
    labelled = [ln.rstrip() for ln in lines if ln.rstrip().endswith(tuple(r["Step"] for r in rows))]
    assert [next(r["Step"] for r in rows if ln.endswith(r["Step"])) for ln in labelled] == [
        r["Step"] for r in rows
    ]
