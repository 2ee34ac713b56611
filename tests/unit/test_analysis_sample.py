"""A huge report is analysed over a sample of its run (analysis.sample, issue 37).

Oracles: the sample's bins by brute force over event positions; the rows a cut keeps by a
row-by-row rule in plain Python; the steps of a real capture's sample by SQL on its
SQLite export; every evidence row of a sampled analysis against the report's own row
(same start); detail rows read per batch against the whole table taken."""

from __future__ import annotations

import functools
import json
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.data import unxz
from tests.support.tiny import trace_of
from tuiperf import schema
from tuiperf.analysis import sample
from tuiperf.analysis.engine import AnalyzeOptions, analyze
from tuiperf.load.open import OpenOptions, open_trace

BUDGET = Path(__file__).resolve().parent.parent / "data" / "budget"


# -- choosing the bins -------------------------------------------------------------------


def _middle_brute(counts: list[int], limit: int) -> list[int]:
    """Bins whose events all sit within limit/2 of the middle event's position."""
    total = sum(counts)
    mid = total / 2
    out, pos = [], 0
    for k, c in enumerate(counts):
        if pos >= mid - limit / 2 and pos + c <= mid + limit / 2:
            out.append(k)
        pos += c
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=40), st.integers(1, 400))
def test_middle_bins_are_those_within_half_the_limit_of_the_middle_event(counts, limit):
    b0, b1 = sample.middle(np.array(counts, np.int64), limit)
    want = _middle_brute(counts, limit)
    if want:
        assert list(range(b0, b1)) == want
        assert sum(counts[b0:b1]) <= limit
    else:  # one bin holds the middle event and more than the limit around it
        pos = np.cumsum([0, *counts])
        assert b1 == b0 + 1 and pos[b0] <= sum(counts) / 2 < pos[b0 + 1]


def test_middle_at_the_limit_boundary():
    # 4 bins of 10: a limit of 20 keeps the middle two exactly, 19 only what fits
    counts = np.array([10, 10, 10, 10])
    assert sample.middle(counts, 20) == (1, 3)
    assert sample.middle(counts, 40) == (0, 4)
    b0, b1 = sample.middle(counts, 19)
    assert counts[b0:b1].sum() <= 19


# -- when a report is sampled ------------------------------------------------------------


def _api(rows: list[tuple[int, int, int, int]]) -> pa.Table:
    """(start, end, pid, correlation id) rows of the API table."""
    cols = {
        "start": pa.array([r[0] for r in rows], pa.int64()),
        "end": pa.array([r[1] for r in rows], pa.int64()),
        "duration": pa.array([r[1] - r[0] for r in rows], pa.int64()),
        "pid": pa.array([r[2] for r in rows], pa.int64()),
        "tid": pa.array([r[2] for r in rows], pa.int64()),
        "correlation_id": pa.array([r[3] for r in rows], pa.int64()),
        "name": pa.array(["cudaLaunchKernel"] * len(rows)).dictionary_encode(),
    }
    return schema.conform("api", cols, len(rows))


def _gpu(rows: list[tuple[int, int | None, int, int | None, int | None]]) -> pa.Table:
    """(start, end or None, device, pid, correlation id; None: unknown) kernel rows."""
    ends = [r[1] for r in rows]
    cols = {
        "start": pa.array([r[0] for r in rows], pa.int64()),
        "end": pa.array(ends, pa.int64()),
        "duration": pa.array([(e or s) - s for s, e in zip([r[0] for r in rows], ends)]),
        "device": pa.array([r[2] for r in rows], pa.int32()),
        "stream": pa.array([7] * len(rows), pa.int64()),
        "pid": pa.array([r[3] for r in rows], pa.int64()),
        "correlation_id": pa.array([r[4] for r in rows], pa.int64()),
        "name": pa.array(["k"] * len(rows)).dictionary_encode(),
        "short_name": pa.array(["k"] * len(rows)).dictionary_encode(),
    }
    return schema.conform("kernels", cols, len(rows))


def test_a_report_at_the_limit_is_whole_one_over_is_sampled():
    t = trace_of(api=_api([(i * 10, i * 10 + 5, 1, i) for i in range(100)]))
    assert sample.choose(t, 100, lambda: None) is None
    assert sample.choose(t, 0, lambda: None) is None  # 0: always whole
    lo, hi, whole = sample.choose(t, 99, lambda: None)
    assert not whole
    starts = np.arange(100) * 10
    assert ((starts >= lo) & (starts < hi)).sum() <= 99


