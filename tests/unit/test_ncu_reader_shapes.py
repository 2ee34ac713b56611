"""Every ncu_report API shape in use reads the same report into the same tables.

The shapes are recorded in tests/data/ncu_api/ncu_versions.md (dumps of the real modules):
- ncu-report 2026.3.x (PyPI): IAction.sections(), IMetric.label();
- ncu-report 2025.3.1 and 2026.2.0 (PyPI), Nsight Compute 2025.3.1's extras/python: neither;
  metrics by name and rule results only.
Stand-ins wrap the real (2026.3) reader's objects and forward only the methods a shape has,
so the report, its metric values and its rule results are real; tuiperf must then build the
sections from its bundled layout (tuiperf/load/ncu/sections.json) and show the same ones.
"""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA
from tests.support import needs
from tests.support.data import unxz
from tuiperf.load.ncu import rep as ncu_rep

real = needs.module("ncu_report")

#: the IAction / IMetric methods tuiperf may call, of the newest reader
ACTION = ("name", "metric_names", "metric_by_name", "nvtx_state", "rule_results",
          "rule_results_as_dicts", "sections")  # fmt: skip
METRIC = ("name", "unit", "value", "label")

#: shape -> (where its module lives (a name only, never read), hidden methods)
NEW = ("/venv/site-packages/ncu_report/__init__.py", ())
EXTRAS = "/opt/nvidia/nsight-compute/2025.3.1/extras/python/ncu_report.py"  # a path as data
OLD = (EXTRAS, ("sections", "label"))
OLD_OBJECTS = ("/venv/site-packages/ncu_report/__init__.py",
               ("sections", "label", "rule_results_as_dicts"))  # fmt: skip
NO_METRICS = (OLD[0], ("sections", "label", "metric_by_name"))

REPORTS = {
    "small_2025_3_1": DATA / "ncu_api" / "small_2025_3_1.ncu-rep.xz",
    "vit_full": DATA / "ncu" / "vit_full.ncu-rep.xz",
    "lstm_basic": DATA / "ncu" / "lstm_basic.ncu-rep.xz",
}


def _forward(name: str, wrap: Callable[[Any], Any] = lambda x: x) -> Callable[..., Any]:
    def call(self: Any, *args: Any) -> Any:
        return wrap(getattr(self._real, name)(*args))

    return call


def _shape(where: str, hidden: tuple[str, ...]) -> types.ModuleType:
    """A stand-in `ncu_report` module whose objects have only the methods of the shape."""
    metric_cls = type("IMetric", (), {m: _forward(m) for m in METRIC if m not in hidden})

    def metric(m: Any) -> Any:
        return None if m is None else _wrapped(metric_cls, m)

    members: dict[str, Any] = {m: _forward(m) for m in ACTION if m not in hidden}
    if "metric_by_name" in members:
        members["metric_by_name"] = _forward("metric_by_name", metric)
    members.update(NameBase_DEMANGLED=real.IAction.NameBase_DEMANGLED,
                   NameBase_MANGLED=real.IAction.NameBase_MANGLED)  # fmt: skip
    action_cls = type("IAction", (), members)
    range_cls = type("IRange", (), {
        "num_actions": _forward("num_actions"),
        "action_by_idx": _forward("action_by_idx", lambda a: _wrapped(action_cls, a)),
    })  # fmt: skip
    context_cls = type("IContext", (), {
        "num_ranges": _forward("num_ranges"),
        "get_version": _forward("get_version"),
        "range_by_idx": _forward("range_by_idx", lambda r: _wrapped(range_cls, r)),
    })  # fmt: skip
    mod = types.ModuleType("ncu_report")
    mod.__file__ = where
    mod.IAction = action_cls  # type: ignore[attr-defined]
    mod.load_report = lambda path: _wrapped(context_cls, real.load_report(path))  # type: ignore[attr-defined]
    return mod


def _wrapped(cls: type, obj: Any) -> Any:
    out = cls()
    out._real = obj
    return out


def _nan_free(v: Any) -> Any:
    """NaN (ncu's value of some derived metrics) as a marker, so that equal rows compare equal."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dict):
        return {k: _nan_free(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nan_free(x) for x in v]
    return v


def _tables(path: Path) -> dict[str, list[dict[str, Any]]]:
    tables, _meta = ncu_rep.load_ncu_rep(path)
    return {n: _nan_free(t.to_pylist()) for n, t in tables.items()}


@pytest.fixture(scope="module")
def reference() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The tables read through the real reader (which has sections and labels)."""
    assert hasattr(real.IAction, "sections"), "the venv's ncu-report must be 2026.3 or later"
    return {name: _tables(unxz(packed)) for name, packed in REPORTS.items()}


@pytest.mark.parametrize("name", list(REPORTS))
@pytest.mark.parametrize("shape", [OLD, OLD_OBJECTS], ids=["no-sections", "no-dicts"])
def test_older_readers_give_the_same_sections_metrics_and_rules(
    name: str, shape: tuple[str, tuple[str, ...]], reference: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setitem(sys.modules, "ncu_report", _shape(*shape))
    got = _tables(unxz(REPORTS[name]))
    want = reference[name]
    assert [s["section_id"] for s in got["sections"]] == [s["section_id"] for s in want["sections"]]
    for table in ("kernels", "sections", "metrics", "rules"):
        assert got[table] == want[table], table
    assert want["rules"] and any(m["label"] for m in want["metrics"])


def test_the_stand_in_of_the_new_shape_forwards_everything(
    reference: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in itself changes nothing: with nothing hidden it reads what the reader does."""
    monkeypatch.setitem(sys.modules, "ncu_report", _shape(*NEW))
    assert _tables(unxz(REPORTS["small_2025_3_1"])) == reference["small_2025_3_1"]


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from tuiperf.cli import main

    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_tuiperf_ncu_with_the_2025_extras_module(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26.1: `tuiperf ncu` crashed (AttributeError: no IAction.sections)."""
    report = str(unxz(REPORTS["small_2025_3_1"]))
    want = _cli(["ncu", report, "--no-cache"], capsys)
    monkeypatch.setitem(sys.modules, "ncu_report", _shape(*OLD))
    got = _cli(["ncu", report, "--no-cache"], capsys)
    assert got[0] == 0 and got[2] == ""
    assert got == want


def test_a_reader_without_metrics_by_name_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ncu_report", _shape(*NO_METRICS))
    rc, out, err = _cli(["ncu", str(unxz(REPORTS["small_2025_3_1"])), "--no-cache"], capsys)
    assert rc != 0 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "2025.3.1" in lines[0] and "metric_by_name" in lines[0]
    assert "pip install 'tuiperf[ncu]'" in lines[0]


def test_rule_results_are_real(reference: dict[str, Any]) -> None:
    """The fixtures carry rule results with speedups and focus metrics, so the rule_results()
    path (no dicts) is compared on all the fields it builds."""
    rules = reference["vit_full"]["rules"]
    assert any(r["speedup"] for r in rules) and any(r["focus"] for r in rules)
