"""The nsys-analyze parity rules flag exactly the rows `nsys analyze` printed."""

from __future__ import annotations

import pytest

from tests.support.analysis import DATA, FIXTURES, ctx_of, parse_analyze, reference
from tests.support.data import unxz
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import Finding
from tuiperf.analysis.rules.nsys import RULES, NsysOptions, sqlite_round1
from tuiperf.load.open import OpenOptions, open_trace


def _n(v: object) -> str:
    return "" if v is None else f"{int(v):,}"  # type: ignore[call-overload]


def _cells(rule: str, row: dict[str, object], rank: int) -> list[str]:
    """One evidence row printed the way nsys analyze prints that rule's table."""
    d, s = _n(row["duration_ns"]), _n(row["start_ns"])
    if rule in ("cuda_memcpy_async", "cuda_memcpy_sync"):
        return [
            d,
            s,
            row["src_kind"],
            row["dst_kind"],
            f"{row['bytes'] / 1e6:.3f}",
            _n(row["pid"]),
            _n(row["device"]),
            _n(row["context"]),
            _n(row["green_context"]),
            _n(row["stream"]),
            row["api"],
        ]  # type: ignore[list-item]
    if rule == "cuda_memset_sync":
        return [
            d,
            s,
            row["mem_kind"],
            f"{row['bytes'] / 1e6:.3f}",
            _n(row["pid"]),  # type: ignore[list-item]
            _n(row["device"]),
            _n(row["context"]),
            _n(row["green_context"]),
            _n(row["stream"]),
            row["api"],
        ]
    if rule == "cuda_api_sync":
        return [d, s, _n(row["pid"]), _n(row["tid"]), row["api"]]  # type: ignore[list-item]
    if rule == "gpu_gaps":
        return [str(rank), d, s, _n(row["pid"]), _n(row["device"]), _n(row["context"])]
    return [
        str(rank),
        f"{row['in_use_pct']:.1f}",
        d,
        s,
        _n(row["pid"]),
        _n(row["device"]),
        _n(row["context"]),
    ]


def _run(name: str, rule: str) -> list[Finding]:
    return RULES[rule](ctx_of(name), NsysOptions())


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("rule", list(RULES))
def test_same_rows_as_nsys_analyze(name: str, rule: str) -> None:
    _same_rows(reference(name)[rule], _run(name, rule), rule)


#: captures with CUDA graphs and torch.compile (tests/data/graphs): nsys analyze ignores
#: whole-graph executions, and so do its six rules here, though the rest of tuiperf counts
#: them as GPU work
GRAPH_CAPTURES = ("graphs_default", "graphs_node", "compile")


@pytest.mark.parametrize("name", GRAPH_CAPTURES)
@pytest.mark.parametrize("rule", list(RULES))
def test_same_rows_as_nsys_analyze_with_cuda_graphs(name: str, rule: str) -> None:
    graphs = DATA / "graphs"
    path = unxz(graphs / f"{name}.sqlite.xz")
    ref = parse_analyze((graphs / f"analyze_{name}.txt").read_text())
    ctx = Ctx(open_trace(path, OpenOptions(use_cache=False)))
    _same_rows(
        ref.get(rule, {"rows": [], "truncated": False}), RULES[rule](ctx, NsysOptions()), rule
    )


def _same_rows(ref: dict, found: list[Finding], rule: str) -> None:  # type: ignore[type-arg]
    expected = ref["rows"]
    if not expected:
        assert found == []
        return
    assert len(found) == 1
    f = found[0]
    rows = f.evidence.rows.to_pylist()
    assert f.count == len(rows)
    if ref["truncated"]:
        assert len(rows) > 50
    else:
        assert len(rows) == len(expected)
    got = [_cells(rule, r, i + 1) for i, r in enumerate(rows[: len(expected)])]
    assert got == expected


# counts nsys analyze finds (its text prints at most 50; FORMATS.md §4 counted them in SQL)
@pytest.mark.parametrize(("name", "rule", "count"), [
    ("cnn_osrt", "cuda_memcpy_async", 78), ("vit_amp", "cuda_memcpy_async", 77),
    ("lstm", "cuda_memcpy_async", 36), ("cnn_osrt", "cuda_api_sync", 69),
    ("vit_amp", "cuda_api_sync", 125), ("lstm", "cuda_api_sync", 25),
    ("vit_range", "cuda_api_sync", 11),
])  # fmt: skip
def test_count_holds_every_flagged_event(name: str, rule: str, count: int) -> None:
    (f,) = _run(name, rule)
    assert f.count == count == len(f.evidence)


def test_vit_amp_pageable_copies_are_start_up_only() -> None:
    (f,) = _run("vit_amp", "cuda_memcpy_async")
    assert f.metrics["inside_steps"] == 0 and f.metrics["before_first_step"] == 77
    assert f.severity.word == "info"


def test_cnn_pageable_copies_are_also_in_the_loop() -> None:
    (f,) = _run("cnn_osrt", "cuda_memcpy_async")
    assert f.metrics["inside_steps"] == 22 and f.severity.word == "warning"


def test_smaller_gap_threshold_finds_more_gaps() -> None:
    ctx = ctx_of("vit_amp")
    (default,) = RULES["gpu_gaps"](ctx, NsysOptions())
    (fine,) = RULES["gpu_gaps"](ctx, NsysOptions(gap_ms=50))
    assert fine.count > default.count
    assert all(d > 50_000_000 for d in fine.evidence.rows["duration_ns"].to_pylist())


def test_sqlite_round_rounds_ties_up_after_adding_half() -> None:
    assert sqlite_round1(6911.45) == 6911.5  # Decimal on the exact double would say 6911.4
    assert sqlite_round1(1.64) == 1.6 and sqlite_round1(0.05) == 0.1


def test_start_up_copies_need_no_change_in_the_loop() -> None:
    """vit_amp's batches are pinned: advising pin_memory for them would be wrong."""
    (f,) = _run("vit_amp", "cuda_memcpy_async")
    assert "No change is needed in the training loop" in f.fix.text
    assert "pin_memory=True" not in f.fix.text + f.fix.snippet and not f.fix.snippet
    (loop,) = _run("cnn_osrt", "cuda_memcpy_async")  # copies inside the steps: pin them
    assert "pin_memory=True" in loop.fix.snippet
