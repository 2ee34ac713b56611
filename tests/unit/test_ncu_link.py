"""Matching Nsight Compute results to nsys kernel launches, on the real fixtures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import nsys_path
from tests.support import needs
from tests.support.ncu_data import decompress, rep
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.ncu import link as L
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.model.timeline.attribution import NvtxIndex
from tuiperf.model.trace import Trace

needs.module("ncu_report")


@pytest.fixture(scope="module")
def ncu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return decompress(tmp_path_factory)


@pytest.fixture(scope="module")
def vit(ncu_dir: Path) -> KernelMetrics:
    return open_ncu(rep(ncu_dir, "vit_full"), OpenOptions(use_cache=False))


@pytest.fixture(scope="module")
def lstm(ncu_dir: Path) -> KernelMetrics:
    return open_ncu(rep(ncu_dir, "lstm_basic"), OpenOptions(use_cache=False))


def _trace(nsys_dir: Path, name: str) -> Trace:
    return open_trace(nsys_path(nsys_dir, name), OpenOptions(use_cache=False))


def _col(trace: Trace, name: str, rows: np.ndarray) -> list:
    return trace.table("kernels").take(rows)[name].to_pylist()


@pytest.mark.parametrize("name", ["vit_range", "vit_amp"])
def test_every_vit_kernel_is_found_by_mangled_name(nsys_dir: Path, vit: KernelMetrics, name):
    trace = _trace(nsys_dir, name)
    link = L.build_link(trace, vit)
    assert link.matched_on == "mangled name"
    assert link.unmatched_ncu == []
    for kid in vit.kernel_ids():
        rows = link.rows_for(kid)
        assert len(rows) > 0
        assert set(_col(trace, "mangled_name", rows)) == {vit.kernel(kid).mangled}
        for r in rows[:20].tolist():
            assert kid in link.ids_for_row(r)
    # a launch with no ncu result has a kernel name ncu did not profile, or another launch
    # configuration or NVTX context than every result of its name (another call site)
    configs: dict[str, set[tuple]] = {}
    for kid in vit.kernel_ids():
        kern = vit.kernel(kid)
        configs.setdefault(kern.mangled, set()).add((*kern.grid, *kern.block))  # type: ignore[misc]
    index = NvtxIndex(trace)
    k = trace.table("kernels")
    dims = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
    for r in np.flatnonzero(~link.mask).tolist():
        rec = k.slice(r, 1).to_pylist()[0]
        if rec["mangled_name"] in configs:
            own = [x.text for x in index.context(rec["pid"], rec["tid"], rec["start"] - 1).own]
            other_config = tuple(rec[d] for d in dims) not in configs[rec["mangled_name"]]
            assert other_config or own[1:] != ["forward"], (r, own)
    assert len(link.unmatched_nsys) > 0
    assert not set(link.unmatched_nsys) & set(link.by_name)


def test_nvtx_context_counts_the_autograd_thread(nsys_dir: Path, vit: KernelMetrics):
    """vit_full's 7 kernels were profiled in `step 3 > forward` on the main thread: they are
    the trace's first 7 launches of step 3, and the launches of the same kernels from the
    autograd thread (backward, no ranges of their own there) are not theirs."""
    trace = _trace(nsys_dir, "vit_range")
    link = L.build_link(trace, vit)
    k = trace.table("kernels")
    first = [int(link.exact_rows_for(kid)[0]) for kid in vit.kernel_ids()]
    assert all(len(link.exact_rows_for(kid)) == 1 for kid in vit.kernel_ids())
    assert first == sorted(first) and first == list(range(first[0], first[0] + 7))
    index = NvtxIndex(trace)
    main_tid = k["tid"][first[0]].as_py()
    autograd = 0
    for kid in vit.kernel_ids():
        for r in link.rows_for(kid).tolist():
            rec = k.slice(r, 1).to_pylist()[0]
            assert rec["tid"] == main_tid
            own = [x.text for x in index.context(rec["pid"], rec["tid"], rec["start"] - 1).own]
            assert own[1:] == ["forward"]
        same = np.flatnonzero(
            np.array(k["mangled_name"].to_pylist(), dtype=object) == vit.kernel(kid).mangled
        )
        autograd += sum(1 for r in same.tolist() if k["tid"][r].as_py() != main_tid)
        for r in same.tolist():
            if k["tid"][r].as_py() != main_tid:
                assert not link.has(r) and link.describe(r) == "no ncu result"
    assert autograd > 0  # the fixture really launches these kernels from the autograd thread


def test_launch_configuration_tells_apart_one_mangled_name(nsys_dir: Path, vit: KernelMetrics):
    """ncu IDs 0-2 are one kernel launched with grids 1, 72 and 1536 blocks."""
    trace = _trace(nsys_dir, "vit_range")
    link = L.build_link(trace, vit)
    assert len({vit.kernel(k).mangled for k in (0, 1, 2)}) == 1
    for kid in (0, 1, 2):
        rows = link.rows_for(kid)
        assert set(_col(trace, "grid_x", rows)) == {vit.kernel(kid).grid[0]}  # type: ignore[index]
        exact = link.exact_rows_for(kid)
        assert len(exact) == 1 and link.level(int(exact[0])) == L.ORDER
    # a launch with a grid that ncu never profiled is left without a result
    grids = {vit.kernel(kid).grid[0] for kid in (0, 1, 2)}  # type: ignore[index]
    same = np.flatnonzero(
        np.array(trace.table("kernels")["mangled_name"].to_pylist(), dtype=object)
        == vit.kernel(0).mangled
    )
    other = [r for r in same.tolist() if _col(trace, "grid_x", np.array([r]))[0] not in grids]
    assert other and not any(link.has(r) for r in other)


def test_nvtx_and_launch_order_pick_one_result(nsys_dir: Path, lstm: KernelMetrics):
    """lstm_basic holds the first 30 kernels of `step 3 > forward`; twelve launches of one
    GEMM share name, grid and block, so the k-th GEMM in step 3's forward is ncu's k-th."""
    trace = _trace(nsys_dir, "lstm")
    link = L.build_link(trace, lstm)
    assert link.unmatched_ncu == []
    index = NvtxIndex(trace)
    k = trace.table("kernels")
    gemm = [kid for kid in lstm.kernel_ids() if lstm.kernel(kid).name.startswith("sm90_xmma")]
    gemm = [kid for kid in gemm if lstm.kernel(kid).grid == (70, 1, 1)]
    assert len(gemm) == 12
    starts = []
    for kid in gemm:
        exact = [r for r in link.rows_for(kid).tolist() if link.ids_for_row(r) == (kid,)]
        assert exact, kid
        in_step3 = []
        for r in exact:
            rec = k.slice(r, 1).to_pylist()[0]
            ctx = index.context(rec["pid"], rec["tid"], rec["start"] - 1)
            if [x.text for x in ctx.own] == ["step 3", "forward"]:
                in_step3.append(r)
                assert link.level(r) == L.ORDER
        assert len(in_step3) == 1, kid
        starts.append(rec_start(k, in_step3[0]))
    assert starts == sorted(starts)  # ncu's launch order is the trace's launch order


def rec_start(k, row: int) -> int:
    return k["start"][row].as_py()


def test_numbers_in_range_names_are_ignored_as_a_fallback(nsys_dir: Path, lstm: KernelMetrics):
    trace = _trace(nsys_dir, "lstm")
    link = L.build_link(trace, lstm)
    levels = set(link.level_of_row[link.rows_for(4)].tolist())
    assert L.NVTX_LOOSE in levels and L.ORDER in levels


def test_by_kernel_name_when_the_trace_has_no_mangled_names(nsys_dir: Path, vit: KernelMetrics):
    import pyarrow as pa

    trace = _trace(nsys_dir, "vit_range")
    k = trace.table("kernels")
    i = k.column_names.index("mangled_name")
    k2 = k.set_column(i, "mangled_name", pa.nulls(k.num_rows, k.schema.field(i).type))
    bare = Trace({**trace.tables, "kernels": k2}, trace.meta)
    link = L.build_link(bare, vit)
    assert link.matched_on == "kernel name"
    full = L.build_link(trace, vit)
    assert (link.mask == full.mask).all()
    for kid in vit.kernel_ids():
        assert set(link.rows_for(kid).tolist()) == set(full.rows_for(kid).tolist())
    assert (link.level_of_row == full.level_of_row).all()  # only step 0 differs


def test_unmatched_both_ways(nsys_dir: Path, vit: KernelMetrics, lstm: KernelMetrics):
    """The LSTM's ncu report against the ViT trace: nothing in common but elementwise ops,
    launched with other grids: similar, not linked."""
    trace = _trace(nsys_dir, "vit_range")
    link = L.build_link(trace, lstm)
    assert link.unmatched_ncu == lstm.kernel_ids() and not link.mask.any()
    assert 0 < len(link.similar_of) < len(lstm)
    kid = next(iter(link.similar_of))
    assert link.note_for(kid).startswith("not linked: ")
    assert not link.has(-1) and link.best_for_row(10**9) is None
    assert link.describe(int(np.flatnonzero(~link.mask)[0])) == "no ncu result"


def test_empty_inputs(nsys_dir: Path, vit: KernelMetrics):
    trace = _trace(nsys_dir, "vit_range")
    empty = KernelMetrics({})
    link = L.build_link(trace, empty)
    assert not link.mask.any() and link.unmatched_ncu == []
    no_kernels = Trace({n: t for n, t in trace.tables.items() if n != "kernels"}, trace.meta)
    link = L.build_link(no_kernels, vit)
    assert len(link.mask) == 0 and link.unmatched_ncu == vit.kernel_ids()


def _config(trace: Trace, row: int) -> tuple:
    k = trace.table("kernels").slice(row, 1).to_pylist()[0]
    return tuple(k[f"{p}_{a}"] for p in ("grid", "block") for a in "xyz")


@pytest.mark.parametrize(("timeline", "ncu"), [("vit_amp", "lstm"), ("vit_range", "lstm")])
def test_links_need_the_exact_kernel_and_launch_configuration(
    nsys_dir: Path, timeline: str, ncu: str, request: pytest.FixtureRequest
) -> None:
    """Reports of two programs: a link means the same mangled name and grid/block; the rest
    of what looks alike (same short name, other template arguments or grid) is only
    `similar`, and every view counts links the same way."""
    km: KernelMetrics = request.getfixturevalue(ncu)
    trace = _trace(nsys_dir, timeline)
    link = L.build_link(trace, km)
    kt = trace.table("kernels")
    for kid in link.linked_ids:
        k = km.kernel(kid)
        for row in link.rows_for(kid).tolist():
            assert kt["mangled_name"][row].as_py() == k.mangled
            assert _config(trace, row) == (*k.grid, *k.block)
    for kid, rows in link.similar_of.items():
        assert not set(rows.tolist()) & set(link.rows_for(kid).tolist())
    assert link.similar_of  # the two programs share kernels that look alike
    # the header, the notification and `info` say the same count
    from tuiperf.model.ncu.link_facts import link_facts

    facts = link_facts(trace, km, link)
    assert len(facts.kernels) == len(link.linked_ids) == len(km) - len(link.unmatched_ncu)
    assert facts.summary_line() == link.count_line(len(km))
    assert facts.summary_line().startswith(f"{len(link.linked_ids)} of {len(km)} ncu results")
