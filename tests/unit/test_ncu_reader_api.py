"""Which ncu_report module reads a report: any that gives a kernel's name, metrics by name and
rule results (sections and labels come from the bundled layout where it has none), else one
line naming the module's version and the fix. Stand-in modules take the API shapes of the
readers in use (tests/data/ncu_api/ncu_versions.md); test_ncu_reader_shapes.py reads real
reports through them."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from tests.support import needs
from tuiperf.errors import MissingToolError
from tuiperf.load.ncu import rep as ncu_rep

#: the IAction methods of Nsight Compute 2025.3's extras module (and ncu-report < 2026.3)
OLD = ("name", "metric_names", "metric_by_name", "rule_results", "rule_results_as_dicts")


def _module(path: str, *methods: str) -> types.ModuleType:
    mod = types.ModuleType("ncu_report")
    mod.__file__ = path
    mod.IAction = type("IAction", (), {m: lambda self: () for m in methods})  # type: ignore[attr-defined]
    return mod


#: where an install keeps its module (a name only: never read)
EXTRAS_2025 = "nvidia/nsight-compute/2025.3.1/extras/python/ncu_report.py"


def test_a_reader_without_sections_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _module(EXTRAS_2025, *OLD)
    monkeypatch.setitem(sys.modules, "ncu_report", old)
    assert ncu_rep.import_ncu_report() is old


@pytest.mark.parametrize("rules", ["rule_results", "rule_results_as_dicts"])
def test_either_rule_results_method_will_do(monkeypatch: pytest.MonkeyPatch, rules: str) -> None:
    mod = _module(EXTRAS_2025, *(m for m in OLD if m != rules))
    monkeypatch.setitem(sys.modules, "ncu_report", mod)
    assert ncu_rep.import_ncu_report() is mod


@pytest.mark.parametrize("gone", ["metric_by_name", "metric_names", "name"])
def test_a_reader_without_what_is_needed_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, gone: str
) -> None:
    mod = _module(EXTRAS_2025, *(m for m in OLD if m != gone))
    monkeypatch.setitem(sys.modules, "ncu_report", mod)
    with pytest.raises(MissingToolError) as e:
        ncu_rep.import_ncu_report()
    text = str(e.value)
    assert "Nsight Compute 2025.3.1" in text and "pip install 'tuiperf[ncu]'" in text
    assert f"IAction.{gone}()" in text and "\n" not in text


def test_no_rule_results_at_all_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _module(EXTRAS_2025, "name", "metric_names", "metric_by_name")
    monkeypatch.setitem(sys.modules, "ncu_report", mod)
    with pytest.raises(MissingToolError, match=r"IAction\.rule_results\(\)"):
        ncu_rep.import_ncu_report()


def test_the_cli_says_it_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """`tuiperf ncu` with a reader lacking what tuiperf needs: one line, exit 3."""
    from tuiperf.cli import main

    mod = _module(EXTRAS_2025, "name", "rule_results")
    monkeypatch.setitem(sys.modules, "ncu_report", mod)
    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes(ncu_rep.MAGIC + b"\0" * 64)
    assert main(["ncu", str(rep), "--no-cache"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2025.3.1" in err[0] and "tuiperf[ncu]" in err[0]


def test_a_package_names_its_own_version(tmp_path: Path) -> None:
    """A package installed into a folder of its own names the version of its metadata there."""
    pkg = tmp_path / "ncu_report"
    pkg.mkdir()
    (tmp_path / "ncu_report-2026.2.0.dist-info").mkdir()
    mod = _module(str(pkg / "__init__.py"), *OLD)
    assert ncu_rep.reader_version(mod) == "2026.2.0"


def test_the_installed_package_can_read() -> None:
    mod = needs.module("ncu_report")
    assert ncu_rep.can_read(mod)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the dynamic linker's scopes")
def test_libstdcxx_is_shared_before_the_reader_loads() -> None:
    """After pyarrow, libstdc++ is private to it; ncu_report 2025.3.1 then crashes in
    IMetric.unit() (ncu_versions.md). share_libstdcxx() makes it global, loading nothing."""
    import subprocess

    probe = (
        "import ctypes, pyarrow\n"
        "from tuiperf.load.ncu import rep as ncu_rep\n"
        "def seen():\n"
        "    try:\n"
        "        ctypes.CDLL(None)['_ZNSt6locale7classicEv']\n"
        "    except AttributeError:\n"
        "        return False\n"
        "    return True\n"
        "before = seen()\n"
        "print(before, ncu_rep.share_libstdcxx(), seen())\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    _before, shared, after = out.stdout.split()  # before: False unless python links libstdc++
    assert shared == "True" and after == "True"
