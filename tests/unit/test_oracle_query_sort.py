"""Oracle: the events table's sort (model.timeline.query) against a brute force written
here: Python's `sorted` over the same rows with an explicit key per column (nulls last
whether ascending or descending, text by its string order, a multi-source column such as
the grid lexicographically), ties kept in row order (the report's order, by start). Also
the sort after a filter and within a time window, the cache of sort orders, the choice
between the cached order and a sort of the kept rows, the packed radix key's width at
its boundaries, and the per-name summary's re-sort (stable over the nsys order)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from tuiperf import schema
from tuiperf.model.timeline.query import (
    _NULL_LAST,
    Events,
    EventTable,
    Query,
    QueryError,
    View,
    _packed_key,
    _stable_order,
)
from tuiperf.model.trace import Trace, TraceMeta

NAMES = ["gemm", "Gemm", "axpy", "zeta", "b", "nccl", "a"]


def _random_rows(seed: int, n: int) -> list[dict[str, Any]]:
    """n kernels in start order; durations, registers and grid repeat (ties) and some
    registers and grids are null."""
    rng = np.random.default_rng(seed)
    rows, t = [], 0
    for _ in range(n):
        t += int(rng.integers(0, 5))  # equal starts too
        d = int(rng.choice([0, 3, 7, 7, 100, 2500, 70_000]))
        null_reg = rng.random() < 0.2
        null_grid = rng.random() < 0.15
        rows.append(
            {
                "start": t,
                "end": t + d,
                "duration": d,
                "device": int(rng.integers(0, 3)),
                "stream": int(rng.choice([7, 13, 2**40])),
                "name": NAMES[int(rng.integers(0, len(NAMES)))],
                "registers": None if null_reg else int(rng.choice([32, 64, 255])),
                "grid_x": None if null_grid else int(rng.choice([1, 96, 18432])),
                "grid_y": None if null_grid else int(rng.choice([1, 8])),
                "grid_z": None if null_grid else int(rng.choice([1, 3])),
            }
        )
    return rows


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    types = {"device": pa.int32(), "registers": pa.int32()}
    types |= {g: pa.int32() for g in ("grid_x", "grid_y", "grid_z")}
    c: dict[str, pa.Array] = {}
    for k in rows[0] if rows else _random_rows(0, 1)[0]:
        vals = [r[k] for r in rows]
        if k == "name":
            c[k] = pa.array(vals, pa.string()).dictionary_encode()
        else:
            c[k] = pa.array(vals, types.get(k, pa.int64()))
    c["short_name"] = c["name"]
    c["correlation_id"] = pa.array(range(1, len(rows) + 1), pa.int64())
    return schema.conform("kernels", c, len(rows))


def _events(rows: list[dict[str, Any]]) -> Events:
    return Events(Trace({"kernels": _table(rows)}, TraceMeta(source="tiny", format="test")))


SOURCES = {
    "start": ["start"],
    "duration": ["duration"],
    "stream": ["stream"],
    "name": ["name"],
    "registers": ["registers"],
    "grid": ["grid_x", "grid_y", "grid_z"],
}


def _brute(rows: list[dict[str, Any]], keep: list[int], sort: str, desc: bool) -> list[int]:
    """`keep` (row numbers) sorted by column `sort`, each source: nulls last, text by its
    string order; ties in row order."""

    def one(v: Any) -> tuple[int, Any]:
        if v is None:
            return (1, 0)
        if isinstance(v, str):
            r = sorted(set(NAMES)).index(v)
            return (0, -r if desc else r)
        return (0, -v if desc else v)

    return sorted(keep, key=lambda i: tuple(one(rows[i][s]) for s in SOURCES[sort]))


def _shown(view: View) -> list[int]:
    return [view.row(i) for i in range(len(view))]


@pytest.mark.parametrize("sort", list(SOURCES))
@pytest.mark.parametrize("desc", [False, True])
def test_whole_table_sort_against_brute_force(sort: str, desc: bool) -> None:
    rows = _random_rows(11, 300)
    ev = _events(rows)
    want = _brute(rows, list(range(len(rows))), sort, desc)
    assert _shown(ev.run(Query(sort=sort, descending=desc))) == want
    # the cached order again, and `order` itself
    assert _shown(ev.run(Query(sort=sort, descending=desc))) == want
    assert ev.table("kernels").order(sort, desc).tolist() == want


FILTERS: dict[str, dict[str, Any]] = {
    "narrow name": dict(text="zeta"),  # about 1/7 of the rows: sort of the kept rows
    "inverted name": dict(text="!zeta"),  # most rows: the cached order, masked
    "regex": dict(text="^g", regex=True),
    "min duration": dict(min_duration=100),
    "window": dict(window=(200, 420)),
    "window and name": dict(window=(100, 500), text="a"),
}


def _keep(rows: list[dict[str, Any]], f: dict[str, Any]) -> list[int]:
    out = []
    for i, r in enumerate(rows):
        name, s, e = str(r["name"]), int(r["start"]), int(r["end"])
        text = str(f.get("text", ""))
        if text.startswith("!") and text[1:].casefold() in name.casefold():
            continue
        if text and not text.startswith("!"):
            if f.get("regex"):
                if not name.casefold().startswith(text[1:].casefold()):
                    continue
            elif text.casefold() not in name.casefold():
                continue
        if "min_duration" in f and e - s < f["min_duration"]:
            continue
        if "window" in f:
            lo, hi = f["window"]
            if not (s < hi and (e > lo or s >= lo)):
                continue
        out.append(i)
    return out


@pytest.mark.parametrize("filt", list(FILTERS))
@pytest.mark.parametrize("sort", ["duration", "name", "registers", "grid"])
@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("cached_first", [False, True])
def test_sort_after_filter_against_brute_force(
    filt: str, sort: str, desc: bool, cached_first: bool
) -> None:
    rows = _random_rows(5, 400)
    ev = _events(rows)
    if cached_first:  # the whole table's order is cached before the filter comes
        ev.table("kernels").order(sort, desc)
    q = Query(sort=sort, descending=desc, **FILTERS[filt])
    want = _brute(rows, _keep(rows, FILTERS[filt]), sort, desc)
    assert want  # the filter keeps something
    assert _shown(ev.run(q)) == want


def test_equal_keys_keep_row_order_ascending_and_descending() -> None:
    # every duration equal: both directions give the rows in report order
    rows = _random_rows(3, 50)
    for r in rows:
        r["end"] = int(r["start"]) + 5
        r["duration"] = 5
    ev = _events(rows)
    for desc in (False, True):
        assert _shown(ev.run(Query(sort="duration", descending=desc))) == list(range(50))


def test_single_key_with_its_minimum_first_is_still_sorted() -> None:
    # the already-sorted shortcut must compare each row with the one before it
    k = np.array([1, 3, 2, 5, 4], np.int64)
    assert _stable_order([k]).tolist() == [0, 2, 1, 4, 3]
    assert _stable_order([np.array([1, 1, 2, 2], np.int64)]).tolist() == [0, 1, 2, 3]
    rows = _random_rows(2, 6)
    for i, d in enumerate([1, 30, 20, 50, 40, 60]):
        rows[i]["end"] = int(rows[i]["start"]) + d
        rows[i]["duration"] = d
    assert _shown(_events(rows).run(Query(sort="duration"))) == [0, 2, 1, 4, 3, 5]


def _bits(keys: list[np.ndarray]) -> int | None:
    packed = _packed_key(keys)
    return None if packed is None else packed[1]


def test_packed_key_width_at_its_boundaries() -> None:
    a = lambda *v: np.array(v, np.int64)  # noqa: E731
    assert _bits([a(7, 7, 7)]) == 1  # one value: one bit
    assert _bits([a(0, 1), a(3, 3)]) == 1
    assert _bits([a(0, 255, 3)]) == 8  # span 256: 8 bits exactly
    assert _bits([a(0, 256, 3)]) == 9  # span 257: 9 bits
    assert _bits([a(0, 100)]) == 7  # span 101 is not renumbered (≤ 2**16)
    assert _bits([a(0, 65535)]) == 16  # span 2**16 exactly: not renumbered
    assert _bits([a(0, 65536)]) == 1  # span 2**16 + 1: renumbered to two values
    assert _bits([a(0, 2**20 - 1)]) == 1  # span 2**20 exactly: renumbered
    assert _bits([a(0, 2**20)]) == 21  # wider: kept as it is
    base = 2**31
    assert _bits([a(base, base + 2**20)]) == 21  # offsets by the minimum
    assert _bits([a(0, 2**32 - 1)]) == 32  # 2**32 values: the widest two-pass key
    assert _bits([a(0, 2**32)]) is None
    assert _bits([a(0, 2**32 - 1), a(0, 1)]) is None  # 2**33 combined: too wide
    # nulls sort last as the maximum + 1
    assert _bits([a(3, _NULL_LAST, 5)]) == 2
    assert _bits([a(*range(255), _NULL_LAST)]) == 8
    assert _bits([a(_NULL_LAST, _NULL_LAST)]) == 1


@pytest.mark.parametrize(
    "values",
    [
        list(range(257)),  # 9 bits: the digit must not be cut to 8
        [0, 65535, 65534, 1, 0],
        [0, 2**32 - 1, 5, 2**16, 2**16 - 1],
        [5, _NULL_LAST, 3, 2**20 - 1, _NULL_LAST, 0],
    ],
)
def test_radix_paths_give_the_stable_order(values: list[int]) -> None:
    rng = np.random.default_rng(len(values))
    k = np.array(values * 3, np.int64)
    k = k[rng.permutation(len(k))]
    want = sorted(range(len(k)), key=lambda i: int(k[i]))
    assert _stable_order([k]).tolist() == want
    two = [k, k[::-1].copy()]
    want2 = sorted(range(len(k)), key=lambda i: (int(k[i]), int(two[1][i])))
    assert _stable_order(two).tolist() == want2


def test_orders_are_cached_at_most_six() -> None:
    rows = _random_rows(9, 60)
    t = _events(rows).table("kernels")
    assert t.order("duration") is t.order("duration", False)  # ascending by default
    assert not t.has_order("duration", True)
    assert t.has_order("duration", False)
    assert not t.has_order("no such column", False)
    keys = ["start", "end", "duration", "device", "stream", "name", "registers", "grid"]
    for desc in (False, True):
        for k in keys:
            got = t.order(k, desc)
            assert got.tolist() == _brute(rows, list(range(60)), k, desc) if k in SOURCES else True
            assert t.order(k, desc) is got  # the cached one
            assert t.has_order(k, desc)
            assert len(t._orders) <= 6


def test_cached_order_used_when_more_than_a_quarter_is_kept() -> None:
    # 100 rows: name "k" on exactly `n` of them
    def table(n: int) -> EventTable:
        rows = _random_rows(4, 100)
        for i, r in enumerate(rows):
            r["name"] = "k" if i < n else "other"
        return EventTable("kernels", _table(rows))

    for n, cached in [(20, False), (21, False), (25, False), (26, True), (100, True)]:
        t = table(n)
        view = t.run(Query(text="k" if n < 100 else "", sort="duration", descending=True))
        assert len(view) == n
        assert t.has_order("duration", True) is cached, n
        assert not t.has_order("duration", False)


def test_progress_says_filtering_then_sorting() -> None:
    said: list[str] = []
    _events(_random_rows(1, 5)).run(Query(sort="name"), said.append)
    assert said == ["filtering", "sorting"]


def test_unknown_sort_column_names_the_choices() -> None:
    with pytest.raises(QueryError, match=r"choose one of: start, end, duration, device"):
        _events(_random_rows(1, 5)).run(Query(sort="bogus"))


def test_summary_over_the_whole_table_after_a_duration_sort() -> None:
    rows = _random_rows(8, 200)
    ev = _events(rows)
    t = ev.table("kernels")
    t.order("duration", False)  # the summary takes the cached duration order
    s = t.summary(t.run(Query()))
    by: dict[str, list[int]] = {}
    for r in rows:
        by.setdefault(str(r["name"]), []).append(int(r["duration"]))
    got = {n: (c, tot) for n, c, tot in zip(s.names, s.count.tolist(), s.total.tolist())}
    assert got == {n: (len(v), sum(v)) for n, v in by.items()}
    med = dict(zip(s.names, s.median.tolist()))
    for n, v in by.items():
        v = sorted(v)
        assert med[n] == (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def test_summary_resort_is_stable_over_the_nsys_order() -> None:
    # 60 names, counts 1..3 only: many ties, more than insertion sort's 16
    rows: list[dict[str, Any]] = []
    proto = _random_rows(1, 1)[0]
    rng = np.random.default_rng(0)
    names = [f"k{i:02d}" for i in range(60)]
    t0 = 0
    for i, n in enumerate(names):
        for _ in range(1 + int(rng.integers(0, 3))):
            d = 10 + i % 4
            rows.append(proto | {"start": t0, "end": t0 + d, "duration": d, "name": n})
            t0 += 20
    t = EventTable("kernels", _table(rows))
    s = t.summary(t.run(Query()))
    base = s.base_order.tolist()
    for key in ("count", "name", "mean"):
        vals = s.values(key)
        for desc in (False, True):
            got = s.sorted(key, desc).order.tolist()
            if isinstance(vals, list):
                rank = {v: r for r, v in enumerate(sorted(vals))}
                k: list[float] = [rank[vals[g]] for g in base]
            else:
                k = [float(vals[g]) for g in base]
            want = [
                base[i] for i in sorted(range(len(base)), key=lambda i: -k[i] if desc else k[i])
            ]
            assert got == want, (key, desc)


# -- the rest of the query: names, filters, caches, the NVTX summary ----------------------


def _trace(**tables: pa.Table) -> Trace:
    return Trace(dict(tables), TraceMeta(source="tiny", format="test"))


def _plain(n: int, **cols: pa.Array) -> dict[str, pa.Array]:
    base = {
        "start": pa.array(range(0, 10 * n, 10), pa.int64()),
        "end": pa.array(range(5, 10 * n + 5, 10), pa.int64()),
        "duration": pa.array([5] * n, pa.int64()),
    }
    return base | cols


def test_memset_and_memcpy_names_and_filters() -> None:
    memset = schema.conform("memset", _plain(3), 3)
    memcpy = schema.conform(
        "memcpy",
        _plain(3, copy_kind=pa.array(["HtoD", "DtoH", "HtoD"]).dictionary_encode()),
        3,
    )
    ev = Events(_trace(memset=memset, memcpy=memcpy))
    name = [ev.table("memset").sort_spec("name")]
    v = ev.run(Query(kind="memset", text="MEMSET"))
    assert len(v) == 3
    assert {v.cells(i, name)[0] for i in range(3)} == {"[CUDA memset]"}
    assert len(ev.run(Query(kind="memset", name="[CUDA memset]"))) == 3
    c = ev.run(Query(kind="memcpy", sort="name"))
    cname = [ev.table("memcpy").sort_spec("name")]
    assert [c.cells(i, cname)[0] for i in range(3)] == [
        "[CUDA memcpy DtoH]",
        "[CUDA memcpy HtoD]",
        "[CUDA memcpy HtoD]",
    ]
    assert _shown(c) == [1, 0, 2]
    assert _shown(ev.run(Query(kind="memcpy", text="htod"))) == [0, 2]


def test_plain_string_and_null_names() -> None:
    # a name column that is not dictionary-encoded, with a null: '' is its name
    t = EventTable(
        "kernels",
        pa.table(_plain(4, name=pa.array(["gemm", None, "axpy", "gemm"], pa.string()))),
    )
    assert _shown(t.run(Query(text="GEMM"))) == [0, 3]
    assert _shown(t.run(Query(text="!gemm"))) == [1, 2]
    assert _shown(t.run(Query(name=""))) == [1]
    assert _shown(t.run(Query(sort="name"))) == [1, 2, 0, 3]  # '' < axpy < gemm
    s = t.summary(t.run(Query()))
    assert dict(zip(s.names, s.count.tolist())) == {"gemm": 2, "": 1, "axpy": 1}
    assert s.kind == "kernels"


def test_regex_is_case_insensitive_and_text_and_name_combine() -> None:
    rows = _random_rows(6, 80)
    ev = _events(rows)
    want = [i for i, r in enumerate(rows) if str(r["name"]).lower() == "gemm"]
    assert _shown(ev.run(Query(text="^GEMM$", regex=True))) == want
    # text and an exact name: both must hold
    assert len(ev.run(Query(text="zz", name="gemm"))) == 0
    want = [i for i, r in enumerate(rows) if r["name"] == "Gemm"]
    assert _shown(ev.run(Query(text="g", name="Gemm"))) == want
    # min duration with a name filter, and with a window
    want = [i for i, r in enumerate(rows) if r["name"] == "axpy" and int(r["duration"]) >= 100]
    assert _shown(ev.run(Query(text="axpy", min_duration=100))) == want
    f: dict[str, Any] = {"window": (50, 150), "min_duration": 7}
    assert _shown(ev.run(Query(**f))) == _keep(rows, f)


def test_min_duration_drops_null_durations() -> None:
    dur = pa.array([5, None, 50, None, 500], pa.int64())
    t = EventTable(
        "kernels",
        schema.conform(
            "kernels", _plain(5, duration=dur, name=pa.array(["a"] * 5).dictionary_encode()), 5
        ),
    )
    assert _shown(t.run(Query(min_duration=10))) == [2, 4]
    assert _shown(t.run(Query(min_duration=10, text="a"))) == [2, 4]


def test_tables_columns_and_summaries_are_cached() -> None:
    ev = _events(_random_rows(12, 40))
    t = ev.table("kernels")
    assert ev.table("kernels") is t
    assert t.value("stream", 3) == _random_rows(12, 40)[3]["stream"]  # read from Arrow
    assert t.column("start") is t.column("start")
    assert t.column("name") is t.column("name")
    v = t.run(Query())
    assert t.summary(v) is t.summary(v)
    for i, text in enumerate(["a", "b", "g", "z", "n", "e"]):
        w = t.run(Query(text=text))
        assert t.summary(w) is t.summary(w)
        assert len(t._summaries) == min(i + 2, 4)


def test_export_cleans_names() -> None:
    t = EventTable("kernels", pa.table(_plain(2, name=pa.array(["a\nb", "c"]).dictionary_encode())))
    out = t.run(Query()).to_arrow([t.sort_spec("name")])
    assert out.column(0).to_pylist() == ["a b", "c"]


def test_nvtx_summary_counts_ended_ranges_and_names_styles() -> None:
    nvtx = schema.conform(
        "nvtx",
        {
            "start": pa.array([0, 10, 20, 30, 40, 50], pa.int64()),
            "end": pa.array([5, None, 25, 35, 45, 55], pa.int64()),
            "text": pa.array(["r", "r", "r", "m", "q", "s"]).dictionary_encode(),
            "style": pa.array(
                ["PushPop", "PushPop", "StartEnd", "Mark", None, "PushPop"]
            ).dictionary_encode(),
        },
        6,
    )
    ev = Events(_trace(nvtx=nvtx))
    t = ev.table("nvtx")
    v = t.run(Query(kind="nvtx"))
    labels = t.names.labels
    assert sorted(labels[c] for c in t.names.codes) == ["m", "q", "r", "r", "r", "s"]
    s = t.summary(v)
    got = {(n, st): c for n, st, c in zip(s.names, s.styles or [], s.count.tolist())}
    # r/PushPop: row 0 only (row 1 never ended); r/StartEnd: row 2; s/PushPop: row 5
    assert got == {(":r", "PushPop"): 1, (":r", "StartEnd"): 1, (":s", "PushPop"): 1}
    assert sorted(s.values("style")) == ["PushPop", "PushPop", "StartEnd"]
    assert _shown(ev.run(Query(kind="nvtx", text="R"))) == [0, 1, 2]


def test_nvtx_summary_without_any_style_is_empty() -> None:
    nvtx = schema.conform(
        "nvtx",
        {
            "start": pa.array([0, 10], pa.int64()),
            "end": pa.array([5, 15], pa.int64()),
            "text": pa.array(["r", "s"]).dictionary_encode(),
        },
        2,
    )
    t = Events(_trace(nvtx=nvtx)).table("nvtx")
    assert len(t.summary(t.run(Query(kind="nvtx")))) == 0


def test_error_messages_name_the_choices() -> None:
    from tuiperf.errors import UsageError
    from tuiperf.model.timeline.query import parse_duration

    with pytest.raises(UsageError, match=r"unknown table 'bogus'; choose one of: kernels, memcpy"):
        EventTable("bogus", pa.table({}))
    with pytest.raises(QueryError, match=r"not a duration: 'ten'"):
        parse_duration("ten")
    t = _events(_random_rows(1, 5)).table("kernels")
    with pytest.raises(QueryError, match=r"no summary column 'bogus'"):
        t.summary(t.run(Query())).values("bogus")


def test_graphs_rows_carry_their_launch_call_and_sort_by_it() -> None:
    graphs = schema.conform(
        "graphs",
        _plain(
            3,
            pid=pa.array([1, 1, 1], pa.int64()),
            correlation_id=pa.array([7, 8, 9], pa.int64()),
            name=pa.array(["g", "g", "g"]).dictionary_encode(),
        ),
        3,
    )
    api = schema.conform(
        "api",
        _plain(
            2,
            pid=pa.array([1, 1], pa.int64()),
            correlation_id=pa.array([9, 7], pa.int64()),
            name=pa.array(["cudaGraphLaunch", "cuGraphLaunch"]).dictionary_encode(),
        ),
        2,
    )
    ev = Events(_trace(graphs=graphs, api=api))
    t = ev.table("graphs")
    assert ev.table("graphs") is t
    assert [t.value("launch", i) for i in range(3)] == ["cuGraphLaunch", None, "cudaGraphLaunch"]
    # nulls last either way ('G' sorts before 'd')
    assert _shown(ev.run(Query(kind="graphs", sort="launch"))) == [0, 2, 1]
    assert _shown(ev.run(Query(kind="graphs", sort="launch", descending=True))) == [2, 0, 1]


def test_cells_are_unicode_unless_asked_and_values_come_from_arrow() -> None:
    rows = _random_rows(13, 30)
    i = next(j for j, r in enumerate(rows) if r["grid_x"] is not None)
    ev = _events(rows)
    t = ev.table("kernels")
    grid = [t.sort_spec("grid")]
    want = "{grid_x}×{grid_y}×{grid_z}".format(**rows[i])
    v = ev.run(Query())  # start order: row i is shown at position i
    assert v.cells(i, grid) == [want]
    assert t.cells(i, grid) == [want]
    assert v.cells(i, grid, ascii_only=True) == [want.replace("×", "x")]
    # a value of a column not read into numpy is read from Arrow, and stays unread
    assert t.value("stream", i) == rows[i]["stream"]
    assert "stream" not in t._cols
