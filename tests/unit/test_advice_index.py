"""FindingIndex: which findings involve an event, rows or a kernel name (real fixtures)."""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa

from tests.support.analysis import ncu_of, trace_of
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.findings import (
    SCOPE_KERNEL,
    SOURCE_NCU,
    Evidence,
    Finding,
    Fix,
    Scope,
    Severity,
)
from tuiperf.analysis.index import BY_EVENT, BY_KERNEL, FindingIndex, kernel_names


@functools.cache
def cnn() -> FindingIndex:
    return FindingIndex(analyze(trace_of("cnn_osrt")).findings)


def rules(index: FindingIndex, hits) -> list[str]:  # type: ignore[no-untyped-def]
    return [index.findings[h.finding].rule for h in hits]


def _rule(index: FindingIndex, rule: str) -> Finding:
    return next(f for f in index.findings if f.rule == rule)


def test_every_evidence_row_leads_back_to_its_finding() -> None:
    idx = cnn()
    checked = 0
    for i, f in enumerate(idx.findings):
        for pos, r in enumerate(f.evidence.rows.to_pylist()):
            if not r["table"] or r["row"] is None:
                continue
            hits = {h.finding: h for h in idx.for_event(r["table"], r["row"])}
            assert i in hits, (f.rule, r)
            assert pos in hits[i].evidence and hits[i].why == BY_EVENT
            checked += 1
    assert checked > 1000  # layout conversions alone have 847 rows


def test_a_pageable_copy_in_a_step_is_in_both_copy_findings() -> None:
    idx = cnn()
    f = _rule(idx, "pageable_h2d_in_steps")
    first = f.evidence.rows.to_pylist()[0]
    hits = idx.for_event("memcpy", first["row"])
    assert {"pageable_h2d_in_steps", "cuda_memcpy_async"} <= set(rules(idx, hits))
    # ranked order is kept: a finding ranked higher is listed first
    assert [h.finding for h in hits] == sorted(h.finding for h in hits)
    mine = next(h for h in hits if idx.findings[h.finding].rule == "pageable_h2d_in_steps")
    assert mine.evidence == (0,)


def test_start_up_copies_are_not_blamed_on_the_step_rule() -> None:
    idx = cnn()
    in_steps = set(_rule(idx, "pageable_h2d_in_steps").evidence.rows["row"].to_pylist())
    all_async = _rule(idx, "cuda_memcpy_async").evidence.rows["row"].to_pylist()
    start_up = [r for r in all_async if r not in in_steps]
    # 56 before the first step + 4 in the two start-up steps (step 0 … step 1: 2 a step)
    assert len(start_up) == 60
    hits = rules(idx, idx.for_event("memcpy", start_up[0]))
    assert "cuda_memcpy_async" in hits and "pageable_h2d_in_steps" not in hits


def test_the_host_sync_call_is_found_from_its_api_row() -> None:
    idx = cnn()
    row = _rule(idx, "host_sync_per_step").evidence.rows["row"][0].as_py()
    assert {"host_sync_per_step", "cuda_api_sync"} <= set(rules(idx, idx.for_event("api", row)))


def test_rows_outside_every_finding_find_nothing() -> None:
    idx = cnn()
    used = set()
    for f in idx.findings:
        ev = f.evidence.rows
        pairs = zip(ev["table"].to_pylist(), ev["row"].to_pylist(), strict=True)
        used |= {r for t, r in pairs if t == "kernels"}
    free = next(r for r in range(trace_of("cnn_osrt").table("kernels").num_rows) if r not in used)
    assert idx.for_event("kernels", free) == []
    assert idx.for_event("nvtx", 0) == [] and idx.for_event("no_such_table", 3) == []


def test_regions_are_not_indexed_as_rows() -> None:
    idx = cnn()
    gaps = next(i for i, f in enumerate(idx.findings) if f.rule == "gpu_gaps")
    for table in ("kernels", "memcpy", "api", ""):
        assert all(h.finding != gaps for h in idx.for_event(table, 0))


def test_for_rows_finds_every_finding_of_a_kernel_name() -> None:
    idx = cnn()
    k = trace_of("cnn_osrt").table("kernels")
    names = np.asarray(k["short_name"].to_pylist(), dtype=object)
    rows = np.flatnonzero(names == "nchwToNhwcKernel")
    hits = idx.for_rows("kernels", rows)
    assert "layout_conversion" in rules(idx, hits)
    lc = next(h for h in hits if idx.findings[h.finding].rule == "layout_conversion")
    assert len(lc.evidence) == 572


def _ncu_like(kernel: str) -> Finding:
    return Finding(
        rule="occupancy",
        title="t",
        severity=Severity.INFO,
        message="m",
        fix=Fix("f"),
        scope=Scope(SCOPE_KERNEL, kernel),
        source=SOURCE_NCU,
        count=1,
        evidence=Evidence.build(
            "ncu_kernels", np.array([7]), None, np.array([10]), {"ncu_id": pa.array([7])}
        ),
        kernel=kernel,
    )


def test_kernel_names_match_across_spellings() -> None:
    f = _ncu_like("void at::native::foo<(int)4, (bool)0>(float *)")
    idx = FindingIndex([f])
    hits = idx.for_event("kernels", 3, ["void at::foo<4, 0>(float *)", "foo"])
    assert hits and hits[0].why == BY_KERNEL and hits[0].evidence == ()
    assert idx.for_kernel("void at::native::foo<(int)8, (bool)0>(float *)") == []
    # ncu-only evidence rows ("ncu_kernels") never match a timeline row
    assert idx.for_event("ncu_kernels", 7) != [] and idx.for_event("kernels", 7) == []


def test_kernel_names_of_a_trace_row() -> None:
    t = trace_of("cnn_osrt")
    full, short = kernel_names(t, "kernels", 0)
    assert short and short in full
    assert kernel_names(t, "memcpy", 0) == ()
    assert kernel_names(t, "kernels", 10**9) == ()


def test_ncu_findings_reach_the_nsys_launches_of_their_kernel() -> None:
    res = analyze(trace_of("lstm"), ncu_of("lstm_basic"))
    idx = FindingIndex(res.findings)
    ncu = [(i, f) for i, f in enumerate(res.findings) if f.source == SOURCE_NCU]
    assert ncu
    weighed = [(i, f) for i, f in ncu if f.evidence.rows["table"][0].as_py() == "kernels"]
    assert weighed, "some ncu kernels match nsys launches"
    i, f = weighed[0]
    row = f.evidence.rows["row"][0].as_py()
    names = kernel_names(trace_of("lstm"), "kernels", row)
    assert i in [h.finding for h in idx.for_event("kernels", row, names)]
    assert i in [h.finding for h in idx.for_kernel(f.kernel or "")]


def test_a_rule_about_several_kernels_is_found_by_each_name() -> None:
    idx = cnn()
    for name in ("nchwToNhwcKernel", "nhwcToNchwKernel"):
        assert "layout_conversion" in rules(idx, idx.for_kernel(name))
