"""NVTX context and launch links of events in a real report (FORMATS.md §1.5)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.attribution import NvtxIndex, describe, launch_of, partner_of, work_of
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
    assert d.nvtx.lines()[0] == "none on the launching thread pt_autograd_0 (12579)"
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
    assert ctx.lines()[-1] == "this event has no NVTX context"
