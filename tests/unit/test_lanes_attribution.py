"""NVTX context and launch links of events in a real report (FORMATS.md §1.5)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.attribution import NvtxIndex, describe, launch_of, partner_of, work_of
from tuiperf.model.trace import Trace


@pytest.fixture(scope="module")
def vit(nsys_dir: Path) -> Trace:
    return open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))


def first_kernel_of_thread(trace: Trace, tid: int) -> int:
    return pc.indices_nonzero(pc.equal(trace.table("kernels")["tid"], tid)).to_pylist()[50]


def test_main_thread_kernel_is_inside_its_ranges(vit):
    d = describe(vit, "kernels", 5)
    assert d.partner is not None and d.partner[0] == "api"
    assert [r.text for r in d.nvtx.own] == ["step 3", "forward"]
    assert dict(d.fields)["Launched by"].startswith("cudaLaunchKernel on python3")


def test_autograd_kernel_has_context_only_by_time(vit):
    row = first_kernel_of_thread(vit, 12579)
    d = describe(vit, "kernels", row)
    assert d.nvtx.own == []
    assert d.nvtx.lines()[0] == "no NVTX range open on its launching thread, pt_autograd_0 (12579)"
    ((thread, ranges),) = d.nvtx.others.items()
    assert thread == "python3 (12522)"
    assert [r.text for r in ranges] == ["step 3", "backward"]


def test_launch_links_both_ways(vit):
    api = launch_of(vit, "kernels", 5)
    assert vit.table("api")["correlation_id"][api] == vit.table("kernels")["correlation_id"][5]
    assert ("kernels", 5) in work_of(vit, api)
    assert partner_of(vit, "api", api) == ("kernels", 5)


def test_nvtx_range_lists_only_its_parents(vit):
    backward = vit.table("nvtx")["text"].to_pylist().index("backward")
    d = describe(vit, "nvtx", backward)
    assert [r.text for r in d.nvtx.own] == ["step 3"]


def test_an_event_outside_every_range_says_so(vit):
    index = NvtxIndex(vit)
    ctx = index.context(12522, 12522, 0)
    assert ctx.empty
    assert ctx.lines() == [
        "no NVTX range was open at this time, on its launching thread, python3 (12522) or any "
        "other thread"
    ]


def _kineto(name: str) -> Trace:
    return open_trace(Path(__file__).parents[1] / "data" / "kineto" / name, OpenOptions())


@pytest.mark.parametrize("report", ["vit_range", "cnn_osrt", "kineto_cnn.json.gz"])
def test_nvtx_sentences_read_right_on_every_event_kind(report: str, nsys_dir: Path) -> None:
    trace = (
        _kineto(report)
        if report.startswith("kineto")
        else open_trace(nsys_dir / f"{report}.sqlite", OpenOptions(use_cache=False))
    )
    seen = set()
    for table in ("kernels", "memcpy", "memset", "api", "osrt", "nvtx"):
        n = trace.table(table).num_rows
        for row in sorted({0, n // 3, n // 2, n - 1}) if n else []:
            lines = describe(trace, table, row).nvtx.lines()
            role = "launching thread" if table in ("kernels", "memcpy", "memset") else "thread"
            assert f"its {role}, " in lines[0], (table, lines)
            for line in lines:
                assert "the its" not in line and "thread thread" not in line, (table, line)
                assert "none on" not in line and "(None)" not in line, (table, line)
            seen.add(table)
    assert {"kernels", "api"} <= seen


def test_a_call_shows_its_return_value_only_when_recorded(vit, nsys_dir: Path) -> None:
    # OS runtime calls carry nsys's returnValue (OSRT_API, calls only: eventClass 27); the
    # CUDA API rows carry none (tuiperf does not load it) and torch.profiler records none:
    # no "Returned None" line for those
    import sqlite3

    db = sqlite3.connect(nsys_dir / "cnn_osrt.sqlite")
    want = db.execute(
        "SELECT returnValue FROM OSRT_API WHERE eventClass = 27 ORDER BY start, end LIMIT 1"
    ).fetchone()[0]
    cnn = open_trace(nsys_dir / "cnn_osrt.sqlite", OpenOptions(use_cache=False))
    osrt = cnn.table("osrt")
    first = pc.indices_nonzero(pc.equal(osrt["start"], pc.min(osrt["start"]))).to_pylist()[0]
    assert ("Returned", str(want)) in describe(cnn, "osrt", first).fields
    kineto = open_trace(
        Path(__file__).parents[1] / "data/kineto/kineto_cnn.json.gz", OpenOptions(use_cache=False)
    )
    for trace in (vit, kineto):
        assert trace.table("api").num_rows
        assert not [f for f in describe(trace, "api", 0).fields if f[0] == "Returned"]
