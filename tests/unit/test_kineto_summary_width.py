"""`tuiperf summary TRACE -r ops` keeps the op names readable at normal terminal widths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuiperf.cli import main
from tuiperf.load.kineto.tables import load_kineto
from tuiperf.model.trace import Trace
from tuiperf.summaries import reports

TRACE = Path(__file__).resolve().parents[1] / "data" / "kineto" / "kineto_cnn.json.gz"
TOP = 8


def table(capsys: pytest.CaptureFixture[str], tmp_path: Path, report: str, width: int) -> str:
    argv = ["summary", str(TRACE), "-r", report, "--width", str(width), "--top", str(TOP),
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("width", [80, 100, 120])
def test_op_names_show_whole(capsys, tmp_path: Path, width: int) -> None:
    out = table(capsys, tmp_path, "ops", width)
    lines = out.splitlines()
    assert all(len(ln) <= width for ln in lines)
    header = next(ln for ln in lines if "Calls" in ln).split()
    assert header[-1] == "Name"
    assert {"Time", "Self", "Calls"} <= set(header)  # the main numbers stay
    trace = Trace(*load_kineto(TRACE, None))
    names = reports.compute(trace, "op_sum").data["name"].to_pylist()[:TOP]
    shown = [n for n in names if len(n) <= 28]
    assert len(shown) >= TOP // 2
    for name in shown:
        assert any(ln.rstrip().endswith(" " + name) for ln in lines), name


def test_kernel_summary_keeps_its_names_at_80(capsys, tmp_path: Path) -> None:
    lines = table(capsys, tmp_path, "cuda_gpu_kern_sum", 80).splitlines()
    assert all(len(ln) <= 80 for ln in lines)
    rows = [ln for ln in lines if "%" in ln]
    assert len(rows) == TOP and all(len(r.split("   ")[-1].strip()) >= 20 for r in rows)
