"""docs/ci.md's exit-code table lists every ExitCode, with its value and name."""

from __future__ import annotations

import re
from pathlib import Path

from tuiperf.errors import ExitCode

DOC = Path(__file__).resolve().parents[2] / "docs" / "ci.md"


def _rows() -> dict[int, str]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^\| (\d+) \| (`\w+`|—) \|", table, flags=re.M)}  # fmt: skip


def test_every_exit_code_is_in_the_table() -> None:
    rows = _rows()
    for code in ExitCode:
        assert rows.get(int(code)) == f"`{code.name}`", code
    # and nothing else but SIGTERM's 128 + 15, which has no member
    assert set(rows) - {int(c) for c in ExitCode} == {143} and rows[143] == "—"


def test_the_table_names_what_the_cli_returns_for_sigterm() -> None:
    src = (Path(__file__).resolve().parents[2] / "tuiperf" / "cli.py").read_text()
    assert "return 128 + 15" in src
