"""`tuiperf ncu`: the CSV agrees with ncu's details page; table, JSON, filters, bad input."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support import needs
from tests.support.ncu_data import close, csv_dicts, decompress, page, rep
from tuiperf.cli import main
from tuiperf.commands.ncu import CSV_HEADER
from tuiperf.model.ncu.metrics import to_base


@pytest.fixture(scope="module")
def ncu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return decompress(tmp_path_factory)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["ncu", *args, "--no-cache"])
    out = capsys.readouterr()
    return rc, out.out, out.err


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tuiperf", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def our_csv(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> list[dict[str, str]]:
    rc, out, err = run(capsys, str(path), "--format", "csv", *args)
    assert rc == 0, err
    return list(csv.DictReader(io.StringIO(out)))


#: header metrics the ncu_report reader defines differently from the ncu CLI that wrote
#: the pages, where tuiperf cannot follow the CLI: none today (see ncu_rep._CLI_HEADER_ITEMS)
API_SECTION_DIFFERENCES: dict[tuple[str, str], str] = {}


def _compare(
    reference: list[dict[str, str]],
    ours: list[dict[str, str]],
    scaled: dict[tuple[str, str, str], str] | None = None,
) -> dict[tuple[str, str], str]:
    """Every metric row of ncu's base-unit details page against our CSV; the differences.
    `scaled`: the units of the scaled details page our CSV was read from (its precision)."""
    index = {(r["ID"], r["Section Name"], r["Metric Name"]): r for r in ours if r["Metric Name"]}
    diffs: dict[tuple[str, str], str] = {}
    for ref in reference:
        if not ref["Metric Name"]:
            continue
        key = (ref["Section Name"], ref["Metric Name"])
        got = index.get((ref["ID"], *key))
        if got is None:
            diffs[key] = "missing"
            continue
        if got["Metric Unit"] != ref["Metric Unit"]:
            diffs[key] = "unit"
            continue
        want = ref["Metric Value"]
        try:
            v = float(want.replace(",", ""))
        except ValueError:
            assert got["Metric Value"] == want, (ref, got)
            continue
        step = 0.01 if "." in want or not want.replace(",", "").isdigit() else 1.0
        if scaled:
            step = max(step, 0.01 * to_base(scaled[(ref["ID"], *key)])[0])
        assert close(float(got["Metric Value"]), v, step), (ref, got)
    return diffs


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_csv_from_the_report_matches_ncus_details_page(
    ncu_dir: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    needs.module("ncu_report")
    reference = csv_dicts(page(ncu_dir, name, "details_base"))
    ours = our_csv(capsys, rep(ncu_dir, name))
    diffs = _compare(reference, ours)
    assert diffs == (API_SECTION_DIFFERENCES if name == "vit_full" else {})
    # same rows in the same order (ncu's section order, metrics by name, then rules)
    want = [
        (r["ID"], r["Section Name"], r["Metric Name"], r["Rule Name"])
        for r in reference
        if (r["Section Name"], r["Metric Name"]) not in API_SECTION_DIFFERENCES
        or API_SECTION_DIFFERENCES[(r["Section Name"], r["Metric Name"])] != "missing"
    ]
    got = [(r["ID"], r["Section Name"], r["Metric Name"], r["Rule Name"]) for r in ours]
    assert got == want


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
@pytest.mark.parametrize("source", ["details_base", "details"])
def test_csv_from_the_csv_pages_matches(
    ncu_dir: Path, capsys: pytest.CaptureFixture[str], name: str, source: str
) -> None:
    reference = csv_dicts(page(ncu_dir, name, "details_base"))
    units = None
    if source == "details":
        units = {
            (r["ID"], r["Section Name"], r["Metric Name"]): r["Metric Unit"]
            for r in csv_dicts(page(ncu_dir, name, "details"))
        }
    ours = our_csv(capsys, page(ncu_dir, name, source))
    assert _compare(reference, ours, units) == {}
    assert len(ours) == len(reference)


def test_csv_columns_and_filters(ncu_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = page(ncu_dir, "vit_full", "details_base")
    rows = our_csv(capsys, src)
    assert list(rows[0]) == CSV_HEADER
    for col in ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value"):
        assert col in CSV_HEADER
    rules = our_csv(capsys, src, "--rules")
    assert rules and all(r["Rule Name"] and not r["Metric Name"] for r in rules)
    sol = our_csv(capsys, src, "--section", "SpeedOfLight", "--kernel", "implicit_conv")
    assert {r["ID"] for r in sol} == {"3"}
    assert {r["Section Name"] for r in sol} == {"GPU Speed Of Light Throughput", "SpeedOfLight"}
    by_name = our_csv(capsys, src, "--section", "gpu speed of light throughput", "--id", "0")
    assert [r["Section Name"] for r in by_name] == [
        r["Section Name"] for r in our_csv(capsys, src, "-s", "SpeedOfLight", "--id", "0")
    ]


def test_json(ncu_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    needs.module("ncu_report")
    rc, out, err = run(capsys, str(rep(ncu_dir, "vit_full")), "--json", "--id", "3")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["format"] == "ncu-rep" and len(doc["kernels"]) == 1
    k = doc["kernels"][0]
    assert {
        "id",
        "name",
        "demangled",
        "mangled",
        "grid",
        "block",
        "registers",
        "duration_ns",
        "nvtx_push_pop",
        "sections",
    } <= set(k)
    assert k["grid"] == [256, 12, 1] and k["duration_ns"] == 69536.0
    assert [r["name"] for r in k["nvtx_push_pop"]] == ["step 3", "forward"]
    sol = k["sections"][0]
    assert sol["id"] == "SpeedOfLight" and sol["name"] == "GPU Speed Of Light Throughput"
    assert {"name", "label", "unit", "value"} <= set(sol["metrics"][0])
    assert {"rule_id", "type", "message", "speedup", "focus"} <= set(sol["rules"][0])


def test_table_fits_80_columns(ncu_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    needs.module("ncu_report")
    rc, out, err = run(capsys, str(rep(ncu_dir, "vit_full")), "--width", "80")
    assert rc == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    for text in (
        "[3] implicit_convolve_sgemm",
        "GPU Speed Of Light Throughput",
        "Duration",
        "69.54",
        "OPT",
        "Est. Speedup: 62.02%",
    ):
        assert text in out, text
    assert out.index("GPU Speed Of Light Throughput") < out.index("Launch Statistics")


def test_names_are_printed_literally(
    ncu_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = page(ncu_dir, "lstm_basic", "details_base")
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    col = rows[0].index("Kernel Name")
    for r in rows[1:]:
        if r[0] == "0":
            r[col] = "[bold]x[/bold] \x1b[31mred\x07 [link=http://e]y"
    dst = tmp_path / "markup.csv"
    with open(dst, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    rc, out, err = run(capsys, str(dst), "--id", "0", "--width", "80")
    assert rc == 0, err
    assert "[bold]x[/bold] red [link=http://e]y" in out
    assert "\x1b" not in out and "\x07" not in out


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--section", "NoSuchSection"], 2, "no such section"),
        (["--kernel", "(unclosed"], 2, "not a regular expression"),
        (["--id", "99"], 2, "no such kernel"),
    ],
)
def test_usage_errors(
    ncu_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int, text: str
) -> None:
    rc, out, err = run(capsys, str(page(ncu_dir, "lstm_basic", "raw")), *args)
    assert rc == code and out == ""
    assert err.count("\n") == 1 and err.startswith("tuiperf: error: ") and text in err


def test_no_match_is_not_an_error(ncu_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, str(page(ncu_dir, "lstm_basic", "raw")), "--kernel", "zzz", "--csv")
    assert rc == 0 and out.strip() == ",".join(CSV_HEADER)
    assert "no kernel matches" in err


def test_raw_page_table_lists_metrics(ncu_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(
        capsys, str(page(ncu_dir, "lstm_basic", "raw")), "--id", "0", "--width", "100"
    )
    assert rc == 0, err
    # the details page's sections and labels, with the raw page's values
    assert "GPU Speed Of Light Throughput" in out and "Duration" in out
    rc, out, err = run(
        capsys, str(page(ncu_dir, "lstm_basic", "raw")), "--id", "0", "--details", "all"
    )
    assert rc == 0, err
    assert "Metrics" in out and "gpu__time_duration.avg" in out  # and every other metric


# --- bad input: one line, the right code, no traceback, no output file ------------------


def _bad_inputs(ncu_dir: Path, d: Path) -> dict[str, Path]:
    vit = rep(ncu_dir, "vit_full").read_bytes()
    out = {
        "empty.ncu-rep": b"",
        "truncated.ncu-rep": vit[: len(vit) // 3],
        "header_only.ncu-rep": vit[:64],
        "random.ncu-rep": os.urandom(4096),
        "magic_then_random.ncu-rep": b"NVR\x00" + os.urandom(4096),
        "empty.csv": b"",
        "wrong_header.csv": b'"Name","Value"\n"a","1"\n',
    }
    paths = {}
    for name, data in out.items():
        (d / name).write_bytes(data)
        paths[name] = d / name
    db = d / "renamed.sqlite"
    con = sqlite3.connect(db)
    con.execute("create table StringIds (id integer, value text)")
    con.commit()
    con.close()
    paths["renamed.ncu-rep"] = db.rename(d / "renamed.ncu-rep")
    return paths


def test_bad_inputs(ncu_dir: Path, tmp_path: Path) -> None:
    needs.module("ncu_report")
    paths = _bad_inputs(ncu_dir, tmp_path)
    for name, path in paths.items():
        before = path.read_bytes()
        target = tmp_path / f"{name}.out.csv"
        res = run_cli(
            "ncu", str(path), "--csv", "-o", str(target), "--cache-dir", str(tmp_path / "cache")
        )
        assert res.returncode == 1, (name, res.stderr)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tuiperf: error: "), (name, res.stderr)
        assert "Traceback" not in res.stderr and res.stdout == ""
        assert not target.exists() and path.read_bytes() == before
    assert "not an Nsight Compute report" in run_cli("ncu", str(paths["renamed.ncu-rep"])).stderr


def test_missing_ncu_report_exits_3(ncu_dir: Path, tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "ncu_report.py").write_text("raise ImportError('not installed')\n")
    res = run_cli(
        "ncu",
        str(rep(ncu_dir, "lstm_basic")),
        "--no-cache",
        env={"PYTHONPATH": f"{fake}{os.pathsep}{REPO}"},
    )
    assert res.returncode == 3, res.stderr
    assert res.stderr.count("\n") == 1 and "pip install 'tuiperf[ncu]'" in res.stderr


def test_info_on_an_ncu_report_does_not_crash(ncu_dir: Path) -> None:
    res = run_cli("info", str(rep(ncu_dir, "lstm_basic")), "--no-cache")
    assert "Traceback" not in res.stderr
    assert res.returncode == 0 or res.stderr.count("\n") == 1
