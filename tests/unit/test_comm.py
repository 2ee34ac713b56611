"""Communication kernels and collective ranges (analysis.budget.comm), per device, against
brute force.

The real NCCL run (tests/data/ranks/nccl1: world size 1 on one H200) has NCCL's own NVTX
ranges but no NCCL kernel (NCCL skips the kernel for one rank), and h100_2gpu_1s (2 GPUs) has
none either; so the kernel tests rename a real kernel of nccl1 that runs once a step to an
NCCL kernel name, and for the overlap test move it onto its own stream under the compute
kernel launched before it. Every figure is recomputed here from the tables.
"""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.conftest import DATA
from tuiperf.analysis.budget import comm
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import IDLE_PARTS
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import arrays as A
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.trace import Trace

NCCL_NAME = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
ONCE_A_STEP = "CatArrayBatchedCopy"  # torch.cat of the gradients, once a step


@pytest.fixture(scope="module")
def nccl1(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    out = tmp_path_factory.mktemp("nccl1") / "nccl1.sqlite"
    out.write_bytes(lzma.decompress((DATA / "ranks" / "nccl1.sqlite.xz").read_bytes()))
    t = open_trace(out, OpenOptions(use_cache=False))
    t.complete_all()
    return t


def _with_kernels(trace: Trace, **cols: pa.Array) -> Trace:
    k = trace.table("kernels")
    for name, arr in cols.items():
        k = k.set_column(k.schema.get_field_index(name), name, arr.cast(k.schema.field(name).type))
    return Trace({**trace.tables, "kernels": k}, trace.meta)


def _renamed(trace: Trace, shift: bool) -> tuple[Trace, np.ndarray]:
    """nccl1 with its once-a-step kernel renamed to an NCCL kernel; with `shift`, moved to
    stream 999 to start with the kernel launched just before it (so compute overlaps it)."""
    k = trace.table("kernels")
    names = A.strings(k, "name").astype(str)
    hit = np.char.find(names, ONCE_A_STEP) >= 0
    assert hit.sum() >= 10
    new = np.where(hit, NCCL_NAME, names)
    start, end, stream = A.ints(k, "start"), A.ints(k, "end"), A.ints(k, "stream")
    if shift:
        order = np.argsort(start, kind="stable")
        pos = np.searchsorted(start[order], start[hit]) - 1
        prev = order[pos]
        dur = end[hit] - start[hit]
        start, end, stream = start.copy(), end.copy(), stream.copy()
        start[hit] = start[prev]
        end[hit] = start[prev] + dur
        stream[hit] = 999
    t = _with_kernels(
        trace,
        name=pa.array(new),
        short_name=pa.array(new),
        start=pa.array(start),
        end=pa.array(end),
        duration=pa.array(end - start),
        stream=pa.array(stream),
    )
    return t, hit


def _merge(iv: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(a, b) for a, b in out]


def _covered(iv: list[tuple[int, int]], s: int, e: int) -> int:
    return sum(max(0, min(b, e) - max(a, s)) for a, b in iv)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "AllReduce"),
        ("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", "AllGather"),
        ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "ReduceScatter"),
        ("ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "Broadcast"),
        ("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "SendRecv"),
        ("ncclAllReduce", "AllReduce"),
        ("gloo:all_reduce", "AllReduce"),
        ("c10d::allgather_", "AllGather"),
        ("sm80_xmma_gemm_f32f32", ""),
    ],
)
def test_collective_type_from_the_name(name: str, kind: str) -> None:
    assert comm.collective_of(name) == kind


def test_nccl_ranges_of_the_real_run_are_collectives(nccl1: Trace) -> None:
    ctx = Ctx(nccl1)
    rows = comm.collective_ranges(ctx)
    nv = nccl1.table("nvtx")
    text = A.strings(nv, "text").astype(str)[rows]
    # the user's `allreduce` range holds NCCL's `ncclAllReduce`: the outer one counts, once
    # a step; NCCL's set-up ranges are not collectives
    n_steps = int(sum(t.startswith("step ") for t in A.strings(nv, "text").astype(str)))
    assert len(rows) == n_steps
    assert set(text) == {"allreduce"}
    assert comm.comm_kernel_mask(ctx).sum() == 0  # one rank: NCCL launches no kernel
    ref = (DATA / "ranks" / "reference" / "stats_nccl1_cuda_gpu_kern_sum.csv").read_text()
    assert "nccl" not in ref.lower()  # nsys stats agrees


