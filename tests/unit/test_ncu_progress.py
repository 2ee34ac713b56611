"""Opening an .ncu-rep reports progress result by result (the viewer showed 'open report 0%'
for the whole of a 45-kernel report, and Esc could act only at the end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import needs
from tests.support.data import unxz
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.load.progress import Progress

needs.module("ncu_report")

NCU = Path(__file__).resolve().parents[1] / "data" / "ncu"


def test_one_step_per_result_and_a_cancel_point() -> None:
    path = unxz(NCU / "lstm_basic.ncu-rep.xz")
    steps: list[Progress] = []
    km = open_ncu(path, OpenOptions(use_cache=False, progress=steps.append))
    reads = [s for s in steps if s.phase == "read kernel"]
    assert [s.done for s in reads] == list(range(1, len(km) + 1))
    assert reads[-1].fraction == 1.0 and steps[0].phase == "open report"

    class Stop(Exception):
        pass

    def cancel(step: Progress) -> None:  # what the viewer does when Esc was pressed
        if step.phase == "read kernel" and step.done == 3:
            raise Stop

    with pytest.raises(Stop):
        open_ncu(path, OpenOptions(use_cache=False, progress=cancel))
