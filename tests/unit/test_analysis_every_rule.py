"""Every rule on every bundled report: findings, nothing, or a Skip with a reason; never an
exception. The engine turns a rule's exception into a 'failed' check, which hides it from
users: this calls each rule directly, so an exception fails here with its traceback.

Timeline rules (rules.nsys, rules.pytorch) run on each nsys export (SQLite, and the Arrow and
Parquet folders) and each torch.profiler trace; the ncu rules on each Nsight Compute input
(the .ncu-rep and its CSV pages), alone and beside its timeline report. The .nsys-rep files
are left out: opening one converts it with nsys into the SQLite or Arrow export tested here.
"""

from __future__ import annotations

import lzma
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, unpacked_nsys
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.engine import UNEXPLAINED, all_rule_ids, analyze
from tuiperf.analysis.findings import Finding, Skip
from tuiperf.analysis.gpumem import trace_rules as memory_rules
from tuiperf.analysis.ncu import rules as ncu_rules
from tuiperf.analysis.rules import nsys as nsys_rules
from tuiperf.analysis.rules import pytorch
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions, open_trace

NO_CACHE = OpenOptions(use_cache=False)

_NSYS = sorted(p.name.removesuffix(".xz") for p in (DATA / "nsys").glob("*.sqlite.xz"))
_NSYS_DIRS = sorted(p.name.removesuffix(".tar.xz") for p in (DATA / "nsys").glob("*dir.tar.xz"))
_KINETO = sorted(p.name for p in (DATA / "kineto").glob("*.json.gz"))
TIMELINES = [*_NSYS, *_NSYS_DIRS, *_KINETO]
#: each .ncu-rep and each CSV page exported from it
NCU_INPUTS = sorted(p.name.removesuffix(".xz") for p in (DATA / "ncu").glob("*.xz"))
#: the timeline report of the same program as each ncu report
NCU_BESIDE = {"vit_full": "vit_range.sqlite", "lstm_basic": "lstm.sqlite"}

TIMELINE_RULES = [*nsys_rules.RULES, *pytorch.RULES, *memory_rules.RULES]


@cache
def _ctx(name: str) -> Ctx:
    path = DATA / "kineto" / name if name.endswith(".json.gz") else unpacked_nsys() / name
    return Ctx(open_trace(path, NO_CACHE))


@pytest.fixture(scope="module")
def ncu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ncu")
    for name in NCU_INPUTS:
        (out / name).write_bytes(lzma.decompress((DATA / "ncu" / f"{name}.xz").read_bytes()))
    return out


def _check(rule: str, call: Any) -> None:
    try:
        found = call()
    except Skip as e:
        assert str(e).strip(), f"{rule}: a Skip without a reason"
        return
    assert isinstance(found, list), f"{rule} returned {type(found).__name__}"
    assert all(isinstance(f, Finding) for f in found), found


def test_every_rule_is_tested_here() -> None:
    # idle_unexplained is the ranking's own finding: test_whole_analysis_never_fails runs it
    assert sorted(all_rule_ids()) == sorted([*TIMELINE_RULES, UNEXPLAINED, *ncu_rules.RULES])
    assert len(TIMELINES) >= 10 and len(NCU_INPUTS) >= 8  # the globs found the fixtures


@pytest.mark.parametrize("report", TIMELINES)
@pytest.mark.parametrize("rule", TIMELINE_RULES)
def test_timeline_rule_never_raises(rule: str, report: str) -> None:
    ctx = _ctx(report)
    if rule in nsys_rules.RULES:
        _check(rule, lambda: nsys_rules.RULES[rule](ctx, nsys_rules.NsysOptions()))
    elif rule in memory_rules.RULES:
        _check(rule, lambda: memory_rules.RULES[rule](ctx))
    else:
        _check(rule, lambda: pytorch.RULES[rule](ctx))


@pytest.mark.parametrize("beside", [False, True], ids=["alone", "with its timeline"])
@pytest.mark.parametrize("report", NCU_INPUTS)
@pytest.mark.parametrize("rule", list(ncu_rules.RULES))
def test_ncu_rule_never_raises(rule: str, report: str, beside: bool, ncu_dir: Path) -> None:
    km = _ncu(ncu_dir, report)
    ctx = _ctx(NCU_BESIDE[report.split(".")[0]]) if beside else None
    _check(rule, lambda: ncu_rules.RULES[rule](km, ctx))


_NCU_OPENED: dict[str, Any] = {}


def _ncu(ncu_dir: Path, name: str) -> Any:
    if name not in _NCU_OPENED:
        _NCU_OPENED[name] = open_ncu(ncu_dir / name, NO_CACHE)
    return _NCU_OPENED[name]


@pytest.mark.parametrize("report", TIMELINES)
def test_whole_analysis_never_fails(report: str) -> None:
    """The engine with the step budget and the ranking (where idle_unexplained comes from):
    no rule ends `failed` on any bundled timeline."""
    res = analyze(_ctx(report).trace)
    assert not [c for c in res.checks if c.status == "failed"], res.checks