def test_comm_kernels_by_device_against_brute_force(nccl1: Trace) -> None:
    for shift in (False, True):
        t, hit = _renamed(nccl1, shift)
        rows = comm.comm_by_device(Ctx(t))
        assert [(r.device, r.collective, r.count) for r in rows] == [(0, "AllReduce", hit.sum())]
        k = t.table("kernels")
        s, e = A.ints(k, "start"), A.ints(k, "end")
        compute = _merge(list(zip(s[~hit].tolist(), e[~hit].tolist(), strict=True)))
        hidden = sum(_covered(compute, a, b) for a, b in zip(s[hit], e[hit], strict=True))
        assert rows[0].total_ns == int((e[hit] - s[hit]).sum())
        assert rows[0].overlapped_ns == hidden
        assert rows[0].bytes is None  # the export keeps no payload values
        assert (hidden > 0) == shift


def test_exposed_comm_per_step_is_the_budget_part(nccl1: Trace) -> None:
    t, hit = _renamed(nccl1, shift=True)
    ctx = Ctx(t)
    by_step = comm.overlap_by_step(ctx)
    assert list(by_step) == [0]
    k = t.table("kernels")
    s, e = A.ints(k, "start"), A.ints(k, "end")
    compute = _merge(list(zip(s[~hit].tolist(), e[~hit].tolist(), strict=True)))
    nccl = _merge(list(zip(s[hit].tolist(), e[hit].tolist(), strict=True)))
    assert ctx.budget is not None
    for st, dev_step in zip(by_step[0], ctx.budget.main.steps, strict=True):
        a, b = dev_step.start_ns, dev_step.end_ns
        pieces = [(max(x, a), min(y, b)) for x, y in nccl if min(y, b) > max(x, a)]
        assert st.comm_ns == sum(y - x for x, y in pieces)
        assert st.overlapped_ns == sum(_covered(compute, x, y) for x, y in pieces)
        assert st.exposed_ns == dev_step.parts.ns["comm"]
    assert sum(st.overlapped_ns for st in by_step[0]) > 0


@pytest.mark.parametrize("n_devices", [4, 8])
def test_lanes_and_budget_per_device(nccl1: Trace, n_devices: int) -> None:
    """A report whose kernels span n devices (nccl1's kernels dealt round-robin by step):
    a lane group per device, and a budget per device whose busy time is that device's."""
    ctx0 = Ctx(nccl1)
    k = nccl1.table("kernels")
    step = ctx0.steps.index_of(ctx0.launch_time("kernels"))
    device = np.where(step >= 0, step % n_devices, 0)
    t = _with_kernels(nccl1, device=pa.array(device))
    groups = [g.key for g in build_lanes(t).groups if g.key.startswith("gpu:")]
    assert groups == [f"gpu:{d}" for d in range(n_devices)]
    budget = Ctx(t).budget
    assert budget is not None
    assert sorted(d.device for d in budget.devices) == list(range(n_devices))
    s, e = A.ints(k, "start"), A.ints(k, "end")
    for d in budget.devices:
        mine = _merge(list(zip(s[device == d.device].tolist(), e[device == d.device].tolist(),
                               strict=True)))  # fmt: skip
        for st in d.steps:
            assert st.parts.ns["compute"] == _covered(mine, st.start_ns, st.end_ns)


def test_two_gpu_report_has_a_budget_per_device(nsys_dir: Path) -> None:
    t = open_trace(nsys_dir / "h100_2gpu_1s.sqlite", OpenOptions(use_cache=False))
    budget = Ctx(t).budget
    assert budget is not None
    assert sorted(d.device for d in budget.devices) == sorted(
        set(A.ints(t.table("kernels"), "device").tolist())
    )


