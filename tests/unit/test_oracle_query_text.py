"""The events table's text and export paths (model/timeline/query.py) that mutation found
no in-process test for: Query.describe/with_, EventTable.value/cells/warm, View.cells and
NameSummary.value/to_arrow. Hand-built kernels; every expected value is written out here
(or taken from the Arrow rows themselves, never from the function under test)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.support.tiny import kernels_trace
from tuiperf.model import columns as cols
from tuiperf.model.timeline.query import Events, Query

#: (start, end, device, stream, name): a 30 ns and a 10 ns "gemm", a 5 ns "relu"
ROWS = [(100, 130, 0, 7, "gemm"), (140, 150, 0, 7, "gemm"), (160, 165, 1, 9, "relu")]


def _events() -> Events:
    return Events(kernels_trace(ROWS))


@pytest.mark.parametrize(
    ("query", "text"),
    [
        (Query(), ""),
        (Query(text="gemm"), "gemm"),
        (Query(text="!gemm"), "!gemm"),  # the inverted filter shown as typed
        (Query(text="ge.m", regex=True), "re:ge.m"),
        (Query(name="relu"), "= relu"),
        (Query(min_duration=10_000), "≥ 10 µs"),
        (Query(window=(0, 5)), "window"),
        (Query(text="a", name="b", min_duration=1_500, window=(0, 1)), "a, = b, ≥ 1.5 µs, window"),
    ],
)
def test_describe_by_hand(query: Query, text: str) -> None:
    assert query.describe() == text


def test_describe_cuts_long_text_at_40() -> None:
    # 40 characters stay whole; 41 or more: 39 and an ellipsis (40 in all)
    assert Query(text="x" * 40).describe() == "x" * 40
    assert Query(text="x" * 45).describe() == "x" * 39 + "…"
    assert Query(text="x" * 39, regex=True).describe() == "re:" + "x" * 36 + "…"
    assert Query(name="y" * 40).describe() == "= " + "y" * 40
    assert Query(name="y" * 45).describe() == "= " + "y" * 39 + "…"


def test_with_changes_only_what_it_is_given() -> None:
    q = Query(text="gemm", sort="duration")
    r = q.with_(descending=True, min_duration=5)
    assert (r.text, r.sort, r.descending, r.min_duration) == ("gemm", "duration", True, 5)
    assert (q.descending, q.min_duration) == (False, None)


def test_values_before_and_after_warm() -> None:
    t = _events().table("kernels")
    arrow = t.table
    for row in range(len(ROWS)):
        for src in ("start", "end", "device", "stream"):
            assert t.value(src, row) == arrow.column(src)[row].as_py()
        assert t.value("name", row) == ROWS[row][4]
    t.warm(["start", "device"])
    assert [t.value("start", r) for r in range(3)] == [100, 140, 160]
    assert [t.value("device", r) for r in range(3)] == [0, 0, 1]


def test_cells_of_a_filtered_view() -> None:
    ev = _events()
    view = ev.run(Query(text="gemm", sort="duration", descending=True))
    assert [view.row(i) for i in range(len(view))] == [0, 1]  # 30 ns, then 10 ns
    specs = [s for s in cols.columns("kernels") if s.sources in (("name",), ("duration",))]
    assert sorted(s.sources for s in specs) == [("duration",), ("name",)]
    by_source = {s.sources: i for i, s in enumerate(specs)}
    first = view.cells(0, specs)
    assert first[by_source[("name",)]] == "gemm"
    assert first[by_source[("duration",)]] == "30 ns"
    assert view.cells(1, specs)[by_source[("duration",)]] == "10 ns"


def test_name_summary_values_and_export() -> None:
    ev = _events()
    table = ev.table("kernels")
    s = table.summary(ev.run(Query()))
    assert sorted(s.names) == ["gemm", "relu"]
    g = s.names.index("gemm")
    assert (s.value("count", g), s.value("total", g)) == (2, 40)
    assert s.value("minimum", g) == 10 and s.value("maximum", g) == 30
    assert s.value("style", g) is None  # only NVTX summaries have a style
    with pytest.raises(Exception, match="no summary column"):
        s.value("bogus", g)
    specs = cols.summary_columns("kernels")
    out = s.to_arrow(specs)
    assert isinstance(out, pa.Table) and out.column_names == [c.export for c in specs]
    # the nsys order: total time descending
    name_col = next(c.export for c in specs if c.key == "name")
    assert out.column(name_col).to_pylist() == ["gemm", "relu"]
    total_col = next(c.export for c in specs if c.key == "total")
    assert out.column(total_col).to_pylist() == [40, 5]


def test_an_empty_summary_exports_typed_columns() -> None:
    ev = _events()
    s = ev.table("kernels").summary(ev.run(Query(text="nothing-matches")))
    out = s.to_arrow(cols.summary_columns("kernels"))
    assert out.num_rows == 0 and out.schema.field("name").type == pa.string()
