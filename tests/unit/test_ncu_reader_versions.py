"""`tuiperf ncu --format csv` is the same whatever `ncu_report` reads the report, and it is
ncu's own details page (issue 35 item 18).

With ncu-report 2025.3.1 (no `IAction.sections()`), a report whose sections are not a
recorded `--set` lost every rule result of the memory workload charts
(MemoryL2Compression, MemoryCacheAccessPattern under MemoryWorkloadAnalysis_Chart /
_Tables): their sections have no metrics, so the bundled layout did not show them, and
rules are printed under their section. The oracle is ncu's `--csv --page details
--print-units base` export of the same report (vit_full of tests/data/ncu, fp32 of
tests/data/ncu_depth): every row in its order, values within the printed precision, rule
types and speedups.

Readers: the dev venv's (2026.3.x), the same with the shape of readers before 2026.3
(tests/support/ncu_picked.py --old-shape), and every reader wheel installed beside the venv
(`make ncu-readers`: ncu-report 2025.3.1, 2026.2.0, 2026.3.0 under .venv/ncu-readers/, each
on PYTHONPATH of its own subprocess: one C extension per process). Reports: whole, and
without the warp state and scheduler sections (a report of another set; ncu_picked hides
their metrics and rule results from the real reader).
"""

from __future__ import annotations

import csv
import io
import lzma
import os
import subprocess
import sys

import pytest

from tests.conftest import DATA, REPO
from tests.support import needs
from tests.support.data import unxz
from tests.support.ncu_data import close

needs.module("ncu_report")

#: report -> (the report, ncu's base-unit details page of it)
REPORTS = {
    "vit_full": (
        DATA / "ncu" / "vit_full.ncu-rep.xz",
        DATA / "ncu" / "vit_full.details_base.csv.xz",
    ),
    "fp32": (
        DATA / "ncu_depth" / "fp32.ncu-rep.xz",
        DATA / "ncu_depth" / "fp32_details_base.csv.xz",
    ),
}
#: sections left out of the smaller report: id -> the display name ncu's pages give it
HIDDEN = {"WarpStateStats": "Warp State Statistics", "SchedulerStats": "Scheduler Statistics"}
#: the reader wheels `make ncu-readers` installs (each in a folder of its own)
READERS_DIR = REPO / ".venv" / "ncu-readers"
WHEELS = ("2025.3.1", "2026.2.0", "2026.3.0")
#: the rules the 2025.3 reader lost (issue 35 item 18)
MEMORY_CHART_RULES = {("MemoryWorkloadAnalysis_Chart", "MemoryL2Compression"),
                      ("MemoryWorkloadAnalysis_Tables", "MemoryCacheAccessPattern")}  # fmt: skip


def _readers() -> list[tuple[str, list[str], str | None]]:
    """(id, extra ncu_picked arguments, PYTHONPATH folder) of every reader here."""
    out: list[tuple[str, list[str], str | None]] = [
        ("venv", [], None),
        ("venv-old-shape", ["--old-shape"], None),
    ]
    for v in WHEELS:
        folder = READERS_DIR / v
        if (folder / "ncu_report").is_dir():
            out.append((v, [], str(folder)))
    return out


def _reference(name: str, hidden: bool) -> list[dict[str, str]]:
    rows = list(
        csv.DictReader(io.StringIO(lzma.decompress(REPORTS[name][1].read_bytes()).decode()))
    )
    if not hidden:
        return rows
    # metric rows name their section by display name, rule rows by identifier
    return [r for r in rows if r["Section Name"] not in (*HIDDEN, *HIDDEN.values())]


def _ours(name: str, shape: list[str], folder: str | None, hidden: bool) -> list[dict[str, str]]:
    env = dict(os.environ)
    if folder is not None:
        env["PYTHONPATH"] = os.pathsep.join([folder, str(REPO)])
    report = str(unxz(REPORTS[name][0]))
    cmd = [sys.executable, "-m", "tests.support.ncu_picked", *shape, ",".join(HIDDEN) * hidden,
           "ncu", report, "--format", "csv", "--no-cache"]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    return list(csv.DictReader(io.StringIO(res.stdout)))


