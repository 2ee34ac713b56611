"""`tuiperf REPORT | cat`: without a terminal the viewer exits 2 and names the batch
commands that do work (`tuiperf summary REPORT`, `tuiperf export REPORT -o FILE`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support import needs
from tests.support.cli import PYTHON

SCRIPT = needs.file(Path(PYTHON).parent / "tuiperf", "the tuiperf console script")
SAMPLE = Path(__file__).resolve().parents[2] / "tuiperf" / "sample" / "vit_range"


def test_piped_stdout_names_real_commands(tmp_path: Path) -> None:
    cmd = f"'{SCRIPT}' '{SAMPLE}' --cache-dir '{tmp_path / 'cache'}' | cat"
    out = subprocess.run(
        ["sh", "-c", cmd], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120
    )
    assert out.returncode == 0  # cat's status; tuiperf's is checked below
    assert out.stdout == ""
    err = out.stderr
    assert err.count("\n") == 1 and err.startswith("tuiperf: error: the viewer needs a terminal")
    assert f"'tuiperf summary {SAMPLE}'" in err and f"'tuiperf export {SAMPLE} -o FILE'" in err
    assert "--csv" not in err


def test_piped_stdout_exits_2(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(SCRIPT), str(SAMPLE), "--cache-dir", str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert out.returncode == 2
    assert "tuiperf summary" in out.stderr and "--csv" not in out.stderr


def test_the_hinted_commands_exist(tmp_path: Path) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    summary = subprocess.run([str(SCRIPT), "summary", str(SAMPLE), *cache], capture_output=True)
    assert summary.returncode == 0, summary.stderr
    out = tmp_path / "k.csv"
    export = [str(SCRIPT), "export", str(SAMPLE), "-o", str(out), *cache]
    assert subprocess.run(export, capture_output=True).returncode == 0
    assert out.read_text(encoding="utf-8").startswith("start_ns,")
