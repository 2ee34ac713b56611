"""Range statistics (issue 34 item 5): the summaries, GPU busy and the step budget's parts
over a time window. Oracles: SQL over the nsys export with the same window (events crossing
both edges included), a per-nanosecond grid for GPU busy, hand arithmetic on a tiny trace,
and the step budget's own per-step parts for a window that is exactly one step."""

from __future__ import annotations

import csv
import io
import sqlite3

import numpy as np
import pytest

from tests.support.analysis import ctx_of, sqlite_path, trace_of
from tests.support.cli import assert_one_line_error, run_cli
from tests.support.tiny import busy_grid, gpu_table
from tests.support.tiny import trace_of as tiny_trace
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import PARTS
from tuiperf.analysis.budget.window import device_windows, range_stats
from tuiperf.summaries.window import Window, window_summaries

FIXTURE = "vit_range"


def _sql(query: str, *params: int) -> list[tuple]:
    con = sqlite3.connect(f"file:{sqlite_path(FIXTURE)}?mode=ro", uri=True)
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()


def _edge_window(table: str = "KERNEL") -> tuple[int, int]:
    """A window whose edges fall in the middle of an event of `table` each."""
    ks = _sql(f"SELECT start, end FROM CUPTI_ACTIVITY_KIND_{table} ORDER BY start")
    a, b = ks[len(ks) // 3], ks[len(ks) // 2]
    return (a[0] + a[1]) // 2, (b[0] + b[1]) // 2


def _sum_sql(table: str, name_col: str, lo: int, hi: int, clip: bool) -> dict[str, tuple]:
    dur = "MIN(t.end, ?) - MAX(t.start, ?)" if clip else "t.end - t.start"
    params = (hi, lo, hi, lo) if clip else (hi, lo)
    rows = _sql(
        f"SELECT s.value, COUNT(*), SUM({dur}) FROM {table} t JOIN StringIds s "
        f"ON s.id = t.{name_col} WHERE t.start < ? AND t.end > ? GROUP BY s.value",
        *params,
    )
    return {r[0]: (r[1], r[2]) for r in rows}


def _crossing(table: str, lo: int, hi: int) -> tuple[int, int]:
    """How many rows cross the left and the right edge."""
    left = _sql(f"SELECT COUNT(*) FROM {table} WHERE start < ? AND end > ?", lo, lo)[0][0]
    right = _sql(f"SELECT COUNT(*) FROM {table} WHERE start < ? AND end > ?", hi, hi)[0][0]
    return left, right


@pytest.mark.parametrize("clip", [False, True])
def test_kernel_sums_match_sql_over_the_window(clip: bool) -> None:
    lo, hi = _edge_window()
    assert _crossing("CUPTI_ACTIVITY_KIND_KERNEL", lo, hi) == (1, 1)
    got = window_summaries(trace_of(FIXTURE), Window(lo, hi, clip), ("cuda_gpu_kern_sum",))
    rows = got["cuda_gpu_kern_sum"].data.to_pylist()
    want = _sum_sql("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName", lo, hi, clip)
    assert {r["name"]: (r["count"], r["total_ns"]) for r in rows} == want


@pytest.mark.parametrize("clip", [False, True])
def test_api_sums_match_sql_over_the_window(clip: bool) -> None:
    lo, hi = _edge_window("RUNTIME")
    assert _crossing("CUPTI_ACTIVITY_KIND_RUNTIME", lo, hi) == (1, 1)
    trace = trace_of(FIXTURE)
    rows = window_summaries(trace, Window(lo, hi, clip), ("cuda_api_sum",))["cuda_api_sum"]
    want = _sum_sql("CUPTI_ACTIVITY_KIND_RUNTIME", "nameId", lo, hi, clip)
    got = {r["name"]: (r["count"], r["total_ns"]) for r in rows.data.to_pylist()}
    # nsys stats prints API names without their _v10000-like suffix
    assert sorted(got.values()) == sorted(want.values())
    assert sum(c for c, _ in got.values()) == sum(c for c, _ in want.values())


def test_whole_and_clipped_differ_by_the_parts_outside() -> None:
    """Counted whole, the two kernels on the edges add their parts outside the window."""
    lo, hi = _edge_window()
    outside = _sql(
        "SELECT SUM(MAX(? - start, 0) + MAX(end - ?, 0)) FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "WHERE start < ? AND end > ?",
        lo, hi, hi, lo,
    )[0][0]  # fmt: skip
    trace = trace_of(FIXTURE)
    whole = window_summaries(trace, Window(lo, hi), ("cuda_gpu_kern_sum",))
    cut = window_summaries(trace, Window(lo, hi, True), ("cuda_gpu_kern_sum",))
    total = [sum(t["cuda_gpu_kern_sum"].data["total_ns"].to_pylist()) for t in (whole, cut)]
    assert outside > 0
    assert total[0] - total[1] == outside


def test_gpu_busy_matches_a_nanosecond_grid() -> None:
    lo, hi = _edge_window()
    spans: list[tuple[int, int]] = []
    for table in ("KERNEL", "MEMCPY", "MEMSET"):
        spans += _sql(f"SELECT start, end FROM CUPTI_ACTIVITY_KIND_{table}")
    grid = busy_grid(spans, lo, hi)
    (dev,) = device_windows(ctx_of(FIXTURE), lo, hi)
    assert dev.busy_ns == int(grid.sum())
    assert dev.wall_ns == hi - lo
    assert dev.parts is not None
    assert sum(dev.parts.ns.values()) == hi - lo
    assert dev.parts.busy_ns == dev.busy_ns


def test_gpu_busy_per_device_on_two_gpus() -> None:
    """h100_2gpu_1s: two GPUs, each busy by its own work only (a 20 ms window cutting
    copies at its edges), against a per-ns grid of each device's SQL rows."""
    path = sqlite_path("h100_2gpu_1s")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    spans: dict[int, list[tuple[int, int]]] = {0: [], 1: []}
    for table in ("KERNEL", "MEMCPY", "MEMSET"):
        q = f"SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_{table}"
        for dev, a, b in con.execute(q):
            spans[dev].append((a, b))
    con.close()
    first = min(a for s in spans.values() for a, _ in s)
    lo, hi = first + 400_000_000, first + 420_000_000
    got = {d.device: d for d in device_windows(Ctx(trace_of("h100_2gpu_1s")), lo, hi)}
    assert sorted(got) == [0, 1]
    assert any(d.parts is not None for d in got.values())  # the budget's devices
    for dev, rows in spans.items():
        assert any(a < lo < b or a < hi < b for a, b in rows)  # work crosses an edge
        assert got[dev].busy_ns == int(busy_grid(rows, lo, hi).sum()), dev
        parts = got[dev].parts
        if parts is not None:
            assert sum(parts.ns.values()) == hi - lo and parts.busy_ns == got[dev].busy_ns


def test_a_window_of_one_step_gives_that_steps_budget() -> None:
    """The budget measured each steady step over its window: the same window asked for
    as a range gives the same parts, ns for ns."""
    ctx = ctx_of(FIXTURE)
    budget = ctx.budget
    assert budget is not None
    main = budget.devices[0]
    for step in main.steps:
        found = device_windows(ctx, step.start_ns, step.end_ns)
        (dev,) = [d for d in found if d.device == main.device]
        assert dev.parts is not None
        assert dev.parts.ns == step.parts.ns, step.label


# --- a tiny hand-built trace: the edges by hand --------------------------------------

#: kernels on device 0: one crossing the left edge, one crossing the right, one inside, one
#: ending on the left edge (out), one starting on the right edge (out), a zero-length one on
#: the left edge (in, 0 ns)
_KERNELS = [
    (0, 10, 0, 7, "a"),
    (5, 20, 0, 7, "b"),
    (30, 40, 0, 7, "a"),
    (2, 8, 0, 7, "c"),
    (35, 50, 0, 7, "c"),
    (8, 8, 0, 7, "z"),
]


def _tiny() -> Ctx:
    return Ctx(tiny_trace(kernels=gpu_table("kernels", _KERNELS)))


@pytest.mark.parametrize(
    ("clip", "want"),
    [
        # whole: a = 10 + 10 (2 events), b = 15, z = 0; c left out (ends on 8, starts on 35)
        (False, {"a": (2, 20), "b": (1, 15), "z": (1, 0)}),
        # clipped to [8, 35): a = (10-8) + (35-30) = 7, b = 20-8 = 12
        (True, {"a": (2, 7), "b": (1, 12), "z": (1, 0)}),
    ],
)
def test_tiny_trace_edges_by_hand(clip: bool, want: dict[str, tuple[int, int]]) -> None:
    got = window_summaries(_tiny().trace, Window(8, 35, clip), ("cuda_gpu_kern_sum",))
    rows = got["cuda_gpu_kern_sum"].data.to_pylist()
    assert {r["name"]: (r["count"], r["total_ns"]) for r in rows} == want


def test_tiny_trace_busy_and_range_table() -> None:
    # busy inside [8, 35): [8, 20) from a and b, [30, 35) from a: 12 + 5 = 17 of 27 ns
    (dev,) = device_windows(_tiny(), 8, 35)
    assert (dev.device, dev.busy_ns, dev.wall_ns) == (0, 17, 27)
    assert dev.parts is None  # no steps: no budget
    table = range_stats(_tiny(), Window(8, 35, True)).data.to_pylist()
    assert table[0] == {"section": "gpu", "device": "0", "count": None, "total_ns": 17,
                        "share_pct": pytest.approx(100 * 17 / 27), "name": "GPU busy"}  # fmt: skip
    kern = [(r["name"], r["count"], r["total_ns"]) for r in table if r["section"] == "kernels"]
    assert kern == [("b", 1, 12), ("a", 2, 7), ("z", 1, 0)]


# --- the command -----------------------------------------------------------------------


def test_cli_range_csv_against_sql(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lo, hi = _edge_window()
    out = tmp_path / "range.csv"
    res = run_cli("summary", str(sqlite_path(FIXTURE)), "--report", "range", "--start",
                  str(lo), "--end", str(hi), "--clip", "--csv", "-o", str(out),
                  "--no-cache")  # fmt: skip
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert list(rows[0]) == ["section", "device", "count", "total_ns", "share_pct", "name"]
    kern = {r["name"]: (int(r["count"]), int(r["total_ns"])) for r in rows
            if r["section"] == "kernels"}  # fmt: skip
    assert kern == _sum_sql("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName", lo, hi, True)
    gpu = [r for r in rows if r["section"] == "gpu"]
    assert gpu[0]["name"] == "GPU busy"
    assert sum(int(r["total_ns"]) for r in gpu[1:]) == hi - lo
    assert len(gpu) == 1 + len(PARTS)


def test_cli_windowed_kern_sum_counts_whole_by_default() -> None:
    lo, hi = _edge_window()
    res = run_cli("summary", str(sqlite_path(FIXTURE)), "--report", "kern", "--start", str(lo),
                  "--end", str(hi), "--format", "json", "--no-cache")  # fmt: skip
    assert res.returncode == 0, res.stderr
    import json

    doc = json.loads(res.stdout)
    assert doc["window"] == {"start_ns": lo, "end_ns": hi, "clip": False}
    got = {r["name"]: (r["count"], r["total_ns"]) for r in doc["rows"]}
    assert got == _sum_sql("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName", lo, hi, False)


@pytest.mark.parametrize(
    ("text", "name", "nth"), [("step 5", "step 5", 1), ("forward#3", "forward", 3)]
)
def test_cli_nvtx_range_as_the_window(text: str, name: str, nth: int) -> None:
    ranges = _sql(
        "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE COALESCE(n.text, s.value) = ? AND n.end > n.start ORDER BY n.start",
        name,
    )  # fmt: skip
    lo, hi = ranges[nth - 1]
    res = run_cli("summary", str(sqlite_path(FIXTURE)), "--report", "api", "--nvtx", text,
                  "--format", "json", "--no-cache")  # fmt: skip
    assert res.returncode == 0, res.stderr
    import json

    doc = json.loads(res.stdout)
    assert doc["window"] == {"start_ns": lo, "end_ns": hi, "clip": False}
    want = _sum_sql("CUPTI_ACTIVITY_KIND_RUNTIME", "nameId", lo, hi, False)
    assert sorted((r["count"], r["total_ns"]) for r in doc["rows"]) == sorted(want.values())


@pytest.mark.parametrize(
    "args",
    [
        ("--report", "kern", "--start", "20ms", "--end", "10ms"),
        ("--report", "step_budget", "--start", "10ms"),
        ("--report", "range", "--start", "99999s"),
        ("--report", "range", "--nvtx", "no such range"),
        ("--report", "range", "--nvtx", "step 5#0"),
        ("--report", "range", "--nvtx", "step 5#2"),
        ("--report", "range", "--nvtx", "step 5", "--end", "10ms"),
    ],
)
def test_cli_bad_windows_fail_in_one_line(args: tuple[str, ...]) -> None:
    res = run_cli("summary", str(sqlite_path(FIXTURE)), *args, "--no-cache")
    assert_one_line_error(res, 2)
    assert res.stdout == ""


def test_cli_a_time_that_is_not_one_is_a_usage_error() -> None:
    res = run_cli("summary", str(sqlite_path(FIXTURE)), "--report", "range", "--start", "soon")
    assert res.returncode == 2
    assert "argument --start: not a duration: 'soon'" in res.stderr
    assert "Traceback" not in res.stderr


def test_clip_keeps_zero_length_and_open_events() -> None:
    """An NVTX range without an end stays open (and out of nvtx_sum, as nsys leaves it)."""
    import pyarrow as pa

    from tuiperf.summaries.window import clip_table

    t = pa.table({
        "start": pa.array([0, 5, 9], pa.int64()),
        "end": pa.array([None, 12, 9], pa.int64()),
        "duration": pa.array([None, 7, 0], pa.int64()),
    })  # fmt: skip
    got = clip_table(t, Window(4, 10, True)).to_pydict()
    # the open range at 0 is a zero-length event before the window: out
    assert got == {"start": [5, 9], "end": [10, 9], "duration": [5, 0]}
    assert np.array_equal(clip_table(t, Window(0, 1, True))["end"].is_null(), [True])
