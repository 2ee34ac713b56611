"""Output through a pipe is neither wrapped, padded nor cut (issue 35 item 11).

Each command runs in a subprocess whose stdout is a real pipe (stderr too, so no terminal
is in sight), with no --width. No line may end in a space; the names come from the reports
themselves (sqlite3 over the export, ncu's own details page) and each must stand whole on
one line: rows that differ only past a cut must not look the same. On a terminal (or with
--width) tables still fit (tests of --width 80 elsewhere).
"""

from __future__ import annotations

import csv
import io
import lzma
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA, REPO
from tests.support import needs
from tests.support.data import unxz


def _piped(*args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    res = subprocess.run(
        [sys.executable, "-m", "tuiperf", *args, "--no-cache", "-q"],
        capture_output=True, stdin=subprocess.DEVNULL, text=True, cwd=REPO, env=env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines and not [line for line in lines if line.endswith(" ")]
    return lines


def _kernel_names(path: Path, top: int) -> list[str]:
    """The demangled names of the `top` kernels by total time, from the export."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
            "ON s.id = k.demangledName GROUP BY s.value ORDER BY sum(k.end - k.start) DESC "
            "LIMIT ?",
            (top,),
        ).fetchall()
    return [r[0] for r in rows]


def _ends_a_line(lines: list[str], text: str) -> bool:
    return any(line.endswith(f" {text}") or line == text for line in lines)


def test_summary(nsys_dir: Path) -> None:
    path = nsys_dir / "h100_2gpu_1s.sqlite"
    lines = _piped("summary", str(path))
    names = _kernel_names(path, 20)
    assert max(len(n) for n in names) > 400  # far past any terminal
    for name in names:  # the name column is last: each row ends with its whole name
        assert _ends_a_line(lines, name), name
    rule = next(line for line in lines if set(line.strip()) == {"─"})
    assert len(rule) <= max(len(line) for line in lines)  # the table is not stretched


def test_analyze(nsys_dir: Path) -> None:
    path = nsys_dir / "h100_2gpu_1s.sqlite"
    lines = _piped("analyze", str(path))
    text = "\n".join(lines)
    gemm = [n for n in _kernel_names(path, 40) if n.startswith("sm80_xmma_gemm_f32f32")]
    assert gemm and min(len(n) for n in gemm) > 100
    scope = next(line for line in lines if line.strip().startswith("scope: kernel: "))
    listed = scope.strip().removeprefix("scope: kernel: ").split(" · ")[0].split(", ")
    assert len(listed) >= 2 and set(listed) <= set(gemm), listed  # whole names, none cut
    head = next(i for i, ln in enumerate(lines) if ln.split()[-3:] == ["Start", "Duration",
                                                                       "Kernel"])  # fmt: skip
    rows = lines[head + 1 : head + 6]
    assert len(rows) == 5
    for row in rows:  # the evidence rows end with their kernel, whole
        assert any(row.endswith(f" {n}") for n in gemm), row
    # a paragraph is one line: the finding's message names the kernels one after the other
    message = [ln for ln in lines if ln != scope and sum(n in ln for n in gemm) >= 2]
    assert message, text


def test_ranks(nsys_dir: Path) -> None:
    lines = _piped("ranks", str(nsys_dir / "h100_2gpu_1s.sqlite"))
    from tuiperf.analysis.ranks.assemble import CLOCK_ONE

    notes = [line for line in lines if line.startswith("Ranks from:")]
    assert len(notes) == 1 and len(notes[0]) > 100  # a note on one line, however long
    assert notes[0].endswith(f"Clocks aligned on: {CLOCK_ONE}.")
    assert sum(line.endswith("h100_2gpu_1s.sqlite (pid 111)") for line in lines) == 1


def test_ncu() -> None:
    needs.module("ncu_report")
    report = unxz(DATA / "ncu" / "vit_full.ncu-rep.xz")
    lines = _piped("ncu", str(report), "--id", "3")
    ref = list(csv.DictReader(io.StringIO(lzma.decompress(
        (DATA / "ncu" / "vit_full.details.csv.xz").read_bytes()).decode())))  # fmt: skip
    rows = [r for r in ref if r["ID"] == "3"]
    name = rows[0]["Kernel Name"]
    assert len(name) > 200 and name in lines  # ncu's own spelling, whole, on its own line
    rules = [r["Rule Description"] for r in rows if r["Rule Name"]]
    assert rules
    for message in rules:  # every rule's message on one line (ncu's own words)
        assert message.strip() in [line.strip() for line in lines], message


@pytest.mark.parametrize("width", ["80"])
def test_a_width_still_fits(nsys_dir: Path, width: str) -> None:
    """--width keeps laying out for that width, piped or not: names cut to fit."""
    lines = _piped("summary", str(nsys_dir / "h100_2gpu_1s.sqlite"), "--width", width)
    assert max(len(line) for line in lines) <= int(width)
    assert any(line.endswith("…") for line in lines)


def test_trimmed_lines_hold_spaces_until_the_line_goes_on() -> None:
    from tuiperf.report.plain import TrimmedLines

    buf = io.StringIO()
    out = TrimmedLines(buf)
    for part in ("ab  ", "cd ", " \n", "   \n  x", "  ", "y   "):
        out.write(part)
    out.flush()
    # spaces inside a line stay (also across writes), spaces before a newline go; the
    # last line's trailing spaces are never written
    assert buf.getvalue() == "ab  cd\n\n  x  y"
    assert not out.isatty() and out.encoding == "utf-8"


@pytest.mark.parametrize("command", ["analyze", "ncu", "sql", "summary"])
def test_a_width_under_40_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], nsys_dir: Path, command: str
) -> None:
    """The check `summary` had, for every command with --width (one argparse type): 39 is
    refused, 40 (the boundary) draws to 40 columns."""
    from tuiperf.cli import main

    report = str(nsys_dir / "lstm.sqlite")
    query = ["SELECT name FROM kernels LIMIT 3"] if command == "sql" else []
    for bad in ("-3", "0", "39", "x"):
        code = main([command, report, *query, f"--width={bad}", "-q"])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and err.count("\n") == 1, (bad, err)
        assert err.startswith(f"tuiperf: error: --width {bad}: ")
    if command == "ncu":
        return  # an nsys export is no ncu report: only the width check is ncu's here
    assert main([command, report, *query, "--width=40", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and max(len(line) for line in lines) == 40
