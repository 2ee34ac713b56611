"""The ncu screen's depth views on the fp32/bf16 pair of tests/data/ncu_depth: a second
report as the baseline (`O`), the roofline (`R`), the memory chart (`M`), source hot
spots (`S`); Pilot tests at 80x24 and larger."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import needs
from tests.support.ncu_depth import report
from tests.tui.pilot_helpers import sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.screens.ncu import NcuScreen, NcuView, PathPrompt
from tuiperf.tui.widgets.metrics_pane import MetricsPane

needs.module("ncu_report")


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("ncu-depth-tui")
    return {d: report(d, tmp) for d in ("fp32", "bf16")}


def alone(path: Path) -> TuiperfApp:
    return TuiperfApp(None, OpenOptions(use_cache=False), name=path.name, ncu_path=path)


async def shown(pilot, kind: type) -> None:  # type: ignore[no-untyped-def]
    """Wait for a screen of `kind` (views are drawn by a worker)."""
    for _ in range(400):
        if isinstance(pilot.app.screen, kind):
            break
        await pilot.pause(0.05)
    await pilot.pause()


async def ready(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(600):
        if isinstance(pilot.app.screen, NcuScreen):
            break
        await pilot.pause(0.05)
    await pilot.pause()


def view(app: TuiperfApp) -> NcuView:
    return app.screen.query_one(NcuView)


def pane_text(app: TuiperfApp, width: int = 100) -> str:
    return app.screen.query_one("#ncu-metrics", MetricsPane).plain_text(width)


@sync
async def test_baseline_from_a_second_report(pair: dict[str, Path]) -> None:
    app = alone(pair["bf16"])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("O")
        await pilot.pause()
        assert isinstance(app.screen, PathPrompt)
        await pilot.press(*str(pair["fp32"]))
        await pilot.press("enter")
        for _ in range(400):
            await pilot.pause(0.05)
            if isinstance(app.screen, NcuScreen) and view(app).base_km is not None:
                break
        v = view(app)
        assert v.base_km is not None and v.base_pairs[0].baseline_id == 0
        await pilot.pause()
        text = pane_text(app, 120)
        assert "compared with ID 0 of fp32.ncu-rep" in text
        assert "names differ: matched by launch order" in text
        assert "base 0" in text and "Duration" in text
        await pilot.press("down", "down", "down", "down")  # the Triton kernel: same name
        await pilot.pause()
        text = pane_text(app, 120)
        assert "compared with ID 4 of fp32.ncu-rep" in text and "launch order" not in text
        await pilot.press("B")
        await pilot.pause()
        assert v.base_km is None and "compared with" not in pane_text(app, 120)


@sync
async def test_a_bad_baseline_path_is_a_notice(pair: dict[str, Path], tmp_path: Path) -> None:
    app = alone(pair["bf16"])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("O")
        await pilot.pause()
        await pilot.press(*str(tmp_path / "missing.ncu-rep"), "enter")
        for _ in range(100):
            await pilot.pause(0.05)
            if app._notifications:
                break
        assert view(app).base_km is None
        assert any("missing.ncu-rep" in n.message for n in app._notifications)


@sync
async def test_roofline_view_at_80x24(pair: dict[str, Path]) -> None:
    from tuiperf.tui.screens.ncu_views import TextView

    app = alone(pair["bf16"])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("down", "down", "down", "down")  # the Triton kernel: its ceilings
        await pilot.press("R")
        await shown(pilot, TextView)
        assert isinstance(app.screen, TextView)
        text = app.screen.plain_text()
        lines = text.splitlines()
        assert len(lines) <= 22 and max(len(line) for line in lines) <= 78
        assert "ceilings of kernel 4" in text and "A [4] triton_poi_fused" in text
        assert "E [3] reduce_kernel" in text and "FP16/BF16 tensor" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, NcuScreen)


@sync
async def test_memory_chart_view_at_80x24(pair: dict[str, Path]) -> None:
    from tuiperf.tui.screens.ncu_views import TextView

    app = alone(pair["fp32"])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("M")
        await shown(pilot, TextView)
        assert isinstance(app.screen, TextView)
        text = app.screen.plain_text()
        assert "Memory chart [0] sm80_xmma_gemm" in text and "L2 cache" in text
        assert len(text.splitlines()) <= 22
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, NcuScreen)


@sync
async def test_source_view_of_the_triton_kernel(pair: dict[str, Path]) -> None:
    from tuiperf.tui.screens.ncu_views import TextView

    app = alone(pair["fp32"])
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("down", "down", "down", "down")
        await pilot.press("S")
        await shown(pilot, TextView)
        assert isinstance(app.screen, TextView)
        text = app.screen.plain_text()
        assert "Source hot spots [4] triton_poi_fused_add_gelu_mul_0" in text
        assert "tmp5 = libdevice.erf(tmp4)" in text and "SASS, most samples first:" in text
        assert max(len(line) for line in text.splitlines()) <= 98


@sync
async def test_opened_with_two_reports(pair: dict[str, Path]) -> None:
    """`tuiperf bf16.ncu-rep fp32.ncu-rep`: the second report is the baseline."""
    from tuiperf.commands.open_tui import ncu_baseline

    assert ncu_baseline(pair["bf16"], pair["fp32"]) == pair["fp32"]
    assert ncu_baseline(pair["bf16"], None) is None
    app = TuiperfApp(None, OpenOptions(use_cache=False), name="bf16.ncu-rep",
                     ncu_path=pair["bf16"], ncu_baseline=pair["fp32"])  # fmt: skip
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        v = view(app)
        assert v.base_km is not None and len(v.base_pairs) == 5
        assert "compared with ID 0 of fp32.ncu-rep" in pane_text(app, 120)
