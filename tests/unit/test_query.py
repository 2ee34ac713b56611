"""The query layer: filters, stable sorts and per-name summaries over real reports."""

from __future__ import annotations

import csv
import re
import statistics

import numpy as np
import pytest

from tests.conftest import nsys_reference, nsys_report
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import columns as C
from tuiperf.model.timeline.query import Events, Query, QueryError
from tuiperf.model.trace import Trace
from tuiperf.summaries.cells import round_strings


def _open(name: str) -> Trace:
    return open_trace(nsys_report(name), OpenOptions(use_cache=False))


@pytest.fixture(scope="module")
def cnn() -> Events:
    return Events(_open("cnn_osrt"))


def _durations(ev: Events, kind: str) -> np.ndarray:
    return ev.trace.table(kind)["duration"].to_numpy(zero_copy_only=False)


def _names(ev: Events, kind: str) -> list[str]:
    t = ev.table(kind)
    return [t.names.match_labels[c] for c in t.names.codes]


# -- summaries equal `nsys stats` --------------------------------------------------------


def _summary_rows(ev: Events, kind: str) -> list[list[str]]:
    """Summary-mode rows of the unfiltered table, formatted as nsys stats prints them."""
    t = ev.table(kind)
    s = t.summary(t.run(Query(kind=kind)))
    o = s.order
    cols = [
        round_strings(s.time_pct[o], 1),
        [str(v) for v in s.total[o]],
        [str(v) for v in s.count[o]],
        round_strings(s.mean[o], 1),
        round_strings(s.median[o], 1),
        [str(v) for v in s.minimum[o]],
        [str(v) for v in s.maximum[o]],
        round_strings(s.stdev[o], 1),
    ]
    if s.styles is not None:
        cols.append([s.styles[i] for i in o])
    cols.append([s.names[i] for i in o])
    return [list(r) for r in zip(*cols, strict=True)]


def _reference(report: str, name: str) -> list[list[str]]:
    with open(nsys_reference(f"stats_{report}_{name}.csv"), newline="", encoding="utf-8") as f:
        return list(csv.reader(f))[1:]


@pytest.mark.parametrize("report", ["cnn_osrt", "vit_amp", "vit_range", "lstm"])
def test_kernel_summary_equals_cuda_gpu_kern_sum(report: str) -> None:
    ev = Events(_open(report))
    assert _summary_rows(ev, "kernels") == _reference(report, "cuda_gpu_kern_sum")


@pytest.mark.parametrize(
    ("kind", "ref"), [("api", "cuda_api_sum"), ("osrt", "osrt_sum"), ("nvtx", "nvtx_sum")]
)
def test_other_summaries_equal_nsys_stats(cnn: Events, kind: str, ref: str) -> None:
    assert _summary_rows(cnn, kind) == _reference("cnn_osrt", ref)


def test_memcpy_summary_matches_mem_time_sum_but_time_pct(cnn: Events) -> None:
    """Time % differs (nsys shares it with memsets); every other number is the same."""
    ref = {r[-1]: r[1:] for r in _reference("cnn_osrt", "cuda_gpu_mem_time_sum")}
    rows = _summary_rows(cnn, "memcpy") + _summary_rows(cnn, "memset")
    assert len(rows) == len(ref)
    for row in rows:
        assert row[1:-1] == ref[row[-1]][:-1]


def test_summary_of_filtered_rows_is_computed_over_them(cnn: Events) -> None:
    q = Query(text="elementwise", min_duration=2000)
    t = cnn.table("kernels")
    view = t.run(q)
    s = t.summary(view)
    groups: dict[str, list[int]] = {}
    names, durs = _names(cnn, "kernels"), _durations(cnn, "kernels")
    for i in view.indices:
        groups.setdefault(names[i], []).append(int(durs[i]))
    assert sorted(s.names) == sorted(groups)
    for g, name in enumerate(s.names):
        v = groups[name]
        assert s.total[g] == sum(v) and s.count[g] == len(v)
        assert s.median[g] == statistics.median(v)
        assert s.stdev[g] == pytest.approx(statistics.stdev(v) if len(v) > 1 else 0.0)
    assert s.time_pct.sum() == pytest.approx(100.0)