def test_the_sample_is_cut_at_step_starts_when_three_fall_in_it():
    t = trace_of(api=_api([(i * 10, i * 10 + 5, 1, i) for i in range(1000)]))
    lo, hi, _ = sample.choose(t, 400, lambda: None)
    steps = np.array([lo + 7, lo + 100, hi - 50, hi + 5, lo - 3])
    assert sample.choose(t, 400, lambda: steps) == (lo + 7, hi - 50, True)
    two = np.array([lo + 7, hi - 50])
    assert sample.choose(t, 400, lambda: two) == (lo, hi, False)
    edges = np.array([hi, lo + 100, lo])  # starts exactly at the sample's ends count
    assert sample.choose(t, 400, lambda: edges) == (lo, hi, True)


def test_sample_text_and_json():
    cut = sample.Sample(1_000, 2_501_000, 100, 40, True)
    assert cut.text() == (
        "a sample of the run: 2.5 ms in its middle (cut at step starts), 40 of its 100 events"
    )
    assert "(cut by time)" in sample.Sample(0, 10, 100, 40, False).text()
    assert cut.to_json() == {
        "start_ns": 1_000, "end_ns": 2_501_000, "events": 40, "total_events": 100,
        "whole_steps": True,
    }  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 200), st.integers(0, 3))
def test_the_sample_holds_nearly_the_limit_around_the_middle_event(ratio, skew):
    # events spread over time (denser in the middle with skew), in two tables
    n = 20_000
    x = np.linspace(-1, 1, n)
    t = np.sort((1e6 * (x + skew * x**3) / (1 + skew)).astype(np.int64)) + 5_000_000
    half = n // 2
    api = _api([(int(v), int(v) + 1, 1, i) for i, v in enumerate(t[:half])])
    trace = trace_of(api=api, kernels=_gpu([(int(v), int(v) + 1, 0, 1, None) for v in t[half:]]))
    limit = n // ratio
    lo, hi, _ = sample.choose(trace, limit, lambda: None)
    inside = int(((t >= lo) & (t < hi)).sum())
    assert inside <= limit
    assert lo <= np.sort(t)[n // 2] < hi  # the middle event
    assert inside >= 0.85 * limit  # bins fine enough: the sample is nearly the limit


# -- cutting ---------------------------------------------------------------------------


def _kept_brute(gpu, api, lo, hi):
    """Row by row: overlaps [lo, hi) (a zero-length or open one: starts in it), or was
    launched by an API call of its own process that starts in it."""
    launched = {(p, c) for s, _, p, c in api if lo <= s < hi}  # CUDA numbers each call
    out = []
    for i, (s, e, _, p, c) in enumerate(gpu):
        end = s if e is None or e < s else e
        if (s < hi and (end > lo or s >= lo)) or (p, c) in launched:
            out.append(i)
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 300), st.integers(0, 60), st.booleans(), st.integers(0, 1),
                  st.sampled_from([1, 2, None]), st.one_of(st.none(), st.integers(0, 30))),
        max_size=40,
    ),
    st.integers(0, 200),
    st.integers(1, 120),
)  # fmt: skip
def test_cut_keeps_overlapping_and_launched_rows(raw, lo, span):
    hi = lo + span
    # each process numbers its calls in the order they start; process 2 calls later and
    # more slowly than process 1, so the two launch the same ids at different times
    api = [(c * 7, c * 7 + 3, 1, c) for c in range(31)]
    api += [(40 + c * 9, 40 + c * 9 + 2, 2, c) for c in range(31)]
    api.append((hi + 50, hi + 51, 1, 5))  # renumbered (another session): starts after
    gpu = [(s, None if open_ else s + d, dev, p, c) for s, d, open_, dev, p, c in raw]
    t = trace_of(kernels=_gpu(gpu), api=_api(api))
    cut, kept = sample.cut(t, lo, hi)
    ok = [(s, e, dev, p, c) for s, e, dev, p, c in gpu]
    assert kept["kernels"].tolist() == _kept_brute(ok, api[:-1], lo, hi)
    assert cut.table("kernels")["start"].to_pylist() == [gpu[i][0] for i in kept["kernels"]]
    api_rows = [i for i, (s, e, _, _) in enumerate(api) if s < hi and (e > lo or s >= lo)]
    assert kept["api"].tolist() == api_rows


