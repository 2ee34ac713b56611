"""The pure viewport maths: window, zoom at an anchor, pan, clamping, ticks, labels, binning."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuiperf.model.fmt import duration_sig
from tuiperf.model.timeline.viewport import (
    ZOOM_FACTOR,
    Viewport,
    ZoomStack,
    bin_columns,
    nice_step,
    scale_label,
    ticks,
)


def vp(lo: float = 0, hi: float = 1e9, columns: int = 100) -> Viewport:
    return Viewport.fit(lo, hi, columns)


def test_fit_covers_the_whole_trace():
    v = vp(10, 1010, 100)
    assert (v.start, v.end) == (10, 1010)
    assert v.ns_per_col == 10
    assert v.is_full


def test_zoom_in_keeps_the_anchor_on_its_column():
    v = vp()
    anchor = 0.3e9
    col_before = (anchor - v.start) / v.ns_per_col
    z = v.zoom_in(anchor)
    assert z.span == pytest.approx(v.span / ZOOM_FACTOR)
    assert (anchor - z.start) / z.ns_per_col == pytest.approx(col_before)


def test_zoom_out_never_leaves_the_trace():
    v = vp().window(0.9e9, 0.95e9)
    for _ in range(20):
        v = v.zoom_out(v.end)
    assert (v.start, v.end) == (0, 1e9)


def test_zoom_in_stops_at_one_ns_per_column():
    v = vp(columns=80)
    for _ in range(200):
        v = v.zoom_in(0.5e9)
    assert v.ns_per_col == pytest.approx(1.0)
    assert v.start <= 0.5e9 <= v.end


def test_pan_is_clamped_at_both_ends():
    v = vp().window(0.1e9, 0.2e9)
    assert v.pan(-5).start == 0
    right = v.pan(50)
    assert right.end == 1e9 and right.span == pytest.approx(0.1e9)
    assert v.pan(0.5).start == pytest.approx(0.15e9)


def test_window_swaps_and_clamps():
    v = vp().window(0.6e9, 0.4e9)
    assert (v.start, v.end) == (0.4e9, 0.6e9)
    assert vp().window(-5, 2e9).is_full


def test_ensure_visible_pans_only_when_needed():
    v = vp().window(0.4e9, 0.5e9)
    assert v.ensure_visible(0.45e9, 0.46e9) is v
    moved = v.ensure_visible(0.7e9, 0.71e9)
    assert moved.start <= 0.7e9 and moved.end >= 0.71e9
    assert moved.span == pytest.approx(v.span)


def test_resize_keeps_the_scale_unless_showing_everything():
    assert vp(columns=100).with_columns(50).is_full
    v = vp().window(0.1e9, 0.2e9)
    w = v.with_columns(200)
    assert w.ns_per_col == pytest.approx(v.ns_per_col)
    assert w.start == pytest.approx(v.start)


@pytest.mark.parametrize(
    "raw,step", [(0.3, 1), (1, 1), (1.1, 2), (3, 5), (7, 10), (18, 20), (2100, 5000), (1e6, 1e6)]
)
def test_nice_step_is_1_2_5(raw, step):
    assert nice_step(raw) == step


def test_ticks_are_1_2_5_and_do_not_touch():
    v = vp(13.6e6, 186.2e6, 100)
    ts = ticks(v)
    assert [t.label for t in ts[:3]] == ["20 ms", "40 ms", "60 ms"]
    steps = {round(b.time - a.time) for a, b in itertools.pairwise(ts)}
    assert steps == {20_000_000}
    for a, b in itertools.pairwise(ts):
        assert a.col + len(a.label) < b.col


def test_ticks_follow_zoom():
    v = vp(0, 1e9, 100).window(15_100_000, 15_200_000)
    labels = [t.label for t in ticks(v)]
    assert labels[0] == "15.10 ms" and labels[1] == "15.11 ms"
    small = [t.label for t in ticks(vp(0, 2000, 100), ascii_only=True)]
    assert small and all(label.endswith(" us") for label in small)


@given(
    lo=st.integers(0, 10**12),
    span=st.integers(1, 10**12),
    cols=st.integers(10, 400),
    zoom=st.integers(0, 60),
)
def test_ticks_always_inside_and_increasing(lo, span, cols, zoom):
    v = vp(lo, lo + span, cols)
    for _ in range(zoom):
        v = v.zoom_in()
    ts = ticks(v)
    assert all(0 <= t.col < cols for t in ts)
    assert all(a.time < b.time and a.col < b.col for a, b in itertools.pairwise(ts))
    assert v.ns_per_col >= 1 - 1e-9


def test_scale_label_matches_the_ux_example():
    v = vp(0, 20e9, 100).window(12.40e9, 12.61e9)
    v = Viewport(v.lo, v.hi, v.start, v.end, 100_000)
    assert scale_label(v) == "12.40–12.61 s · 2.1 µs/col"
    assert scale_label(v, ascii_only=True) == "12.40-12.61 s | 2.1 us/col"


@pytest.mark.parametrize(
    "ns,text",
    [(2100, "2.1 µs"), (480, "480 ns"), (12e6, "12 ms"), (1.25e9, "1.2 s"), (1, "1.0 ns")],
)
def test_format_duration(ns, text):
    assert duration_sig(ns) == text


def test_binning_matches_edges():
    v = vp(0, 100, 10)
    edges = v.edges()
    assert list(edges[:3]) == [0, 10, 20]
    cols = bin_columns(edges, np.array([-1, 0, 9.9, 10, 99.9, 100]))
    assert list(cols) == [-1, 0, 0, 1, 9, 10]
    assert v.col_of(25) == 2 and v.time_of(2) == 20


def test_zoom_stack_pops_in_reverse():
    s = ZoomStack()
    v = vp()
    s.push(v)
    z = v.window(1e8, 2e8)
    s.push(z)
    assert s.pop(v).start == 1e8
    assert s.pop(v).is_full
    assert s.pop(v) is None and len(s) == 0
