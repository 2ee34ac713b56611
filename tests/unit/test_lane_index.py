"""The per-lane split of a table (lane_split.split_table) against a brute-force grouping.

The oracle groups rows by their key tuple in plain Python, sorts each group by start
(stable: equal starts keep table order), repairs ends (missing or before the start: the
start), and computes the running maximum of ends, the union and its running busy sums by
walking the list. Tables come in several chunks, with nulls in the keys, keys of several
devices and processes, negative values and values too wide for a lookup table, and the
split's own chunk size is set small so that its chunks cut through lanes.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuiperf.model.timeline import lane_split

KEY_VALUES = {
    "pid": [None, 1, 2, 40_000],
    "device": [None, 0, 1, 3],
    "stream": [None, -1, 7, 13, 2**40],  # 2**40 is too wide for a lookup table
}


def brute(rows: list[dict], cols: tuple[str, ...]) -> dict[tuple, dict[str, list[int]]]:
    rows = [{**r, "start": 0 if r["start"] is None else r["start"]} for r in rows]
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(tuple(r[c] for c in cols), []).append(i)
    out = {}
    for key, idx in groups.items():
        idx = sorted(idx, key=lambda i: rows[i]["start"])  # stable
        starts = [rows[i]["start"] for i in idx]
        ends = []
        for i in idx:
            e = rows[i]["end"]
            ends.append(rows[i]["start"] if e is None or e < rows[i]["start"] else e)
        max_end, top = [], None
        for e in ends:
            top = e if top is None else max(top, e)
            max_end.append(top)
        u_start: list[int] = []
        u_end: list[int] = []
        # events that never overlap are their own union (touching ones too); else
        # events merge where one starts at or before the running end
        disjoint = all(ends[i] <= starts[i + 1] for i in range(len(starts) - 1))
        for s, e in zip(starts, ends):
            if u_start and not disjoint and s <= u_end[-1]:
                u_end[-1] = max(u_end[-1], e)
            else:
                u_start.append(s)
                u_end.append(e)
        cum, total = [], 0
        for s, e in zip(u_start, u_end):
            total += e - s
            cum.append(total)
        out[key] = {"starts": starts, "ends": ends, "rows": idx, "max_end": max_end,
                    "u_start": u_start, "u_end": u_end, "cum_busy": cum}  # fmt: skip
    return out


def as_table(rows: list[dict], cuts: list[int]) -> pa.Table:
    """`rows` as a table whose columns are chunked at `cuts`."""
    bounds = sorted({0, len(rows), *(c for c in cuts if 0 < c < len(rows))})
    cols = {}
    for name in ("start", "end", "pid", "device", "stream"):
        vals = [r[name] for r in rows]
        typ = pa.int32() if name == "device" else pa.int64()
        chunks = [pa.array(vals[a:b], typ) for a, b in itertools.pairwise(bounds)]
        cols[name] = pa.chunked_array(chunks or [pa.array([], typ)], typ)
    return pa.table(cols)


row = st.fixed_dictionaries(
    {
        "start": st.one_of(st.integers(0, 60), st.none()),
        "end": st.one_of(st.none(), st.integers(-5, 90)),
        **{k: st.sampled_from(v) for k, v in KEY_VALUES.items()},
    }
)


def check(t: pa.Table, rows: list[dict], cols: tuple[str, ...]) -> None:
    want = brute(rows, cols)
    got = lane_split.split_table(t, cols)
    assert set(got) == set(want)
    for key, iv in got.items():
        for field, values in want[key].items():
            assert getattr(iv, field).tolist() == values, (key, field)
            assert getattr(iv, field).dtype == np.int64, (key, field)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(row, max_size=60),
    cuts=st.lists(st.integers(0, 60), max_size=4),
    chunk=st.integers(1, 9),
    cols=st.sampled_from([("pid", "device", "stream"), ("pid",), ("device", "stream")]),
)
def test_split_equals_brute_force(rows, cuts, chunk, cols, monkeypatch_module):
    monkeypatch_module.setattr(lane_split, "SPLIT_CHUNK_ROWS", chunk)
    check(as_table(rows, cuts), rows, cols)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def _rows(values: list[int | None], col: str) -> list[dict]:
    base = {"pid": 1, "device": 0, "stream": 7}
    return [{**base, col: v, "start": i, "end": i + 1} for i, v in enumerate(values)]


@pytest.mark.parametrize("span", [lane_split.LOOKUP_MAX_SPAN, lane_split.LOOKUP_MAX_SPAN + 1])
def test_the_lookup_table_limit_either_side(span):
    """A column whose slots (null, then lowest..highest) number exactly LOOKUP_MAX_SPAN is
    coded by lookup, one more is hashed; the lanes are the same either way."""
    rows = _rows([None, 5, 5 + span - 2, 5, None, 5 + span - 2], "stream")
    t = as_table(rows, [2, 3])
    by_lookup = lane_split._lookup_codes(t, ("pid", "device", "stream"))
    assert (by_lookup is not None) == (span <= lane_split.LOOKUP_MAX_SPAN)
    check(t, rows, ("pid", "device", "stream"))


@pytest.mark.parametrize(("streams", "lookup"), [(3, True), (4, False)])
def test_the_combined_key_limit(streams, lookup, monkeypatch):
    """Two pids times `streams` streams: 6 combinations fit a limit of 6, 8 do not."""
    monkeypatch.setattr(lane_split, "_COMBINED_MAX", 6)
    rows = [{"pid": p, "device": 0, "stream": s, "start": p * 10 + s, "end": None}
            for p in (1, 2) for s in range(streams)]  # fmt: skip
    t = as_table(rows, [])
    assert (lane_split._lookup_codes(t, ("pid", "stream")) is not None) == lookup
    check(t, rows, ("pid", "stream"))


def test_lookup_codes_are_the_sorted_keys_and_text_is_hashed():
    rows = _rows([13, None, 7, 13, -1], "stream")
    t = as_table(rows, [1])
    code, keys = lane_split.key_codes(t, ("pid", "stream"))
    assert keys == [(1, None), (1, -1), (1, 7), (1, 13)]  # null first, then by value
    assert code.tolist() == [3, 0, 2, 3, 1]
    text = t.append_column("kind", pa.array(["b", "a", "b", "b", "a"]))
    assert lane_split._lookup_codes(text, ("pid", "kind")) is None
    code, keys = lane_split.key_codes(text, ("pid", "kind"))
    assert [keys[c] for c in code] == [(1, k) for k in ["b", "a", "b", "b", "a"]]


@pytest.mark.parametrize(("lanes", "dtype"), [(1 << 16, np.uint16), ((1 << 16) + 1, np.int32)])
def test_codes_are_uint16_up_to_65536_lanes(lanes, dtype):
    rows = _rows(list(range(lanes)), "stream")
    t = as_table(rows, [])
    code, keys = lane_split.key_codes(t, ("stream",))
    assert code.dtype == dtype and len(keys) == lanes
    assert code[-1] == lanes - 1 and keys[-1] == (lanes - 1,)


def test_equal_starts_keep_table_order_in_a_big_chunk():
    """Thousands of rows in one chunk, three lanes interleaved, starts repeating: each lane's
    rows with equal starts stay in table order (a stable grouping; an unstable sort of the
    lane codes would scramble them)."""
    rng = np.random.default_rng(7)
    n = 5000
    rows = [{"pid": 1, "device": 0, "stream": int(s), "start": i // 50, "end": i // 50 + 3}
            for i, s in enumerate(rng.integers(0, 3, n))]  # fmt: skip
    check(as_table(rows, [1234]), rows, ("pid", "device", "stream"))


def test_column_is_int64_a_view_where_it_can_be():
    one = pa.chunked_array([pa.array([1, 2, 3], pa.int64())])
    got = lane_split._column(one, 0)
    assert np.shares_memory(got, np.frombuffer(one.chunk(0).buffers()[1], np.int64))
    two = pa.chunked_array([pa.array([1, None], pa.int32()), pa.array([3], pa.int32())])
    got = lane_split._column(two, -9)
    assert got.dtype == np.int64 and got.tolist() == [1, -9, 3]
    empty = lane_split._column(pa.chunked_array([], pa.int64()), 0)
    assert empty.dtype == np.int64 and len(empty) == 0


def test_intervals_of_narrow_arrays_are_int64():
    from tuiperf.model.timeline.lane_intervals import Intervals

    iv = Intervals(np.array([3, 1], np.int32), np.array([4, 0], np.int32), np.arange(2))
    assert iv.starts.dtype == iv.ends.dtype == np.int64
    assert iv.starts.tolist() == [1, 3] and iv.ends.tolist() == [1, 4]


def test_one_lane_keeps_table_order_and_repairs_ends():
    rows = [
        {"pid": 1, "device": 0, "stream": 7, "start": 5, "end": 9},
        {"pid": 1, "device": 0, "stream": 7, "start": 3, "end": None},
        {"pid": 1, "device": 0, "stream": 7, "start": 5, "end": 2},
        {"pid": 1, "device": 0, "stream": 7, "start": 8, "end": 20},
    ]
    got = lane_split.split_table(as_table(rows, [1]), ("pid", "device", "stream"))
    iv = got[(1, 0, 7)]
    assert iv.rows.tolist() == [1, 0, 2, 3]
    assert iv.starts.tolist() == [3, 5, 5, 8]
    assert iv.ends.tolist() == [3, 9, 5, 20]
    assert iv.u_start.tolist() == [3, 5] and iv.u_end.tolist() == [3, 20]
    assert iv.cum_busy.tolist() == [0, 15]


def test_an_empty_table_has_no_lanes():
    assert lane_split.split_table(as_table([], []), ("pid",)) == {}


narrow_row = st.fixed_dictionaries(
    {
        "start": st.one_of(st.integers(0, 60), st.none()),
        "end": st.one_of(st.none(), st.integers(-5, 90)),
        # int8 once narrowed; -128 with nulls: the null slot (lowest - 1) does not fit int8
        **{k: st.sampled_from([None, -128, 0, 5, 127]) for k in ("pid", "device", "stream")},
    }
)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(narrow_row, max_size=40), cuts=st.lists(st.integers(0, 40), max_size=3))
def test_split_of_columns_stored_narrow_equals_brute_force(rows, cuts):
    """A cache entry stores the key columns narrow (load/cache/narrow.py): split as
    stored, the lanes are the brute-force ones all the same."""
    from tuiperf.load.cache import narrow

    t = narrow.core(as_table(rows, cuts))
    for c in ("pid", "device", "stream"):  # narrow, unless null in every row (kept: a hole)
        assert t.schema.field(c).type == pa.int8() or t[c].null_count == t.num_rows, c
    check(t, rows, ("pid", "device", "stream"))
    check(t, rows, ("stream",))