def test_cut_reads_columns_a_slice_at_a_time(monkeypatch):
    monkeypatch.setattr(sample, "SLICE", 3)  # slices cut through the rows kept
    # the CPU runs 15 ns ahead: ops launched in the window run after it; the window's
    # calls are spread over several slices of the API table, some slices have none
    gpu = [(s + 15, s + 19, s % 2, 1, 100 + s) for s in range(0, 40, 2)]
    api = [(s, s + 1, 1, 100 + s) for s in range(0, 40, 2)]
    t = trace_of(kernels=_gpu(gpu), api=_api(api))
    _, kept = sample.cut(t, 11, 23)
    assert kept["kernels"].tolist() == _kept_brute(gpu, api, 11, 23)
    assert 100 + 12 in [gpu[i][4] for i in kept["kernels"]]  # launched at 12, runs at 27


def test_cut_keeps_other_tables_whole_and_their_details():
    from tuiperf.model.trace import Trace

    gpu = [(s, s + 4, 0, 1, s) for s in range(0, 100, 10)]
    k = _gpu(gpu)
    core = k.drop_columns(["grid_x"])
    calls = []

    def details() -> pa.Table:
        calls.append(1)
        return k.set_column(k.schema.get_field_index("grid_x"), "grid_x",
                            pa.array(range(10), pa.int32()))  # fmt: skip

    devices = schema.conform("devices", {"device": pa.array([0], pa.int64())}, 1)
    told = []
    t = Trace({"devices": devices, "kernels": core}, trace_of().meta, pending={"kernels": details},
              on_details=lambda name, on: told.append((name, on)))  # fmt: skip
    cut, kept = sample.cut(t, 25, 55)
    assert kept["kernels"].tolist() == [3, 4, 5]  # [20, 24) ends before the window
    assert cut.table("devices").equals(devices) and "devices" not in kept
    assert cut.table("kernels")["grid_x"].to_pylist() == [3, 4, 5]
    # converted once, through the report; the sample tells its own listener too
    assert calls == [1] and told.count(("kernels", True)) == 2


def test_report_rows_of_one_row_and_of_none():
    kept = {"kernels": np.array([4, 9])}
    one = pa.table({"table": ["kernels"], "row": pa.array([1], pa.int64())})
    assert sample.report_rows(one, kept)["row"].to_pylist() == [9]
    none = pa.table({"table": pa.array([], pa.string()), "row": pa.array([], pa.int64())})
    assert sample.report_rows(none, kept).num_rows == 0


def test_report_rows_point_back_at_the_report():
    kept = {"kernels": np.array([4, 9, 12]), "api": np.array([0, 5])}
    rows = pa.table({
        "table": ["kernels", "", "api", "kernels", "osrt"],
        "row": pa.array([2, None, 1, 0, 3], pa.int64()),
    })  # fmt: skip
    out = sample.report_rows(rows, kept)
    assert out["row"].to_pylist() == [12, None, 5, 4, 3]


# -- a real capture's sample -------------------------------------------------------------


@functools.cache
def _cpu_bound() -> Path:
    return unxz(BUDGET / "cpu_bound.sqlite.xz")


