"""Which ncu_report module reads a report: the first that has what tuiperf reads through
(sections, rule results, metrics), else one line naming the module's version and the fix.
Stand-in modules take the API shapes of Nsight Compute 2025.3's extras (no
IAction.sections(): tests/data/ncu_api/ncu_2025_3_1.md) and of the PyPI package."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from tuiperf.errors import MissingToolError
from tuiperf.load import ncu_rep


def _module(path: str, sections: bool) -> types.ModuleType:
    mod = types.ModuleType("ncu_report")
    mod.__file__ = path
    members = {"rule_results": lambda self: (), "metric_by_name": lambda self, n: None}
    if sections:
        members["sections"] = lambda self: ()
    mod.IAction = type("IAction", (), members)  # type: ignore[attr-defined]
    return mod


#: where an install keeps its module (a name only: never read)
EXTRAS_2025 = "nvidia/nsight-compute/2025.3.1/extras/python/ncu_report.py"


def test_a_reader_without_sections_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ncu_report", _module(EXTRAS_2025, sections=False))
    with pytest.raises(MissingToolError) as e:
        ncu_rep.import_ncu_report()
    text = str(e.value)
    assert "Nsight Compute 2025.3.1" in text and "pip install 'tuiperf[ncu]'" in text
    assert "\n" not in text


def test_a_reader_with_sections_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    good = _module("/x/site-packages/ncu_report/__init__.py", sections=True)
    monkeypatch.setitem(sys.modules, "ncu_report", good)
    assert ncu_rep.import_ncu_report() is good


def test_the_cli_says_it_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """`tuiperf ncu` with the 2025.3 module crashed (AttributeError, exit 70 / a traceback)."""
    from tuiperf.cli import main

    monkeypatch.setitem(sys.modules, "ncu_report", _module(EXTRAS_2025, sections=False))
    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes(ncu_rep.MAGIC + b"\0" * 64)
    assert main(["ncu", str(rep), "--no-cache"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2025.3.1" in err[0] and "tuiperf[ncu]" in err[0]


def test_the_installed_package_can_read() -> None:
    mod = pytest.importorskip("ncu_report")
    assert ncu_rep.can_read(mod)