def test_summary_sort_is_stable_and_complete(cnn: Events) -> None:
    t = cnn.table("kernels")
    s = t.summary(t.run(Query()))
    by_count = s.sorted("count", descending=True)
    counts = s.count[by_count.order]
    assert list(counts) == sorted(counts, reverse=True)
    assert sorted(by_count.order) == list(range(len(s)))
    by_name = s.sorted("name", descending=False)
    assert [s.names[i] for i in by_name.order] == sorted(s.names)


# -- filters ---------------------------------------------------------------------------


def test_substring_is_case_insensitive_and_bang_inverts(cnn: Events) -> None:
    names = _names(cnn, "kernels")
    lower = cnn.run(Query(text="gemm"))
    upper = cnn.run(Query(text="GeMM"))
    inverted = cnn.run(Query(text="!gemm"))
    expected = [i for i, n in enumerate(names) if "gemm" in n.lower()]
    assert list(lower.indices) == expected == list(upper.indices)
    assert 0 < len(lower) < len(names)
    assert len(lower) + len(inverted) == len(names)
    assert not set(lower.indices) & set(inverted.indices)


def test_regex_toggle(cnn: Events) -> None:
    names = _names(cnn, "kernels")
    view = cnn.run(Query(text="^void at::.*reduce", regex=True))
    rx = re.compile("^void at::.*reduce", re.IGNORECASE)
    assert list(view.indices) == [i for i, n in enumerate(names) if rx.search(n)]
    assert len(view) > 0
    # without the toggle the same text is a literal substring: nothing has it
    assert len(cnn.run(Query(text="^void at::.*reduce"))) == 0


def test_bad_regex_is_a_query_error(cnn: Events) -> None:
    with pytest.raises(QueryError, match="regular expression"):
        cnn.run(Query(text="gemm(", regex=True))


def test_min_duration_and_window(cnn: Events) -> None:
    trace = cnn.trace.table("kernels")
    start = trace["start"].to_numpy()
    end = trace["end"].to_numpy()
    dur = trace["duration"].to_numpy()
    lo, hi = int(start[100]), int(start[400])
    view = cnn.run(Query(min_duration=5000, window=(lo, hi)))
    want = np.flatnonzero((dur >= 5000) & (start < hi) & (end > lo))
    assert list(view.indices) == list(want)
    assert 0 < len(view) < 300


def test_exact_name_filter_from_summary(cnn: Events) -> None:
    t = cnn.table("nvtx")
    view = t.run(Query(kind="nvtx", name=":forward"))
    texts = cnn.trace.table("nvtx")["text"].to_pylist()
    assert len(view) == 11 == sum(1 for x in texts if x == "forward")
    assert t.run(Query(kind="nvtx", text="forward")).indices.tolist() == view.indices.tolist()


def test_memcpy_and_memset_have_operation_names(cnn: Events) -> None:
    h2d = cnn.run(Query(kind="memcpy", text="host-to-device"))
    assert len(h2d) == 78  # FORMATS.md: cnn_osrt copies 78 pageable batches to the device
    assert len(cnn.run(Query(kind="memset", text="memset"))) == 125


# -- sorting ---------------------------------------------------------------------------


@pytest.mark.parametrize("descending", [False, True])
def test_sort_by_duration_is_stable(cnn: Events, descending: bool) -> None:
    dur = _durations(cnn, "kernels")
    view = cnn.run(Query(sort="duration", descending=descending))
    sign = -1 if descending else 1
    assert list(view.indices) == sorted(range(len(dur)), key=lambda i: (sign * dur[i], i))


def test_sort_by_multi_part_and_text_columns(cnn: Events) -> None:
    t = cnn.trace.table("kernels")
    grid = list(zip(*(t[c].to_pylist() for c in ("grid_x", "grid_y", "grid_z")), strict=True))
    view = cnn.run(Query(sort="grid"))
    assert list(view.indices) == sorted(range(len(grid)), key=lambda i: (grid[i], i))
    names = _names(cnn, "kernels")
    view = cnn.run(Query(sort="name", descending=True))
    got = [names[i] for i in view.indices]
    assert got == sorted(names, reverse=True)


def test_sort_accepts_export_names_and_rejects_unknown(cnn: Events) -> None:
    a = cnn.run(Query(sort="duration_ns")).indices
    b = cnn.run(Query(sort="duration")).indices
    assert list(a) == list(b)
    with pytest.raises(QueryError, match="no column"):
        cnn.run(Query(sort="colour"))


