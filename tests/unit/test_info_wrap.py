"""`tuiperf info` in a narrow terminal: long values wrap under themselves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tuiperf" / "sample" / "vit_range"


def test_info_wraps_with_a_hanging_indent(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "60", "TUIPERF_CACHE_DIR": str(tmp_path)}
    cmd = [sys.executable, "-m", "tuiperf", "info", str(SAMPLE)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, check=True)
    lines = res.stdout.splitlines()
    rows = [i for i, ln in enumerate(lines) if ln.startswith("rows ")]
    assert rows and lines[rows[0] + 1].startswith(" " * 12 + lines[rows[0] + 1].strip())
    assert lines[rows[0] + 1].strip()  # the rows value did need a second line at 60 columns
    for ln in lines:
        assert len(ln) <= 60 and ln == ln.rstrip(), repr(ln)
        assert ln[:12].strip() or ln.startswith(" " * 12), repr(ln)
