"""`tuiperf ncu` spells kernel names as ncu's own CSV pages do; the full demangled name
stays in the JSON."""

from __future__ import annotations

import csv
import io
import json
import lzma
from pathlib import Path

import pytest

from tuiperf.cli import main

pytest.importorskip("ncu_report")

NCU = Path(__file__).resolve().parents[1] / "data" / "ncu"


@pytest.fixture(scope="module", params=["lstm_basic", "vit_full"])
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    out = tmp_path_factory.mktemp("ncu")
    name = request.param
    rep = out / f"{name}.ncu-rep"
    rep.write_bytes(lzma.decompress((NCU / f"{name}.ncu-rep.xz").read_bytes()))
    text = lzma.decompress((NCU / f"{name}.details.csv.xz").read_bytes()).decode("utf-8")
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
