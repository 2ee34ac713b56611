"""Trace.on_details is told around each deferred detail conversion (a failed one too); the
header names what converts in the background."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.conftest import nsys_report
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace, TraceMeta
from tuiperf.tui.widgets.header import header_text


def test_told_before_and_after_each_conversion_once(tmp_path: Path):
    t = open_trace(nsys_report("vit_range"), OpenOptions(cache_dir=tmp_path))
    assert set(t.pending) == {"api", "kernels"}
    said: list[tuple[str, bool]] = []
    t.on_details = lambda name, started: said.append((name, started))
    assert t.table("kernels")["registers"].null_count == 0
    t.table("kernels")  # converted once: nothing more to tell
    assert said == [("kernels", True), ("kernels", False)]


def test_told_the_end_of_a_failed_conversion(tmp_path: Path):
    t = open_trace(nsys_report("vit_range"), OpenOptions(cache_dir=tmp_path))
    said: list[tuple[str, bool]] = []
    t.on_details = lambda name, started: said.append((name, started))

    def fails() -> pa.Table:
        raise OSError("gone")

    t.pending["api"] = fails
    with pytest.raises(OSError):
        t.table("api")
    assert said == [("api", True), ("api", False)]
    assert "api" in t.pending  # still to do


@pytest.mark.parametrize(("ascii_only", "end"), [(False, "…"), (True, "...")])
def test_the_header_says_what_runs(ascii_only, end):
    t = Trace({}, TraceMeta(source="r.sqlite", format="nsys-sqlite"))
    busy = ["writing the lane index", "converting kernels details"]
    text = header_text("r.sqlite", t, ascii_only, busy).plain
    assert text.endswith("writing the lane index, converting kernels details" + end)
    assert not header_text("r.sqlite", t, ascii_only).plain.endswith(end)
