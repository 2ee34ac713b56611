"""Issue 35 item 13: `b` on the timeline paints the GPU's idle time by cause once per GPU,
on the GPU group's header row, never over the stream lanes (a memset stream with one event
was painted whole), only over the steady steps the budget is about, and the status line
carries the legend: a glyph per cause, so colour is not the only difference. Checked on
cnn_osrt at 160x48, 80x24 and in --ascii against the causes' intervals of the step budget,
brute-forced per column."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from textual.pilot import Pilot

from tests.support.analysis import trace_of
from tests.tui.pilot_helpers import advice_app, advice_ready, screen_lines, sync
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import IDLE_PARTS, SHORT, Budget, step_budget
from tuiperf.report.budget import GLYPH
from tuiperf.tui.widgets.gap_colours import ASCII_GAP, GPU_TABLES, TINY
from tuiperf.tui.widgets.lane_render import frame_edges
from tuiperf.tui.widgets.timeline import Timeline


def budget() -> Budget:
    ref = step_budget(Ctx(trace_of("cnn_osrt")))
    assert ref is not None
    return ref


def merged(starts: np.ndarray, ends: np.ndarray) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(zip(starts.tolist(), ends.tolist(), strict=True)):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def expected(ref: Budget, edges: np.ndarray, glyphs: dict[str, str]) -> str:
    """Per column: the glyph of the cause with the most idle time inside the steady steps
    (first in IDLE_PARTS on a tie), blank where none."""
    d = ref.main
    lo, hi = min(s.start_ns for s in d.steps), max(s.end_ns for s in d.steps)
    parts = [p for p in IDLE_PARTS if p in d.idle_causes]
    pieces = {p: merged(*d.idle_causes[p]) for p in parts}
    cells = []
    for a, b in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
        a, b = min(max(a, lo), hi), min(max(b, lo), hi)
        time = [sum(max(0, min(e, b) - max(s, a)) for s, e in pieces[p]) for p in parts]
        best = max(time)
        cells.append(glyphs[parts[time.index(best)]] if best > 0 else " ")
    return "".join(cells)


def line(tl: Timeline, r: int) -> str:
    tl.top = r
    tl._cache.clear()
    return "".join(seg.text for seg in tl.render_line(1))


async def painted(pilot: Pilot[Any]) -> Timeline:
    await advice_ready(pilot)
    tl = pilot.app.query_one(Timeline)
    tl.focus()
    await pilot.press("b")
    await pilot.pause()
    assert tl.gap_colours is not None
    return tl


@pytest.mark.parametrize(("size", "ascii_only"), [((160, 48), False), ((80, 24), False),
                                                  ((80, 24), True)])  # fmt: skip
def test_causes_once_per_gpu_with_a_legend(size: tuple[int, int], ascii_only: bool) -> None:
    @sync
    async def run() -> None:
        app = advice_app(ascii_only=ascii_only)
        async with app.run_test(size=size) as pilot:
            tl = await painted(pilot)
            ref = budget()
            glyphs = ASCII_GAP if ascii_only else GLYPH
            causes = {glyphs[p] for p in ref.main.idle_causes}
            assert tl.lanes is not None
            step = ref.main.steps[2]
            for window in (None, (step.start_ns, step.end_ns)):  # the whole run, one step
                if window is not None:
                    tl.set_viewport(tl.vp.fit_range(*window))
                    await pilot.pause()
                gaps, tl.gap_colours = tl.gap_colours, None
                plain = [line(tl, r) for r in range(len(tl.rows))]
                tl.gap_colours = gaps
                headers, lanes = [], 0
                for r, row in enumerate(tl.rows):
                    text = line(tl, r)
                    if row.lane is None:
                        headers.append((tl.lanes.groups[row.group].label, text))
                        if not headers[-1][0].startswith("GPU 0"):  # other headers unpainted
                            assert text == plain[r], headers[-1][0]
                        continue
                    # no lane changes (the memset streams were painted whole)
                    assert text == plain[r], tl.lanes.lanes[row.lane].label
                    lanes += tl.lanes.lanes[row.lane].table in GPU_TABLES
                assert lanes >= 5
                # one header row does: the GPU's, the causes the budget finds per column
                gpu = [t[tl.label_width + 1 :] for label, t in headers if label.startswith("GPU 0")]
                assert len(gpu) == 1
                want = expected(ref, frame_edges(tl.vp), glyphs)
                assert gpu[0] == want.rstrip() or gpu[0].ljust(len(want)) == want
                assert set(want) & causes  # the check sees something painted
                assert len(headers) > len(gpu)  # other headers were compared
            # one step shows its data wait and CPU-bound issue
            for part in ("data", "cpu_bound"):
                assert step.parts.ns[part] > 0 and glyphs[part] in gpu[0]
            # the legend: a glyph and a word per cause, in the status line
            status = next(ln for ln in screen_lines(app) if "idle:" in ln)
            words = SHORT if size[0] > 100 else TINY
            for part in ref.main.idle_causes:
                assert f"{glyphs[part]} {words[part]}" in status, status
            if ascii_only:
                assert all(ln.isascii() for ln in screen_lines(app))
            await pilot.press("b")
            await pilot.pause()
            assert tl.gap_colours is None
            assert not any("idle:" in ln for ln in screen_lines(app))
            assert not set(line(tl, 0)[tl.label_width + 1 :]) & causes

    run()
