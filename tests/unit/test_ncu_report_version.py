"""`info` on an `.ncu-rep` names the Nsight Compute that wrote the report, not the reader
(issue 35 item 8).

The oracle is ncu's own session page of the same report (tests/data/ncu/*.session.csv:
`ncu -i R --csv --page session`, its "Nsight Compute Target" attribute), and for a report
with no session page here, a copy whose version bytes were overwritten in place: what
`info` says must follow the file, whatever reader reads it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.support import needs
from tests.support.data import unxz
from tuiperf import cli
from tuiperf.load.ncu.session import TARGET_KEY, tool_version

ncu_report = needs.module("ncu_report")

NCU = DATA / "ncu"
REPORTS = ["vit_full", "lstm_basic"]


def _session_target(name: str) -> str:
    """'Nsight Compute Target' from ncu's --page session CSV."""
    with open(NCU / f"{name}.session.csv", newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) == 2]
    return dict(rows)["Nsight Compute Target"]


def _info(path: Path, capsys: pytest.CaptureFixture[str], *more: str) -> str:
    assert cli.main(["info", str(path), "--no-cache", "-q", *more]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", REPORTS)
def test_info_names_the_version_that_wrote_the_report(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    want = _session_target(name)
    assert want.startswith("2025.3.1.0 (build 36398880)")
    reader = ncu_report.load_report(str(unxz(NCU / f"{name}.ncu-rep.xz"))).get_version()
    assert not want.startswith(reader)  # the reader (2026.x) is not what wrote it
    doc = json.loads(_info(unxz(NCU / f"{name}.ncu-rep.xz"), capsys, "--json"))
    assert doc["tool_version"] == want
    assert doc["reader_version"] == reader
    text = " ".join(_info(unxz(NCU / f"{name}.ncu-rep.xz"), capsys).split())
    assert f"format ncu-rep · Nsight Compute {want}" in text
    assert f"reader ncu_report {reader}" in text


def test_the_version_follows_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same report with its version bytes rewritten (same length): info follows them."""
    data = bytearray(unxz(NCU / "vit_full.ncu-rep.xz").read_bytes())
    at = data.find(TARGET_KEY) + len(TARGET_KEY)
    old = data[at + 1 : at + 1 + data[at]]
    new = b"2099.1.0.0 (build 12345678) (public-release)"
    assert len(new) == len(old) and old.startswith(b"2025.3.1.0")
    data[at + 1 : at + 1 + len(new)] = new
    rep = tmp_path / "edited.ncu-rep"
    rep.write_bytes(bytes(data))
    assert json.loads(_info(rep, capsys, "--json"))["tool_version"] == new.decode()


def test_no_version_attribute_is_unknown(tmp_path: Path) -> None:
    """A file without the attribute, one cut inside it, an empty one: '' (no guess)."""
    data = unxz(NCU / "lstm_basic.ncu-rep.xz").read_bytes()
    at = data.find(TARGET_KEY)
    cases = {
        "none": data[:at],
        "cut": data[: at + len(TARGET_KEY) + 5],
        "no-length": data[: at + len(TARGET_KEY)],
        "empty": b"",
    }
    for label, body in cases.items():
        p = tmp_path / f"{label}.ncu-rep"
        p.write_bytes(body)
        assert tool_version(p) == "", label
    whole = tmp_path / "whole.ncu-rep"
    whole.write_bytes(data[: at + len(TARGET_KEY) + 1 + data[at + len(TARGET_KEY)]])
    assert tool_version(whole) == _session_target("lstm_basic")  # the shortest whole file