def _sql_steps(path: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT start, t FROM (SELECT start, COALESCE(text, (SELECT value FROM StringIds"
            " WHERE id = textId)) AS t FROM NVTX_EVENTS) WHERE t LIKE 'step %' ORDER BY start"
        ).fetchall()
    return [(int(s), str(t)) for s, t in rows]


def test_a_real_capture_sampled_keeps_whole_steps_and_report_rows():
    trace = open_trace(_cpu_bound(), OpenOptions(use_cache=False))
    total = sample.n_events(trace)
    result = analyze(trace, options=AnalyzeOptions(max_events=total // 2))
    part = result.sample
    assert part is not None and part.whole_steps and part.total_events == total
    steps = _sql_steps(_cpu_bound())
    starts = [s for s, _ in steps]
    assert part.lo in starts and part.hi in starts
    inside = [label for s, label in steps if part.lo <= s < part.hi]
    # the sample's first step is its start-up; its others are the steady steps
    assert result.budget.steady_labels == f"{inside[1]} … {inside[-1]}"
    assert result.budget.n_steady == len(inside) - 1
    assert all(d.startup is None for d in result.budget.devices)
    assert result.profiled_ns == part.hi - part.lo
    assert "a sample of the run" in result.saving_basis
    checked = 0
    for f in result.findings:
        ev = f.evidence.rows.to_pylist()
        for r in ev:
            if r["table"] and r["row"] is not None and r["start_ns"] is not None:
                start = trace.table(r["table"])["start"][r["row"]].as_py()
                assert start == r["start_ns"], (f.rule, r)
                checked += 1
    assert checked > 0


def test_a_real_capture_under_the_limit_is_analysed_whole():
    trace = open_trace(_cpu_bound(), OpenOptions(use_cache=False))
    total = sample.n_events(trace)
    assert analyze(trace, options=AnalyzeOptions(max_events=total)).sample is None


# -- detail columns of the sample's rows ---------------------------------------------------


def test_detail_rows_read_per_batch_equal_the_whole_table_taken(tmp_path, monkeypatch):
    from tuiperf.load.cache import store

    monkeypatch.setattr(store, "_COMPRESSED_BATCH_ROWS", 1000)  # batches cut through rows
    opts = OpenOptions(cache_dir=tmp_path)
    open_trace(_cpu_bound(), opts).complete_all()  # the details into the entry
    first = open_trace(_cpu_bound(), opts)
    assert "kernels" in first.pending
    rows = np.array([0, 5, 999, 1000, 1001, 4321, first.tables["kernels"].num_rows - 1])
    got = first.rows_of("kernels", rows)
    assert "kernels" in first.pending  # read for those rows alone: the table not widened
    whole = open_trace(_cpu_bound(), opts).table("kernels").take(pa.array(rows))
    assert got.equals(whole)


# -- the command ---------------------------------------------------------------------------


def _tuiperf(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tuiperf", *args], capture_output=True, text=True, timeout=300
    )


def test_cli_max_events(tmp_path):
    path = str(_cpu_bound())
    cache = ["--cache-dir", str(tmp_path)]
    bad = _tuiperf("analyze", path, "--max-events", "-1", *cache)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().count("\n") == 0 and "--max-events" in bad.stderr
    out = _tuiperf("analyze", path, "--max-events", "30000", "-f", "json", *cache)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["sample"]
    assert got["whole_steps"] and got["events"] < got["total_events"]
    whole = _tuiperf("analyze", path, "--max-events", "0", "-f", "json", *cache)
    assert json.loads(whole.stdout)["sample"] is None


def test_without_startup_drops_only_the_start_up():
    trace = open_trace(_cpu_bound(), OpenOptions(use_cache=False))
    budget = analyze(trace).budget
    assert budget.startup_labels and budget.main.startup is not None
    plus = replace(budget, extra={**budget.extra, "startup_note": "x", "other": 1})
    got = sample.without_startup(plus)
    assert got.startup_labels == "" and all(d.startup is None for d in got.devices)
    assert got.extra == {k: v for k, v in plus.extra.items() if k != "startup_note"}
    assert got.main.steps == budget.main.steps and sample.without_startup(None) is None


@pytest.mark.parametrize("limit", [1, 2])
def test_a_tiny_limit_still_analyses_something(limit):
    trace = open_trace(_cpu_bound(), OpenOptions(use_cache=False))
    result = analyze(trace, options=AnalyzeOptions(max_events=limit))
    assert result.sample is not None and result.sample.span_ns > 0


def test_step_ranges_it_cannot_read_leave_a_cut_by_time(monkeypatch):
    from tuiperf.analysis.budget import steps

    def broken(ctx):  # type: ignore[no-untyped-def]
        raise ValueError("a damaged NVTX table")

    trace = open_trace(_cpu_bound(), OpenOptions(use_cache=False))
    limit = sample.n_events(trace) // 2
    assert sample.sampled(trace, limit)[0].whole_steps
    monkeypatch.setattr(steps, "from_ranges", broken)
    part = sample.sampled(trace, limit)
    assert part is not None and not part[0].whole_steps and part[0].span_ns > 0