def _key(r: dict[str, str]) -> tuple[str, str, str, str]:
    return (r["ID"], r["Section Name"], r["Metric Name"], r["Rule Name"])


def _same_as_ncu(ref: list[dict[str, str]], ours: list[dict[str, str]]) -> None:
    assert [_key(r) for r in ours] == [_key(r) for r in ref]
    for want, got in zip(ref, ours, strict=True):
        if want["Rule Name"]:
            assert got["Rule Type"] == want["Rule Type"], (want, got)
            assert got["Estimated Speedup Type"] == want["Estimated Speedup Type"], (want, got)
            if want["Estimated Speedup"]:
                assert close(float(got["Estimated Speedup"]), float(want["Estimated Speedup"]),
                             0.01), (want, got)  # fmt: skip
            continue
        cell = want["Metric Value"].replace(",", "")
        assert got["Metric Unit"] == want["Metric Unit"], (want, got)
        try:
            v = float(cell)
        except ValueError:
            assert got["Metric Value"] == want["Metric Value"], (want, got)
            continue
        step = 0.01 if "." in cell or not cell.isdigit() else 1.0
        assert close(float(got["Metric Value"]), v, step), (want, got)


@pytest.mark.parametrize(
    ("reader", "shape", "folder"), [pytest.param(*r, id=r[0]) for r in _readers()]
)
@pytest.mark.parametrize("name", list(REPORTS))
@pytest.mark.parametrize("hidden", [False, True], ids=["whole", "no-warp-sections"])
def test_every_reader_prints_ncus_details_page(
    reader: str, shape: list[str], folder: str | None, name: str, hidden: bool
) -> None:
    ref = _reference(name, hidden)
    assert MEMORY_CHART_RULES & {(r["Section Name"], r["Rule Name"]) for r in ref}
    _same_as_ncu(ref, _ours(name, shape, folder, hidden))


def test_the_readers_of_the_suite() -> None:
    """In CI every supported reader runs (make ncu-readers installs the wheels); on a
    developer's machine without them, only the venv's two shapes."""
    ids = [r[0] for r in _readers()]
    missing = [v for v in WHEELS if v not in ids]
    if missing:
        needs.missing(f"ncu-report {', '.join(missing)} under {READERS_DIR}", "make ncu-readers")


def test_a_rule_of_a_section_no_reader_knows_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rule result naming a section neither the reader nor the layout knows (a newer
    Nsight Compute's) is printed under that section's id, after the others."""
    from tuiperf.commands.ncu import csv_rows
    from tuiperf.load.ncu import layout as ncu_layout
    from tuiperf.load.ncu import rep as ncu_rep
    from tuiperf.model.ncu.metrics import KernelMetrics

    real = ncu_layout.rule_dicts

    def renamed(a: object) -> list[dict[str, object]]:
        out = []
        for d in real(a):  # type: ignore[arg-type]
            if d.get("section_identifier") == "MemoryWorkloadAnalysis_Tables":
                d = {**d, "section_identifier": "FutureSection"}
            out.append(d)
        return out

    monkeypatch.setattr(ncu_layout, "rule_dicts", renamed)
    tables, meta = ncu_rep.load_ncu_rep(unxz(REPORTS["vit_full"][0]))
    km = KernelMetrics(tables, meta)
    ref = _reference("vit_full", False)
    table = "MemoryWorkloadAnalysis_Tables"
    kid = next(r["ID"] for r in ref if r["Section Name"] == table and r["Rule Name"])
    rules = [(r["Section Name"], r["Rule Name"]) for r in ref if r["ID"] == kid and r["Rule Name"]]
    rules.remove((table, "MemoryCacheAccessPattern"))
    rows = csv_rows(km, [(int(kid), km.sections(int(kid)))])
    assert [(r[8], r[12]) for r in rows if r[12]] == [
        *rules,
        ("FutureSection", "MemoryCacheAccessPattern"),
    ]
