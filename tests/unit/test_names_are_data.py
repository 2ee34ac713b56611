"""Names in reports are data: no markup interpretation, no terminal escapes, huge names cope."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tuiperf.cli import main

EVIL = "[bold red]evil[/] \x1b[31mred\x1b]0;title\x07 tab\there"


@pytest.fixture
def evil_report(tmp_path: Path, nsys_dir: Path) -> Path:
    p = tmp_path / "evil.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", p)
    p.chmod(0o644)
    db = sqlite3.connect(p)
    top = db.execute(
        "SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1 "
        "ORDER BY sum(end-start) DESC LIMIT 2"
    ).fetchall()
    db.execute("UPDATE StringIds SET value = ? WHERE id = ?", (EVIL, top[0][0]))
    db.execute("UPDATE StringIds SET value = ? WHERE id = ?", ("k" * 1_000_000, top[1][0]))
    db.execute("UPDATE NVTX_EVENTS SET text = ? WHERE text = 'forward'", ("[link=x]fw[/link]",))
    db.commit()
    db.close()
    return p


def test_table_prints_markup_literally_without_escapes(
    evil_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for _run in ("computed", "stored in the cache"):
        assert main(["summary", str(evil_report), "--width", "200", "--top", "3"]) == 0
        out = capsys.readouterr().out
        assert "[bold red]evil[/]" in out
        assert "\x1b" not in out and "\x07" not in out
        assert max(len(line) for line in out.splitlines()) <= 200
        assert main(["summary", str(evil_report), "-r", "nvtx", "--width", "120"]) == 0
        assert "[link=x]fw[/link]" in capsys.readouterr().out


def test_csv_keeps_the_exact_name(evil_report: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for _run in ("computed", "stored in the cache"):
        assert main(["summary", str(evil_report), "--csv"]) == 0
        out = capsys.readouterr().out
        assert EVIL in out
        assert "k" * 1_000_000 in out


def test_info_is_clean(evil_report: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(evil_report)]) == 0
    assert "\x1b" not in capsys.readouterr().out
