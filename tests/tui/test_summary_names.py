"""Issue 35 item 6 in the viewer: summary mode with base names (`S`, `B`) on vit_range shows
its three cutlass GEMMs as three names (they were `Kernel2<…>` three times), at 80x24 and
160x48; and the details pane follows the summary's cursor: each row selects the first
launch of its name. Names and start times come from the report with sqlite3."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import nsys_path
from tests.tui.pilot_helpers import plain, ready, screen_lines, settle, sync
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.widgets.timeline import Timeline


def first_starts(path: Path) -> dict[str, int]:
    """Each kernel name's first start (ns, the report's clock, as tuiperf keeps it)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        sql = (
            "SELECT s.value, MIN(k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value"
        )
        return {name: int(t) for name, t in con.execute(sql)}
    finally:
        con.close()


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_summary_base_names_tell_the_gemms_apart(nsys_dir: Path, size: tuple[int, int]) -> None:
    path = nsys_path(nsys_dir, "vit_range")
    gemms = sorted(n for n in first_starts(path) if n.startswith("void cutlass::Kernel2<"))
    tags = [re.search(r"_(nn|nt|tn)_align\d", n).group(0)[1:] for n in gemms]  # type: ignore[union-attr]
    assert len(gemms) == 3

    @sync
    async def run() -> None:
        app = TuiperfApp(path, OpenOptions(use_cache=False), name="vit_range")
        async with app.run_test(size=size) as pilot:
            await ready(pilot)
            await pilot.press("2", "S", "B", "slash", *"Kernel2", "enter")
            await settle(pilot, 0.3)
            lines = [ln for ln in screen_lines(app) if "Kernel2<…" in ln]  # not the details
            assert len(lines) == 3, "\n".join(screen_lines(app))
            for tag in tags:  # each GEMM's own layout, whole, on its own row
                assert sum(tag in ln for ln in lines) == 1, (tag, lines)

    run()


@sync
async def test_the_details_follow_the_summary_cursor(nsys_dir: Path) -> None:
    path = nsys_path(nsys_dir, "vit_range")
    starts = first_starts(path)
    app = TuiperfApp(path, OpenOptions(use_cache=False), name="vit_range")
    async with app.run_test(size=(160, 48)) as pilot:
        table = await ready(pilot)
        await pilot.press("2", "S")
        await settle(pilot)
        tl = app.query_one(Timeline)
        trace = tl.trace
        assert trace is not None and table.summary is not None
        seen = []
        for _ in range(3):
            await pilot.press("down")
            await settle(pilot)
            name = table.state.name_at(table.body.cursor)
            sel = tl.state.selection
            assert name is not None and sel is not None and sel.table == "kernels"
            row = trace.table("kernels").slice(sel.row, 1).to_pylist()[0]
            assert row["name"] == name
            assert row["start"] == starts[name]  # the name's first launch, as the report has it
            seen.append(name)
            details = "".join(plain(app.query_one("#details").content).split())
            assert "".join(name.split())[:60] in details.replace("│", "")
        assert len(set(seen)) == 3