@pytest.fixture(scope="module")
def r2_rank0(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("r2") / "r2_rank0.sqlite"
    out.write_bytes(lzma.decompress((DATA / "ranks" / "r2_rank0.sqlite.xz").read_bytes()))
    return out


def test_exposed_gloo_collective_against_sql(r2_rank0: Path) -> None:
    """gloo's all-reduce runs on the CPU: its exposed time is the GPU idle time inside the
    loop's `allreduce` ranges, here recomputed with SQL over the export's raw tables."""
    import sqlite3

    from tuiperf.analysis.rules.comm import exposed_comm

    ctx = Ctx(open_trace(r2_rank0, OpenOptions(use_cache=False)))
    lc = comm.loop_comm(ctx)
    assert lc is not None and lc.source == "ranges"
    with sqlite3.connect(f"file:{r2_rank0}?mode=ro", uri=True) as db:
        text = "coalesce(n.text, s.value)"
        q = f"SELECT n.start, n.end, {text} FROM NVTX_EVENTS n LEFT JOIN StringIds s "
        ranges = db.execute(q + f"ON s.id = n.textId WHERE {text} = 'allreduce'").fetchall()
        steps = dict(
            (r[2], (r[0], r[1]))
            for r in db.execute(q + f"ON s.id = n.textId WHERE {text} LIKE 'step %'")
        )
        gpu = [
            (a, b)
            for t in ("KERNEL", "MEMCPY", "MEMSET")
            for a, b in db.execute(f"SELECT start, end FROM CUPTI_ACTIVITY_KIND_{t}")
        ]
    busy = _merge(gpu)
    for st in lc.steps:
        a, b = steps[st.label]
        inside = [(max(s, a), min(e, b)) for s, e, _ in ranges if min(e, b) > max(s, a)]
        assert st.calls == 1
        assert st.comm_ns == sum(e - s for s, e in inside)
        assert st.exposed_ns == sum((e - s) - _covered(busy, s, e) for s, e in inside)
    (f,) = exposed_comm(ctx)
    assert f.est_saving_ns == sum(s.exposed_ns for s in lc.steps)
    assert "bucket_cap_mb" in f.fix.text and "gradient_as_bucket_view" in f.fix.text
    # the GPU idle time inside the all-reduce is a budget idle part, which the finding claims
    assert f.budget_part in IDLE_PARTS


def test_exposed_gloo_collective_ranks_first(r2_rank0: Path) -> None:
    """Ranked by the step budget, the exposed collective is what the idle steps wait on: it
    outranks the host-sync finding that shares its budget part."""
    from tuiperf.analysis.engine import analyze

    res = analyze(open_trace(r2_rank0, OpenOptions(use_cache=False)))
    top = res.findings[0]
    assert top.rule == "exposed_comm"
    same = [f for f in res.findings if f.budget_part == top.budget_part]
    assert sum(f.est_saving_ns or 0 for f in same) <= res.budget.steady.ns[top.budget_part]


def test_loop_comm_prefers_kernels(nccl1: Trace) -> None:
    """With NCCL kernels the loop's collectives are the kernels (not NCCL's CPU ranges):
    one a step, exposed = the budget's comm part."""
    t, hit = _renamed(nccl1, shift=True)
    ctx = Ctx(t)
    lc = comm.loop_comm(ctx)
    assert lc is not None and lc.source == "kernels"
    assert len(lc.starts) == hit.sum()
    assert ctx.budget is not None
    for st, p in zip(lc.steps, ctx.budget.main.steps, strict=True):
        assert st.calls == 1
        assert st.exposed_ns == p.parts.ns["comm"]


def test_exposed_nccl_kernels_make_a_finding(nccl1: Trace) -> None:
    """The once-a-step NCCL kernel stretched over half the time to the next one: most of it
    is exposed, so the finding fires, claims the budget's comm part, lists the kernels."""
    from tuiperf.analysis.rules.comm import exposed_comm

    t, hit = _renamed(nccl1, shift=True)
    k = t.table("kernels")
    start, end = A.ints(k, "start").copy(), A.ints(k, "end").copy()
    rows = np.flatnonzero(hit)
    rows = rows[np.argsort(start[rows])]
    end[rows[:-1]] = start[rows[:-1]] + (start[rows[1:]] - start[rows[:-1]]) // 2
    t = _with_kernels(t, end=pa.array(end), duration=pa.array(end - start))
    ctx = Ctx(t)
    (f,) = exposed_comm(ctx)
    assert f.budget_part == "comm" and f.metrics["source"] == "kernels"
    assert f.metrics["by_device"] == [r.to_json() for r in comm.comm_by_device(ctx)]
    assert ctx.budget is not None
    assert f.est_saving_ns == ctx.budget.main.steady.ns["comm"]
