"""`tuiperf ncu` spells kernel names as ncu's own CSV pages do; the full demangled name
stays in the JSON."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.support import needs
from tests.support.data import unxz
from tuiperf.cli import main

needs.module("ncu_report")

NCU = Path(__file__).resolve().parents[1] / "data" / "ncu"


@pytest.fixture(scope="module", params=["lstm_basic", "vit_full"])
def report(request: pytest.FixtureRequest) -> tuple:
    name = request.param
    rep = unxz(NCU / f"{name}.ncu-rep.xz")
    text = unxz(NCU / f"{name}.details.csv.xz").read_text(encoding="utf-8")
    names = {r["ID"]: r["Kernel Name"] for r in csv.DictReader(io.StringIO(text))}
    return rep, names


def test_csv_kernel_names_equal_ncus(report: tuple, capsys: pytest.CaptureFixture[str]) -> None:
    rep, ncu_names = report
    assert main(["ncu", str(rep), "--csv", "--no-cache"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    ours = {r["ID"]: r["Kernel Name"] for r in rows}
    assert ours == ncu_names
    # the API's spelling differs for these (casts, at::native::): the test is not vacuous
    assert any("(int)" in n or "native::" in n for n in _demangled(rep, capsys).values())


def _demangled(rep: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    assert main(["ncu", str(rep), "--json", "--no-cache"]) == 0
    data = json.loads(capsys.readouterr().out)
    kernels = data["kernels"] if isinstance(data, dict) else data
    return {str(k["id"]): k["demangled"] for k in kernels}


def test_text_shows_ncus_spelling(report: tuple, capsys: pytest.CaptureFixture[str]) -> None:
    rep, ncu_names = report
    assert main(["ncu", str(rep), "--id", "0", "--width", "400", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert ncu_names["0"] in out
