"""From an event to the next or previous one of the same name (a kernel's next launch)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.same_name import next_same_name


def test_next_and_previous_launch_of_a_kernel(nsys_dir: Path) -> None:
    trace = open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))
    k = trace.table("kernels", ["name", "start"])
    names = k["name"].cast("string")
    row = 100
    same = pc.indices_nonzero(pc.equal(names, names[row])).to_pylist()
    by_start = sorted(same, key=lambda r: (k["start"][r].as_py(), r))
    assert len(by_start) > 2  # the kernel launches several times: the walk means something
    i = by_start.index(row)
    assert next_same_name(trace, "kernels", row, 1) == by_start[i + 1]
    assert next_same_name(trace, "kernels", row, -1) == by_start[i - 1]
    assert next_same_name(trace, "kernels", by_start[-1], 1) is None
    assert next_same_name(trace, "kernels", by_start[0], -1) is None
    # walking the whole chain visits every launch once, in start order
    walk, r = [by_start[0]], by_start[0]
    while (r := next_same_name(trace, "kernels", r, 1)) is not None:
        walk.append(r)
    assert walk == by_start


def test_api_and_nvtx_by_name_and_tables_without_names(nsys_dir: Path) -> None:
    trace = open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))
    api = trace.table("api", ["name"])["name"].cast("string")
    launch = api.to_pylist().index("cudaLaunchKernel_v7000")
    nxt = next_same_name(trace, "api", launch, 1)
    assert nxt is not None and nxt != launch and api[nxt] == api[launch]
    text = trace.table("nvtx", ["text"])["text"].cast("string")
    step = text.to_pylist().index("forward")
    nxt = next_same_name(trace, "nvtx", step, 1)
    assert nxt is not None and text[nxt].as_py() == "forward"
    assert next_same_name(trace, "memcpy", 0, 1) is None


def test_base_names() -> None:
    from tuiperf.model.ncu.names import base_name

    long = (
        "void at::native::elementwise_kernel<128, 2, void at::native::gpu_kernel_impl_nocast<"
        "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]>"
        "(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)"
    )
    assert base_name(long) == "elementwise_kernel<…>"
    assert base_name("void elemWiseRNNcell<float, float, float, 2, 2>(int, int)") == (
        "elemWiseRNNcell<…>"
    )
    assert base_name("void foo(int)") == "foo"
    for plain in ("sm90_xmma_gemm_f32f32_tf32", "cudaLaunchKernel_v7000", "step 3", ""):
        assert base_name(plain) == plain
