"""Loader progress as data: the steps a real conversion reports, and the CLI's text of each."""

from __future__ import annotations

from pathlib import Path

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.load.progress import Progress


def test_an_nsys_conversion_reports_counted_steps(nsys_dir: Path) -> None:
    steps: list[Progress] = []
    open_trace(nsys_dir / "cnn_osrt.sqlite", OpenOptions(use_cache=False, progress=steps.append))
    reads = [s for s in steps if s.phase == "read tables"]
    n = len(reads)
    assert n > 1 and [s.done for s in reads] == list(range(1, n + 1))
    assert {s.total for s in reads} == {n}
    assert reads[0].fraction == 1 / n and reads[-1].fraction == 1.0
    assert "kernels" in {s.detail for s in reads}
    assert str(reads[1]) == f"read tables 2/{n}: {reads[1].detail}"


def test_the_text_of_a_step() -> None:
    assert str(Progress("build tables")) == "build tables"
    assert str(Progress("read events", detail="64 MiB")) == "read events: 64 MiB"
    assert str(Progress("read kernel", 11, 40)) == "read kernel 11/40"
    assert Progress("read kernel", 11, 40).fraction == 11 / 40
    assert Progress("write cache").fraction == 0.0  # not counted