@pytest.mark.parametrize("text", ["gemm", "!gemm", "zzz-no-such-kernel"])
def test_filtered_sort_equals_sorted_filter(cnn: Events, text: str) -> None:
    """Both paths (mask a cached full order; sort the subset) give the same rows."""
    fresh = Events(cnn.trace)
    sub = fresh.run(Query(text=text, sort="duration", descending=True))
    fresh.table("kernels").order("duration", True)
    masked = fresh.run(Query(text=text, sort="duration", descending=True))
    assert list(sub.indices) == list(masked.indices)


def test_nulls_sort_last_both_ways() -> None:
    import pyarrow as pa

    from tuiperf import schema
    from tuiperf.model.timeline.query import EventTable
    from tuiperf.model.trace import TraceMeta

    n = 5
    t = schema.conform(
        "nvtx",
        {
            "start": pa.array([0, 1, 2, 3, 4]),
            "end": pa.array([5, None, 9, None, 6]),
            "duration": pa.array([5, None, 7, None, 2]),
            "text": pa.array(["b", "a", "b", "m", "a"]).dictionary_encode(),
            "style": pa.array(["PushPop", "Mark", "PushPop", "Mark", "StartEnd"]),
        },
        n,
    )
    et = EventTable("nvtx", t)
    assert list(et.run(Query(kind="nvtx", sort="duration")).indices) == [4, 0, 2, 1, 3]
    assert list(et.run(Query(kind="nvtx", sort="duration", descending=True)).indices) == [
        2, 0, 4, 1, 3,
    ]  # fmt: skip
    assert list(et.run(Query(kind="nvtx", min_duration=1)).indices) == [0, 2, 4]
    s = et.summary(et.run(Query(kind="nvtx")))  # marks are not ranges: left out
    assert sorted(zip(s.names, s.count.tolist(), strict=True)) == [(":a", 1), (":b", 2)]
    assert Trace({}, TraceMeta("x", "y")).table("nvtx").num_rows == 0


def test_position_of_follows_a_row_across_sorts(cnn: Events) -> None:
    a = cnn.run(Query(sort="start"))
    b = cnn.run(Query(sort="duration", descending=True))
    row = a.row(123)
    pos = b.position_of(row)
    assert pos is not None and b.row(pos) == row
    assert cnn.run(Query(text="!" + "x" * 3)).position_of(row) == 123
    assert cnn.run(Query(text="no-such-kernel-at-all")).position_of(row) is None


# -- cells and the Arrow view ----------------------------------------------------------


def test_to_arrow_has_raw_units_and_export_names(cnn: Events) -> None:
    view = cnn.run(Query(text="gemm", sort="duration", descending=True))
    table = view.to_arrow(C.columns("kernels"), limit=10)
    assert table.column_names[:3] == ["start_ns", "end_ns", "duration_ns"]
    assert "name" in table.column_names and "grid_x" in table.column_names
    base = cnn.trace.table("kernels")
    rows = view.indices[:10]
    assert table["duration_ns"].to_pylist() == base["duration"].take(rows).to_pylist()
    assert table["name"].to_pylist() == base["name"].take(rows).to_pylist()


def test_cells_are_human_and_names_cleaned() -> None:
    spec = C.find("kernels", "duration")
    assert spec is not None
    assert C.cell(spec, (1500,)) == "1.5 µs"
    assert C.cell(spec, (1500,), ascii_only=True) == "1.5 us"
    grid = C.find("kernels", "grid_y")
    assert grid is not None and C.cell(grid, (2, 3, 4)) == "2×3×4"
    assert C.cell(C.NAME, ("evil\x1b[31mred\x07",)) == "evilred"


def test_fit_drops_low_priority_columns_first() -> None:
    specs = C.columns("kernels")
    narrow = C.fit(specs, 80)
    keys = [c.key for c in narrow]
    assert {"start", "duration", "name"} <= set(keys)
    assert sum(c.width + 1 for c in narrow if c.key != "name") + 24 <= 80
    assert [c.key for c in C.fit(specs, 400)] == [c.key for c in specs]


def test_fixtures_exist() -> None:
    assert nsys_report("cnn_osrt").exists()


def test_parse_duration() -> None:
    from tuiperf.model.timeline.query import parse_duration

    assert parse_duration("2000") == 2000
    assert parse_duration("10us") == 10_000 == parse_duration("10 µs")
    assert parse_duration("1.5ms") == 1_500_000
    assert parse_duration(" 2 S ") == 2_000_000_000
    assert parse_duration("") is None
    with pytest.raises(QueryError):
        parse_duration("ten")
