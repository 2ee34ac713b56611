"""ncu's rule results read from the fp32/bf16 `--set full` reports, rule for rule as ncu
prints them (`ncu -i R --page details --print-rule-details`): section, type, estimated
speedup and its kind, the message, the key performance indicators; names as ncu's CSV."""

from __future__ import annotations

import re

import pytest

from tests.support import needs
from tests.support.ncu_depth import DTYPES, details_rows, number, report, text, text_rules
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu.metrics import KernelMetrics, RuleResult

needs.module("ncu_report")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KernelMetrics]:
    tmp = tmp_path_factory.mktemp("ncu-depth")
    return {d: open_ncu(report(d, tmp), OpenOptions(use_cache=False)) for d in DTYPES}


def _words(s: str) -> str:
    """Without white space: ncu wraps its text at 110 columns, also inside `requests.This`
    (a message that has no space there)."""
    return re.sub(r"\s+", "", s)


def _ours(km: KernelMetrics, kid: int) -> list[tuple[str, RuleResult]]:
    """(section display name, rule) in the order tuiperf shows them."""
    return [(s.name, r) for s in km.sections(kid) for r in s.rules]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_rule_as_ncu_prints_it(dtype: str, reports: dict[str, KernelMetrics]) -> None:
    km = reports[dtype]
    kernels = text_rules(text(f"{dtype}_rules.txt"))
    assert len(kernels) == len(km) == 5
    checked = 0
    for kid, want in zip(km.kernel_ids(), kernels, strict=True):
        got = _ours(km, kid)
        assert [(s, r.code) for s, r in got] == [(w.section, w.code) for w in want.rules]
        for (_, r), w in zip(got, want.rules, strict=True):
            assert _words(r.message).startswith(_words(w.message)[:200]), (kid, r.rule_id)
            assert (r.speedup_type or "") == w.speedup_type
            if w.speedup:  # ncu prints 4 significant digits
                assert r.speedup is not None
                assert f"{r.speedup:.4g}" == w.speedup or r.speedup == pytest.approx(
                    float(w.speedup), rel=5e-4
                )
            else:
                assert r.speedup is None or w.speedup_type == ""
            assert [(f.metric, f.value) for f in r.focus if f.value is not None] == [
                (name, pytest.approx(number(v), rel=1e-6, abs=1e-6)) for name, v in w.focus
            ]
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("dtype", DTYPES)
def test_rule_names_are_the_csv_pages(dtype: str, reports: dict[str, KernelMetrics]) -> None:
    km = reports[dtype]
    want = [
        (int(r["ID"]), r["Rule Name"], r["Estimated Speedup"])
        for r in details_rows(dtype)
        if r["Rule Name"]
    ]
    got = [(kid, r.rule_id, r.speedup) for kid in km.kernel_ids() for _, r in _ours(km, kid)]
    assert [g[:2] for g in got] == [w[:2] for w in want]
    for (_, _, ours), (_, _, printed) in zip(got, want, strict=True):
        assert (ours is None) == (printed == "")
        if ours is not None:
            assert ours == pytest.approx(float(printed), rel=5e-4, abs=1e-9)  # 4 digits


def test_the_largest_speedups_of_the_gemm(reports: dict[str, KernelMetrics]) -> None:
    """The fp32 GEMM: ncu's biggest estimate is the occupancy one (local, 87.5%); the
    source-counter rule names the uncoalesced shared accesses."""
    km = reports["fp32"]
    top = km.top_rules(0, 3)
    assert top[0].rule_id == "TheoreticalOccupancy" and top[0].speedup_type == "local"
    src = [r for r in km.rules(0) if r.section_id == "SourceCounters"]
    assert src and "uncoalesced shared accesses" in src[0].message
